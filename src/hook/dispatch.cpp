// See dispatch.h.
#include "hook/dispatch.h"

namespace stagepy::runtime {

struct Specialization {};

NestState::NestState() = default;
NestState::~NestState() = default;

PyObject* dispatch(NestState& s) {
  s.calls++;
  s.declined++;
  if (s.status_reason.empty()) s.status_reason = "native execution is not available yet";
  Py_RETURN_NONE;
}

PyObject* resume_iters(PyObject*, PyObject*) { return PyTuple_New(0); }

}  // namespace stagepy::runtime
