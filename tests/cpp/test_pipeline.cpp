// The core without Python: bytecode in the neutral form the Python layer produces is
// lifted, typed and compiled, and the kernel is called directly.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "analysis/lift.h"
#include "bytecode_asm.h"
#include "ir/mutate.h"
#include "ir/printer.h"
#include "specialize/pipeline.h"

using namespace stagepy;
using analysis::Instr;
using analysis::Op;
using test_asm::Asm;
using test_asm::int_const;

namespace {

// def f(A, n):            locals: A=0, n=1, s=2, i=3
//     s = 0
//     for i in range(n):
//         s += A[i] * i      (or s += i when `with_array` is false)
struct Program {
  Asm a;
  analysis::LoopSpec spec;
};

Program sum_loop(bool with_array) {
  Program p;
  Asm& a = p.a;
  int c0 = a.konst(int_const(0));
  a.emit("LOAD_CONST", "", c0);
  a.emit("STORE_FAST", "s", 2);
  int entry = a.emit("LOAD_GLOBAL", "range", 0, 1, -1, 2);
  a.emit("LOAD_FAST", "n", 1, 0, -1, 2);
  a.emit("CALL", "", 1, 0, -1, 2);
  a.emit("GET_ITER", "", 0, 0, -1, 2);
  int header = a.emit("FOR_ITER", "", 0, 0, -1, 2);
  a.emit("STORE_FAST", "i", 3, 0, -1, 2);
  a.emit("LOAD_FAST", "s", 2, 0, -1, 3);
  if (with_array) {
    a.emit("LOAD_FAST", "A", 0, 0, -1, 3);
    a.emit("LOAD_FAST", "i", 3, 0, -1, 3);
    a.emit("BINARY_SUBSCR", "", 0, 0, -1, 3);
    a.emit("LOAD_FAST", "i", 3, 0, -1, 3);
    a.emit("BINARY_OP", "*", 5, 0, -1, 3);
  } else {
    a.emit("LOAD_FAST", "i", 3, 0, -1, 3);
  }
  a.emit("BINARY_OP", "+=", 13, 0, -1, 3);
  a.emit("STORE_FAST", "s", 2, 0, -1, 3);
  a.emit("JUMP_BACKWARD", "", 0, 0, header, 3);
  int end_for = a.emit("END_FOR", "", 0, 0, -1, 2);
  a.patch(header, end_for);
  int exit = a.emit("LOAD_FAST", "s", 2, 0, -1, 4);
  a.emit("RETURN_VALUE", "", 0, 0, -1, 4);
  a.code.localsplus_names = {"A", "n", "s", "i"};
  a.code.filename = "<test>";
  a.code.qualname = "f";
  a.code.firstlineno = 1;
  p.spec.entry_offset = entry;
  p.spec.header_offset = header;
  p.spec.exit_offset = exit;
  return p;
}

int var_index(const ir::Nest& n, const std::string& name) {
  for (size_t i = 0; i < n.vars.size(); i++)
    if (n.vars[i].name == name) return (int)i;
  return -1;
}

}  // namespace

TEST(Lift, ForRangeWithAugmentedAssignment) {
  Program p = sum_loop(true);
  auto r = analysis::lift_nest(p.a.code, p.spec);
  ASSERT_TRUE(r.ok) << r.reason;
  std::string text = ir::to_string(r.nest);
  EXPECT_NE(text.find("for L0 i in range(n)"), std::string::npos) << text;
  EXPECT_NE(text.find("s = (s += (A[i] * i))"), std::string::npos) << text;
  int s = var_index(r.nest, "s");
  ASSERT_GE(s, 0);
  EXPECT_TRUE(r.nest.vars[s].assigned);
  EXPECT_TRUE(r.nest.vars[s].read);
  EXPECT_EQ(r.nest.resumes.size(), 2u);  // the for statement and the body statement
}

