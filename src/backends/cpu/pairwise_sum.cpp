// See pairwise_sum.h.
#include "backends/cpu/pairwise_sum.h"

#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <string>
#include <utility>
#include <vector>

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
  // for (i = from; i < to; i += step) accs[j] += a[i + j] for each j; returns the sums and
  // where i stopped.
  auto sums = [&](llvm::Value* from, llvm::Value* to, int64_t step, std::vector<llvm::Value*> accs0,
                  const char* name) -> std::pair<std::vector<llvm::Value*>, llvm::Value*> {
    llvm::BasicBlock* pre = B.GetInsertBlock();
    llvm::BasicBlock* head = llvm::BasicBlock::Create(C, std::string(name) + ".head", f);
    llvm::BasicBlock* body = llvm::BasicBlock::Create(C, std::string(name) + ".body", f);
    llvm::BasicBlock* done = llvm::BasicBlock::Create(C, std::string(name) + ".done", f);
    B.CreateBr(head);
    B.SetInsertPoint(head);
    auto* i = B.CreatePHI(i64, 2);
    i->addIncoming(from, pre);
    std::vector<llvm::PHINode*> accs;
    for (auto* a0 : accs0) {
      accs.push_back(B.CreatePHI(ft, 2));
      accs.back()->addIncoming(a0, pre);
    }
    B.CreateCondBr(B.CreateICmpSLT(i, to), body, done);
    B.SetInsertPoint(body);
    for (size_t j = 0; j < accs.size(); j++)
      accs[j]->addIncoming(B.CreateFAdd(accs[j], at(B.CreateAdd(i, B.getInt64((int64_t)j)))), body);
    i->addIncoming(B.CreateAdd(i, B.getInt64(step)), body);
    B.CreateBr(head);
    B.SetInsertPoint(done);
    return {std::vector<llvm::Value*>(accs.begin(), accs.end()), i};
  };
  auto run = [&](llvm::Value* from, llvm::Value* to, llvm::Value* acc0) { return sums(from, to, 1, {acc0}, "run").first[0]; };
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
    std::vector<llvm::Value*> r0;
    for (int j = 0; j < 8; j++) r0.push_back(at(B.getInt64(j)));
    llvm::Value* end8 = B.CreateSub(n, B.CreateSRem(n, B.getInt64(8)));
    auto [r, i] = sums(B.getInt64(8), end8, 8, r0, "eight");
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
