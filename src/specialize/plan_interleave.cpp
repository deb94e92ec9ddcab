// See plan_interleave.h.
#include "specialize/plan_interleave.h"

#include <functional>
#include <map>
#include <set>

#include "ir/mutate.h"

namespace stagepy::specialize {
namespace {

using ir::Expr;
using ir::ExprNode;
using ir::Stmt;
using ir::StmtNode;
using EK = ExprNode::Kind;
using SK = StmtNode::Kind;
using ir::contains_loop;
using ir::reads_var;

bool is_float(const TypeRef& t) {
  if (!t) return false;
  if (t->kind == Type::Kind::Union) {
    for (auto& m : t->elems)
      if (!is_float(m)) return false;
    return !t->elems.empty();
  }
  return t->kind == Type::Kind::PyFloat || (t->kind == Type::Kind::NpScalar && dtype_is_float(t->dtype));
}

// Checks the leading part F of one loop's body (plan_interleave.h) statement by statement.
class FastPart {
 public:
  FastPart(const std::set<int>& body_assigns) : vj_(body_assigns) {}

  std::set<int> assigned;  // variables F's statements assign
  std::set<int> loop_vars; // variables of F's loops
  bool recurrence = false; // a float variable updated from itself in one of F's loops

  // A statement at F's top level; D: the variables assigned on every way so far.
  bool top(const Stmt& s, std::set<int>& D) {
    switch (s->kind) {
      case SK::Block:
        for (auto& b : s->body)
          if (!top(b, D)) return false;
        return true;
      case SK::Seg:
        return simple(s, D, -1, false) == 1;
      case SK::If:
        if (s->cond->kind == EK::LoopNonEmpty) {
          // Typing's guard around a peeled loop: the same for every lane.
          std::set<int> a = D, b = D;
          return top(s->body[0], a) && top(s->body[1], b);
        }
        return !contains_loop(s) && simple(s, D, -1, false) == 1;
      case SK::Range:
        for (auto& a : s->args)
          if (!invariant(a)) return false;
        return true;
      case SK::For: {
        for (auto& a : s->args)
          if (!invariant(a)) return false;
        loop_vars.insert(s->var);
        std::set<int> inner = D;
        inner.insert(s->var);
        if (s->peeled) {
          std::set<int> first = inner;
          if (simple(s->body[1], first, s->loop, true) < 0) return false;
        }
        return simple(s->body[0], inner, s->loop, true) >= 0;  // may run no iteration: D unchanged
      }
      default:
        return false;
    }
  }

 private:
  const std::set<int>& vj_;

  // Reads only variables the body does not assign, or that this iteration already did.
  bool reads_ok(const Expr& e, const std::set<int>& D) const {
    bool ok = true;
    ir::walk_expr(e, [&](const Expr& x) {
      if (x->kind == EK::Load && vj_.count(x->var) && !D.count(x->var)) ok = false;
    });
    return ok;
  }
  bool invariant(const Expr& e) const { return reads_ok(e, {}); }

