// See pairwise_sum.h.
#include "backends/cpu/pairwise_sum.h"

#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

namespace stagepy::backends::cpu {

llvm::Function* pairwise_sum_function(llvm::Module& m, bool f32) {
  const char* name = f32 ? "stagepy.pairwise_sum.f32" : "stagepy.pairwise_sum.f64";
  if (auto* f = m.getFunction(name)) return f;
  llvm::LLVMContext& C = m.getContext();
  llvm::Type* ft = f32 ? llvm::Type::getFloatTy(C) : llvm::Type::getDoubleTy(C);
  auto* i64 = llvm::Type::getInt64Ty(C);
  auto* p = llvm::PointerType::getUnqual(C);
  auto* fty = llvm::FunctionType::get(ft, {p, i64, i64}, false);
  auto* f = llvm::Function::Create(fty, llvm::Function::InternalLinkage, name, m);
  f->addFnAttr(llvm::Attribute::NoUnwind);
  llvm::Value* a = f->getArg(0);
  llvm::Value* n = f->getArg(1);
  llvm::Value* stride = f->getArg(2);
  const unsigned align = f32 ? 4 : 8;
  llvm::IRBuilder<> B(llvm::BasicBlock::Create(C, "entry", f));
  auto at = [&](llvm::Value* i) {
    return B.CreateAlignedLoad(ft, B.CreateGEP(B.getInt8Ty(), a, B.CreateMul(i, stride)), llvm::Align(align));
  };
  // for (i = from; i < to; i++) acc += a[i]; returns the sum.
  auto run = [&](llvm::Value* from, llvm::Value* to, llvm::Value* acc0) {
    llvm::BasicBlock* pre = B.GetInsertBlock();
    llvm::BasicBlock* head = llvm::BasicBlock::Create(C, "run.head", f);
    llvm::BasicBlock* body = llvm::BasicBlock::Create(C, "run.body", f);
    llvm::BasicBlock* done = llvm::BasicBlock::Create(C, "run.done", f);
    B.CreateBr(head);
    B.SetInsertPoint(head);
    auto* i = B.CreatePHI(i64, 2);
    auto* acc = B.CreatePHI(ft, 2);
    i->addIncoming(from, pre);
    acc->addIncoming(acc0, pre);
    B.CreateCondBr(B.CreateICmpSLT(i, to), body, done);
    B.SetInsertPoint(body);
    acc->addIncoming(B.CreateFAdd(acc, at(i)), body);
    i->addIncoming(B.CreateAdd(i, B.getInt64(1)), body);
    B.CreateBr(head);
    B.SetInsertPoint(done);
    return acc;
  };
  llvm::BasicBlock* small = llvm::BasicBlock::Create(C, "small", f);
  llvm::BasicBlock* not_small = llvm::BasicBlock::Create(C, "not_small", f);
  llvm::BasicBlock* block = llvm::BasicBlock::Create(C, "block", f);
  llvm::BasicBlock* halves = llvm::BasicBlock::Create(C, "halves", f);
  B.CreateCondBr(B.CreateICmpSLT(n, B.getInt64(8)), small, not_small);
  // n < 8: one after the other.
  B.SetInsertPoint(small);
  B.CreateRet(run(B.getInt64(0), n, llvm::ConstantFP::getNegativeZero(ft)));
  B.SetInsertPoint(not_small);
  B.CreateCondBr(B.CreateICmpSLE(n, B.getInt64(128)), block, halves);
  // 8 <= n <= 128: eight running sums.
  B.SetInsertPoint(block);
  {
    llvm::Value* r0[8];
    for (int j = 0; j < 8; j++) r0[j] = at(B.getInt64(j));
    llvm::Value* end8 = B.CreateSub(n, B.CreateSRem(n, B.getInt64(8)));
    llvm::BasicBlock* pre = B.GetInsertBlock();
    llvm::BasicBlock* head = llvm::BasicBlock::Create(C, "eight.head", f);
    llvm::BasicBlock* body = llvm::BasicBlock::Create(C, "eight.body", f);
    llvm::BasicBlock* done = llvm::BasicBlock::Create(C, "eight.done", f);
    B.CreateBr(head);
    B.SetInsertPoint(head);
    auto* i = B.CreatePHI(i64, 2);
    i->addIncoming(B.getInt64(8), pre);
    llvm::PHINode* r[8];
    for (int j = 0; j < 8; j++) {
      r[j] = B.CreatePHI(ft, 2);
      r[j]->addIncoming(r0[j], pre);
    }
    B.CreateCondBr(B.CreateICmpSLT(i, end8), body, done);
    B.SetInsertPoint(body);
    for (int j = 0; j < 8; j++) r[j]->addIncoming(B.CreateFAdd(r[j], at(B.CreateAdd(i, B.getInt64(j)))), body);
    i->addIncoming(B.CreateAdd(i, B.getInt64(8)), body);
    B.CreateBr(head);
    B.SetInsertPoint(done);
    llvm::Value* res = B.CreateFAdd(B.CreateFAdd(B.CreateFAdd(r[0], r[1]), B.CreateFAdd(r[2], r[3])),
                                    B.CreateFAdd(B.CreateFAdd(r[4], r[5]), B.CreateFAdd(r[6], r[7])));
    B.CreateRet(run(i, n, res));
  }
  // n > 128: two halves, the first a multiple of 8 long.
  B.SetInsertPoint(halves);
  {
    llvm::Value* n2 = B.CreateSDiv(n, B.getInt64(2));
    n2 = B.CreateSub(n2, B.CreateSRem(n2, B.getInt64(8)));
    llvm::Value* first = B.CreateCall(f, {a, n2, stride});
    llvm::Value* rest = B.CreateGEP(B.getInt8Ty(), a, B.CreateMul(n2, stride));
    llvm::Value* second = B.CreateCall(f, {rest, B.CreateSub(n, n2), stride});
    B.CreateRet(B.CreateFAdd(first, second));
  }
  return f;
}

}  // namespace stagepy::backends::cpu
