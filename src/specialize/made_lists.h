// made_lists: in, a nest, the types its variables hold at entry, and the variables whose
// lists of floats hold NumPy floats (NestState::tag_lists); out, the same types but where a
// variable may hold a list the nest makes (`cur = [0] * (m + 1)`, `new = best[:]`;
// ir::made_list_vars): a one-dimensional list of ints, floats or bools it holds at entry is
// then held the way the lists the nest makes are, by the address of a header (Type::made,
// backends/kernel_abi.h), so that `prev = cur` moves one kind of value. So are the lists of
// variables that pass them on to one holding no value at entry (`b = a`), which a list held
// by array id could not share with "unbound". Variables that pass lists among themselves
// hold them tagged (Type::tagged) or not, all alike: tagged where one of them holds a tagged
// list at entry, or is marked; a list of floats one of them holds untagged at entry then
// asks for it to be read again (`retag`).
#pragma once
#include <cstdint>
#include <set>
#include <vector>

#include "ir/ir.h"

namespace stagepy::specialize {

struct MadeListTypes {
  std::vector<TypeRef> entry;
  std::set<int> tagged;  // variables whose new lists of floats are tagged
  int retag = -1;        // a variable whose list of floats must be read tagged, or -1
};

MadeListTypes made_lists(const ir::Nest& nest, std::vector<TypeRef> entry, const std::vector<uint8_t>& tag_lists);

}  // namespace stagepy::specialize
