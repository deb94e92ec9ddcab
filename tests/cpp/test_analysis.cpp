// The static dependence and bounds analysis (build_poly_model + derive_conditions) on
// nests built directly as IR: which parameter values make a loop carry a dependence, an
// index leave its array, or an int operation overflow. Expectations are checked at sample
// parameter values against what a Python execution would do.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "analysis/derive_conditions.h"
#include "analysis/isl_support.h"
#include "analysis/param_set.h"
#include <isl/set.h>
#include "analysis/poly_model.h"
#include "ir/ir.h"
#include "nest_builder.h"

using namespace stagepy;
using namespace stagepy::analysis;
using ir::Expr;
using ir::Stmt;
using test_nests::NestBuilder;

namespace {

struct Analysis {
  PolyModel model;
  NestConditions conds;
  std::map<std::string, int> param_pos;

  // Parameter values by isl name prefix ("p_n", "N_A_..._0").
  std::vector<int64_t> values(const std::map<std::string, int64_t>& byname) const {
    std::vector<int64_t> v(conds.params.size(), 0);
    for (size_t i = 0; i < conds.params.size(); i++)
      for (auto& [k, x] : byname)
        if (conds.params[i].name.rfind(k, 0) == 0) v[i] = x;
    return v;
  }
  const Condition* find(FactKind k, int loop = -1) const {
    for (auto& c : conds.conds)
      if (c.fact.kind == k && (loop < 0 || c.fact.loop == loop)) return &c;
    return nullptr;
  }
  bool carried(int loop, const std::map<std::string, int64_t>& byname) const {
    const Condition* c = find(FactKind::NoCarried, loop);
    EXPECT_NE(c, nullptr);
    auto v = values(byname);
    return c->violated.contains(v.data());
  }
};

Analysis analyze(const ir::Nest& n) {
  Analysis a;
  a.model = build_poly_model(n);
  a.conds = derive_conditions(a.model, n);
  EXPECT_TRUE(a.conds.ok) << a.conds.error;
  return a;
}

}  // namespace

// for i in range(n): A[i] = A[i + d] + 1   -- the example, with Python's wrap-around.
TEST(Analysis, ShiftedCopyIsParallelExactlyWhenTheShiftMissesTheRange) {
  NestBuilder b;
  b.root(b.loop(0, "i", {b.ld("n")}, {b.store("A", {b.ld("i")}, b.add(b.idx("A", {b.add(b.ld("i"), b.ld("d"))}), b.c(1)))}));
  Analysis a = analyze(b.nest);
  // d = 0: each iteration reads and writes only A[i].
  EXPECT_FALSE(a.carried(0, {{"p_n", 10}, {"p_d", 0}, {"N_A", 10}}));
  // 0 < d < n: A[i + d] is written by a later iteration (anti dependence).
  EXPECT_TRUE(a.carried(0, {{"p_n", 10}, {"p_d", 3}, {"N_A", 20}}));
  // -n < d < 0 without wrapping: A[i + d] was written by an earlier iteration.
  EXPECT_TRUE(a.carried(0, {{"p_n", 10}, {"p_d", -2}, {"N_A", 20}}));
  // d >= n: reads lie beyond every write.
  EXPECT_FALSE(a.carried(0, {{"p_n", 10}, {"p_d", 10}, {"N_A", 30}}));
  // A negative d makes some index negative: the NonNeg fact of A[i + d] fails, which keeps
  // the loop sequential whatever NoCarried says (Python's wrap-around is not modelled).
  bool nonneg_fails = false;
  for (auto& c : a.conds.conds)
    if (c.fact.kind == FactKind::NonNeg) {
      auto v = a.values({{"p_n", 10}, {"p_d", -1}, {"N_A", 10}});
      nonneg_fails = nonneg_fails || c.violated.contains(v.data());
    }
  EXPECT_TRUE(nonneg_fails);
}

