// See cost_probe.h.
#include "support/cost_probe.h"

#include <algorithm>
#include <cstdint>

namespace stagepy {

void CostProbe::start(double max_gap_s) {
  active_ = true;
  max_gap_s_ = max_gap_s;
  overwhelming_ = false;
  native_by_far_ = false;
  too_long_[0] = too_long_[1] = 0;
  pending_native_ = false;
  last_kind_ = -1;
  for (auto& g : gaps_) {
    g.clear();
    g.reserve(kSamples);
  }
}

bool CostProbe::enter(double t) {
  if (!active_) return false;
  const bool sample = last_kind_ == 1 || (last_kind_ == 0 && pending_native_);
  if (sample) {
    const double gap = t - last_t_;
    auto& g = gaps_[(size_t)last_kind_];
    if (gap >= max_gap_s_) too_long_[(size_t)last_kind_]++;
    // CPython's runs of the nest all longer than the bound while the kernel's fit (CPython
    // many times slower; a bound made for the kernel's calls): a verdict for the kernel, not
    // a probe that never ends (it would leave every call to CPython once the kernel's
    // samples were all in).
    if (too_long_[1] >= kEarlySamples && gaps_[1].size() < kEarlySamples && gaps_[0].size() >= kEarlySamples)
      native_by_far_ = true;
    if (gap >= 0 && gap < max_gap_s_ && g.size() < kSamples) {
      g.push_back(gap);
      if (gaps_[0].size() >= kEarlySamples && gaps_[1].size() >= kEarlySamples) {
        const double native = median(gaps_[0]), interpreted = median(gaps_[1]);
        overwhelming_ = native > kOverwhelming * interpreted || interpreted > kOverwhelming * native;
      }
    }
  }
  pending_native_ = false;
  if (done()) {
    last_kind_ = -1;
    return false;
  }
  // Which kind this call is: a fixed pseudo-random sequence (not strict alternation, which
  // an enclosing loop that alternates between two paths would bias). A kind that has all
  // its samples gives way to the other.
  uint64_t x = ++n_ * 0x9E3779B97F4A7C15ULL;
  int kind = (int)((x >> 61) & 1);
  if (gaps_[(size_t)kind].size() >= kSamples) kind = 1 - kind;
  last_kind_ = kind;
  last_t_ = t;
  return kind == 1;
}

double CostProbe::median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + (std::ptrdiff_t)(v.size() / 2), v.end());
  return v[v.size() / 2];
}

bool CostProbe::interpreter_faster() const {
  return done() && !native_by_far_ && median_interpreted_s() < kMargin * median_native_s();
}

}  // namespace stagepy
