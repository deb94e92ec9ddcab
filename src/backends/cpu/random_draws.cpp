// See random_draws.h.
#include "backends/cpu/random_draws.h"

#include <cstring>

namespace stagepy::backends::cpu {
namespace {

constexpr int kM = 397;
constexpr uint32_t kMatrixA = 0x9908b0dfU, kUpper = 0x80000000U, kLower = 0x7fffffffU;

uint32_t* g_mt = nullptr;
int32_t* g_index = nullptr;

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

// The draws of a kernel: words from the generator, keeping what undoes them first.
uint32_t draw(RandomDraws* d) {
  if (*d->index >= kMtWords && !d->refilled) {
    std::memcpy(d->before, d->mt, sizeof(d->before));
    d->refilled = 1;
  }
  return random_word(d->mt, d->index);
}

}  // namespace

void set_random_generator(uint32_t* mt, int32_t* index) {
  g_mt = mt;
  g_index = index;
}
bool has_random_generator() { return g_mt != nullptr; }

uint32_t random_word(uint32_t* mt, int32_t* index) {
  if (*index >= kMtWords) {
    refill(mt);
    *index = 0;
  }
  return temper(mt[(*index)++]);
}

double random_double(uint32_t* mt, int32_t* index) {
  const uint32_t a = random_word(mt, index) >> 5, b = random_word(mt, index) >> 6;
  return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

int64_t random_below(uint32_t* mt, int32_t* index, int64_t n) {
  int k = 64 - __builtin_clzll((uint64_t)n);  // n.bit_length()
  auto word = [&] { return random_word(mt, index); };
  uint64_t r = random_bits(k, word);
  while (r >= (uint64_t)n) r = random_bits(k, word);
  return (int64_t)r;
}

}  // namespace stagepy::backends::cpu

using stagepy::backends::cpu::RandomDraws;

extern "C" {

void stagepy_random_begin(RandomDraws* d) {
  d->mt = stagepy::backends::cpu::g_mt;
  d->index = stagepy::backends::cpu::g_index;
  d->index0 = *d->index;
  d->refilled = 0;
}

double stagepy_random_random(RandomDraws* d) {
  const uint32_t a = stagepy::backends::cpu::draw(d) >> 5, b = stagepy::backends::cpu::draw(d) >> 6;
  return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

int64_t stagepy_random_below(RandomDraws* d, int64_t n) {
  const int k = 64 - __builtin_clzll((uint64_t)n);
  auto word = [&] { return stagepy::backends::cpu::draw(d); };
  uint64_t r = stagepy::backends::cpu::random_bits(k, word);
  while (r >= (uint64_t)n) r = stagepy::backends::cpu::random_bits(k, word);
  return (int64_t)r;
}

void stagepy_random_commit(RandomDraws* d) {
  d->index0 = *d->index;
  d->refilled = 0;
}

void stagepy_random_end(RandomDraws* d, int32_t status) {
  if (!d->mt || status == 0) return;
  if (d->refilled) std::memcpy(d->mt, d->before, sizeof(d->before));
  *d->index = d->index0;
  d->refilled = 0;
}
}
