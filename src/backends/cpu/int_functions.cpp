// See int_functions.h.
#include "backends/cpu/int_functions.h"

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
