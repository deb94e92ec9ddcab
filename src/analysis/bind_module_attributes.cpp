// See bind_module_attributes.h.
#include "analysis/bind_module_attributes.h"

#include <map>

#include "ir/mutate.h"

namespace stagepy::analysis {

ir::Nest bind_module_attributes(ir::Nest nest) {
  std::map<std::pair<int, std::string>, int> ids;
  auto bind = [&](const ir::Expr& e, int base) -> ir::Expr {
    auto key = std::make_pair(base, e->name);
    auto it = ids.find(key);
    int id;
    if (it == ids.end()) {
      ir::Var v;
      v.name = nest.vars[base].name + "." + e->name;
      v.storage = ir::Var::Storage::Attr;
      v.index = base;
      v.read = true;
      nest.vars.push_back(v);
      id = (int)nest.vars.size() - 1;
      ids[key] = id;
    } else {
      id = it->second;
    }
    auto c = std::make_shared<ir::ExprNode>(*e);
    c->pseudo = id;
    return c;
  };
  auto f = [&](const ir::Expr& e) -> ir::Expr {
    // A function called through a module of a module (`np.random.rand()`): bound once its
    // base (`np.random`) is, where the chain starts at a global name.
    if (e->kind == ir::ExprNode::Kind::Call && !e->args.empty()) {
      const ir::Expr& callee = e->args[0];
      if (callee->kind != ir::ExprNode::Kind::Attr || callee->pseudo >= 0) return e;
      const ir::Expr& mid = callee->args[0];
      if (mid->kind != ir::ExprNode::Kind::Attr || mid->pseudo < 0 || mid->args[0]->kind != ir::ExprNode::Kind::Load)
        return e;
      const ir::Var& root = nest.vars[(size_t)mid->args[0]->var];
      if (root.storage != ir::Var::Storage::Global && root.storage != ir::Var::Storage::Name) return e;
      auto c = std::make_shared<ir::ExprNode>(*e);
      c->args[0] = bind(callee, mid->pseudo);
      return c;
    }
    if (e->kind != ir::ExprNode::Kind::Attr || e->args[0]->kind != ir::ExprNode::Kind::Load) return e;
    int base = e->args[0]->var;
    if (nest.vars[base].assigned) return e;
    return bind(e, base);
  };
  nest.root = ir::map_exprs(nest.root, f);
  return nest;
}

}  // namespace stagepy::analysis
