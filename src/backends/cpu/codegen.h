// codegen: in, a typed nest (specialize::infer_types) and the types of its live-in
// values; out, an LLVM module holding one kernel function with the calling convention of
// backends/kernel_abi.h, or the reason it cannot be built.
//
// Every operation keeps CPython's semantics for its types: Python ints are 64-bit with
// overflow checks, NumPy integers wrap, division and indexing are checked. Wherever
// CPython would raise or warn, the kernel stops before the statement (writing its state
// back) so that CPython executes that statement itself.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backends/kernel_abi.h"
#include "specialize/facts.h"
#include "specialize/oracle.h"
#include "specialize/plan_parallel.h"
#include "specialize/type_infer.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace stagepy::backends::gpu {
struct GpuModule;
struct GpuLoop;
}  // namespace stagepy::backends::gpu

namespace stagepy::backends::cpu {

struct CodegenOptions {
  FpMode fp = FpMode::Exact;
  std::function<int(int)> line_of;  // bytecode offset -> source line (warning sites)
  const specialize::ParallelPlan* plan = nullptr;  // loops to run on several threads
  // Live-in array variables that share memory (from the guard key).
  std::vector<std::pair<int, int>> overlapping_vars;
  // Also give parallel loops without reductions a GPU version (backends/gpu).
  bool gpu = false;
};

struct Codegen {
  bool ok = false;
  std::vector<int> parallel_loops;  // loops outlined to run on several threads
  std::map<int, std::string> refused_loops;   // loops planned parallel whose body could stop for CPython
  std::map<int, int> interleaved_loops;  // loops whose iterations run interleaved: their lanes
  std::vector<int> interchanged_loops;   // loops run with their inner loop outside (plan_interchange.h)
  std::string reason;
  std::unique_ptr<llvm::Module> module;
  std::string function;  // the kernel's symbol
  KernelLayout layout;
  // The GPU versions of parallel loops (options.gpu): an NVPTX module for ptx.h, its run-time
  // record, one GpuLoop per loop (they live for the process: the kernel refers to them).
  std::unique_ptr<llvm::Module> gpu_module;
  gpu::GpuModule* gpu_info = nullptr;
  std::vector<gpu::GpuLoop*> gpu_loops;
  std::map<int, std::string> gpu_refused;  // loop -> why it has no GPU version
};

Codegen codegen(const specialize::TypedNest& typed, const std::vector<TypeRef>& entry,
                const specialize::Oracle& oracle, const specialize::FactSet& facts, const CodegenOptions& options,
                llvm::LLVMContext& ctx, const std::string& name);

}  // namespace stagepy::backends::cpu
