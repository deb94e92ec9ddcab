// derive_conditions' shortcuts (box_conditions.h: sets found from the loop bounds alone;
// a subscript that alone rules a dependence out; the early stop once a loop's conflicts
// cover every parameter value where it could carry one) against isl alone: on fixed
// PolyBench-shaped nests and on random ones (triangular and strided loops, guards, mod
// subscripts, products and divisions), every condition must hold at exactly the same
// parameter values either way, and the first conflict the report names must be the same.
#include <gtest/gtest.h>

#include <climits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/box_conditions.h"
#include "analysis/derive_conditions.h"
#include "analysis/linear_form.h"
#include "analysis/poly_model.h"
#include "nest_builder.h"

using namespace stagepy;
using namespace stagepy::analysis;
using ir::Expr;
using ir::Stmt;
using test_nests::NestBuilder;

namespace {

// Parameter vectors: small values around the bounds nests use, some large ones, and the
// ends of 64 bits (where the overflow conditions change). Extents are never negative.
std::vector<int64_t> sample(const NestConditions& c, std::mt19937_64& rng) {
  static const int64_t extremes[] = {INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1, INT64_MAX / 2,
                                     INT64_MIN / 2, INT64_MAX / 3, (int64_t)1 << 53, -((int64_t)1 << 53)};
  std::vector<int64_t> v;
  for (auto& p : c.params) {
    const int r = (int)(rng() % 100);
    int64_t x;
    if (r < 75) x = (int64_t)(rng() % 27) - 4;
    else if (r < 88) x = (int64_t)(rng() % 4001) - 2000;
    else x = extremes[rng() % (sizeof extremes / sizeof extremes[0])];
    if (p.kind == PolyParam::Kind::Extent) x = x < 0 ? (x == INT64_MIN ? INT64_MAX : -x) : x;
    v.push_back(x);
  }
  return v;
}

std::string show(const NestConditions& c, const std::vector<int64_t>& v) {
  std::ostringstream o;
  for (size_t k = 0; k < v.size(); k++) o << c.params[k].name << "=" << v[k] << " ";
  return o.str();
}

// Compares the two analyses of `n`; returns how many sets the shortcuts found.
int expect_same(const ir::Nest& n, std::mt19937_64& rng, const std::string& what, int samples = 150) {
  PolyModel m = build_poly_model(n);
  NestConditions fast = derive_conditions(m, n, true);
  NestConditions slow = derive_conditions(m, n, false);
  EXPECT_EQ(slow.without_isl, 0) << what;
  // isl may give up on a random nest (its bound on operations): then the loop stays
  // sequential, and there is nothing to compare. The shortcuts never make it give up.
  if (!slow.ok) return 0;
  EXPECT_TRUE(fast.ok) << what << ": " << fast.error;
  if (!fast.ok) return 0;
  EXPECT_EQ(fast.conds.size(), slow.conds.size()) << what;
  if (fast.conds.size() != slow.conds.size()) return 0;
  for (size_t k = 0; k < fast.conds.size(); k++) {
    EXPECT_TRUE(fast.conds[k].fact == slow.conds[k].fact) << what << " condition " << k;
    EXPECT_EQ(fast.conds[k].conflicts.empty(), slow.conds[k].conflicts.empty()) << what << " condition " << k;
    if (!fast.conds[k].conflicts.empty() && !slow.conds[k].conflicts.empty()) {
      EXPECT_EQ(fast.conds[k].conflicts[0].first, slow.conds[k].conflicts[0].first) << what;
      EXPECT_EQ(fast.conds[k].conflicts[0].second, slow.conds[k].conflicts[0].second) << what;
    }
  }
  for (int r = 0; r < samples; r++) {
    std::vector<int64_t> v = sample(slow, rng);
    for (size_t k = 0; k < fast.conds.size(); k++) {
      // (A set with existential variables is decided by isl, a millisecond a test: fewer.)
      if (r >= samples / 4 && !(fast.conds[k].violated.fast() && slow.conds[k].violated.fast())) continue;
      const bool f = fast.conds[k].violated.contains(v.data()), s = slow.conds[k].violated.contains(v.data());
      EXPECT_EQ(f, s) << what << "\n condition " << k << " at " << show(slow, v) << "\n shortcut: "
                      << fast.conds[k].violated.str() << "\n isl: " << slow.conds[k].violated.str() << "\n"
                      << to_string(m, n);
      if (f != s) return fast.without_isl;  // one report per nest
    }
  }
  return fast.without_isl;
}

// Whether the analysis (with its shortcuts) says loop 0 of `n` may carry a dependence when
// its bound `n` has value `nv` (array extents 100).
bool loop_carries_at(const ir::Nest& n, int64_t nv) {
  PolyModel m = build_poly_model(n);
  NestConditions c = derive_conditions(m, n);
  EXPECT_TRUE(c.ok) << c.error;
  std::vector<int64_t> v(c.params.size(), 100);
  for (size_t p = 0; p < c.params.size(); p++)
    if (c.params[p].name.rfind("p_n", 0) == 0) v[p] = nv;
  for (auto& k : c.conds)
    if (k.fact.kind == FactKind::NoCarried && k.fact.loop == 0) return k.violated.contains(v.data());
  ADD_FAILURE() << "no NoCarried condition for loop 0";
  return false;
}

// A random nest: up to three loops deep, bounds that are constants, parameters or (for
// triangular loops) an outer loop's variable, steps of +-1 and +-2, subscripts with
// coefficients in [-2, 2], guards, `%` subscripts, products and floor divisions.
struct RandomNest {
  NestBuilder b;
  std::mt19937_64& rng;
  int loops = 0;
  std::vector<std::string> scope;  // loop variables around

