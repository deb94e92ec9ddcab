// bind_module_attributes: in, a lifted nest; out, the same nest where every `v.name`
// whose base variable the nest never assigns (math.sqrt, np.pi, A.shape...) is linked to
// an Attr pseudo-variable. At run time, when `v` holds a module, the attribute's value is
// read once at entry and guarded like a variable; otherwise the link is ignored. A function
// called through a module of a module whose first name is a global (`np.random.rand()`) is
// linked too, to a pseudo-variable of the `np.random` one.
#pragma once
#include "ir/ir.h"

namespace stagepy::analysis {

ir::Nest bind_module_attributes(ir::Nest nest);

}  // namespace stagepy::analysis
