// See append_targets.h.
#include "analysis/append_targets.h"

#include <algorithm>
#include <functional>

#include "ir/mutate.h"

namespace stagepy::analysis {
namespace {

using ir::Expr;
using ir::ExprNode;
using ir::Stmt;
using ir::StmtNode;

// The variable a list expression names: v for `v`; for `self.x`, its attribute variable
// (bind_module_attributes); else -1.
int list_var(const Expr& e) {
  if (e->kind == ExprNode::Kind::Load) return e->var;
  if (e->kind == ExprNode::Kind::Attr && e->pseudo >= 0) return e->pseudo;
  return -1;
}

// The list variable of `L.append(x)` (one positional argument), or -1.
int append_call(const Expr& e) {
  if (!e || e->kind != ExprNode::Kind::Call || e->args.size() != 2 || !e->kwnames.empty()) return -1;
  const Expr& callee = e->args[0];
  if (callee->kind != ExprNode::Kind::Attr || callee->name != "append" || callee->args.empty()) return -1;
  return list_var(callee->args[0]);
}

// The list variable of `L.append(x)`, `L.pop()` or `L.pop(k)` with L a plain variable, or -1.
int resize_call(const Expr& e) {
  if (!e || e->kind != ExprNode::Kind::Call || !e->kwnames.empty()) return -1;
  const Expr& callee = e->args[0];
  if (callee->kind != ExprNode::Kind::Attr || callee->args.empty() || callee->args[0]->kind != ExprNode::Kind::Load)
    return -1;
  if ((callee->name == "append" && e->args.size() == 2) ||
      (callee->name == "pop" && (e->args.size() == 1 || e->args.size() == 2)))
    return callee->args[0]->var;
  return -1;
}

// The list variable of `len(L)` (the name `len`; type inference checks it is the builtin), or -1.
int len_call(const Expr& e, const ir::Nest& nest) {
  if (!e || e->kind != ExprNode::Kind::Call || e->args.size() != 2 || !e->kwnames.empty()) return -1;
  if (e->args[0]->kind != ExprNode::Kind::Load || nest.vars[(size_t)e->args[0]->var].name != "len") return -1;
  return list_var(e->args[1]);
}

Stmt rewrite(const Stmt& s, const std::vector<bool>& target) {
  auto c = std::make_shared<StmtNode>(*s);
  for (auto& f : c->effects) {
    if (f.kind != ir::Effect::Kind::Eval) continue;
    const int v = append_call(f.value);
    if (v < 0 || !target[(size_t)v]) continue;
    ir::Effect a;
    a.kind = ir::Effect::Kind::Append;
    a.base = f.value->args[0]->args[0];
    a.value = f.value->args[1];
    a.origin = f.origin;
    f = a;
  }
  for (auto& b : c->body) b = rewrite(b, target);
  return c;
}

}  // namespace

int appended_list_var(const ir::Expr& base) { return list_var(base); }

ir::Nest append_targets(ir::Nest nest) {
  const size_t nv = nest.vars.size();
  // Per variable: every use of it, the appends to it, its assignments, those of a new list.
  std::vector<int> uses(nv, 0), calls(nv, 0), assigns(nv, 0), made(nv, 0);
  ir::for_each_expr(nest.root, [&](const Expr& e) {
    const int u = e->kind == ExprNode::Kind::Load || e->kind == ExprNode::Kind::Attr ? list_var(e) : -1;
    if (u >= 0 && (size_t)u < nv) uses[(size_t)u]++;
  });
  ir::for_each_stmt(nest.root, [&](const Stmt& s) {
    if (s->kind == StmtNode::Kind::For && s->var >= 0 && (size_t)s->var < nv) assigns[(size_t)s->var]++;
    for (const auto& f : s->effects) {
      if (f.kind == ir::Effect::Kind::Assign && f.var >= 0 && (size_t)f.var < nv) {
        assigns[(size_t)f.var]++;
        if (f.value && f.value->kind == ExprNode::Kind::NewList) made[(size_t)f.var]++;
      }
      const int v = f.kind == ir::Effect::Kind::Eval ? append_call(f.value) : -1;
      if (v >= 0 && (size_t)v < nv) calls[(size_t)v]++;
    }
  });
  // Candidates: lists the nest appends to and never assigns (their items are appended to
  // the list object once the kernel returns), and variables it assigns only new lists
  // (`row = []`: the lists are made when the kernel returns).
  std::vector<bool> target(nv, false);
  for (size_t v = 0; v < nv; v++) {
    const ir::Var& var = nest.vars[v];
    if (var.storage != ir::Var::Storage::Fast && var.storage != ir::Var::Storage::Cell &&
        var.storage != ir::Var::Storage::Name && var.storage != ir::Var::Storage::Global &&
        var.storage != ir::Var::Storage::Attr)
      continue;
    target[v] = var.assigned ? assigns[v] > 0 && made[v] == assigns[v] : calls[v] > 0;
  }
  // A candidate is used only as L in `L.append(x)` and `len(L)`, or as an item appended
  // to a list that is a target itself (`rows.append(row)`, `rows.append([i, row])`); drop
  // the others until none is left to drop.
  for (bool changed = true; changed;) {
    changed = false;
    std::vector<int> allowed(nv, 0);
    std::function<void(const Expr&)> item = [&](const Expr& x) {
      if (!x) return;
      if (x->kind == ExprNode::Kind::Load && (size_t)x->var < nv) allowed[(size_t)x->var]++;
      if (x->kind == ExprNode::Kind::NewList)
        for (const Expr& a : x->args) item(a);
    };
    ir::for_each_expr(nest.root, [&](const Expr& e) {
      const int v = len_call(e, nest);
      if (v >= 0 && (size_t)v < nv) allowed[(size_t)v]++;
    });
    ir::for_each_stmt(nest.root, [&](const Stmt& s) {
      for (const auto& f : s->effects) {
        if (f.kind == ir::Effect::Kind::Assign && f.value && f.value->kind == ExprNode::Kind::NewList &&
            (size_t)f.var < nv && target[(size_t)f.var])
          for (const Expr& a : f.value->args) item(a);
        const int v = f.kind == ir::Effect::Kind::Eval ? append_call(f.value) : -1;
        if (v < 0 || (size_t)v >= nv) continue;
        allowed[(size_t)v]++;
        if (target[(size_t)v]) item(f.value->args[1]);
      }
    });
    for (size_t v = 0; v < nv; v++)
      if (target[v] && allowed[v] != uses[v]) target[v] = false, changed = true;
  }
  // The other lists that grow or shrink: read as well (not targets), held by headers.
  ir::for_each_expr(nest.root, [&](const Expr& e) {
    const int v = resize_call(e);
    if (v < 0 || (size_t)v >= nv || target[(size_t)v]) return;
    const ir::Var::Storage st = nest.vars[(size_t)v].storage;
    if (st != ir::Var::Storage::Fast && st != ir::Var::Storage::Cell && st != ir::Var::Storage::Name &&
        st != ir::Var::Storage::Global)
      return;
    nest.vars[(size_t)v].resized = nest.vars[(size_t)v].assigned = true;
  });
  bool any = false;
  for (size_t v = 0; v < nv; v++) {
    if (!target[v]) continue;
    nest.vars[v].appended = true;
    any = any || calls[v] > 0;
  }
  if (!any) return nest;
  nest.root = rewrite(nest.root, target);
  return nest;
}

}  // namespace stagepy::analysis
