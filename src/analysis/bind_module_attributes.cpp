// See bind_module_attributes.h.
#include "analysis/bind_module_attributes.h"

#include <map>

#include "ir/mutate.h"

namespace stagepy::analysis {

ir::Nest bind_module_attributes(ir::Nest nest) {
  std::map<std::pair<int, std::string>, int> ids;
  auto f = [&](const ir::Expr& e) -> ir::Expr {
    if (e->kind != ir::ExprNode::Kind::Attr || e->args[0]->kind != ir::ExprNode::Kind::Load) return e;
    int base = e->args[0]->var;
    if (nest.vars[base].assigned) return e;
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
  nest.root = ir::map_exprs(nest.root, f);
  return nest;
}

}  // namespace stagepy::analysis
