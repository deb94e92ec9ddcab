// lift_helper: a helper function's bytecode becomes one expression of its parameters.
#include <gtest/gtest.h>

#include "analysis/lift_helper.h"
#include "bytecode_asm.h"
#include "ir/printer.h"

using namespace stagepy;
using test_asm::Asm;
using test_asm::float_const;
using test_asm::int_const;

namespace {

std::string show(const analysis::HelperBody& h) {
  ir::Nest nest;
  for (int k = 0; k < h.nparams; k++) {
    ir::Var v;
    v.name = "p" + std::to_string(k);
    nest.vars.push_back(v);
  }
  for (auto& g : h.globals) {
    ir::Var v;
    v.name = g;
    v.storage = ir::Var::Storage::Global;
    nest.vars.push_back(v);
  }
  return ir::to_string(h.body, nest);
}

}  // namespace

// def clamp(x, lo):        x=0, lo=1, t=2
//     t = x * 2
//     if t < lo:
//         return lo
//     return t + K
TEST(LiftHelper, BranchesBecomeConditionalsAndLocalsAreKeptForTheirErrors) {
  Asm a;
  int two = a.konst(int_const(2));
  a.emit("LOAD_FAST", "x", 0);
  a.emit("LOAD_CONST", "", two);
  a.emit("BINARY_OP", "*", 5);
  a.emit("STORE_FAST", "t", 2);
  a.emit("LOAD_FAST", "t", 2);
  a.emit("LOAD_FAST", "lo", 1);
  a.emit("COMPARE_OP", "<", 0, 2);
  int jump = a.emit("POP_JUMP_IF_FALSE");
  a.emit("LOAD_FAST", "lo", 1);
  a.emit("RETURN_VALUE");
  int rest = a.emit("LOAD_FAST", "t", 2);
  a.patch(jump, rest);
  a.emit("LOAD_GLOBAL", "K", 0, 0);
  a.emit("BINARY_OP", "+", 0);
  a.emit("RETURN_VALUE");
  analysis::HelperBody h = analysis::lift_helper(a.code, 2);
  ASSERT_TRUE(h.ok) << h.reason;
  EXPECT_EQ(h.globals, std::vector<std::string>{"K"});
  EXPECT_EQ(show(h), "(seq((p0 * 2), p1) if bool(((p0 * 2) < p1)) else seq((p0 * 2), ((p0 * 2) + K)))");
}

TEST(LiftHelper, RefusesStoresAndReadsBeforeAssignment) {
  {
    Asm a;  // while True: pass  (a backward jump)
    int top = a.emit("NOP");
    a.emit("JUMP_BACKWARD", "", 0, 0, top);
    EXPECT_EQ(analysis::lift_helper(a.code, 0, /*loops=*/false).reason, "it loops");
    analysis::HelperBody h = analysis::lift_helper(a.code, 0);
    EXPECT_FALSE(h.ok);
    EXPECT_EQ(h.reason, "it loops and never returns");
  }
  {
    Asm a;  // while True: if not x: return 0   (its exit tests nothing the loop changes)
    int top = a.emit("LOAD_FAST", "x", 0);
    int jump = a.emit("POP_JUMP_IF_TRUE");
    int zero = a.konst(int_const(0));
    a.emit("RETURN_CONST", "", zero);
    int back = a.emit("JUMP_BACKWARD", "", 0, 0, top);
    a.patch(jump, back);
    analysis::HelperBody h = analysis::lift_helper(a.code, 1);
    EXPECT_FALSE(h.ok);
    EXPECT_NE(h.reason.find("while"), std::string::npos) << h.reason;
  }
  {
    Asm a;  // x[0] = 1; return 0
    a.emit("LOAD_CONST", "", a.konst(int_const(1)));
    a.emit("LOAD_FAST", "x", 0);
    a.emit("LOAD_CONST", "", a.konst(int_const(0)));
    a.emit("STORE_SUBSCR");
    a.emit("RETURN_CONST", "", a.konst(int_const(0)));
    EXPECT_EQ(analysis::lift_helper(a.code, 1, /*loops=*/false).reason, "it stores into a container");
    // As statements: inline_helpers decides where such a function may be inlined (the store
    // in its last statement, called as a statement of its own).
    analysis::HelperBody h = analysis::lift_helper(a.code, 1);
    EXPECT_TRUE(h.ok) << h.reason;
    EXPECT_TRUE(h.statements);
  }
  {
    Asm a;  // return y  (y: a local never assigned)
    a.emit("LOAD_FAST", "y", 1);
    a.emit("RETURN_VALUE");
    EXPECT_EQ(analysis::lift_helper(a.code, 1).reason, "it may read `y` before assigning it");
  }
}

