// The core library links the real isl (not the copy inside libLLVM) and a supported LLVM.
#include <gtest/gtest.h>

#include "support/cost_probe.h"
#include "support/version.h"

TEST(Support, IslIsTheRealLibrary) {
  EXPECT_TRUE(stagepy::isl_is_real()) << "isl_version bound to " << stagepy::isl_library_path();
  EXPECT_EQ(stagepy::isl_version_string().rfind("isl-", 0), 0u) << stagepy::isl_version_string();
}

TEST(Support, LlvmVersionInRange) {
  EXPECT_GE(stagepy::llvm_major_version(), 16);
  EXPECT_LE(stagepy::llvm_major_version(), 19);
}

// The probe's verdict from synthetic call times: each call's gap to the next is `native_s`
// after a native call and `interpreted_s` after one left to CPython.
namespace {
struct ProbeRun {
  stagepy::CostProbe p;
  int native = 0, interpreted = 0;
  void run(double native_s, double interpreted_s, int calls = 1000,
           double max_gap_s = stagepy::CostProbe::kMaxGap_s) {
    p.start(max_gap_s);
    double t = 0;
    for (int c = 0; c < calls && !p.done(); c++) {
      bool cpython = p.enter(t);
      if (p.done()) break;
      if (cpython) {
        interpreted++;
        t += interpreted_s;
      } else {
        native++;
        p.ran_native();
        t += native_s;
      }
    }
  }
};
}  // namespace

TEST(CostProbe, CPythonWinsOnlyWhenClearlyFaster) {
  ProbeRun slow_native;
  slow_native.run(2.0e-6, 1.2e-6);
  ASSERT_TRUE(slow_native.p.done());
  EXPECT_TRUE(slow_native.p.interpreter_faster());
  EXPECT_NEAR(slow_native.p.median_native_s(), 2.0e-6, 1e-12);
  EXPECT_NEAR(slow_native.p.median_interpreted_s(), 1.2e-6, 1e-12);
  // Both kinds of call took part, about as often.
  EXPECT_GE(slow_native.native, (int)stagepy::CostProbe::kSamples);
  EXPECT_GE(slow_native.interpreted, (int)stagepy::CostProbe::kSamples);

  ProbeRun fast_native;
  fast_native.run(1.0e-6, 5.0e-6);
  ASSERT_TRUE(fast_native.p.done());
  EXPECT_FALSE(fast_native.p.interpreter_faster());

  ProbeRun close;  // within the margin: the kernel stays
  close.run(1.0e-6, 0.95e-6);
  EXPECT_FALSE(close.p.interpreter_faster());
}

TEST(CostProbe, LongCallsAreSamplesUnderTheirOwnBound) {
  // Calls of 3.5 ms (a kernel that reads a big list) against 20 us in CPython: past the
  // usual 2 ms bound no gap counts and the probe never ends; under a bound of its own it does.
  ProbeRun usual;
  usual.run(3.5e-3, 20e-6, 400);
  EXPECT_FALSE(usual.p.done());
  ProbeRun own;
  own.run(3.5e-3, 20e-6, 400, 8 * 3.5e-3);
  ASSERT_TRUE(own.p.done());
  EXPECT_TRUE(own.p.interpreter_faster());
  // A 175x difference is a verdict after a few samples of each kind, not 48 long calls.
  EXPECT_LE(own.native, (int)(3 * stagepy::CostProbe::kEarlySamples));
  EXPECT_GE(own.native, (int)stagepy::CostProbe::kEarlySamples);
}

TEST(CostProbe, CPythonPastTheBoundEveryTimeLeavesTheKernel) {
  // The kernel's calls take 0.5 ms (under the 2 ms bound), CPython's 5 ms (never under it):
  // the probe ended for the kernel; it did not leave every call to CPython waiting for a
  // sample that never comes.
  ProbeRun r;
  r.run(0.5e-3, 5e-3, 400);
  ASSERT_TRUE(r.p.done());
  EXPECT_FALSE(r.p.interpreter_faster());
  EXPECT_LE(r.interpreted, (int)(4 * stagepy::CostProbe::kEarlySamples));
}

TEST(CostProbe, GapsOfOtherWorkAndCallsThatNeverRanAreNoSamples) {
  stagepy::CostProbe p;
  p.start();
  double t = 0;
  int calls = 0;
  while (!p.done() && calls < 100000) {
    bool cpython = p.enter(t);
    calls++;
    if (p.done()) break;
    // Native calls that never reach the kernel (declined on the way) give no sample;
    // every third gap is a long pause (something else ran): dropped.
    if (!cpython && calls % 5 != 0) p.ran_native();
    t += calls % 3 == 0 ? 1.0 : (cpython ? 3e-6 : 1e-6);
  }
  ASSERT_TRUE(p.done());
  EXPECT_NEAR(p.median_native_s(), 1e-6, 1e-12);
  EXPECT_NEAR(p.median_interpreted_s(), 3e-6, 1e-12);
  EXPECT_FALSE(p.interpreter_faster());
  EXPECT_FALSE(p.enter(t));  // a finished probe sends nothing to CPython
}
