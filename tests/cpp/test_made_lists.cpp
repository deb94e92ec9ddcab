// The lists kernels make and read (Type::made): which variables hold them
// (ir::made_list_vars: those assigned a new list, and every variable one of them moves to or
// from), where their lengths come from (made_lengths.h), and the memory the runtime gives
// them (made_lists.h): a list no variable holds serves again, one some variable holds never
// does, and a list read at entry keeps its id.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "analysis/made_lengths.h"
#include "backends/cpu/made_lists.h"
#include "ir/ir.h"
#include "ir/mutate.h"
#include "nest_builder.h"

using namespace stagepy;
using ir::Expr;
using test_nests::NestBuilder;

namespace {

std::set<std::string> names(const ir::Nest& n, const std::set<int>& vs) {
  std::set<std::string> out;
  for (int v : vs) out.insert(n.vars[(size_t)v].name);
  return out;
}

int64_t address(const MadeList* m) { return (int64_t)(intptr_t)m; }

}  // namespace

TEST(MadeLists, RowsOfADynamicProgramAndTheirNames) {
  // for i in range(n): cur = [0] * m; for j ...: cur[j] = prev[j] + 1; prev = cur; s = t
  NestBuilder b;
  Expr repeat = ir::make_binary(ir::BinOp::Mul, ir::make_new_list({b.c(0)}, b.next_origin++), b.ld("m"), false, b.next_origin++);
  Expr store_value = ir::make_subscript(b.ld("prev"), b.ld("j"), b.next_origin++);
  b.root(b.loop(0, "i", {b.ld("n")},
                {b.assign("cur", repeat), b.loop(1, "j", {b.ld("m")}, {b.assign("x", store_value)}),
                 b.assign("prev", b.ld("cur")), b.assign("s", b.ld("t"))}));
  EXPECT_EQ(names(b.nest, ir::made_list_vars(b.nest.root, b.nest.vars)), (std::set<std::string>{"cur", "prev"}));
}

TEST(MadeLists, CopiesAndDisplaysMakeListsButRowsDoNot) {
  NestBuilder b;
  ir::ConstValue none;
  Expr n1 = ir::make_const(none, b.next_origin++);
  Expr all = ir::make_slice(n1, n1, n1, b.next_origin++);
  b.root(b.loop(0, "i", {b.ld("n")},
                {b.assign("new", ir::make_subscript(b.ld("best"), all, b.next_origin++)),
                 b.assign("row", ir::make_subscript(b.ld("A"), b.ld("i"), b.next_origin++)),
                 b.assign("d", ir::make_new_list({b.ld("x"), b.ld("y")}, b.next_origin++)),
                 b.assign("best", b.ld("new"))}));
  EXPECT_EQ(names(b.nest, ir::made_list_vars(b.nest.root, b.nest.vars)), (std::set<std::string>{"best", "d", "new"}));
  // A copy is no view of the list it copies: no fact about rows describes it.
  EXPECT_EQ(names(b.nest, ir::subscript_assigned(b.nest.root)), (std::set<std::string>{"row"}));
}

