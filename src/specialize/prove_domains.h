// prove_domains: in, a typed nest (after lower_complex) and the types of its variables at
// entry; out, the same nest where each operation whose domain check cannot fail is marked
// `in_domain`, so that codegen emits no check (and no way out to CPython) for it:
//   * math.sqrt(x) of an x that is never below zero (a NaN is fine: CPython returns it);
//   * math.log(x), log2, log10 of an x that is never zero or below;
//   * a Python float or int `/`, `//`, `%` by a divisor that is never zero or below.
//
// A sign analysis: each value is Positive (> 0 or NaN), NonNegative (>= 0, -0.0 or NaN)
// or Any. Constants, squares (`x * x` of one pure expression, `x ** 2`), sums and products
// of non-negative values, abs(), sqrt(), exp(), hypot(), len() and max() with a
// non-negative constant are non-negative; a quotient is so where its divisor is positive.
// Only on types that cannot wrap around (Python numbers, NumPy floats). A variable has the
// sign every assignment in the nest gives it, found by a fixpoint that starts from
// Positive and only goes down; a variable that has a value at entry, or that a loop or
// anything but an assignment sets, is Any.
//
// Why it matters: an operation that may stop for CPython keeps its loop sequential (a
// parallel body must run to the end), so `r = math.sqrt(dx*dx + dy*dy)` in an N-body or
// distance kernel would otherwise keep the loop around it on one thread.
#pragma once
#include <vector>

#include "specialize/type_infer.h"

namespace stagepy::specialize {

TypedNest prove_domains(const TypedNest& tn, const std::vector<TypeRef>& entry);

}  // namespace stagepy::specialize
