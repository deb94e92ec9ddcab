// The GPU side of a kernel at run time: in, a parallel loop outlined by codegen (its
// NVPTX entry, the CPU version of its body, the context array the host code filled) and
// its iteration range; out, every iteration run once on the GPU, or a status saying the
// host must run them.
//
// Data: each array a GPU loop touches gets a device mirror of the bytes it spans, made
// the first time a loop of this execution of the nest needs it; mirrors stay on the
// device across the launches of one execution (a time loop around parallel loops keeps
// its arrays there), and are copied back (those written) and dropped when host code is
// about to touch arrays (stagepy_gpu_flush, emitted by codegen) and when the kernel
// returns (end_session, called by the dispatcher). Mirrors of overlapping memory are
// never kept side by side: a request that overlaps a mirror it does not lie inside
// flushes that mirror first. Device memory is pooled across calls.
//
// Last-private scalars: iteration trip-1 runs first, alone, and records the values of the
// loop's private scalars (their value after the loop); the other iterations then run
// without recording. When the last iteration did not assign one of them, the host must
// run the others itself (status 2) so that the last value assigned wins.
//
// STAGEPY_GPU_EMULATE=1 runs all of this without a GPU: "device memory" is separate host
// memory and a launch runs the CPU version of the body over the iterations, last one
// first. Differential tests on a machine without a GPU then check every copy and flush.
// STAGEPY_GPU_EMULATE=alternate does the same, but under STAGEPY_TARGET=auto every other run
// of a loop goes to its CPU version instead (as the cost model sends some on a real machine),
// so that the CPU's run of a loop that also has a GPU version is checked too.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "backends/cpu/parallel_runtime.h"
#include "backends/gpu/cuda_driver.h"

namespace stagepy::backends::gpu {

// The NVPTX module of one kernel specialization: all its GPU loops.
struct GpuModule {
  std::string ptx;     // empty when it could not be built (then its loops run on the CPU)
  std::string error;   // why not
  std::string arch;    // "sm_90"
  std::mutex mu;
  CUmodule mod = nullptr;
  bool load_tried = false;
  std::string load_error;
  double ptx_s = 0, load_s = 0;
};

// Loads a kernel's PTX on a thread of its own while its CPU code compiles (pipeline.cpp),
// instead of at the first launch. The driver's first load in a process also starts its PTX
// compiler (about 160 ms on an H100): made before code generation, the preloader first
// loads a module of its own for that, so it overlaps LLVM's work too. give() hands it the
// kernel's module (nullptr: none); the destructor waits for the thread. Without a device
// (or emulating) it does nothing.
class ModulePreloader {
 public:
  ModulePreloader();
  ~ModulePreloader();
  ModulePreloader(const ModulePreloader&) = delete;
  ModulePreloader& operator=(const ModulePreloader&) = delete;
  void give(GpuModule* m);

