// See optimize.h.
#include "backends/optimize.h"

#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/raw_ostream.h>

#include <mutex>
#include <llvm/Target/TargetMachine.h>

#include "support/debug.h"

namespace stagepy::backends {

namespace {
// The SLP vectorizer packs two scalar operations into a vector where its cost model says
// that gains anything at all, even where the packing and unpacking then sit on a loop's
// recurrence: a Mandelbrot pixel's `zr, zi = zr*zr - zi*zi + cr, 2*zr*zi + ci` became a
// 2-wide add between inserts and extracts, 1.5x slower than scalar code. Asking for a gain
// of more than 1 leaves such pairs scalar; the lanes of interleaved iterations
// (plan_interleave.h) gain far more and are still vectorized.
void tune_slp() {
  static std::once_flag once;
  std::call_once(once, [] {
    auto& options = llvm::cl::getRegisteredOptions();
    auto it = options.find("slp-threshold");
    if (it != options.end()) it->second->addOccurrence(0, "slp-threshold", "1");
  });
}
}  // namespace

void optimize_o3(llvm::Module& module, llvm::TargetMachine* tm, const std::string& title) {
  tune_slp();
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
