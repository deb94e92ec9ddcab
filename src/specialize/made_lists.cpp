// See made_lists.h.
#include "specialize/made_lists.h"

#include <functional>
#include <map>
#include <utility>

#include "ir/mutate.h"

namespace stagepy::specialize {
namespace {

bool list_of_numbers(const TypeRef& t) {
  return t && t->kind == Type::Kind::Array && t->pylist && t->ndim == 1 && !t->made &&
         (t->dtype == DType::Int64 || t->dtype == DType::Float64 || t->dtype == DType::Bool);
}

}  // namespace

MadeListTypes made_lists(const ir::Nest& nest, std::vector<TypeRef> entry, const std::vector<uint8_t>& tag_lists) {
  MadeListTypes out;
  std::set<int> held = ir::made_list_vars(nest.root, nest.vars);
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
  // The classes of variables passing lists among themselves (union-find over the moves).
  std::map<int, int> parent;
  std::function<int(int)> find = [&](int v) {
    auto it = parent.find(v);
    if (it == parent.end() || it->second == v) return v;
    return it->second = find(it->second);
  };
  for (auto& [a, b] : moves) parent[find(a)] = find(b);
  for (size_t before = (size_t)-1; before != held.size();) {
    before = held.size();
    for (auto& [a, b] : moves)
      if (held.count(a) || held.count(b)) held.insert(a), held.insert(b);
  }
  std::set<int> tagged_class;
  for (int v : held) {
    const bool marked = (size_t)v < tag_lists.size() && tag_lists[(size_t)v];
    const TypeRef& t = (size_t)v < entry.size() ? entry[(size_t)v] : nullptr;
    if (marked || (list_of_numbers(t) && t->tagged)) tagged_class.insert(find(v));
  }
  for (int v : held) {
    if ((size_t)v >= entry.size()) continue;
    const bool tagged = tagged_class.count(find(v)) > 0;
    if (tagged) out.tagged.insert(v);
    const TypeRef& t = entry[(size_t)v];
    if (!list_of_numbers(t)) continue;
    if (tagged && t->dtype == DType::Float64 && !t->tagged && out.retag < 0) out.retag = v;
    entry[(size_t)v] = types::made_list(t->dtype, t->tagged);
  }
  out.entry = std::move(entry);
  return out;
}

}  // namespace stagepy::specialize
