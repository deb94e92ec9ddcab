// append_targets: in, a lifted nest; out, the same nest where each variable used only as
// `v.append(x)` statements and in `len(v)` (no other read of it anywhere in the nest, never
// assigned; or such an attribute `self.v`, through its attribute variable) is marked
// Var::appended, and those statements are Append effects instead of evaluated
// method calls. At run time such a variable holding a list is not read into a buffer: the
// kernel collects the items, and the dispatcher appends them to the list object when the
// kernel returns (also when it stops for CPython), in the order the statements ran.
#pragma once
#include "ir/ir.h"

namespace stagepy::analysis {

ir::Nest append_targets(ir::Nest nest);  // after bind_module_attributes (`self.out.append(x)`)
// The variable of an Append effect's list expression (`out`, or the attribute variable of
// `self.out`).
int appended_list_var(const ir::Expr& base);

}  // namespace stagepy::analysis
