// lower_complex: in, a typed nest whose values may be complex numbers (Python `complex`,
// NumPy complex128 and complex64 scalars and arrays) and the types of its variables at
// entry; out, the same nest computing only on real numbers, with the entry types of the
// variables it added. A complex64 result is computed on doubles rounded to float32 after
// every operation (Round32), its operands converted to complex64 first, as NumPy does.
//
// Each complex variable `z` gets two Part variables (`z.real`, `z.imag`, Python floats);
// `z` itself keeps only its type tag, which says how to box the parts back at exit. An
// element of a complex array is read and written one part at a time. Every operation
// becomes the arithmetic CPython (Objects/complexobject.c) or NumPy performs on the parts,
// in the same order, with the same conversions (a real operand becomes `x + 0j` first):
//   * + - * and unary -/+, conjugate(), complex(re[, im]), .real/.imag, ==/!=, truth;
//   * / by Smith's algorithm (CPython's divides, NumPy's multiplies by a reciprocal);
//     a zero divisor goes to CPython (ZeroDivisionError, or NumPy's warnings unless the
//     kernel records them: below);
//   * ** with a constant integer exponent |n| <= 100 (CPython's repeated squaring); an
//     infinite result goes to CPython (OverflowError); ** with any other exponent, and
//     cmath.sqrt exp log log10 sin cos tan sinh cosh tanh asin acos atan asinh acosh
//     atanh rect: a call of stagepy_cfunc
//     (backends/cpu/complex_functions.h), CPython's own arithmetic, for both parts at once;
//     where that is not CPython's result (an error, a special value) CPython redoes it;
//   * abs() and cmath.polar's modulus: the C library's hypot, as both compute it; an
//     infinite result goes to CPython. cmath.phase: atan2 of finite parts; cmath.isnan,
//     isinf, isfinite of the parts;
//   * np.exp, np.sqrt... of one complex number (oracle: numpy_complex_function): NumPy's
//     own loop for the dtype (NpCLoop), once verified against the ufunc.
// NumPy's + - * / of complex numbers record their warnings themselves where warnings are
// deferred (FpMode::Deferred) and nothing else in the statement could warn: a statement
// after it evaluates ComplexWarn for each, in CPython's order, so they are recorded only
// once the statement completed (one handed to CPython records none; CPython warns as it
// redoes it). Other NumPy operations whose result is not finite go to CPython, which warns
// exactly.
// Intermediate results that later operations read twice are computed once into Temp
// variables, in statements of their own before the statement that uses them (with its
// resume point: a failure there hands the whole statement to CPython).
// Anything else on complex numbers (other NumPy functions, NumPy complex ** other than by
// a constant integer, a variable holding complex numbers or other values) is refused, with
// a reason.
#pragma once
#include <vector>

#include "backends/kernel_abi.h"
#include "specialize/oracle.h"
#include "specialize/type_infer.h"

namespace stagepy::specialize {

// For nests where mentions_complex() holds (the pipeline asks it first). `entry` grows
// with the new variables.
// With FpMode::Ignore (np.errstate ignores every floating-point error) NumPy operations
// need no check: nothing can warn.
// complex ** (other exponents) and the cmath functions are used only once they passed
// their self-test (oracle.cfunc_verified).
TypedNest lower_complex(const TypedNest& tn, std::vector<TypeRef>* entry, const Oracle& oracle, FpMode fp);

// Whether any value of the nest (or any array it reads) is complex.
bool mentions_complex(const TypedNest& tn, const std::vector<TypeRef>& entry);

}  // namespace stagepy::specialize
