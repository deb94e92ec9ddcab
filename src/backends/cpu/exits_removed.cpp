// See exits_removed.h.
#include "backends/cpu/exits_removed.h"

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/PassManager.h>
#include <llvm/Passes/PassBuilder.h>

namespace stagepy::backends::cpu {
namespace {

// The nonzero constants `v` may be, through phis and selects.
void constant_statuses(llvm::Value* v, std::set<int>& out, std::set<llvm::Value*>& seen) {
  if (!v || !seen.insert(v).second) return;
  if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(v)) {
    if (!c->isZero()) out.insert((int)c->getSExtValue());
  } else if (auto* phi = llvm::dyn_cast<llvm::PHINode>(v)) {
    for (llvm::Value* in : phi->incoming_values()) constant_statuses(in, out, seen);
  } else if (auto* sel = llvm::dyn_cast<llvm::SelectInst>(v)) {
    constant_statuses(sel->getTrueValue(), out, seen);
    constant_statuses(sel->getFalseValue(), out, seen);
  }
}

}  // namespace

bool exits_removed(llvm::Function& body, std::set<int>* statuses) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb;
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cam, mam);
  llvm::FunctionPassManager fpm =
      pb.buildFunctionSimplificationPipeline(llvm::OptimizationLevel::O2, llvm::ThinOrFullLTOPhase::None);
  fpm.run(body, fam);
  bool removed = true;
  std::set<llvm::Value*> seen;
  for (auto& bb : body)
    if (auto* ret = llvm::dyn_cast<llvm::ReturnInst>(bb.getTerminator())) {
      auto* c = llvm::dyn_cast_or_null<llvm::ConstantInt>(ret->getReturnValue());
      if (c && c->isZero()) continue;
      removed = false;
      if (statuses) constant_statuses(ret->getReturnValue(), *statuses, seen);
    }
  return removed;
}

}  // namespace stagepy::backends::cpu
