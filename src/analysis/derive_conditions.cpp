// See derive_conditions.h.
#include "analysis/derive_conditions.h"

#include "ir/mutate.h"

#include <isl/cpp.h>
#include <isl/map.h>
#include <isl/set.h>

#include <cctype>
#include <cstdlib>
#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <sstream>

#include "analysis/box_conditions.h"
#include "analysis/isl_support.h"

namespace stagepy::analysis {

bool Fact::operator<(const Fact& o) const {
  return std::tie(kind, origin, pos, loop) < std::tie(o.kind, o.origin, o.pos, o.loop);
}
bool Fact::operator==(const Fact& o) const {
  return kind == o.kind && origin == o.origin && pos == o.pos && loop == o.loop;
}

namespace {

const char* kInt64Min = "(-9223372036854775808)";
const char* kInt64Max = "9223372036854775807";

// Calls f(begin, end) for each word of `s` (a run of letters, digits and '_') in order.
// (A scan, not std::regex: libstdc++'s regex compiler crashed on the GPU machine's build,
// and it is slow.)
template <class F>
void each_word(const std::string& s, F f) {
  auto word_char = [](char c) { return std::isalnum((unsigned char)c) || c == '_'; };
  for (size_t i = 0; i < s.size();) {
    if (!word_char(s[i])) {
      i++;
      continue;
    }
    size_t j = i;
    while (j < s.size() && word_char(s[j])) j++;
    f(i, j);
    i = j;
  }
}

// Renames the loop dimensions (i3, w3) and the stride witnesses (ki3) of an expression
// or constraint to their primed versions (i3_, ...), for the second statement of a pair.
std::string primed(const std::string& s) {
  std::string out;
  out.reserve(s.size() + 16);
  size_t done = 0;
  each_word(s, [&](size_t i, size_t j) {
    out.append(s, done, j - done);  // what lies before the word, and the word
    size_t k = s[i] == 'k' ? i + 1 : i;
    bool dim = j > k + 1 && (s[k] == 'i' || s[k] == 'w');
    for (size_t d = k + 1; dim && d < j; d++) dim = std::isdigit((unsigned char)s[d]) != 0;
    if (dim) out += '_';
    done = j;
  });
  out.append(s, done, std::string::npos);
  return out;
}

class Deriver {
 public:
  Deriver(const PolyModel& m, const ir::Nest& nest, bool shortcuts)
      : m_(m), nest_(nest), shortcuts_(shortcuts), boxes_(m) {}

  NestConditions run() {
    NestConditions out;
    out.params = m_.params;
    out.assumptions = m_.assumptions;
    out.unknown_base = m_.unknown_base;
    out.made_classes = m_.made_classes;
    for (auto& p : m_.params) names_.push_back(p.name);
    try {
      std::string ctx_s = m_.param_list() + " -> { : ";
      bool first = true;
      for (auto& p : m_.params)
        if (p.kind == PolyParam::Kind::Extent) {
          ctx_s += (first ? "" : " and ") + p.name + " >= 0";
          first = false;
        }
      ctx_s += first ? "}" : " }";
      context_ = isl::set(ctx_.get(), ctx_s);
      // Statements in the same loops under the same conditions share a domain: what is
      // derived over the domain is derived once, for the first of them.
      std::map<std::pair<std::vector<int>, std::vector<std::string>>, int> first_of;
      for (auto& s : m_.stmts) {
        rep_.push_back(first_of.emplace(std::make_pair(s.loops, s.guards), s.id).first->second);
        domains_.push_back(rep_.back() == s.id ? isl::set(ctx_.get(), text(m_.domain_body(s)))
                                               : domains_[(size_t)rep_.back()]);
      }
      bounds_and_overflow(out);
      dependences(out);
      trip_counts(out);
      nonempty_loops(out);
      out.without_isl = without_isl_;
      out.by_isl = by_isl_;
      out.ok = true;
    } catch (const isl::exception& e) {
      out.ok = false;
      out.error = std::string("the dependence analysis gave up: ") + e.what();
      out.conds.clear();
    }
    return out;
  }

