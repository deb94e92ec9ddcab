// Lifting: in, a code object's normalized bytecode and one candidate `for ... in range`
// loop; out, the loop nest as IR (ir::Nest), or the reason it stays interpreted.
//
// The region's control flow (cfg.h) is structured back into for/while/if/break/continue
// by following natural loops and the merge points of branches; straight-line bytecode is
// executed symbolically on a stack of IR expressions, so every expression keeps
// CPython's evaluation order and every store becomes an Effect of a Seg.
#pragma once
#include <optional>
#include <string>
#include <utility>

#include "analysis/bytecode.h"
#include "ir/ir.h"

namespace stagepy::analysis {

struct LiftResult {
  bool ok = false;
  std::string reason;  // why not, in a user's words
  int reason_line = -1;
  ir::Nest nest;
};

LiftResult lift_nest(const CodeInfo& code, const LoopSpec& spec);

// A helper function's whole body, for inlining one that loops (inline_helpers.h): the
// statements from its first instruction up to its return (which must be its only one; a
// `raise` may be anywhere: an Exit), as a nest whose variables are its own (Fast: its
// locals and parameters by slot; Global; Builtin: the hidden `range`/`len` of desugared
// loops; Temp: hidden positions), and the value the return computes; or the reason not.
struct FunctionBody {
  bool ok = false;
  std::string reason;
  ir::Nest nest;
  ir::Expr result;
};
FunctionBody lift_function(const CodeInfo& code);

// Shared with lift_helper: BINARY_OP's argument ("+", "+=", "//"...) as an IR operator and
// whether it is the augmented form; COMPARE_OP's ("<", "=="...); a constant as IR, or
// nullptr for one IR has no value for (str, bytes, big ints).
std::optional<std::pair<ir::BinOp, bool>> binary_op_of(const std::string& sarg);
std::optional<ir::CmpOp> compare_op_of(const std::string& sarg);
ir::Expr constant_expr(const Const& c, int origin);
// Why a constant constant_expr has no IR for stops a lift ("uses a str constant",
// "defines a lambda": the description the constant came with), for the report.
std::string unlifted_constant_reason(const Const& c);

}  // namespace stagepy::analysis
