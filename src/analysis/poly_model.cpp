// See poly_model.h.
#include "analysis/poly_model.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "analysis/append_targets.h"
#include "ir/mutate.h"

namespace stagepy::analysis {
namespace {

using ir::Expr;
using ir::ExprNode;
using ir::Stmt;
using ir::StmtNode;
using K = ExprNode::Kind;

// A number in isl's syntax: `-2`, never `(-2)` (isl refuses a parenthesised factor in
// `(-2) * k`, but reads `-2 * k`, `k * -2` and `n + -2`).
std::string num(int64_t v) { return std::to_string(v); }

std::string sanitize(const std::string& s) {
  std::string o;
  for (char c : s) o += (isalnum((unsigned char)c) || c == '_') ? c : '_';
  return o;
}

// A row variable an access goes through, and how many of its indices the row stands for.
struct RowAlias {
  int var = -1;
  size_t depth = 0;
};

class Builder {
 public:
  Builder(const ir::Nest& n, const std::set<int>& ragged) : n_(n), views_(ir::subscript_assigned(n.root)), ragged_(ragged) {
    find_rows(n.root);
    // A list the nest makes is memory of its own like a kept array, but written and read
    // through its variable: its accesses count. A variable may hold lists of different
    // lengths in one run (`len(prev)` of one, `prev[k]` of another, where the loop reassigns
    // it), so `len(prev)` is affine only where all the lists its class holds may have one
    // length (made_lengths.h), an assumption the dispatcher checks at each call; and the
    // extent its accesses are checked against gets that length as its value, or none.
    made_ = ir::made_list_vars(n.root, n.vars);
    m_.made_classes = made_list_lengths(n, made_);
    for (const MadeListClass& c : m_.made_classes)
      if (c.known) one_length_.insert(c.vars.begin(), c.vars.end());
    for (int v : ir::computed_assigned(n.root))
      if (!views_.count(v) && !made_.count(v)) kept_.insert(v);
    find_rows_of_one(n.root);
  }

  PolyModel run() {
    m_.loops.resize(n_.loops.size());
    for (size_t l = 0; l < n_.loops.size(); l++) {
      m_.loops[l].id = (int)l;
      m_.loops[l].is_for = n_.loops[l].is_for;
      m_.loops[l].dim = (n_.loops[l].is_for ? "i" : "w") + std::to_string(l);
      m_.loops[l].line = n_.loops[l].line;
    }
    block(n_.root);
    for (auto& [var, rank] : rank_) m_.assumptions.array_rank.push_back({var, rank});
    for (auto& s : m_.stmts) {  // an operation can be seen twice (as a whole and as a part)
      std::set<int> seen;
      std::vector<PolyIntOp> ops;
      for (auto& op : s.int_ops)
        if (seen.insert(op.origin).second) ops.push_back(op);
      s.int_ops = std::move(ops);
      std::set<std::tuple<int, int, int>> seen_ranges;
      std::vector<PolyRange> ranges;
      for (auto& r : s.ranges)
        if (seen_ranges.insert({(int)r.kind, r.origin, r.pos}).second) ranges.push_back(std::move(r));
      s.ranges = std::move(ranges);
    }
    return std::move(m_);
  }

 private:
  const ir::Nest& n_;
  // Variables that may hold a row of another container (`row = A[i]`): their elements and
  // extents are not a variable's own (accesses through them have an unknown base)...
  const std::set<int> views_;
  // ... except inside the loop where such a variable is bound to one row for the whole
  // iteration: `row` is `A[e]` there (row[j] is A[e][j], len(row) is A's next extent).
  struct Row {
    Expr value;  // A[e], as assigned
    int loop;    // the loop whose iterations it is bound in
  };
  std::map<int, std::vector<Row>> rows_;  // a variable's rows, one per loop that binds it
  // Variables given computed values: where those are arrays (`d = X[i] - X[j]`), the memory
  // is the kernel's own, private to the statement that computed it; reading its elements
  // touches no array of the nest (type inference refuses writes into it).
  std::set<int> kept_;
  std::set<int> made_;  // variables that may hold lists the nest makes (ir::made_list_vars)
  // Those of them whose lists may have one length for the run (made_lengths.h): `len(v)` is
  // their extent, assumed to have that length (PolyAssumptions::made_lengths).
  std::set<int> one_length_;
  PolyModel m_;
  std::vector<int> loops_;                  // enclosing loop ids
  std::vector<std::string> guards_;
  std::map<int, int> iterator_of_;          // var -> innermost enclosing For loop iterating it (if affine-usable)
  // var -> (affine text, loop): `for d in (-1, 0, 1)`, desugared into a loop over a hidden
  // position k whose body opens with `d = (-1, 0, 1)[k]`: d is -1 + k while that loop runs
  // (a tuple of ints in arithmetic progression, and d assigned nowhere else in the loop).
  std::map<int, std::pair<std::string, int>> affine_of_;
  std::vector<const StmtNode*> loop_bodies_;  // parallel to loops_
  std::map<int, int> rank_;                 // var -> number of subscripts seen
  std::set<int> builtin_vars_, int_params_;
  const std::set<int>& ragged_;  // variables whose rows have no one length
  PolyStmt* cur_ = nullptr;

