// The CPU JIT: in, an LLVM module holding a kernel; out, the kernel's address, after the
// O3 pipeline for the host CPU and its features (LLVM ORC LLJIT, one per process).
#pragma once
#include <memory>
#include <string>

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace stagepy::backends::cpu {

struct JitTimes {
  double optimize_s = 0, codegen_s = 0;
};

// Returns the address of `function`, or nullptr with `error` set. Takes ownership of both.
void* jit_compile(std::unique_ptr<llvm::LLVMContext> ctx, std::unique_ptr<llvm::Module> module,
                  const std::string& function, std::string* error, JitTimes* times);

// The optimized LLVM IR of the last module compiled with `keep_ir` (STAGEPY_DEBUG).
std::string describe_host();  // "x86_64 skylake +avx2..." for the report

}  // namespace stagepy::backends::cpu
