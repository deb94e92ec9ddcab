// The random module's draws as kernels make them (backends/cpu/random_draws.h): from a
// generator seeded as CPython's random.seed(5) seeds it (init_by_array of the key [5]), the
// numbers CPython gives (random.Random(5).random() and ._randbelow(n), taken from CPython
// 3.11, and gauss(), normalvariate(), expovariate(1.0)), and the draws of a statement that
// goes to CPython undone, refills of the words and gauss()'s twin included, while those of
// completed statements stay.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "backends/cpu/random_draws.h"

using namespace stagepy::backends::cpu;

namespace {

// Modules/_randommodule.c's init_genrand and init_by_array (the reference MT19937 seeding).
struct Generator {
  uint32_t mt[kMtWords];
  int32_t index = 0;
  explicit Generator(uint32_t key) {
    mt[0] = 19650218U;
    for (int i = 1; i < kMtWords; i++) mt[i] = 1812433253U * (mt[i - 1] ^ (mt[i - 1] >> 30)) + (uint32_t)i;
    size_t i = 1, j = 0;
    for (size_t k = kMtWords; k; k--) {
      mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1664525U)) + key + (uint32_t)j;
      i++;
      j = 0;
      if (i >= (size_t)kMtWords) {
        mt[0] = mt[kMtWords - 1];
        i = 1;
      }
    }
    for (size_t k = kMtWords - 1; k; k--) {
      mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1566083941U)) - (uint32_t)i;
      i++;
      if (i >= (size_t)kMtWords) {
        mt[0] = mt[kMtWords - 1];
        i = 1;
      }
    }
    mt[0] = 0x80000000U;
    index = kMtWords;
  }
};

}  // namespace

TEST(RandomDraws, TheNumbersCPythonDraws) {
  Generator g(5);
  EXPECT_EQ(random_double(g.mt, &g.index), 0.6229016948897019);
  EXPECT_EQ(random_double(g.mt, &g.index), 0.7417869892607294);
  Generator h(5);
  const int64_t ns[] = {1, 6, (1LL << 32) + 1, (1LL << 62) + 1};
  const int64_t want[] = {0, 5, 2276503845LL, 4294610976237489663LL};
  for (int k = 0; k < 4; k++) EXPECT_EQ(random_below(h.mt, &h.index, ns[k]), want[k]) << ns[k];
  Generator r(5);
  for (int k = 0; k < 400; k++) random_double(r.mt, &r.index);  // past a refill of the words
  EXPECT_EQ(random_double(r.mt, &r.index), 0.5939742584042348);
}

TEST(RandomDraws, AStatementCPythonRunsAgainDrawsNothing) {
  Generator g(5);
  set_random_generator(g.mt, &g.index, {});
  RandomDraws d;
  stagepy_random_begin(&d);
  const double first = stagepy_random_random(&d);
  stagepy_random_commit(&d);  // the statement that drew `first` completed
  // The next statement draws 700 words (a refill on the way), then goes to CPython.
  std::vector<uint32_t> words(g.mt, g.mt + kMtWords);
  const int32_t index = g.index;
  for (int k = 0; k < 350; k++) stagepy_random_random(&d);
  EXPECT_NE(index, g.index);
  stagepy_random_end(&d, 3);
  EXPECT_EQ(g.index, index);
  EXPECT_EQ(std::memcmp(words.data(), g.mt, sizeof(uint32_t) * kMtWords), 0);
  // So CPython's next draw is the second number, as after `first` alone.
  EXPECT_EQ(first, 0.6229016948897019);
  EXPECT_EQ(random_double(g.mt, &g.index), 0.7417869892607294);
}

TEST(RandomDraws, AKernelThatCompletesKeepsItsDraws) {
  Generator g(5);
  set_random_generator(g.mt, &g.index, {});
  RandomDraws d;
  stagepy_random_begin(&d);
  stagepy_random_random(&d);
  stagepy_random_random(&d);  // (no commit after the last statement: completion keeps it)
  stagepy_random_end(&d, 0);
  Generator r(5);
  random_double(r.mt, &r.index);
  random_double(r.mt, &r.index);
  EXPECT_EQ(g.index, r.index);
  EXPECT_EQ(random_double(g.mt, &g.index), random_double(r.mt, &r.index));
}

namespace {
// gauss_next as the instance would hold it, for GaussNextAccess.
GaussNext g_instance_next;
int g_stores = 0;
bool load_next(GaussNext* out) {
  *out = g_instance_next;
  return true;
}
void store_next(const GaussNext& g) {
  g_instance_next = g;
  g_stores++;
}
}  // namespace

