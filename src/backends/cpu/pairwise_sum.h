// pairwise_sum: in, a module and a float type; out, the module's function computing what
// NumPy 2's np.sum of a one-dimensional float array computes (created on first request):
// its pairwise summation (numpy/_core/src/umath/loops_utils.h.src, `pairwise_sum`), in
// the array's own float type: below 8 items one after the other; up to 128, eight running
// sums combined as ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)), then the rest; above,
// the two halves (the first a multiple of 8 long) summed so and added. np.sum adds that to
// its identity +0.0 (so a sum of -0.0s is 0.0): the caller does.
//
// double (ptr first, i64 n, i64 stride_bytes), or float (...) for float32.
#pragma once

namespace llvm {
class Function;
class Module;
}  // namespace llvm

namespace stagepy::backends::cpu {

llvm::Function* pairwise_sum_function(llvm::Module& m, bool f32);

}  // namespace stagepy::backends::cpu
