// See random_draws.h.
#include "backends/cpu/random_draws.h"

#include <cmath>
#include <cstring>

namespace stagepy::backends::cpu {
namespace {

constexpr int kM = 397;
constexpr uint32_t kMatrixA = 0x9908b0dfU, kUpper = 0x80000000U, kLower = 0x7fffffffU;

struct Source {
  uint32_t* mt = nullptr;
  int32_t* index = nullptr;
  GaussNextAccess gauss;
};
Source g_sources[2];  // by RandomSource
RandomConstants g_constants;

// The next 624 words, in place (genrand_uint32's refill).
void refill(uint32_t* mt) {
  static const uint32_t mag01[2] = {0x0U, kMatrixA};
  int kk = 0;
  uint32_t y;
  for (; kk < kMtWords - kM; kk++) {
    y = (mt[kk] & kUpper) | (mt[kk + 1] & kLower);
    mt[kk] = mt[kk + kM] ^ (y >> 1) ^ mag01[y & 0x1U];
  }
  for (; kk < kMtWords - 1; kk++) {
    y = (mt[kk] & kUpper) | (mt[kk + 1] & kLower);
    mt[kk] = mt[kk + (kM - kMtWords)] ^ (y >> 1) ^ mag01[y & 0x1U];
  }
  y = (mt[kMtWords - 1] & kUpper) | (mt[0] & kLower);
  mt[kMtWords - 1] = mt[kM - 1] ^ (y >> 1) ^ mag01[y & 0x1U];
}

uint32_t temper(uint32_t y) {
  y ^= (y >> 11);
  y ^= (y << 7) & 0x9d2c5680U;
  y ^= (y << 15) & 0xefc60000U;
  y ^= (y >> 18);
  return y;
}

// getrandbits(k) for 0 < k <= 64: 32-bit words from the least significant, the last one
// shifted right to k's remaining bits (_random_Random_getrandbits_impl).
template <class Word>
uint64_t random_bits(int k, Word word) {
  if (k <= 32) return word() >> (32 - k);
  const uint64_t low = word();
  uint64_t high = word();
  if (k < 64) high >>= (64 - k);
  return low | (high << 32);
}

// random.random(): 53 bits from two words (random_random).
template <class Word>
double double_of(Word word) {
  const uint32_t a = word() >> 5, b = word() >> 6;
  return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

// Random._randbelow(n) for 0 < n < 2**63: getrandbits(n.bit_length()) until below n.
template <class Word>
int64_t below_of(int64_t n, Word word) {
  const int k = 64 - __builtin_clzll((uint64_t)n);  // n.bit_length()
  uint64_t r = random_bits(k, word);
  while (r >= (uint64_t)n) r = random_bits(k, word);
  return (int64_t)r;
}

// Random.gauss(): z = gauss_next, or two draws of random() and z's twin kept in gauss_next.
// (Separate calls of cos and sin, as CPython makes them: a compiler must not fuse them into
// sincos, whose results may differ; the self-test checks.)
template <class Word>
double gauss_of(GaussNext* next, Word word) {
  if (next->has) {
    next->has = 0;
    return next->value;
  }
  const double x2pi = double_of(word) * g_constants.twopi;
  const double g2rad = std::sqrt(-2.0 * std::log(1.0 - double_of(word)));
  volatile double angle = x2pi;
  const double z = std::cos(angle) * g2rad;
  next->value = std::sin(angle) * g2rad;
  next->has = 1;
  return z;
}

// Random.normalvariate() (Kinderman and Monahan): z before `mu + z * sigma`.
template <class Word>
double normal_of(Word word) {
  for (;;) {
    const double u1 = double_of(word);
    const double u2 = 1.0 - double_of(word);
    const double z = g_constants.nv_magicconst * (u1 - 0.5) / u2;
    const double zz = z * z / 4.0;
    if (zz <= -std::log(u2)) return z;
  }
}

// Random.expovariate(): -log(1.0 - random()) before `/ lambd`.
template <class Word>
double expo_of(Word word) {
  return -std::log(1.0 - double_of(word));
}

// NumPy's masked rejection (random_bounded_uint64_fill with use_masked): the draw in
// [0, rng] for rng > 0, from 32-bit words below 2**32 (all 32 bits at rng 2**32 - 1), else
// from 64-bit ones (mt19937_next64: the first word high).
template <class Word>
uint64_t numpy_bounded_of(uint64_t rng, Word word) {
  uint64_t mask = rng;
  mask |= mask >> 1;
  mask |= mask >> 2;
  mask |= mask >> 4;
  mask |= mask >> 8;
  mask |= mask >> 16;
  mask |= mask >> 32;
  if (rng <= 0xFFFFFFFFULL) {
    if (rng == 0xFFFFFFFFULL) return word();
    uint64_t v;
    while ((v = (word() & mask)) > rng) {
    }
    return v;
  }
  auto word64 = [&] {
    const uint64_t high = word();
    return high << 32 | word();
  };
  if (rng == 0xFFFFFFFFFFFFFFFFULL) return word64();
  uint64_t v;
  while ((v = (word64() & mask)) > rng) {
  }
  return v;
}

template <class Word>
int64_t numpy_randint_of(int64_t lo, int64_t hi, Word word) {
  const uint64_t rng = (uint64_t)hi - (uint64_t)lo - 1;  // hi - 1 - lo, closed
  if (rng == 0) return lo;
  return (int64_t)((uint64_t)lo + numpy_bounded_of(rng, word));
}

// legacy_gauss: the polar method; the second number is kept (has_gauss), and taking it
// leaves gauss 0.0, as NumPy does.
template <class Word>
double numpy_gauss_of(GaussNext* next, Word word) {
  if (next->has) {
    const double t = next->value;
    next->has = 0;
    next->value = 0.0;
    return t;
  }
  double x1, x2, r2;
  do {
    x1 = 2.0 * double_of(word) - 1.0;
    x2 = 2.0 * double_of(word) - 1.0;
    r2 = x1 * x1 + x2 * x2;
  } while (r2 >= 1.0 || r2 == 0.0);
  const double f = std::sqrt(-2.0 * std::log(r2) / r2);
  next->value = f * x1;
  next->has = 1;
  return f * x2;
}

// The draws of a kernel: words from the generator, keeping what undoes them first.
uint32_t draw(RandomDraws* d) {
  if (*d->index >= kMtWords && !d->refilled) {
    std::memcpy(d->before, d->mt, sizeof(d->before));
    d->refilled = 1;
  }
  return random_word(d->mt, d->index);
}

}  // namespace

void set_random_generator(uint32_t* mt, int32_t* index, GaussNextAccess gauss) {
  g_sources[(int)RandomSource::Python] = {mt, index, gauss};
}

void set_numpy_generator(uint32_t* key, int32_t* pos, GaussNextAccess gauss) {
  g_sources[(int)RandomSource::Numpy] = {key, pos, gauss};
}

void set_random_constants(const RandomConstants& c) { g_constants = c; }

uint32_t random_word(uint32_t* mt, int32_t* index) {
  if (*index >= kMtWords) {
    refill(mt);
    *index = 0;
  }
  return temper(mt[(*index)++]);
}

double random_double(uint32_t* mt, int32_t* index) {
  return double_of([&] { return random_word(mt, index); });
}

int64_t random_below(uint32_t* mt, int32_t* index, int64_t n) {
  return below_of(n, [&] { return random_word(mt, index); });
}

double random_gauss(uint32_t* mt, int32_t* index, GaussNext* next) {
  return gauss_of(next, [&] { return random_word(mt, index); });
}

double random_normal(uint32_t* mt, int32_t* index) {
  return normal_of([&] { return random_word(mt, index); });
}

double random_expo(uint32_t* mt, int32_t* index) {
  return expo_of([&] { return random_word(mt, index); });
}

int64_t numpy_randint(uint32_t* mt, int32_t* index, int64_t lo, int64_t hi) {
  return numpy_randint_of(lo, hi, [&] { return random_word(mt, index); });
}

double numpy_gauss(uint32_t* mt, int32_t* index, GaussNext* next) {
  return numpy_gauss_of(next, [&] { return random_word(mt, index); });
}

namespace {
void begin(RandomDraws* d, RandomSource source) {
  const Source& s = g_sources[(int)source];
  d->mt = s.mt;
  d->index = s.index;
  d->index0 = *d->index;
  d->refilled = 0;
  d->gauss_read = 0;
  d->source = source;
}

// The generator's twin, read at the kernel's first draw that takes it.
bool read_gauss(RandomDraws* d) {
  if (d->gauss_read) return true;
  const GaussNextAccess& a = g_sources[(int)d->source].gauss;
  if (!a.load || !a.load(&d->gauss)) return false;
  d->gauss0 = d->gauss;
  d->gauss_read = 1;
  return true;
}
}  // namespace

}  // namespace stagepy::backends::cpu

using stagepy::backends::cpu::RandomDraws;

extern "C" {

void stagepy_random_begin(RandomDraws* d) { stagepy::backends::cpu::begin(d, stagepy::backends::cpu::RandomSource::Python); }

void stagepy_np_random_begin(RandomDraws* d) { stagepy::backends::cpu::begin(d, stagepy::backends::cpu::RandomSource::Numpy); }

// (The same computations as random_double and random_below, which the self-test checks
// against CPython, from the kernel's undoable draws.)
double stagepy_random_random(RandomDraws* d) {
  return stagepy::backends::cpu::double_of([&] { return stagepy::backends::cpu::draw(d); });
}

int64_t stagepy_random_below(RandomDraws* d, int64_t n) {
  return stagepy::backends::cpu::below_of(n, [&] { return stagepy::backends::cpu::draw(d); });
}

double stagepy_random_gauss(RandomDraws* d) {
  using namespace stagepy::backends::cpu;
  if (!read_gauss(d)) return std::nan("");
  return gauss_of(&d->gauss, [&] { return draw(d); });
}

int64_t stagepy_np_randint(RandomDraws* d, int64_t lo, int64_t hi) {
  return stagepy::backends::cpu::numpy_randint_of(lo, hi, [&] { return stagepy::backends::cpu::draw(d); });
}

double stagepy_np_gauss(RandomDraws* d) {
  using namespace stagepy::backends::cpu;
  if (!read_gauss(d)) return std::nan("");
  return numpy_gauss_of(&d->gauss, [&] { return draw(d); });
}

double stagepy_random_normal(RandomDraws* d) {
  return stagepy::backends::cpu::normal_of([&] { return stagepy::backends::cpu::draw(d); });
}

double stagepy_random_expo(RandomDraws* d) {
  return stagepy::backends::cpu::expo_of([&] { return stagepy::backends::cpu::draw(d); });
}

void stagepy_random_commit(RandomDraws* d) {
  d->index0 = *d->index;
  d->refilled = 0;
  d->gauss0 = d->gauss;
}

void stagepy_random_end(RandomDraws* d, int32_t status) {
  if (!d->mt) return;
  if (status != 0) {
    if (d->refilled) std::memcpy(d->mt, d->before, sizeof(d->before));
    *d->index = d->index0;
    d->refilled = 0;
    d->gauss = d->gauss0;
  }
  if (d->gauss_read) stagepy::backends::cpu::g_sources[(int)d->source].gauss.store(d->gauss);
  d->gauss_read = 0;
}
}
