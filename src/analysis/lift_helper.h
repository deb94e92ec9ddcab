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
#include <memory>
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
  // A helper that loops (`s = 0.0; for k in range(n): s += a[k] * b[k]; return s`): its
  // statements (lift_function), whose variables are numbered as `body`'s Loads are (the
  // parameters, then the globals, then its own locals and hidden variables, `statements->vars`
  // holding all of them), and `body` is the value it returns. Null for an expression.
  std::shared_ptr<const ir::Nest> statements;
  std::vector<uint8_t> builtin;  // per global: a hidden builtin of a desugared loop (`len`, `range`)
  // Its origins are its own bytecode offsets: their lines, for its warnings.
  std::map<int, int> origin_lines;
};

// The body as one expression (lift_helper above) where it has no loop; else, with `loops`,
// its statements (lift_function) where they lift.
HelperBody lift_helper(const CodeInfo& code, int nparams, bool loops = true);

}  // namespace stagepy::analysis