 private:
  const PolyModel& m_;
  const ir::Nest& nest_;
  const bool shortcuts_;  // answer from the bounds alone where they suffice (box_conditions.h)
  int without_isl_ = 0, by_isl_ = 0;
  BoxConditions boxes_;
  IslCtx ctx_;
  std::vector<std::string> names_;
  isl::set context_;
  std::vector<isl::set> domains_;
  std::vector<int> rep_;  // per statement: the first one with its domain
  // "[params] -> { body }" with the parameters `body` names only: isl works on every
  // parameter of a space, and a big nest has many (scalars in int ops, every array's
  // extents) of which one relation uses a few. Binary operations align the spaces; the
  // context (extents >= 0) is added where a result is final.
  std::string text(const std::string& body) const {
    std::set<std::string> words;
    each_word(body, [&](size_t i, size_t j) { words.insert(body.substr(i, j - i)); });
    std::string out = "[";
    bool first = true;
    for (auto& p : m_.params)
      if (words.count(p.name)) {
        out += (first ? "" : ", ") + p.name;
        first = false;
      }
    return out + "] -> { " + body + " }";
  }
  // The name of s's domain (domains_): its first statement's.
  const std::string& name_of(const PolyStmt& s) const { return m_.stmts[(size_t)rep_[(size_t)s.id]].name; }

  // The values `expr` takes over statement `s`'s domain: a set "[params] -> { [v] }"
  // (computed once per domain and expression: several bounds ask about the same one).
  isl::set values(const PolyStmt& s, const std::string& expr) {
    auto key = std::make_pair(rep_[(size_t)s.id], expr);
    auto it = values_.find(key);
    if (it != values_.end()) return it->second;
    std::string dims = m_.dims_of(s);
    isl::map f(ctx_.get(), text(name_of(s) + "[" + dims + "] -> [v] : v = " + expr));
    isl::set v = f.intersect_domain(domains_[(size_t)s.id]).range();
    values_.emplace(key, v);
    return v;
  }
  std::map<std::pair<int, std::string>, isl::set> values_;
  // The parameter values for which some value in `vals` meets `cond` (a condition on `v`).
  // The condition's set is parsed once per nest: the same few recur for every subscript.
  isl::set params_where(const isl::set& vals, const std::string& cond) {
    auto it = conds_.find(cond);
    if (it == conds_.end())
      it = conds_.emplace(cond, isl::set(ctx_.get(), text("[v] : " + cond))).first;
    return vals.intersect(it->second).params();
  }
  std::map<std::string, isl::set> conds_;

  // A fact's violation set as it is gathered over the statements: pieces found without
  // isl (box_conditions.h), and the union of those isl had to compute.
  struct Gathered {
    Pieces pieces;
    std::optional<isl::set> slow;
  };
  // The parameter values where some value of `expr` over statement s's domain meets one
  // of `bounds`: by eliminating the loops from its linear domain where that is exact
  // (box_conditions.h), else with isl (memoized per domain, expression and `tag`, which
  // names the bounds).
  void gather(Gathered& g, const PolyStmt& s, const std::string& expr, const std::string& tag,
              const std::vector<BoxConditions::Bound>& bounds) {
    auto key = std::make_tuple(rep_[(size_t)s.id], expr, tag);
    if (shortcuts_) {
      auto found = fast_memo_.find(key);
      if (found != fast_memo_.end()) {
        g.pieces.insert(g.pieces.end(), found->second.begin(), found->second.end());
        return;
      }
      Pieces p;
      if (const BoxConditions::Domain* d = boxes_.domain_of(s))
        if (boxes_.where(*d, expr, bounds, p)) {
          without_isl_++;
          g.pieces.insert(g.pieces.end(), p.begin(), p.end());
          fast_memo_.emplace(key, std::move(p));
          return;
        }
    }
    by_isl_++;
    auto it = memo_.find(key);
    if (it == memo_.end()) {
      std::string cond;
      for (auto& b : bounds) {
        static const char* ops[] = {"<", "<=", ">", ">=", "="};
        cond += (cond.empty() ? "" : " or ") + std::string("v ") + ops[(int)b.cmp] + " " + b.rhs;
      }
      it = memo_.emplace(key, params_where(values(s, expr), cond)).first;
    }
    g.slow = g.slow ? g.slow->unite(it->second) : it->second;
  }
  std::map<std::tuple<int, std::string, std::string>, isl::set> memo_;
  std::map<std::tuple<int, std::string, std::string>, Pieces> fast_memo_;
  // The ParamSet of what was gathered.
  ParamSet finish(Gathered& g) {
    ParamSet out;
    BoxConditions::simplify(g.pieces);  // statements of one body repeat pieces
    if (!g.slow && boxes_.to_param_set(g.pieces, names_, out)) return out;
    isl::set all = g.slow ? *g.slow : isl::set::empty(context_.get_space());
    if (!g.pieces.empty()) all = all.unite(isl::set(ctx_.get(), text(": " + BoxConditions::isl_text(g.pieces))));
    return ParamSet::from_isl(all.intersect(context_).release(), names_);
  }

