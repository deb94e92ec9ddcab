// See ptx.h.
#include "backends/gpu/ptx.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/TargetParser/Triple.h>
#include <llvm/MC/TargetRegistry.h>

#include <chrono>
#include <map>
#include <mutex>

#include "backends/optimize.h"
#include "support/debug.h"

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

namespace stagepy::backends::gpu {
namespace {

std::mutex g_mu;

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The newest architecture this LLVM emits (PTX is forward compatible: the driver
// compiles it for newer devices), and the PTX ISA version it needs.
std::string clamp_arch(const std::string& arch) {
  int sm = 70;
  if (arch.size() > 3) sm = std::atoi(arch.c_str() + 3);
  if (sm >= 90) return "sm_90";
  if (sm >= 80) return "sm_80";
  if (sm >= 75) return "sm_75";
  return "sm_70";
}

std::string ptx_features(const std::string& arch) {
  if (arch == "sm_90") return "+ptx78";
  if (arch == "sm_80") return "+ptx70";
  if (arch == "sm_75") return "+ptx63";
  return "+ptx60";
}

llvm::TargetMachine* machine(const std::string& arch, std::string* error) {
  static std::map<std::string, std::unique_ptr<llvm::TargetMachine>> machines;  // under g_mu
  static bool initialized = [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    return true;
  }();
  (void)initialized;
  auto it = machines.find(arch);
  if (it != machines.end()) return it->second.get();
  std::string err;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(nvptx_triple(), err);
  if (!target) {
    *error = "no NVPTX target in this LLVM: " + err;
    return nullptr;
  }
  llvm::TargetOptions opts;  // AllowFPOpFusion stays Standard: no contraction into fma
  auto* tm = target->createTargetMachine(nvptx_triple(), arch, ptx_features(arch), opts, std::nullopt, std::nullopt,
#if LLVM_VERSION_MAJOR >= 18
                                         llvm::CodeGenOptLevel::Aggressive
#else
                                         llvm::CodeGenOpt::Aggressive
#endif
  );
  if (!tm) {
    *error = "could not create the NVPTX target machine for " + arch;
    return nullptr;
  }
  machines[arch].reset(tm);
  return tm;
}

}  // namespace

const char* nvptx_triple() { return "nvptx64-nvidia-cuda"; }

std::string nvptx_data_layout() {
  std::lock_guard<std::mutex> g(g_mu);
  std::string err;
  llvm::TargetMachine* tm = machine("sm_70", &err);
  if (!tm) return "e-i64:64-i128:128-v16:16-v32:32-n16:32:64";
  return tm->createDataLayout().getStringRepresentation();
}

PtxResult compile_ptx(std::unique_ptr<llvm::Module> module, const std::string& arch_in) {
  PtxResult out;
  std::lock_guard<std::mutex> g(g_mu);
  const std::string arch = clamp_arch(arch_in);
  llvm::TargetMachine* tm = machine(arch, &out.error);
  if (!tm) return out;
  module->setTargetTriple(nvptx_triple());
  module->setDataLayout(tm->createDataLayout());
  {
    std::string err;
    llvm::raw_string_ostream os(err);
    if (llvm::verifyModule(*module, &os)) {
      os.flush();
      out.error = "internal error: invalid GPU module: " + err.substr(0, 400);
      return out;
    }
  }
  // The functions the CPU keeps out of line (the warning sites' cold paths) are inlined
  // here: each takes the addresses of its site's flags, which then live in local memory
  // (72-168 bytes per thread, written at every thread's start) instead of registers.
  for (llvm::Function& f : *module)
    if (!f.isDeclaration() && f.hasInternalLinkage() && f.hasFnAttribute(llvm::Attribute::NoInline)) {
      f.removeFnAttr(llvm::Attribute::NoInline);
      f.addFnAttr(llvm::Attribute::AlwaysInline);
    }
  auto t0 = std::chrono::steady_clock::now();
  optimize_o3(*module, tm, "optimized GPU LLVM IR");
  out.optimize_s = since(t0);
  auto t1 = std::chrono::steady_clock::now();
  llvm::SmallString<0> buf;
  {
    llvm::raw_svector_ostream os(buf);
    llvm::legacy::PassManager pm;
    if (tm->addPassesToEmitFile(pm, os, nullptr,
#if LLVM_VERSION_MAJOR >= 18
                                llvm::CodeGenFileType::AssemblyFile
#else
                                llvm::CGFT_AssemblyFile
#endif
                                )) {
      out.error = "the NVPTX backend cannot emit assembly";
      return out;
    }
    pm.run(*module);
  }
  out.emit_s = since(t1);
  out.ptx.assign(buf.begin(), buf.end());
  if (debug_level() > 1) debug_dump("PTX (" + arch + ")", out.ptx);
  out.ok = true;
  return out;
}

PtxCompile::PtxCompile(std::unique_ptr<llvm::Module> module, std::string arch, std::function<void(PtxResult)> done) {
  auto bitcode = std::make_shared<llvm::SmallVector<char, 0>>();
  {
    llvm::raw_svector_ostream os(*bitcode);
    llvm::WriteBitcodeToFile(*module, os);
  }
  module.reset();  // (the caller's context may go on to other work)
  t_ = std::thread([bitcode, arch = std::move(arch), done = std::move(done)] {
    llvm::LLVMContext ctx;
    auto parsed = llvm::parseBitcodeFile(llvm::MemoryBufferRef(llvm::StringRef(bitcode->data(), bitcode->size()), "stagepy.gpu"), ctx);
    PtxResult r;
    if (!parsed) {
      r.error = "internal error: the GPU module did not read back: " + llvm::toString(parsed.takeError());
    } else {
      r = compile_ptx(std::move(*parsed), arch);
    }
    done(std::move(r));
  });
}

}  // namespace stagepy::backends::gpu