TEST(MadeLists, MemoryNoVariableHoldsIsReused) {
  backends::cpu::MadeLists lists;
  backends::cpu::MadeLists::Scope scope(&lists);
  int64_t live[2] = {0, 0};
  auto* a = static_cast<MadeList*>(stagepy_list_make(10, 8, 0, live, 2));
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->len, 10);
  EXPECT_EQ(a->source, -1);
  EXPECT_EQ((uintptr_t)a->data % 64, 0u);
  live[0] = address(a);
  auto* b = static_cast<MadeList*>(stagepy_list_make(10, 8, 0, live, 2));
  ASSERT_NE(b, nullptr);
  EXPECT_NE(b, a);  // a is held
  live[1] = address(b);
  auto* c = static_cast<MadeList*>(stagepy_list_make(4, 8, 0, live, 2));
  EXPECT_NE(c, a);
  EXPECT_NE(c, b);
  // `prev = cur`: a is garbage now, and serves the next list (shorter, so it fits).
  live[0] = address(b);
  live[1] = address(c);
  auto* d = static_cast<MadeList*>(stagepy_list_make(7, 8, 0, live, 2));
  EXPECT_EQ(d, a);
  EXPECT_EQ(d->len, 7);
  // A larger one than any garbage block: new memory.
  live[0] = address(d);
  auto* e = static_cast<MadeList*>(stagepy_list_make(1000, 8, 0, live, 2));
  ASSERT_NE(e, nullptr);
  EXPECT_NE(e, b);
  EXPECT_NE(e, d);
  for (int64_t k = 0; k < 1000; k++) reinterpret_cast<int64_t*>(e->data)[k] = k;  // all of it is its own
}

TEST(MadeLists, AListAppendedToAnotherIsNeverReused) {
  // rows.append(row); row = [0] * m: the first row is no variable's, but rows holds it.
  backends::cpu::MadeLists lists;
  backends::cpu::MadeLists::Scope scope(&lists);
  int64_t live[1] = {0};
  auto* a = static_cast<MadeList*>(stagepy_list_make(6, 8, 0, live, 1));
  ASSERT_NE(a, nullptr);
  a->pinned = 1;
  auto* b = static_cast<MadeList*>(stagepy_list_make(6, 8, 0, live, 1));
  EXPECT_NE(b, a);
  live[0] = address(b);
  auto* c = static_cast<MadeList*>(stagepy_list_make(6, 8, 0, live, 1));
  EXPECT_NE(c, a);
  EXPECT_NE(c, b);
}

TEST(MadeLists, EntryListsKeepTheirIdAndAreNeverReused) {
  backends::cpu::MadeLists lists;
  backends::cpu::MadeLists::Scope scope(&lists);
  std::vector<int64_t> items(5, 3);
  auto* w = static_cast<MadeList*>(stagepy_list_wrap(items.data(), 5, 2, (int64_t)DType::Int64));
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->source, 2);
  EXPECT_EQ(w->data, reinterpret_cast<char*>(items.data()));
  EXPECT_EQ(w->kind, (int64_t)DType::Int64);
  auto* m = static_cast<MadeList*>(stagepy_list_make(5, 8, 0, nullptr, 0));
  EXPECT_NE(m, w);
}

TEST(MadeLists, AnEntryListThatGrowsMovesItsItemsAndKeepsItsHeader) {
  // `L.append(x)` of a list read at entry: its first append moves the items to a block of
  // their own (the entry buffer has no room); the header, which variables hold, stays.
  backends::cpu::MadeLists lists;
  backends::cpu::MadeLists::Scope scope(&lists);
  std::vector<int64_t> items = {7, 8, 9};
  auto* w = static_cast<MadeList*>(stagepy_list_wrap(items.data(), 3, 0, (int64_t)DType::Int64));
  ASSERT_NE(w, nullptr);
  for (int64_t k = 0; k < 100; k++) {
    auto* slot = static_cast<int64_t*>(stagepy_list_grow(w, 8));
    ASSERT_NE(slot, nullptr);
    *slot = 10 + k;
  }
  EXPECT_EQ(w->len, 103);
  EXPECT_NE(w->data, reinterpret_cast<char*>(items.data()));
  EXPECT_GE(w->bytes, 103 * 8);
  const auto* got = reinterpret_cast<const int64_t*>(w->data);
  EXPECT_EQ(got[0], 7);
  EXPECT_EQ(got[2], 9);
  EXPECT_EQ(got[3], 10);
  EXPECT_EQ(got[102], 109);
  EXPECT_EQ(items, (std::vector<int64_t>{7, 8, 9}));  // the entry buffer as it was
  // A list made with room to spare grows in place.
  auto* m = static_cast<MadeList*>(stagepy_list_make(4, 8, 0, nullptr, 0));
  ASSERT_NE(m, nullptr);
  m->len = 2;  // (two pops)
  char* before = m->data;
  ASSERT_NE(stagepy_list_grow(m, 8), nullptr);
  EXPECT_EQ(m->data, before);
  EXPECT_EQ(m->len, 3);
  EXPECT_EQ(stagepy_list_grow(m, 0), nullptr);  // no such item size
  EXPECT_EQ(m->len, 3);
}

