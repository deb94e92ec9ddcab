// evaluate_conditions: in, a nest's static conditions (analysis::derive_conditions) and
// the run-time values of its parameters; out, the facts that hold for this execution, as
// a bit per condition (part of the guard key: a later call whose values satisfy the same
// conditions reuses the kernel) and as a FactSet the code generators query.
#pragma once
#include <cstdint>
#include <set>
#include <vector>

#include "analysis/derive_conditions.h"

namespace stagepy::specialize {

using analysis::Fact;
using analysis::FactKind;

class FactSet {
 public:
  void add(const Fact& f) { facts_.insert(f); }
  bool has(const Fact& f) const { return facts_.count(f) > 0; }
  bool has(FactKind k, int origin, int pos = 0) const { return has(Fact{k, origin, pos, -1}); }
  bool no_carried(int loop) const { return has(Fact{FactKind::NoCarried, -1, 0, loop}); }
  size_t size() const { return facts_.size(); }

 private:
  std::set<Fact> facts_;
};

struct ParamValues {
  std::vector<int64_t> values;   // per parameter, in NestConditions::params order
  std::vector<uint8_t> known;    // 0 where the parameter has no usable value
  bool assumptions_hold = false; // the model's assumptions about ranks/builtins hold
};

// One bit per condition of `c`: whether its fact holds for `p`.
std::vector<uint8_t> evaluate_conditions(const analysis::NestConditions& c, const ParamValues& p);

// The facts of the bits that are set.
FactSet facts_of(const analysis::NestConditions& c, const std::vector<uint8_t>& bits);

}  // namespace stagepy::specialize