  void bounds_and_overflow(NestConditions& out) {
    using B = BoxConditions::Bound;
    using Cmp = BoxConditions::Cmp;
    std::map<Fact, Gathered> acc;
    for (auto& s : m_.stmts) {
      for (auto& a : s.accesses) {
        if (a.var < 0) continue;
        for (size_t k = 0; k < a.index.size(); k++) {
          const PolyIndex& ix = a.index[k];
          // An affine index; or `x % d`, which lies in [0, d) where d > 0 whatever x is: in
          // bounds where also d <= the extent, and never always negative (no Negative fact).
          const bool mod = !ix.expr && ix.mod_divisor;
          if ((!ix.expr && !mod) || ix.origin < 0) continue;
          const std::string& x = mod ? *ix.mod_divisor : *ix.expr;
          const std::string n = extent_name(a.var, (int)k);
          const std::string tag = (mod ? "mod " : "") + n;
          if (!n.empty())
            gather(acc[Fact{FactKind::InBounds, ix.origin, ix.pos, -1}], s, x, "oob " + tag,
                   mod ? std::vector<B>{{Cmp::Le, "0"}, {Cmp::Gt, n}} : std::vector<B>{{Cmp::Lt, "-" + n}, {Cmp::Ge, n}});
          gather(acc[Fact{FactKind::NonNeg, ix.origin, ix.pos, -1}], s, x, "neg " + tag,
                 {{mod ? Cmp::Le : Cmp::Lt, "0"}});
          if (!mod) gather(acc[Fact{FactKind::Negative, ix.origin, ix.pos, -1}], s, x, "nonneg", {{Cmp::Ge, "0"}});
        }
      }
      for (auto& op : s.int_ops)
        gather(acc[Fact{FactKind::NoOverflow, op.origin, 0, -1}], s, op.expr, "int64",
               {{Cmp::Lt, kInt64Min}, {Cmp::Gt, kInt64Max}});
      for (auto& r : s.ranges) {
        FactKind k = r.kind == PolyRange::Kind::NoOverflow ? FactKind::NoOverflow
                   : r.kind == PolyRange::Kind::NonZero  ? FactKind::NonZeroDivisor
                                                         : FactKind::ExactOperand;
        Gathered& g = acc[Fact{k, r.origin, r.pos, -1}];
        for (auto& [x, b] : r.within) {
          const std::string bs = std::to_string(b);
          gather(g, s, x, "|v|<=" + bs, {{Cmp::Lt, "-" + bs}, {Cmp::Gt, bs}});
        }
        for (auto& x : r.nonzero) gather(g, s, x, "v!=0", {{Cmp::Eq, "0"}});
      }
    }
    for (auto& [f, g] : acc) {
      Condition c;
      c.fact = f;
      c.violated = finish(g);
      out.conds.push_back(std::move(c));
    }
  }

  std::string extent_name(int var, int dim) const {
    for (auto& p : m_.params)
      if (p.kind == PolyParam::Kind::Extent && p.var == var && p.dim == dim) return p.name;
    return "";
  }

  // Constraints saying that access `a` of `s` and access `b` of `t` (primed) touch the
  // same element: their subscripts are equal as integers. That is what touching the same
  // element means where every subscript is non-negative and within its extent, and a loop
  // runs in parallel only where the NonNeg and InBounds facts of its subscripts hold too
  // (plan_parallel): elsewhere (Python's wrap-around of negative indices, an index past the
  // end) the loop's NoCarried set does not decide anything, and is left larger than it need
  // be there rather than carry the extents into every conflict.
  std::string same_element(const PolyAccess& a, const PolyAccess& b) {
    std::vector<std::string> cs;
    size_t n = std::min(a.index.size(), b.index.size());
    for (size_t k = 0; k < n; k++) {
      const auto& x = a.index[k].expr;
      const auto& y = b.index[k].expr;
      if (!x || !y) continue;
      cs.push_back("(" + *x + ") = (" + primed(*y) + ")");
    }
    std::string out;
    for (size_t k = 0; k < cs.size(); k++) out += (k ? " and " : "") + cs[k];
    return out;
  }