TEST(MadeLists, ImpossibleListsGetNoMemory) {
  backends::cpu::MadeLists lists;
  backends::cpu::MadeLists::Scope scope(&lists);
  EXPECT_EQ(stagepy_list_make(int64_t(1) << 41, 8, 0, nullptr, 0), nullptr);
  EXPECT_EQ(stagepy_list_make(-1, 8, 0, nullptr, 0), nullptr);
  auto* empty = static_cast<MadeList*>(stagepy_list_make(0, 8, 0, nullptr, 0));
  ASSERT_NE(empty, nullptr);
  EXPECT_EQ(empty->len, 0);
}

TEST(MadeLists, WithoutACallsListsKernelsGetNone) {
  EXPECT_EQ(stagepy_list_make(3, 8, 0, nullptr, 0), nullptr);
  EXPECT_EQ(stagepy_list_wrap(nullptr, 0, 0, 0), nullptr);
  MadeList lone;
  EXPECT_EQ(stagepy_list_grow(&lone, 8), nullptr);
}

namespace {

// The one class of `made` in b's nest.
analysis::MadeListClass one_class(NestBuilder& b) {
  std::vector<analysis::MadeListClass> cs =
      analysis::made_list_lengths(b.nest, ir::made_list_vars(b.nest.root, b.nest.vars));
  EXPECT_EQ(cs.size(), 1u);
  return cs.empty() ? analysis::MadeListClass{} : cs[0];
}

}  // namespace

TEST(MadeLengths, RowsMadeFromACountAndMovedKeepOneLength) {
  // u = ...(at entry); for s in range(k): v = [0.0] * (n + 1); for i ...: v[i] = u[i]; u = v
  NestBuilder b;
  Expr repeat = b.mul(ir::make_new_list({b.c(0)}, b.next_origin++), b.add(b.ld("n"), b.c(1)));
  b.root(b.loop(0, "s", {b.ld("k")},
                {b.assign("v", repeat), b.loop(1, "i", {b.ld("n")}, {b.store("v", {b.ld("i")}, b.idx("u", {b.ld("i")}))}),
                 b.assign("u", b.ld("v"))}));
  analysis::MadeListClass c = one_class(b);
  ASSERT_TRUE(c.known) << c.why;
  // u is read before the nest assigns it: its list at entry is a source, as is the count.
  ASSERT_EQ(c.sources.size(), 2u);
  EXPECT_EQ(c.sources[0].kind, analysis::MadeLengthSource::Kind::Entry);
  EXPECT_EQ(b.nest.vars[(size_t)c.sources[0].var].name, "u");
  EXPECT_EQ(c.sources[1].kind, analysis::MadeLengthSource::Kind::Count);
  EXPECT_EQ(c.sources[1].constant, 1);
  ASSERT_EQ(c.sources[1].terms.size(), 1u);
  EXPECT_EQ(b.nest.vars[(size_t)c.sources[1].terms[0].var].name, "n");
  EXPECT_EQ(c.sources[1].terms[0].coef, 1);
}

