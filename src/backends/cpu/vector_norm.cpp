// See vector_norm.h.
#include "backends/cpu/vector_norm.h"

#include <cfloat>
#include <cmath>

namespace {

// A double-length value hi + lo.
struct Pair {
  double hi, lo;
};

// x * y exactly: the rounded product and its error (Dekker's product of Veltkamp's halves,
// exact for these operands, which are below 2 in magnitude; the file is compiled with no
// fused multiply-adds).
Pair exact_product(double x, double y) {
  auto split = [](double a, double* hi, double* lo) {
    const double c = 134217729.0 * a;  // 2**27 + 1
    *hi = c - (c - a);
    *lo = a - *hi;
  };
  double xh, xl, yh, yl;
  split(x, &xh, &xl);
  split(y, &yh, &yl);
  const double z = x * y;
  return {z, ((xh * yh - z) + xh * yl + xl * yh) + xl * yl};
}

// a + b exactly where |a| >= |b| (Dekker's fast two-sum).
Pair exact_sum(double a, double b) {
  const double s = a + b;
  return {s, (a - s) + b};
}

// The Euclidean norm of n finite, non-negative coordinates at most `max` (positive), as
// vector_norm computes it.
double norm_of(int n, double* v, double max) {
  int max_e;
  std::frexp(max, &max_e);
  if (max_e < -1023) {  // 2**-max_e would overflow: subnormal coordinates made normal first
    for (int i = 0; i < n; i++) v[i] /= DBL_MIN;
    return DBL_MIN * norm_of(n, v, max / DBL_MIN);
  }
  const double scale = std::ldexp(1.0, -max_e);
  double csum = 1.0, frac1 = 0.0, frac2 = 0.0;
  for (int i = 0; i < n; i++) {
    const double x = v[i] * scale;  // lossless: a power of two
    const Pair pr = exact_product(x, x);
    const Pair sm = exact_sum(csum, pr.hi);
    csum = sm.hi;
    frac1 += pr.lo;
    frac2 += sm.lo;
  }
  double h = std::sqrt(csum - 1.0 + (frac1 + frac2));
  const Pair pr = exact_product(-h, h);
  const Pair sm = exact_sum(csum, pr.hi);
  csum = sm.hi;
  frac1 += pr.lo;
  frac2 += sm.lo;
  const double x = csum - 1.0 + (frac1 + frac2);
  h += x / (2.0 * h);  // the correction step
  return h / scale;
}

double hypot_of(int n, double* v) {
  double max = 0.0;
  bool nan = false;
  for (int i = 0; i < n; i++) {
    v[i] = std::fabs(v[i]);
    nan = nan || std::isnan(v[i]);
    if (v[i] > max) max = v[i];
  }
  if (std::isinf(max)) return max;
  if (nan) return NAN;
  if (max == 0.0 || n <= 1) return max;
  return norm_of(n, v, max);
}

}  // namespace

extern "C" {

double stagepy_math_hypot(double x, double y) {
  double v[2] = {x, y};
  return hypot_of(2, v);
}

}