// for i in range(1, n): A[i] = A[i - 1] * 2   -- a prefix recurrence: always carried.
TEST(Analysis, RecurrenceIsCarried) {
  NestBuilder b;
  b.root(b.loop(0, "i", {b.c(1), b.ld("n")}, {b.store("A", {b.ld("i")}, b.mul(b.idx("A", {b.sub(b.ld("i"), b.c(1))}), b.c(2)))}));
  Analysis a = analyze(b.nest);
  EXPECT_TRUE(a.carried(0, {{"p_n", 10}, {"N_A", 10}}));
  EXPECT_FALSE(a.carried(0, {{"p_n", 2}, {"N_A", 10}}));  // one iteration carries nothing
  const Condition* c = a.find(FactKind::NoCarried, 0);
  ASSERT_FALSE(c->conflicts.empty());
}

// for i in range(n): H[K[i]] = H[K[i]] + 1; A[i] = A[i + d]   -- a histogram beside a
// shifted copy: H's updates always conflict, so NoCarried fails; NoCarriedBesideUpdates
// leaves H out (a copy per thread) and is decided by d alone.
TEST(Analysis, UpdatesOfAnArrayAreLeftOutOfTheConditionBesideUpdates) {
  NestBuilder b;
  Expr k = b.idx("K", {b.ld("i")});
  b.root(b.loop(0, "i", {b.ld("n")},
                {b.store("H", {k}, b.add(b.idx("H", {k}), b.c(1))),
                 b.store("A", {b.ld("i")}, b.idx("A", {b.add(b.ld("i"), b.ld("d"))}))}));
  Analysis a = analyze(b.nest);
  const Condition* beside = a.find(FactKind::NoCarriedBesideUpdates, 0);
  ASSERT_NE(beside, nullptr);
  ASSERT_EQ(beside->updated.size(), 1u);
  EXPECT_EQ(b.nest.vars[(size_t)beside->updated[0]].name, "H");
  auto at = [&](int64_t d) { return a.values({{"p_n", 10}, {"p_d", d}, {"N_A", 30}, {"N_H", 4}, {"N_K", 10}}); };
  for (int64_t d : {0, 3}) EXPECT_TRUE(a.carried(0, {{"p_n", 10}, {"p_d", d}, {"N_A", 30}, {"N_H", 4}, {"N_K", 10}}));
  EXPECT_FALSE(beside->violated.contains(at(0).data()));
  EXPECT_TRUE(beside->violated.contains(at(3).data()));
  EXPECT_FALSE(beside->violated.contains(at(10).data()));
}

// for i in range(n): H[K[i]] = H[K[i]] + 1; s = H[0]   -- H is also read: not only updated.
TEST(Analysis, AnArrayAlsoReadIsNotLeftOut) {
  NestBuilder b;
  Expr k = b.idx("K", {b.ld("i")});
  b.root(b.loop(0, "i", {b.ld("n")},
                {b.store("H", {k}, b.add(b.idx("H", {k}), b.c(1))), b.assign("s", b.idx("H", {b.c(0)}))}));
  Analysis a = analyze(b.nest);
  EXPECT_EQ(a.find(FactKind::NoCarriedBesideUpdates, 0), nullptr);
}

// for i in range(n): for j in range(m): C[i, j] = A[i, j] + B[j, i]
TEST(Analysis, IndependentOuterAndInnerLoops) {
  NestBuilder b;
  Stmt inner = b.loop(1, "j", {b.ld("m")}, {b.store("C", {b.ld("i"), b.ld("j")},
                                                     b.add(b.idx("A", {b.ld("i"), b.ld("j")}), b.idx("B", {b.ld("j"), b.ld("i")})))});
  b.root(b.loop(0, "i", {b.ld("n")}, {inner}));
  Analysis a = analyze(b.nest);
  std::map<std::string, int64_t> p = {{"p_n", 8}, {"p_m", 9}, {"N_C", 9}, {"N_A", 9}, {"N_B", 9}};
  EXPECT_FALSE(a.carried(0, p));
  EXPECT_FALSE(a.carried(1, p));
}