  explicit RandomNest(std::mt19937_64& r) : rng(r) {}
  int pick(int n) { return (int)(rng() % (uint64_t)n); }

  Expr param() { return b.ld(pick(3) == 0 ? "m" : "n"); }
  Expr bound(bool start) {
    switch (pick(start ? 5 : 6)) {
      case 0: return b.c(pick(4) - (start ? 0 : 1));
      case 1: return param();
      case 2: return b.sub(param(), b.c(1 + pick(2)));
      case 3: return b.add(param(), b.c(pick(3)));
      case 4:
        if (!scope.empty()) return b.add(b.ld(scope[(size_t)pick((int)scope.size())]), b.c(pick(3) - 1));
        return b.c(1);
      default: return b.ld("d");
    }
  }
  Expr subscript() {
    Expr e = b.c(pick(5) - 2);
    for (auto& v : scope) {
      const int c = pick(5) - 2;
      if (c == 0) continue;
      Expr t = c == 1 ? b.ld(v) : b.mul(b.c(c), b.ld(v));
      e = b.add(t, e);
    }
    if (pick(4) == 0) e = b.add(e, b.ld("d"));
    if (pick(8) == 0) e = b.bin(ir::BinOp::Mod, e, param());
    return e;
  }
  Stmt statement() {
    switch (pick(6)) {
      case 0: return b.assign("s", b.mul(b.ld(scope.back()), b.ld(scope.front())));
      case 1: return b.assign("q", b.bin(ir::BinOp::FloorDiv, b.ld(scope.back()), param()));
      case 2: return b.store("A", {subscript()}, b.idx("A", {subscript()}));
      case 3: return b.store("B", {subscript(), subscript()}, b.idx("A", {subscript()}));
      default: return b.store("B", {subscript(), subscript()}, b.idx("B", {subscript(), subscript()}));
    }
  }
  Stmt loop(int depth) {
    const int id = loops++;
    const std::string v = "i" + std::to_string(id);
    std::vector<Expr> args;
    const int shape = pick(4);
    if (shape == 0) args = {bound(false)};
    else if (shape == 1 || shape == 2) args = {bound(true), bound(false)};
    else {
      const int steps[] = {1, -1, 1, 2, -2};
      const int st = steps[pick(5)];
      args = st > 0 ? std::vector<Expr>{bound(true), bound(false), b.c(st)}
                    : std::vector<Expr>{bound(false), bound(true), b.c(st)};
    }
    scope.push_back(v);
    std::vector<Stmt> body;
    const int items = 1 + pick(3);
    for (int k = 0; k < items; k++) {
      const int what = pick(6);
      if (what == 0 && depth < 3) body.push_back(loop(depth + 1));
      else if (what == 1) body.push_back(b.when(b.cmp(ir::CmpOp::LT, b.ld(v), bound(false)), {statement()}));
      else body.push_back(statement());
    }
    if (depth < 3 && pick(2) == 0) body.push_back(loop(depth + 1));
    scope.pop_back();
    return b.loop(id, v, args, body);
  }
};

}  // namespace

