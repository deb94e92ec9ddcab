// See plan_parallel.h.
#include "specialize/plan_parallel.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "analysis/append_targets.h"
#include "ir/mutate.h"

namespace stagepy::specialize {
namespace {

using ir::Expr;
using ir::ExprNode;
using ir::Stmt;
using ir::StmtNode;
using EK = ExprNode::Kind;
using SK = StmtNode::Kind;

bool is_float(const TypeRef& t) {
  return t && (t->kind == Type::Kind::PyFloat || (t->kind == Type::Kind::NpScalar && dtype_is_float(t->dtype)));
}
bool is_np_int(const TypeRef& t) {
  return t && t->kind == Type::Kind::NpScalar && dtype_is_int(t->dtype);
}
bool is_int(const TypeRef& t) { return t && (t->kind == Type::Kind::PyInt || is_np_int(t)); }
bool is_f64(const TypeRef& t) {
  return t && (t->kind == Type::Kind::PyFloat || (t->kind == Type::Kind::NpScalar && t->dtype == DType::Float64));
}
// float | np.float64 (a variable that starts as a Python float and may take NumPy values).
bool is_f64_union(const TypeRef& t) {
  if (!t || t->kind != Type::Kind::Union) return false;
  for (auto& m : t->elems)
    if (!is_f64(m)) return false;
  return true;
}
// The NumPy type a Python float or int becomes in a sum with NumPy values: np.float64 and
// np.int64 (NEP 50's weak Python scalars; NumPy 1.x's value-based casting agrees for these).
bool is_np(const TypeRef& t, DType d) { return t && t->kind == Type::Kind::NpScalar && t->dtype == d; }
// Whether `self` (a sum's variable before an update) is the Python type P, its NumPy partner
// T = `np`, or P | T, with P, T = float, np.float64 or int, np.int64.
bool np_partner_of(const TypeRef& self, const TypeRef& np) {
  if (!self || !np) return false;
  Type::Kind py;
  if (is_np(np, DType::Float64)) py = Type::Kind::PyFloat;
  else if (is_np(np, DType::Int64)) py = Type::Kind::PyInt;
  else return false;
  auto member = [&](const TypeRef& m) { return m->kind == py || types::same(m, np); };
  if (self->kind != Type::Kind::Union) return member(self);
  for (auto& m : self->elems)
    if (!member(m)) return false;
  return true;
}
// A float min/max can be split: float, np.float64, np.float32, or float | np.float64.
bool min_max_float(const TypeRef& t) {
  return is_f64(t) || is_f64_union(t) || is_np(t, DType::Float32);
}

using ir::reads_var;
using ir::walk_expr;

using ir::root_var;
using ir::same_pure_expr;

class Planner {
 public:
  Planner(const TypedNest& tn, const FactSet& facts, const analysis::NestConditions& conds, const PlanOptions& o)
      : tn_(tn), n_(tn.nest), facts_(facts), conds_(conds), o_(o) {
    for (auto& c : conds.conds)
      if (c.fact.kind == analysis::FactKind::NonNeg) affine_.insert({c.fact.origin, c.fact.pos});
    ir::for_each_stmt(n_.root, [&](const Stmt& s) {
      if (s->kind == SK::Range) ranges_[s->loop] = s.get();
    });
  }

  ParallelPlan run() {
    ParallelPlan p;
    p.threads = o_.threads;
    p.loops.resize(n_.loops.size());
    plan_ = &p;
    visit(n_.root, 0);
    ir::for_each_stmt(n_.root, [&](const Stmt& s) {
      if (s->kind != SK::For) return;
      LoopPlan& lp = p.loops[(size_t)s->loop];
      lp.few_iterations = facts_.has(Fact{FactKind::FewIterations, -1, 0, s->loop});
      if (lp.parallel) {
        // (Not where it sums into arrays: two iterations may update one element, which
        // interleaved lanes or an interchange would each have to see the other's value of.)
        lp.independent = lp.array_reductions.empty();
        return;
      }
      std::vector<std::pair<int, int>> pairs;
      if (independent(s, &pairs)) {
        lp.independent = true;
        lp.alias_pairs = std::move(pairs);
      }
    });
    return p;
  }

 private:
  const TypedNest& tn_;
  const ir::Nest& n_;
  const FactSet& facts_;
  const analysis::NestConditions& conds_;
  const PlanOptions& o_;
  std::set<std::pair<int, int>> affine_;
  ParallelPlan* plan_ = nullptr;

  std::string name(int v) const { return ir::shown_name(n_.vars[(size_t)v]); }

  // Finds the outermost loops that can run in parallel (nothing inside one is parallel).
  // `inside`: how many parallel loops enclose `s`. Threads take the outermost parallel loop;
  // a GPU also spreads the loops directly inside it over its threads (codegen's collapsed
  // nests), so with `gpu` those are planned too.
  void visit(const Stmt& s, int inside) {
    if (s->kind == SK::For && (inside == 0 || (inside == 1 && o_.gpu))) {
      LoopPlan& lp = plan_->loops[(size_t)s->loop];
      lp = consider(s);
      if (lp.parallel) inside++;
      else if (inside > 0) inside = 2;  // nothing below a sequential inner loop
    } else if (s->kind == SK::For || s->kind == SK::While) {
      if (inside > 0) inside = 2;
    }
    for (auto& b : s->body) visit(b, inside);
  }

  // ---------------------------------------------------------------- one loop
  struct Info {
    std::set<int> assigned;                    // scalar variables assigned in the loop
    std::set<int> arrays, written;             // array variables subscripted / stored to
    std::set<int> helper_reads;                // array variables inlined helpers read elements of
    std::map<int, std::vector<const ExprNode*>> exposed;  // reads before any write in the iteration
    std::map<int, int> reads;                  // Load nodes per variable
    // Of those, the reads only a NumPy complex operation's warnings see: loads inside its
    // ComplexWarn and its copies of the operands (warning_temps, lower_complex.h). In a part
    // of a reduction they see the part's value, as a float sum's own check does (`s +=
    // a[i] * b[i]` of complex128: `s.real = s.real + $c2.real`, the warnings reading a copy
    // of the old s.real and s.real after), so they do not carry it.
    std::map<int, int> warning_reads;
    std::set<int> warning_temps;
    struct Cand {
      Reduction r;
      const ExprNode* load;                    // the `v` operand
      int stmt_line;
      const ExprNode* value;                   // the update expression
    };
    std::map<int, std::vector<Cand>> cands;
    std::set<int> assigned_elsewhere;          // assigned by a statement that is not a reduction of it
    std::map<int, std::vector<int>> companions;  // assigned beside a min/max's update: of which variable
    std::map<int, TypeRef> divisors;           // scalars the loop divides by
    bool breaks_self = false;
    bool exits = false;  // a return or raise inside it
    int appends = -1;    // a list it appends to (the first)
    int resizes = -1;    // a list whose length it changes (L.append(x) of a list it reads, L.pop())
    bool draws = false;  // it draws from the `random` module's generator
    bool logged = false;  // it is or holds a statement whose stores are logged (ResumePoint::logged)
    int builds = -1;     // a variable it assigns a new list (the first)
    std::string bad_index;                     // a subscript whose facts are missing
    // Arrays read at an index not proven in range: checked at every access, so a
    // speculative run stops for CPython there like any check; they forbid threads only in
    // an array the loop writes (where the model's accesses would not cover them).
    std::set<int> unproven_reads;
    int line = 0;
  };

