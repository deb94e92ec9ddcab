// The GPU backend's pieces that need no device: PTX emission keeps floating point exact
// (no contraction into fma), and the driver loader answers without a GPU.
#include <gtest/gtest.h>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "backends/gpu/cuda_driver.h"
#include "backends/gpu/ptx.h"

using namespace stagepy;

namespace {
// out[0] = a * b + c, as codegen writes it (separate fmul and fadd, no fast-math flags).
std::unique_ptr<llvm::Module> mul_add_kernel(llvm::LLVMContext& C) {
  auto M = std::make_unique<llvm::Module>("t", C);
  M->setTargetTriple(backends::gpu::nvptx_triple());
  M->setDataLayout(backends::gpu::nvptx_data_layout());
  llvm::IRBuilder<> B(C);
  auto* ptr = llvm::PointerType::get(C, 0);
  auto* fty = llvm::FunctionType::get(B.getVoidTy(), {ptr, B.getDoubleTy(), B.getDoubleTy(), B.getDoubleTy()}, false);
  auto* f = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, "mul_add", M.get());
  B.SetInsertPoint(llvm::BasicBlock::Create(C, "entry", f));
  auto a = f->arg_begin();
  llvm::Value* out = &*a++;
  llvm::Value* x = &*a++;
  llvm::Value* y = &*a++;
  llvm::Value* z = &*a++;
  B.CreateStore(B.CreateFAdd(B.CreateFMul(x, y), z), out);
  B.CreateRetVoid();
  llvm::Metadata* md[] = {llvm::ValueAsMetadata::get(f), llvm::MDString::get(C, "kernel"),
                          llvm::ValueAsMetadata::get(B.getInt32(1))};
  M->getOrInsertNamedMetadata("nvvm.annotations")->addOperand(llvm::MDNode::get(C, md));
  return M;
}
}  // namespace

TEST(Ptx, MultiplyAddStaysTwoRoundedOperations) {
  llvm::LLVMContext C;
  auto r = backends::gpu::compile_ptx(mul_add_kernel(C), "sm_90");
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_NE(r.ptx.find(".entry mul_add"), std::string::npos) << r.ptx;
  EXPECT_NE(r.ptx.find("mul.rn.f64"), std::string::npos) << r.ptx;
  EXPECT_NE(r.ptx.find("add.rn.f64"), std::string::npos) << r.ptx;
  EXPECT_EQ(r.ptx.find("fma"), std::string::npos) << r.ptx;
  EXPECT_NE(r.ptx.find(".target sm_90"), std::string::npos) << r.ptx;
}

TEST(Ptx, NewerDevicesGetTheNewestArchitectureThisLlvmKnows) {
  llvm::LLVMContext C;
  auto r = backends::gpu::compile_ptx(mul_add_kernel(C), "sm_120");
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_NE(r.ptx.find(".target sm_90"), std::string::npos);
}

TEST(CudaDriver, NoDriverIsAnAnswerNotAnError) {
  std::string why;
  bool ok = backends::gpu::available(&why);
  if (!ok) EXPECT_FALSE(why.empty());
  else EXPECT_TRUE(why.empty());
}
