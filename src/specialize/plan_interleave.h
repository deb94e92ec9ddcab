// plan_interleave: in, a typed nest and its parallel plan (which For loops have independent
// iterations, plan_parallel.h); out, the same plan with, for each loop whose iterations
// codegen interleaves, how (LoopPlan::interleave).
//
// Interleaving is unroll-and-jam with a speculative part. A loop J whose body starts with
// scalar work around inner loops (a gemm's `acc = 0.0; for k: acc += A[i, k] * B[k, j]`, a
// row's dot product) runs `lanes` consecutive iterations together: their leading part F
// (the body's first `fast` statements) runs once for all lanes, each inner loop's iteration
// doing its body for lane 0, 1, ... in turn, each lane with its own copies of the variables
// F assigns. The lanes' recurrences then run side by side and the SLP vectorizer makes
// vectors of them. The rest of the body (P: the store of `acc`, anything else) runs after,
// lane by lane in iteration order, on the lane's values.
//
// That order (F0 F1 ... P0 P1 ...) gives CPython's results when:
//  * J's iterations are independent (no array element one writes is touched by another);
//  * F stores no array element (but those it alone touches, which become variables: see
//    Element in plan_interleave.cpp), has no break or continue of J, and its loops are For loops
//    over ranges that read nothing J's body assigns (but the variables of F's loops around
//    them), with no break of their own (every lane runs the same iterations of them); a
//    loop around loops (a 3x3 window's `for di: for dj:`) continues only at its end;
//  * F reads a variable J's body assigns only after F assigned it in the same iteration, on
//    every way there (so no lane sees another's values);
//  * a variable F assigns only on some ways (inside its loops, whose trip counts all lanes
//    share) is not assigned by P; such a lane copy starts from the variable's value before
//    the lanes (`seeded`).
// Codegen runs F speculatively: it gives the interleaving up where F could need to stop
// for CPython (a check the facts do not remove), and if any lane's NumPy operation may
// have warned it runs the lanes' iterations again one by one, exactly (nothing F did is
// visible outside the lane copies).
//
// Only where it pays: F's loops update a float by a recurrence (`acc += ...`), which the
// loop vectorizer cannot reorder; the lanes' elements lie side by side wherever those loops
// subscript with J's variable (`B[k, j]` of a C-ordered B, J stepping by 1 or -1: vector
// loads; a row per lane, `A[j, k]`, was measured slower than one row after another); and F
// is small enough to copy `lanes` times: 32 lanes (then blocks of 8) where F is small and
// has one variable and loops over ranges, 16 (then 8) with two, 8 with more or where F loops
// over constant offsets, 4 where F is larger.
#pragma once
#include <vector>

#include "ir/ir.h"
#include "specialize/plan_parallel.h"

namespace stagepy::specialize {

// Adds a Temp variable to `tn` (and its Unbound entry type to `entry`) for each promoted
// element.
void plan_interleave(TypedNest* tn, std::vector<TypeRef>* entry, ParallelPlan* plan);

}  // namespace stagepy::specialize
