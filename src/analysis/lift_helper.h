// lift_helper: in, the normalized bytecode of a plain Python function a nest calls
// (`def sq(x): return x * x`); out, its body as one IR expression of its parameters, or
// the reason it cannot be inlined.
//
// The body is executed symbolically from its first instruction, forking at each branch
// until every path returns: local assignments are substituted, `if`/`else` and
// conditional expressions become Cond nodes. Only pure scalar code qualifies: no loops,
// no subscripts, no stores other than to the function's own locals, no method calls.
// Its Loads name entries of `vars`: the parameters first (in order), then the globals the
// body reads. Every node has the origin ir::kInlinedOrigin.
#pragma once
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
};

HelperBody lift_helper(const CodeInfo& code, int nparams);

}  // namespace stagepy::analysis
