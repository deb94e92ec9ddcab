// lift_helper: in, the normalized bytecode of a plain Python function a nest calls
// (`def sq(x): return x * x`); out, its body as one IR expression of its parameters, or
// the reason it cannot be inlined.
//
// The body is executed symbolically from its first instruction, forking at each branch
// until every path returns: local assignments are substituted, `if`/`else` and
// conditional expressions become Cond nodes. Only code without effects qualifies: no loops,
// no slices, no stores other than to the function's own locals, no method calls. It may
// read elements of what it is passed (`a[i - 1] + a[i + 1]`): Subscript nodes like the
// caller's, which plan_parallel sees after inlining (the polyhedral model does not).
// Its Loads name entries of `vars`: the parameters first (in order), then the globals the
// body reads. Every node has the origin ir::kInlinedOrigin.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "analysis/bytecode.h"
#include "ir/ir.h"

namespace stagepy::analysis {

struct HelperBody {
  bool ok = false;
  std::string reason;
  int nparams = 0;
  std::vector<std::string> globals;  // vars[nparams + k] is globals[k]
  ir::Expr body;
  // The source line of each operation and element read (Binary, Unary, Subscript nodes):
  // where NumPy's warnings come from when they happen in the helper.
  std::map<const ir::ExprNode*, int> lines;
};

HelperBody lift_helper(const CodeInfo& code, int nparams);

}  // namespace stagepy::analysis