// for i in range(n): for j in range(m): ...   -- j runs every time exactly when m >= 1 or
// the outer loop never runs; for j in range(i, m) it may not where n > m.
TEST(Analysis, AnInnerLoopRunsEveryTimeExactlyWhenItsBoundsSaySo) {
  NestBuilder b;
  Stmt inner = b.loop(1, "j", {b.ld("m")}, {b.store("C", {b.ld("i"), b.ld("j")}, b.c(1))});
  b.root(b.loop(0, "i", {b.ld("n")}, {inner}));
  Analysis a = analyze(b.nest);
  const Condition* ne = a.find(FactKind::NonEmpty, 1);
  ASSERT_NE(ne, nullptr);
  EXPECT_EQ(a.find(FactKind::NonEmpty, 0), nullptr);  // the outermost loop: no fact asked
  auto runs = a.values({{"p_n", 5}, {"p_m", 1}});
  auto empty = a.values({{"p_n", 5}, {"p_m", 0}});
  auto never = a.values({{"p_n", 0}, {"p_m", 0}});
  EXPECT_FALSE(ne->violated.contains(runs.data()));
  EXPECT_TRUE(ne->violated.contains(empty.data()));
  EXPECT_FALSE(ne->violated.contains(never.data()));

  NestBuilder t;
  Stmt tri = t.loop(1, "j", {t.ld("i"), t.ld("m")}, {t.store("C", {t.ld("i"), t.ld("j")}, t.c(1))});
  t.root(t.loop(0, "i", {t.ld("n")}, {tri}));
  Analysis at = analyze(t.nest);
  const Condition* tne = at.find(FactKind::NonEmpty, 1);
  ASSERT_NE(tne, nullptr);
  auto fits = at.values({{"p_n", 5}, {"p_m", 5}});
  auto past = at.values({{"p_n", 6}, {"p_m", 5}});
  EXPECT_FALSE(tne->violated.contains(fits.data()));
  EXPECT_TRUE(tne->violated.contains(past.data()));
}

// The bounds facts: A[i + 1] for i in range(n) is in bounds exactly when n + 1 <= len(A)
// (or the range is empty), and never negative.
TEST(Analysis, BoundsConditions) {
  NestBuilder b;
  b.root(b.loop(0, "i", {b.ld("n")}, {b.assign("s", b.idx("A", {b.add(b.ld("i"), b.c(1))}))}));
  Analysis a = analyze(b.nest);
  const Condition* inb = a.find(FactKind::InBounds);
  const Condition* nonneg = a.find(FactKind::NonNeg);
  ASSERT_NE(inb, nullptr);
  ASSERT_NE(nonneg, nullptr);
  auto ok = a.values({{"p_n", 9}, {"N_A", 10}});
  auto bad = a.values({{"p_n", 10}, {"N_A", 10}});
  auto empty = a.values({{"p_n", 0}, {"N_A", 0}});
  EXPECT_FALSE(inb->violated.contains(ok.data()));
  EXPECT_TRUE(inb->violated.contains(bad.data()));
  EXPECT_FALSE(inb->violated.contains(empty.data()));
  EXPECT_FALSE(nonneg->violated.contains(bad.data()));
  // i + 1 <= n never leaves 64 bits, even for n = 2**63 - 1.
  const Condition* ovf = a.find(FactKind::NoOverflow);
  ASSERT_NE(ovf, nullptr);
  EXPECT_FALSE(ovf->violated.contains(ok.data()));
  auto huge = a.values({{"p_n", INT64_MAX}, {"N_A", 10}});
  EXPECT_FALSE(ovf->violated.contains(huge.data()));
}

// i * 3 + 5 for i in range(n) leaves 64 bits only for n near 2**63 / 3.
TEST(Analysis, OverflowConditions) {
  NestBuilder b;
  b.root(b.loop(0, "i", {b.ld("n")}, {b.assign("s", b.add(b.mul(b.ld("i"), b.c(3)), b.c(5)))}));
  Analysis a = analyze(b.nest);
  int found = 0;
  for (auto& c : a.conds.conds) {
    if (c.fact.kind != FactKind::NoOverflow) continue;
    found++;
    auto small = a.values({{"p_n", 1000}});
    auto big = a.values({{"p_n", INT64_MAX / 3 + 2}});
    EXPECT_FALSE(c.violated.contains(small.data()));
    EXPECT_TRUE(c.violated.contains(big.data()));
  }
  EXPECT_EQ(found, 2);  // i * 3 and i * 3 + 5
}

