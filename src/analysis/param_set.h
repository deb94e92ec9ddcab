// ParamSet: a set of parameter values (an isl set over a nest's parameters), compiled at
// first sight so that asking "do these run-time values lie in it?" costs nanoseconds: each
// piece becomes a list of integer constraints evaluated in 128-bit arithmetic. Pieces with
// existential variables, coefficients too big for that, or an overflowing sum fall back
// to isl itself (exact, slower).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

struct isl_set;

namespace stagepy::analysis {

class ParamSet {
 public:
  // sum(coef[k] * params[k]) + constant >= 0 (or == 0).
  struct Constraint {
    std::vector<int64_t> coef;  // per parameter (in `names` order)
    __int128 constant = 0;     // (conditions of 64-bit overflow have constants beyond 2^63)
    bool eq = false;            // == 0, else >= 0
  };

  ParamSet();  // the empty set
  // Takes ownership of `s`, whose parameters must be named as in `names` (any order;
  // parameters of `s` not in `names` make every test fall back to "unknown").
  static ParamSet from_isl(isl_set* s, const std::vector<std::string>& names);
  static ParamSet universe();
  // The union of the pieces, each the conjunction of its constraints (derive_conditions'
  // shortcuts, which build such sets without isl). `text` is the set in isl syntax.
  static ParamSet from_pieces(const std::vector<std::vector<Constraint>>& pieces, const std::vector<std::string>& names,
                              std::string text);

  // Whether `params` (values in the order of `names`) lie in the set. Never wrong: where
  // the fast path cannot decide, isl decides.
  bool contains(const int64_t* params) const;
  // Whether membership depends on parameter `k` (in `names` order): the others may be
  // left without a value.
  bool involves(size_t k) const { return k < involved_.size() && involved_[k]; }
  // Whether contains() decides every parameter vector without isl (nanoseconds, not the
  // hundreds of microseconds of parsing the set again).
  bool fast() const {
    for (const Piece& pc : pieces_)
      if (!pc.exact) return false;
    return true;
  }
  bool is_empty() const { return empty_; }
  bool is_universe() const { return universe_; }
  const std::string& str() const { return text_; }
  // The set in a user's terms, the parameters shown as `shown` (in `names` order): "d >= 1
  // and n >= d + 1, or d <= -1 and n + d >= 1". "" where a piece is not a plain conjunction
  // of linear constraints (isl's divisions, existentials) or a constant leaves 64 bits.
  // `nonneg`: parameters that are never negative (extents), whose `p >= 0` goes unsaid;
  // `used`: set for each parameter the text names.
  std::string describe(const std::vector<std::string>& shown, const std::vector<uint8_t>& nonneg,
                       std::vector<uint8_t>* used) const;

 private:
  struct Piece {
    std::vector<Constraint> cs;
    bool exact = true;          // false: decide with isl
  };
  std::vector<Piece> pieces_;
  bool empty_ = true, universe_ = false;
  std::string text_;
  std::vector<std::string> names_;
  std::vector<uint8_t> involved_;  // per name
  bool slow_contains(const int64_t* params) const;
};

}  // namespace stagepy::analysis
