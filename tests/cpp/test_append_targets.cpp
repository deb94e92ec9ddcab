// append_targets on nests built directly as IR: which variables become lists the kernel
// collects items for (Var::appended, their `.append(x)` calls Append effects): lists only
// appended to, and variables assigned only new lists (`row = []`) and used only by
// appending, len() and being appended themselves; any other use keeps them Python lists.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "analysis/append_targets.h"
#include "ir/ir.h"
#include "ir/mutate.h"
#include "nest_builder.h"

using namespace stagepy;
using ir::Expr;
using ir::Stmt;
using test_nests::NestBuilder;

namespace {

// `L.append(x)` as an expression statement, as the lifter makes it.
Stmt append(NestBuilder& b, const std::string& list, Expr item) {
  ir::Effect e;
  e.kind = ir::Effect::Kind::Eval;
  e.value = ir::make_call(ir::make_attr(b.ld(list), "append", b.next_origin++), {item}, {}, b.next_origin++);
  e.origin = b.next_origin++;
  return ir::make_seg({e}, 0, 5);
}

Expr new_list(NestBuilder& b, std::vector<Expr> items = {}) { return ir::make_new_list(std::move(items), b.next_origin++); }

bool appended(const ir::Nest& n, const std::string& name) {
  for (const auto& v : n.vars)
    if (v.name == name) return v.appended;
  ADD_FAILURE() << "no variable " << name;
  return false;
}

int append_effects(const ir::Nest& n) {
  int k = 0;
  ir::for_each_stmt(n.root, [&](const Stmt& s) {
    for (const auto& f : s->effects) k += f.kind == ir::Effect::Kind::Append;
  });
  return k;
}

// for i in range(n): row = []; for j in range(m): row.append(j); rows.append(row)
ir::Nest rows_nest(bool read_row_too) {
  NestBuilder b;
  std::vector<Stmt> inner = {append(b, "row", b.ld("j"))};
  if (read_row_too) inner.push_back(b.assign("x", ir::make_subscript(b.ld("row"), b.c(0), b.next_origin++)));
  b.root(b.loop(0, "i", {b.ld("n")},
                {b.assign("row", new_list(b)), b.loop(1, "j", {b.ld("m")}, inner), append(b, "rows", b.ld("row"))}));
  return b.nest;
}

}  // namespace

TEST(AppendTargets, RowsMadeAndAppendedAreCollected) {
  ir::Nest n = analysis::append_targets(rows_nest(false));
  EXPECT_TRUE(appended(n, "row"));
  EXPECT_TRUE(appended(n, "rows"));
  EXPECT_EQ(append_effects(n), 2);
}

TEST(AppendTargets, ARowAlsoReadStaysAPythonList) {
  // `row[0]` reads it: row is no target (its append stays a call). `rows.append(row)` is
  // still an Append; type inference then refuses its item, a Python list.
  ir::Nest n = analysis::append_targets(rows_nest(true));
  EXPECT_FALSE(appended(n, "row"));
  EXPECT_TRUE(appended(n, "rows"));
  EXPECT_EQ(append_effects(n), 1);
}

TEST(AppendTargets, AVariableAlsoAssignedSomethingElseIsNoTarget) {
  NestBuilder b;
  b.root(b.loop(0, "i", {b.ld("n")},
                {b.assign("row", new_list(b)), append(b, "row", b.ld("i")), b.assign("row", b.ld("other"))}));
  ir::Nest n = analysis::append_targets(b.nest);
  EXPECT_FALSE(appended(n, "row"));
}

TEST(AppendTargets, NewListsOfItemsAndChains) {
  // pairs.append([i, j]); node = [i, node]
  NestBuilder b;
  b.root(b.loop(0, "i", {b.ld("n")},
                {append(b, "pairs", new_list(b, {b.ld("i"), b.ld("j")})),
                 b.assign("node", new_list(b, {b.ld("i"), b.ld("node")}))}));
  ir::Nest n = analysis::append_targets(b.nest);
  EXPECT_TRUE(appended(n, "pairs"));
  EXPECT_TRUE(appended(n, "node"));
  EXPECT_FALSE(appended(n, "i"));
  EXPECT_EQ(append_effects(n), 1);
}

namespace {
const ir::Var& var_named(const ir::Nest& n, const std::string& name) {
  for (const auto& v : n.vars)
    if (v.name == name) return v;
  static ir::Var none;
  ADD_FAILURE() << "no variable " << name;
  return none;
}
}  // namespace

TEST(AppendTargets, ListsAppendedToAndReadGrowByHeader) {
  // for i in range(n): fib.append(fib[i] + 1); x = st.pop(); out.append(i)
  NestBuilder b;
  b.root(b.loop(0, "i", {b.ld("n")},
                {append(b, "fib", ir::make_subscript(b.ld("fib"), b.ld("i"), b.next_origin++)),
                 b.assign("x", ir::make_call(ir::make_attr(b.ld("st"), "pop", b.next_origin++), {}, {}, b.next_origin++)),
                 append(b, "out", b.ld("i"))}));
  ir::Nest n = analysis::append_targets(b.nest);
  // `out` is only appended to: collected. `fib` is read too and `st` pops: their lists grow
  // and shrink by header (Type::made), so they count as assigned and hold made lists.
  EXPECT_TRUE(var_named(n, "out").appended);
  EXPECT_FALSE(var_named(n, "out").resized);
  for (const char* name : {"fib", "st"}) {
    EXPECT_TRUE(var_named(n, name).resized) << name;
    EXPECT_TRUE(var_named(n, name).assigned) << name;
    EXPECT_FALSE(var_named(n, name).appended) << name;
  }
  EXPECT_EQ(append_effects(n), 1);  // out's; fib's stays a call (type inference types it)
  const std::set<int> made = ir::made_list_vars(n.root, n.vars);
  int held = 0;
  for (int v : made) held += n.vars[(size_t)v].name == "fib" || n.vars[(size_t)v].name == "st";
  EXPECT_EQ(held, 2);
}