// for i in range(n): for j in range(m): A[i, j] = (i * j) % k / k
//   i * j stays within 64 bits while i and j stay within sqrt(2**63 - 1);
//   % k and / k need k != 0; the int operands of / need 53 bits: |i * j % k| <= |k|.
TEST(Analysis, ChecksOfNonAffineOperationsAreConditionsOnTheirAffineParts) {
  NestBuilder b;
  Expr prod = b.mul(b.ld("i"), b.ld("j"));
  Expr mod = b.bin(ir::BinOp::Mod, prod, b.ld("k"));
  Expr div = b.bin(ir::BinOp::TrueDiv, mod, b.ld("k"));
  b.root(b.loop(0, "i", {b.ld("n")}, {b.loop(1, "j", {b.ld("m")}, {b.store("A", {b.ld("i"), b.ld("j")}, div)})}));
  Analysis a = analyze(b.nest);
  auto cond = [&](FactKind k, int origin, int pos) -> const Condition* {
    for (auto& c : a.conds.conds)
      if (c.fact.kind == k && c.fact.origin == origin && c.fact.pos == pos) return &c;
    return nullptr;
  };
  auto holds = [&](const Condition* c, std::map<std::string, int64_t> v) {
    auto vals = a.values(v);
    return !c->violated.contains(vals.data());
  };
  const Condition* ovf = cond(FactKind::NoOverflow, prod->origin, 0);
  ASSERT_NE(ovf, nullptr);
  EXPECT_TRUE(holds(ovf, {{"p_n", 1000}, {"p_m", 1000}, {"p_k", 7}}));
  EXPECT_TRUE(holds(ovf, {{"p_n", 3037000499}, {"p_m", 3037000499}}));
  EXPECT_FALSE(holds(ovf, {{"p_n", 3037000501}, {"p_m", 3}}));  // sufficient, not exact
  for (const Expr& op : {mod, div}) {
    const Condition* nz = cond(FactKind::NonZeroDivisor, op->origin, 0);
    ASSERT_NE(nz, nullptr);
    EXPECT_TRUE(holds(nz, {{"p_n", 10}, {"p_m", 10}, {"p_k", -3}}));
    EXPECT_FALSE(holds(nz, {{"p_n", 10}, {"p_m", 10}, {"p_k", 0}}));
    EXPECT_TRUE(holds(nz, {{"p_n", 0}, {"p_m", 10}, {"p_k", 0}}));  // the loop never runs
  }
  const Condition* num = cond(FactKind::ExactOperand, div->origin, 0);
  const Condition* den = cond(FactKind::ExactOperand, div->origin, 1);
  ASSERT_NE(num, nullptr);
  ASSERT_NE(den, nullptr);
  EXPECT_TRUE(holds(num, {{"p_n", 10}, {"p_m", 10}, {"p_k", int64_t(1) << 53}}));
  EXPECT_FALSE(holds(num, {{"p_n", 10}, {"p_m", 10}, {"p_k", (int64_t(1) << 53) + 1}}));
  EXPECT_FALSE(holds(den, {{"p_n", 10}, {"p_m", 10}, {"p_k", -(int64_t(1) << 60)}}));
  // The dividend of % is i * j: 53 bits while i and j stay within 2**26.5.
  const Condition* mnum = cond(FactKind::ExactOperand, mod->origin, 0);
  ASSERT_NE(mnum, nullptr);
  EXPECT_TRUE(holds(mnum, {{"p_n", 94906265}, {"p_m", 94906265}}));
  EXPECT_FALSE(holds(mnum, {{"p_n", 94906268}, {"p_m", 2}}));
}

