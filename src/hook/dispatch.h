// Dispatch of one loop-nest execution: read the frame's variables, find or build the
// specialization for their types, run the kernel, write the variables back.
#pragma once
#include <Python.h>

#include "hook/nest_runtime.h"

namespace stagepy::runtime {

PyObject* dispatch(NestState& s);  // None, 0 or k (see nest_runtime.h); NULL with an exception

// Whether float reductions keep CPython's order (their loops then stay sequential): from
// STAGEPY_STRICT_FP=1 until set. Part of each specialization's key.
bool strict_fp();
void set_strict_fp(bool on);

}  // namespace stagepy::runtime
