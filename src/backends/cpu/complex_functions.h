// complex_functions: what CPython computes for `z ** w` (Objects/complexobject.c) and for
// the cmath functions (Modules/cmathmodule.c: the direct, hyperbolic and inverse ones, log,
// sqrt, rect) on finite operands, for kernels to call.
// In: the function, the operand's parts (and a second operand's: the exponent, the base of
// cmath.log, or rect's (r, phi) as the first "complex"); out: the result's two parts, and
// whether that is what CPython returns. Where CPython would raise (a zero to a negative
// power, log(0), an overflow), take a special-value path (an infinite or NaN operand) or
// return a non-finite part, the answer is "no": the kernel hands the statement to CPython,
// which computes it (or raises) itself.
//
// The arithmetic follows CPython's, operation by operation, with the same C library calls,
// so that results are the same bit for bit. python/stagepy/_types.py checks each function
// against the running CPython on sample values before any kernel uses it.
#pragma once

namespace stagepy::backends::cpu {

enum class CFn : int {
  Pow, Sqrt, Exp, Log, LogBase, Log10, Sin, Cos, Tan, Sinh, Cosh, Tanh, Asin, Acos, Atan, Asinh, Acosh, Atanh, Rect,
  Count
};
constexpr int kCFnCount = static_cast<int>(CFn::Count);
const char* cfn_name(CFn f);  // "pow", "sqrt", ..., "log_base", "rect"

}  // namespace stagepy::backends::cpu

// out[0], out[1]: the parts of f((ar, ai), (br, bi)); returns 1 where that is CPython's
// result, 0 where the statement must go to CPython (out is then unspecified).
extern "C" int stagepy_cfunc(int f, double ar, double ai, double br, double bi, double* out);
