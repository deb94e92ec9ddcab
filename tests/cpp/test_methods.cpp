// Methods on objects, on IR built directly: bind_methods links each `o.m(a)` to a Method
// variable naming where the receiver's objects come from (a variable the nest never
// assigns; the lists a loop's items are drawn from), and defer_attribute_stores makes an
// inlined call's attribute assignments happen at its end, refusing where two expressions
// that may be one object see an attribute in another order than CPython would.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/bind_methods.h"
#include "ir/ir.h"
#include "ir/mutate.h"
#include "nest_builder.h"
#include "specialize/defer_attribute_stores.h"

using namespace stagepy;
using ir::Expr;
using ir::Stmt;
using test_nests::NestBuilder;

namespace {

Stmt call_stmt(NestBuilder& b, Expr receiver, const std::string& m, std::vector<Expr> args) {
  ir::Effect e;
  e.kind = ir::Effect::Kind::Eval;
  e.value = ir::make_call(ir::make_attr(receiver, m, b.next_origin++), std::move(args), {}, b.next_origin++);
  e.origin = b.next_origin++;
  return ir::make_seg({e}, 0, 5);
}

// The Method variable each method call in `n` is linked to (-1: none), in order.
std::vector<int> linked(const ir::Nest& n) {
  std::vector<int> out;
  ir::for_each_expr(n.root, [&](const Expr& x) {
    if (x->kind == ir::ExprNode::Kind::Call) out.push_back(x->method);
  });
  return out;
}

int var_index(const ir::Nest& n, const std::string& name) {
  for (size_t v = 0; v < n.vars.size(); v++)
    if (n.vars[v].name == name) return (int)v;
  return -1;
}

}  // namespace

TEST(BindMethods, ItemsOfListsAndObjectsTheNestNeverAssigns) {
  // for k in range(n): p = ps[k]; p.update(dt); self.step(dt); q = g(k); q.m()
  NestBuilder b;
  b.root(b.loop(0, "k", {b.ld("n")},
                {b.assign("p", ir::make_subscript(b.ld("ps"), b.ld("k"), b.next_origin++)),
                 call_stmt(b, b.ld("p"), "update", {b.ld("dt")}), call_stmt(b, b.ld("self"), "step", {b.ld("dt")}),
                 b.assign("q", ir::make_call(b.ld("g"), {b.ld("k")}, {}, b.next_origin++)),
                 call_stmt(b, b.ld("q"), "m", {})}));
  ir::Nest n = analysis::bind_methods(b.nest);
  const std::vector<int> calls = linked(n);  // update, step, g, m
  ASSERT_EQ(calls.size(), 4u);
  ASSERT_GE(calls[0], 0);
  const ir::Var& update = n.vars[(size_t)calls[0]];
  EXPECT_EQ(update.storage, ir::Var::Storage::Method);
  EXPECT_EQ(update.method, "update");
  EXPECT_TRUE(update.method_on_items);
  EXPECT_EQ(update.method_sources, std::vector<int>{var_index(n, "ps")});
  ASSERT_GE(calls[1], 0);
  const ir::Var& step = n.vars[(size_t)calls[1]];
  EXPECT_FALSE(step.method_on_items);
  EXPECT_EQ(step.method_sources, std::vector<int>{var_index(n, "self")});
  EXPECT_EQ(calls[2], -1);  // g(k): no method
  EXPECT_EQ(calls[3], -1);  // q holds what g returns: nothing the dispatcher can look at first
}

TEST(BindMethods, ARowFromTwoListsNamesBoth) {
  // for k in range(n): p = ps[k]; p.f(); p = qs[k]; p.f()
  NestBuilder b;
  b.root(b.loop(0, "k", {b.ld("n")},
                {b.assign("p", ir::make_subscript(b.ld("ps"), b.ld("k"), b.next_origin++)),
                 call_stmt(b, b.ld("p"), "f", {}),
                 b.assign("p", ir::make_subscript(b.ld("qs"), b.ld("k"), b.next_origin++)),
                 call_stmt(b, b.ld("p"), "f", {})}));
  ir::Nest n = analysis::bind_methods(b.nest);
  const std::vector<int> calls = linked(n);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0], calls[1]);  // one variable for the one receiver
  ASSERT_GE(calls[0], 0);
  EXPECT_EQ(n.vars[(size_t)calls[0]].method_sources.size(), 2u);
}

