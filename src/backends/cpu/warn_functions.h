// warn_functions: in, a module; out, the module's shared, out-of-line functions that
// record NumPy's floating-point (real and complex) and integer warnings at a warning
// site (created on first request, then reused). Kernels reach them only from cold paths (an operation gave an
// infinity or a NaN, or a NumPy integer wrapped), so each site costs a test and a branch
// instead of the recording's forty-odd instructions, which LLVM would otherwise optimize
// and compile at every site of every copy of a loop body.
//
// A site's state: `bits` (i8, the kinds seen: bit 0 divide, 1 overflow, 2 invalid, the
// order NumPy reports them in), `first0..2` (i64 each, where each kind first occurred),
// and the kernel's `count` (i64, warnings seen so far). A kind new to the site takes the
// next count as its place, or, when `place` is not kWarnPlaceCount, place + that count (a
// parallel body passes iteration * a stride above any count: a key that orders the
// warnings of different iterations by iteration and those of one iteration, which one
// thread ran, by when they came).
#pragma once
#include <cstdint>

namespace llvm {
class Function;
class Module;
}  // namespace llvm

namespace stagepy::backends::cpu {

constexpr int64_t kWarnPlaceCount = INT64_MIN;

// void (i8 kinds, ptr bits, ptr first0, ptr first1, ptr first2, ptr count, i64 place)
llvm::Function* warn_record_function(llvm::Module& m);

// void (double x, double y, double r, i8 op, ptr bits, ptr first0, ptr first1,
//       ptr first2, ptr count, i64 place): the warnings NumPy gives for r = x op y
// (operands of narrower float types extended to double, which keeps every class); `op`
// is kFpWarnDivide for /, kFpWarnPower for ** (finite operands only), else kFpWarnOther.
constexpr int kFpWarnOther = 0, kFpWarnDivide = 1, kFpWarnPower = 2;
llvm::Function* fp_warn_function(llvm::Module& m);

// void (i8 op, i8 single, double ar, double ai, double br, double bi, ptr bits, ptr
// first0, ptr first1, ptr first2, ptr count, i64 place): the warnings NumPy gives for
// the complex operation (ar + ai j) op (br + bi j), op kComplexWarn*: each of its parts'
// float operations (for a division, NumPy's: a scaled reciprocal, and the comparison that
// picks the scaling) classified as above and the kinds combined, as NumPy reports the
// flags of the whole operation once; `single` for complex64 (each part's operation
// rounded to float32).
constexpr int kComplexWarnAdd = 0, kComplexWarnSubtract = 1, kComplexWarnMultiply = 2, kComplexWarnDivide = 3;
llvm::Function* complex_warn_function(llvm::Module& m);

}  // namespace stagepy::backends::cpu
