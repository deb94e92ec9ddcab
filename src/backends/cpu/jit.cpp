// See jit.h.
#include "backends/cpu/jit.h"

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>

#include <llvm/Support/raw_ostream.h>

#include <chrono>
#include <mutex>

#include "backends/optimize.h"
#include "support/debug.h"

namespace stagepy::backends::cpu {
namespace {

struct Host {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::unique_ptr<llvm::TargetMachine> tm;
  std::string error;
  std::string description;
};

Host& host() {
  static Host* h = [] {
    auto* h = new Host();  // lives for the process: kernels stay callable until exit
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!jtmb) {
      h->error = llvm::toString(jtmb.takeError());
      return h;
    }
    jtmb->setCodeGenOptLevel(
#if LLVM_VERSION_MAJOR >= 18
        llvm::CodeGenOptLevel::Aggressive
#else
        llvm::CodeGenOpt::Aggressive
#endif
    );
    auto tm = jtmb->createTargetMachine();
    if (!tm) {
      h->error = llvm::toString(tm.takeError());
      return h;
    }
    h->tm = std::move(*tm);
    h->description = h->tm->getTargetTriple().str() + " " + h->tm->getTargetCPU().str();
    auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(*jtmb)).create();
    if (!jit) {
      h->error = llvm::toString(jit.takeError());
      return h;
    }
    h->jit = std::move(*jit);
    auto gen = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
        h->jit->getDataLayout().getGlobalPrefix());
    if (!gen) {
      h->error = llvm::toString(gen.takeError());
      h->jit.reset();
      return h;
    }
    h->jit->getMainJITDylib().addGenerator(std::move(*gen));
    return h;
  }();
  return *h;
}

std::mutex jit_mutex;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

std::string describe_host() { return host().description; }

void* jit_compile(std::unique_ptr<llvm::LLVMContext> ctx, std::unique_ptr<llvm::Module> module,
                  const std::string& function, std::string* error, JitTimes* times) {
  std::lock_guard<std::mutex> lock(jit_mutex);
  Host& h = host();
  if (!h.jit) {
    *error = "LLVM JIT unavailable: " + h.error;
    return nullptr;
  }
  // Symbols must be unique in the one process-wide JIT dylib: make them so here.
  static unsigned long long serial = 0;
  llvm::Function* fn = module->getFunction(function);
  if (!fn) {
    *error = "no function " + function + " in the module";
    return nullptr;
  }
  const std::string symbol = function + ".k" + std::to_string(++serial);
  fn->setName(symbol);
  auto t0 = std::chrono::steady_clock::now();
  module->setDataLayout(h.tm->createDataLayout());
  module->setTargetTriple(h.tm->getTargetTriple().str());
  optimize_o3(*module, h.tm.get(), "optimized LLVM IR: " + function);
  if (times) times->optimize_s = seconds_since(t0);
  auto t1 = std::chrono::steady_clock::now();
  llvm::orc::ThreadSafeModule tsm(std::move(module), std::move(ctx));
  if (auto err = h.jit->addIRModule(std::move(tsm))) {
    *error = llvm::toString(std::move(err));
    return nullptr;
  }
  auto sym = h.jit->lookup(symbol);
  if (!sym) {
    *error = llvm::toString(sym.takeError());
    return nullptr;
  }
  if (times) times->codegen_s = seconds_since(t1);
  return sym->toPtr<void*>();
}

}  // namespace stagepy::backends::cpu