TEST(Lift, RejectsALoopWhoseBodyAlwaysReturnsWithAReason) {
  Asm a;
  a.code.localsplus_names = {"n", "i"};
  int entry = a.emit("LOAD_GLOBAL", "range", 0, 1, -1, 2);
  a.emit("LOAD_FAST", "n", 0);
  a.emit("CALL", "", 1);
  a.emit("GET_ITER");
  int header = a.emit("FOR_ITER");
  a.emit("STORE_FAST", "i", 1);
  a.emit("LOAD_FAST", "i", 1, 0, -1, 7);
  a.emit("RETURN_VALUE", "", 0, 0, -1, 7);
  int end_for = a.emit("END_FOR");
  a.patch(header, end_for);
  int exit = a.emit("RETURN_CONST", "", 0);
  analysis::LoopSpec spec{entry, header, exit, 0};
  auto r = analysis::lift_nest(a.code, spec);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.reason.find("leaves"), std::string::npos) << r.reason;
  EXPECT_EQ(r.reason_line, 7);
}

TEST(Lift, AReturnUnderAConditionIsAnExitAtItsStatement) {
  // for i in range(n):
  //     if i:
  //         return i
  Asm a;
  a.code.localsplus_names = {"n", "i"};
  int entry = a.emit("LOAD_GLOBAL", "range", 0, 1, -1, 2);
  a.emit("LOAD_FAST", "n", 0, 0, -1, 2);
  a.emit("CALL", "", 1, 0, -1, 2);
  a.emit("GET_ITER", "", 0, 0, -1, 2);
  int header = a.emit("FOR_ITER", "", 0, 0, -1, 2);
  a.emit("STORE_FAST", "i", 1, 0, -1, 2);
  a.emit("LOAD_FAST", "i", 1, 0, -1, 3);
  int jump = a.emit("POP_JUMP_IF_TRUE", "", 0, 0, -1, 3);
  a.emit("JUMP_BACKWARD", "", 0, 0, header, 3);
  int ret = a.emit("LOAD_FAST", "i", 1, 0, -1, 4);
  a.emit("SWAP", "", 2, 0, -1, 4);
  a.emit("POP_TOP", "", 0, 0, -1, 4);
  a.emit("RETURN_VALUE", "", 0, 0, -1, 4);
  int end_for = a.emit("END_FOR", "", 0, 0, -1, 2);
  a.patch(header, end_for);
  a.patch(jump, ret);
  int exit = a.emit("RETURN_CONST", "", 0, 0, -1, 5);
  analysis::LoopSpec spec{entry, header, exit, 0};
  auto r = analysis::lift_nest(a.code, spec);
  ASSERT_TRUE(r.ok) << r.reason;
  std::string text = ir::to_string(r.nest);
  EXPECT_NE(text.find("exit to CPython  @" + std::to_string(ret)), std::string::npos) << text;
  int exits = 0;
  for (auto& rp : r.nest.resumes)
    if (rp.exit) {
      exits++;
      EXPECT_EQ(rp.offset, ret);
      EXPECT_EQ(rp.line, 4);
      EXPECT_EQ(rp.loops.size(), 1u);  // CPython gets the for loop's iterator back
    }
  EXPECT_EQ(exits, 1);
}

