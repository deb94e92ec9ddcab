// The out-of-line recording of NumPy's warnings (warn_functions.h), compiled by the CPU JIT:
// which kinds a float result raises, and where each kind first occurred (by count, or by a
// parallel body's key).
#include <vector>
#include <gtest/gtest.h>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <cmath>
#include <cstdlib>
#include <limits>

#include "backends/cpu/jit.h"
#include "backends/cpu/warn_functions.h"

using namespace stagepy::backends::cpu;

namespace {

struct Site {
  int8_t bits = 0;
  int64_t first[3] = {0, 0, 0};
};
using Record = void (*)(double, double, double, bool, int8_t*, int64_t*, int64_t*, int64_t*, int64_t*, int64_t);

using ComplexRecord = void (*)(int8_t, int8_t, double, double, double, double, int8_t*, int64_t*, int64_t*, int64_t*,
                               int64_t*, int64_t);

// An external function that calls the module's internal classifier (fp_warn, or
// complex_warn) with its arguments.
void* compile_classifier(llvm::Function* (*get)(llvm::Module&)) {
  setenv("STAGEPY_CACHE", "0", 1);
  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto M = std::make_unique<llvm::Module>("warn_test", *ctx);
  llvm::Function* fp = get(*M);
  auto* f = llvm::Function::Create(fp->getFunctionType(), llvm::Function::ExternalLinkage, "warn_test", M.get());
  llvm::IRBuilder<> B(llvm::BasicBlock::Create(*ctx, "entry", f));
  std::vector<llvm::Value*> args;
  for (auto& a : f->args()) args.push_back(&a);
  B.CreateCall(fp, args);
  B.CreateRetVoid();
  std::string err;
  static std::vector<KernelCode> loaded;  // the kernels stay loaded for the whole test
  KernelCode code = jit_compile(std::move(ctx), std::move(M), "warn_test", &err, nullptr);
  EXPECT_NE(code, nullptr) << err;
  loaded.push_back(code);
  return reinterpret_cast<void*>(code.get());
}
Record compile_fp_warn() { return reinterpret_cast<Record>(compile_classifier(fp_warn_function)); }

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

TEST(WarnFunctions, KindsAndFirstPlacesByCount) {
  Record rec = compile_fp_warn();
  ASSERT_NE(rec, nullptr);
  Site s;
  int64_t count = 4;  // four warnings elsewhere in the kernel before these
  // 1e308 * 10: overflow (bit 1), the 5th warning.
  rec(1e308, 10.0, kInf, false, &s.bits, &s.first[0], &s.first[1], &s.first[2], &count, kWarnPlaceCount);
  EXPECT_EQ(s.bits, 2);
  EXPECT_EQ(s.first[1], 5);
  EXPECT_EQ(count, 5);
  // Again: nothing new, nothing moves.
  rec(1e308, 10.0, kInf, false, &s.bits, &s.first[0], &s.first[1], &s.first[2], &count, kWarnPlaceCount);
  EXPECT_EQ(s.bits, 2);
  EXPECT_EQ(s.first[1], 5);
  EXPECT_EQ(count, 5);
  // inf - inf: invalid (bit 2); an infinite operand is no overflow.
  rec(kInf, kInf, std::nan(""), false, &s.bits, &s.first[0], &s.first[1], &s.first[2], &count, kWarnPlaceCount);
  EXPECT_EQ(s.bits, 6);
  EXPECT_EQ(s.first[2], 6);
  EXPECT_EQ(count, 6);
  // NaN in, NaN out: nothing.
  rec(std::nan(""), 1.0, std::nan(""), false, &s.bits, &s.first[0], &s.first[1], &s.first[2], &count, kWarnPlaceCount);
  EXPECT_EQ(count, 6);
}

TEST(WarnFunctions, DivisionByZeroIsNotAnOverflowAndParallelBodiesRecordKeys) {
  Record rec = compile_fp_warn();
  ASSERT_NE(rec, nullptr);
  Site s;
  s.first[0] = s.first[1] = s.first[2] = INT64_MAX;  // a parallel body's "not seen"
  int64_t count = 0;
  const int64_t stride = 7;  // 3 * 2 sites + 1
  // Iteration 3: 1 / 0 divides by zero (bit 0) and does not overflow; key 3 * 7 + 1.
  rec(1.0, 0.0, kInf, true, &s.bits, &s.first[0], &s.first[1], &s.first[2], &count, 3 * stride);
  EXPECT_EQ(s.bits, 1);
  EXPECT_EQ(s.first[0], 3 * stride + 1);
  EXPECT_EQ(s.first[1], INT64_MAX);
  // 0 / 0: invalid, not divide by zero; same iteration, the call's second warning.
  rec(0.0, 0.0, std::nan(""), true, &s.bits, &s.first[0], &s.first[1], &s.first[2], &count, 3 * stride);
  EXPECT_EQ(s.bits, 5);
  EXPECT_EQ(s.first[2], 3 * stride + 2);
  EXPECT_LT(s.first[0], s.first[2]);  // in the order they came within the iteration
}

TEST(WarnFunctions, ComplexOperationsReportTheirPartsFlagsOnce) {
  auto rec = reinterpret_cast<ComplexRecord>(compile_classifier(complex_warn_function));
  ASSERT_NE(rec, nullptr);
  const double big = std::numeric_limits<double>::max();
  auto kinds = [&](int op, bool single, double ar, double ai, double br, double bi) {
    Site s;
    int64_t count = 0;
    rec((int8_t)op, single ? 1 : 0, ar, ai, br, bi, &s.bits, &s.first[0], &s.first[1], &s.first[2], &count,
        kWarnPlaceCount);
    return (int)s.bits;
  };
  EXPECT_EQ(kinds(kComplexWarnMultiply, false, big, 0, 2, 0), 2);          // big * 2 overflows
  EXPECT_EQ(kinds(kComplexWarnMultiply, false, 0, 0, kInf, 0), 4);         // 0 * inf: invalid only
  EXPECT_EQ(kinds(kComplexWarnMultiply, false, big, big, 1, 1), 2);        // real part 0, imaginary overflows
  EXPECT_EQ(kinds(kComplexWarnMultiply, false, big, kInf, 2, 0), 6);       // both, reported once each
  EXPECT_EQ(kinds(kComplexWarnMultiply, false, std::nan(""), 0, 1, 1), 0);  // a NaN operand raises nothing
  EXPECT_EQ(kinds(kComplexWarnAdd, false, kInf, 0, -kInf, 0), 4);
  EXPECT_EQ(kinds(kComplexWarnAdd, false, 1, big, 2, big), 2);
  EXPECT_EQ(kinds(kComplexWarnSubtract, false, big, 0, -big, 0), 2);
  EXPECT_EQ(kinds(kComplexWarnSubtract, false, kInf, 1, kInf, 1), 4);
  EXPECT_EQ(kinds(kComplexWarnAdd, false, 1, 2, 3, 4), 0);
  // Division: a zero divisor divides by zero (and 0 / 0 is invalid); a NaN in the divisor
  // is invalid through the comparison that picks the scaling, one in the dividend is not;
  // the scaled divisor of 1e308 + 1e308j overflows although the quotient (0j) is finite.
  EXPECT_EQ(kinds(kComplexWarnDivide, false, 1, 1, 0, 0), 1);
  EXPECT_EQ(kinds(kComplexWarnDivide, false, 1, 0, 0, 0), 5);
  EXPECT_EQ(kinds(kComplexWarnDivide, false, 1, 1, std::nan(""), 1), 4);
  EXPECT_EQ(kinds(kComplexWarnDivide, false, 1, 1, 0, std::nan("")), 4);
  EXPECT_EQ(kinds(kComplexWarnDivide, false, std::nan(""), 1, 1, 1), 0);
  EXPECT_EQ(kinds(kComplexWarnDivide, false, 1, 1, big, big), 2);
  EXPECT_EQ(kinds(kComplexWarnDivide, false, 1, 1, big / 2, big / 2), 0);
  EXPECT_EQ(kinds(kComplexWarnDivide, false, 1, 1, kInf, 0), 0);
  EXPECT_EQ(kinds(kComplexWarnDivide, false, 1e308, 1e308, 1e-308, 0), 2);
  // complex64: each part's operation rounded to float32 overflows where the double does not.
  EXPECT_EQ(kinds(kComplexWarnMultiply, true, 3e38, 0, 2, 0), 2);
  EXPECT_EQ(kinds(kComplexWarnMultiply, false, 3e38, 0, 2, 0), 0);
  // Overflow and invalid in one operation: overflow first, as NumPy reports them.
  Site s;
  int64_t count = 10;
  rec((int8_t)kComplexWarnMultiply, 0, big, kInf, 2, 0, &s.bits, &s.first[0], &s.first[1], &s.first[2], &count,
      kWarnPlaceCount);
  EXPECT_EQ(s.first[1], 11);
  EXPECT_EQ(s.first[2], 12);
  EXPECT_EQ(count, 12);
}