namespace {

Stmt set_attr(NestBuilder& b, Expr obj, const std::string& attr, Expr value) {
  ir::Effect e;
  e.kind = ir::Effect::Kind::Store;
  e.base = obj;
  e.index = b.c(-1);
  e.attr = attr;
  e.value = value;
  e.origin = b.next_origin++;
  return ir::make_seg({e}, 0, 5);
}
Expr attr(NestBuilder& b, const std::string& obj, const std::string& a) {
  return ir::make_attr(b.ld(obj), a, b.next_origin++);
}

struct Counted {
  int stores = 0, attr_reads = 0;
};
Counted count(const Stmt& s) {
  Counted c;
  ir::for_each_stmt(s, [&](const Stmt& x) {
    for (auto& f : x->effects) c.stores += f.kind == ir::Effect::Kind::Store;
  });
  ir::for_each_expr(s, [&](const Expr& x) { c.attr_reads += x->kind == ir::ExprNode::Kind::Attr; });
  return c;
}

specialize::DeferredStores defer(NestBuilder& b, std::vector<Stmt> body) {
  int next = 1000;
  return specialize::defer_attribute_stores(ir::make_block(std::move(body)), b.nest.vars, "m", 7, 3,
                                            [&] { return next++; });
}

}  // namespace

TEST(DeferAttributeStores, AssignmentsGoLastAndReadsFollowThem) {
  // self.x = self.x + 1; y = self.x * 2; self.v = y
  NestBuilder b;
  auto d = defer(b, {set_attr(b, b.ld("self"), "x", b.add(attr(b, "self", "x"), b.c(1))),
                     b.assign("y", b.mul(attr(b, "self", "x"), b.c(2))), set_attr(b, b.ld("self"), "v", b.ld("y"))});
  ASSERT_TRUE(d.ok) << d.why;
  // Two attributes: each read once at the start (its Temp), stored once at the end.
  const Counted c = count(d.body);
  EXPECT_EQ(c.stores, 2);
  EXPECT_EQ(c.attr_reads, 2);
  ASSERT_EQ(d.body->kind, ir::StmtNode::Kind::Block);
  const Stmt& last = d.body->body.back();
  ASSERT_EQ(last->effects.size(), 2u);
  EXPECT_EQ(last->effects[0].attr, "x");
  EXPECT_EQ(last->effects[1].attr, "v");
  EXPECT_EQ(last->resume, 7);
  // (Numbered per attribute, its read then its store.)
  EXPECT_EQ(last->effects[0].origin, 1001);
  EXPECT_EQ(last->effects[1].origin, 1003);
}

TEST(DeferAttributeStores, AnotherObjectReadBeforeTheAssignmentIsFine) {
  // self.x = other.x  (other may be self: it reads x before the change either way)
  NestBuilder b;
  auto d = defer(b, {set_attr(b, b.ld("self"), "x", attr(b, "other", "x"))});
  EXPECT_TRUE(d.ok) << d.why;
}

TEST(DeferAttributeStores, AnotherObjectReadAfterTheAssignmentIsRefused) {
  // self.x = 1; y = other.x
  NestBuilder b;
  auto d = defer(b, {set_attr(b, b.ld("self"), "x", b.c(1)), b.assign("y", attr(b, "other", "x"))});
  EXPECT_FALSE(d.ok);
  EXPECT_NE(d.why.find("may be one"), std::string::npos) << d.why;
}

TEST(DeferAttributeStores, ALoopReadsAfterTheAssignmentOfItsLastIteration) {
  // for k in range(n): y = other.x; self.x = y
  NestBuilder b;
  auto d = defer(b, {b.loop(0, "k", {b.ld("n")},
                            {b.assign("y", attr(b, "other", "x")), set_attr(b, b.ld("self"), "x", b.ld("y"))})});
  EXPECT_FALSE(d.ok);
}

TEST(DeferAttributeStores, AnObjectTheCallComputesIsAssignedInPlace) {
  // o = g(); o.x = 1  (the caller logs the statement)
  NestBuilder b;
  auto d = defer(b, {b.assign("o", ir::make_call(b.ld("g"), {}, {}, b.next_origin++)), set_attr(b, b.ld("o"), "x", b.c(1))});
  ASSERT_TRUE(d.ok) << d.why;
  EXPECT_TRUE(d.in_place);
  const Counted c = count(d.body);
  EXPECT_EQ(c.stores, 1);  // where it was, no Temp
  EXPECT_EQ(c.attr_reads, 0);
}

TEST(DeferAttributeStores, OneAttributeOfAPassedAndOfAComputedObjectIsRefused) {
  // self.x = 1; o = g(); o.x = 2  (o may be self)
  NestBuilder b;
  auto d = defer(b, {set_attr(b, b.ld("self"), "x", b.c(1)), b.assign("o", ir::make_call(b.ld("g"), {}, {}, b.next_origin++)),
                     set_attr(b, b.ld("o"), "x", b.c(2))});
  EXPECT_FALSE(d.ok);
  EXPECT_NE(d.why.find("may be one"), std::string::npos) << d.why;
}
