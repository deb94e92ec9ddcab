// See runtime_module.h.
#include "hook/runtime_module.h"

#include "support/version.h"

namespace stagepy::runtime {
namespace {

PyObject* py_isl_info(PyObject*, PyObject*) {
  return Py_BuildValue("{s:s,s:s,s:O}", "version", isl_version_string().c_str(), "library",
                       isl_library_path().c_str(), "real", isl_is_real() ? Py_True : Py_False);
}

PyObject* py_llvm_version(PyObject*, PyObject*) { return PyLong_FromLong(llvm_major_version()); }

PyMethodDef methods[] = {
    {"isl_info", py_isl_info, METH_NOARGS, "Which isl the core is bound to."},
    {"llvm_version", py_llvm_version, METH_NOARGS, "Major version of the LLVM the core uses."},
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace

int add_to_module(PyObject* module) {
  return PyModule_AddFunctions(module, methods);
}

}  // namespace stagepy::runtime
