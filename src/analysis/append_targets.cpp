// See append_targets.h.
#include "analysis/append_targets.h"

#include <algorithm>

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
  // Per variable: every use of it, the uses as L in `len(L)` or `L.append(x)`, the appends.
  std::vector<int> uses(nv, 0), allowed(nv, 0), calls(nv, 0);
  ir::for_each_expr(nest.root, [&](const Expr& e) {
    const int u = e->kind == ExprNode::Kind::Load || e->kind == ExprNode::Kind::Attr ? list_var(e) : -1;
    if (u >= 0 && (size_t)u < nv) uses[(size_t)u]++;
    const int v = len_call(e, nest);
    if (v >= 0 && (size_t)v < nv) allowed[(size_t)v]++;
  });
  ir::for_each_stmt(nest.root, [&](const Stmt& s) {
    for (const auto& f : s->effects) {
      if (f.kind != ir::Effect::Kind::Eval) continue;
      // (The item may not use the list itself, `out.append(out)`: that is another use.)
      const int v = append_call(f.value);
      if (v >= 0 && (size_t)v < nv) allowed[(size_t)v]++, calls[(size_t)v]++;
    }
  });
  std::vector<bool> target(nv, false);
  for (size_t v = 0; v < nv; v++) {
    const ir::Var& var = nest.vars[v];
    if (calls[v] == 0 || allowed[v] != uses[v] || var.assigned) continue;
    if (var.storage != ir::Var::Storage::Fast && var.storage != ir::Var::Storage::Cell &&
        var.storage != ir::Var::Storage::Name && var.storage != ir::Var::Storage::Global &&
        var.storage != ir::Var::Storage::Attr)
      continue;
    target[v] = true;
    nest.vars[v].appended = true;
  }
  if (std::find(target.begin(), target.end(), true) == target.end()) return nest;
  nest.root = rewrite(nest.root, target);
  return nest;
}

}  // namespace stagepy::analysis