// The loop of `for i, (a, b) in enumerate(zip(A, B)): s += i * a * b` (or, with `rows`,
// `for x, y in reversed(P): s += x * y`), 3.12's bytecode.
static analysis::LiftResult lift_sequence_loop(bool rows) {
  Asm a;
  a.code.localsplus_names = rows ? std::vector<std::string>{"P", "s", "x", "y"}
                                 : std::vector<std::string>{"A", "B", "s", "i", "a", "b"};
  int entry;
  if (rows) {
    entry = a.emit("LOAD_GLOBAL", "reversed", 0, 1, -1, 2);
    a.emit("LOAD_FAST", "P", 0, 0, -1, 2);
    a.emit("CALL", "", 1, 0, -1, 2);
  } else {
    entry = a.emit("LOAD_GLOBAL", "enumerate", 0, 1, -1, 2);
    a.emit("LOAD_GLOBAL", "zip", 1, 1, -1, 2);
    a.emit("LOAD_FAST", "A", 0, 0, -1, 2);
    a.emit("LOAD_FAST", "B", 1, 0, -1, 2);
    a.emit("CALL", "", 2, 0, -1, 2);
    a.emit("CALL", "", 1, 0, -1, 2);
  }
  a.emit("GET_ITER", "", 0, 0, -1, 2);
  int header = a.emit("FOR_ITER", "", 0, 0, -1, 2);
  a.emit("UNPACK_SEQUENCE", "", 2, 0, -1, 2);
  if (rows) {
    a.emit("STORE_FAST", "x", 2, 0, -1, 2);
    a.emit("STORE_FAST", "y", 3, 0, -1, 2);
    a.emit("LOAD_FAST", "s", 1, 0, -1, 3);
    a.emit("LOAD_FAST", "x", 2, 0, -1, 3);
    a.emit("LOAD_FAST", "y", 3, 0, -1, 3);
  } else {
    a.emit("STORE_FAST", "i", 3, 0, -1, 2);
    a.emit("UNPACK_SEQUENCE", "", 2, 0, -1, 2);
    a.emit("STORE_FAST", "a", 4, 0, -1, 2);
    a.emit("STORE_FAST", "b", 5, 0, -1, 2);
    a.emit("LOAD_FAST", "s", 2, 0, -1, 3);
    a.emit("LOAD_FAST", "i", 3, 0, -1, 3);
    a.emit("LOAD_FAST", "a", 4, 0, -1, 3);
    a.emit("BINARY_OP", "*", 5, 0, -1, 3);
    a.emit("LOAD_FAST", "b", 5, 0, -1, 3);
  }
  a.emit("BINARY_OP", "*", 5, 0, -1, 3);
  a.emit("BINARY_OP", "+=", 13, 0, -1, 3);
  a.emit("STORE_FAST", "s", rows ? 1 : 2, 0, -1, 3);
  a.emit("JUMP_BACKWARD", "", 0, 0, header, 3);
  int end_for = a.emit("END_FOR", "", 0, 0, -1, 2);
  a.patch(header, end_for);
  int exit = a.emit("RETURN_CONST", "", 0, 0, -1, 4);
  analysis::LoopSpec spec{entry, header, exit, 0};
  return analysis::lift_nest(a.code, spec);
}

TEST(Lift, EnumerateOfZipIndexesBothSequencesAtTheIndex) {
  auto r = lift_sequence_loop(false);
  ASSERT_TRUE(r.ok) << r.reason;
  std::string text = ir::to_string(r.nest);
  EXPECT_NE(text.find("range(min(len(A), len(B)))"), std::string::npos) << text;
  EXPECT_NE(text.find("a = A[i]"), std::string::npos) << text;
  EXPECT_NE(text.find("b = B[i]"), std::string::npos) << text;
  ASSERT_EQ(r.nest.loops.size(), 1u);
  EXPECT_EQ(r.nest.loops[0].iter, ir::StmtNode::Iter::Enumerate);
  EXPECT_TRUE(r.nest.loops[0].zipped);
  EXPECT_EQ(r.nest.loops[0].over.size(), 2u);
  EXPECT_EQ(r.nest.loops[0].targets, "i, (a, b)");
}

TEST(Lift, ReversedSequenceCountsDownAndUnpacksRows) {
  auto r = lift_sequence_loop(true);
  ASSERT_TRUE(r.ok) << r.reason;
  std::string text = ir::to_string(r.nest);
  EXPECT_NE(text.find("range((len(P) - 1), -1, -1)"), std::string::npos) << text;
  ASSERT_EQ(r.nest.loops.size(), 1u);
  EXPECT_TRUE(r.nest.loops[0].backward);
  EXPECT_EQ(r.nest.loops[0].iter, ir::StmtNode::Iter::Seq);
  EXPECT_EQ(r.nest.loops[0].targets, "x, y");
  int unpacked = 0;  // x = P[k][0] and y = P[k][1], each checking that the row has 2 items
  ir::for_each_expr(r.nest.root, [&](const ir::Expr& e) {
    if (e->kind == ir::ExprNode::Kind::Subscript && e->unpack == 2) unpacked++;
  });
  EXPECT_EQ(unpacked, 2) << text;
}

TEST(Types, UnionsOnlyWhereValuesBehaveAlike) {
  auto u = types::join({types::py_float(), types::np_scalar(DType::Float64)});
  ASSERT_TRUE(u);
  EXPECT_EQ(u->kind, Type::Kind::Union);
  EXPECT_TRUE(types::uniform(u));
  auto h = types::join({types::py_int(), types::py_float()});
  ASSERT_TRUE(h);
  EXPECT_FALSE(types::uniform(h));
  auto m = types::join({types::unbound(), types::py_int()});
  EXPECT_TRUE(types::may_be_unbound(m));
  EXPECT_TRUE(types::same(types::without_unbound(m), types::py_int()));
  EXPECT_EQ(types::join({types::array(DType::Float64, 1, Type::CContig, true),
                         types::array(DType::Float32, 1, Type::CContig, true)}),
            nullptr);
}

