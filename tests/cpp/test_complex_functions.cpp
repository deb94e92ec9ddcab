// stagepy_cfunc (complex_functions.h): values whose exact bits CPython's formulas give
// (the Python tests compare against the running CPython on thousands more), and the cases
// it must hand to CPython: errors, special values, results that are not finite.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "backends/cpu/complex_functions.h"

using stagepy::backends::cpu::CFn;

namespace {

struct Result {
  bool ok;
  double re, im;
};

Result cf(CFn f, double ar, double ai, double br = 0.0, double bi = 0.0) {
  double out[2] = {NAN, NAN};
  int ok = stagepy_cfunc(static_cast<int>(f), ar, ai, br, bi, out);
  return {ok != 0, out[0], out[1]};
}

void expect_bits(const Result& r, double re, double im) {
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.re, re);
  EXPECT_EQ(r.im, im);
  EXPECT_EQ(std::signbit(r.re), std::signbit(re));
  EXPECT_EQ(std::signbit(r.im), std::signbit(im));
}

TEST(ComplexFunctions, PowersBySquaringAndByThePolarFormula) {
  expect_bits(cf(CFn::Pow, 1, 1, 2, 0), 0, 2);           // (1+1j)**2 by c_powu
  expect_bits(cf(CFn::Pow, 2, 0, -1, 0), 0.5, 0);        // 1 / 2 by _Py_c_quot
  expect_bits(cf(CFn::Pow, 3, 4, 0, 0), 1, 0);           // x ** 0
  expect_bits(cf(CFn::Pow, 0, 0, 0.5, 0), 0, 0);         // 0j ** 0.5
  Result r = cf(CFn::Pow, -4, 0, 0.5, 0);                 // polar: 2 * (cos(pi/2), sin(pi/2))
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.re, 2 * std::cos(std::atan2(0.0, -4.0) * 0.5));
  EXPECT_EQ(r.im, 2 * std::sin(std::atan2(0.0, -4.0) * 0.5));
}

TEST(ComplexFunctions, CPythonsErrorsGoToCPython) {
  EXPECT_FALSE(cf(CFn::Pow, 0, 0, -1, 0).ok);    // ZeroDivisionError (c_powi)
  EXPECT_FALSE(cf(CFn::Pow, 0, 0, 0.5, 1).ok);   // ZeroDivisionError (_Py_c_pow)
  EXPECT_FALSE(cf(CFn::Pow, 1e200, 1, 3, 0).ok); // OverflowError
  EXPECT_FALSE(cf(CFn::Log, 0, -0.0).ok);        // ValueError
  EXPECT_FALSE(cf(CFn::Exp, 1000, 1).ok);        // OverflowError
  EXPECT_FALSE(cf(CFn::LogBase, 2, 0, 1, 0).ok); // log(1) is a zero divisor
  EXPECT_FALSE(cf(CFn::Atanh, 1, 0).ok);         // ValueError
  EXPECT_FALSE(cf(CFn::Atanh, -1, -0.0).ok);
  EXPECT_TRUE(cf(CFn::Atanh, 1, 1e-300).ok);     // near the pole: its own formula
}

TEST(ComplexFunctions, SpecialValuesGoToCPython) {
  const double inf = std::numeric_limits<double>::infinity();
  for (CFn f : {CFn::Sqrt, CFn::Exp, CFn::Log, CFn::Sin, CFn::Tanh, CFn::Rect}) {
    EXPECT_FALSE(cf(f, inf, 1).ok);
    EXPECT_FALSE(cf(f, 1, NAN).ok);
  }
  EXPECT_FALSE(cf(CFn::Pow, 2, 0, inf, 0).ok);
}

TEST(ComplexFunctions, CmathValues) {
  expect_bits(cf(CFn::Sqrt, -4, 0), 0, 2);
  expect_bits(cf(CFn::Sqrt, -4, -0.0), 0, -2);   // the branch cut follows the zero's sign
  expect_bits(cf(CFn::Sqrt, 0, -0.0), 0, -0.0);
  expect_bits(cf(CFn::Exp, 0, 0), 1, 0);
  expect_bits(cf(CFn::Log, 1, 0), 0, 0);
  expect_bits(cf(CFn::Log, -1, 0), 0, std::atan2(0.0, -1.0));
  expect_bits(cf(CFn::Sinh, 0, 0), 0, 0);
  expect_bits(cf(CFn::Cos, 0, 0), 1, -0.0);      // cosh(i * 0) = cosh(-0 + 0j)
  expect_bits(cf(CFn::Asin, 0, 0), 0, 0);
  expect_bits(cf(CFn::Atanh, 0, -0.0), 0, -0.0);
  expect_bits(cf(CFn::Acos, 1, 0), 0, -0.0);     // cmath.acos(1+0j) == (0-0j)
  expect_bits(cf(CFn::Rect, 2, 0), 2, 0);        // phi == 0: (r, r * phi)
  expect_bits(cf(CFn::Rect, 2, -0.0), 2, -0.0);
}

}  // namespace
