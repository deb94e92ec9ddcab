// See optimize.h.
#include "backends/optimize.h"

#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include "support/debug.h"

namespace stagepy::backends {

void optimize_o3(llvm::Module& module, llvm::TargetMachine* tm, const std::string& title) {
  {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    // LLVM's own default leaves the SLP vectorizer out (clang turns it on at -O2 and up):
    // it is what makes vectors of straight-line lanes (plan_interleave.h).
    llvm::PipelineTuningOptions pto;
    pto.SLPVectorization = true;
    llvm::PassBuilder pb(tm, pto);
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
    mpm.run(module, mam);
  }
  if (debug_level() > 2) debug_dump(title, module_text(module));
}

std::string module_text(const llvm::Module& module) {
  std::string s;
  llvm::raw_string_ostream os(s);
  module.print(os, nullptr);
  return os.str();
}

}  // namespace stagepy::backends
