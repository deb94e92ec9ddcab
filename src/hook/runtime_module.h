// The runtime half of stagepy._core: loop-nest entry objects, native-kernel dispatch
// and the data the report is built from. add_to_module registers its types and
// functions on the extension module.
#pragma once
#include <Python.h>

namespace stagepy::runtime {

int add_to_module(PyObject* module);  // 0, or -1 with an exception

}  // namespace stagepy::runtime
