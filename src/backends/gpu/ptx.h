// PTX emission: in, an LLVM module whose kernels codegen wrote for the GPU (nvptx64, the
// `nvvm.annotations` marking each entry); out, the PTX text for one architecture after
// LLVM's O3 pipeline with the NVPTX target's own passes, or the reason it failed.
//
// Floating point stays exact: no fused multiply-add (the multiplications and additions
// are emitted with explicit rounding, `mul.rn`/`add.rn`, which ptxas does not contract),
// so element-wise results equal the CPU's bit for bit.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <thread>

namespace llvm {
class Module;
}  // namespace llvm

namespace stagepy::backends::gpu {

struct PtxResult {
  bool ok = false;
  std::string ptx;
  std::string error;
  double optimize_s = 0, emit_s = 0;
};

// `arch` is "sm_XX". Takes the module (it is optimized in place, then dropped).
PtxResult compile_ptx(std::unique_ptr<llvm::Module> module, const std::string& arch);

// compile_ptx on a thread of its own, so that the CPU kernel compiles meanwhile: the
// module is moved into an LLVM context of its own first (a context is one thread's), then
// `done` gets the result on that thread. The destructor (or join) waits for it.
class PtxCompile {
 public:
  PtxCompile(std::unique_ptr<llvm::Module> module, std::string arch, std::function<void(PtxResult)> done);
  ~PtxCompile() { join(); }
  PtxCompile(const PtxCompile&) = delete;
  PtxCompile& operator=(const PtxCompile&) = delete;
  void join() {
    if (t_.joinable()) t_.join();
  }

 private:
  std::thread t_;
};

// The data layout and triple a GPU module is built with.
const char* nvptx_triple();
std::string nvptx_data_layout();

}  // namespace stagepy::backends::gpu
