// plan_parallel: in, a typed nest, the facts of this call (facts.h) and the nest's static
// conditions; out, for each For loop, whether its iterations may run on several threads,
// and how each variable it assigns is shared: private to an iteration (the last
// iteration's value survives the loop), a reduction (per-thread partial results combined
// after the loop), or carried (the loop stays sequential, and why).
//
// A loop is parallel only when all of this holds:
//   * the static analysis says it carries no dependence through arrays for these parameter
//     values (NoCarried), and its affine subscripts are in bounds and non-negative (the
//     assumption that analysis made);
//   * no array it touches is reassigned inside it, and the arrays it writes share no memory
//     with the other arrays it touches (checked where the loop starts: plan.alias_pairs);
//   * every scalar it assigns is private or a reduction; float reductions reassociate, so
//     they need `reassociate` (STAGEPY_STRICT_FP=1 turns it off). A min/max (`m = max(m, e)`,
//     `if e > m: m = e`) of floats is exact only when the parts combine in iteration order
//     (NaN and the sign of zero make it order-dependent otherwise): plan.ordered;
//   * it has no `break` of its own (codegen also refuses a body that could stop for CPython).
// Every For loop is also marked `independent` when the array conditions above hold (the
// interleaving of plan_interleave.h needs nothing more of the arrays).
#pragma once
#include <string>
#include <vector>

#include "backends/kernel_abi.h"
#include "specialize/facts.h"
#include "specialize/type_infer.h"