  // ------------------------------------------------------------ parameters
  std::string int_param(int var) {
    std::string name = "p_" + sanitize(n_.vars[var].name);
    for (auto& p : m_.params)
      if (p.kind == PolyParam::Kind::Int && p.var == var) return p.name;
    PolyParam p;
    p.kind = PolyParam::Kind::Int;
    p.var = var;
    p.name = name + "_" + std::to_string(var);
    m_.params.push_back(p);
    if (int_params_.insert(var).second) m_.assumptions.int_params.push_back(var);
    return p.name;
  }
  std::string extent(int var, int dim) {
    for (auto& p : m_.params)
      if (p.kind == PolyParam::Kind::Extent && p.var == var && p.dim == dim) return p.name;
    PolyParam p;
    p.kind = PolyParam::Kind::Extent;
    p.var = var;
    p.dim = dim;
    p.name = "N_" + sanitize(n_.vars[var].name) + "_" + std::to_string(var) + "_" + std::to_string(dim);
    m_.params.push_back(p);
    return p.name;
  }

  // A variable the nest never assigns (its value is fixed while the nest runs); attribute
  // variables (`self.n`, `np.pi`) are read once at entry.
  bool invariant(int var) const { return !n_.vars[(size_t)var].assigned; }

  // The variable an expression names: `A`, or `obj.A` through its attribute variable.
  int named_var(const Expr& e) const {
    if (e->kind == K::Load) return views_.count(e->var) ? -1 : e->var;
    if (e->kind == K::Attr && e->pseudo >= 0) return e->pseudo;
    return -1;
  }

  // ------------------------------------------------------------ affine expressions
  static std::optional<int64_t> const_int(const Expr& e) {
    if (e->kind == K::Const && e->value.kind == ir::ConstValue::Kind::Int) return e->value.i;
    if (e->kind == K::Unary && e->unop == ir::UnOp::Neg) {
      auto v = const_int(e->args[0]);
      if (v && *v != INT64_MIN) return -*v;
    }
    return std::nullopt;
  }

  // Extent `k` of what `e` names (A.shape[k], len(A)): an array variable's own, or for a
  // bound row, or a row written out (`len(A[i])`, a helper's `a.shape[0]` inlined with
  // `a` = `A[i]`), its container's extent after the row's indices (arrays and the lists
  // stagepy reads are rectangular). Not after a slice (`len(A[1:])`).
  std::optional<std::string> extent_of(const Expr& e, int k) {
    int v = -1;
    std::vector<std::pair<Expr, std::pair<int, int>>> idx;
    if (!chain(e, v, idx) || v < 0 || kept_.count(v) || has_slice(idx)) return std::nullopt;
    if (made_.count(v)) {
      if (!one_length_.count(v) || !idx.empty() || k != 0) return std::nullopt;
      if (std::find(m_.assumptions.made_lengths.begin(), m_.assumptions.made_lengths.end(), v) ==
          m_.assumptions.made_lengths.end())
        m_.assumptions.made_lengths.push_back(v);
      return extent(v, 0);
    }
    int d = (int)idx.size() + k;
    note_rank_at_least(v, d + 1);
    if (d >= 1 && ragged_.count(v)) return std::nullopt;  // a row's own length, not one extent
    return extent(v, d);
  }

  std::optional<std::string> aff(const Expr& e) {
    switch (e->kind) {
      case K::Const:
        if (e->value.kind == ir::ConstValue::Kind::Int) return num(e->value.i);
        return std::nullopt;
      case K::Load: {
        auto it = iterator_of_.find(e->var);
        if (it != iterator_of_.end()) return it->second >= 0 ? std::optional<std::string>(m_.loops[(size_t)it->second].dim) : std::nullopt;
        if (auto af = affine_of_.find(e->var); af != affine_of_.end()) return af->second.first;
        if (invariant(e->var)) return int_param(e->var);
        return std::nullopt;
      }
      case K::Attr:
        if (e->pseudo >= 0 && invariant(e->pseudo)) return int_param(e->pseudo);
        return std::nullopt;
      case K::Subscript: {
        // A.shape[k]
        const Expr& b = e->args[0];
        if (b->kind == K::Attr && b->name == "shape") {
          auto k = const_int(e->args[1]);
          if (k && *k >= 0 && *k < 32) return extent_of(b->args[0], (int)*k);
        }
        return std::nullopt;
      }
      case K::Call: {
        // len(A)
        if (e->args.size() == 2 && e->kwnames.empty() && e->args[0]->kind == K::Load &&
            n_.vars[(size_t)e->args[0]->var].name == "len") {
          // Of a list the nest appends to: it grows while the nest runs.
          const int lv = appended_list_var(e->args[1]);
          if (lv >= 0 && n_.vars[(size_t)lv].appended) return std::nullopt;
          auto r = extent_of(e->args[1], 0);
          if (!r) return std::nullopt;
          if (builtin_vars_.insert(e->args[0]->var).second) m_.assumptions.builtins.push_back({e->args[0]->var, "len"});
          return r;
        }
        if (e->args.size() == 3 && e->kwnames.empty() && e->args[0]->kind == K::Load) {
          const std::string& f = n_.vars[(size_t)e->args[0]->var].name;
          if (f == "min" || f == "max") {
            // Guarded like len: the name must be the builtin. Only two arguments.
            auto a = aff(e->args[1]), b = aff(e->args[2]);
            if (!a || !b) return std::nullopt;
            if (builtin_vars_.insert(e->args[0]->var).second) m_.assumptions.builtins.push_back({e->args[0]->var, f});
            return f + "(" + *a + ", " + *b + ")";
          }
        }
        return std::nullopt;
      }
      case K::Binary: {
        auto a = aff(e->args[0]);
        auto b = aff(e->args[1]);
        if (!a || !b) return std::nullopt;
        std::optional<std::string> r;
        switch (e->binop) {
          case ir::BinOp::Add: r = "(" + *a + " + " + *b + ")"; break;
          case ir::BinOp::Sub: r = "(" + *a + " - " + *b + ")"; break;
          case ir::BinOp::Mul: {
            auto ca = const_int(e->args[0]), cb = const_int(e->args[1]);
            if (cb) r = "(" + num(*cb) + " * " + *a + ")";
            else if (ca) r = "(" + num(*ca) + " * " + *b + ")";
            break;
          }
          case ir::BinOp::FloorDiv: {
            auto c = const_int(e->args[1]);
            if (c && *c > 0) r = "floor((" + *a + ")/" + std::to_string(*c) + ")";
            break;
          }
          case ir::BinOp::Mod: {
            auto c = const_int(e->args[1]);
            if (c && *c > 0) r = "((" + *a + ") mod " + std::to_string(*c) + ")";
            break;
          }
          default: break;
        }
        if (r && cur_ && e->origin >= 0) cur_->int_ops.push_back({e->origin, *r});
        return r;
      }
      case K::Unary: {
        auto a = aff(e->args[0]);
        if (!a) return std::nullopt;
        if (e->unop == ir::UnOp::Pos) return a;
        if (e->unop == ir::UnOp::Neg) {
          std::string r = "(-" + *a + ")";
          if (cur_ && e->origin >= 0 && !const_int(e)) cur_->int_ops.push_back({e->origin, r});
          return r;
        }
        return std::nullopt;
      }
      default: return std::nullopt;
    }
  }