TEST(LiftHelper, ReadsElementsWithTheirLines) {
  Asm a;  // return x[0]
  a.emit("LOAD_FAST", "x", 0);
  a.emit("LOAD_CONST", "", a.konst(int_const(0)));
  a.emit("BINARY_SUBSCR", "", 0, 0, -1, /*line=*/7);
  a.emit("RETURN_VALUE");
  analysis::HelperBody h = analysis::lift_helper(a.code, 1);
  ASSERT_TRUE(h.ok) << h.reason;
  ASSERT_EQ(h.body->kind, ir::ExprNode::Kind::Subscript);
  EXPECT_EQ(h.body->origin, ir::kInlinedOrigin);
  ASSERT_EQ(h.lines.count(h.body.get()), 1u);
  EXPECT_EQ(h.lines.at(h.body.get()), 7);
}

TEST(LiftHelper, ReturnsConstantsAndCallsThroughGlobals) {
  Asm a;  // return math.sqrt(x) if x > 0.0 else 0.0
  int zero = a.konst(float_const(0.0));
  a.emit("LOAD_FAST", "x", 0);
  a.emit("LOAD_CONST", "", zero);
  a.emit("COMPARE_OP", ">", 0, 2);
  int jump = a.emit("POP_JUMP_IF_FALSE");
  a.emit("LOAD_GLOBAL", "math", 0, 0);
  a.emit("LOAD_ATTR", "sqrt", 0, 1);
  a.emit("LOAD_FAST", "x", 0);
  a.emit("CALL", "", 1);
  a.emit("RETURN_VALUE");
  int other = a.emit("RETURN_CONST", "", zero);
  a.patch(jump, other);
  analysis::HelperBody h = analysis::lift_helper(a.code, 1);
  ASSERT_TRUE(h.ok) << h.reason;
  EXPECT_EQ(show(h), "(math.sqrt(p0) if bool((p0 > 0.0)) else 0.0)");
}

// 3.13's LOAD_FAST_LOAD_FAST expands to two instructions at one offset: a jump to that
// offset runs both.
TEST(LiftHelper, JumpsLandOnTheFirstHalfOfASuperinstruction) {
  Asm a;  // return lo if x < lo else x
  a.emit("LOAD_FAST", "x", 0);
  a.emit("LOAD_FAST", "lo", 1);
  a.code.instrs.back().offset = a.code.instrs[0].offset;
  a.emit("COMPARE_OP", "<", 0, 2);
  int jump = a.emit("POP_JUMP_IF_FALSE");
  a.emit("LOAD_FAST", "lo", 1);
  a.emit("RETURN_VALUE");
  int other = a.emit("LOAD_FAST", "x", 0);
  a.emit("LOAD_FAST", "lo", 1);
  a.code.instrs.back().offset = other;
  a.emit("BINARY_OP", "+", 0);
  a.emit("RETURN_VALUE");
  a.patch(jump, other);
  analysis::HelperBody h = analysis::lift_helper(a.code, 2);
  ASSERT_TRUE(h.ok) << h.reason;
  EXPECT_EQ(show(h), "(p1 if bool((p0 < p1)) else (p0 + p1))");
}

