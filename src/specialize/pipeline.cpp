// See pipeline.h.
#include "specialize/pipeline.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <chrono>
#include <optional>

#include "backends/cpu/codegen.h"
#include "backends/cpu/jit.h"
#include "backends/optimize.h"
#include "backends/gpu/gpu_runtime.h"
#include "backends/gpu/ptx.h"
#include "analysis/poly_model.h"
#include "ir/printer.h"
#include "specialize/check_draw_order.h"
#include "specialize/lower_complex.h"
#include "specialize/made_lists.h"
#include "specialize/plan_interchange.h"
#include "specialize/plan_interleave.h"
#include "specialize/prove_domains.h"
#include "specialize/prove_row_bounds.h"
#include "support/debug.h"

namespace stagepy::specialize {
namespace {
constexpr size_t kMaxKernelInstructions = 30000;

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

analysis::NestConditions first_sight(const ir::Nest& nest, const std::string& name, const std::set<int>& ragged) {
  analysis::PolyModel model = analysis::build_poly_model(nest, ragged);
  if (debug_level() > 0) debug_dump("build_poly_model: " + name, analysis::to_string(model, nest));
  analysis::NestConditions conds = analysis::derive_conditions(model, nest);
  if (debug_level() > 0) debug_dump("derive_conditions: " + name, analysis::to_string(conds, nest));
  return conds;
}

namespace {
Kernel compile(const KernelRequest& rq, bool hoist, bool* hoisted) {
  Kernel k;
  const bool dbg = debug_level() > 0;
  const std::string& name = rq.name;

  auto t0 = std::chrono::steady_clock::now();
  InlineResult inlined;
  const ir::Nest* nest = rq.nest;
  if (hoist && rq.inlined) {
    // Inlined once for the static stage (dispatch.cpp). Without Temps (below), its element
    // reads keep no origin the facts are about.
    nest = rq.inlined;
    *hoisted = true;
  } else if (!rq.helpers.empty()) {
    inlined = inline_helpers(*rq.nest, rq.helpers, hoist, false, rq.inlined ? &rq.inlined->columns : nullptr);
    *hoisted = inlined.hoisted;
    if (!inlined.ok) {
      k.reason = inlined.reason;
      k.needs_hoist = inlined.needs_hoist;
      return k;
    }
    if (dbg) debug_dump("inline_helpers: " + name, ir::to_string(inlined.nest));
    nest = &inlined.nest;
  }
  // Variables that may hold lists the nest makes hold those they hold at entry the same way.
  const MadeListTypes made = made_lists(*nest, rq.entry, rq.tag_lists);
  if (made.retag >= 0) {
    k.reason = "passes lists of floats among variables, one of them holding np.float64s";
    k.retag = made.retag;
    return k;
  }
  const std::vector<TypeRef>& entry_held = made.entry;
  InferInput in;
  in.nest = nest;
  in.entry = entry_held;
  in.tagged_made = &made.tagged;
  in.overlapping = &rq.overlapping_vars;
  in.empty_lists = &rq.empty_lists;
  in.oracle = rq.oracle;
  in.line_of = rq.line_of;
  // The facts are about rq.nest, or about rq.inlined where helpers are inlined.
  if (nest == rq.nest ? rq.helpers.empty() : nest == rq.inlined) in.facts = &rq.facts;
  // Whether the pass that produced k.typed succeeded; if not, k says why.
  auto passed = [&](const char* pass) {
    if (!k.typed.ok) {
      k.infer_s = since(t0);
      k.reason = k.typed.reason;
      k.reason_line = k.typed.reason_line;
      k.retag = k.typed.retag;
      k.retag_tags = k.typed.retag_tags;
      k.empty_var = k.typed.empty_var;
      k.empty_dtype = k.typed.empty_dtype;
      if (dbg) debug_dump(std::string(pass) + " failed for " + name, k.reason);
      return false;
    }
    if (dbg) debug_dump(std::string(pass) + ": " + name, ir::to_string(k.typed.nest));
    return true;
  };
  k.typed = infer_types(in);
  if (!passed("infer_types")) return k;
  // Parts of a statement computed before it must not reorder its random draws (which calls
  // draw is known once the callees are typed).
  if (std::string why = check_draw_order(k.typed.nest); !why.empty()) {
    k.infer_s = since(t0);
    k.reason = why;
    if (dbg) debug_dump("check_draw_order failed for " + name, why);
    return k;
  }

  // Complex numbers become pairs of floats; the nest may gain variables (their entry types
  // are appended to `entry`, which codegen reads from here on).
  std::vector<TypeRef> entry = entry_held;
  entry.resize(in.nest->vars.size(), types::unbound());  // inline_helpers' Temps: no value at entry
  if (mentions_complex(k.typed, entry)) {
    k.typed = lower_complex(k.typed, &entry, *rq.oracle, rq.fp);
    if (!passed("lower_complex")) return k;
  }

  // Checks that cannot fail (math.sqrt of a sum of squares) lose their ways out to CPython.
  k.typed = prove_domains(k.typed, entry);
  if (!passed("prove_domains")) return k;
  // Subscripts `R[j]` of loops over range(len(R)) stay in range (a ragged list's rows).
  const FactSet facts = prove_row_bounds(k.typed, rq.facts);
  if (dbg && facts.size() != rq.facts.size())
    debug_dump("prove_row_bounds: " + name, std::to_string(facts.size() - rq.facts.size()) + " facts added");

  if (rq.conds) {
    PlanOptions po;
    po.threads = rq.threads;
    po.gpu = rq.gpu;
    po.reassociate = rq.reassociate;
    po.fp = rq.fp;
    k.plan = plan_parallel(k.typed, facts, *rq.conds, po);
    if (dbg) debug_dump("plan_parallel: " + name, to_string(k.plan, k.typed.nest));
    plan_interleave(&k.typed, &entry, &k.plan);
    if (dbg) debug_dump("plan_interleave: " + name, to_string(k.plan, k.typed.nest));
    plan_interchange(k.typed, &k.plan);
    if (dbg) debug_dump("plan_interchange: " + name, to_string(k.plan, k.typed.nest));
  }
  k.infer_s = since(t0);

  std::optional<backends::gpu::ModulePreloader> preload;  // joined before this returns
  if (rq.gpu) preload.emplace();
  auto t1 = std::chrono::steady_clock::now();
  auto ctx = std::make_unique<llvm::LLVMContext>();
  backends::cpu::CodegenOptions opts;
  opts.fp = rq.fp;
  opts.line_of = rq.line_of;
  opts.plan = rq.conds ? &k.plan : nullptr;
  opts.overlapping_vars = rq.overlapping_vars;
  opts.gpu = rq.gpu;
  auto cg = backends::cpu::codegen(k.typed, entry, *rq.oracle, facts, opts, *ctx, name);
  k.codegen_s = since(t1);
  if (!cg.ok) {
    k.reason = cg.reason;
    if (dbg) debug_dump("codegen failed for " + name, k.reason);
    return k;
  }
  // A kernel this large (unions of types dispatched at every operation, loops copied for
  // their first iteration inside copies of enclosing loops...) takes LLVM tens of seconds or
  // more to optimize: longer than CPython takes to run most such nests.
  size_t instructions = 0;
  for (const llvm::Function& fn : *cg.module) instructions += fn.getInstructionCount();
  if (instructions > kMaxKernelInstructions) {
    k.reason = "its kernel would be too large to compile quickly (" + std::to_string(instructions) +
               " LLVM instructions, at most " + std::to_string(kMaxKernelInstructions) + ")";
    if (dbg) debug_dump("codegen refused for " + name, k.reason);
    return k;
  }
  k.parallel_loops = cg.parallel_loops;
  k.refused_loops = cg.refused_loops;
  k.interleaved_loops = cg.interleaved_loops;
  k.interchanged_loops = cg.interchanged_loops;
  if (debug_level() > 1) debug_dump("codegen: " + name, backends::module_text(*cg.module));
  k.layout = cg.layout;
  k.gpu_refused = cg.gpu_refused;
  std::optional<backends::gpu::PtxCompile> ptx;  // joined right after the CPU code
  if (cg.gpu_module) {
    // The GPU versions: PTX on a thread of its own while the CPU code compiles; the driver
    // loads it (preload) as soon as it exists.
    if (debug_level() > 1) debug_dump("codegen (GPU): " + name, backends::module_text(*cg.gpu_module));
    const std::string arch = backends::gpu::device_arch();
    backends::gpu::GpuModule* gm = cg.gpu_info;
    gm->arch = arch;
    ptx.emplace(std::move(cg.gpu_module), arch, [gm, &preload](backends::gpu::PtxResult pr) {
      gm->ptx_s = pr.optimize_s + pr.emit_s;
      if (pr.ok) gm->ptx = std::move(pr.ptx);
      else gm->error = "PTX generation failed: " + pr.error;
      if (preload) preload->give(gm);
    });
    k.gpu_loops = cg.gpu_loops;
  }

  std::string err;
  backends::cpu::JitTimes jt;
  k.code = backends::cpu::jit_compile(std::move(ctx), std::move(cg.module), cg.function, &err, &jt);
  if (ptx) {
    ptx->join();
    k.ptx_s = cg.gpu_info->ptx_s;
  }
  k.fn = k.code.get();
  k.optimize_s = jt.optimize_s;
  k.jit_s = jt.codegen_s;
  k.cached = jt.cached;
  k.tier_up = jt.tier_up;
  if (!k.fn) {
    k.reason = "the JIT failed: " + err;
    return k;
  }
  k.ok = true;
  return k;
}
}  // namespace

Kernel compile_kernel(const KernelRequest& rq) {
  bool hoisted = false;
  Kernel k = compile(rq, true, &hoisted);
  // Helper values in Temps are variables to infer_types, which refuses some values there
  // (a row, an array): the helpers substituted in place may still compile.
  if (!k.ok && hoisted) {
    if (debug_level() > 0) debug_dump("inline_helpers: again without Temps for " + rq.name, k.reason);
    Kernel again = compile(rq, false, &hoisted);
    // (A helper that loops cannot be inlined without Temps: the first reason is the one.)
    if (!again.needs_hoist) k = std::move(again);
  }
  return k;
}

}  // namespace stagepy::specialize