  // ------------------------------------------------------------ checks of non-affine operations
  // `aff` without recording int operations (those of the parts are recorded where the
  // whole is read: aff visits every operand before it gives up).
  std::optional<std::string> quiet_aff(const Expr& e) {
    PolyStmt* saved = cur_;
    cur_ = nullptr;
    auto a = aff(e);
    cur_ = saved;
    return a;
  }

  static int64_t isqrt(int64_t b) {
    int64_t r = (int64_t)std::sqrt((double)b);
    while (r > 0 && (__int128)r * r > b) r--;
    while ((__int128)(r + 1) * (r + 1) <= b) r++;
    return r;
  }

  // Affine parts, each with a bound, such that the Python int `e` stays within [-bound,
  // bound] where every part stays within its own. Each operation in `e` either has its
  // exact value or has stopped the kernel, so the bounds are of the true values.
  bool split(const Expr& e, int64_t bound, std::vector<std::pair<std::string, int64_t>>& out) {
    if (bound < 1) return false;
    if (auto a = quiet_aff(e)) {
      out.push_back({*a, bound});
      return true;
    }
    if (e->kind == K::Unary && (e->unop == ir::UnOp::Neg || e->unop == ir::UnOp::Pos)) return split(e->args[0], bound, out);
    if (e->kind != K::Binary) return false;
    const Expr& x = e->args[0];
    const Expr& y = e->args[1];
    switch (e->binop) {
      case ir::BinOp::Add: case ir::BinOp::Sub: return split(x, bound / 2, out) && split(y, bound / 2, out);
      case ir::BinOp::Mul: {
        auto cx = const_int(x), cy = const_int(y);
        if (cx || cy) {
          int64_t c = cx ? *cx : *cy;
          if (c == 0) return true;
          if (c == INT64_MIN) return false;
          return split(cx ? y : x, bound / (c < 0 ? -c : c), out);
        }
        int64_t r = isqrt(bound);
        return split(x, r, out) && split(y, r, out);
      }
      case ir::BinOp::Mod: return split(y, bound, out);       // |x % y| <= |y| (Python's sign: y's)
      case ir::BinOp::FloorDiv: return split(x, bound, out);  // |x // y| <= |x| for an int y != 0
      default: return false;
    }
  }

  // A float constant other than 0 (a NaN included: `x / nan` does not raise).
  static bool nonzero_float(const Expr& e) {
    return e->kind == K::Const && e->value.kind == ir::ConstValue::Kind::Float && e->value.f != 0.0;
  }

  // Affine parts such that `e` is not 0 where none of them is. A product with a float
  // constant c != 0 (`n * 200.0`): an int n != 0 is at least 1 in magnitude as a double,
  // so the rounded product is at least |c|, never 0.
  bool nonzero(const Expr& e, std::vector<std::string>& out) {
    if (auto a = quiet_aff(e)) {
      out.push_back(*a);
      return true;
    }
    if (e->kind == K::Unary && (e->unop == ir::UnOp::Neg || e->unop == ir::UnOp::Pos)) return nonzero(e->args[0], out);
    if (e->kind == K::Binary && e->binop == ir::BinOp::Mul) {
      const Expr& x = e->args[0];
      const Expr& y = e->args[1];
      if (nonzero_float(x) || nonzero_float(y)) {
        auto n = quiet_aff(nonzero_float(x) ? y : x);
        if (n) out.push_back(*n);
        return n.has_value();
      }
      return nonzero(x, out) && nonzero(y, out);
    }
    return false;
  }

