// See warn_functions.h.
#include "backends/cpu/warn_functions.h"

#include <vector>

#include <llvm/IR/Attributes.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/ModRef.h>

namespace stagepy::backends::cpu {
namespace {

// Internal, never inlined into the kernel, cold, touching only what its pointers point to.
llvm::Function* declare_cold(llvm::Module& m, const char* name, llvm::FunctionType* ty, unsigned first_ptr, unsigned nptr) {
  auto* f = llvm::Function::Create(ty, llvm::Function::InternalLinkage, name, m);
  f->addFnAttr(llvm::Attribute::NoInline);
  f->addFnAttr(llvm::Attribute::Cold);
  f->addFnAttr(llvm::Attribute::NoUnwind);
  f->setMemoryEffects(llvm::MemoryEffects::argMemOnly());
  for (unsigned k = first_ptr; k < first_ptr + nptr; k++) f->addParamAttr(k, llvm::Attribute::NoCapture);
  return f;
}

// A function of a warning site: its own `head` parameters, then the site's state and the
// place (bits, first0..2, count, place), as warn_record and the classifiers take them.
llvm::Function* declare_site_function(llvm::Module& m, const char* name, std::vector<llvm::Type*> head) {
  llvm::LLVMContext& C = m.getContext();
  auto* p = llvm::PointerType::getUnqual(C);
  const unsigned first_ptr = (unsigned)head.size();
  head.insert(head.end(), {p, p, p, p, p, llvm::Type::getInt64Ty(C)});
  auto* ty = llvm::FunctionType::get(llvm::Type::getVoidTy(C), head, false);
  return declare_cold(m, name, ty, first_ptr, 5);
}

}  // namespace

llvm::Function* warn_record_function(llvm::Module& m) {
  if (auto* f = m.getFunction("stagepy.warn_record")) return f;
  llvm::LLVMContext& C = m.getContext();
  auto* i8 = llvm::Type::getInt8Ty(C);
  auto* i64 = llvm::Type::getInt64Ty(C);
  llvm::Function* f = declare_site_function(m, "stagepy.warn_record", {i8});
  llvm::IRBuilder<> B(llvm::BasicBlock::Create(C, "entry", f));
  llvm::Value* kinds = f->getArg(0);
  llvm::Value* bits = f->getArg(1);
  llvm::Value* count_p = f->getArg(5);
  llvm::Value* place = f->getArg(6);
  llvm::Value* old = B.CreateLoad(i8, bits);
  llvm::Value* count = B.CreateLoad(i64, count_p);
  llvm::Value* by_count = B.CreateICmpEQ(place, B.getInt64(kWarnPlaceCount));
  for (unsigned k = 0; k < 3; k++) {
    llvm::Value* first = f->getArg(2 + k);
    llvm::Value* mask = B.getInt8((uint8_t)(1u << k));
    llvm::Value* fresh = B.CreateAnd(B.CreateICmpNE(B.CreateAnd(kinds, mask), B.getInt8(0)),
                                     B.CreateICmpEQ(B.CreateAnd(old, mask), B.getInt8(0)));
    count = B.CreateAdd(count, B.CreateZExt(fresh, i64));
    llvm::Value* at = B.CreateSelect(by_count, count, B.CreateAdd(place, count));
    // By place: the earliest stands (a parallel body's rows run in panels, out of order:
    // codegen's panel_rows); by count, the first.
    llvm::Value* was = B.CreateLoad(i64, first);
    llvm::Value* earliest = B.CreateSelect(by_count, at, B.CreateBinaryIntrinsic(llvm::Intrinsic::smin, at, was));
    B.CreateStore(B.CreateSelect(fresh, earliest, was), first);
  }
  B.CreateStore(count, count_p);
  B.CreateStore(B.CreateOr(old, kinds), bits);
  B.CreateRetVoid();
  return f;
}

namespace {

// The kinds (bits as in warn_record) NumPy reports for r = x op y, from the values: an
// infinite result of finite operands overflowed (unless it divided by zero), a NaN of
// non-NaN operands is invalid, a finite non-zero number divided by zero divides by zero,
// and so does zero to a finite negative power. `divide` and `power` are i1 values.
llvm::Value* fp_kinds(llvm::IRBuilder<>& B, llvm::Value* x, llvm::Value* y, llvm::Value* r, llvm::Value* divide,
                      llvm::Value* power) {
  auto* d = x->getType();
  auto* i8 = B.getInt8Ty();
  auto isfinite = [&](llvm::Value* v) {
    return B.CreateFCmpOLT(B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, v), llvm::ConstantFP::getInfinity(d));
  };
  auto isnan = [&](llvm::Value* v) { return B.CreateFCmpUNO(v, v); };
  llvm::Value* zero = llvm::ConstantFP::get(d, 0.0);
  llvm::Value* fin = B.CreateAnd(isfinite(x), isfinite(y));
  llvm::Value* inf = B.CreateAnd(B.CreateNot(isfinite(r)), B.CreateNot(isnan(r)));
  llvm::Value* invalid = B.CreateAnd(isnan(r), B.CreateAnd(B.CreateNot(isnan(x)), B.CreateNot(isnan(y))));
  llvm::Value* yzero = B.CreateAnd(divide, B.CreateFCmpOEQ(y, zero));
  llvm::Value* by_zero = B.CreateAnd(yzero, B.CreateAnd(isfinite(x), B.CreateFCmpUNE(x, zero)));
  llvm::Value* pole = B.CreateAnd(power, B.CreateAnd(fin, B.CreateAnd(B.CreateFCmpOEQ(x, zero), B.CreateFCmpOLT(y, zero))));
  by_zero = B.CreateOr(by_zero, pole);
  llvm::Value* overflow = B.CreateAnd(B.CreateAnd(inf, fin), B.CreateNot(B.CreateOr(yzero, pole)));
  return B.CreateOr(B.CreateZExt(by_zero, i8), B.CreateOr(B.CreateShl(B.CreateZExt(overflow, i8), 1),
                                                         B.CreateShl(B.CreateZExt(invalid, i8), 2)));
}

// Records `kinds` at the site f's trailing parameters name, and returns.
void record_and_return(llvm::IRBuilder<>& B, llvm::Function* f, llvm::Value* kinds) {
  const unsigned k = f->arg_size() - 6;
  B.CreateCall(warn_record_function(*f->getParent()), {kinds, f->getArg(k), f->getArg(k + 1), f->getArg(k + 2),
                                                      f->getArg(k + 3), f->getArg(k + 4), f->getArg(k + 5)});
  B.CreateRetVoid();
}

}  // namespace