TEST(BoxConditions, LinearFormsOfTheModelsText) {
  auto f = parse_linear("((-1 + 1 * i4) - (2 * p_n_3 - 7))");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ((long)f->of("i4"), 1);
  EXPECT_EQ((long)f->of("p_n_3"), -2);
  EXPECT_EQ((long)f->constant, 6);
  EXPECT_FALSE(parse_linear("floor((i1)/2)").has_value());
  EXPECT_FALSE(parse_linear("((i1) mod 3)").has_value());
  EXPECT_FALSE(parse_linear("min(i1, p_n)").has_value());
  auto big = parse_linear("(-9223372036854775808)");
  ASSERT_TRUE(big.has_value());
  EXPECT_TRUE(big->constant == -((__int128)1 << 63));
  auto cs = parse_constraints("i3 <= (p_n_3 - 2) and i3 > 0");
  ASSERT_TRUE(cs.has_value());
  ASSERT_EQ(cs->size(), 2u);
  EXPECT_EQ((long)(*cs)[0].of("i3"), -1);  // p_n_3 - 2 - i3 >= 0
  EXPECT_EQ((long)(*cs)[1].constant, -1);  // i3 - 1 >= 0
  EXPECT_FALSE(parse_constraints("exists (ki1 : i1 = 2 * ki1)").has_value());
}

// adi's first sweep, heat-3d's update and a gemm: box domains, so every bounds set and trip
// count comes from the bounds alone, and most dependence tests are ruled out by a subscript.
TEST(BoxConditions, PolyBenchShapesMatchIsl) {
  std::mt19937_64 rng(7);
  {
    NestBuilder b;  // for t in range(1, ts + 1): for i in range(1, n - 1): ...; for j in range(n - 2, 0, -1)
    Stmt j1 = b.loop(2, "j", {b.c(1), b.sub(b.ld("n"), b.c(1))},
                     {b.store("p", {b.ld("i"), b.ld("j")}, b.idx("p", {b.ld("i"), b.sub(b.ld("j"), b.c(1))})),
                      b.store("q", {b.ld("i"), b.ld("j")},
                              b.add(b.idx("u", {b.ld("j"), b.sub(b.ld("i"), b.c(1))}), b.idx("u", {b.ld("j"), b.add(b.ld("i"), b.c(1))})))});
    Stmt j2 = b.loop(3, "j", {b.sub(b.ld("n"), b.c(2)), b.c(0), b.c(-1)},
                     {b.store("v", {b.ld("j"), b.ld("i")}, b.add(b.idx("p", {b.ld("i"), b.ld("j")}), b.idx("v", {b.add(b.ld("j"), b.c(1)), b.ld("i")})))});
    Stmt i = b.loop(1, "i", {b.c(1), b.sub(b.ld("n"), b.c(1))},
                    {b.store("v", {b.c(0), b.ld("i")}, b.c(1)), b.store("p", {b.ld("i"), b.c(0)}, b.c(0)), j1,
                     b.store("v", {b.sub(b.ld("n"), b.c(1)), b.ld("i")}, b.c(1)), j2});
    b.root(b.loop(0, "t", {b.c(1), b.add(b.ld("ts"), b.c(1))}, {i}));
    EXPECT_GT(expect_same(b.nest, rng, "adi"), 20);
  }
  {
    NestBuilder b;  // heat-3d: B[i, j, k] = A[i +- 1, j, k] + ...
    auto A = [&](int di, int dj, int dk) {
      return b.idx("A", {b.add(b.ld("i"), b.c(di)), b.add(b.ld("j"), b.c(dj)), b.add(b.ld("k"), b.c(dk))});
    };
    Expr sum = b.add(b.add(A(1, 0, 0), A(-1, 0, 0)), b.add(A(0, 1, 0), b.add(A(0, -1, 0), b.add(A(0, 0, 1), A(0, 0, -1)))));
    Stmt k = b.loop(3, "k", {b.c(1), b.sub(b.ld("n"), b.c(1))}, {b.store("B", {b.ld("i"), b.ld("j"), b.ld("k")}, sum)});
    Stmt j = b.loop(2, "j", {b.c(1), b.sub(b.ld("n"), b.c(1))}, {k});
    Stmt i = b.loop(1, "i", {b.c(1), b.sub(b.ld("n"), b.c(1))}, {j});
    b.root(b.loop(0, "t", {b.ld("ts")}, {i}));
    EXPECT_GT(expect_same(b.nest, rng, "heat3d"), 20);
  }
  {
    NestBuilder b;  // gemm with a reduction over k into C[i, j]
    Stmt k = b.loop(2, "k", {b.ld("nk")}, {b.store("C", {b.ld("i"), b.ld("j")},
                                                  b.add(b.idx("C", {b.ld("i"), b.ld("j")}),
                                                        b.mul(b.idx("A", {b.ld("i"), b.ld("k")}), b.idx("B", {b.ld("k"), b.ld("j")}))))});
    Stmt j = b.loop(1, "j", {b.ld("nj")}, {k});
    b.root(b.loop(0, "i", {b.ld("ni")}, {j}));
    EXPECT_GT(expect_same(b.nest, rng, "gemm"), 10);
  }
}

