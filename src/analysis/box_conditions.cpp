// See box_conditions.h.
#include "analysis/box_conditions.h"

#include <algorithm>
#include <limits>

namespace stagepy::analysis {

BoxConditions::BoxConditions(const PolyModel& m) : m_(m) {
  for (auto& p : m.params) params_.insert(p.name);
}

const LinearForm* BoxConditions::linear(const std::string& text) {
  auto it = parsed_.find(text);
  if (it == parsed_.end()) it = parsed_.emplace(text, parse_linear(text)).first;
  return it->second ? &*it->second : nullptr;
}

const BoxConditions::Domain* BoxConditions::domain_of(const PolyStmt& s) { return domain_of(s.loops, s.guards); }
const BoxConditions::Domain* BoxConditions::domain_of(const std::vector<int>& loops) { return domain_of(loops, {}); }

const BoxConditions::Domain* BoxConditions::domain_of(const std::vector<int>& loops, const std::vector<std::string>& guards) {
  auto key = std::make_pair(loops, guards);
  auto it = domains_.find(key);
  if (it != domains_.end()) return it->second.get();
  auto d = std::make_unique<Domain>();
  bool ok = true;
  auto take = [&](const std::string& text) {
    auto cs = parse_constraints(text);
    if (!cs) ok = false;
    else d->cs.insert(d->cs.end(), cs->begin(), cs->end());
  };
  for (int l : loops) {
    const PolyLoop& P = m_.loops[(size_t)l];
    d->dims.push_back(P.dim);
    if (!P.is_for) ok = false;  // a while loop's count is bounded below only
    else take(P.constraints);
  }
  for (auto& g : guards) take(g);
  for (auto& f : d->cs)
    for (auto& [name, c] : f.coef)
      if (!is_param(name) && std::find(d->dims.begin(), d->dims.end(), name) == d->dims.end()) ok = false;
  if (!ok) d.reset();
  return domains_.emplace(key, std::move(d)).first->second.get();
}

bool BoxConditions::project(std::vector<LinearForm> cs, const std::vector<std::string>& dims, Pieces& out) const {
  constexpr size_t kMaxConstraints = 256;
  auto tidy = [](std::vector<LinearForm>& v, bool& never) {  // drops constants and repeats
    std::vector<LinearForm> kept;
    for (auto& f : v) {
      if (f.coef.empty()) {
        never = never || f.constant < 0;
        continue;
      }
      bool seen = false;
      for (auto& g : kept) seen = seen || (g.coef == f.coef && g.constant <= f.constant);  // g implies f
      if (!seen) kept.push_back(std::move(f));
    }
    v = std::move(kept);
  };
  bool never = false;
  tidy(cs, never);
  for (size_t k = dims.size(); k-- > 0 && !never;) {
    const std::string& x = dims[k];
    std::vector<LinearForm> lower, upper, rest;
    for (auto& f : cs) {
      const __int128 c = f.of(x);
      if (c == 0) rest.push_back(f);
      else if (c == 1) lower.push_back(f);   // x >= -(f - x)
      else if (c == -1) upper.push_back(f);  // x <= f + x
      else return false;                     // not exact over the integers
    }
    for (auto& l : lower)
      for (auto& u : upper) {
        LinearForm g = l;
        if (!g.add(u)) return false;
        rest.push_back(std::move(g));
      }
    cs = std::move(rest);
    tidy(cs, never);
    if (cs.size() > kMaxConstraints) return false;
  }
  if (never) return true;  // no parameter values: no piece
  for (auto& f : cs)
    for (auto& [name, c] : f.coef)
      if (!is_param(name)) return false;
  out.push_back(std::move(cs));
  return true;
}

bool BoxConditions::where(const Domain& d, const std::string& expr, const std::vector<Bound>& bounds, Pieces& out) {
  const LinearForm* e = linear(expr);
  if (!e) return false;
  Pieces mine;
  for (auto& b : bounds) {
    const LinearForm* t = linear(b.rhs);
    if (!t) return false;
    for (auto& [name, c] : t->coef)
      if (!is_param(name)) return false;
    std::vector<LinearForm> cs = d.cs;
    auto add = [&](const LinearForm& x, const LinearForm& y, __int128 minus) {  // x - y - minus >= 0
      LinearForm g = x;
      if (!g.add(y, -1)) return false;
      g.constant -= minus;
      cs.push_back(std::move(g));
      return true;
    };
    bool ok = true;
    switch (b.cmp) {
      case Cmp::Lt: ok = add(*t, *e, 1); break;  // v < t
      case Cmp::Le: ok = add(*t, *e, 0); break;  // v <= t
      case Cmp::Gt: ok = add(*e, *t, 1); break;  // v > t
      case Cmp::Ge: ok = add(*e, *t, 0); break;  // v >= t
      case Cmp::Eq: ok = add(*t, *e, 0) && add(*e, *t, 0); break;
    }
    if (!ok || !project(std::move(cs), d.dims, mine)) return false;
  }
  out.insert(out.end(), mine.begin(), mine.end());
  return true;
}

bool BoxConditions::at_least(const Domain& d, int64_t k, Pieces& out) {
  if (d.dims.empty()) return false;
  // A second value x' of the last loop's x, under the same outer values: x' >= x + k - 1.
  const std::string& x = d.dims.back();
  const std::string x2 = x + "_";
  std::vector<LinearForm> cs = d.cs;
  for (auto& f : d.cs) {
    const __int128 c = f.of(x);
    if (!c) continue;
    LinearForm g = f;
    g.coef.erase(x);
    g.coef[x2] = c;
    cs.push_back(std::move(g));
  }
  LinearForm apart;
  apart.coef[x2] = 1;
  apart.coef[x] = -1;
  apart.constant = -(k - 1);
  cs.push_back(std::move(apart));
  std::vector<std::string> dims = d.dims;
  dims.push_back(x2);
  return project(std::move(cs), dims, out);
}

bool BoxConditions::ordered(const Domain& s, const Domain& t, size_t at, Pieces& out) {
  if (at >= s.dims.size() || at >= t.dims.size()) return false;
  auto primed = [&](const std::string& dim) {
    for (size_t p = 0; p < at; p++)
      if (t.dims[p] == dim) return dim;  // a loop around both: one value
    return dim + "_";
  };
  std::vector<LinearForm> cs = s.cs;
  for (auto& f : t.cs) {
    LinearForm g;
    g.constant = f.constant;
    for (auto& [name, c] : f.coef) g.coef[is_param(name) ? name : primed(name)] = c;
    cs.push_back(std::move(g));
  }
  LinearForm later;  // t's iteration of the loop at `at` after s's
  later.coef[primed(t.dims[at])] = 1;
  later.coef[s.dims[at]] = -1;
  later.constant = -1;
  cs.push_back(std::move(later));
  std::vector<std::string> dims = s.dims;
  for (size_t p = at; p < t.dims.size(); p++) dims.push_back(primed(t.dims[p]));
  return project(std::move(cs), dims, out);
}

bool BoxConditions::is_product(const Domain& d) {
  for (auto& f : d.cs) {
    int dims = 0;
    for (auto& [name, c] : f.coef) dims += std::find(d.dims.begin(), d.dims.end(), name) != d.dims.end();
    if (dims > 1) return false;
  }
  return true;
}

void BoxConditions::simplify(Pieces& pieces) {
  // f implies g: the same coefficients, and f's constant no larger.
  auto implies = [](const LinearForm& f, const LinearForm& g) { return f.coef == g.coef && f.constant <= g.constant; };
  auto within = [&](const std::vector<LinearForm>& a, const std::vector<LinearForm>& b) {  // a's set inside b's
    for (auto& g : b)
      if (std::none_of(a.begin(), a.end(), [&](const LinearForm& f) { return implies(f, g); })) return false;
    return true;
  };
  std::vector<bool> inside(pieces.size(), false);
  for (size_t i = 0; i < pieces.size(); i++)
    for (size_t j = 0; j < pieces.size() && !inside[i]; j++)
      if (j != i && within(pieces[i], pieces[j]))
        inside[i] = !within(pieces[j], pieces[i]) || j < i;  // of two equal pieces, the first stays
  Pieces kept;
  for (size_t i = 0; i < pieces.size(); i++)
    if (!inside[i]) kept.push_back(std::move(pieces[i]));
  pieces = std::move(kept);
}

bool BoxConditions::to_param_set(const Pieces& pieces, const std::vector<std::string>& names, ParamSet& out) const {
  std::vector<std::vector<ParamSet::Constraint>> sets;
  for (auto& piece : pieces) {
    std::vector<ParamSet::Constraint> cs;
    bool never = false;
    for (auto& f : piece) {
      ParamSet::Constraint c;
      c.coef.assign(names.size(), 0);
      c.constant = f.constant;
      bool any = false;
      for (auto& [name, v] : f.coef) {
        auto at = std::find(names.begin(), names.end(), name);
        if (at == names.end() || v > std::numeric_limits<int64_t>::max() || v < -std::numeric_limits<int64_t>::max())
          return false;
        c.coef[(size_t)(at - names.begin())] = (int64_t)v;
        any = true;
      }
      if (!any) {  // a constant: always true (dropped) or never (the piece is empty)
        never = never || c.constant < 0;
        continue;
      }
      if (std::find_if(cs.begin(), cs.end(), [&](const ParamSet::Constraint& d) {
            return d.coef == c.coef && d.constant == c.constant;
          }) == cs.end())
        cs.push_back(std::move(c));
    }
    if (!never) sets.push_back(std::move(cs));
  }
  std::string names_text;
  for (size_t k = 0; k < names.size(); k++) names_text += (k ? ", " : "") + names[k];
  out = ParamSet::from_pieces(sets, names, "[" + names_text + "] -> { : " + (sets.empty() ? "1 = 0" : isl_text(pieces)) + " }");
  return true;
}

namespace {
std::string int_text(__int128 v) {
  if (v == 0) return "0";
  const bool neg = v < 0;
  unsigned __int128 u = neg ? (unsigned __int128)(-(v + 1)) + 1 : (unsigned __int128)v;
  std::string s;
  while (u) {
    s.insert(s.begin(), char('0' + (int)(u % 10)));
    u /= 10;
  }
  return neg ? "-" + s : s;
}
}  // namespace

std::string BoxConditions::isl_text(const Pieces& pieces) {
  if (pieces.empty()) return "1 = 0";
  std::string out;
  for (size_t p = 0; p < pieces.size(); p++) {
    std::string conj;
    for (auto& f : pieces[p]) {
      std::string t;
      for (auto& [name, c] : f.coef) {
        const __int128 m = c < 0 ? -c : c;
        t += (t.empty() ? (c < 0 ? "-" : "") : (c < 0 ? " - " : " + ")) + (m == 1 ? "" : int_text(m) + "*") + name;
      }
      if (t.empty()) t = int_text(f.constant);
      else if (f.constant) t += (f.constant < 0 ? " - " : " + ") + int_text(f.constant < 0 ? -f.constant : f.constant);
      conj += (conj.empty() ? "" : " and ") + t + " >= 0";
    }
    out += (p ? " or " : "") + (conj.empty() ? std::string("0 = 0") : "(" + conj + ")");
  }
  return out;
}

}  // namespace stagepy::analysis