  // Whether every array an operation on arrays reads is a subscript of a named array
  // (A[i, :], x[1:], M[k]): the polyhedral model saw those as accesses; a whole array in a
  // variable, or a row variable (read through the index it keeps), it did not.
  static bool sections_only(const Expr& e) {
    if (!e->type || e->type->kind != Type::Kind::Array) return true;
    if (e->type->temp) {
      for (size_t k = e->kind == EK::Call ? 1 : 0; k < e->args.size(); k++)
        if (!sections_only(e->args[k])) return false;
      return true;
    }
    // An array a variable keeps (`d = X[i] - X[j]`) is the iteration's own memory: what
    // computed it was seen.
    if (e->kind == EK::Load && e->type->local) return true;
    return e->kind == EK::Subscript && e->args[1]->kind != EK::AsType && root_var(e->args[0]) >= 0 &&
           e->args[0]->kind != EK::Subscript;
  }

  // (`warning_copy`: e is the value of a copy into one of in.warning_temps.)
  void note_expr(const Expr& e, const std::set<int>& D, Info& in, bool warning_copy = false) {
    std::function<void(const Expr&, bool)> warned = [&](const Expr& x, bool inside) {
      if (!x) return;
      inside = inside || x->kind == EK::ComplexWarn;
      if (inside && x->kind == EK::Load && in.assigned.count(x->var)) in.warning_reads[x->var]++;
      for (auto& a : x->args) warned(a, inside);
    };
    warned(e, warning_copy && e && e->kind == EK::Load);
    walk_expr(e, [&](const Expr& x) {
      if (x->kind == EK::Load && in.assigned.count(x->var)) {
        in.reads[x->var]++;
        if (!D.count(x->var)) in.exposed[x->var].push_back(x.get());
      }
      if (x->kind == EK::Subscript) subscript(x, x->args[1], x->origin, false, in);
      if (x->kind == EK::Call && x->args[0]->type && x->args[0]->type->kind == Type::Kind::Callable &&
          (x->args[0]->type->builtin == Builtin::NpSum || x->args[0]->type->builtin == Builtin::NpMax ||
           x->args[0]->type->builtin == Builtin::NpMin || x->args[0]->type->builtin == Builtin::NpMean) &&
          !sections_only(x->args[1]) && in.bad_index.empty())
        in.bad_index = "it sums an array np.sum reads whole (the analysis sees slices and rows only)";
      // NumPy's dot function may call BLAS, whose result for long vectors depends on the
      // threads BLAS itself has free: only ever called from one thread, as CPython calls it.
      const bool dot = (x->kind == EK::Binary && x->binop == ir::BinOp::MatMul && x->type &&
                        x->type->kind == Type::Kind::NpScalar) ||
                       (x->kind == EK::Call && x->args[0]->type && x->args[0]->type->kind == Type::Kind::Callable &&
                        x->args[0]->type->builtin == Builtin::NpDot);
      if (dot && in.bad_index.empty()) in.bad_index = "it computes a dot product with NumPy's dot function (BLAS)";
      if (x->kind == EK::Binary &&
          (x->binop == ir::BinOp::TrueDiv || x->binop == ir::BinOp::FloorDiv || x->binop == ir::BinOp::Mod)) {
        const Expr& d = x->args[1];
        if (d->kind == EK::Load && !in.assigned.count(d->var) && d->type &&
            (d->type->kind == Type::Kind::PyInt || d->type->kind == Type::Kind::PyFloat ||
             d->type->kind == Type::Kind::PyBool || d->type->kind == Type::Kind::NpScalar))
          in.divisors.emplace(d->var, d->type);
      }
    });
  }

  static constexpr const char* kUnprovenIndex = "an index may be negative or out of bounds (it is checked at every access)";

  void subscript(const Expr& node, const Expr& index, int origin, bool store, Info& in) {
    const Expr& base = store ? node : node->args[0];
    if (!base->type || base->type->kind != Type::Kind::Array) return;
    if (base->type->local) return;  // its own memory (never written through a subscript)
    int v = root_var(base);
    if (v >= 0) {
      in.arrays.insert(v);
      if (store) in.written.insert(v);
      // A read an inlined helper makes that the model has no access for (helpers inlined
      // again without Temps, pipeline.cpp: their reads keep the unnumbered origin).
      if (!store && origin == ir::kInlinedOrigin) in.helper_reads.insert(v);
    } else {
      in.bad_index = "subscripts an array it cannot name";
    }
    // The item of a `for x in S` at the loop's hidden position: in range by construction.
    if (!store && node->in_domain) return;
    size_t k = index->kind == EK::Tuple ? index->args.size() : 1;
    for (size_t p = 0; p < k; p++) {
      if (!affine_.count({origin, (int)p})) continue;
      if (!facts_.has(FactKind::InBounds, origin, (int)p) || !facts_.has(FactKind::NonNeg, origin, (int)p)) {
        if (!store && v >= 0) in.unproven_reads.insert(v);
        else if (in.bad_index.empty()) in.bad_index = kUnprovenIndex;
      }
    }
  }

  // A reduction statement: v = v op e (or e op v for + and *), v = min(v, e), v = max(v, e).
  std::optional<Reduction> reduction_of(const ir::Effect& f) {
    if (f.kind != ir::Effect::Kind::Assign) return std::nullopt;
    int v = f.var;
    const Expr& e = f.value;
    Reduction r;
    r.var = v;
    r.type = e->type;
    // A part of a NumPy complex64 sum (lower_complex): `v = round32(v + e)`, the float32
    // addition of the part (made on doubles, then rounded: exactly float32's).
    const bool rounded = ir::is_round32(e) && n_.vars[(size_t)v].storage == ir::Var::Storage::Part;
    const Expr& x = rounded ? e->args[1] : e;
    if (x->kind == EK::Binary) {
      using O = ir::BinOp;
      if (x->binop != O::Add && x->binop != O::Sub && (x->binop != O::Mul || rounded)) return std::nullopt;
      const Expr *self = nullptr, *other = nullptr;
      if (x->args[0]->kind == EK::Load && x->args[0]->var == v) self = &x->args[0], other = &x->args[1];
      else if (x->binop != O::Sub && x->args[1]->kind == EK::Load && x->args[1]->var == v)
        self = &x->args[1], other = &x->args[0];
      if (!self || reads_var(*other, v)) return std::nullopt;
      // The type settles in the loop; or a Python float/int becomes an np.float64/np.int64
      // (consider(), py_to_np_sum).
      if (!types::same((*self)->type, e->type) && !np_partner_of((*self)->type, e->type)) return std::nullopt;
      r.op = x->binop;
      r.kind = Reduction::Kind::Arith;
      return r;
    }
    if (rounded) return std::nullopt;
    if (e->kind == EK::Call && e->args.size() == 3 && e->kwnames.empty() && e->args[0]->type &&
        e->args[0]->type->kind == Type::Kind::Callable &&
        (e->args[0]->type->builtin == Builtin::Min || e->args[0]->type->builtin == Builtin::Max)) {
      int self = -1;
      for (int k = 1; k <= 2; k++)
        if (e->args[(size_t)k]->kind == EK::Load && e->args[(size_t)k]->var == v) self = k;
      if (self < 0 || reads_var(e->args[(size_t)(3 - self)], v)) return std::nullopt;
      if (!types::same(e->args[(size_t)self]->type, e->type)) return std::nullopt;
      r.kind = e->args[0]->type->builtin == Builtin::Min ? Reduction::Kind::Min : Reduction::Kind::Max;
      r.strict_first = self == 1;  // max(v, e) keeps v unless e > v (Python's builtin max)
      return r;
    }
    return std::nullopt;
  }

