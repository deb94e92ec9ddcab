// bind_methods: in, a lifted nest (after bind_module_attributes); out, the same nest where
// each call of a method on what may be an object, `o.m(a)`, is linked (ExprNode::method) to
// a Method variable (Var::Storage::Method) naming `m` and the variables the receiver's
// objects come from: `o` itself where the nest never assigns it (`self.step(dt)`), the lists
// whose items `o` is given (`for p in ps: p.update(dt)`, `p = ps[i]`), or `L` for
// `L[i].m(a)`. At run time the dispatcher looks `m` up on those objects' class; where it is
// one plain Python function for all of them (not shadowed by an instance's own attribute),
// the variable holds that function and inline_helpers inlines the call as `m(o, a)`. Where
// the receivers are not such objects (a list's `append`, an array's `sum`), the variable
// holds nothing and the call stays as it was for type inference.
// Calls whose receiver is anything else (a computed value, an object the nest assigns other
// than from a list) are left unlinked.
#pragma once
#include "ir/ir.h"

namespace stagepy::analysis {

ir::Nest bind_methods(ir::Nest nest);

}  // namespace stagepy::analysis