  // A statement without loops: a loop body's (`inner`: that loop's id) or F's own. Returns
  // -1 where F cannot hold it, 0 where no way falls through it (continue), else 1.
  int simple(const Stmt& s, std::set<int>& D, int inner, bool in_loop) {
    switch (s->kind) {
      case SK::Block:
        for (auto& b : s->body) {
          int r = simple(b, D, inner, in_loop);
          if (r <= 0) return r;
        }
        return 1;
      case SK::Seg:
        for (auto& f : s->effects) {
          if (f.kind == ir::Effect::Kind::Store) return -1;
          if (!reads_ok(f.base, D) || !reads_ok(f.index, D) || !reads_ok(f.value, D)) return -1;
        }
        for (auto& f : s->effects) {
          if (f.kind != ir::Effect::Kind::Assign) continue;
          assigned.insert(f.var);
          if (in_loop && is_float(f.value->type) && reads_var(f.value, f.var)) recurrence = true;
          D.insert(f.var);
        }
        return 1;
      case SK::If: {
        if (s->cond->kind == EK::LoopNonEmpty || !reads_ok(s->cond, D)) return -1;
        std::set<int> a = D, b = D;
        int ra = simple(s->body[0], a, inner, in_loop), rb = simple(s->body[1], b, inner, in_loop);
        if (ra < 0 || rb < 0) return -1;
        if (ra && rb) {
          std::set<int> both;
          for (int v : a)
            if (b.count(v)) both.insert(v);
          D = both;
        } else if (ra) {
          D = a;
        } else if (rb) {
          D = b;
        }
        return ra || rb ? 1 : 0;
      }
      case SK::Continue:
        return inner >= 0 && s->loop == inner ? 0 : -1;
      default:
        return -1;
    }
  }
};

// Whether `e` is J's variable plus or minus something that does not read it.
bool unit_in(const Expr& e, int jvar) {
  if (e->kind == EK::Load) return e->var == jvar;
  if (e->kind != EK::Binary) return false;
  if (e->binop == ir::BinOp::Add)
    return (unit_in(e->args[0], jvar) && !reads_var(e->args[1], jvar)) ||
           (unit_in(e->args[1], jvar) && !reads_var(e->args[0], jvar));
  if (e->binop == ir::BinOp::Sub) return unit_in(e->args[0], jvar) && !reads_var(e->args[1], jvar);
  return false;
}

// Whether the lanes' elements lie side by side in memory wherever F's loops subscript an
// array with J's variable: only in the last position, as `j + c`, of arrays whose last
// dimension is contiguous, with J stepping by 1 or -1. Then the lanes' loads are vector
// loads; elsewhere (a row per lane: `A[j, k]`) each lane streams its own row, and running
// them together was measured slower than one row after the other.
bool lanes_side_by_side(const std::vector<Stmt>& fast, int jvar, const Expr& step) {
  if (step && !(step->kind == EK::Const && step->value.kind == ir::ConstValue::Kind::Int &&
                (step->value.i == 1 || step->value.i == -1)))
    return false;
  bool ok = true;
  for (auto& x : fast)
    ir::for_each_stmt(x, [&](const Stmt& loop) {
      if (loop->kind != SK::For) return;
      for (auto& body : loop->body)
        ir::for_each_expr(body, [&](const Expr& e) {
          if (e->kind != EK::Subscript || !reads_var(e->args[1], jvar)) return;
          const TypeRef& t = e->args[0]->type;
          const bool contiguous = t && t->kind == Type::Kind::Array &&
                                  (t->layout == Type::CContig || (t->ndim == 1 && t->layout == Type::FContig));
          const Expr& index = e->args[1];
          const size_t n = index->kind == EK::Tuple ? index->args.size() : 1;
          for (size_t p = 0; p < n; p++) {
            const Expr& at = index->kind == EK::Tuple ? index->args[p] : index;
            if (!reads_var(at, jvar)) continue;
            if (p + 1 != n || !contiguous || !unit_in(at, jvar)) ok = false;
          }
        });
    });
  return ok;
}

// Expression nodes of F (its loops' bodies once): the size of one lane's copy.
size_t size_of(const std::vector<Stmt>& xs, size_t n) {
  size_t ops = 0;
  for (size_t k = 0; k < n; k++) ir::for_each_expr(xs[k], [&](const Expr&) { ops++; });
  return ops;
}

Interleave plan_loop(const Stmt& J, const Expr& step) {
  Interleave il;
  const std::vector<Stmt> xs = interleave_body(J->body[0]);
  size_t f = 0;
  for (size_t k = 0; k < xs.size(); k++)
    if (contains_loop(xs[k])) f = k + 1;
  if (f == 0) return il;
  std::set<int> vj;
  ir::collect_assigned(J->body[0], &vj);
  vj.insert(J->var);
  FastPart fp(vj);
  std::set<int> D = {J->var};
  for (size_t k = 0; k < f; k++)
    if (!fp.top(xs[k], D)) return il;
  if (!fp.recurrence || fp.assigned.count(J->var)) return il;
  if (!lanes_side_by_side(std::vector<Stmt>(xs.begin(), xs.begin() + (long)f), J->var, step)) return il;
  for (int v : fp.loop_vars)
    if (fp.assigned.count(v)) return il;
  std::set<int> rest;
  for (size_t k = f; k < xs.size(); k++) ir::collect_assigned(xs[k], &rest);
  std::vector<int> seeded;
  for (int v : fp.assigned)
    if (!D.count(v)) seeded.push_back(v);
  for (int v : seeded)
    if (rest.count(v)) return il;
  for (int v : fp.loop_vars)
    if (rest.count(v)) return il;
  // Each lane's copy of F is generated: keep the code small.
  const size_t ops = size_of(xs, f);
  il.lanes = ops <= 32 ? 8 : ops <= 96 ? 4 : 0;
  if (il.lanes == 0) return il;
  il.fast = f;
  il.lane_vars.assign(fp.assigned.begin(), fp.assigned.end());
  il.seeded = seeded;
  return il;
}

}  // namespace

std::vector<Stmt> interleave_body(const Stmt& body) {
  std::vector<Stmt> xs;
  std::function<void(const Stmt&)> flat = [&](const Stmt& x) {
    if (x->kind == StmtNode::Kind::Block) {
      for (auto& b : x->body) flat(b);
    } else {
      xs.push_back(x);
    }
  };
  flat(body);
  return xs;
}

void plan_interleave(const TypedNest& tn, ParallelPlan* plan) {
  // Each loop's range() arguments: on its For, or (typed IR) on the Range before it.
  std::map<int, std::vector<Expr>> range_args;
  ir::for_each_stmt(tn.nest.root, [&](const Stmt& s) {
    if (s->kind == StmtNode::Kind::Range || (s->kind == StmtNode::Kind::For && !s->args.empty()))
      range_args[s->loop] = s->args;
  });
  ir::for_each_stmt(tn.nest.root, [&](const Stmt& s) {
    if (s->kind != StmtNode::Kind::For) return;
    LoopPlan& lp = plan->loops[(size_t)s->loop];
    const std::vector<Expr>& args = range_args[s->loop];
    if (lp.independent) lp.interleave = plan_loop(s, args.size() == 3 ? args[2] : nullptr);
  });
}

}  // namespace stagepy::specialize
