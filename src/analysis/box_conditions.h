// box_conditions: in, a nest's polyhedral model (build_poly_model); out, without isl, the
// sets derive_conditions needs where they follow from linear bounds alone. A statement's
// domain qualifies when its loops' bounds and its `if` guards are conjunctions of linear
// constraints (no stride, floor, mod, min or max): then "some value of an affine expression
// over the domain crosses a threshold" is the domain plus one constraint with the loop
// dimensions eliminated, innermost first, by Fourier-Motzkin. Where the dimension being
// eliminated has coefficients -1, 0 or 1 only, every bound on it is an integer wherever
// the others are, so the projection is exact over the integers: the set isl would compute,
// in microseconds instead of a millisecond. Elsewhere (a coefficient of 2, a stride, a
// guard with `or`) the answer is "not of this form" and derive_conditions asks isl.
// The same eliminations tell where a loop could carry a dependence at all
// (derive_conditions' carry_cover).
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "analysis/linear_form.h"
#include "analysis/param_set.h"
#include "analysis/poly_model.h"

namespace stagepy::analysis {

// A union of conjunctions of constraints `form >= 0` over the parameters.
using Pieces = std::vector<std::vector<LinearForm>>;

class BoxConditions {
 public:
  explicit BoxConditions(const PolyModel& m);

  // Constraints (each form >= 0) over the dimensions, outermost first, and the parameters.
  struct Domain {
    std::vector<std::string> dims;
    std::vector<LinearForm> cs;
  };

  // Statement s's domain, or the domain of loops (outermost first, without guards), or
  // null where a constraint is not linear.
  const Domain* domain_of(const PolyStmt& s);
  const Domain* domain_of(const std::vector<int>& loops);

  enum class Cmp { Lt, Le, Gt, Ge, Eq };
  struct Bound {
    Cmp cmp;
    std::string rhs;  // isl text of a linear form of the parameters
  };
  // Appends to `out` the parameter values for which `expr` (isl text) takes, somewhere in
  // `d`, a value v with `v cmp rhs` for one of `bounds`. False (nothing appended) where
  // expr or a bound is not linear, or an elimination is not exact.
  bool where(const Domain& d, const std::string& expr, const std::vector<Bound>& bounds, Pieces& out);
  // The parameter values for which the last loop of `d` (a domain of loops) may run `k`
  // iterations or more under one value of the loops around it; false where not exact.
  bool at_least(const Domain& d, int64_t k, Pieces& out);
  // The parameter values for which some iteration of domain `s` comes, in the loop at
  // position `at` of both, before some iteration of domain `t` under the same iteration of
  // the loops around it (s and t share the loops up to `at`); false where not exact.
  bool ordered(const Domain& s, const Domain& t, size_t at, Pieces& out);
  // Whether no constraint of `d` relates two of its dimensions (a product of intervals,
  // whose bounds are parameters).
  static bool is_product(const Domain& d);

  // The parsed form of an expression (memoized), or null.
  const LinearForm* linear(const std::string& text);
  bool is_param(const std::string& name) const { return params_.count(name) > 0; }

  // Drops pieces that another piece contains (each of its constraints implied by one of
  // theirs with the same coefficients), and repeated constraints: the same set, fewer pieces.
  static void simplify(Pieces& pieces);
  // `pieces` as a ParamSet over `names` (the model's parameters, in order); false if a
  // coefficient does not fit 64 bits.
  bool to_param_set(const Pieces& pieces, const std::vector<std::string>& names, ParamSet& out) const;
  // `pieces` in isl syntax, as the constraints of a parameter set: "(a >= 0 and b >= 0) or ...".
  static std::string isl_text(const Pieces& pieces);

 private:
  const PolyModel& m_;
  std::set<std::string> params_;
  std::map<std::string, std::optional<LinearForm>> parsed_;
  std::map<std::pair<std::vector<int>, std::vector<std::string>>, std::unique_ptr<Domain>> domains_;  // by loops and guards
  const Domain* domain_of(const std::vector<int>& loops, const std::vector<std::string>& guards);
  // Eliminates `dims` (the last first) from `cs`; appends the piece left (nothing if it is
  // never met) to `out`. False where not exact.
  bool project(std::vector<LinearForm> cs, const std::vector<std::string>& dims, Pieces& out) const;
};

}  // namespace stagepy::analysis