TEST(MadeLengths, ACountTheNestAssignsOrAnAppendLeavesTheLengthsUnknown) {
  {
    NestBuilder b;  // for i in range(k): m = i; row = [0] * m
    b.root(b.loop(0, "i", {b.ld("k")},
                  {b.assign("m", b.ld("i")), b.assign("row", b.mul(ir::make_new_list({b.c(0)}, b.next_origin++), b.ld("m")))}));
    EXPECT_FALSE(one_class(b).known);
  }
  {
    NestBuilder b;  // for i in range(k): row = [0] * 4; row.append(i)
    ir::Effect app;
    app.kind = ir::Effect::Kind::Append;
    app.base = b.ld("row");
    app.value = b.ld("i");
    b.root(b.loop(0, "i", {b.ld("k")},
                  {b.assign("row", b.mul(ir::make_new_list({b.c(0)}, b.next_origin++), b.c(4))), ir::make_seg({app}, 0, 5)}));
    analysis::MadeListClass c = one_class(b);
    EXPECT_FALSE(c.known);
    EXPECT_EQ(c.why, "it is appended to");
  }
  {
    NestBuilder b;  // for i in range(k): row = [0] * 4; f(row)   (a call may change it)
    ir::Effect ev;
    ev.kind = ir::Effect::Kind::Eval;
    ev.value = ir::make_call(b.ld("f"), {b.ld("row")}, {}, b.next_origin++);
    b.root(b.loop(0, "i", {b.ld("k")},
                  {b.assign("row", b.mul(ir::make_new_list({b.c(0)}, b.next_origin++), b.c(4))), ir::make_seg({ev}, 0, 5)}));
    EXPECT_FALSE(one_class(b).known);
  }
}

TEST(MadeLengths, WholeCopiesHaveTheirSourcesLengthAndPartsDoNot) {
  ir::ConstValue none;
  {
    NestBuilder b;  // for i in range(k): new = best[:]; best = new   (best read at entry)
    Expr n1 = ir::make_const(none, b.next_origin++);
    Expr all = ir::make_slice(n1, n1, n1, b.next_origin++);
    b.root(b.loop(0, "i", {b.ld("k")},
                  {b.assign("new", ir::make_subscript(b.ld("best"), all, b.next_origin++)), b.assign("best", b.ld("new"))}));
    analysis::MadeListClass c = one_class(b);
    ASSERT_TRUE(c.known) << c.why;
    ASSERT_EQ(c.sources.size(), 1u);  // the copies add nothing to best's list at entry
    EXPECT_EQ(c.sources[0].kind, analysis::MadeLengthSource::Kind::Entry);
  }
  {
    NestBuilder b;  // for i in range(k): part = xs[1:]
    Expr n1 = ir::make_const(none, b.next_origin++);
    Expr tail = ir::make_slice(b.c(1), n1, n1, b.next_origin++);
    b.root(b.loop(0, "i", {b.ld("k")}, {b.assign("part", ir::make_subscript(b.ld("xs"), tail, b.next_origin++))}));
    EXPECT_FALSE(one_class(b).known);
  }
}


TEST(MadeLengths, ARowAsLongAsAnotherMadeRowHasItsClassLength) {
  // for i in range(k): nxt = [0] * len(row); ...; row = nxt   (row read at entry)
  NestBuilder b;
  Expr len_row = ir::make_call(b.ld("len"), {b.ld("row")}, {}, b.next_origin++);
  b.root(b.loop(0, "i", {b.ld("k")},
                {b.assign("nxt", b.mul(ir::make_new_list({b.c(0)}, b.next_origin++), len_row)),
                 b.store("nxt", {b.c(0)}, b.idx("row", {b.c(0)})), b.assign("row", b.ld("nxt"))}));
  analysis::MadeListClass c = one_class(b);
  ASSERT_TRUE(c.known) << c.why;
  ASSERT_EQ(c.sources.size(), 1u);  // the list row holds at entry; nxt's are as long
  EXPECT_EQ(c.sources[0].kind, analysis::MadeLengthSource::Kind::Entry);
  ASSERT_EQ(c.len_callees.size(), 1u);  // len must be the builtin where the length holds
  EXPECT_EQ(b.nest.vars[(size_t)c.len_callees[0]].name, "len");
}
