// See facts.h.
#include "specialize/facts.h"

namespace stagepy::specialize {

std::vector<uint8_t> evaluate_conditions(const analysis::NestConditions& c, const ParamValues& p) {
  std::vector<uint8_t> bits(c.conds.size(), 0);
  if (!c.ok || !p.assumptions_hold) return bits;
  for (size_t i = 0; i < c.conds.size(); i++) {
    const analysis::ParamSet& v = c.conds[i].violated;
    if (v.is_empty()) {
      bits[i] = 1;
      continue;
    }
    // A parameter without a value (a float, an int beyond 64 bits) could be anything: the
    // condition is decided only if it does not depend on one.
    bool known = true;
    for (size_t k = 0; k < p.known.size() && known; k++) known = p.known[k] || !v.involves(k);
    if (known) bits[i] = !v.contains(p.values.data());
  }
  return bits;
}

FactSet facts_of(const analysis::NestConditions& c, const std::vector<uint8_t>& bits) {
  FactSet f;
  for (size_t i = 0; i < c.conds.size() && i < bits.size(); i++)
    if (bits[i]) f.add(c.conds[i].fact);
  return f;
}

}  // namespace stagepy::specialize
