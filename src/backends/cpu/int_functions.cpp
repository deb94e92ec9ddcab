// See int_functions.h.
#include "backends/cpu/int_functions.h"

#include <cmath>

namespace {
// |x| as an unsigned 64-bit number (2**63 for INT64_MIN).
uint64_t magnitude(int64_t x) { return x < 0 ? 0 - (uint64_t)x : (uint64_t)x; }
uint64_t gcd_u64(uint64_t a, uint64_t b) {
  while (b) {
    const uint64_t r = a % b;
    a = b;
    b = r;
  }
  return a;
}
}  // namespace

extern "C" int stagepy_powmod(int64_t a, int64_t b, int64_t m, int64_t* out) {
  if (m == 0 || b < 0 || m == INT64_MIN) return 0;
  const uint64_t mm = (uint64_t)(m < 0 ? -m : m);
  // a mod |m| in [0, |m|)
  int64_t r0 = a % (int64_t)mm;
  uint64_t base = (uint64_t)(r0 < 0 ? r0 + (int64_t)mm : r0);
  uint64_t r = 1 % mm;
  for (uint64_t e = (uint64_t)b; e; e >>= 1) {
    if (e & 1) r = (uint64_t)((unsigned __int128)r * base % mm);
    base = (uint64_t)((unsigned __int128)base * base % mm);
  }
  // The sign of m: a non-zero remainder of a negative modulus lies in (m, 0).
  *out = m < 0 && r != 0 ? (int64_t)r - (int64_t)mm : (int64_t)r;
  return 1;
}

extern "C" int64_t stagepy_lcm(int64_t n, const int64_t* xs) {
  uint64_t l = 1;
  for (int64_t k = 0; k < n; k++) {
    const uint64_t x = magnitude(xs[k]);
    if (x == 0 || l == 0) {
      l = 0;
      continue;
    }
    const unsigned __int128 p = (unsigned __int128)(l / gcd_u64(l, x)) * x;
    if (p > (unsigned __int128)INT64_MAX) return -1;
    l = (uint64_t)p;
  }
  return (int64_t)l;
}

extern "C" int64_t stagepy_isqrt(int64_t x) {
  if (x < 0) return -1;
  // The double's square root is within one of the answer; step to it exactly.
  uint64_t r = (uint64_t)std::sqrt((double)x);
  const unsigned __int128 v = (unsigned __int128)x;
  while ((unsigned __int128)r * r > v) r--;
  while ((unsigned __int128)(r + 1) * (r + 1) <= v) r++;
  return (int64_t)r;
}

// C(n, k) as the running products C(n - k + i, i), i = 1..k (each exact, and never smaller
// than the one before): the first beyond 64 bits means the result is too.
extern "C" int64_t stagepy_comb(int64_t n, int64_t k) {
  if (n < 0 || k < 0) return -1;
  if (k > n) return 0;
  if (k > n - k) k = n - k;
  unsigned __int128 r = 1;
  for (int64_t i = 1; i <= k; i++) {
    r = r * (unsigned __int128)(n - k + i) / (unsigned __int128)i;
    if (r > (unsigned __int128)INT64_MAX) return -1;
  }
  return (int64_t)r;
}

extern "C" int64_t stagepy_perm(int64_t n, int64_t k) {
  if (n < 0 || k < 0) return -1;
  if (k > n) return 0;
  unsigned __int128 r = 1;
  for (int64_t i = 0; i < k; i++) {
    r *= (unsigned __int128)(n - i);
    if (r > (unsigned __int128)INT64_MAX) return -1;
  }
  return (int64_t)r;
}

extern "C" int64_t stagepy_factorial(int64_t x) {
  if (x < 0 || x > 20) return -1;
  int64_t f = 1;
  for (int64_t k = 2; k <= x; k++) f *= k;
  return f;
}