  // Where the sums of one variable mix a Python float or int and its NumPy partner (the
  // variable's type at some update is float | np.float64 or int | np.int64, every update
  // gives the NumPy type): that union.
  static TypeRef py_to_np_sum(const std::vector<Info::Cand>& cs) {
    TypeRef u;
    bool mixed = false;
    for (auto& c : cs) {
      if (c.r.kind != Reduction::Kind::Arith || !types::same(c.r.type, cs[0].r.type) ||
          !np_partner_of(c.load->type, c.r.type))
        return nullptr;
      if (c.load->type->kind == Type::Kind::Union) u = c.load->type;
      if (!types::same(c.load->type, c.r.type)) mixed = true;
    }
    return mixed ? u : nullptr;
  }

  // `if e > v: v = e` (or `v < e`, and the min forms): a min/max reduction of v.
  struct IfReduction {
    Reduction r;
    const ExprNode* load;   // v in the condition
    const ir::Effect* set;  // v = e
    bool continues;         // both branches end with `continue`
    std::vector<const ir::Effect*> companions;  // c = e' beside it (`k = i` of an argmax)
  };
  // A branch as a list of statements (nested blocks flattened, empty segments dropped).
  static void flatten(const Stmt& s, std::vector<const StmtNode*>& out) {
    if (s->kind == SK::Block) {
      for (auto& b : s->body) flatten(b, out);
    } else if (!(s->kind == SK::Seg && s->effects.empty())) {
      out.push_back(s.get());
    }
  }
  std::optional<IfReduction> reduction_if(const Stmt& s) {
    if (s->kind != SK::If || !s->cond) return std::nullopt;
    // then: `v = e`, maybe with companions (`k = i`); else: nothing. Either may end with
    // the `continue` CPython's compiler
    // puts in both branches of a loop's last `if` (3.12): then both do, and what follows
    // the `if` is unreachable, so nothing else depends on the comparison.
    std::vector<const StmtNode*> then, els;
    flatten(s->body[0], then);
    flatten(s->body[1], els);
    auto ends_continue = [](const std::vector<const StmtNode*>& b) {
      return !b.empty() && b.back()->kind == SK::Continue;
    };
    const bool cont = ends_continue(then);
    if (cont != ends_continue(els)) return std::nullopt;
    if (cont && then.back()->loop != els.back()->loop) return std::nullopt;
    if (then.size() < (cont ? 2u : 1u) || els.size() != (cont ? 1u : 0u)) return std::nullopt;
    // The then branch's assignments, statement after statement.
    std::vector<const ir::Effect*> sets;
    for (size_t k = 0; k + (cont ? 1 : 0) < then.size(); k++) {
      if (then[k]->kind != SK::Seg) return std::nullopt;
      for (auto& g : then[k]->effects) {
        if (g.kind != ir::Effect::Kind::Assign) return std::nullopt;
        sets.push_back(&g);
      }
    }
    if (sets.empty()) return std::nullopt;
    Expr c = s->cond;
    if (c->kind == EK::Truth) c = c->args[0];
    if (c->kind != EK::Compare) return std::nullopt;
    using C = ir::CmpOp;
    // v: the compared variable the branch assigns; the other assignments are companions.
    const ir::Effect* set = nullptr;
    for (auto* g : sets)
      for (auto& a : c->args)
        if (a->kind == EK::Load && a->var == g->var && !set) set = g;
    if (!set) return std::nullopt;
    const ir::Effect& f = *set;
    std::vector<const ir::Effect*> companions;
    std::set<int> seen = {f.var};
    for (auto* g : sets) {
      if (g == set) continue;
      if (seen.count(g->var)) return std::nullopt;  // each assigned once here
      seen.insert(g->var);
      companions.push_back(g);
    }
    // Their values read neither v nor a companion; v's value reads no companion.
    for (int x : seen) {
      for (auto* g : companions)
        if (reads_var(g->value, x)) return std::nullopt;
      if (x != f.var && reads_var(f.value, x)) return std::nullopt;
    }
    C op = c->cmpop;
    const Expr *self = &c->args[1], *other = &c->args[0];  // other OP self
    if (c->args[0]->kind == EK::Load && c->args[0]->var == f.var) {
      self = &c->args[0], other = &c->args[1];
      op = op == C::LT ? C::GT : op == C::GT ? C::LT : op == C::LE ? C::GE : op == C::GE ? C::LE : op;
    }
    if ((*self)->kind != EK::Load || (*self)->var != f.var || reads_var(*other, f.var)) return std::nullopt;
    if (op != C::LT && op != C::GT && op != C::LE && op != C::GE) return std::nullopt;
    if (!same_pure_expr(*other, f.value)) return std::nullopt;
    const TypeRef& vt = (*self)->type;
    if (!types::same(vt, f.value->type) && !(is_f64_union(vt) && is_f64(f.value->type))) return std::nullopt;
    Reduction r;
    r.var = f.var;
    r.type = vt;
    r.kind = op == C::GT || op == C::GE ? Reduction::Kind::Max : Reduction::Kind::Min;
    r.strict_first = op == C::GT || op == C::LT;
    return IfReduction{r, self->get(), &f, cont, std::move(companions)};
  }