  static std::string describe(const PolyAccess& a) { return a.text + " (line " + std::to_string(a.line) + ")"; }

  // Access a (the ai-th of statement s) and access b (the bi-th of t) touching the same
  // element: the pairs of iterations of s and t (each in its domain) where they do. The
  // same for every loop around both (the loop order is added by the caller), and the
  // relation of (b, a) is this one reversed: each pair's is parsed once per nest.
  // (Keyed by the statements' domains and the accesses' arrays and subscripts: `p[i, j - 1]`
  // read by two statements of one loop body relates the same pairs of iterations.)
  const isl::map& same_iterations(const PolyStmt& s, size_t ai, const PolyStmt& t, size_t bi) {
    auto key = pair_key(s, ai, t, bi);
    if (auto it = pairs_.find(key); it != pairs_.end()) return it->second;
    if (auto it = pairs_.find(pair_key(t, bi, s, ai)); it != pairs_.end())
      return pairs_.emplace(key, it->second.reverse()).first->second;
    const PolyAccess &a = s.accesses[ai], &b = t.accesses[bi];
    if (same_shape(a, b))  // s's iterations to the elements, and back to t's iterations
      return pairs_.emplace(key, access_map(s, ai).apply_range(access_map(t, bi).reverse())).first->second;
    std::string rel = name_of(s) + "[" + m_.dims_of(s) + "] -> " + name_of(t) + "[" + primed(m_.dims_of(t)) + "]";
    std::string same = same_element(a, b);
    if (!same.empty()) rel += " : " + same;
    isl::map r = isl::map(ctx_.get(), text(rel))
                     .intersect_domain(domains_[(size_t)s.id])
                     .intersect_range(domains_[(size_t)t.id]);
    return pairs_.emplace(key, r).first->second;
  }
  // Whether a and b index the same number of dimensions, each known (affine) in both or in
  // neither: then same_element's relation is the composition of their access maps (which
  // costs a third of parsing the pair's own relation).
  static bool same_shape(const PolyAccess& a, const PolyAccess& b) {
    if (a.index.size() != b.index.size()) return false;
    for (size_t k = 0; k < a.index.size(); k++)
      if (!a.index[k].expr != !b.index[k].expr) return false;
    return true;
  }
  // Access a (the ai-th of s) as a map from s's domain to the elements it touches,
  // "S[i..] -> A[e0, ..] : e0 = expr0 and ..." (the subscripts' values, as in same_element),
  // parsed once per domain and subscripts.
  const isl::map& access_map(const PolyStmt& s, size_t ai) {
    const PolyAccess& a = s.accesses[ai];
    auto key = std::make_pair(rep_[(size_t)s.id], signature(a));
    if (auto it = access_maps_.find(key); it != access_maps_.end()) return it->second;
    std::string elems, cs;
    for (size_t k = 0; k < a.index.size(); k++) {
      std::string e = "e" + std::to_string(k);
      elems += (k ? ", " : "") + e;
      if (!a.index[k].expr) continue;
      cs += (cs.empty() ? "" : " and ") + e + " = (" + *a.index[k].expr + ")";
    }
    std::string rel = name_of(s) + "[" + m_.dims_of(s) + "] -> A" + std::to_string(a.var) + "[" + elems + "]";
    if (!cs.empty()) rel += " : " + cs;
    isl::map m = isl::map(ctx_.get(), text(rel)).intersect_domain(domains_[(size_t)s.id]);
    return access_maps_.emplace(key, m).first->second;
  }
  std::map<std::pair<int, std::string>, isl::map> access_maps_;
  using PairKey = std::tuple<int, std::string, int, std::string>;
  PairKey pair_key(const PolyStmt& s, size_t ai, const PolyStmt& t, size_t bi) const {
    return {rep_[(size_t)s.id], signature(s.accesses[ai]), rep_[(size_t)t.id], signature(t.accesses[bi])};
  }
  static std::string signature(const PolyAccess& a) {
    std::string sig = std::to_string(a.var) + (a.write ? "W" : "R");
    for (auto& ix : a.index) sig += "|" + (ix.expr ? *ix.expr : std::string("?"));
    return sig;
  }
  std::map<PairKey, isl::map> pairs_;

