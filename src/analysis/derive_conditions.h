// derive_conditions: in, a nest's polyhedral model (build_poly_model); out, the static
// half of every run-time decision, as sets of parameter values (computed with isl, or
// without it where the loop bounds alone give isl's answer: box_conditions.h):
//   * for each affine subscript position: where it may leave the array, where it may be
//     negative, where it may be non-negative (so the kernel checks an index once per call
//     instead of at every access, and drops the wrap-around of negative indices);
//   * for each affine Python-int operation: where its value may leave 64 bits;
//   * for each other int operation and division whose checks depend on affine parts only
//     (`i * j`, `x / n`, `(i + j) % n`): where those parts may leave the bounds that make
//     it stay within 64 bits, its divisor non-zero, or its int operands exact as doubles;
//   * for each loop: where two of its iterations may touch the same element, at least one
//     writing it (a dependence the loop carries), with the accesses that conflict;
//   * for each innermost loop: where one of its runs may have min_parallel_trip() iterations or more.
// The run-time half (evaluate_conditions) plugs in the values and keeps the facts whose
// violation set does not contain them. Each set is compiled (ParamSet) so that test takes
// nanoseconds.
#pragma once
#include <cstdint>
#include <string>
#include <algorithm>
#include <vector>

#include "analysis/param_set.h"
#include "analysis/poly_model.h"
#include "support/env.h"

namespace stagepy::analysis {

// The fewest iterations for which an innermost loop runs on threads: below, waking them
// costs more than they save (codegen runs the loop on this thread). 512, or for testing
// STAGEPY_MIN_PARALLEL_TRIP (the differential fuzzer's loops of a few iterations on threads;
// with STAGEPY_MIN_PARALLEL_COST=0).
inline int64_t min_parallel_trip() {
  static const int64_t n = std::max<long>(2, env_long("STAGEPY_MIN_PARALLEL_TRIP", 512));
  return n;
}

enum class FactKind : uint8_t {
  InBounds,    // subscript (origin, pos) stays within [-extent, extent)
  NonNeg,      // ... and is never negative (no wrap-around needed)
  Negative,    // ... and is always negative (always wraps)
  NoOverflow,  // the int operation at `origin` stays within 64 bits
  NonZeroDivisor,  // the divisor of the division at `origin` is never 0
  ExactOperand,    // operand `pos` of the division at `origin` is an int of at most 53 bits
  NoCarried,   // loop `loop` carries no dependence through arrays
  FewIterations,  // every run of innermost loop `loop` has fewer than min_parallel_trip() iterations
  // Loop `loop` carries no dependence through arrays other than Condition::updated, the
  // arrays it only updates (`hist[k] += 1`: PolyAccess::update); with a copy of those per
  // thread, its iterations are independent. (Only where NoCarried may fail.)
  NoCarriedBesideUpdates,
  // Every run of loop `loop` (a for loop inside another, with affine bounds) has at least one
  // iteration: infer_types then types what follows it as after its body only (`s = 0` before
  // `for i: for j: s += A[i, j]` is an np.float64 from the first run of `j` on).
  NonEmpty,
};

struct Fact {
  FactKind kind = FactKind::InBounds;
  int origin = -1;
  int pos = 0;
  int loop = -1;
  bool operator<(const Fact& o) const;
  bool operator==(const Fact& o) const;
};

// Two accesses that may touch the same element in two iterations of a loop (the earlier
// iteration's first), for the report, with the parameter values for which they may.
struct Conflict {
  std::string first, second;  // "A[i] (line 5)"
  bool first_writes = false, second_writes = false;
  std::string when;           // the parameter values, as isl writes them (for STAGEPY_DEBUG)
};

struct Condition {
  Fact fact;
  ParamSet violated;           // parameter values for which the fact may fail
  std::vector<int> arrays;     // NoCarried: array variables the loop writes or reads
  std::vector<int> written;    // NoCarried: those it writes
  std::vector<Conflict> conflicts;  // NoCarried: the pairs of accesses behind `violated`
  // NoCarried: (variable, origin) of the loop's `x, y = h(a)` items (PolyStmt::call_items):
  // the fact assumes they are values computed from what the model saw, not memory.
  std::vector<std::pair<int, int>> call_items;
  std::vector<int> updated;    // NoCarriedBesideUpdates: the arrays left out
};

struct NestConditions {
  bool ok = false;
  std::string error;                 // why the analysis gave up (isl limits...)
  std::vector<PolyParam> params;
  PolyAssumptions assumptions;
  std::vector<Condition> conds;
  bool unknown_base = false;
  // Variables that may hold a list the nest makes (ir::made_list_vars), by class
  // (PolyModel::made_classes): the extents of what they hold at entry say nothing of what
  // they hold later, so their parameters get no value from it; but where a class's lists
  // keep one length for the whole run (made_lengths.h), the dispatcher gives them that length.
  std::vector<MadeListClass> made_classes;
  double seconds = 0;
  int without_isl = 0;  // sets found from the bounds alone (box_conditions.h), not by isl
  int by_isl = 0;       // sets and dependence tests isl computed
};

// `shortcuts`: answer without isl where a statement's domain is a box or one subscript
// rules a dependence out (box_conditions.h); the sets are the same either way (off: only
// for tests that compare the two).
NestConditions derive_conditions(const PolyModel& m, const ir::Nest& nest, bool shortcuts = true);

std::string to_string(const NestConditions& c, const ir::Nest& nest);

}  // namespace stagepy::analysis