namespace stagepy::specialize {

struct Reduction {
  int var = -1;
  ir::BinOp op = ir::BinOp::Add;  // Add, Sub, Mul; or Min/Max below
  // Min/Max: v = min(v, e) / max(v, e), or `if e < v: v = e` / `if e > v: v = e` (for ints
  // also the non-strict and the `min(e, v)` forms, which give the same value).
  enum class Kind : uint8_t { Arith, Min, Max } kind = Kind::Arith;
  // A float Min/Max in the strict, self-first form: the value after a run of iterations is
  // the run's own min/max (from +-inf) if strictly smaller/greater than the value before,
  // else the value before; so parts combine exactly, in iteration order (LoopPlan::ordered).
  bool strict_first = false;
  TypeRef type;                   // the variable's type inside the loop
  // An Arith sum of float | np.float64 (int | np.int64) whose updates all give the NumPy
  // type: np_type is that type. A part that assigned nothing must leave the variable's
  // type (float or np.float64) as it was, so parts start untagged (tag 0) and combine as
  // np_type operations only when tagged.
  TypeRef np_type;
  // A part (`s.real`, `s.imag`) of a NumPy complex sum (lower_complex.h): the parts combine
  // as operations of this NumPy float type (np.float64 for complex128), whose warnings are
  // the complex addition's, and are checked as NumPy float sums are (codegen).
  TypeRef np_part;
  // An integer sum whose overflow matters (a Python int leaving 64 bits; a NumPy integer
  // where NumPy warns): its updates and the combination of the parts stop for CPython on
  // overflow, which makes the loop run speculatively (LoopPlan::store_free).
  bool checked = false;
  // A Python int counter: every update is `v + K` or `v - K` outside the loop's inner loops,
  // K an int constant or a Python int variable the loop does not assign (`bound_vars`), so
  // each iteration moves it by at most bound + the |values| of bound_vars. The loop runs in
  // parallel only where |v| + iterations * that fits in 64 bits (checked where it starts,
  // codegen); then neither the parts nor their sum can overflow, and the updates need no
  // check. counter: whether it is one.
  bool counter = false;
  int64_t bound = 0;
  std::vector<int> bound_vars;
  // Min/Max only: variables the update's branch also assigns (`if a[i] > m: m = a[i];
  // k = i`). Each part keeps its own; a part whose value replaces the combined one brings
  // its companions along (the strict form, combined in order: LoopPlan::ordered).
  std::vector<int> companions;
  // The update expressions (`v + e`): on threads, a float one may be reassociated (the
  // per-thread partial sums are), so codegen lets the vectorizer reorder it too.
  std::vector<const ir::ExprNode*> updates;
};

// An array (or list) the loop only updates, `hist[k] += 1` / `C[c, j] -= e` (the analysis's
// NoCarriedBesideUpdates): each thread sums into a copy of its own, which starts at the
// identity (0, or -0.0: x + -0.0 is x for every x), and the copies are added to the array
// after the loop, element by element, in thread order. The run is void (the loop runs
// again in order) where that combination is not CPython's: an integer total out of 64 bits
// (of the element's width for NumPy's), a float total that is not finite (its sum in order
// may have warned or ended elsewhere). Integer parts are checked as they are summed, so
// the loop runs speculatively (LoopPlan::store_free counts these stores as none).
// NumPy integers warn at each wrap of the sum in iteration order: their updates must all
// add, or all subtract, a non-negative constant (the sum in order is then monotone), unless
// NumPy's warnings are ignored. Floats are reassociated (not with STAGEPY_STRICT_FP=1).
struct ArrayReduction {
  int var = -1;                  // the array variable
  TypeRef elem;                  // the element's value type (int, float, np.int64, np.float32...)
  bool checked = false;          // integer: each update and the combination checked for overflow
  std::vector<const ir::ExprNode*> updates;  // the `hist[k] + 1` of each update
};

// How codegen interleaves the iterations of a loop (plan_interleave.h).
struct Interleave {
  int lanes = 0;                 // iterations run together; 0: not interleaved
  int then_lanes = 0;            // after the blocks of `lanes`, blocks of this many (0: none)
  size_t fast = 0;               // the body's first `fast` statements (ir::flatten_blocks) run lane by lane, together
  std::vector<int> lane_vars;    // variables each lane keeps its own copy of there
  std::vector<int> seeded;       // of those, the ones a lane may leave unassigned there (they
                                 // start from the value before the lanes)
  // F as the lanes run it: each array element F alone touches (`C[i, j]` of
  // `C[i, j] = 0.0; for k: C[i, j] += ...`) is a Temp variable there, read first...
  std::vector<ir::Stmt> fast_body;
  // ... and stored back before the rest of the lane's iteration.
  std::vector<ir::Stmt> writeback;
};

struct LoopPlan {
  bool parallel = false;
  // With one thread: the loop would be parallel with more (its plan is that plan, `parallel`
  // false, `why` "one thread"); codegen may run its parallel body on this thread.
  bool one_thread = false;
  // Its iterations touch no array element another iteration writes, for this call's facts,
  // provided the pairs in alias_pairs share no memory: they may run in any order as far as
  // arrays go (scalars: privates and reductions above, for parallel loops). Computed for
  // every For loop; false for one that sums into arrays (its iterations may update one
  // element: only their copies make them independent).
  bool independent = false;
  Interleave interleave;
  // Every run of it has fewer than 512 iterations (a fact of this call).
  bool few_iterations = false;
  // Codegen runs the loop with its one inner loop outside it (plan_interchange.h).
  bool interchange = false;
  std::string why;                     // why not, in a user's words ("" when parallel or not looked at)
  std::vector<int> privates;           // scalars assigned in every way through an iteration before any read
  std::vector<Reduction> reductions;
  std::vector<ArrayReduction> array_reductions;
  // The reductions combine exactly only in iteration order (a float min/max): the threads
  // take contiguous runs of iterations, combined in order (no GPU version).
  bool ordered = false;
  // Its iterations do about the same work (no while loop, no bound that depends on the
  // iteration): each thread takes one contiguous block of them (else chunks, dealt
  // round-robin, balance triangular and data-dependent nests).
  bool blocks = false;
  // The loop writes no array or list element: when its body may stop for CPython (an
  // overflow check), it may still run on threads, speculatively: should any iteration stop,
  // the threads' results are dropped and the loop runs again sequentially, which stops at
  // the same iteration CPython does. (The scalars it assigns are only combined afterwards.)
  // A loop that writes elements runs speculatively too, its stores logged and undone
  // (backends/cpu/undo_log.h), but not with checked integer sums, which need this.
  bool store_free = false;
  std::vector<std::pair<int, int>> alias_pairs;  // array variables that must not share memory
                                                 // (parallel or independent loops)
  // Scalars the loop does not assign that divide (/, //, %): checked non-zero once before
  // the loop runs on threads (else it runs sequentially), so the body needs no check.
  std::vector<std::pair<int, TypeRef>> invariant_divisors;
  // Python ints the loop does not assign that meet a NumPy integer (other than int64) or
  // float32 operand, which they must fit (NumPy raises; float32 beyond 2**24 goes to
  // CPython): checked once before the loop runs on threads (else it runs sequentially), so
  // the body needs no check.
  std::vector<std::pair<int, DType>> invariant_operands;
};

struct ParallelPlan {
  std::vector<LoopPlan> loops;  // by loop id
  int threads = 1;
};

struct PlanOptions {
  int threads = 1;
  bool reassociate = true;   // float reductions may run in another order (STAGEPY_STRICT_FP=0)
  FpMode fp = FpMode::Exact;
  bool gpu = false;          // loops may also run on a GPU: plan them even with one CPU thread
};

// LoopPlan::invariant_operands of For loop `loop`: the Python-int variables it does not
// assign that an operation in it meets with a NumPy integer (not int64) or float32.
std::vector<std::pair<int, DType>> invariant_operands(const ir::Stmt& loop);

ParallelPlan plan_parallel(const TypedNest& tn, const FactSet& facts, const analysis::NestConditions& conds,
                           const PlanOptions& options);

std::string to_string(const ParallelPlan& p, const ir::Nest& nest);

}  // namespace stagepy::specialize
