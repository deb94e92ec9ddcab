// defer_attribute_stores: in, the statements one inlined call of a helper runs in place of
// its call (inline_helpers.h: a method `p.update(dt)` or a helper `move(p, dt)` whose body
// assigns attributes of the objects it is passed, its own calls inlined already); out, the
// same statements where each attribute they assign, `o.x` (o an expression the statements
// never change: a variable, an item `ps[i]`), is read into a Temp first, every read and
// assignment of `o.x` reads and assigns that Temp, and the Temps are stored into the
// attributes at the end, in one Seg, after every check the call makes. So a check failing
// inside the call (an index out of range, a division by zero), which hands the calling
// statement to CPython to run again from its start, finds no attribute changed: CPython
// calls the function again and fails at the same place, as it would have.
// The attributes of objects the statements compute (`p.x` of the items a loop inside the
// call takes from a list) stay assigned in place; the caller then logs the statement
// (ir::ResumePoint::logged), whose stores a hand-over undoes. Refused where one attribute is
// assigned both ways.
// Exact where the objects the call reaches by different expressions (`self`, `other`) are
// one object: refused where an attribute assigned through one expression is read or
// assigned through another after that assignment (loops counted twice), the order in which
// CPython would see the change; before it, all read the same value.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace stagepy::specialize {

struct DeferredStores {
  bool ok = true;
  std::string why;  // not ok: what the helper does that this cannot follow
  ir::Stmt body;
  bool in_place = false;  // attributes of objects it computes are assigned in place
};

// New Temp variables are added to `vars`, named for `helper`; the Segs added resume at
// `resume` (the calling statement's) and show `line`; each read and store they make gets
// the origin `origin()` gives (inline_helpers numbers them, for the analysis).
DeferredStores defer_attribute_stores(const ir::Stmt& body, std::vector<ir::Var>& vars, const std::string& helper,
                                      int resume, int line, const std::function<int()>& origin);

}  // namespace stagepy::specialize
