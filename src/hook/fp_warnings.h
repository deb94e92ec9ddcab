// NumPy's floating-point warnings around native kernels: in, NumPy's errstate and the
// warnings filters; out, how a kernel may treat the operations that make NumPy warn
// (FpMode, kernel_abi.h), and, after a kernel that deferred them, the same warnings
// emitted as NumPy would have: same message, category, file, line and registry.
#pragma once
#include <Python.h>

#include "backends/kernel_abi.h"
#include "hook/frame_access.h"
#include "hook/numpy_bridge.h"

namespace stagepy::runtime {

// The mode for a call now: Ignore when NumPy ignores divide/overflow/invalid, Deferred
// when it warns and no warnings filter would turn a RuntimeWarning into an error or show
// every occurrence, Exact otherwise.
FpMode fp_mode_now(const np::ErrState& es);

// Emits the warnings a Deferred kernel recorded in `state` (site order). 0, or -1 with
// an exception (a filter or showwarning that raised).
int emit_deferred_warnings(const KernelLayout& L, const int64_t* state, const FrameRef& f, const np::ErrState& es);

}  // namespace stagepy::runtime
