// inline_helpers: in, a nest and, per variable that holds a plain Python function at this
// call, that function's lifted body (lift_helper.h) with the nest variables its globals
// are; out, the nest where every call of such a variable, `h(a, b)`, is replaced by
// seq(a, b, body[a, b]) (the arguments evaluated as CPython does, then the body with
// them substituted, defaults for the parameters the call leaves out), helpers calling
// helpers inlined in turn; or the reason not.
// Runs per specialization, before infer_types: the function a name holds is part of the
// guard key.
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
};

struct InlineResult {
  bool ok = true;
  std::string reason;
  int reason_line = -1;
  ir::Nest nest;
};

InlineResult inline_helpers(const ir::Nest& nest, const std::map<int, Helper>& helpers);

}  // namespace stagepy::specialize