  // Walks one iteration: D holds the variables assigned on every way so far. Returns
  // false when no way falls through to the end of `s` (continue/break).
  bool walk(const Stmt& s, std::set<int>& D, Info& in, int self_loop) {
    switch (s->kind) {
      case SK::Block:
        for (auto& b : s->body)
          if (!walk(b, D, in, self_loop)) return false;
        return true;
      case SK::Seg: {
        for (auto& f : s->effects)
          if (ir::stores_section(f) && in.bad_index.empty())
            in.bad_index = "it stores into rows or slices of arrays (stagepy runs those in order)";
        // A reduction statement, alone or beside effects that neither read nor assign its
        // variable (a complex sum's two parts, lower_complex.h).
        std::vector<std::optional<Reduction>> reds(s->effects.size());
        for (size_t k = 0; k < s->effects.size(); k++) {
          reds[k] = reduction_of(s->effects[k]);
          if (!reds[k]) continue;
          for (size_t j = 0; j < s->effects.size() && reds[k]; j++) {
            if (j == k) continue;
            const ir::Effect& g = s->effects[j];
            int v = reds[k]->var;
            if ((g.kind == ir::Effect::Kind::Assign && g.var == v) || reads_var(g.base, v) || reads_var(g.index, v) ||
                reads_var(g.value, v))
              reds[k].reset();
          }
        }
        for (auto& f : s->effects) {
          note_expr(f.base, D, in);
          note_expr(f.index, D, in);
          note_expr(f.value, D, in, f.kind == ir::Effect::Kind::Assign && in.warning_temps.count(f.var));
          if (f.kind == ir::Effect::Kind::Store) subscript(f.base, f.index, f.origin, true, in);
          if (f.kind == ir::Effect::Kind::Append && in.appends < 0) in.appends = analysis::appended_list_var(f.base);
          if (f.kind != ir::Effect::Kind::Append && ir::changes_lists(f) && in.builds < 0) in.builds = std::max(f.var, 0);
          if (in.resizes < 0)
            ir::walk_expr(f.value, [&](const Expr& x) {
              if (x->kind == ExprNode::Kind::Call && x->args[0]->type && x->args[0]->type->kind == Type::Kind::Callable &&
                  (x->args[0]->type->builtin == Builtin::ListAppend || x->args[0]->type->builtin == Builtin::ListPop) &&
                  x->args[1]->kind == ExprNode::Kind::Load && in.resizes < 0)
                in.resizes = x->args[1]->var;
            });
        }
        for (size_t k = 0; k < s->effects.size(); k++) {
          const ir::Effect& f = s->effects[k];
          const std::optional<Reduction>& red = reds[k];
          if (f.kind == ir::Effect::Kind::Assign) {
            if (red && red->var == f.var) {
              const ExprNode* load = nullptr;
              walk_expr(f.value, [&](const Expr& x) {
                if (!load && x->kind == EK::Load && x->var == f.var) load = x.get();
              });
              in.cands[f.var].push_back({*red, load, s->line, f.value.get()});
            } else {
              in.assigned_elsewhere.insert(f.var);
            }
            D.insert(f.var);
          }
        }
        return true;
      }
      case SK::If: {
        if (auto red = reduction_if(s)) {
          // The condition reads v before any assignment in the iteration may; the then
          // branch assigns it the compared value. Not every way assigns v: D is unchanged.
          note_expr(s->cond, D, in);
          note_expr(red->set->value, D, in);
          in.cands[red->set->var].push_back({red->r, red->load, s->line, red->set->value.get()});
          for (auto* g : red->companions) {
            note_expr(g->value, D, in);
            in.companions[g->var].push_back(red->set->var);
          }
          return !red->continues;
        }
        note_expr(s->cond, D, in);
        std::set<int> a = D, b = D;
        bool fa = walk(s->body[0], a, in, self_loop);
        bool fb = walk(s->body[1], b, in, self_loop);
        if (fa && fb) {
          std::set<int> both;
          for (int v : a)
            if (b.count(v)) both.insert(v);
          D = both;
        } else if (fa) {
          D = a;
        } else if (fb) {
          D = b;
        }
        return fa || fb;
      }
      case SK::Range:
        for (auto& a : s->args) note_expr(a, D, in);
        return true;
      case SK::For: {
        for (auto& a : s->args) note_expr(a, D, in);
        in.assigned_elsewhere.insert(s->var);
        std::set<int> inner = D;
        inner.insert(s->var);
        if (s->peeled) {
          std::set<int> first = inner;
          walk(s->body[1], first, in, self_loop);
        }
        walk(s->body[0], inner, in, self_loop);
        return true;  // may run no iteration: D is unchanged
      }
      case SK::While: {
        std::set<int> inner = D;
        if (s->peeled) {
          std::set<int> first = inner;
          walk(s->body[1], first, in, self_loop);
        }
        walk(s->body[0], inner, in, self_loop);
        return true;
      }
      case SK::Break:
        if (s->loop == self_loop) in.breaks_self = true;
        return false;
      case SK::Exit:
        in.exits = true;
        return false;
      case SK::Continue:
        return false;
    }
    return true;
  }

  // Whether loop s's iterations are independent as far as arrays go (LoopPlan::independent),
  // and with which arrays disjoint.
  bool independent(const Stmt& s, std::vector<std::pair<int, int>>* pairs) {
    if (!conds_.ok) return false;
    const Info in = survey(s);
    if (!arrays_forbid(s, in).empty()) return false;
    *pairs = disjoint_pairs(in);
    return true;
  }

  // The Temps only a NumPy complex operation's warnings read (the copies of its operands
  // lower_complex keeps for its ComplexWarn).
  std::set<int> warning_temps(const Stmt& body) const {
    std::map<int, int> loads, warn_loads;
    std::function<void(const Expr&, bool)> visit = [&](const Expr& e, bool warn) {
      if (!e) return;
      warn = warn || e->kind == EK::ComplexWarn;
      if (e->kind == EK::Load) {
        loads[e->var]++;
        if (warn) warn_loads[e->var]++;
      }
      for (auto& a : e->args) visit(a, warn);
    };
    ir::for_each_stmt(body, [&](const Stmt& x) {
      visit(x->cond, false);
      for (auto& a : x->args) visit(a, false);
      for (auto& f : x->effects) {
        visit(f.base, false);
        visit(f.index, false);
        visit(f.value, false);
      }
    });
    std::set<int> temps;
    for (auto& [v, k] : loads)
      if (n_.vars[(size_t)v].storage == ir::Var::Storage::Temp && k == warn_loads[v]) temps.insert(v);
    return temps;
  }

  // One iteration of loop s: what it assigns, reads first, subscripts, reduces.
  Info survey(const Stmt& s) {
    Info in;
    in.line = s->line;
    in.warning_temps = warning_temps(s->body[0]);
    ir::collect_assigned(s->body[0], &in.assigned);
    in.assigned.insert(s->var);
    in.draws = ir::draws_random(s->body[0]);
    ir::for_each_stmt(s, [&](const Stmt& x) {
      in.logged = in.logged || (x->resume >= 0 && n_.resumes[(size_t)x->resume].logged);
    });
    std::set<int> D = {s->var};
    walk(s->body[0], D, in, s->loop);
    // A break or continue of an enclosing loop (`for ... else` desugared: the inner loop's
    // break continues the outer loop) leaves the loop as its own break does.
    std::set<int> inside;
    ir::for_each_stmt(s, [&](const Stmt& x) {
      if (x->kind == SK::For || x->kind == SK::While) inside.insert(x->loop);
    });
    ir::for_each_stmt(s->body[0], [&](const Stmt& x) {
      if ((x->kind == SK::Break || x->kind == SK::Continue) && !inside.count(x->loop)) in.breaks_self = true;
    });
    return in;
  }

