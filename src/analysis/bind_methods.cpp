// See bind_methods.h.
#include "analysis/bind_methods.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "ir/mutate.h"

namespace stagepy::analysis {
namespace {
using ir::Expr;
using ir::ExprNode;
using K = ExprNode::Kind;

// The list variable an item expression `L[i]` reads (L a variable or an attribute read at
// entry, `self.ps`), else -1.
int list_of_item(const Expr& e) {
  if (!e || e->kind != K::Subscript || !e->name.empty() || e->unpack != 0) return -1;
  const Expr& b = e->args[0];
  if (b->kind == K::Load) return b->var;
  if (b->kind == K::Attr && b->pseudo >= 0) return b->pseudo;
  return -1;
}

bool frame_variable(const ir::Var& v) {
  using S = ir::Var::Storage;
  return v.storage == S::Fast || v.storage == S::Cell || v.storage == S::Name || v.storage == S::Global;
}
}  // namespace

ir::Nest bind_methods(ir::Nest nest) {
  // Per variable the nest assigns: the lists whose items are every value it is given (empty
  // where some value is anything else, or it is a loop's counter).
  std::map<int, std::set<int>> item_sources;
  std::set<int> not_items;
  ir::for_each_stmt(nest.root, [&](const ir::Stmt& s) {
    if (s->kind == ir::StmtNode::Kind::For && s->var >= 0) not_items.insert(s->var);
    for (auto& f : s->effects) {
      if (f.kind != ir::Effect::Kind::Assign || f.var < 0) continue;
      const int l = list_of_item(f.value);
      if (l < 0) not_items.insert(f.var);
      else item_sources[f.var].insert(l);
    }
  });
  std::map<std::tuple<std::vector<int>, bool, std::string>, int> ids;
  auto method_var = [&](std::vector<int> sources, bool items, const std::string& m, const std::string& shown) {
    auto [it, fresh] = ids.emplace(std::make_tuple(sources, items, m), -1);
    if (fresh) {
      ir::Var v;
      v.name = shown + "." + m;
      v.storage = ir::Var::Storage::Method;
      v.read = true;
      v.method = m;
      v.method_sources = std::move(sources);
      v.method_on_items = items;
      nest.vars.push_back(std::move(v));
      it->second = (int)nest.vars.size() - 1;
    }
    return it->second;
  };
  auto f = [&](const Expr& e) -> Expr {
    if (e->kind != K::Call || !e->name.empty() || e->args.empty() || e->args[0]->kind != K::Attr) return e;
    const Expr& callee = e->args[0];
    const Expr& o = callee->args[0];
    std::vector<int> sources;
    bool items = true;
    std::string shown;
    if (o->kind == K::Load) {
      const int v = o->var;
      const ir::Var& var = nest.vars[(size_t)v];
      shown = var.name;
      if (!var.assigned) {
        if (!frame_variable(var)) return e;
        sources = {v};
        items = false;
      } else {
        auto it = item_sources.find(v);
        if (it == item_sources.end() || not_items.count(v)) return e;
        sources.assign(it->second.begin(), it->second.end());
      }
    } else if (const int l = list_of_item(o); l >= 0) {
      if (nest.vars[(size_t)l].assigned) return e;  // (a list the nest gives the variable: unknown here)
      sources = {l};
      shown = nest.vars[(size_t)l].name + "[...]";
    } else {
      return e;
    }
    for (int s : sources)
      if (nest.vars[(size_t)s].assigned) return e;
    auto c = std::make_shared<ExprNode>(*e);
    c->method = method_var(std::move(sources), items, callee->name, shown);
    return c;
  };
  nest.root = ir::map_exprs(nest.root, f);
  return nest;
}

}  // namespace stagepy::analysis
