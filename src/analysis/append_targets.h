// append_targets: in, a lifted nest; out, the same nest where each variable used only as
// `v.append(x)` statements, in `len(v)` and as an item appended to another such list
// (`rows.append(row)`; no other read of it anywhere in the nest), and either never assigned
// (a list the nest appends to; or such an attribute `self.v`, through its attribute
// variable) or assigned only new lists (`row = []`, `row = [i, x]`), is marked
// Var::appended, and those statements are Append effects instead of evaluated method
// calls. At run time such a variable holds no list object in the kernel, but the list's
// items: the kernel collects them (a new list's in a buffer of its own), and the dispatcher
// appends them to the list object, or makes the new list, when the kernel returns (also
// when it stops for CPython), in the order the statements ran.
//
// Every other plain variable `L` the nest calls `L.append(x)` or `L.pop()` on (it also reads
// the list: `fib.append(fib[-1] + fib[-2])`, a stack) is marked Var::resized and assigned:
// type inference holds its lists by headers that grow and shrink (Type::made), or refuses.
#pragma once
#include "ir/ir.h"

namespace stagepy::analysis {

ir::Nest append_targets(ir::Nest nest);  // after bind_module_attributes (`self.out.append(x)`)
// The variable of an Append effect's list expression (`out`, or the attribute variable of
// `self.out`).
int appended_list_var(const ir::Expr& base);

}  // namespace stagepy::analysis
