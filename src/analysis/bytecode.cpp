// See bytecode.h.
#include "analysis/bytecode.h"

#include <unordered_map>

namespace stagepy::analysis {

Op op_from_name(std::string_view name) {
  static const std::unordered_map<std::string_view, Op> table = {
#define STAGEPY_OP_ENTRY(n) {#n, Op::n},
      STAGEPY_OPS(STAGEPY_OP_ENTRY)
#undef STAGEPY_OP_ENTRY
  };
  auto it = table.find(name);
  return it == table.end() ? Op::OTHER : it->second;
}

const char* op_name(Op op) {
  static const char* names[] = {
#define STAGEPY_OP_STR(n) #n,
      STAGEPY_OPS(STAGEPY_OP_STR)
#undef STAGEPY_OP_STR
      "OTHER"};
  return names[static_cast<int>(op)];
}

}  // namespace stagepy::analysis
