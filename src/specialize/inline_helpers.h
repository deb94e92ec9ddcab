// inline_helpers: in, a nest and, per variable that holds a plain Python function at this
// call, that function's lifted body (lift_helper.h) with the nest variables its globals
// are; out, the nest where every call of such a variable, `h(a, b)`, is replaced by its
// body with the arguments in place of the parameters (defaults for those the call leaves
// out), helpers calling helpers inlined in turn; or the reason not.
//
// With `hoist`, a call evaluated whenever its statement is (not in a branch of a
// conditional expression; not in a loop header) is computed once, before the statement,
// into Temp variables (scratch: they never outlive the statement): its arguments, the
// helper's values used more than once (its locals), and the items of a returned tuple;
// the statement reads them. These Segs share the statement's resume point, so a check
// that fails in them hands the whole statement to CPython, as one in the statement would.
// Elsewhere the call becomes seq(a, b, body[a, b]): the arguments evaluated as CPython
// does, then the body with them substituted.
// A helper that loops (HelperBody::statements) is inlined only with `hoist`, where the call
// is evaluated whenever its statement is: its statements go before the statement, its
// locals in new Temps, its loops renumbered after the nest's, every resume point the
// statement's; the call's value is its return's. It must store into no container and
// assign no global (CPython runs the whole statement again after any check that fails).
// With `number`, each element read, arithmetic operation and call an inlined body makes (its
// Subscript, Binary, Unary and Call nodes) gets an origin of its own, past every origin of the
// nest and from ir::kFirstNumberedInlinedOrigin on, in an order fixed by the nest and the
// helpers: the static stage run again on such a nest (dispatch.cpp, once per set of
// helpers) then has facts about them (indices in bounds, ints within 64 bits), as about
// the caller's own; `lines` keeps each one's line in its helper. Otherwise they keep
// ir::kInlinedOrigin, which no fact is about.
// Runs once per set of helpers a nest calls (numbered, for the analysis and the kernels),
// and again per specialization without `hoist` where type inference refused a Temp: the
// function a name holds is part of the guard key.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "analysis/lift_helper.h"
#include "ir/ir.h"

namespace stagepy::specialize {

struct Helper {
  std::string name;                                   // for messages
  std::shared_ptr<const analysis::HelperBody> body;
  std::vector<int> global_vars;                       // per body global: the nest variable
  // The function's default values (`__defaults__`, numbers: constants of this
  // specialization, whose guard key holds them): for the last parameters a call leaves out.
  std::vector<ir::Expr> defaults;
  // Its code is in the calling nest's file: a line of its is a line there (NumPy warnings of
  // its operations may be emitted after the kernel from it).
  bool in_caller_file = false;
  // Its parameters' names, and how many of the first are positional-only: for calls with
  // keyword arguments.
  std::vector<std::string> params;
  int posonly = 0;
  // A method's calls of methods on its first parameter (`self.move(dt)` inside
  // `p.update(dt)`): per method name, the Method variable (bind_methods.h) that holds the
  // function, found on the same objects.
  std::map<std::string, int> self_methods;
  // Its calls (by their origins in `body->statements`, its own bytecode offsets) of methods on
  // the objects its loops take from a list of its first parameter's (`for b in self.bodies:
  // b.kinetic()`): the Method variable on that list.
  std::map<int, int> item_methods;
};

struct InlineResult {
  bool ok = true;
  std::string reason;
  int reason_line = -1;
  ir::Nest nest;
  bool hoisted = false;  // some values went into Temps (so infer_types may see new shapes)
  std::map<int, int> lines;  // `number`: each numbered operation's line in its helper
  bool needs_hoist = false;  // not ok only because a helper that loops needs `hoist`
};

// Then attribute_columns again, on the inlined nest: the helpers' attributes of objects in
// lists become columns (numbered after `columns`, where given: an earlier inlining's names).
InlineResult inline_helpers(const ir::Nest& nest, const std::map<int, Helper>& helpers, bool hoist = true,
                            bool number = false, const std::vector<std::string>* columns = nullptr);

}  // namespace stagepy::specialize