  // Why loop s's iterations may not run in another order as far as arrays (and breaks)
  // go, in a user's words; "" when they may.
  // With `summed`: arrays the loop only updates may be summed in a copy per thread
  // (ArrayReduction), which it then holds.
  std::string arrays_forbid(const Stmt& s, const Info& in, std::vector<ArrayReduction>* summed = nullptr) const {
    if (in.breaks_self) return "it may stop early (break)";
    if (in.exits) return "it may stop early (return or raise)";
    if (in.appends >= 0) return "it appends to " + name(in.appends) + ", in order";
    if (in.resizes >= 0) return "it changes the length of " + name(in.resizes) + ", in order";
    if (in.draws) return "it draws random numbers (the random module), which come in CPython's order";
    if (in.logged)
      return "it is or runs a call that changes the objects it loops over (its stores are logged, to be undone "
             "should CPython have to run the call again), in order";
    if (in.builds >= 0) return "it makes new lists (" + name(in.builds) + "), in order";
    if (!in.bad_index.empty()) return in.bad_index;
    for (int v : in.unproven_reads)
      if (in.written.count(v)) return kUnprovenIndex;
    for (int v : in.helper_reads)
      if (in.written.count(v))
        return name(v) + " is written in the loop and read by a helper it calls (the analysis does not see a "
               "helper's subscripts)";
    if (!facts_.no_carried(s->loop)) {
      const analysis::Condition* c = condition_of(FactKind::NoCarriedBesideUpdates, s->loop);
      if (!summed || !c || !facts_.has(Fact{FactKind::NoCarriedBesideUpdates, -1, 0, s->loop}))
        return carried_arrays(s->loop);
      for (int v : c->updated) {
        ArrayReduction ar;
        if (std::string why = array_reduction(s, v, &ar); !why.empty())
          return carried_arrays(s->loop) + "; " + name(v) + " is not summed in a copy per thread: " + why;
        summed->push_back(std::move(ar));
      }
    }
    if (std::string why = call_items_forbid(s); !why.empty()) return why;
    for (int v : in.arrays)
      if (in.assigned.count(v)) return name(v) + " is reassigned inside the loop";
    return "";
  }

  // The analysis read `x, y = h(a)` as values h computed from what it saw (a), not as memory
  // (PolyStmt::call_items). So they are where the inlined helper built the tuple it returns:
  // no item is still taken from an object, and the names get numbers.
  std::string call_items_forbid(const Stmt& s) const {
    const analysis::Condition* c = no_carried_condition(s->loop);
    if (!c || c->call_items.empty()) return "";
    const std::vector<std::pair<int, int>>& items = c->call_items;
    std::set<int> origins;
    for (auto& [v, o] : items) origins.insert(o);
    std::string why;
    ir::for_each_stmt(s->body[0], [&](const Stmt& x) {
      auto check = [&](const Expr& e) {
        ir::walk_expr(e, [&](const Expr& y) {
          // (An item of a tuple display, as divmod() is typed, is a value too.)
          if (why.empty() && y->kind == EK::Subscript && y->unpack > 0 && origins.count(y->origin) &&
              y->args[0]->kind != EK::Tuple)
            why = "it unpacks what a call returned at line " + std::to_string(x->line) +
                  " (the analysis sees only the items of a tuple an inlined helper builds)";
        });
      };
      check(x->cond);
      for (auto& a : x->args) check(a);
      for (auto& f : x->effects) {
        check(f.base);
        check(f.index);
        check(f.value);
        for (auto& [v, o] : items)
          if (why.empty() && f.kind == ir::Effect::Kind::Assign && f.var == v && !(f.value->type && f.value->type->is_scalar()))
            why = name(v) + " takes an item of what a call returned that is not a number";
      }
    });
    return why;
  }

  // Whether a Python int sum is a counter (Reduction::counter): each update `v + K` or
  // `v - K` outside loop s's inner loops (so it runs at most once per iteration), K an int
  // constant or a Python int variable the loop does not assign. Sets r's bound.
  template <class Cands>
  static void counter_bound(const Stmt& s, const Cands& cands, Reduction* r) {
    std::set<const ExprNode*> in_inner_loops;
    ir::for_each_stmt(s->body[0], [&](const Stmt& x) {
      if (x->kind == StmtNode::Kind::For || x->kind == StmtNode::Kind::While)
        ir::for_each_expr(x, [&](const Expr& e) { in_inner_loops.insert(e.get()); });
    });
    std::set<int> assigned;
    ir::collect_assigned(s->body[0], &assigned);
    assigned.insert(s->var);
    int64_t bound = 0;
    std::vector<int> vars;
    for (auto& c : cands) {
      const ExprNode* u = c.value;
      if (!u || u->kind != ExprNode::Kind::Binary || (u->binop != ir::BinOp::Add && u->binop != ir::BinOp::Sub) ||
          in_inner_loops.count(u) || u->args[0].get() != c.load)
        return;
      const Expr& k = u->args[1];
      if (k->kind == ExprNode::Kind::Load && !assigned.count(k->var) && k->type && k->type->kind == Type::Kind::PyInt &&
          !k->check_bound) {
        vars.push_back(k->var);
        continue;
      }
      if (k->kind != ExprNode::Kind::Const || k->value.kind != ir::ConstValue::Kind::Int) return;
      const int64_t m = k->value.i;
      if (m < -(int64_t(1) << 31) || m > (int64_t(1) << 31)) return;
      bound += m < 0 ? -m : m;
    }
    r->counter = true;
    r->bound = bound;
    r->bound_vars = std::move(vars);
  }

  // Arrays the loop writes must share no memory with the others it touches.
  static std::vector<std::pair<int, int>> disjoint_pairs(const Info& in) {
    std::vector<std::pair<int, int>> pairs;
    for (int w : in.written)
      for (int a : in.arrays)
        if (a != w && (a > w || !in.written.count(a))) pairs.push_back({w, a});
    return pairs;
  }

  // With one thread (and no GPU) a loop that could run in parallel is planned as such but
  // marked `one_thread`, its reason "one thread": codegen may run its parallel body on this
  // thread where that body's form pays (panel_rows).
  LoopPlan consider(const Stmt& s) {
    if (o_.threads >= 2 || o_.gpu) return consider_threads(s);
    LoopPlan lp = consider_threads(s);
    // (Not with reductions: that body would combine them from their identities; one
    // thread runs the loop itself.)
    const bool could = lp.parallel && lp.reductions.empty() && lp.array_reductions.empty() &&
                       lp.invariant_divisors.empty() && lp.invariant_operands.empty();
    if (!could) lp = LoopPlan{};
    lp.parallel = false;
    lp.one_thread = could;
    lp.why = "one thread (STAGEPY_THREADS)";
    return lp;
  }

