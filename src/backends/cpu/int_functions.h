// Python int functions kernels call through the runtime (codegen.cpp): in, Python ints held
// as int64; out, CPython's result, or 0 where CPython must compute it (an error, or a case
// done here only by CPython), so that the statement goes to CPython.
#pragma once
#include <cstdint>

extern "C" {
// pow(a, b, m) of Python ints: (a ** b) % m with the sign of m, as CPython's long_pow
// gives it. Returns 0 for m == 0 (ValueError), b < 0 (a modular inverse, or ValueError),
// and m == INT64_MIN; else 1, with the result in *out.
int stagepy_powmod(int64_t a, int64_t b, int64_t m, int64_t* out);
// math.lcm(*xs) of n Python ints: CPython's result (lcm() is 1), or -1 where it grows past
// 64 bits on the way. (math.gcd is Euclid's loop inline in kernels: codegen.cpp.)
int64_t stagepy_lcm(int64_t n, const int64_t* xs);
// math.isqrt(x): the floor of x's square root, exactly; -1 for x < 0 (ValueError).
int64_t stagepy_isqrt(int64_t x);
// math.factorial(x): -1 for x < 0 (ValueError) and x > 20 (beyond 64 bits).
int64_t stagepy_factorial(int64_t x);
// math.comb(n, k) and math.perm(n, k): -1 for a negative argument (ValueError) and a result
// beyond 64 bits.
int64_t stagepy_comb(int64_t n, int64_t k);
int64_t stagepy_perm(int64_t n, int64_t k);
}
