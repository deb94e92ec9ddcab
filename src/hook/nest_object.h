// The Python objects of the runtime:
//   stagepy._core.CodeInfo - a code object's normalized bytecode, converted once;
//   stagepy._core.Nest     - one loop nest: the lift result, its kernels, its counters.
//                            Calling it (from the rewritten bytecode) runs the nest natively
//                            and answers None (declined), 0 (done) or k (resume point k-1).
#pragma once
#include <Python.h>

#include <memory>
#include <string>
#include <vector>

#include "analysis/bytecode.h"
#include "ir/ir.h"

namespace stagepy::runtime {

struct NestState;  // runtime state of one nest (nest_runtime.h)

struct CodeInfoObject {
  PyObject_HEAD
  std::shared_ptr<analysis::CodeInfo> info;
};

struct NestObject {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  std::shared_ptr<NestState> state;
};

extern PyTypeObject CodeInfoType;
extern PyTypeObject NestType;

int add_nest_types(PyObject* module);
// All nests created in this process (for the report), as a new list of dicts.
PyObject* nest_records();

}  // namespace stagepy::runtime