// A negative constant index always wraps; it is in bounds when len(A) >= 1.
TEST(Analysis, NegativeIndexFacts) {
  NestBuilder b;
  b.root(b.loop(0, "i", {b.ld("n")}, {b.store("A", {b.ld("i")}, b.idx("A", {b.c(-1)}))}));
  Analysis a = analyze(b.nest);
  bool found = false;
  for (auto& c : a.conds.conds) {
    if (c.fact.kind != FactKind::Negative) continue;
    auto v = a.values({{"p_n", 5}, {"N_A", 5}});
    if (!c.violated.contains(v.data())) found = true;  // the A[-1] site
  }
  EXPECT_TRUE(found);

}

// Not a timed test: prints how long the static stage takes on a 2-deep nest, for the
// benchmark notes (`stagepy_tests --gtest_filter=Analysis.Timing`).
TEST(Analysis, Timing) {
  NestBuilder b;
  Stmt inner = b.loop(1, "j", {b.ld("m")}, {b.store("C", {b.ld("i"), b.ld("j")},
                                                     b.add(b.idx("A", {b.ld("i"), b.ld("j")}), b.idx("B", {b.ld("j"), b.ld("i")})))});
  b.root(b.loop(0, "i", {b.ld("n")}, {inner}));
  double total = 0;
  for (int r = 0; r < 20; r++) {
    auto m = build_poly_model(b.nest);
    auto c = derive_conditions(m, b.nest);
    total += c.seconds;
  }
  std::printf("static stage: %.2f ms per nest\n", total / 20 * 1e3);
}

// The "no overflow" conditions of a parameter's own increment (`r + 1` for an argument r)
// have constants of 64 bits: membership is still decided without isl, on both sides of them.
TEST(Analysis, ParamSetsWith64BitConstantsAreDecidedWithoutIsl) {
  IslCtx ctx;
  isl_set* s = isl_set_read_from_str(
      ctx.get(), "[p, q] -> { : p >= 9223372036854775807 or p <= -9223372036854775808 or q >= 9223372036854775806 }");
  ParamSet ps = ParamSet::from_isl(s, {"q", "p"});
  EXPECT_TRUE(ps.fast());
  auto in = [&](int64_t q, int64_t p) {
    int64_t v[2] = {q, p};
    return ps.contains(v);
  };
  EXPECT_FALSE(in(0, 0));
  EXPECT_TRUE(in(0, INT64_MAX));
  EXPECT_FALSE(in(0, INT64_MAX - 1));
  EXPECT_TRUE(in(0, INT64_MIN));
  EXPECT_FALSE(in(0, INT64_MIN + 1));
  EXPECT_TRUE(in(INT64_MAX - 1, 5));
  EXPECT_FALSE(in(INT64_MAX - 2, 5));
  // r + d for d in range(n - r) (r, n arguments): constants beyond 64 bits.
  ParamSet wide = ParamSet::from_isl(
      isl_set_read_from_str(ctx.get(), "[n, r] -> { : r >= 9223372036854775809 + n or r <= -9223372036854775808 + n }"),
      {"n", "r"});
  EXPECT_TRUE(wide.fast());
  int64_t small[2] = {1000, 10}, edge[2] = {-2, INT64_MAX}, below[2] = {-1, INT64_MAX}, low[2] = {0, INT64_MIN};
  EXPECT_FALSE(wide.contains(small));
  EXPECT_TRUE(wide.contains(edge));    // 2^63 - 1 >= 2^63 + 1 - 2
  EXPECT_FALSE(wide.contains(below));  // 2^63 - 1 <  2^63 + 1 - 1
  EXPECT_TRUE(wide.contains(low));
}

