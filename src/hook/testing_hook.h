// A foreign pass-through eval-frame hook for tests (see testing_hook.cpp).
#pragma once
#include <Python.h>

namespace stagepy::testing_hook {
PyObject* install(PyObject*, PyObject*);
PyObject* uninstall(PyObject*, PyObject*);
PyObject* frames(PyObject*, PyObject*);
}  // namespace stagepy::testing_hook