  void dependences(NestConditions& out) {
    for (auto& L : m_.loops) {
      if (L.id < 0 || !L.is_for) continue;
      out.conds.push_back(carried(L, {}));
      // The arrays only updated in L (every access an update, PolyAccess::update): with
      // their conflicts left out, the condition under which a copy of them per thread makes
      // L's iterations independent.
      std::map<int, bool> only_updates;
      for (int sid : L.stmts)
        for (auto& a : m_.stmts[(size_t)sid].accesses)
          if (a.var >= 0) {
            auto [it, fresh] = only_updates.emplace(a.var, a.update);
            if (!fresh) it->second = it->second && a.update;
          }
      std::set<int> updated;
      for (auto& [v, u] : only_updates)
        if (u) updated.insert(v);
      if (!updated.empty() && !out.conds.back().conflicts.empty()) out.conds.push_back(carried(L, updated));
    }
  }

  // Loop L's NoCarried condition; with `updated` non-empty, its NoCarriedBesideUpdates one,
  // where the accesses to those arrays conflict with nothing.
  Condition carried(const PolyLoop& L, const std::set<int>& updated) {
    Condition c;
    c.fact = Fact{updated.empty() ? FactKind::NoCarried : FactKind::NoCarriedBesideUpdates, -1, 0, L.id};
    c.updated.assign(updated.begin(), updated.end());
    std::set<int> arrays, written;
    for (int sid : L.stmts) {
      for (auto& a : m_.stmts[(size_t)sid].accesses) {
        if (updated.count(a.var)) continue;
        arrays.insert(a.var);
        if (a.write) written.insert(a.var);
      }
      for (auto& ci : m_.stmts[(size_t)sid].call_items) c.call_items.push_back(ci);
    }
    c.arrays.assign(arrays.begin(), arrays.end());
    c.written.assign(written.begin(), written.end());
    isl::set violated = isl::set::empty(context_.get_space());
    if (arrays.count(-1) && !written.empty()) {
      Conflict k;
      k.first = "an element of a computed object";
      k.second = "an element the loop writes";
      k.when = "{ : }";
      c.conflicts.push_back(k);
      violated = context_;
    }
    // Pairs already asked about for this loop (the same domains, arrays and subscripts
    // give the same answer), and whether the conflicts found so far cover every
    // parameter value where the loop could carry one (`cover`): later ones then add
    // nothing, and the report names the first conflict only.
    std::set<PairKey> asked;
    bool always = !c.conflicts.empty();  // an unknown object's element: always carried
    std::optional<isl::set> cover;
    bool plain = true;
    for (int sid : L.stmts) {
      if (always) break;
      const PolyStmt& s = m_.stmts[(size_t)sid];
      // L's position among the loops around s (and t: both are inside L, so the loops
      // around L are the same for both, in the same order).
      const int at = (int)(std::find(s.loops.begin(), s.loops.end(), L.id) - s.loops.begin());
      for (int tid : L.stmts) {
        if (always) break;
        const PolyStmt& t = m_.stmts[(size_t)tid];
        for (size_t ai = 0; ai < s.accesses.size() && !always; ai++) {
          const PolyAccess& a = s.accesses[ai];
          for (size_t bi = 0; bi < t.accesses.size() && !always; bi++) {
            const PolyAccess& b = t.accesses[bi];
            if (a.var < 0 || a.var != b.var || (!a.write && !b.write) || updated.count(a.var)) continue;
            if ((a.identity && b.index.size() > a.index.size()) || (b.identity && a.index.size() > b.index.size()))
              continue;  // (an object's attribute stored: the object at its position stays)
            if (!asked.insert(pair_key(s, ai, t, bi)).second) continue;
            if (shortcuts_ && ruled_out(s, a, t, b, at)) {
              without_isl_++;
              continue;
            }
            by_isl_++;
            // The iterations of s and t touching the same element, in the same
            // iteration of the loops enclosing L and an earlier iteration of L.
            isl_map* r = same_iterations(s, ai, t, bi).copy();
            for (int p = 0; p < at; p++) r = isl_map_equate(r, isl_dim_in, p, isl_dim_out, p);
            r = isl_map_order_lt(r, isl_dim_in, at, isl_dim_out, at);
            isl::set when = isl::manage(isl_map_params(r)).intersect(context_);
            if (when.is_empty()) continue;
            Conflict k;
            k.first = describe(a);
            k.second = describe(b);
            k.first_writes = a.write;
            k.second_writes = b.write;
            if (char* str = isl_set_to_str(when.get())) {
              k.when = str;
              free(str);
            }
            c.conflicts.push_back(std::move(k));
            violated = violated.unite(when);
            if (c.conflicts.size() == 1) cover = carry_cover(L, written);
            // (Only while no conflict's set has existential variables: isl's subset test
            // of such a union can cost seconds.)
            plain = plain && without_divs(when);
            if (cover) always = plain && cover->is_subset(violated);
            // (Without a cover, asked of the first conflict only: with bounds from the
            // call, a later one rarely holds for all values, and asking costs as much as
            // finding it.)
            else always = c.conflicts.size() == 1 && context_.is_subset(when);
          }
        }
      }
    }
    c.violated = c.conflicts.empty() ? ParamSet() : ParamSet::from_isl(violated.copy(), names_);
    return c;
  }