// The report's "its iterations conflict when ...": a set of parameter values in the user's
// terms, an extent's `len(A) >= 0` left unsaid, the parameters it names marked.
TEST(Analysis, ParamSetsDescribeThemselvesInTheUsersTerms) {
  using C = ParamSet::Constraint;
  auto ge = [](std::vector<int64_t> coef, int64_t k) { return C{std::move(coef), k, false}; };
  // {d >= 1 and n - d - 1 >= 0 and A >= 0} or {-d - 1 >= 0 and n + d - 1 >= 0}, over (n, d, len(A))
  ParamSet s = ParamSet::from_pieces({{ge({0, 1, 0}, -1), ge({1, -1, 0}, -1), ge({0, 0, 1}, 0)},
                                      {ge({0, -1, 0}, -1), ge({1, 1, 0}, -1)}},
                                     {"p_n", "p_d", "N_A"}, "");
  std::vector<uint8_t> used;
  EXPECT_EQ(s.describe({"n", "d", "len(A)"}, {0, 0, 1}, &used),
            "d >= 1 and n >= d + 1, or d <= -1 and n + d >= 1");
  EXPECT_EQ(used, (std::vector<uint8_t>{1, 1, 0}));
  // Without the extent's sign known, its constraint is said; an equality; a coefficient.
  ParamSet e = ParamSet::from_pieces({{C{{2, 0, -1}, 3, true}}}, {"p_n", "p_d", "N_A"}, "");
  EXPECT_EQ(e.describe({"n", "d", "len(A)"}, {0, 0, 1}, &used), "2*n == len(A) - 3");
  EXPECT_EQ(ParamSet().describe({"n"}, {0}, &used), "never");
  EXPECT_EQ(ParamSet::universe().describe({"n"}, {0}, &used), "always");
}

// for i in range(n): for j in range(len(A[i])): s = A[i][j]   -- where A may hold a list of
// lists whose rows differ in length, len(A[i]) is no one extent: no parameter stands for it,
// so no fact can assume that one row's length bounds another row's index.
TEST(Analysis, RaggedRowsHaveNoExtentParameter) {
  NestBuilder b;
  Expr len_row = ir::make_call(b.ld("len"), {b.idx("A", {b.ld("i")})}, {}, b.next_origin++);
  Expr item = ir::make_subscript(b.idx("A", {b.ld("i")}), b.ld("j"), b.next_origin++);
  const int item_origin = item->origin;
  b.root(b.loop(0, "i", {b.ld("n")}, {b.loop(1, "j", {len_row}, {b.assign("s", item)})}));
  const int A = b.var("A");
  auto has_extent = [&](const NestConditions& c, int dim) {
    for (auto& p : c.params)
      if (p.kind == PolyParam::Kind::Extent && p.var == A && p.dim == dim) return true;
    return false;
  };
  auto has_fact = [&](const NestConditions& c, FactKind k, int origin) {
    for (auto& x : c.conds)
      if (x.fact.kind == k && x.fact.origin == origin) return true;
    return false;
  };
  Analysis rect = analyze(b.nest);
  EXPECT_TRUE(has_extent(rect.conds, 0));
  EXPECT_TRUE(has_extent(rect.conds, 1));
  EXPECT_TRUE(has_fact(rect.conds, FactKind::InBounds, item_origin));

  PolyModel m = build_poly_model(b.nest, {A});
  NestConditions ragged = derive_conditions(m, b.nest);
  ASSERT_TRUE(ragged.ok) << ragged.error;
  EXPECT_TRUE(has_extent(ragged, 0));   // len(A): the number of rows
  EXPECT_FALSE(has_extent(ragged, 1));  // no one row length
  EXPECT_FALSE(has_fact(ragged, FactKind::InBounds, item_origin));
  EXPECT_TRUE(has_fact(ragged, FactKind::NonNeg, item_origin));  // j >= 0 all the same
}