TEST(RandomDraws, TheNormalAndExponentialNumbersCPythonDraws) {
  set_random_constants({0x1.921fb54442d18p+2, 0x1.b72cd3f331398p+0});  // random.TWOPI, NV_MAGICCONST
  Generator g(5);
  GaussNext next;
  EXPECT_EQ(random_gauss(g.mt, &g.index, &next), -1.1788417512306717);
  EXPECT_EQ(next.has, 1);
  EXPECT_EQ(next.value, -1.1481606807908016);
  EXPECT_EQ(random_gauss(g.mt, &g.index, &next), -1.1481606807908016);  // the twin, no draw
  EXPECT_EQ(next.has, 0);
  EXPECT_EQ(random_gauss(g.mt, &g.index, &next), 0.6694689143859696);
  EXPECT_EQ(next.value, -2.293910094631911);
  Generator h(5);
  EXPECT_EQ(random_normal(h.mt, &h.index), 0.816540072671196);
  EXPECT_EQ(random_normal(h.mt, &h.index), -1.5120487741240614);
  EXPECT_EQ(random_expo(h.mt, &h.index) / 1.0, 2.8709818686760453);
}

TEST(RandomDraws, GaussTwinGoesBackWhereCPythonRunsTheStatementAgain) {
  set_random_constants({0x1.921fb54442d18p+2, 0x1.b72cd3f331398p+0});
  Generator g(5);
  set_random_generator(g.mt, &g.index, {load_next, store_next});
  g_instance_next = {};
  g_stores = 0;
  RandomDraws d;
  stagepy_random_begin(&d);
  EXPECT_EQ(stagepy_random_gauss(&d), -1.1788417512306717);
  stagepy_random_commit(&d);
  // The next statement takes the twin, then goes to CPython: the twin is the instance's again.
  EXPECT_EQ(stagepy_random_gauss(&d), -1.1481606807908016);
  stagepy_random_end(&d, 2);
  EXPECT_EQ(g_stores, 1);
  EXPECT_EQ(g_instance_next.has, 1);
  EXPECT_EQ(g_instance_next.value, -1.1481606807908016);
  // A kernel that completes leaves the twin taken; one that never calls gauss() stores nothing.
  stagepy_random_begin(&d);
  EXPECT_EQ(stagepy_random_gauss(&d), -1.1481606807908016);
  stagepy_random_end(&d, 0);
  EXPECT_EQ(g_instance_next.has, 0);
  stagepy_random_begin(&d);
  stagepy_random_random(&d);
  stagepy_random_end(&d, 0);
  EXPECT_EQ(g_stores, 2);
}

namespace {
// NumPy's legacy seeding of an int (mt19937_seed: the reference init_genrand).
struct NumpyGenerator {
  uint32_t key[kMtWords];
  int32_t pos = kMtWords;
  explicit NumpyGenerator(uint32_t seed) {
    for (int i = 0; i < kMtWords; i++) {
      key[i] = seed;
      seed = 1812433253U * (seed ^ (seed >> 30)) + (uint32_t)i + 1;
    }
  }
};
}  // namespace

TEST(RandomDraws, TheNumbersNumpysRandomStateDraws) {
  // np.random.RandomState(5): random_sample(), randint(0, 6), randint(-3, 2**40) (64-bit
  // words, the first one high), standard_normal() twice (the second the cached twin),
  // exponential().
  NumpyGenerator g(5);
  EXPECT_EQ(random_double(g.key, &g.pos), 0.22199317108973948);
  EXPECT_EQ(numpy_randint(g.key, &g.pos, 0, 6), 5);
  EXPECT_EQ(numpy_randint(g.key, &g.pos, -3, 1LL << 40), 34745516769LL);
  GaussNext twin;
  EXPECT_EQ(numpy_gauss(g.key, &g.pos, &twin), 1.3675855241672734);
  EXPECT_EQ(twin.has, 1);
  EXPECT_EQ(numpy_gauss(g.key, &g.pos, &twin), 0.5747076876290169);
  EXPECT_EQ(twin.has, 0);
  EXPECT_EQ(twin.value, 0.0);  // (NumPy leaves 0.0 where it took the twin)
  EXPECT_EQ(random_expo(g.key, &g.pos), 0.7306787359195799);  // standard_exponential's -log(1 - u)
}

TEST(RandomDraws, NumpysDrawsUndoneLikeTheRandomModules) {
  NumpyGenerator g(5);
  set_numpy_generator(g.key, &g.pos, {load_next, store_next});
  g_instance_next = {};
  RandomDraws d;
  stagepy_np_random_begin(&d);
  EXPECT_EQ(stagepy_random_random(&d), 0.22199317108973948);
  stagepy_random_commit(&d);
  const int32_t pos = g.pos;
  stagepy_np_randint(&d, 0, 6);
  stagepy_np_gauss(&d);
  stagepy_random_end(&d, 1);  // the statement goes to CPython: its draws are undone
  EXPECT_EQ(g.pos, pos);
  EXPECT_EQ(g_instance_next.has, 0);
  NumpyGenerator h(5);
  random_double(h.key, &h.pos);
  EXPECT_EQ(numpy_randint(g.key, &g.pos, 0, 6), numpy_randint(h.key, &h.pos, 0, 6));
}