  // The checks of a binary operation that is not affine (an affine one records its
  // overflow check in aff), in terms of its affine parts.
  void note_ranges(const Expr& e) {
    if (!cur_ || e->origin < 0 || e->kind != K::Binary) return;
    using RK = PolyRange::Kind;
    constexpr int64_t k53 = (int64_t)1 << 53;
    auto range = [&](RK kind, int pos) {
      PolyRange r;
      r.kind = kind;
      r.origin = e->origin;
      r.pos = pos;
      return r;
    };
    auto note = [&](RK kind, int pos, const Expr& part) {
      PolyRange r = range(kind, pos);
      bool ok = kind == RK::NonZero ? nonzero(part, r.nonzero) : split(part, kind == RK::Exact ? k53 : INT64_MAX, r.within);
      if (ok) cur_->ranges.push_back(std::move(r));
    };
    switch (e->binop) {
      case ir::BinOp::Add: case ir::BinOp::Sub: case ir::BinOp::Mul: note(RK::NoOverflow, 0, e); break;
      case ir::BinOp::TrueDiv: {
        // The 53-bit check is one check of both operands: a fact for one alone drops nothing.
        PolyRange a = range(RK::Exact, 0), b = range(RK::Exact, 1);
        if (split(e->args[0], k53, a.within) && split(e->args[1], k53, b.within)) {
          cur_->ranges.push_back(std::move(a));
          cur_->ranges.push_back(std::move(b));
        }
        note(RK::NonZero, 0, e->args[1]);
        break;
      }
      case ir::BinOp::FloorDiv: case ir::BinOp::Mod:
        note(RK::Exact, 0, e->args[0]);
        note(RK::NonZero, 0, e->args[1]);
        break;
      default: break;
    }
  }

  // An affine condition (isl syntax) for `e` being true (or false, `negate`), if any.
  std::optional<std::string> guard(const Expr& e, bool negate) {
    if (e->kind == K::Truth) return guard(e->args[0], negate);
    if (e->kind == K::Unary && e->unop == ir::UnOp::Not) return guard(e->args[0], !negate);
    if (e->kind != K::Compare) return std::nullopt;
    ir::CmpOp op = e->cmpop;
    if (op == ir::CmpOp::Is || op == ir::CmpOp::IsNot || op == ir::CmpOp::NE || op == ir::CmpOp::EQ) {
      if (op == ir::CmpOp::EQ && !negate) {
      } else if (op == ir::CmpOp::NE && negate) {
        op = ir::CmpOp::EQ;
        negate = false;
      } else {
        return std::nullopt;
      }
    }
    PolyStmt* saved = cur_;
    cur_ = nullptr;  // the operands' int ops are recorded where the condition is evaluated
    auto a = aff(e->args[0]);
    auto b = aff(e->args[1]);
    cur_ = saved;
    if (!a || !b) return std::nullopt;
    if (negate) {
      switch (op) {
        case ir::CmpOp::LT: op = ir::CmpOp::GE; break;
        case ir::CmpOp::LE: op = ir::CmpOp::GT; break;
        case ir::CmpOp::GT: op = ir::CmpOp::LE; break;
        case ir::CmpOp::GE: op = ir::CmpOp::LT; break;
        default: return std::nullopt;
      }
    }
    const char* s = op == ir::CmpOp::LT ? " < " : op == ir::CmpOp::LE ? " <= " : op == ir::CmpOp::GT ? " > "
                  : op == ir::CmpOp::GE ? " >= " : " = ";
    return *a + s + *b;
  }

  // ------------------------------------------------------------ accesses
  void note_rank_at_least(int var, int k) {
    auto it = rank_.find(var);
    if (it == rank_.end() || it->second < k) rank_[var] = k;
  }

  // The row variable `e` loads, as its A[e] where it is bound (null elsewhere).
  const Expr* bound_row(const Expr& e) const {
    if (e->kind != K::Load) return nullptr;
    auto r = rows_.find(e->var);
    if (r == rows_.end()) return nullptr;
    for (const Row& row : r->second)
      if (std::find(loops_.begin(), loops_.end(), row.loop) != loops_.end()) return &row.value;
    return nullptr;
  }

  // Variables that only ever hold rows of one container, at indices the model cannot follow
  // (`s = spheres[k]` with `k` the closest sphere, in a helper inlined as statements): every
  // assignment to v is `A[e]` (one index) with the same A, a variable the nest never
  // reassigns, and v holds nothing else: what such a variable holds at entry is no value
  // in the kernel (a Temp has none; the dispatcher counts a user's variable the nest gives
  // rows as unset until assigned, and a read before that goes to CPython). An access
  // through v is then one of A's, at an unknown row (rows_of_one_: v -> A and the first
  // assignment's origin).
  void find_rows_of_one(const Stmt& root) {
    std::map<int, std::pair<int, int>> found;
    std::set<int> bad;
    ir::for_each_stmt(root, [&](const Stmt& x) {
      if (x->kind == StmtNode::Kind::For) bad.insert(x->var);
      for (auto& f : x->effects) {
        if (f.kind != ir::Effect::Kind::Assign || !views_.count(f.var)) continue;
        const Expr& v = f.value;
        const int base = v->kind == K::Subscript && v->args[1]->kind != K::Tuple &&
                                 v->args[1]->kind != K::Slice ? named_var(v->args[0]) : -1;
        if (base < 0 || n_.vars[(size_t)base].assigned) {
          bad.insert(f.var);
          continue;
        }
        auto [it, fresh] = found.insert({f.var, {base, v->origin}});
        if (!fresh && it->second.first != base) bad.insert(f.var);
      }
    });
    for (auto& [v, row] : found)
      if (!bad.count(v) && !rows_.count(v)) rows_of_one_[v] = row;
  }
  std::map<int, std::pair<int, int>> rows_of_one_;

