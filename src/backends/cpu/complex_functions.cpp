// See complex_functions.h. Compiled with -ffp-contract=off (CMakeLists.txt): no product
// may be fused into an addition, as none is in CPython.
#include "backends/cpu/complex_functions.h"

#include <cfloat>
#include <cmath>

namespace stagepy::backends::cpu {
namespace {

struct Cx {
  double re, im;
};

constexpr double kE = 2.7182818284590452354;     // Py_MATH_E
constexpr double kPi = 3.14159265358979323846;   // Py_MATH_PI
constexpr double kLn2 = 0.6931471805599453094;   // M_LN2
constexpr double kLn10 = 2.302585092994045684;   // M_LN10
constexpr int kScaleUp = 2 * (DBL_MANT_DIG / 2) + 1;  // turns a subnormal into a normal
constexpr int kScaleDown = -(kScaleUp + 1) / 2;

// cmathmodule.c's thresholds, computed as it computes them (at run time, by the C library).
double large_double() { return DBL_MAX / 4.0; }
double log_large_double() {
  static const double v = std::log(large_double());
  return v;
}

bool finite(Cx z) { return std::isfinite(z.re) && std::isfinite(z.im); }

// _Py_c_prod.
Cx prod(Cx a, Cx b) { return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; }

// _Py_c_quot (Smith's algorithm); false for a zero divisor (CPython's EDOM).
bool quot(Cx a, Cx b, Cx* r) {
  const double abr = b.re < 0 ? -b.re : b.re;
  const double abi = b.im < 0 ? -b.im : b.im;
  if (abr >= abi) {
    if (abr == 0.0) return false;
    const double ratio = b.im / b.re;
    const double denom = b.re + b.im * ratio;
    *r = {(a.re + a.im * ratio) / denom, (a.im - a.re * ratio) / denom};
  } else if (abi >= abr) {
    const double ratio = b.re / b.im;
    const double denom = b.re * ratio + b.im;
    *r = {(a.re * ratio + a.im) / denom, (a.im * ratio - a.re) / denom};
  } else {
    *r = {NAN, NAN};  // a NaN in b
  }
  return true;
}

// c_powu: x ** n for n >= 0 by repeated squaring.
Cx powu(Cx x, long n) {
  Cx r{1.0, 0.0}, p = x;
  for (long mask = 1; mask > 0 && n >= mask; mask <<= 1) {
    if (n & mask) r = prod(r, p);
    p = prod(p, p);
  }
  return r;
}

// complex_pow: a small integer exponent by c_powi, any other by _Py_c_pow.
bool power(Cx a, Cx b, Cx* r) {
  if (b.im == 0.0 && b.re == std::floor(b.re) && std::fabs(b.re) <= 100.0) {
    const long n = (long)b.re;
    if (n > 0) {
      *r = powu(a, n);
      return true;
    }
    return quot({1.0, 0.0}, powu(a, -n), r);
  }
  if (b.re == 0.0 && b.im == 0.0) {
    *r = {1.0, 0.0};
    return true;
  }
  if (a.re == 0.0 && a.im == 0.0) {
    if (b.im != 0.0 || b.re < 0.0) return false;  // ZeroDivisionError
    *r = {0.0, 0.0};
    return true;
  }
  const double vabs = std::hypot(a.re, a.im);
  double len = std::pow(vabs, b.re);
  const double at = std::atan2(a.im, a.re);
  double phase = at * b.re;
  if (b.im != 0.0) {
    len /= std::exp(at * b.im);
    phase += b.im * std::log(vabs);
  }
  *r = {len * std::cos(phase), len * std::sin(phase)};
  return true;
}

// cmath.sqrt of a finite z.
Cx sqrt_(Cx z) {
  if (z.re == 0.0 && z.im == 0.0) return {0.0, z.im};
  double ax = std::fabs(z.re);
  const double ay = std::fabs(z.im);
  double s;
  if (ax < DBL_MIN && ay < DBL_MIN) {  // hypot(ax, ay) would be subnormal: scale up first
    ax = std::ldexp(ax, kScaleUp);
    s = std::ldexp(std::sqrt(ax + std::hypot(ax, std::ldexp(ay, kScaleUp))), kScaleDown);
  } else {
    ax /= 8.0;
    s = 2.0 * std::sqrt(ax + std::hypot(ax, ay / 8.0));
  }
  const double d = ay / (2.0 * s);
  if (z.re >= 0.0) return {s, std::copysign(d, z.im)};
  return {d, std::copysign(s, z.im)};
}

// cmath.exp of a finite z (an infinite part is CPython's OverflowError: the caller checks).
Cx exp_(Cx z) {
  if (z.re > log_large_double()) {
    const double l = std::exp(z.re - 1.0);
    return {l * std::cos(z.im) * kE, l * std::sin(z.im) * kE};
  }
  const double l = std::exp(z.re);
  return {l * std::cos(z.im), l * std::sin(z.im)};
}

// cmath.cosh and cmath.sinh of a finite z: past log(DBL_MAX / 4), cosh(x) as
// cosh(x -+ 1) * e, so that the result overflows only where it must.
Cx cosh_(Cx z) {
  if (std::fabs(z.re) > log_large_double()) {
    const double x1 = z.re - std::copysign(1.0, z.re);
    return {std::cos(z.im) * std::cosh(x1) * kE, std::sin(z.im) * std::sinh(x1) * kE};
  }
  return {std::cos(z.im) * std::cosh(z.re), std::sin(z.im) * std::sinh(z.re)};
}
Cx sinh_(Cx z) {
  if (std::fabs(z.re) > log_large_double()) {
    const double x1 = z.re - std::copysign(1.0, z.re);
    return {std::cos(z.im) * std::sinh(x1) * kE, std::sin(z.im) * std::cosh(x1) * kE};
  }
  return {std::cos(z.im) * std::sinh(z.re), std::sin(z.im) * std::cosh(z.re)};
}

// cmath.tanh of a finite z.
Cx tanh_(Cx z) {
  if (std::fabs(z.re) > log_large_double()) {
    return {std::copysign(1.0, z.re), 4.0 * std::sin(z.im) * std::cos(z.im) * std::exp(-2.0 * std::fabs(z.re))};
  }
  const double tx = std::tanh(z.re);
  const double ty = std::tan(z.im);
  const double cx = 1.0 / std::cosh(z.re);
  const double txty = tx * ty;
  const double denom = 1.0 + txty * txty;
  return {tx * (1.0 + ty * ty) / denom, ((ty / denom) * cx) * cx};
}

// c_log of a finite z; false for z == 0 (CPython's EDOM).
bool log_(Cx z, Cx* r) {
  const double ax = std::fabs(z.re), ay = std::fabs(z.im);
  double re;
  if (ax > large_double() || ay > large_double()) {
    re = std::log(std::hypot(ax / 2.0, ay / 2.0)) + kLn2;
  } else if (ax < DBL_MIN && ay < DBL_MIN) {
    if (!(ax > 0.0 || ay > 0.0)) return false;
    re = std::log(std::hypot(std::ldexp(ax, DBL_MANT_DIG), std::ldexp(ay, DBL_MANT_DIG))) - DBL_MANT_DIG * kLn2;
  } else {
    const double h = std::hypot(ax, ay);
    if (0.71 <= h && h <= 1.73) {  // near 1: log1p of |z|^2 - 1, computed without cancellation
      const double am = ax > ay ? ax : ay, an = ax > ay ? ay : ax;
      re = std::log1p((am - 1) * (am + 1) + an * an) / 2.0;
    } else {
      re = std::log(h);
    }
  }
  *r = {re, std::atan2(z.im, z.re)};
  return true;
}

// The inverse functions of a finite z: past DBL_MAX / 4 (sqrt(DBL_MAX / 4) for atanh) from
// the logarithm of |z| / 2, else from square roots of 1 -+ z (cmathmodule.c's formulas).
double log_half_abs_plus(Cx z) { return std::log(std::hypot(z.re / 2.0, z.im / 2.0)) + kLn2 * 2.0; }
bool large(Cx z) { return std::fabs(z.re) > large_double() || std::fabs(z.im) > large_double(); }

Cx acos_(Cx z) {
  if (large(z)) {
    const double re = std::atan2(std::fabs(z.im), z.re);
    if (z.re < 0.0) return {re, -std::copysign(log_half_abs_plus(z), z.im)};
    return {re, std::copysign(log_half_abs_plus(z), -z.im)};
  }
  const Cx s1 = sqrt_({1.0 - z.re, -z.im}), s2 = sqrt_({1.0 + z.re, z.im});
  return {2.0 * std::atan2(s1.re, s2.re), std::asinh(s2.re * s1.im - s2.im * s1.re)};
}

Cx acosh_(Cx z) {
  if (large(z)) return {log_half_abs_plus(z), std::atan2(z.im, z.re)};
  const Cx s1 = sqrt_({z.re - 1.0, z.im}), s2 = sqrt_({z.re + 1.0, z.im});
  return {std::asinh(s1.re * s2.re + s1.im * s2.im), 2.0 * std::atan2(s1.im, s2.re)};
}

Cx asinh_(Cx z) {
  if (large(z)) {
    const double re = z.im >= 0.0 ? std::copysign(log_half_abs_plus(z), z.re) : -std::copysign(log_half_abs_plus(z), -z.re);
    return {re, std::atan2(z.im, std::fabs(z.re))};
  }
  const Cx s1 = sqrt_({1.0 + z.im, -z.re}), s2 = sqrt_({1.0 - z.im, z.re});
  return {std::asinh(s1.re * s2.im - s2.re * s1.im), std::atan2(z.im, s1.re * s2.re - s1.im * s2.im)};
}

// false for atanh(1 +- 0j) (CPython's EDOM).
bool atanh_(Cx z, Cx* r) {
  if (z.re < 0.0) {  // atanh(-z) = -atanh(z)
    Cx m;
    if (!atanh_({-z.re, -z.im}, &m)) return false;
    *r = {-m.re, -m.im};
    return true;
  }
  static const double sqrt_large = std::sqrt(large_double()), sqrt_dbl_min = std::sqrt(DBL_MIN);
  const double ay = std::fabs(z.im);
  if (z.re > sqrt_large || ay > sqrt_large) {  // ~ 1/z +- i pi/2
    const double h = std::hypot(z.re / 2.0, z.im / 2.0);
    *r = {z.re / 4.0 / h / h, -std::copysign(kPi / 2.0, -z.im)};
  } else if (z.re == 1.0 && ay < sqrt_dbl_min) {
    if (ay == 0.0) return false;
    *r = {-std::log(std::sqrt(ay) / std::sqrt(std::hypot(ay, 2.0))), std::copysign(std::atan2(2.0, -ay) / 2, z.im)};
  } else {
    *r = {std::log1p(4.0 * z.re / ((1 - z.re) * (1 - z.re) + ay * ay)) / 4.0,
          -std::atan2(-2.0 * z.im, (1 - z.re) * (1 + z.re) - ay * ay) / 2.0};
  }
  return true;
}

// Through i: sin(z) = -i sinh(iz), cos(z) = cosh(iz), tan(z) = -i tanh(iz), and the same
// for asin, atan.
Cx times_i(Cx z) { return {-z.im, z.re}; }
Cx times_minus_i(Cx z) { return {z.im, -z.re}; }

bool compute(CFn f, Cx a, Cx b, Cx* r) {
  switch (f) {
    case CFn::Pow: return power(a, b, r);
    case CFn::Sqrt: *r = sqrt_(a); return true;
    case CFn::Exp: *r = exp_(a); return true;
    case CFn::Log: return log_(a, r);
    case CFn::LogBase: {
      Cx x, y;
      return log_(a, &x) && log_(b, &y) && quot(x, y, r);
    }
    case CFn::Log10: {
      Cx x;
      if (!log_(a, &x)) return false;
      *r = {x.re / kLn10, x.im / kLn10};
      return true;
    }
    case CFn::Sin: *r = times_minus_i(sinh_(times_i(a))); return true;
    case CFn::Cos: *r = cosh_(times_i(a)); return true;
    case CFn::Tan: *r = times_minus_i(tanh_(times_i(a))); return true;
    case CFn::Sinh: *r = sinh_(a); return true;
    case CFn::Cosh: *r = cosh_(a); return true;
    case CFn::Tanh: *r = tanh_(a); return true;
    case CFn::Asin: *r = times_minus_i(asinh_(times_i(a))); return true;
    case CFn::Acos: *r = acos_(a); return true;
    case CFn::Atan: {
      Cx t;
      if (!atanh_(times_i(a), &t)) return false;
      *r = times_minus_i(t);
      return true;
    }
    case CFn::Asinh: *r = asinh_(a); return true;
    case CFn::Acosh: *r = acosh_(a); return true;
    case CFn::Atanh: return atanh_(a, r);
    case CFn::Rect: {  // (r, phi) in a's parts
      if (a.im == 0.0) *r = {a.re, a.re * a.im};
      else *r = {a.re * std::cos(a.im), a.re * std::sin(a.im)};
      return true;
    }
    case CFn::Count: break;
  }
  return false;
}

}  // namespace

const char* cfn_name(CFn f) {
  static const char* names[] = {"pow",  "sqrt", "exp",  "log",   "log_base", "log10", "sin",
                                "cos",  "tan",  "sinh", "cosh",  "tanh",     "asin",  "acos",
                                "atan", "asinh", "acosh", "atanh", "rect"};
  static_assert(sizeof(names) / sizeof(names[0]) == kCFnCount, "complex function names");
  int i = static_cast<int>(f);
  return i >= 0 && i < kCFnCount ? names[i] : "?";
}

}  // namespace stagepy::backends::cpu

extern "C" int stagepy_cfunc(int f, double ar, double ai, double br, double bi, double* out) {
  using namespace stagepy::backends::cpu;
  if (f < 0 || f >= kCFnCount) return 0;
  const Cx a{ar, ai}, b{br, bi};
  // Infinities and NaNs take CPython's special-value paths: CPython computes those.
  if (!finite(a) || !finite(b)) return 0;
  Cx r;
  if (!compute(static_cast<CFn>(f), a, b, &r) || !finite(r)) return 0;
  out[0] = r.re;
  out[1] = r.im;
  return 1;
}
