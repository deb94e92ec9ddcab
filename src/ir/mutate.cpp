// See mutate.h.
#include "ir/mutate.h"

namespace stagepy::ir {

Expr map_expr(const Expr& e, const ExprFn& f) {
  if (!e) return e;
  bool changed = false;
  std::vector<Expr> args;
  args.reserve(e->args.size());
  for (auto& a : e->args) {
    Expr m = map_expr(a, f);
    changed = changed || m != a;
    args.push_back(std::move(m));
  }
  if (!changed) return f(e);
  auto c = std::make_shared<ExprNode>(*e);
  c->args = std::move(args);
  return f(c);
}

Stmt map_exprs(const Stmt& s, const ExprFn& f) {
  auto c = std::make_shared<StmtNode>(*s);
  for (auto& b : c->body) b = map_exprs(b, f);
  for (auto& e : c->effects) {
    e.base = map_expr(e.base, f);
    e.index = map_expr(e.index, f);
    e.value = map_expr(e.value, f);
  }
  c->cond = map_expr(c->cond, f);
  for (auto& a : c->args) a = map_expr(a, f);
  c->range_callee = map_expr(c->range_callee, f);
  return c;
}

void walk_expr(const Expr& e, const std::function<void(const Expr&)>& f) {
  if (!e) return;
  f(e);
  for (auto& a : e->args) walk_expr(a, f);
}

bool reads_var(const Expr& e, int var) {
  bool r = false;
  walk_expr(e, [&](const Expr& x) { r = r || (x->kind == ExprNode::Kind::Load && x->var == var); });
  return r;
}

void collect_assigned(const Stmt& s, std::set<int>* out) {
  for_each_stmt(s, [&](const Stmt& x) {
    for (auto& e : x->effects)
      if (e.kind == Effect::Kind::Assign) out->insert(e.var);
    if (x->kind == StmtNode::Kind::For) out->insert(x->var);
  });
}

bool contains_loop(const Stmt& s) {
  bool found = false;
  for_each_stmt(s, [&](const Stmt& x) {
    found = found || x->kind == StmtNode::Kind::For || x->kind == StmtNode::Kind::While;
  });
  return found;
}

void for_each_expr(const Stmt& s, const std::function<void(const Expr&)>& f) {
  for (auto& e : s->effects) {
    walk_expr(e.base, f);
    walk_expr(e.index, f);
    walk_expr(e.value, f);
  }
  walk_expr(s->cond, f);
  for (auto& a : s->args) walk_expr(a, f);
  walk_expr(s->range_callee, f);
  for (auto& b : s->body) for_each_expr(b, f);
}

void for_each_stmt(const Stmt& s, const std::function<void(const Stmt&)>& f) {
  f(s);
  for (auto& b : s->body) for_each_stmt(b, f);
}

}  // namespace stagepy::ir