llvm::Function* fp_warn_function(llvm::Module& m) {
  if (auto* f = m.getFunction("stagepy.fp_warn")) return f;
  llvm::LLVMContext& C = m.getContext();
  auto* d = llvm::Type::getDoubleTy(C);
  auto* i8 = llvm::Type::getInt8Ty(C);
  llvm::Function* f = declare_site_function(m, "stagepy.fp_warn", {d, d, d, i8});
  llvm::IRBuilder<> B(llvm::BasicBlock::Create(C, "entry", f));
  llvm::Value* op = f->getArg(3);
  llvm::Value* kinds = fp_kinds(B, f->getArg(0), f->getArg(1), f->getArg(2),
                                B.CreateICmpEQ(op, llvm::ConstantInt::get(i8, kFpWarnDivide)),
                                B.CreateICmpEQ(op, llvm::ConstantInt::get(i8, kFpWarnPower)));
  record_and_return(B, f, kinds);
  return f;
}

llvm::Function* complex_warn_function(llvm::Module& m) {
  if (auto* f = m.getFunction("stagepy.complex_warn")) return f;
  llvm::LLVMContext& C = m.getContext();
  auto* d = llvm::Type::getDoubleTy(C);
  auto* i8 = llvm::Type::getInt8Ty(C);
  llvm::Function* f = declare_site_function(m, "stagepy.complex_warn", {i8, i8, d, d, d, d});
  llvm::IRBuilder<> B(llvm::BasicBlock::Create(C, "entry", f));
  llvm::Value *op = f->getArg(0), *single = B.CreateICmpNE(f->getArg(1), llvm::ConstantInt::get(i8, 0));
  llvm::Value *ar = f->getArg(2), *ai = f->getArg(3), *br = f->getArg(4), *bi = f->getArg(5);
  llvm::Value* no = B.getFalse();
  // Each part's operation as the kernel computed it: on doubles, rounded to float32 for
  // a complex64 result (exact operands, so that is the float32 operation's result).
  auto round = [&](llvm::Value* v) {
    return B.CreateSelect(single, B.CreateFPExt(B.CreateFPTrunc(v, B.getFloatTy()), d), v);
  };
  llvm::Value* kinds = B.getInt8(0);
  auto part = [&](llvm::Value* r, llvm::Value* x, llvm::Value* y) {
    kinds = B.CreateOr(kinds, fp_kinds(B, x, y, r, no, no));
    return r;
  };
  auto add = [&](llvm::Value* x, llvm::Value* y) { return part(round(B.CreateFAdd(x, y)), x, y); };
  auto sub = [&](llvm::Value* x, llvm::Value* y) { return part(round(B.CreateFSub(x, y)), x, y); };
  auto mul = [&](llvm::Value* x, llvm::Value* y) { return part(round(B.CreateFMul(x, y)), x, y); };
  auto div = [&](llvm::Value* x, llvm::Value* y) {
    llvm::Value* r = round(B.CreateFDiv(x, y));
    kinds = B.CreateOr(kinds, fp_kinds(B, x, y, r, B.getTrue(), no));
    return r;
  };
  llvm::BasicBlock* plus = llvm::BasicBlock::Create(C, "add", f);
  llvm::BasicBlock* minus = llvm::BasicBlock::Create(C, "subtract", f);
  llvm::BasicBlock* times = llvm::BasicBlock::Create(C, "multiply", f);
  llvm::BasicBlock* divide = llvm::BasicBlock::Create(C, "divide", f);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(C, "record", f);
  auto* sw = B.CreateSwitch(op, times, 3);
  sw->addCase(B.getInt8(kComplexWarnAdd), plus);
  sw->addCase(B.getInt8(kComplexWarnSubtract), minus);
  sw->addCase(B.getInt8(kComplexWarnDivide), divide);
  B.SetInsertPoint(done);
  llvm::PHINode* got = B.CreatePHI(i8, 4);
  auto branch = [&](llvm::BasicBlock* bb, auto&& compute) {
    B.SetInsertPoint(bb);
    kinds = B.getInt8(0);
    compute();
    got->addIncoming(kinds, B.GetInsertBlock());
    B.CreateBr(done);
  };
  branch(plus, [&] { add(ar, br), add(ai, bi); });
  branch(minus, [&] { sub(ar, br), sub(ai, bi); });
  // NumPy's (and CPython's) product: (ar*br - ai*bi) + (ar*bi + ai*br)j.
  branch(times, [&] { sub(mul(ar, br), mul(ai, bi)), add(mul(ar, bi), mul(ai, br)); });
  // NumPy's quotient (loops.c.src), each of its three ways computed and the kinds of the
  // one NumPy takes kept: |br| >= |bi| scales by bi / br, else by br / bi; a zero divisor
  // divides each part by |br|. The comparison |br| >= |bi| itself raises "invalid" where
  // a part of the divisor is NaN (an ordered comparison; ==, the zero test, does not).
  branch(divide, [&] {
    auto fabs = [&](llvm::Value* v) { return B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, v); };
    llvm::Value *abr = fabs(br), *abi = fabs(bi);
    llvm::Value* c1 = B.CreateFCmpOGE(abr, abi);
    llvm::Value* zero = B.CreateAnd(B.CreateFCmpOEQ(abr, llvm::ConstantFP::get(d, 0.0)),
                                    B.CreateFCmpOEQ(abi, llvm::ConstantFP::get(d, 0.0)));
    llvm::Value* one = llvm::ConstantFP::get(d, 1.0);
    auto kinds_of = [&](auto&& compute) {
      kinds = B.getInt8(0);
      compute();
      return kinds;
    };
    llvm::Value* k_zero = kinds_of([&] { div(ar, abr), div(ai, abr); });
    llvm::Value* k1 = kinds_of([&] {
      llvm::Value* rat = div(bi, br);
      llvm::Value* scl = div(one, add(br, mul(bi, rat)));
      mul(add(ar, mul(ai, rat)), scl), mul(sub(ai, mul(ar, rat)), scl);
    });
    llvm::Value* k2 = kinds_of([&] {
      llvm::Value* rat = div(br, bi);
      llvm::Value* scl = div(one, add(bi, mul(br, rat)));
      mul(add(mul(ar, rat), ai), scl), mul(sub(mul(ai, rat), ar), scl);
    });
    llvm::Value* unordered = B.CreateFCmpUNO(abr, abi);
    kinds = B.CreateOr(B.CreateSelect(c1, B.CreateSelect(zero, k_zero, k1), k2),
                       B.CreateShl(B.CreateZExt(unordered, i8), 2));
  });
  B.SetInsertPoint(done);
  record_and_return(B, f, got);
  return f;
}

}  // namespace stagepy::backends::cpu
