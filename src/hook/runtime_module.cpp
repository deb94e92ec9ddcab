// See runtime_module.h.
#include "hook/runtime_module.h"

#include "hook/nest_object.h"
#include "hook/nest_runtime.h"
#include "support/version.h"

namespace stagepy::runtime {
namespace {

PyObject* py_isl_info(PyObject*, PyObject*) {
  return Py_BuildValue("{s:s,s:s,s:O}", "version", isl_version_string().c_str(), "library",
                       isl_library_path().c_str(), "real", isl_is_real() ? Py_True : Py_False);
}

PyObject* py_llvm_version(PyObject*, PyObject*) { return PyLong_FromLong(llvm_major_version()); }

PyObject* py_nest_records(PyObject*, PyObject*) { return nest_records(); }

PyMethodDef methods[] = {
    {"nest_records", py_nest_records, METH_NOARGS, "One dict per loop nest that ran."},
    {"_resume_iters", resume_iters, METH_NOARGS, "Iterators for the resume just requested (bytecode only)."},
    {"isl_info", py_isl_info, METH_NOARGS, "Which isl the core is bound to."},
    {"llvm_version", py_llvm_version, METH_NOARGS, "Major version of the LLVM the core uses."},
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace

int add_to_module(PyObject* module) {
  if (add_nest_types(module) < 0) return -1;
  return PyModule_AddFunctions(module, methods);
}

}  // namespace stagepy::runtime
