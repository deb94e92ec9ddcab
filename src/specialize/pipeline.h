// The whole pipeline from a lifted nest to a callable kernel, one screenful (in the
// manner of Halide's Lower.cpp): each pass is a free function in its own file, and with
// STAGEPY_DEBUG set the IR is printed after each.
//
//   analysis (first sight of a nest):
//     bytecode -> lift_nest (cfg + structuring) -> bind_module_attributes
//              -> build_poly_model -> derive_conditions (isl: parameter sets)   [first_sight]
//     (again, for calls where variables hold ragged lists: their rows' lengths no parameter)
//   specialize (each call, from the run-time values):
//     evaluate_conditions (parameter values in, facts out; part of the guard key)
//   dispatch (a function seen in a variable): lift_helper (its bytecode -> one expression)
//   specialize (once per guard key):
//     inline_helpers (calls of the functions this call's variables hold -> their bodies)
//     infer_types (run-time types in, typed IR out)
//     lower_complex, prove_domains (typed IR -> typed IR)
//     prove_row_bounds (typed IR + facts -> facts: `R[j]` under `for j in range(len(R))`)
//     plan_parallel (typed IR + facts -> which loops run on threads, how scalars are shared)
//     plan_interleave, plan_interchange (typed IR + plan -> plan)
//   backends:
//     codegen (typed IR + facts + plan -> LLVM IR) -> jit_compile (O3 + ORC)  [compile_kernel]
//     with a GPU: codegen also writes each parallel loop's body into an NVPTX module
//              -> compile_ptx (O3 + NVPTX) ; the driver loads it at the first launch
#pragma once
#include <memory>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "analysis/derive_conditions.h"
#include "backends/cpu/jit.h"
#include "backends/kernel_abi.h"
#include "ir/ir.h"
#include "specialize/facts.h"
#include "specialize/inline_helpers.h"
#include "specialize/oracle.h"
#include "specialize/plan_parallel.h"
#include "specialize/type_infer.h"

namespace stagepy::backends::gpu {
struct GpuLoop;
}  // namespace stagepy::backends::gpu

namespace stagepy::specialize {

struct Kernel {
  bool ok = false;
  std::string reason;  // why not, in a user's words
  bool needs_hoist = false;  // not ok only because a helper that loops needs its Temps
  int reason_line = -1;
  int retag = -1;  // not ok until variable `retag`'s list is read tagged (TypedNest::retag)
  uint8_t retag_tags = kTagsNp;  // with these bits (Type::tags)
  int empty_var = -1;  // not ok until `empty_var`'s empty list at entry holds `empty_dtype`s (TypedNest)
  DType empty_dtype = DType::Int64;
  void* fn = nullptr;       // the kernel's entry, while `code` keeps it loaded
  std::shared_ptr<void> code;
  KernelLayout layout;
  TypedNest typed;
  double infer_s = 0, codegen_s = 0, optimize_s = 0, jit_s = 0;
  bool cached = false;  // its object code came from the kernel cache
  std::shared_ptr<const backends::cpu::TierUp> tier_up;  // its parallel bodies' background compile, if any
  std::string target = "cpu";
  ParallelPlan plan;
  std::vector<int> parallel_loops;  // loops that run on several threads (when their checks pass)
  std::map<int, std::string> refused_loops;   // planned parallel, but their body could stop for CPython
  std::map<int, int> interleaved_loops;  // loops run a few iterations at a time (plan_interleave.h): lanes
  std::vector<int> interchanged_loops;   // loops run with their inner loop outside (plan_interchange.h)
  // GPU versions (KernelRequest::gpu): one record per loop that has one, and why others have none.
  std::vector<backends::gpu::GpuLoop*> gpu_loops;
  std::map<int, std::string> gpu_refused;
  double ptx_s = 0;
};

// Everything one specialization depends on.
struct KernelRequest {
  const ir::Nest* nest = nullptr;
  std::vector<TypeRef> entry;                          // per variable, at entry
  const Oracle* oracle = nullptr;
  const analysis::NestConditions* conds = nullptr;
  FactSet facts;
  FpMode fp = FpMode::Exact;                           // NumPy's warnings (backends/kernel_abi.h)
  std::vector<std::pair<int, int>> overlapping_vars;   // live-in arrays that share memory
  int threads = 1;
  bool reassociate = true;                             // float reductions may be split
  std::function<int(int)> line_of;
  std::string name;
  std::map<int, Helper> helpers;                       // variable -> the function it holds
  // `nest` with `helpers` inlined (Temps, reads and operations numbered: inline_helpers.h),
  // which `conds` is about; null where `conds` is about `nest` itself (no helpers).
  const ir::Nest* inlined = nullptr;
  bool gpu = false;                                    // give parallel loops GPU versions too
  std::vector<uint8_t> tag_lists;                      // NestState::tag_lists (made_lists.h)
  std::vector<int> empty_lists;  // variables whose list grows, empty at entry, typed as ints for want of better
};

// The static stage, once per nest: the polyhedral model and the conditions under which
// indices stay in bounds, int operations in 64 bits, and loops free of carried dependences.
// `ragged`: build_poly_model's (the variables that may hold ragged lists at this call).
analysis::NestConditions first_sight(const ir::Nest& nest, const std::string& name, const std::set<int>& ragged = {});

Kernel compile_kernel(const KernelRequest& rq);

}  // namespace stagepy::specialize