  static bool without_divs(const isl::set& s) {
    bool none = true;
    s.foreach_basic_set([&](const isl::basic_set& b) { none = none && isl_basic_set_dim(b.get(), isl_dim_div) == 0; });
    return none;
  }

  // The parameter values where loop L could carry a dependence at all: two of its
  // iterations (under one iteration of the loops around it) in each of which a statement
  // touching one of the `written` arrays runs. Every conflict's set lies inside; once their
  // union covers it, it is the exact answer. One piece per ordered pair of those
  // statements' domains (an iteration of one in an earlier iteration of L than one of the
  // other), where the eliminations are exact; else none. Where no statement is guarded and
  // every domain is a product of intervals, they share L's interval and each runs in all
  // of its iterations or in none: the pairs of a domain with itself give the same union.
  std::optional<isl::set> carry_cover(const PolyLoop& L, const std::set<int>& written) {
    if (!shortcuts_) return std::nullopt;
    std::vector<const PolyStmt*> reps;  // one statement per domain
    for (int sid : L.stmts) {
      const PolyStmt& s = m_.stmts[(size_t)sid];
      bool touches = false;
      for (auto& a : s.accesses) touches = touches || written.count(a.var);
      if (touches && std::none_of(reps.begin(), reps.end(), [&](const PolyStmt* r) { return rep_[(size_t)r->id] == rep_[(size_t)s.id]; }))
        reps.push_back(&s);
    }
    bool products = true;
    for (const PolyStmt* s : reps) {
      const BoxConditions::Domain* d = boxes_.domain_of(*s);
      if (!d) return std::nullopt;
      products = products && s->guards.empty() && BoxConditions::is_product(*d);
    }
    if (!products && reps.size() > 12) return std::nullopt;
    Pieces pieces;
    for (const PolyStmt* s : reps)
      for (const PolyStmt* t : reps) {
        if (products && s != t) continue;
        const size_t at = (size_t)(std::find(s->loops.begin(), s->loops.end(), L.id) - s->loops.begin());
        if (!boxes_.ordered(*boxes_.domain_of(*s), *boxes_.domain_of(*t), at, pieces)) return std::nullopt;
      }
    if (pieces.empty()) return std::nullopt;
    BoxConditions::simplify(pieces);
    return isl::set(ctx_.get(), text(": " + BoxConditions::isl_text(pieces))).intersect(context_);
  }

