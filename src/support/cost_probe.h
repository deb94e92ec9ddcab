// CostProbe: whether CPython runs a small nest faster than a call into its kernel costs.
//
// A nest entered very often with little work per entry (a 4-iteration inner loop inside an
// interpreted outer loop) can lose: reading the frame's values, the guards, libffi and the
// write-back cost about a microsecond, more than CPython needs for a few iterations. How
// long CPython takes is not observable from the nest's entry (the interpreter runs the
// original loop and nothing reports its end), but the time from one entry to the next is:
// it is the nest's run plus the rest of the enclosing loop's iteration. So during a probe
// the calls alternate between the kernel and CPython, and the gaps after each kind are
// compared; the rest of the iteration is the same for both, in distribution.
//
// In: the time of each entry (`enter`), whether the call went native (`ran_native`). Out:
// for a call, whether to leave it to CPython (a probe's interpreted half); after a probe,
// the verdict (`interpreter_faster`) and both medians for the report.
#pragma once
#include <cstddef>
#include <vector>

namespace stagepy {

class CostProbe {
 public:
  static constexpr size_t kSamples = 48;       // per kind of call
  static constexpr double kMaxGap_s = 2e-3;    // a longer gap is something else running (dropped)
  static constexpr double kMargin = 0.92;      // CPython must be clearly faster
  // With this many samples of each kind, a median ten times the other's is a verdict
  // already (a kernel that reads a big list for every call: each native sample is long).
  static constexpr size_t kEarlySamples = 8;
  static constexpr double kOverwhelming = 10;

  bool active() const { return active_; }
  // `max_gap_s`: gaps longer than this are something else running (a nest whose calls
  // take longer, converting a big list, passes a bound of its own).
  void start(double max_gap_s = kMaxGap_s);
  // A call enters at time `t`: the gap since the previous call of the probe is recorded
  // for the kind that call was. Returns true when this call must go to CPython.
  bool enter(double t);
  // The call that `enter` sent native got that far (a call declined on the way gives no sample).
  void ran_native() { pending_native_ = true; }
  // Whether the probe has its samples; then the verdict and the medians.
  bool done() const {
    return overwhelming_ || native_by_far_ || (gaps_[0].size() >= kSamples && gaps_[1].size() >= kSamples);
  }
  bool interpreter_faster() const;
  double median_native_s() const { return median(gaps_[0]); }
  double median_interpreted_s() const { return median(gaps_[1]); }
  void stop() { active_ = false; }

 private:
  static double median(std::vector<double> v);
  bool active_ = false;
  bool pending_native_ = false;
  double max_gap_s_ = kMaxGap_s;
  bool overwhelming_ = false;  // the early verdict, decided as each sample comes
  bool native_by_far_ = false;  // CPython's gaps all past the bound, the kernel's within it
  unsigned too_long_[2] = {0, 0};  // gaps past the bound, per kind
  int last_kind_ = -1;  // 0 native, 1 interpreted, -1 no sample pending
  double last_t_ = 0;
  unsigned long long n_ = 0;
  std::vector<double> gaps_[2];
};

}  // namespace stagepy