// for i in range(n): k = K[i]; s = T[k]; A[i] = s[0] + s[1]   -- `s` is some row of T (k is
// data, a variable the loop assigns: no row bound to the iteration): an access to T at an
// unknown row. T is only read, so nothing is carried (until stop 59 such an access had an
// unknown base and conflicted with A's stores).
TEST(Analysis, ARowPickedByAComputedIndexIsAnAccessToItsContainer) {
  NestBuilder b;
  b.root(b.loop(0, "i", {b.ld("n")},
                {b.assign("k", b.idx("K", {b.ld("i")})), b.assign("s", b.idx("T", {b.ld("k")})),
                 b.store("A", {b.ld("i")}, b.add(b.idx("s", {b.c(0)}), b.idx("s", {b.c(1)})))}));
  Analysis a = analyze(b.nest);
  EXPECT_FALSE(a.model.unknown_base);
  EXPECT_FALSE(a.carried(0, {{"p_n", 10}, {"N_A", 10}, {"N_T", 5}, {"N_K", 10}}));
  for (auto& c : a.conds.conds)
    for (auto& x : c.conflicts)
      EXPECT_EQ((x.first + x.second).find("computed object"), std::string::npos) << x.first << " vs " << x.second;
}

// for i in range(n): k = K[i]; s = T[k]; s[1] = s[0] + i   -- stores through such a row:
// two iterations may pick one row, so the loop carries a dependence.
TEST(Analysis, StoresThroughARowPickedByAComputedIndexAreCarried) {
  NestBuilder b;
  b.root(b.loop(0, "i", {b.ld("n")},
                {b.assign("k", b.idx("K", {b.ld("i")})), b.assign("s", b.idx("T", {b.ld("k")})),
                 b.store("s", {b.c(1)}, b.add(b.idx("s", {b.c(0)}), b.ld("i")))}));
  Analysis a = analyze(b.nest);
  EXPECT_TRUE(a.carried(0, {{"p_n", 10}, {"N_T", 5}, {"N_K", 10}}));
}

// for t in range(T):
//     for i in range(n): p = P[i]; p[0] = p[0] + 1
//     for j in range(n): p = P[j]; p[1] = p[0]
// One variable bound to rows by two loops, neither inside the other: in each loop it is that
// loop's row, so neither loop carries a dependence (and the time loop does).
TEST(Analysis, ARowVariableBoundBySiblingLoopsIsEachLoopsRow) {
  NestBuilder b;
  b.root(b.loop(0, "t", {b.ld("T")},
                {b.loop(1, "i", {b.ld("n")},
                        {b.assign("p", b.idx("P", {b.ld("i")})), b.store("p", {b.c(0)}, b.add(b.idx("p", {b.c(0)}), b.c(1)))}),
                 b.loop(2, "j", {b.ld("n")},
                        {b.assign("p", b.idx("P", {b.ld("j")})), b.store("p", {b.c(1)}, b.idx("p", {b.c(0)}))})}));
  Analysis a = analyze(b.nest);
  const std::map<std::string, int64_t> at = {{"p_T", 3}, {"p_n", 10}, {"N_P", 10}};
  EXPECT_FALSE(a.carried(1, at));
  EXPECT_FALSE(a.carried(2, at));
  EXPECT_TRUE(a.carried(0, at));
}

// for i in range(n):
//     a = P[i]
//     for j in range(n): q = P[j]; a[1] = a[1] + q[0]
// With `a` and `q` objects taken for their attributes (Var::object_row: `a.vx += q.x`),
// taking an object reads which object sits there, which no attribute store changes: the i
// loop carries nothing. Rows of a list of lists are read whole where taken (a row may be
// used whole), so there the store conflicts with taking row j.
TEST(Analysis, TakingAnObjectForItsAttributesConflictsWithNoAttributeStore) {
  for (bool objects : {true, false}) {
    NestBuilder b;
    b.root(b.loop(0, "i", {b.ld("n")},
                  {b.assign("a", b.idx("P", {b.ld("i")})),
                   b.loop(1, "j", {b.ld("n")},
                          {b.assign("q", b.idx("P", {b.ld("j")})),
                           b.store("a", {b.c(1)}, b.add(b.idx("a", {b.c(1)}), b.idx("q", {b.c(0)})))})}));
    b.nest.vars[(size_t)b.var("a")].object_row = objects;
    b.nest.vars[(size_t)b.var("q")].object_row = objects;
    Analysis a = analyze(b.nest);
    EXPECT_EQ(a.carried(0, {{"p_n", 10}, {"N_P", 10}}), !objects) << "object rows: " << objects;
  }
}
