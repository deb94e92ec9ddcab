// made_lists: in, a nest and the types its variables hold at entry; out, the same types but
// where a variable may hold a list the nest makes (`cur = [0] * (m + 1)`, `new = best[:]`;
// ir::made_list_vars): a one-dimensional list of ints, floats or bools it holds at entry is
// then held the way the lists the nest makes are, by the address of a header
// (Type::made, backends/kernel_abi.h), so that `prev = cur` moves one kind of value. So are
// the lists of variables that pass them on to one holding no value at entry (`b = a`), which
// a list held by array id could not share with "unbound".
#pragma once
#include <vector>

#include "ir/ir.h"

namespace stagepy::specialize {

std::vector<TypeRef> made_lists(const ir::Nest& nest, std::vector<TypeRef> entry);

}  // namespace stagepy::specialize