  // Whether one subscript position alone shows that access a of s and access b of t touch
  // no common element in two iterations of the loop at position `at` (the loops around it
  // at one iteration): the two subscripts differ by c * (i - i') + d, no other dimension
  // or parameter left, and c * (i - i') = -d has no solution with i < i'. Then isl finds
  // the pair's relation empty too (its other constraints only remove pairs); elsewhere it
  // is asked.
  bool ruled_out(const PolyStmt& s, const PolyAccess& a, const PolyStmt& t, const PolyAccess& b, int at) {
    const std::string& dim = m_.loops[(size_t)s.loops[(size_t)at]].dim;
    const size_t n = std::min(a.index.size(), b.index.size());
    for (size_t k = 0; k < n; k++) {
      if (!a.index[k].expr || !b.index[k].expr) continue;
      const LinearForm* x = boxes_.linear(*a.index[k].expr);
      const LinearForm* y = boxes_.linear(*b.index[k].expr);
      if (!x || !y) continue;
      // x - y', y's dimensions primed but those of the loops around the one at `at`.
      LinearForm d = *x;
      __int128 primed_coef = 0;  // of dim' in x - y'
      bool other = false;
      for (auto& [name, c] : y->coef) {
        bool shared = boxes_.is_param(name);
        for (int p = 0; p < at && !shared; p++) shared = m_.loops[(size_t)t.loops[(size_t)p]].dim == name;
        if (shared) {
          LinearForm one;
          one.coef[name] = c;
          if (!d.add(one, -1)) other = true;
        } else if (name == dim) {
          primed_coef -= c;
        } else {
          other = true;  // an inner loop's dimension of t
        }
      }
      d.constant -= y->constant;
      const __int128 coef = d.of(dim);
      other = other || d.coef.size() != (coef ? 1u : 0u);
      if (other || primed_coef != -coef) continue;
      if (coef == 0) {
        if (d.constant != 0) return true;  // the subscripts always differ
        continue;
      }
      // coef * (i - i') = -d.constant with i - i' <= -1.
      if ((-d.constant) % coef != 0 || (-d.constant) / coef >= 0) return true;
    }
    return false;
  }

  // Where a run of loop L may have min_parallel_trip() iterations or more: two values of its
  // variable that far apart under the same values of the loops around it. (A step other
  // than 1 only makes this set larger than it need be: the fact then holds less often.)
  // Only for innermost loops: those are the ones plan_parallel asks about.
  void trip_counts(NestConditions& out) {
    std::set<int> outer;
    for (auto& L : m_.loops)
      if (L.id >= 0 && L.parent >= 0) outer.insert(L.parent);
    for (auto& L : m_.loops) {
      if (L.id < 0 || !L.is_for || outer.count(L.id)) continue;
      Condition c;
      c.fact = Fact{FactKind::FewIterations, -1, 0, L.id};
      std::vector<int> chain;  // L and the loops around it, outermost first
      for (int l = L.id; l >= 0; l = m_.loops[(size_t)l].parent) chain.insert(chain.begin(), l);
      Pieces trips;
      if (const BoxConditions::Domain* d = shortcuts_ ? boxes_.domain_of(chain) : nullptr)
        if (boxes_.at_least(*d, min_parallel_trip(), trips) && boxes_.to_param_set(trips, names_, c.violated)) {
          without_isl_++;
          out.conds.push_back(std::move(c));
          continue;
        }
      std::string dims, dims_, cs;
      auto add = [&](const std::string& x) { cs += (cs.empty() ? "" : " and ") + x; };
      for (int l : chain) {
        const PolyLoop& P = m_.loops[(size_t)l];
        dims += (dims.empty() ? "" : ", ") + P.dim;
        dims_ += (dims_.empty() ? "" : ", ") + primed(P.dim);
        if (!P.constraints.empty()) {
          add(P.constraints);
          add(primed(P.constraints));
        }
        add(l == L.id ? primed(P.dim) + " >= " + P.dim + " + " + std::to_string(min_parallel_trip() - 1)
                      : primed(P.dim) + " = " + P.dim);
      }
      by_isl_++;
      isl::set big = isl::set(ctx_.get(), text("[" + dims + ", " + dims_ + "] : " + cs)).params().intersect(context_);
      c.violated = ParamSet::from_isl(big.copy(), names_);
      out.conds.push_back(std::move(c));
    }
  }