  // Rows bound for an iteration: `v = A[e]` a top-level statement of a For loop's body,
  // where A is never reassigned, e reads only the loop's variable (not reassigned in the
  // body) and variables the nest never assigns, and nothing in the body reads v before that
  // statement (it would be the previous iteration's row). v may be bound so in several loops
  // (`for p in ps` twice), none inside another, where every assignment of v is one of those.
  void find_rows(const Stmt& root) {
    std::map<int, int> assignments;
    ir::for_each_stmt(root, [&](const Stmt& x) {
      for (auto& f : x->effects)
        if (f.kind == ir::Effect::Kind::Assign) assignments[f.var]++;
      if (x->kind == StmtNode::Kind::For) assignments[x->var] += 1 << 20;  // never a row
    });
    std::map<int, std::vector<std::pair<Row, Stmt>>> bindings;  // and the loop binding it
    ir::for_each_stmt(root, [&](const Stmt& loop) {
      if (loop->kind != StmtNode::Kind::For || assigns(loop->body[0], loop->var)) return;
      const auto& body = loop->body[0]->body;
      for (size_t p = 0; p < body.size(); p++) {
        if (body[p]->kind != StmtNode::Kind::Seg) continue;
        for (auto& f : body[p]->effects) {
          if (f.kind != ir::Effect::Kind::Assign || !views_.count(f.var)) continue;
          const Expr& v = f.value;
          if (v->kind != K::Subscript || v->args[1]->kind == K::Tuple) continue;
          int base = named_var(v->args[0]);
          if (base < 0 || n_.vars[(size_t)base].assigned) continue;
          bool ok = true;
          ir::walk_expr(v->args[1], [&](const Expr& x) {
            if (x->kind == K::Load && x->var != loop->var && n_.vars[(size_t)x->var].assigned) ok = false;
          });
          auto reads_v = [&](const Stmt& st) {
            bool r = false;
            ir::for_each_expr(st, [&](const Expr& x) { r = r || (x->kind == K::Load && x->var == f.var); });
            return r;
          };
          for (size_t q = 0; q <= p && ok; q++) ok = !reads_v(body[q]);
          if (ok) bindings[f.var].push_back({Row{v, loop->loop}, loop});
        }
      }
    });
    for (auto& [var, bs] : bindings) {
      bool ok = (int)bs.size() == assignments[var];
      for (size_t a = 0; a < bs.size() && ok && bs.size() > 1; a++)
        ir::for_each_stmt(bs[a].second->body[0], [&](const Stmt& x) {
          for (size_t b = 0; b < bs.size(); b++) ok = ok && !(x->kind == StmtNode::Kind::For && x->loop == bs[b].first.loop);
        });
      if (!ok) continue;
      for (auto& [row, loop] : bs) rows_[var].push_back(row);
    }
  }

  static bool has_slice(const std::vector<std::pair<Expr, std::pair<int, int>>>& idx) {
    for (auto& [x, o] : idx)
      if (x->kind == K::Slice) return true;
    return false;
  }

  // Flattens A[i][j] (a chain of subscripts on a variable) into (A, [i, j]); a bound row
  // stands for its A[e].
  // (The row variable the chain went through, where it did: `p.x` rather than
  // `ps[$p.position0].x` in the report. Set by each chain(); read right after it.)
  RowAlias alias_;
  bool chain(const Expr& e, int& var, std::vector<std::pair<Expr, std::pair<int, int>>>& idx) {
    alias_ = RowAlias{};
    return chain_rec(e, var, idx);
  }
  bool chain_rec(const Expr& e, int& var, std::vector<std::pair<Expr, std::pair<int, int>>>& idx) {
    if (const Expr* row = bound_row(e)) {
      const bool ok = chain_rec(*row, var, idx);
      alias_ = RowAlias{e->var, idx.size()};
      return ok;
    }
    if (e->kind == K::Load) {
      if (auto r = rows_of_one_.find(e->var); r != rows_of_one_.end()) {
        // Some row of that container: its index is the variable itself, which has no
        // affine form (any row, as far as dependences go).
        var = r->second.first;
        idx.push_back({e, {r->second.second, 0}});
        return true;
      }
    }
    if (named_var(e) >= 0) {
      var = named_var(e);
      return true;
    }
    if (e->kind != K::Subscript) return false;
    if (!chain_rec(e->args[0], var, idx)) return false;
    // After a slice, positions no longer name dimensions (A[1:][j] is A[j + 1]): not a
    // chain this model describes (an access to an unknown object, conflicting with all).
    if (has_slice(idx)) return false;
    const Expr& ix = e->args[1];
    if (ix->kind == K::Tuple) {
      for (size_t k = 0; k < ix->args.size(); k++) idx.push_back({ix->args[k], {e->origin, (int)k}});
    } else {
      idx.push_back({ix, {e->origin, 0}});
    }
    return true;
  }

  std::string text(int var, const std::vector<std::pair<Expr, std::pair<int, int>>>& idx, RowAlias alias = {}) {
    // As written: A[i, j] (one subscript, two positions) or A[i][j] (two subscripts); through
    // a row variable, from it (`row[j]`). An object's attribute (attribute_columns' column, a
    // Const named for it): `p.x`, `ps[k].x`.
    std::string s = alias.var >= 0 ? ir::source_name(n_.vars[(size_t)alias.var])
                    : var >= 0     ? ir::source_name(n_.vars[(size_t)var])
                                   : "?";
    bool open = false;
    for (size_t k = alias.var >= 0 ? alias.depth : 0; k < idx.size(); k++) {
      const Expr& x = idx[k].first;
      if (x->kind == K::Const && !x->name.empty()) {
        s += (open ? "]." : ".") + x->name;
        open = false;
        continue;
      }
      s += (!open ? "[" : idx[k].second.second == 0 ? "][" : ", ") + show(x);
      open = true;
    }
    return open ? s + "]" : s;
  }

  static int precedence(ir::BinOp op) {
    switch (op) {
      case ir::BinOp::Pow: return 6;
      case ir::BinOp::Mul: case ir::BinOp::TrueDiv: case ir::BinOp::FloorDiv: case ir::BinOp::Mod:
      case ir::BinOp::MatMul: return 5;
      case ir::BinOp::Add: case ir::BinOp::Sub: return 4;
      case ir::BinOp::LShift: case ir::BinOp::RShift: return 3;
      case ir::BinOp::And: return 2;
      case ir::BinOp::Xor: return 1;
      case ir::BinOp::Or: return 0;
    }
    return 0;
  }

