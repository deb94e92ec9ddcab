// See nest_runtime.h.
#include "hook/nest_runtime.h"

#include "hook/dispatch.h"
#include "hook/nest_object.h"
#include "hook/py_ref.h"
#include "ir/mutate.h"

namespace stagepy::runtime {
namespace {
std::vector<std::shared_ptr<NestState>>& registry() {
  static auto* r = new std::vector<std::shared_ptr<NestState>>();  // lives to the end of the process
  return *r;
}
}  // namespace

void register_nest(const std::shared_ptr<NestState>& s) { registry().push_back(s); }

// The loops of a nest, as the report shows them: [{"line", "variable", "parallel",
// "parallel_runs", "why"}], outermost first (For loops only).
PyObject* loop_records(const NestState& s) {
  PyRef list = PyRef::steal(PyList_New(0));
  if (!list || !s.lift.ok) return list.release();
  const ir::Nest& n = s.lift.nest;
  std::vector<int> var_of(n.loops.size(), -1);
  ir::for_each_stmt(n.root, [&](const ir::Stmt& st) {
    if (st->kind == ir::StmtNode::Kind::For && st->loop >= 0 && (size_t)st->loop < var_of.size()) var_of[(size_t)st->loop] = st->var;
  });
  for (size_t l = 0; l < n.loops.size() && l < s.loops.size(); l++) {
    if (!n.loops[l].is_for) continue;
    const auto& r = s.loops[l];
    if (!r.parallel && r.why.empty()) continue;
    PyRef d = PyRef::steal(Py_BuildValue("{s:i,s:s,s:O,s:K,s:s}", "line", n.loops[l].line, "variable",
                                         var_of[l] >= 0 ? n.vars[(size_t)var_of[l]].name.c_str() : "?", "parallel",
                                         r.parallel ? Py_True : Py_False, "parallel_runs", r.parallel_runs, "why",
                                         r.why.c_str()));
    if (!d || PyList_Append(list.get(), d.get()) < 0) return nullptr;
  }
  return list.release();
}

PyObject* nest_record(const NestState& s) {
  const char* status = s.native_calls > 0 ? s.last_target.c_str() : "interpreted";
  std::string reason = s.native_calls > 0 && s.declined == 0 && s.bailouts == 0 ? "" : s.status_reason;
  PyRef phases = PyRef::steal(Py_BuildValue("{s:d,s:d,s:d,s:d}", "infer_s", s.infer_s, "codegen_s", s.codegen_s,
                                             "optimize_s", s.optimize_s, "jit_s", s.jit_s));
  if (!phases) return nullptr;
  PyRef loops = PyRef::steal(loop_records(s));
  if (!loops) return nullptr;
  unsigned long long par_runs = 0;
  for (auto& r : s.loops) par_runs += r.parallel_runs;
  return Py_BuildValue(
      "{s:s,s:s,s:i,s:i,s:s,s:s,s:K,s:K,s:K,s:K,s:d,s:O,s:d,s:d,s:i,s:O,s:O,s:O,s:i,s:d}", "file", s.filename.c_str(),
      "function", s.function.c_str(), "line", s.line, "end_line", s.lift.ok ? s.lift.nest.end_line : s.line, "status",
      status, "reason", reason.c_str(), "calls", s.calls, "native_calls", s.native_calls, "bailouts", s.bailouts,
      "declined", s.declined, "compile_s", s.compile_s, "compile_phases", phases.get(), "native_s", s.native_s,
      "convert_s", s.convert_s, "specializations", s.compiles, "lifted", s.lift.ok ? Py_True : Py_False, "user", s.user ? Py_True : Py_False,
      "loops", loops.get(), "threads", par_runs ? s.threads : 1, "analysis_s", s.analysis_s);
}

PyObject* nest_records() {
  PyRef list = PyRef::steal(PyList_New(0));
  if (!list) return nullptr;
  for (auto& s : registry()) {
    if (s->calls == 0) continue;
    PyRef r = PyRef::steal(nest_record(*s));
    if (!r || PyList_Append(list.get(), r.get()) < 0) return nullptr;
  }
  return list.release();
}

PyObject* nest_vectorcall(PyObject* self, PyObject* const*, size_t nargsf, PyObject* kwnames) {
  auto& s = *((NestObject*)self)->state;
  return dispatch(s);
}

}  // namespace stagepy::runtime
