// The optimization both backends run: in, an LLVM module with its target's triple and data
// layout set, and that target's machine (its own passes join the pipeline: NVPTX's address
// space inference, X86's cost model for the vectorizer); out, the module after LLVM's O3
// pipeline. With STAGEPY_DEBUG=3 the result is printed under `title`.
#pragma once
#include <string>

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace stagepy::backends {

void optimize_o3(llvm::Module& module, llvm::TargetMachine* tm, const std::string& title);

// The module as LLVM IR text (debug dumps).
std::string module_text(const llvm::Module& module);

}  // namespace stagepy::backends