  std::string show(const Expr& e) {
    switch (e->kind) {
      case K::Const:
        if (e->value.kind == ir::ConstValue::Kind::Int) return std::to_string(e->value.i);
        return "c";
      case K::Load: return n_.vars[(size_t)e->var].name;
      case K::Binary: {
        // Parenthesized as Python needs: a looser operand, or an equal one on the right
        // (`**` the other way round).
        int p = precedence(e->binop);
        auto operand = [&](const Expr& x, bool right) {
          if (x->kind != K::Binary) return show(x);
          int q = precedence(x->binop);
          bool pow = e->binop == ir::BinOp::Pow;
          bool paren = q < p || (q == p && (pow ? !right : right));
          return paren ? "(" + show(x) + ")" : show(x);
        };
        return operand(e->args[0], false) + " " + ir::binop_name(e->binop) + " " + operand(e->args[1], true);
      }
      case K::Unary: return std::string(ir::unop_name(e->unop)) + show(e->args[0]);
      case K::Subscript: {
        int v = -1;
        std::vector<std::pair<Expr, std::pair<int, int>>> idx;
        if (chain(e, v, idx)) return text(v, idx, alias_);
        return "...";
      }
      default: return "...";
    }
  }

  void access(int var, const std::vector<std::pair<Expr, std::pair<int, int>>>& idx, bool write, int line,
              bool update = false, RowAlias alias = {}) {
    if (!write && var >= 0 && kept_.count(var)) {
      for (auto& [e, o] : idx) aff(e);
      return;
    }
    PolyAccess a;
    a.var = var;
    a.write = write;
    a.update = update;
    a.line = line;
    a.text = text(var, idx, alias);
    for (auto& [e, o] : idx) {
      PolyIndex pi;
      pi.expr = aff(e);
      if (!pi.expr && e->kind == K::Binary && e->binop == ir::BinOp::Mod) pi.mod_divisor = quiet_aff(e->args[1]);
      pi.origin = o.first;
      pi.pos = o.second;
      a.index.push_back(pi);
    }
    if (var >= 0) {
      note_rank_at_least(var, (int)idx.size());
      for (size_t k = 0; k < idx.size() && (k == 0 || !ragged_.count(var)); k++) extent(var, (int)k);
    }
    cur_->accesses.push_back(std::move(a));
  }

  // The read of `A[s]` in an update statement `A[s] = A[s] + e` (- e, e + A[s]; e not
  // reading A), A a variable: else null.
  static const ExprNode* update_read(const ir::Effect& f) {
    const int self = ir::update_operand(f);
    if (self < 0 || ir::reads_var(f.value->args[(size_t)(1 - self)], f.base->var) || ir::reads_var(f.index, f.base->var))
      return nullptr;
    return f.value->args[(size_t)self].get();
  }
  const ExprNode* update_read_ = nullptr;  // the statement being read's, if an update

  // Every element read in `e` (and the affine int operations in it).
  void reads(const Expr& e, int line) {
    if (!e) return;
    if (e->kind == K::Subscript) {
      const Expr& b = e->args[0];
      // A.shape[k] is an extent; but `x.shape` may as well be an object's list, whose
      // element read is then recorded below like any other (for an array's shape the
      // attribute variable holds nothing at run time and the record is inert).
      if (b->kind == K::Attr && b->name == "shape") {
        aff(e);
        if (b->pseudo < 0) {
          reads(b, line);
          reads(e->args[1], line);
          return;
        }
      }
      // An item of a tuple constant (`for d in (-1, 0, 1)`): no memory the nest writes.
      if (b->kind == K::Tuple) {
        reads(e->args[1], line);
        return;
      }
      int var = -1;
      std::vector<std::pair<Expr, std::pair<int, int>>> idx;
      if (chain(e, var, idx)) {
        access(var, idx, false, line, e.get() == update_read_, alias_);
        for (auto& [ix, o] : idx) reads(ix, line);
        return;
      }
      m_.unknown_base = true;
      PolyAccess a;
      a.var = -1;
      a.line = line;
      a.text = "an element of a computed object";
      cur_->accesses.push_back(a);
      for (auto& x : e->args) reads(x, line);
      return;
    }
    if (e->kind == K::Binary || e->kind == K::Unary) {
      if (aff(e)) return;  // affine: records its int ops; no subscripts inside
      note_ranges(e);
    }
    if (e->kind == K::Call) aff(e);  // len(A): notes the rank
    for (auto& a : e->args) reads(a, line);
  }

  // ------------------------------------------------------------ statements
  PolyStmt& open_stmt(int line) {
    PolyStmt s;
    s.id = (int)m_.stmts.size();
    s.name = "S" + std::to_string(s.id);
    s.loops = loops_;
    s.guards = guards_;
    s.line = line;
    m_.stmts.push_back(std::move(s));
    for (int l : loops_) m_.loops[(size_t)l].stmts.push_back((int)m_.stmts.size() - 1);
    cur_ = &m_.stmts.back();
    return m_.stmts.back();
  }