 private:
  std::thread t_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool given_ = false;
  GpuModule* m_ = nullptr;
};

// One live-in array in a GPU loop's context array: the slot of its data pointer (its
// shape and strides follow), its rank and item size, and what the loop does with it.
struct GpuArray {
  int slot = 0;
  int ndim = 0;
  int itemsize = 8;
  bool touched = false;
  bool written = false;
  // The loop writes every element before any is read, and nothing else in the nest reads
  // it, where the run-time bit of stagepy_gpu_for's `fresh` says the loops' ranges are the
  // array's shape (codegen: gpu_fresh_arrays): then its bytes are not copied to the device.
  bool fresh = false;
};

struct GpuLoop {
  GpuModule* module = nullptr;
  std::string entry;          // the kernel's symbol in module->ptx
  bool collapsed = false;     // a perfect nest: rows of blocks (grid y) for this loop, threads for the inner one
  int loop = -1;              // loop id in the nest (for the report)
  int line = 0;
  int ctx_size = 0;           // i64 slots of the context array
  int results_slot = 0;       // slot holding the address of the records
  std::vector<GpuArray> arrays;
  int record_size = 0;        // i64 slots per record
  int reductions = 0;         // scalar reductions: each GPU thread keeps its own record
  int last = 0, privates = 0; // privates' (iteration, bits, tag) triples start at `last`
  int warn = 0, warn_slots = 0;
  double ops_per_iter = 1;    // static estimate (cost model)
  // Filled at run time.
  CUfunction fn = nullptr;
  std::mutex mu;              // guards fn and the figures below
  unsigned long long launches = 0, cpu_runs = 0;
  double gpu_s = 0;           // time of its device runs, copies included
  double est_gpu_s = 0, est_cpu_s = 0;  // the cost model's last estimates
  double gpu_iter_s = 0, cpu_iter_s = 0;  // measured seconds per iteration (0: not yet);
                                          // the GPU's without copying the arrays there
  int runs_per_session = 0;   // times it ran in the last nest execution that ran it (the
                              // launches that share one copy of the arrays to the device)
  std::string why_cpu;        // the last reason it ran on the CPU
};

// Records that live for the process (kernels refer to them by address).
GpuModule* new_module();
GpuLoop* new_loop();

enum class Target : uint8_t { Cpu, Gpu, Auto };
// STAGEPY_TARGET (cpu, gpu, auto; default auto), or set_target().
Target target();
void set_target(Target t);
bool emulating();  // STAGEPY_GPU_EMULATE=1 (or alternate): no device, host memory stands in for it
// Whether kernels compiled now should carry GPU versions of their parallel loops (a
// device or the emulation, and a target other than cpu), and if not, why.
bool gpu_wanted(std::string* why = nullptr);
// The "sm_XX" to compile for (the device's, or sm_70 when emulating without one).
std::string device_arch();

// After a kernel returns: written arrays back to the host, mirrors dropped. Returns the
// text of a GPU failure that happened after device work had begun (then the results are
// not trustworthy and the caller raises), or "".
std::string end_session();

// Per-process figures for the report.
struct GpuStats {
  unsigned long long launches = 0, h2d_bytes = 0, d2h_bytes = 0;
  double h2d_s = 0, d2h_s = 0;
  unsigned long long h2d_skipped_bytes = 0;  // arrays a loop overwrote whole: not copied there
  // From the first launch of a loop's run to the device's synchronisation after its last
  // (kernels' own time and the launch latency; copies excluded).
  double kernel_s = 0;
};
GpuStats stats();

}  // namespace stagepy::backends::gpu

extern "C" {
// Runs iterations [k0, trip) of a GPU loop. Returns 0 when all ran on the device (record 0
// holds the last iteration's privates and the first iteration of every warning); 1 when
// none ran (the cost model chose the CPU, or the device failed before any work): arrays
// are on the host; 2 when only iteration trip-1 ran (record 0 holds it) and a private was
// not assigned there: arrays are on the host and the caller runs [k0, trip-1). Bit k of
// `fresh`: array k is overwritten whole by these iterations (GpuArray::fresh).
int32_t stagepy_gpu_for(stagepy::backends::gpu::GpuLoop* loop, stagepy::backends::cpu::ParallelBody cpu_body,
                        int64_t* ctx, int64_t* record, int64_t k0, int64_t trip, int64_t threads, uint64_t fresh);
// Host code is about to touch arrays: written mirrors back, all mirrors dropped.
void stagepy_gpu_flush();
// After stagepy_gpu_for answered 0 or 2 for a loop with reductions: the records of that
// run (record 0: the last iteration; then one per GPU thread), and how many.
int64_t* stagepy_gpu_records(stagepy::backends::gpu::GpuLoop* loop, int64_t* count);
// The CPU's threads just ran the loop that stagepy_gpu_for sent back (answer 1): its time
// per iteration, for the cost model.
void stagepy_gpu_cpu_done(stagepy::backends::gpu::GpuLoop* loop);
}
