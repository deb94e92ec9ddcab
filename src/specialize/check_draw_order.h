// check_draw_order: in, a typed nest (infer_types) as the lifter and inline_helpers leave it, where a
// statement's generator reductions (`sum(random.random() for _ in range(k))`), its calls of
// helpers that loop and the locals of inlined helpers are computed before the statement
// itself, as statements of their own that carry its resume point. Out: why that order
// would change the order of the random draws CPython makes (a draw in such a part and
// another elsewhere in the statement: `random.random() - sum(random.random() for ...)`
// draws the first number first in CPython), or "" where it would not.
//
// The draws would still be the generator's own numbers, but different ones for each place;
// the nest stays in CPython instead. Errors need no such care: a check failing anywhere in
// the statement hands the whole statement to CPython, its draws undone.
#pragma once
#include <string>

#include "ir/ir.h"

namespace stagepy::specialize {

std::string check_draw_order(const ir::Nest& nest);

}  // namespace stagepy::specialize