  void block(const Stmt& s) {
    switch (s->kind) {
      case StmtNode::Kind::Block:
        for (auto& b : s->body) block(b);
        break;
      case StmtNode::Kind::Seg: {
        open_stmt(s->line);
        for (auto& f : s->effects) {
          if (f.kind == ir::Effect::Kind::Store) {
            int var = -1;
            std::vector<std::pair<Expr, std::pair<int, int>>> idx;
            // The stored-to element: the base chain plus the store's own index.
            bool ok = chain(f.base, var, idx);
            const RowAlias alias = alias_;
            if (has_slice(idx)) ok = false;  // A[1:][j] = v: see chain
            if (ok) {
              const Expr& ix = f.index;
              if (ix->kind == K::Tuple) {
                for (size_t k = 0; k < ix->args.size(); k++) idx.push_back({ix->args[k], {f.origin, (int)k}});
              } else {
                idx.push_back({ix, {f.origin, 0}});
              }
              for (auto& [e, o] : idx) reads(e, s->line);
              update_read_ = update_read(f);
              reads(f.value, s->line);
              access(var, idx, true, s->line, update_read_ != nullptr, alias);
              update_read_ = nullptr;
            } else {
              m_.unknown_base = true;
              reads(f.base, s->line);
              reads(f.index, s->line);
              reads(f.value, s->line);
              PolyAccess a;
              a.var = -1;
              a.write = true;
              a.line = s->line;
              a.text = "an element of a computed object";
              cur_->accesses.push_back(a);
            }
          } else if (auto prog = progression_item(f)) {
            affine_of_[f.var] = {*prog, loops_.back()};
            reads(f.value, s->line);
          } else if (f.kind == ir::Effect::Kind::Assign && f.value->kind == K::Subscript && f.value->unpack > 0 &&
                     f.value->args[0]->kind == K::Call) {
            // `x, y = h(a)`: the items of what a call returned. Taken as values, not as
            // memory: plan_parallel checks, once the helpers are inlined, that they are.
            cur_->call_items.push_back({f.var, f.value->origin});
            reads(f.value->args[0], s->line);
          } else if (f.kind == ir::Effect::Kind::Assign && n_.vars[(size_t)f.var].object_row) {
            // An object taken for its attributes (attribute_columns): its identity read.
            int var = -1;
            std::vector<std::pair<Expr, std::pair<int, int>>> idx;
            if (f.value->kind != K::Subscript || !chain(f.value, var, idx)) {
              reads(f.value, s->line);
            } else {
              const size_t before = cur_->accesses.size();
              access(var, idx, false, s->line);
              if (cur_->accesses.size() > before) cur_->accesses.back().identity = true;
              for (auto& [ix, o] : idx) reads(ix, s->line);
            }
          } else {
            reads(f.value, s->line);
          }
        }
        cur_ = nullptr;
        break;
      }
      case StmtNode::Kind::If: {
        open_stmt(s->line);
        reads(s->cond, s->line);
        cur_ = nullptr;
        auto g = guard(s->cond, false);
        if (g) guards_.push_back(*g);
        block(s->body[0]);
        if (g) guards_.pop_back();
        auto ng = guard(s->cond, true);
        if (ng) guards_.push_back(*ng);
        block(s->body[1]);
        if (ng) guards_.pop_back();
        break;
      }
      case StmtNode::Kind::For: for_loop(s); break;
      case StmtNode::Kind::While: {
        PolyLoop& L = m_.loops[(size_t)s->loop];
        L.parent = loops_.empty() ? -1 : loops_.back();
        L.depth = (int)loops_.size();
        L.constraints = L.dim + " >= 0";
        loops_.push_back(s->loop);
        block(s->body[0]);
        loops_.pop_back();
        break;
      }
      case StmtNode::Kind::Range:  // typed IR only
      case StmtNode::Kind::Break:
      case StmtNode::Kind::Continue:
      case StmtNode::Kind::Exit:
        break;
    }
  }

  // `d = (-1, 0, 1)[k]` with k the innermost loop's iterator, the tuple's ints in arithmetic
  // progression and d assigned nowhere else in that loop: d's affine text (-1 + k).
  std::optional<std::string> progression_item(const ir::Effect& f) {
    if (f.kind != ir::Effect::Kind::Assign || f.value->kind != K::Subscript || f.value->unpack != 0 || loops_.empty())
      return std::nullopt;
    const Expr& t = f.value->args[0];
    const Expr& k = f.value->args[1];
    if (t->kind != K::Tuple || t->args.empty() || k->kind != K::Load) return std::nullopt;
    auto it = iterator_of_.find(k->var);
    if (it == iterator_of_.end() || it->second != loops_.back()) return std::nullopt;
    std::vector<int64_t> v;
    for (auto& x : t->args) {
      auto c = const_int(x);
      if (!c || *c < -(1LL << 40) || *c > (1LL << 40)) return std::nullopt;
      v.push_back(*c);
    }
    const int64_t d = v.size() > 1 ? v[1] - v[0] : 0;
    for (size_t j = 1; j < v.size(); j++)
      if (v[j] - v[j - 1] != d) return std::nullopt;
    if (assignments(loop_bodies_.back(), f.var) != 1) return std::nullopt;
    const std::string& dim = m_.loops[(size_t)it->second].dim;
    return "(" + num(v[0]) + " + " + num(d) + " * " + dim + ")";
  }
  // How many assignments of `var` there are inside `s` (a loop over it counts, except `s`
  // itself at the top).
  static int assignments(const StmtNode* s, int var, bool top = true) {
    int n = !top && s->kind == StmtNode::Kind::For && s->var == var ? 1 : 0;
    for (auto& f : s->effects) n += f.kind == ir::Effect::Kind::Assign && f.var == var;
    for (auto& b : s->body) n += assignments(b.get(), var, false);
    return n;
  }
  static bool assigns(const Stmt& s, int var) { return assignments(s.get(), var) > 0; }

