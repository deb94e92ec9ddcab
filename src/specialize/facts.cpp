// See facts.h.
#include "specialize/facts.h"

namespace stagepy::specialize {

std::vector<uint8_t> evaluate_conditions(const analysis::NestConditions& c, const ParamValues& p) {
  std::vector<uint8_t> bits(c.conds.size(), 0);
  if (!c.ok || !p.assumptions_hold) return bits;
  bool all_known = true;
  for (uint8_t k : p.known) all_known = all_known && k;
  for (size_t i = 0; i < c.conds.size(); i++) {
    const analysis::ParamSet& v = c.conds[i].violated;
    if (v.is_empty()) {
      bits[i] = 1;
      continue;
    }
    // A parameter without a value could be anything: only an empty violation set helps.
    if (!all_known) continue;
    bits[i] = !v.contains(p.values.data());
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