TEST(Types, TaggedListElementsAreTheUnionTheirTagsAllow) {
  // Floats and np.float64s: one double either way (uniform); ints among them: bits and a tag.
  auto np_list = types::py_list(DType::Float64, 1, kTagsNp);
  EXPECT_TRUE(np_list->tagged);
  EXPECT_TRUE(types::uniform(types::list_elem(*np_list)));
  auto mixed = types::py_list(DType::Float64, 2, kTagsInts);
  auto row = types::py_list_like(*mixed, 1);
  EXPECT_EQ(row->tags, kTagsInts);
  auto e = types::list_elem(*row);
  ASSERT_EQ(e->kind, Type::Kind::Union);
  EXPECT_EQ(e->elems.size(), 2u);
  EXPECT_FALSE(types::uniform(e));
  EXPECT_EQ(row->str(), "list of ints and floats");
  EXPECT_EQ(types::list_elem(*types::py_list(DType::Float64, 1, kTagsInts | kTagsNp))->elems.size(), 3u);
  // Lists of ints and floats are not the same type as lists of floats and np.float64s.
  EXPECT_FALSE(types::same(row, types::py_list(DType::Float64, 1, kTagsNp)));
  EXPECT_NE(row->hash(), types::py_list(DType::Float64, 1, kTagsNp)->hash());
  // Only lists held as 16-byte elements of Float64 are tagged.
  EXPECT_FALSE(types::py_list(DType::Int64, 1, kTagsInts)->tagged);
  EXPECT_EQ(item_bytes(*row), 16);
}

TEST(Types, TableColumnsOfOneKindReadAsThatKind) {
  // A table of objects' attributes mixing ints, floats and bools: each column whose values
  // share one tag reads as that kind; a column of several, and the table without columns,
  // as the union (bools among them).
  auto table = std::make_shared<Type>(*types::py_list(DType::Float64, 2, kTagsInts | kTagsBools));
  EXPECT_EQ(types::list_elem(*table)->elems.size(), 3u);
  auto whole = types::py_list_like(*table, 1);
  table->columns = {(int8_t)kTagFloat, (int8_t)kTagInt, (int8_t)kTagBool, -1};
  auto row = types::py_list_like(*table, 1);
  EXPECT_EQ(row->columns, table->columns) << "a row keeps its table's columns";
  EXPECT_TRUE(types::same(types::column_elem(*row, 0), types::py_float()));
  EXPECT_TRUE(types::same(types::column_elem(*row, 1), types::py_int()));
  EXPECT_TRUE(types::same(types::column_elem(*row, 2), types::py_bool()));
  EXPECT_EQ(types::column_elem(*row, 3)->kind, Type::Kind::Union);
  EXPECT_EQ(types::column_elem(*whole, 1)->kind, Type::Kind::Union);
  // The columns are part of the type (the kernel's key): another kind in a column, or none.
  EXPECT_FALSE(types::same(row, whole));
  EXPECT_NE(row->hash(), whole->hash());
  EXPECT_EQ(row->str(), "list of ints, floats and bools (columns float int bool mixed)");
  EXPECT_EQ(item_bytes(*row), 16);
}

TEST(Oracle, PythonRules) {
  specialize::Oracle o;
  EXPECT_TRUE(types::same(o.binary(ir::BinOp::Add, types::py_int(), types::py_int()), types::py_int()));
  EXPECT_TRUE(types::same(o.binary(ir::BinOp::TrueDiv, types::py_int(), types::py_int()), types::py_float()));
  EXPECT_TRUE(types::same(o.binary(ir::BinOp::Add, types::py_bool(), types::py_bool()), types::py_int()));
  EXPECT_TRUE(types::same(o.binary(ir::BinOp::And, types::py_bool(), types::py_bool()), types::py_bool()));
  EXPECT_EQ(o.binary(ir::BinOp::And, types::py_float(), types::py_int()), nullptr);
  EXPECT_EQ(o.binary(ir::BinOp::Add, types::np_scalar(DType::Float32), types::py_int()), nullptr)
      << "NumPy entries come from probing NumPy, never from built-in guesses";
}