  LoopPlan consider_threads(const Stmt& s) {
    LoopPlan lp;
    auto no = [](std::string why) {
      LoopPlan seq;
      seq.why = std::move(why);
      return seq;
    };
    if (!conds_.ok) return no(conds_.error);
    Info in = survey(s);
    if (std::string why = arrays_forbid(s, in, &lp.array_reductions); !why.empty()) return no(why);
    // A body that writes no array or list element may run on threads speculatively, and
    // again sequentially when one needs to stop for CPython (an overflow), as nothing but
    // its scalars is changed (LoopPlan::store_free). The stores of array reductions go to
    // the threads' copies.
    lp.store_free = true;
    ir::for_each_stmt(s->body[0], [&](const Stmt& x) {
      for (auto& f : x->effects) {
        const bool summed =
            f.kind == ir::Effect::Kind::Store && f.base->kind == EK::Load &&
            std::any_of(lp.array_reductions.begin(), lp.array_reductions.end(),
                        [&](const ArrayReduction& a) { return a.var == f.base->var; });
        if ((f.kind == ir::Effect::Kind::Store && !summed) || ir::changes_lists(f)) lp.store_free = false;
      }
    });
    // Companions (`k = i` beside `best = a[i]` under `if a[i] > best`): each assigned
    // there alone, and never read in the loop; they go with their reduction's parts.
    std::map<int, std::vector<int>> companions_of;
    std::set<int> as_companion;
    for (auto& [c, vs] : in.companions) {
      // Beside a min/max of an inner loop whose variables this loop sets afresh in every
      // iteration (`best_d = inf; best = 0` before `for c: if d < best_d: ...`): privates
      // here, like any scalar assigned before it is read.
      bool fresh = !in.exposed.count(c);
      for (int r : vs) fresh = fresh && !in.exposed.count(r);
      if (fresh) continue;
      as_companion.insert(c);
      if (vs.size() != 1 || in.assigned_elsewhere.count(c) || in.cands.count(c) || in.reads[c] != 0)
        return no(name(c) + " is carried from one iteration to the next");
      companions_of[vs[0]].push_back(c);
    }
    // Scalars.
    for (int v : in.assigned) {
      if (v == s->var || as_companion.count(v)) continue;
      // A statement's own Temp: assigned before it is read in every iteration, and dead
      // after its statement, so no thread's last value of it is kept (on the GPU, a
      // private makes the last iteration a launch of its own).
      if (n_.vars[(size_t)v].statement_local && !in.exposed.count(v)) continue;
      auto ex = in.exposed.find(v);
      if (ex == in.exposed.end() || n_.vars[(size_t)v].scratch) {
        lp.privates.push_back(v);
        continue;
      }
      // Read before it is assigned: only a reduction may do that.
      auto cs = in.cands.find(v);
      if (cs == in.cands.end() || in.assigned_elsewhere.count(v))
        return no(name(v) + " is carried from one iteration to the next");
      Reduction r0 = cs->second[0].r;
      std::set<const ExprNode*> red_loads;
      bool strict_first = true;
      // A sum that starts as a Python float and takes np.float64 values (`s = 0.0` before
      // `s += A[i, j]`; int and np.int64 alike): where the loop starts, `s` may still be a
      // float (an outer loop whose inner loops may not run), so the partial results keep
      // whether they were assigned (Reduction::np_type).
      if (TypeRef u = py_to_np_sum(cs->second)) {
        r0.np_type = r0.type;
        r0.type = u;
        for (auto& c : cs->second) c.r.type = u;
      } else {
        for (auto& c : cs->second)
          if (c.r.kind == Reduction::Kind::Arith && !types::same(c.load->type, c.r.type))
            return no(name(v) + " is carried from one iteration to the next (its type changes)");
      }
      for (auto& c : cs->second) {
        if (c.r.kind != r0.kind || (c.r.kind == Reduction::Kind::Arith && (c.r.op == ir::BinOp::Mul) != (r0.op == ir::BinOp::Mul)) ||
            !types::same(c.r.type, r0.type))
          return no(name(v) + " is carried from one iteration to the next (mixed updates)");
        red_loads.insert(c.load);
        strict_first = strict_first && c.r.strict_first;
      }
      if ((int)red_loads.size() != in.reads[v] - in.warning_reads[v])
        return no(name(v) + " is carried from one iteration to the next");
      const TypeRef& t = r0.np_type ? r0.np_type : r0.type;
      if (r0.kind == Reduction::Kind::Arith) {
        if (is_float(t)) {
          if (!o_.reassociate)
            return no("the sum in " + name(v) + " would be reassociated (STAGEPY_STRICT_FP=1)");
          if (n_.vars[(size_t)v].storage == ir::Var::Storage::Part) {
            // A part of a complex sum: of NumPy's complex128, its parts combine as np.float64.
            const int c = n_.vars[(size_t)v].parent;
            TypeRef np;
            bool py = false;
            ir::for_each_stmt(s->body[0], [&](const Stmt& x) {
              for (auto& f : x->effects)
                if (f.kind == ir::Effect::Kind::Assign && f.var == c) {
                  if (f.value->type && f.value->type->kind == Type::Kind::NpScalar) np = f.value->type;
                  else py = true;
                }
            });
            if (np && (py || (np->dtype != DType::Complex128 && np->dtype != DType::Complex64)))
              return no("the sum in " + name(c) + " is of " +
                        (py ? std::string("Python and NumPy complex numbers in turn") : np->str()) +
                        " (not a reduction stagepy splits)");
            // (complex64: each update rounds to float32, and so must the combination)
            bool rounded = true;
            for (auto& cand : cs->second)
              rounded = rounded && cand.value->kind == EK::Call;
            if (np && (np->dtype == DType::Complex64) != rounded)
              return no("the sum in " + name(c) + " mixes float32 and float64 updates");
            if (np) r0.np_part = types::np_scalar(np->dtype == DType::Complex64 ? DType::Float32 : DType::Float64);
          }
        } else if (is_np_int(t) || t->kind == Type::Kind::PyInt) {
          // An integer sum's parts may overflow where the sequential sum does not, and the
          // other way round: where that would matter (NumPy warns; a Python int leaves 64
          // bits), the loop runs speculatively, its updates and the combination checked,
          // and sequentially again when a check fails. That needs a body that writes nothing.
          const bool checked = t->kind == Type::Kind::PyInt || o_.fp != FpMode::Ignore;
          if (t->kind == Type::Kind::PyInt && !r0.np_type) counter_bound(s, cs->second, &r0);
          if (r0.counter) {
            r0.checked = false;
          } else if (checked && r0.op == ir::BinOp::Mul && t->kind != Type::Kind::PyInt) {
            // (A product may wrap and come back to the same value in another grouping: `s *
            // 2**40 * 2**40 * 0` wraps in order, not as s * 0.)
            return no("the integer product in " + name(v) + " could overflow in iteration order where its parts do not");
          } else if (checked && !lp.store_free)
            return no("the integer sum in " + name(v) + " could overflow, and the loop writes array elements");
          else
            r0.checked = checked;
        } else {
          return no("the sum in " + name(v) + " is of " + t->str() + " (not a reduction stagepy splits)");
        }
      } else if (min_max_float(t)) {
        if (!strict_first)
          return no("the " + std::string(r0.kind == Reduction::Kind::Min ? "min" : "max") + " in " + name(v) +
                    " keeps a NaN or the later of two equal values (min(e, v), max(e, v), <= or >=): it "
                    "depends on the order of the iterations");
        lp.ordered = true;
      } else if (t->kind == Type::Kind::PyChar) {
        return no("the min/max in " + name(v) + " is of characters of a str (not a reduction stagepy splits)");
      } else if (!is_int(t)) {
        return no("min/max of " + t->str() + " in " + name(v) + " depends on the order (NaN)");
      }
      Reduction r = r0;
      r.strict_first = strict_first;
      if (auto co = companions_of.find(v); co != companions_of.end()) {
        // The parts combine in order, a part's companions taken with its value: only the
        // strict forms say which iteration's companions are CPython's (the first of equal
        // values), and only one update may set them.
        if (r0.kind == Reduction::Kind::Arith || !strict_first || cs->second.size() != 1)
          return no(name(co->second[0]) + " is set beside " + name(v) +
                    " by a comparison that keeps the later of equal values (<= or >=), or by several");
        r.companions = co->second;
        lp.ordered = true;
      }
      for (auto& c : cs->second) r.updates.push_back(c.value);
      lp.reductions.push_back(std::move(r));
    }
    // An innermost loop runs on threads from min_parallel_trip() iterations on (the GPU
    // takes fewer where it has no reductions): where it never has that many, its parallel
    // version would only cost compile time.
    if (facts_.has(Fact{FactKind::FewIterations, -1, 0, s->loop}) && !ir::contains_loop(s->body[0]) &&
        (!o_.gpu || !lp.reductions.empty()))
      return no("it runs fewer than " + std::to_string(analysis::min_parallel_trip()) +
                " iterations each time (threads pay from there on)");
    // The same for a loop with loops inside, where all their bounds are numbers (the
    // neighbourhood loops of a stencil: `for di in (-1, 0, 1): for dj in (-1, 0, 1)`).
    // Bounds the call decides are estimated again where the loop starts (codegen).
    if (ir::contains_loop(s->body[0])) {
      auto own = constant_trip(s->loop);
      auto inner = own ? constant_work(s->body[0]) : std::nullopt;
      if (inner && *own * std::max<int64_t>(*inner, 1) < analysis::min_parallel_trip())
        return no("it and the loops inside it run fewer than " + std::to_string(analysis::min_parallel_trip()) +
                  " iterations each time (threads pay from there on)");
    }
    lp.alias_pairs = disjoint_pairs(in);
    for (auto& [v, t] : in.divisors) lp.invariant_divisors.push_back({v, t});
    lp.invariant_operands = invariant_operands(s);
    lp.blocks = !lp.ordered && uniform_work(s->body[0], in.assigned);
    lp.parallel = true;
    return lp;
  }

