// prove_row_bounds: in, a typed nest and the facts of this call; out, those facts and, for
// each subscript `R[j]` inside a loop `for j in range(len(R))` (also `range(c, len(R))`,
// `range(c, len(R) - d, s)` with constants c, d >= 0 and s > 0) whose index and row cannot
// change while the loop runs, InBounds and NonNeg: its index lies in [0, len(R)).
//
// The polyhedral model proves these where len(R) is one of its extents; it cannot where R is
// a row of a ragged list of lists (`for j in range(len(adj[u])): adj[u][j]`), whose rows'
// lengths are no parameter (build_poly_model's `ragged`). Without the facts every such access
// is checked, and the loops around it stay sequential (plan_parallel).
//
// R is a variable or `A[e]` (e an int expression of variables and constants); the loop
// assigns none of their variables nor `j`, R is no list whose length the nest changes (a
// made list, Type::made) and the nest stores no row into A (type inference refuses that for
// lists; an array's rows keep their extent). A fact is about a bytecode offset: it is given
// only where every subscript of that offset in the nest is such an access.
#pragma once
#include "specialize/facts.h"
#include "specialize/type_infer.h"

namespace stagepy::specialize {

FactSet prove_row_bounds(const TypedNest& tn, const FactSet& facts);

}  // namespace stagepy::specialize