// Random nests of every shape the model takes: where the shortcuts answer, the sets are
// isl's; where they cannot (triangular, strided, guarded), isl answers in both.
TEST(BoxConditions, RandomNestsMatchIsl) {
  std::mt19937_64 rng(20261127);
  int answered = 0;
  for (int k = 0; k < 64; k++) {
    RandomNest g(rng);
    g.b.root(g.loop(0));
    answered += expect_same(g.b.nest, rng, "random nest " + std::to_string(k), 40);
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_GT(answered, 200);  // the shortcuts did answer a good part of them
}

// for i in range(n): A[i + 2] = A[i]; B[i + 1] = B[i]. A's conflict needs three iterations,
// B's two: the search for conflicts goes on past the first until they cover every `n`
// where the loop could carry one (n >= 2).
TEST(BoxConditions, ConflictsAreSoughtUntilTheyCoverTheLoop) {
  NestBuilder b;
  b.root(b.loop(0, "i", {b.ld("n")},
                {b.store("A", {b.add(b.ld("i"), b.c(2))}, b.idx("A", {b.ld("i")})),
                 b.store("B", {b.add(b.ld("i"), b.c(1))}, b.idx("B", {b.ld("i")}))}));
  EXPECT_TRUE(loop_carries_at(b.nest, 2));
  EXPECT_FALSE(loop_carries_at(b.nest, 1));
  std::mt19937_64 rng(3);
  expect_same(b.nest, rng, "two distances");
}

// The same over a triangular loop (for i in range(n): for j in range(i, n)), whose cover
// comes from ordered pairs of the statements' domains, not boxes.
TEST(BoxConditions, ConflictsAreSoughtUntilTheyCoverATriangularLoop) {
  NestBuilder b;
  Stmt j = b.loop(1, "j", {b.ld("i"), b.ld("n")},
                  {b.store("B", {b.add(b.ld("i"), b.c(2)), b.ld("j")}, b.idx("B", {b.ld("i"), b.ld("j")})),
                   b.when(b.cmp(ir::CmpOp::LT, b.ld("j"), b.ld("m")),
                          {b.store("C", {b.add(b.ld("i"), b.c(1)), b.ld("j")}, b.idx("C", {b.ld("i"), b.ld("j")}))})});
  b.root(b.loop(0, "i", {b.ld("n")}, {j}));
  std::mt19937_64 rng(5);
  EXPECT_GT(expect_same(b.nest, rng, "triangular, two distances", 400), 5);
}

// for i in range(n): (if i >= 1: C[i + 1] = C[i] + A[i]); (if i < 1: A[i + 1] = 7). The first
// conflict (C, from i = 1 to 2) needs n >= 3; A's (written at i = 0, read at i = 1) needs only
// n >= 2. The guards give the two statements different ranges of i, so the cover must come
// from the pair of them, not from each statement with itself.
TEST(BoxConditions, ConflictsAreSoughtAcrossDifferentlyGuardedStatements) {
  NestBuilder b;
  b.root(b.loop(0, "i", {b.ld("n")},
                {b.when(b.cmp(ir::CmpOp::GE, b.ld("i"), b.c(1)),
                        {b.store("C", {b.add(b.ld("i"), b.c(1))}, b.add(b.idx("C", {b.ld("i")}), b.idx("A", {b.ld("i")})))}),
                 b.when(b.cmp(ir::CmpOp::LT, b.ld("i"), b.c(1)), {b.store("A", {b.add(b.ld("i"), b.c(1))}, b.c(7))})}));
  EXPECT_TRUE(loop_carries_at(b.nest, 2));
  std::mt19937_64 rng(11);
  expect_same(b.nest, rng, "differently guarded", 300);
}
