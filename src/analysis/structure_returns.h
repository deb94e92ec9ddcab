// structure_returns: in, the lifted body of a function that returns from more than one
// place (lift_function), where each `return v` became a Seg assigning the return variable
// and an Exit at a ResumePoint marked `returns`; out, the same body without those Exits,
// in statements the nest passes already handle: a hidden flag set where the function
// returns, a break of the loop the return is in, a break of each loop around that one when
// the flag is set, and the statements after a return outside every loop in the branch
// taken when the flag is clear.
//
//     for d in range(2, n):              $returned = False
//         if n % d == 0:                 for d in range(2, n):
//             return False                   if n % d == 0:
//     return n >= 2                              return = False; $returned = True; break
//                                         if $returned: (nothing)
//                                         else: return = n >= 2
//
// Every break targets the innermost loop around it, as a Python break does.
#pragma once
#include "ir/ir.h"

namespace stagepy::analysis {

// `body` uses `nest`'s variables and resume points; the flag is added to `nest.vars`.
ir::Stmt structure_returns(const ir::Stmt& body, ir::Nest& nest);

}  // namespace stagepy::analysis
