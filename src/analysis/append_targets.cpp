// See append_targets.h.
#include "analysis/append_targets.h"

#include <map>

#include "ir/mutate.h"

namespace stagepy::analysis {
namespace {

using ir::Expr;
using ir::ExprNode;
using ir::Stmt;
using ir::StmtNode;

// The list variable of `v.append(x)` (one positional argument), or -1.
int append_call(const Expr& e) {
  if (!e || e->kind != ExprNode::Kind::Call || e->args.size() != 2 || !e->kwnames.empty()) return -1;
  const Expr& callee = e->args[0];
  if (callee->kind != ExprNode::Kind::Attr || callee->name != "append" || callee->args.empty() ||
      callee->args[0]->kind != ExprNode::Kind::Load)
    return -1;
  return callee->args[0]->var;
}

// The list variable of `len(v)` (the name `len`; type inference checks it is the builtin), or -1.
int len_call(const Expr& e) {
  if (!e || e->kind != ExprNode::Kind::Call || e->args.size() != 2 || !e->kwnames.empty()) return -1;
  if (e->args[0]->kind != ExprNode::Kind::Load || e->args[1]->kind != ExprNode::Kind::Load) return -1;
  return e->args[1]->var;
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

ir::Nest append_targets(ir::Nest nest) {
  const size_t nv = nest.vars.size();
  std::vector<int> loads(nv, 0), appends(nv, 0), calls(nv, 0);
  ir::for_each_expr(nest.root, [&](const Expr& e) {
    if (e->kind == ExprNode::Kind::Load && (size_t)e->var < nv) loads[(size_t)e->var]++;
    // len(v) is the only other use allowed: the kernel counts the items it appended.
    const int v = len_call(e);
    if (v >= 0 && (size_t)v < nv && nest.vars[(size_t)e->args[0]->var].name == "len") appends[(size_t)v]++;
  });
  ir::for_each_stmt(nest.root, [&](const Stmt& s) {
    for (const auto& f : s->effects) {
      if (f.kind != ir::Effect::Kind::Eval) continue;
      const int v = append_call(f.value);
      // The item may not read the list itself (`out.append(out)`): that is a load too.
      if (v >= 0) appends[(size_t)v]++, calls[(size_t)v]++;
    }
  });
  std::vector<bool> target(nv, false);
  bool any = false;
  for (size_t v = 0; v < nv; v++) {
    const ir::Var& var = nest.vars[v];
    if (calls[v] == 0 || appends[v] != loads[v] || var.assigned) continue;
    if (var.storage != ir::Var::Storage::Fast && var.storage != ir::Var::Storage::Cell &&
        var.storage != ir::Var::Storage::Name && var.storage != ir::Var::Storage::Global)
      continue;
    target[v] = true;
    any = true;
  }
  if (!any) return nest;
  for (size_t v = 0; v < nv; v++)
    if (target[v]) nest.vars[v].appended = true;
  nest.root = rewrite(nest.root, target);
  return nest;
}

}  // namespace stagepy::analysis