namespace {
// Compiles the sum loop for (A: float64 1-d array or absent, n: int) and runs it.
struct KernelRun {
  int status;
  std::vector<int64_t> state;
  specialize::Kernel k;
};

KernelRun compile_and_run(bool with_array, int64_t n, const double* data = nullptr, int64_t len = -1) {
  Program p = sum_loop(with_array);
  auto lifted = analysis::lift_nest(p.a.code, p.spec);
  EXPECT_TRUE(lifted.ok) << lifted.reason;
  specialize::Oracle oracle;
  // NumPy float64 times int, plus float, as NumPy 2 types them.
  oracle.set_entry("bin", "*", 13, 1, "numpy.float64");
  oracle.set_entry("bin", "+", 1, 13, "numpy.float64");
  oracle.set_entry("bin", "+", 13, 13, "numpy.float64");
  std::vector<TypeRef> entry(lifted.nest.vars.size(), types::unbound());
  for (size_t v = 0; v < lifted.nest.vars.size(); v++) {
    const auto& var = lifted.nest.vars[v];
    if (var.name == "range") entry[v] = types::callable(Builtin::Range);
    if (var.name == "n") entry[v] = types::py_int();
    if (var.name == "s") entry[v] = types::py_int();
    if (var.name == "A" && with_array) entry[v] = types::array(DType::Float64, 1, Type::CContig, true);
  }
  KernelRun r;
  static int serial = 0;  // kernel symbols must be unique in the process-wide JIT
  std::string name = std::string(with_array ? "t_array_" : "t_int_") + std::to_string(++serial);
  specialize::KernelRequest rq;
  rq.nest = &lifted.nest;
  rq.entry = entry;
  rq.oracle = &oracle;
  rq.name = name;
  r.k = specialize::compile_kernel(rq);
  EXPECT_TRUE(r.k.ok) << r.k.reason;
  if (!r.k.ok) return r;
  r.state.assign((size_t)r.k.layout.slots + 1, 0);
  // Variables appear in the order the lifter met them: range, n, i, s, A. Parameters:
  // n, s, then A's data, shape and stride (backends/kernel_abi.h).
  const auto& ps = r.k.layout.params;
  EXPECT_EQ(ps.size(), with_array ? 5u : 2u);
  using FnInt = int32_t (*)(int64_t*, int64_t, int64_t);
  using FnArr = int32_t (*)(int64_t*, int64_t, int64_t, const double*, int64_t, int64_t);
  if (with_array) {
    EXPECT_EQ(ps[2].kind, KernelParam::Kind::Data);
    r.status = ((FnArr)r.k.fn)(r.state.data(), n, 0, data, len < 0 ? n : len, 8);
  } else {
    r.status = ((FnInt)r.k.fn)(r.state.data(), n, 0);
  }
  return r;
}
}  // namespace

TEST(Codegen, IntegerSumRunsNatively) {
  KernelRun r = compile_and_run(false, 100);
  ASSERT_EQ(r.status, 0);
  // State: s and i (value, tag) per assigned variable.
  const auto& vars_slot = r.k.layout.var_slot;
  int64_t s_value = -1, i_value = -1;
  for (size_t v = 0; v < vars_slot.size(); v++) {
    if (vars_slot[v] < 0) continue;
    // Both assigned variables are Python ints; s = sum(range(100)), i = 99.
    int64_t x = r.state[(size_t)vars_slot[v]];
    if (x == 4950) s_value = x;
    if (x == 99) i_value = x;
  }
  EXPECT_EQ(s_value, 4950);
  EXPECT_EQ(i_value, 99);
}

TEST(Codegen, ArrayReadsAndPeeledTypeChange) {
  std::vector<double> A = {1.5, 2.5, -1.0, 4.0};
  KernelRun r = compile_and_run(true, 4, A.data());
  ASSERT_EQ(r.status, 0);
  double expect = 0;
  for (int i = 0; i < 4; i++) expect += A[(size_t)i] * i;
  bool found = false;
  for (size_t v = 0; v < r.k.layout.var_slot.size(); v++) {
    int slot = r.k.layout.var_slot[v];
    if (slot < 0) continue;
    int64_t tag = r.state[(size_t)slot + 1];
    if (tag > 0 && r.k.typed.tags[(size_t)tag - 1]->str() == "np.float64") {
      double d;
      std::memcpy(&d, &r.state[(size_t)slot], 8);
      EXPECT_EQ(d, expect);
      found = true;
    }
  }
  EXPECT_TRUE(found) << "s must end as a NumPy float64 after the first iteration";
}

