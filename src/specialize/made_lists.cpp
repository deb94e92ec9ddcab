// See made_lists.h.
#include "specialize/made_lists.h"

#include <set>
#include <utility>

#include "ir/mutate.h"

namespace stagepy::specialize {
namespace {

bool list_of_numbers(const TypeRef& t) {
  return t && t->kind == Type::Kind::Array && t->pylist && t->ndim == 1 && !t->tagged && !t->made &&
         (t->dtype == DType::Int64 || t->dtype == DType::Float64 || t->dtype == DType::Bool);
}

}  // namespace

std::vector<TypeRef> made_lists(const ir::Nest& nest, std::vector<TypeRef> entry) {
  std::set<int> held = ir::made_list_vars(nest.root, nest.vars);
  // Variables that pass lists among themselves (`b = a`) where one holds no value at entry
  // (a list shares its variable with "unbound" only held so: types::join) are held so too.
  std::vector<std::pair<int, int>> moves;
  ir::for_each_stmt(nest.root, [&](const ir::Stmt& x) {
    for (auto& e : x->effects)
      if (e.kind == ir::Effect::Kind::Assign && e.value && e.value->kind == ir::ExprNode::Kind::Load &&
          e.var >= 0 && (size_t)e.var < entry.size() && e.value->var >= 0 && (size_t)e.value->var < entry.size())
        moves.push_back({e.var, e.value->var});
  });
  auto unbound = [&](int v) { return !entry[(size_t)v] || entry[(size_t)v]->kind == Type::Kind::Unbound; };
  for (auto& [a, b] : moves)
    if ((list_of_numbers(entry[(size_t)a]) && unbound(b)) || (list_of_numbers(entry[(size_t)b]) && unbound(a)))
      held.insert(a), held.insert(b);
  for (size_t before = (size_t)-1; before != held.size();) {
    before = held.size();
    for (auto& [a, b] : moves)
      if (held.count(a) || held.count(b)) held.insert(a), held.insert(b);
  }
  for (int v : held)
    if ((size_t)v < entry.size() && list_of_numbers(entry[(size_t)v])) entry[(size_t)v] = types::made_list(entry[(size_t)v]->dtype);
  return entry;
}

}  // namespace stagepy::specialize
