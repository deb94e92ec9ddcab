// See made_lists.h.
#include "specialize/made_lists.h"

#include <utility>

#include "ir/mutate.h"

namespace stagepy::specialize {
namespace {

// (Not one mixing ints and floats: a made list holds one type of number, or floats and
// np.float64s.)
bool list_of_numbers(const TypeRef& t) {
  return t && t->kind == Type::Kind::Array && t->pylist && t->ndim == 1 && !t->made && !(t->tags & kTagsInts) &&
         (t->dtype == DType::Int64 || t->dtype == DType::Float64 || t->dtype == DType::Bool);
}

}  // namespace

MadeListTypes made_lists(const ir::Nest& nest, std::vector<TypeRef> entry, const std::vector<uint8_t>& tag_lists) {
  MadeListTypes out;
  std::set<int> held = ir::made_list_vars(nest.root, nest.vars);
  // (Moves between variables that have entry types: not the Temps of inlined helpers.)
  std::vector<std::pair<int, int>> moves;
  for (auto& [a, b] : ir::variable_moves(nest.root))
    if (a >= 0 && (size_t)a < entry.size() && b >= 0 && (size_t)b < entry.size()) moves.push_back({a, b});
  auto unbound = [&](int v) { return !entry[(size_t)v] || entry[(size_t)v]->kind == Type::Kind::Unbound; };
  for (auto& [a, b] : moves)
    if ((list_of_numbers(entry[(size_t)a]) && unbound(b)) || (list_of_numbers(entry[(size_t)b]) && unbound(a)))
      held.insert(a), held.insert(b);
  ir::add_moved_with(&held, moves);
  // Tagged: the variables passing lists among themselves with one marked, or holding a
  // tagged list at entry.
  for (int v : held) {
    const bool marked = (size_t)v < tag_lists.size() && (tag_lists[(size_t)v] & kTagsNp);
    const TypeRef& t = (size_t)v < entry.size() ? entry[(size_t)v] : nullptr;
    if (marked || (list_of_numbers(t) && t->tagged)) out.tagged.insert(v);
  }
  ir::add_moved_with(&out.tagged, moves);
  for (int v : held) {
    if ((size_t)v >= entry.size()) continue;
    const TypeRef& t = entry[(size_t)v];
    if (!list_of_numbers(t)) continue;
    if (out.tagged.count(v) && t->dtype == DType::Float64 && !t->tagged && out.retag < 0) out.retag = v;
    entry[(size_t)v] = types::made_list(t->dtype, t->tagged);
  }
  out.entry = std::move(entry);
  return out;
}

}  // namespace stagepy::specialize