  void for_loop(const Stmt& s) {
    PolyLoop& L = m_.loops[(size_t)s->loop];
    L.parent = loops_.empty() ? -1 : loops_.back();
    L.depth = (int)loops_.size();
    L.var = s->var;
    // range() is evaluated once, in the enclosing loops.
    open_stmt(s->line);
    std::vector<std::optional<std::string>> a;
    for (auto& e : s->args) {
      reads(e, s->line);
      a.push_back(aff(e));
    }
    cur_ = nullptr;
    std::optional<std::string> start, stop;
    std::optional<int64_t> step;
    if (s->args.size() == 1) {
      start = "0";
      stop = a[0];
      step = 1;
    } else {
      start = a[0];
      stop = a[1];
      step = s->args.size() == 3 ? const_int(s->args[2]) : std::optional<int64_t>(1);
    }
    bool var_reassigned = assigns(s->body[0], s->var);
    std::vector<std::string> cs;
    const std::string& d = L.dim;
    if (step && *step != 0) {
      bool up = *step > 0;
      if (start) cs.push_back(up ? d + " >= " + *start : d + " <= " + *start);
      if (stop) cs.push_back(up ? d + " < " + *stop : d + " > " + *stop);
      if (start && (*step > 1 || *step < -1))
        // (isl reads `- 2 * k`, not `+ (-2) * k`: a parenthesised factor must be a number it
        // can tell at once.)
        cs.push_back("exists (k" + d + " : " + d + " = " + *start + (*step > 0 ? " + " : " - ") +
                     std::to_string(*step > 0 ? *step : -*step) + " * k" + d + ")");
    }
    L.affine = start && stop && step && *step != 0 && !var_reassigned;
    for (size_t k = 0; k < cs.size(); k++) L.constraints += (k ? " and " : "") + cs[k];
    // Loads of the loop variable inside the body are the iterator (unless the body
    // assigns it, then they are not affine).
    auto saved = iterator_of_.find(s->var) != iterator_of_.end() ? std::optional<int>(iterator_of_[s->var]) : std::nullopt;
    iterator_of_[s->var] = var_reassigned ? -1 : s->loop;
    loops_.push_back(s->loop);
    loop_bodies_.push_back(s->body[0].get());
    block(s->body[0]);
    loop_bodies_.pop_back();
    loops_.pop_back();
    for (auto it = affine_of_.begin(); it != affine_of_.end();)
      it = it->second.second == s->loop ? affine_of_.erase(it) : std::next(it);
    if (saved) iterator_of_[s->var] = *saved;
    else iterator_of_.erase(s->var);
    // After the loop the variable holds its last value: not the iterator. Any enclosing
    // loop that iterates it is already excluded (the assignment makes it reassigned).
  }
};

}  // namespace

int PolyModel::param_index(const std::string& name) const {
  for (size_t i = 0; i < params.size(); i++)
    if (params[i].name == name) return (int)i;
  return -1;
}

std::string PolyModel::param_list() const {
  std::string s = "[";
  for (size_t i = 0; i < params.size(); i++) s += (i ? ", " : "") + params[i].name;
  return s + "]";
}

std::string PolyModel::dims_of(const PolyStmt& s) const {
  std::string d;
  for (size_t k = 0; k < s.loops.size(); k++) d += (k ? ", " : "") + loops[(size_t)s.loops[k]].dim;
  return d;
}

std::string PolyModel::domain_body(const PolyStmt& s) const {
  std::vector<std::string> cs;
  for (int l : s.loops)
    if (!loops[(size_t)l].constraints.empty()) cs.push_back(loops[(size_t)l].constraints);
  for (auto& g : s.guards) cs.push_back(g);
  std::string out = s.name + "[" + dims_of(s) + "]";
  for (size_t k = 0; k < cs.size(); k++) out += (k ? " and " : " : ") + cs[k];
  return out;
}

std::string PolyModel::domain_of(const PolyStmt& s) const { return param_list() + " -> { " + domain_body(s) + " }"; }

PolyModel build_poly_model(const ir::Nest& nest, const std::set<int>& ragged) { return Builder(nest, ragged).run(); }

std::string to_string(const PolyModel& m, const ir::Nest& nest) {
  std::ostringstream o;
  o << "params " << m.param_list() << (m.unknown_base ? "  (an access with an unknown base)" : "") << "\n";
  for (auto& L : m.loops)
    if (L.id >= 0)
      o << "loop L" << L.id << " " << L.dim << (L.affine ? " affine" : "") << " parent " << L.parent << ": "
        << L.constraints << "\n";
  for (auto& s : m.stmts) {
    o << m.domain_of(s) << "  # line " << s.line << "\n";
    for (auto& a : s.accesses) {
      o << "    " << (a.write ? "W " : "R ") << a.text << " -> [";
      for (size_t k = 0; k < a.index.size(); k++)
        o << (k ? ", " : "")
          << (a.index[k].expr ? *a.index[k].expr : a.index[k].mod_divisor ? "? mod " + *a.index[k].mod_divisor : "?");
      o << "]\n";
    }
    for (auto& op : s.int_ops) o << "    int @" << op.origin << " = " << op.expr << "\n";
    for (auto& r : s.ranges) {
      static const char* kinds[] = {"no-overflow", "nonzero", "exact"};
      o << "    " << kinds[(int)r.kind] << " @" << r.origin << "." << r.pos << " if";
      for (auto& [x, b] : r.within) o << " |" << x << "| <= " << b;
      for (auto& x : r.nonzero) o << " " << x << " != 0";
      o << "\n";
    }
  }
  o << "assume ranks:";
  for (auto& [v, r] : m.assumptions.array_rank) o << " " << nest.vars[(size_t)v].name << "=" << r;
  o << "\n";
  return o.str();
}

}  // namespace stagepy::analysis
