// attribute_columns: in, a lifted nest (after bind_module_attributes); out, the same nest
// where every attribute read or assigned of an item of a list (`p.x` where `p = ps[i]` or
// `for p in ps`, or `ps[i].x`) is a subscript of that item by the attribute's column
// (`p[c]`, the Subscript's name saying `x`; Nest::columns lists the names in column order).
// The list's variable is marked Var::objects, the item's Var::object_row: at run time such
// a list is read as a table, one row per object and one column per attribute name
// (hook/list_buffer.h), and the attributes that change are set on the objects afterwards,
// so dependence analysis, bounds and threads treat `p.x` like `row[0]`.
//
// An object in a variable the nest never assigns whose attributes it assigns (`self.total +=
// x`) is a table of one row: a hidden variable (Var::Storage::Table, `single_of` the object's
// variable) that the dispatcher makes the list [obj]; the attributes assigned are its
// columns (`[self][0].total`), the object's other attributes stay attribute variables.
// Var::columns_used says which columns each list is used through (the objects need have
// only those).
//
// Attributes that are not such items' (`np.pi`, `self.n`: bind_module_attributes's; `z.real`,
// `A.shape`, methods called) are left alone. Throws LiftError, with the reason the report
// shows, where an attribute is assigned on anything else, or where such a list, item or
// object is used otherwise than this (passed to a function, compared, iterated as a row,
// stored into, reassigned, nested in another list, a method called): the nest stays with
// CPython.
#pragma once
#include "ir/ir.h"

namespace stagepy::analysis {

// `inlined`: the nest with its helpers inlined (inline_helpers runs it again): the helpers'
// attributes of such items become columns too, after the nest's own (`columns` seeds the
// names, where a first inlining numbered them), and an item still passed to a call is
// refused. Before inlining, an item passed to a function that may be a helper (`d(p, q)`)
// only sets Nest::objects_to_helpers.
ir::Nest attribute_columns(ir::Nest nest, bool inlined = false, const std::vector<std::string>* columns = nullptr);

}  // namespace stagepy::analysis
