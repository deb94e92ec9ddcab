// The CPU JIT: in, an LLVM module holding a kernel; out, the kernel's address, after the
// O3 pipeline for the host CPU and its features (LLVM ORC LLJIT, one per process).
#pragma once
#include <atomic>
#include <memory>
#include <string>

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace stagepy::backends::cpu {

// Tier-up: a kernel with parallel loops is first compiled without code generation's
// optimizations (instruction selection, register allocation and scheduling at their
// fastest; the LLVM IR is optimized at O3 all the same), so that its first call starts soon:
// nearly all of its compile time is its loop bodies' (the `.parN` parts) code generation. A
// background thread then compiles the same module fully; parallel loops switch to the full
// bodies between two chunks (set_parallel_body_upgrade), and the calls after that run the
// full kernel (TierUp::kernel). Both run the same optimized IR: the results are the same.
// STAGEPY_TIER_UP=0 compiles everything fully before the first call.
struct TierUp {
  enum State : int { Pending = 0, Done = 1, Failed = 2, Dropped = 3 /* the kernel went first */ };
  std::atomic<int> state{Pending};
  std::atomic<double> seconds{0};  // the background compile, start to switch
  // Done: the fully compiled kernel function, for the calls from then on (its code lives as
  // long as the quick kernel's handle).
  std::atomic<void*> kernel{nullptr};
  std::string error;               // Failed: why (written before `state`)
};

struct JitTimes {
  double optimize_s = 0, codegen_s = 0;
  bool cached = false;  // the object code came from the kernel cache (no optimization, no codegen)
  std::shared_ptr<const TierUp> tier_up;  // set when the parallel bodies are quick ones for now
};

// Waits until no tier-up is pending or running, at most `timeout_s`; true if none is. The
// waiting thread compiles queued ones itself. `at_exit`: only those whose kernel goes to the
// disk cache, the others are dropped (their kernels keep their quick code), and so is what
// is left after `timeout_s`; the one under way is waited for up to `timeout_s` more.
bool wait_tier_ups(double timeout_s, bool at_exit = false);

// A loaded kernel: `get()` is the address of its function. Its code stays loaded while a
// copy of the handle lives; after the last one goes, the JIT frees it (at its next use: a
// handle can be dropped anywhere, the JIT's lock is not taken then).
using KernelCode = std::shared_ptr<void>;

// Returns the loaded `function`, or null with `error` set. Takes ownership of both.
//
// The module is compiled in parts: the kernel, and each loop body it runs on threads
// (`<function>.parN`), each part in an LLVM context of its own, on up to default_threads()
// threads at once (the largest parts first); the parts' objects are linked by name when
// they load. `times` gets the slowest part's optimization time as `optimize_s`, and the
// rest of the wall time until the kernel is callable as `codegen_s`.
//
// The kernel cache: the object code of a module (its parts' objects, in one file) is kept
// under a SHA-256 of its bitcode (before optimization; `function` renamed to a fixed
// name), the host CPU and its features, the LLVM version and this build of stagepy; in
// memory for the process, and on disk in STAGEPY_CACHE_DIR (default
// $XDG_CACHE_HOME/stagepy or ~/.cache/stagepy; STAGEPY_CACHE=0 turns the disk cache off). A module holding the address of something that is not the
// same in every process (module flag kNoCacheFlag) is never cached on disk. Addresses the
// kernels need that are the same for the whole process are named, not written into the IR:
// see runtime_symbol.
KernelCode jit_compile(std::unique_ptr<llvm::LLVMContext> ctx, std::unique_ptr<llvm::Module> module,
                       const std::string& function, std::string* error, JitTimes* times);

// The disk cache's folder, or "" when it is off (STAGEPY_CACHE=0). The Python package keeps
// its start-up results there too (stagepy/_library_cache.py).
std::string cache_dir();

// How many kernels are in use now (held by a handle).
size_t loaded_kernels();

// The name under which kernels reach `address` (a runtime function, a flag): an external
// global of that name in the module; the JIT defines it as that absolute address.
void define_runtime_symbol(const std::string& name, const void* address);
inline constexpr const char* kNoCacheFlag = "stagepy.nocache";

// The optimized LLVM IR of the last module compiled with `keep_ir` (STAGEPY_DEBUG).
std::string describe_host();  // "x86_64 skylake +avx2..." for the report

}  // namespace stagepy::backends::cpu