TEST(Codegen, OutOfBoundsStopsBeforeTheStatement) {
  std::vector<double> A = {1.0, 2.0};
  // n = 3 reads A[2]: the kernel must stop at the statement in the body (resume 2).
  KernelRun r = compile_and_run(true, 3, A.data(), 2);
  EXPECT_EQ(r.status, 2);  // resume point 1 (1-based status): the body statement
  int loop_slot = r.k.layout.loop_slot[0];
  EXPECT_EQ(r.state[(size_t)loop_slot], 2);  // the loop's current value when it stopped
}

TEST(Oracle, PythonComplexRules) {
  specialize::Oracle o;
  auto Z = types::py_complex();
  EXPECT_TRUE(types::same(o.binary(ir::BinOp::Mul, Z, types::py_int()), Z));
  EXPECT_TRUE(types::same(o.binary(ir::BinOp::TrueDiv, types::py_float(), Z), Z));
  EXPECT_EQ(o.binary(ir::BinOp::FloorDiv, Z, Z), nullptr) << "complex // complex raises TypeError";
  EXPECT_EQ(o.compare(Z, Z), nullptr) << "complex numbers have no order";
  EXPECT_TRUE(types::same(o.call(Builtin::Abs, {Z}), types::py_float()));
  EXPECT_EQ(o.call(Builtin::MathSqrt, {Z}), nullptr) << "math.sqrt(complex) raises TypeError";
}

// s = 0j; for i in range(n): s += i  ->  s.real and s.imag, two float variables.
TEST(LowerComplex, ComplexSumBecomesTwoFloatParts) {
  Program p = sum_loop(false);
  auto lifted = analysis::lift_nest(p.a.code, p.spec);
  ASSERT_TRUE(lifted.ok) << lifted.reason;
  specialize::Oracle oracle;
  std::vector<TypeRef> entry(lifted.nest.vars.size(), types::unbound());
  for (size_t v = 0; v < lifted.nest.vars.size(); v++) {
    const auto& var = lifted.nest.vars[v];
    if (var.name == "range") entry[v] = types::callable(Builtin::Range);
    if (var.name == "n") entry[v] = types::py_int();
    if (var.name == "s") entry[v] = types::py_complex();
  }
  specialize::KernelRequest rq;
  rq.nest = &lifted.nest;
  rq.entry = entry;
  rq.oracle = &oracle;
  rq.name = "t_complex_sum";
  auto k = specialize::compile_kernel(rq);
  ASSERT_TRUE(k.ok) << k.reason;
  int re = var_index(k.typed.nest, "s.real"), im = var_index(k.typed.nest, "s.imag");
  ASSERT_GE(re, 0);
  ASSERT_GE(im, 0);
  EXPECT_EQ(k.typed.nest.vars[re].storage, ir::Var::Storage::Part);
  // Parameters: n, then s's parts (s itself enters as its parts only).
  const auto& ps = k.layout.params;
  ASSERT_EQ(ps.size(), 3u);
  EXPECT_EQ(ps[1].var, re);
  EXPECT_EQ(ps[2].repr, Repr::F64);
  std::vector<int64_t> state((size_t)k.layout.slots + 1, 0);
  using Fn = int32_t (*)(int64_t*, int64_t, double, double);
  ASSERT_EQ(((Fn)k.fn)(state.data(), 5, 0.5, -0.0), 0);
  double r, i;
  std::memcpy(&r, &state[(size_t)k.layout.var_slot[re]], 8);
  std::memcpy(&i, &state[(size_t)k.layout.var_slot[im]], 8);
  EXPECT_EQ(r, 10.5);  // 0.5 + 0 + 1 + 2 + 3 + 4
  EXPECT_EQ(i, 0.0);
  EXPECT_FALSE(std::signbit(i)) << "-0.0 + 0.0 (an int is i + 0j) is +0.0, as CPython computes it";
  int s = var_index(k.typed.nest, "s");
  EXPECT_TRUE(types::same(k.typed.tags[(size_t)state[(size_t)k.layout.var_slot[s] + 1] - 1], types::py_complex()));
}
