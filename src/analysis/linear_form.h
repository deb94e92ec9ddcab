// LinearForm: an affine expression of the polyhedral model's isl text (poly_model.h),
// "(i2 - 1)", "(p_n_3 - 2)", "(-1 + 1 * i4)", read back as integer coefficients per name
// and a constant. What goes in: one expression as build_poly_model writes it. What comes
// out: its linear form, or nothing where it is not one in this simple syntax (floor, mod,
// min, max, a product of two names, a coefficient beyond 62 bits): callers then ask isl.
// derive_conditions uses these forms to answer without isl the questions whose answer
// follows from the expressions alone (box_conditions.h).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace stagepy::analysis {

struct LinearForm {
  std::map<std::string, __int128> coef;  // name -> coefficient (no zero entries)
  __int128 constant = 0;

  // this + k * o, or false where a coefficient or the constant would pass 2^100.
  bool add(const LinearForm& o, __int128 k = 1);
  __int128 of(const std::string& name) const {
    auto it = coef.find(name);
    return it == coef.end() ? 0 : it->second;
  }
};

std::optional<LinearForm> parse_linear(const std::string& text);

// The constraints of a loop as build_poly_model writes them ("i1 >= 1 and i1 < (p_n_3 - 1)"),
// each as a form that is >= 0; nothing where one is not a comparison of linear forms
// (an `exists` of a stride, a min or max bound).
std::optional<std::vector<LinearForm>> parse_constraints(const std::string& text);

}  // namespace stagepy::analysis
