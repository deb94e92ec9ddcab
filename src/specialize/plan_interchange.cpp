// See plan_interchange.h.
#include "specialize/plan_interchange.h"

#include <set>

#include "ir/mutate.h"

namespace stagepy::specialize {
namespace {

using ir::Expr;
using ir::ExprNode;
using ir::Stmt;
using ir::StmtNode;
using EKind = ExprNode::Kind;
using SKind = StmtNode::Kind;

// For an element access (a subscript chain A[i, j] or A[i][j] giving a scalar), the
// subscript of the array's contiguous dimension, or null where the layout does not say.
Expr contiguous_subscript(const Expr& e) {
  std::vector<Expr> idx;  // outermost subscript last
  Expr at = e;
  while (at->kind == EKind::Subscript) {
    const Expr& i = at->args[1];
    if (i->kind == EKind::Tuple) {
      for (size_t k = i->args.size(); k-- > 0;) idx.push_back(i->args[k]);
    } else {
      idx.push_back(i);
    }
    at = at->args[0];
  }
  const TypeRef& t = at->type;
  if (!t || t->kind != Type::Kind::Array || (int)idx.size() != t->ndim) return nullptr;
  if (t->layout == Type::CContig) return idx.front();
  if (t->layout == Type::FContig) return idx.back();
  return nullptr;
}

// The straight-line body of I: Segs, then perhaps `continue` of I, whose variables (not
// I's or J's) are scalars assigned before they are read, in every iteration.
bool body_ok(const std::vector<Stmt>& body, int iloop, int ivar, int jvar) {
  for (size_t k = 0; k < body.size(); k++) {
    const Stmt& s = body[k];
    if (s->kind == SKind::Continue) {
      if (s->loop != iloop || k + 1 != body.size()) return false;
      continue;
    }
    if (s->kind != SKind::Seg) return false;
    for (auto& f : s->effects)
      if (ir::changes_lists(f)) return false;  // (its loops are not independent either)
    for (auto& f : s->effects)
      if (f.kind == ir::Effect::Kind::Assign &&
          (f.var == ivar || f.var == jvar || !f.value->type || !f.value->type->is_scalar()))
        return false;
  }
  return ir::assigned_before_read(body);
}

// Accesses whose contiguous subscript steps with `v`.
int contiguous_in(const std::vector<Stmt>& body, int v, int other) {
  int n = 0;
  auto count = [&](const Expr& e) {
    Expr c = contiguous_subscript(e);
    if (c && ir::var_plus_offset(c, v) && !ir::reads_var(c, other)) n++;
  };
  for (auto& s : body) {
    ir::for_each_expr(s, [&](const Expr& x) {
      if (x->kind == EKind::Subscript && x->type && x->type->is_scalar()) count(x);
    });
    for (auto& f : s->effects) {
      if (f.kind != ir::Effect::Kind::Store || f.part >= 0) continue;
      count(ir::make_subscript(f.base, f.index));
    }
  }
  return n;
}

void consider(const Stmt& J, ParallelPlan* plan) {
  LoopPlan& lp = plan->loops[(size_t)J->loop];
  if (J->peeled || !lp.independent || !lp.reductions.empty() || lp.interleave.lanes > 0) return;
  const std::vector<Stmt> jb = ir::body_statements(J);
  if (jb.size() != 2 || jb[0]->kind != SKind::Range || jb[1]->kind != SKind::For || jb[1]->peeled ||
      jb[0]->loop != jb[1]->loop)
    return;
  const Stmt& I = jb[1];
  std::set<int> assigned;
  ir::collect_assigned(J->body[0], &assigned);
  assigned.insert(J->var);
  for (auto& a : jb[0]->args)
    for (int v : assigned)
      if (ir::reads_var(a, v)) return;
  const std::vector<Stmt> ib = ir::flatten_blocks(I->body[0]);
  if (!body_ok(ib, I->loop, I->var, J->var)) return;
  if (contiguous_in(ib, J->var, I->var) <= contiguous_in(ib, I->var, J->var)) return;
  lp.interchange = true;
}

}  // namespace

void plan_interchange(const TypedNest& tn, ParallelPlan* plan) {
  if (plan->loops.empty()) return;
  ir::for_each_stmt(tn.nest.root, [&](const Stmt& s) {
    if (s->kind == SKind::For) consider(s, plan);
  });
}

}  // namespace stagepy::specialize