  // Whether every iteration of a body does about the same work: its loops' bounds do not
  // depend on the iteration (`varying`: the variables it assigns and the loop's own,
  // Info::assigned), no while loop or break makes it run longer or stop early, and a
  // branch holds no loop.
  // Such a loop's threads each take one contiguous block of iterations: a thread's rows of
  // a stencil are then the rows it wrote in the previous sweep, and only the two edges of
  // its block are shared with another core (dealt round-robin in chunks, every chunk edge
  // is, and a 200x200 sweep on two cores ran 1.3x faster than on one instead of 1.8x).
  // Triangular nests and data-dependent loops keep the chunks, which balance them.
  bool uniform_work(const Stmt& b, const std::set<int>& varying) const {
    switch (b->kind) {
      case SK::Block:
        for (auto& x : b->body)
          if (!uniform_work(x, varying)) return false;
        return true;
      case SK::Range:
        for (auto& a : b->args) {
          bool reads_varying = false;
          ir::walk_expr(a, [&](const Expr& e) {
            if (e->kind == ir::ExprNode::Kind::Load && varying.count(e->var)) reads_varying = true;
          });
          if (reads_varying) return false;
        }
        return true;
      case SK::For: return uniform_work(b->body[0], varying);
      case SK::If:
        return !ir::contains_loop(b->body[0]) && !ir::contains_loop(b->body[1]) &&
               uniform_work(b->body[0], varying) && uniform_work(b->body[1], varying);
      case SK::While:
      case SK::Break: return false;
      default: return true;
    }
  }

  // The iterations of loop `loop` where its range() arguments are numbers.
  std::optional<int64_t> constant_trip(int loop) const {
    auto it = ranges_.find(loop);
    if (it == ranges_.end()) return std::nullopt;
    return ir::constant_trip(it->second->args);
  }
  // The iterations of the loops in `b`, each statement one (as codegen's work_estimate),
  // where all their bounds are numbers; min_parallel_trip() at most.
  std::optional<int64_t> constant_work(const Stmt& b) const {
    const int64_t cap = analysis::min_parallel_trip();
    switch (b->kind) {
      case SK::Block: {
        int64_t sum = 0;
        for (auto& x : b->body) {
          auto w = constant_work(x);
          if (!w) return std::nullopt;
          sum = std::min(cap, sum + *w);
        }
        return sum;
      }
      case SK::Range: return 0;
      case SK::For: {
        auto t = constant_trip(b->loop);
        auto w = t ? constant_work(b->body[0]) : std::nullopt;
        if (!w) return std::nullopt;
        return std::min(cap, std::min(cap, *t) * std::max<int64_t>(*w, 1));
      }
      case SK::If: {
        auto x = constant_work(b->body[0]), y = x ? constant_work(b->body[1]) : std::nullopt;
        if (!y) return std::nullopt;
        return std::max(*x, *y);
      }
      case SK::While: return std::nullopt;
      default: return 1;
    }
  }

  std::map<int, const ir::StmtNode*> ranges_;  // loop -> its Range statement

  // The analysis's condition for loop `loop` carrying no dependence, if it has one.
  const analysis::Condition* no_carried_condition(int loop) const { return condition_of(FactKind::NoCarried, loop); }
  const analysis::Condition* condition_of(FactKind k, int loop) const {
    for (auto& c : conds_.conds)
      if (c.fact.kind == k && c.fact.loop == loop) return &c;
    return nullptr;
  }

