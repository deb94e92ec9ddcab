// The whole pipeline from a lifted nest to a callable kernel, one screenful (in the
// manner of Halide's Lower.cpp): each pass is a free function in its own file, and with
// STAGEPY_DEBUG set the IR is printed after each.
//
//   analysis:    bytecode -> lift_nest (cfg + structuring) -> bind_module_attributes
//   specialize:  infer_types (run-time types in, typed IR out)
//   backends:    codegen (typed IR -> LLVM IR) -> jit_compile (O3 + ORC)
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "backends/kernel_abi.h"
#include "ir/ir.h"
#include "specialize/oracle.h"
#include "specialize/type_infer.h"

namespace stagepy::specialize {

struct Kernel {
  bool ok = false;
  std::string reason;  // why not, in a user's words
  int reason_line = -1;
  void* fn = nullptr;
  KernelLayout layout;
  TypedNest typed;
  double infer_s = 0, codegen_s = 0, optimize_s = 0, jit_s = 0;
  std::string target = "cpu";
};

Kernel compile_kernel(const ir::Nest& nest, const std::vector<TypeRef>& entry, const Oracle& oracle,
                      const std::function<int(int)>& line_of, const std::string& name);

}  // namespace stagepy::specialize