  // Where a run of loop L may have no iteration: a point of the loops around it (as the
  // model bounds them: at least every point the nest reaches) for which L's own bounds
  // admit no value. Only for affine for loops inside another loop: their bounds are exact.
  void nonempty_loops(NestConditions& out) {
    for (auto& L : m_.loops) {
      if (L.id < 0 || !L.is_for || !L.affine || L.parent < 0 || L.constraints.empty()) continue;
      std::vector<int> chain;  // the loops around L, outermost first
      for (int l = L.parent; l >= 0; l = m_.loops[(size_t)l].parent) chain.insert(chain.begin(), l);
      std::string dims, cs;
      for (int l : chain) {
        const PolyLoop& P = m_.loops[(size_t)l];
        dims += (dims.empty() ? "" : ", ") + P.dim;
        if (!P.constraints.empty()) cs += (cs.empty() ? "" : " and ") + P.constraints;
      }
      const std::string outer = "[" + dims + "]" + (cs.empty() ? "" : " : " + cs);
      const std::string with_l = "[" + dims + (dims.empty() ? "" : ", ") + L.dim + "] : " + (cs.empty() ? "" : cs + " and ") + L.constraints;
      by_isl_++;
      isl::set points(ctx_.get(), text(outer));
      isl::set runs(ctx_.get(), text(with_l));
      isl::set nonempty = isl::manage(isl_set_project_out(runs.release(), isl_dim_set, (unsigned)chain.size(), 1));
      Condition c;
      c.fact = Fact{FactKind::NonEmpty, -1, 0, L.id};
      c.violated = ParamSet::from_isl(points.subtract(nonempty).params().intersect(context_).release(), names_);
      out.conds.push_back(std::move(c));
    }
  }
};

}  // namespace

NestConditions derive_conditions(const PolyModel& m, const ir::Nest& nest, bool shortcuts) {
  auto t0 = std::chrono::steady_clock::now();
  NestConditions c = Deriver(m, nest, shortcuts).run();
  c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return c;
}

std::string to_string(const NestConditions& c, const ir::Nest& nest) {
  std::ostringstream o;
  if (!c.ok) o << "failed: " << c.error << "\n";
  o << "analysis " << (c.seconds * 1e3) << " ms (" << c.without_isl << " answers from the bounds alone, " << c.by_isl
    << " by isl)\n";
  auto kind = [](FactKind k) {
    switch (k) {
      case FactKind::InBounds: return "in-bounds";
      case FactKind::NonNeg: return "non-negative";
      case FactKind::Negative: return "negative";
      case FactKind::NoOverflow: return "no-overflow";
      case FactKind::NonZeroDivisor: return "nonzero-divisor";
      case FactKind::ExactOperand: return "exact-operand";
      case FactKind::NoCarried: return "no-carried-dependence";
      case FactKind::NoCarriedBesideUpdates: return "no-carried-dependence-beside-updates";
      case FactKind::FewIterations: return "few-iterations";
      case FactKind::NonEmpty: return "non-empty";
    }
    return "?";
  };
  for (auto& k : c.conds) {
    o << kind(k.fact.kind);
    if (k.fact.kind == FactKind::NoCarried || k.fact.kind == FactKind::NoCarriedBesideUpdates ||
        k.fact.kind == FactKind::FewIterations || k.fact.kind == FactKind::NonEmpty)
      o << " L" << k.fact.loop;
    else
      o << " @" << k.fact.origin << "." << k.fact.pos;
    for (int v : k.updated) o << " (" << nest.vars[(size_t)v].name << " summed apart)";
    o << " unless " << k.violated.str() << "\n";
    for (auto& x : k.conflicts) o << "    " << x.first << " vs " << x.second << " when " << x.when << "\n";
  }
  for (auto& mc : c.made_classes) {
    o << "made lists";
    for (int v : mc.vars) o << " " << nest.vars[(size_t)v].name;
    if (!mc.known) {
      o << ": lengths unknown (" << mc.why << ")\n";
      continue;
    }
    o << ": one length, of";
    for (auto& s : mc.sources) {
      using SK = MadeLengthSource::Kind;
      if (s.kind == SK::Entry) o << " [" << nest.vars[(size_t)s.var].name << " at entry]";
      if (s.kind == SK::Class) o << " [class " << s.var << "]";
      if (s.kind != SK::Count) continue;
      o << " [" << s.constant;
      for (auto& t : s.terms)
        o << " + " << t.coef << "*" << (t.len ? "len(" : "") << nest.vars[(size_t)t.var].name << (t.len ? ")" : "");
      o << "]";
    }
    o << "\n";
  }
  return o.str();
}

}  // namespace stagepy::analysis
