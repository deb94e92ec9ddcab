// plan_interchange: in, a typed nest and its parallel plan (plan_parallel.h); out, the same
// plan with LoopPlan::interchange set on each loop J whose iterations codegen runs with its
// one inner loop I outside: `for j: for i: B[i, j] = ...` over a C-ordered B runs as
// `for i: for j: ...`, so that the inner loop walks memory with stride 1 and vectorizes.
//
// The order (i outside) gives CPython's results when:
//  * J's iterations are independent (plan_parallel: no array element one touches is written
//    by another, provided the arrays in alias_pairs share no memory, which codegen checks);
//  * J's body is I's range() and I, nothing else, and that range() reads nothing J's body
//    assigns (every iteration of J runs the same iterations of I);
//  * I's body is straight-line code (no if, loop, break) whose scalar variables are
//    assigned before they are read in each iteration, at its top level (so the last
//    iteration, the same in both orders, leaves their values);
// and codegen runs the interchanged iterations speculatively: in blocks with an undo log,
// testing only "may a NumPy operation have warned" (and giving the order up, having
// generated nothing, where a statement could need to stop for CPython). If a block may
// have warned, its stores are undone and the iterations not yet run go in CPython's order,
// working out the warnings exactly (architecture.md, "Loop interchange").
//
// Only where it pays: more of the body's array accesses have J's variable (plus or minus
// something else) as their contiguous subscript than I's.
#pragma once

#include "specialize/plan_parallel.h"

namespace stagepy::specialize {

void plan_interchange(const TypedNest& tn, ParallelPlan* plan);

}  // namespace stagepy::specialize