  // Whether array variable `v`, which the analysis saw only updated in loop s, is an array
  // reduction there (ArrayReduction) as typed: every use of it in the body is an update
  // `v[x] = v[x] + e` (-, e +) that keeps the element's type, or its length or shape. "" and
  // `ar` filled when it is, else why not.
  std::string array_reduction(const Stmt& s, int v, ArrayReduction* ar) const {
    ar->var = v;
    std::set<const ExprNode*> reads;     // the v[x] of the updates
    std::vector<const ExprNode*> amounts;  // and what each adds or subtracts
    std::string why;
    auto fail = [&](std::string w) {
      if (why.empty()) why = std::move(w);
    };
    ir::for_each_stmt(s->body[0], [&](const Stmt& x) {
      for (auto& f : x->effects) {
        if (f.kind != ir::Effect::Kind::Store || f.base->kind != EK::Load || f.base->var != v) continue;
        const Expr& u = f.value;
        const int self = ir::update_operand(f);
        if (self < 0) {
          fail("a store into it at line " + std::to_string(x->line) + " is not an update of one element");
          continue;
        }
        const Expr& elem = u->args[(size_t)self];
        if (f.base->type && f.base->type->tagged)
          fail("its elements are floats and np.float64s, each with its own type, which a thread's copy would not keep");
        if (f.base->type && f.base->type->ragged) fail("its rows differ in length");
        if (!ar->elem) ar->elem = elem->type;
        if (!elem->type || !types::same(elem->type, ar->elem) || !types::same(u->type, ar->elem))
          fail("the update at line " + std::to_string(x->line) + " changes the type of its elements");
        reads.insert(elem.get());
        amounts.push_back(u->args[(size_t)(1 - self)].get());
        ar->updates.push_back(u.get());
      }
    });
    // No other use of v: its elements read elsewhere would see a thread's copy.
    std::function<void(const Expr&, const ExprNode*)> uses = [&](const Expr& e, const ExprNode* parent) {
      if (!e) return;
      if (e->kind == EK::Load && e->var == v) {
        const bool ok = parent && ((parent->kind == EK::Subscript && reads.count(parent)) ||
                                   (parent->kind == EK::Attr && parent->name == "shape") ||
                                   (parent->kind == EK::Call && parent->args[0]->type &&
                                    parent->args[0]->type->kind == Type::Kind::Callable &&
                                    parent->args[0]->type->builtin == Builtin::Len));
        if (!ok) fail("it is read other than by its updates");
      }
      for (auto& a : e->args) uses(a, e.get());
    };
    ir::for_each_stmt(s->body[0], [&](const Stmt& x) {
      uses(x->cond, nullptr);
      for (auto& a : x->args) uses(a, nullptr);
      for (auto& f : x->effects) {
        if (!(f.kind == ir::Effect::Kind::Store && f.base->kind == EK::Load && f.base->var == v)) uses(f.base, nullptr);
        uses(f.index, nullptr);
        uses(f.value, nullptr);
      }
    });
    if (!why.empty()) return why;
    const TypeRef& t = ar->elem;
    if (!t || ar->updates.empty()) return "it is not updated as the analysis saw";
    if (t->kind == Type::Kind::PyFloat || (t->kind == Type::Kind::NpScalar && (t->dtype == DType::Float64 ||
                                                                            t->dtype == DType::Float32))) {
      if (!o_.reassociate) return "its sums would be reassociated (STAGEPY_STRICT_FP=1)";
      return "";
    }
    if (t->kind == Type::Kind::PyInt) {
      ar->checked = true;
      return "";
    }
    if (t->kind == Type::Kind::NpScalar && dtype_is_int(t->dtype)) {
      ar->checked = o_.fp != FpMode::Ignore;
      if (!ar->checked) return "";
      // NumPy warns at each wrap in iteration order: only a monotone sum is checked enough
      // by its parts and their total.
      bool adds = true, subtracts = true;
      for (size_t k = 0; k < ar->updates.size(); k++) {
        const ExprNode* u = ar->updates[k];
        const ExprNode* amount = amounts[k];
        const bool nonneg = amount->kind == EK::Const && (amount->value.kind == ir::ConstValue::Kind::Int ||
                                                          amount->value.kind == ir::ConstValue::Kind::Bool) &&
                            (amount->value.kind == ir::ConstValue::Kind::Bool || amount->value.i >= 0);
        adds = adds && nonneg && u->binop == ir::BinOp::Add;
        subtracts = subtracts && nonneg && u->binop == ir::BinOp::Sub;
      }
      if (!adds && (!subtracts || !dtype_is_signed(t->dtype)))
        return "its updates add amounts that are not one non-negative constant (NumPy warns wherever the sum in "
               "iteration order wraps)";
      return "";
    }
    return "its elements are " + t->str();
  }

  std::string carried_arrays(int loop) const {
    if (const analysis::Condition* c = no_carried_condition(loop)) {
      for (auto& k : c->conflicts) {
        if (k.first_writes && !k.second_writes)
          return k.second + " reads the element " + k.first + " writes in an earlier iteration";
        if (!k.first_writes && k.second_writes)
          return k.second + " overwrites the element " + k.first + " reads in an earlier iteration";
        return k.first + " and " + k.second + " write the same element in different iterations";
      }
      return "its iterations may touch the same array elements";
    }
    return "no dependence analysis for it";
  }
};

}  // namespace

ParallelPlan plan_parallel(const TypedNest& tn, const FactSet& facts, const analysis::NestConditions& conds,
                           const PlanOptions& options) {
  return Planner(tn, facts, conds, options).run();
}

std::vector<std::pair<int, DType>> invariant_operands(const Stmt& loop) {
  std::set<int> assigned;
  ir::collect_assigned(loop, &assigned);
  std::set<std::pair<int, DType>> out;
  ir::for_each_expr(loop->body[0], [&](const Expr& x) {
    if (x->kind != EK::Binary || !x->type || x->type->kind != Type::Kind::NpScalar) return;
    const DType d = x->type->dtype;
    if (!((dtype_is_int(d) && d != DType::Int64) || d == DType::Float32)) return;
    for (auto& a : x->args)
      if (a->kind == EK::Load && !assigned.count(a->var) && a->type && a->type->kind == Type::Kind::PyInt)
        out.insert({a->var, d});
  });
  return {out.begin(), out.end()};
}

std::string to_string(const ParallelPlan& p, const ir::Nest& nest) {
  std::ostringstream o;
  o << "threads " << p.threads << "\n";
  for (size_t l = 0; l < p.loops.size(); l++) {
    const LoopPlan& lp = p.loops[l];
    if (!lp.parallel && lp.why.empty() && !lp.independent) continue;
    o << "L" << l << ": " << (lp.parallel ? "parallel" : lp.why.empty() ? "sequential" : "sequential: " + lp.why);
    if (lp.independent && !lp.parallel) {
      o << "; independent iterations; disjoint";
      for (auto& [a, b] : lp.alias_pairs) o << " " << nest.vars[(size_t)a].name << "/" << nest.vars[(size_t)b].name;
    }
    if (lp.interleave.lanes > 0) {
      o << "; interleaved " << lp.interleave.lanes << " lanes";
      if (lp.interleave.then_lanes > 0) o << " then " << lp.interleave.then_lanes;
      o << " over " << lp.interleave.fast << " statements, lane copies";
      for (int v : lp.interleave.lane_vars) o << " " << nest.vars[(size_t)v].name;
      if (!lp.interleave.seeded.empty()) {
        o << " (seeded";
        for (int v : lp.interleave.seeded) o << " " << nest.vars[(size_t)v].name;
        o << ")";
      }
    }
    if (lp.interchange) o << "; interchanged with its inner loop";
    if (lp.one_thread) o << "; parallel with more threads";
    if (lp.parallel) {
      o << "; private";
      for (int v : lp.privates) o << " " << nest.vars[(size_t)v].name;
      o << "; reductions";
      for (auto& r : lp.reductions) {
        o << " " << nest.vars[(size_t)r.var].name;
        if (r.np_type) o << " (to " << r.np_type->str() << ")";
        if (r.checked) o << " (checked)";
        if (r.counter) {
          o << " (a counter: at most " << r.bound;
          for (int v : r.bound_vars) o << " + |" << nest.vars[(size_t)v].name << "|";
          o << " per iteration)";
        }
        for (int c : r.companions) o << " +" << nest.vars[(size_t)c].name;
      }
      if (!lp.invariant_operands.empty()) {
        o << "; checked to fit before";
        for (auto& [v, d] : lp.invariant_operands) o << " " << nest.vars[(size_t)v].name << " (" << dtype_name(d) << ")";
      }
      if (lp.ordered) o << " (in order)";
      else if (lp.blocks) o << "; one block per thread";
      if (!lp.array_reductions.empty()) {
        o << "; summed per thread";
        for (auto& a : lp.array_reductions)
          o << " " << nest.vars[(size_t)a.var].name << (a.checked ? " (checked)" : "");
      }
      if (lp.store_free) o << "; writes nothing";
      o << "; disjoint";
      for (auto& [a, b] : lp.alias_pairs) o << " " << nest.vars[(size_t)a].name << "/" << nest.vars[(size_t)b].name;
    }
    o << "\n";
  }
  return o.str();
}

}  // namespace stagepy::specialize