// def h(n):                    n=0, d=1
//     for d in range(2, n):
//         if n % d == 0:
//             return False
//     return True
// Each return assigns the return variable and sets the flag; the one in the loop leaves
// it, and what follows the loop runs where the flag is clear.
TEST(LiftHelper, SeveralReturnsBecomeAFlagAndBreaks) {
  Asm a;
  int two = a.konst(int_const(2)), zero = a.konst(int_const(0));
  analysis::Const f, t;
  f.kind = t.kind = analysis::Const::Kind::Bool;
  f.i = 0;
  t.i = 1;
  int kf = a.konst(f), kt = a.konst(t);
  a.emit("LOAD_GLOBAL", "range", 0, 1);
  a.emit("LOAD_CONST", "", two);
  a.emit("LOAD_FAST", "n", 0);
  a.emit("CALL", "", 2);
  a.emit("GET_ITER");
  int top = a.emit("FOR_ITER");
  a.emit("STORE_FAST", "d", 1);
  a.emit("LOAD_FAST", "n", 0);
  a.emit("LOAD_FAST", "d", 1);
  a.emit("BINARY_OP", "%", 6);
  a.emit("LOAD_CONST", "", zero);
  a.emit("COMPARE_OP", "==", 0, 2);
  int jump = a.emit("POP_JUMP_IF_FALSE");
  a.emit("POP_TOP");
  a.emit("RETURN_CONST", "", kf);
  int back = a.emit("JUMP_BACKWARD", "", 0, 0, top);
  a.patch(jump, back);
  int end = a.emit("END_FOR");
  a.patch(top, end);
  a.emit("RETURN_CONST", "", kt);
  analysis::HelperBody h = analysis::lift_helper(a.code, 1);
  ASSERT_TRUE(h.ok) << h.reason;
  ASSERT_TRUE(h.statements);
  std::string text = ir::to_string(*h.statements);
  EXPECT_NE(text.find("return[temp"), std::string::npos) << text;
  const char* body =
      "returned = False\n"
      "for L0 d in range(2, n):\n"
      "  if bool(((n % d) == 0)):\n"
      "    return = False\n"
      "    returned = True\n"
      "    break L0\n"
      "  continue L0\n"
      "if bool(returned):\n"
      "  pass\n"
      "else:\n"
      "  return = True\n"
      "  returned = True\n";
  std::string stripped;  // without the origins and lines printed after each statement
  for (size_t k = 0, e; k < text.size(); k = e + 1) {
    e = text.find('\n', k);
    if (e == std::string::npos) e = text.size();
    std::string line = text.substr(k, e - k);
    if (line.rfind("nest at", 0) == 0 || line.rfind("vars:", 0) == 0) continue;
    size_t at = line.find("  @");
    if (at != std::string::npos) line = line.substr(0, at);
    stripped += line + "\n";
  }
  EXPECT_EQ(stripped, body);
  // The result is the return variable, which the caller's statement reads once.
  ASSERT_EQ(h.body->kind, ir::ExprNode::Kind::Load);
  EXPECT_EQ(h.statements->vars[(size_t)h.body->var].name, "return");
  EXPECT_TRUE(h.statements->vars[(size_t)h.body->var].scratch);
}

// def bounce(self):          (the return None CPython 3.11+ copies to the end of each branch)
//     if self.x < 0:
//         self.v = 0
//     if self.y < 0:
//         self.w = 0
//         return None
//     return None
// Lifted as statements (it assigns attributes), with one exit: each `if` once, no flag.
TEST(LiftHelper, ReturnsOfOneConstantAreOneExit) {
  Asm a;
  int zero = a.konst(int_const(0));
  analysis::Const none;
  none.kind = analysis::Const::Kind::None;
  int kn = a.konst(none);
  a.emit("LOAD_FAST", "self", 0);
  a.emit("LOAD_ATTR", "x");
  a.emit("LOAD_CONST", "", zero);
  a.emit("COMPARE_OP", "<", 0, 2);
  int j1 = a.emit("POP_JUMP_IF_FALSE");
  a.emit("LOAD_CONST", "", zero);
  a.emit("LOAD_FAST", "self", 0);
  a.emit("STORE_ATTR", "v");
  int second = a.emit("LOAD_FAST", "self", 0);
  a.patch(j1, second);
  a.emit("LOAD_ATTR", "y");
  a.emit("LOAD_CONST", "", zero);
  a.emit("COMPARE_OP", "<", 0, 2);
  int j2 = a.emit("POP_JUMP_IF_FALSE");
  a.emit("LOAD_CONST", "", zero);
  a.emit("LOAD_FAST", "self", 0);
  a.emit("STORE_ATTR", "w");
  a.emit("RETURN_CONST", "", kn);
  int last = a.emit("RETURN_CONST", "", kn);
  a.patch(j2, last);
  analysis::HelperBody h = analysis::lift_helper(a.code, 1);
  ASSERT_TRUE(h.ok) << h.reason;
  ASSERT_TRUE(h.statements);
  const std::string text = ir::to_string(*h.statements);
  size_t ifs = 0;
  for (size_t k = text.find("if "); k != std::string::npos; k = text.find("if ", k + 1)) ifs++;
  EXPECT_EQ(ifs, 2u) << text;
  EXPECT_EQ(text.find("returned"), std::string::npos) << text;
  EXPECT_EQ(h.body->kind, ir::ExprNode::Kind::Const) << text;  // None
}
