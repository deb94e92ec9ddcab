// See nest_runtime.h.
#include "hook/nest_runtime.h"

#include "backends/gpu/gpu_runtime.h"
#include "hook/dispatch.h"
#include "hook/nest_object.h"
#include "hook/py_ref.h"
#include "ir/mutate.h"
#include "support/env.h"

#include <algorithm>
#include <map>

namespace stagepy::runtime {
namespace {
// The nests whose code objects live, and the report records of those whose code objects
// went (retire_nest), both by creation: the report lists them in that order.
struct Registry {
  uint64_t next = 0;
  std::map<uint64_t, std::shared_ptr<NestState>> live;
  std::map<uint64_t, PyRef> retired;   // the newest max_retired()
  unsigned long long dropped = 0;      // retired records dropped for that bound
};
// STAGEPY_MAX_RETIRED_RECORDS (default 2000): the records of retired nests kept.
size_t max_retired() {
  static const size_t n = (size_t)std::max(0L, env_long("STAGEPY_MAX_RETIRED_RECORDS", 2000));
  return n;
}
Registry& registry() {
  static auto* r = new Registry();  // lives to the end of the process
  return *r;
}
struct GpuFigures {
  unsigned long long launches = 0, cpu_runs = 0;
  double gpu_s = 0, est_gpu = 0, est_cpu = 0, gpu_iter = 0, cpu_iter = 0;
  std::string why;
  bool collapsed = false;  // the loop and the one inside it on a 2-D grid
};

GpuFigures gpu_figures(const NestState::LoopRecord& r) {
  GpuFigures f;
  f.why = r.gpu_why;
  for (auto* g : r.gpu) {
    std::lock_guard<std::mutex> lock(g->mu);
    f.launches += g->launches;
    f.cpu_runs += g->cpu_runs;
    f.gpu_s += g->gpu_s;
    f.est_gpu = g->est_gpu_s;
    f.est_cpu = g->est_cpu_s;
    f.collapsed = g->collapsed;
    f.gpu_iter = g->gpu_iter_s;
    f.cpu_iter = g->cpu_iter_s;
    if (!g->why_cpu.empty()) f.why = g->why_cpu;
  }
  return f;
}
}  // namespace

void register_nest(const std::shared_ptr<NestState>& s) {
  Registry& r = registry();
  s->seq = r.next++;
  r.live.emplace(s->seq, s);
}

void retire_nest(const std::shared_ptr<NestState>& s) {
  Registry& r = registry();
  auto it = r.live.find(s->seq);
  if (it == r.live.end() || it->second != s) return;
  if (s->calls > 0) {
    {
      SavedError keep;  // a deallocation keeps the exception being raised
      PyRef rec = PyRef::steal(nest_record(*s));
      if (rec) r.retired.emplace(s->seq, std::move(rec));
      else r.dropped++;
      PyErr_Clear();
    }
    while (r.retired.size() > max_retired()) {
      r.retired.erase(r.retired.begin());
      r.dropped++;
    }
  }
  r.live.erase(it);  // the state goes with the nest object's reference: its kernels too
}

unsigned long long retired_records_dropped() { return registry().dropped; }

void for_each_nest(const std::function<void(NestState&)>& f) {
  for (auto& [seq, s] : registry().live) f(*s);
}

namespace {
// A parameter of the analysis as the user wrote it: a variable, or an array's extent.
std::string shown_param(const analysis::PolyParam& p, const std::vector<ir::Var>& vars) {
  const std::string v = p.var >= 0 && (size_t)p.var < vars.size() ? vars[(size_t)p.var].name : p.name;
  if (p.kind == analysis::PolyParam::Kind::Int) return v;
  return p.dim == 0 ? "len(" + v + ")" : v + ".shape[" + std::to_string(p.dim) + "]";
}

// Loop `loop`'s dependence test where the call's values decide it: when two of its
// iterations may touch the same element (in the user's terms), and those values in the
// latest call ("d = 0"). Both "" where the answer does not depend on the call. `summed`:
// the loop's test left out the arrays it sums into in a copy per thread.
std::pair<std::string, std::string> carried_condition(const NestState& s, int loop, bool summed) {
  const analysis::NestConditions* cp = s.last_conds ? s.last_conds : s.conds.get();
  if (!cp || !cp->ok) return {};
  const analysis::NestConditions& c = *cp;
  const ir::Nest& nest = s.last_nest ? *s.last_nest : s.lift.nest;
  for (const analysis::Condition& cond : c.conds) {
    const analysis::FactKind kind =
        summed ? analysis::FactKind::NoCarriedBesideUpdates : analysis::FactKind::NoCarried;
    if (cond.fact.kind != kind || cond.fact.loop != loop) continue;
    if (cond.violated.is_empty() || cond.violated.is_universe()) return {};
    std::vector<std::string> shown;
    std::vector<uint8_t> extent, used;
    for (const analysis::PolyParam& p : c.params) {
      shown.push_back(shown_param(p, nest.vars));
      extent.push_back(p.kind == analysis::PolyParam::Kind::Extent);
    }
    const std::string when = cond.violated.describe(shown, extent, &used);
    std::string values;
    for (size_t k = 0; k < c.params.size(); k++)
      if (used[k] && k < s.last_known.size() && s.last_known[k] && k < s.last_params.size())
        values += (values.empty() ? "" : ", ") + shown[k] + " = " + std::to_string(s.last_params[k]);
    return {when, values};
  }
  return {};
}
}  // namespace

// The loops of a nest, as the report shows them: [{"line", "variable", "parallel",
// "parallel_runs", "why", "interleaved", "interchanged", "schedule", "carried_when",
// "decided_with", "summed"}], outermost first (For loops only).
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
    if (!r.parallel && r.why.empty() && !r.interleaved && !r.interchanged) continue;
    const std::string& shown = !n.loops[l].targets.empty() ? n.loops[l].targets
                               : var_of[l] >= 0                ? n.vars[(size_t)var_of[l]].name
                                                               : std::string("?");
    const auto [carried_when, decided_with] = carried_condition(s, (int)l, r.parallel && !r.summed.empty());
    PyRef d = PyRef::steal(Py_BuildValue("{s:i,s:s,s:O,s:K,s:s,s:i,s:O,s:s,s:s,s:s,s:s}", "line", n.loops[l].line,
                                         "variable", shown.c_str(), "parallel", r.parallel ? Py_True : Py_False,
                                         "parallel_runs", r.parallel_runs, "why", r.why.c_str(), "interleaved",
                                         r.interleaved, "interchanged", r.interchanged ? Py_True : Py_False,
                                         "schedule", r.parallel ? r.schedule : "", "carried_when",
                                         carried_when.c_str(), "decided_with", decided_with.c_str(), "summed",
                                         r.parallel ? r.summed.c_str() : ""));
    if (!d) return nullptr;
    if (r.parallel && (!r.gpu.empty() || !r.gpu_why.empty())) {
      // The GPU: launches, time there (copies included), the cost model's last estimates.
      GpuFigures g = gpu_figures(r);
      PyRef gd = PyRef::steal(Py_BuildValue(
          "{s:K,s:K,s:d,s:d,s:d,s:d,s:d,s:s,s:O}", "launches", g.launches, "cpu_runs", g.cpu_runs, "gpu_s", g.gpu_s,
          "estimate_gpu_s", g.est_gpu, "estimate_cpu_s", g.est_cpu, "gpu_iteration_s", g.gpu_iter, "cpu_iteration_s",
          g.cpu_iter, "why_cpu", g.why.c_str(), "nest_on_grid", g.collapsed ? Py_True : Py_False));
      if (!gd || PyDict_SetItemString(d.get(), "gpu", gd.get()) < 0) return nullptr;
    }
    if (PyList_Append(list.get(), d.get()) < 0) return nullptr;
  }
  return list.release();
}

namespace {
// Every field but gpu_launches (Py_BuildValue takes at most so many).
PyObject* base_record(const NestState& s, unsigned long long gpu_launches) {
  const char* status = s.native_calls > 0 ? (gpu_launches ? "gpu" : s.last_target.c_str()) : "interpreted";
  std::string reason = s.native_calls > 0 && s.declined == 0 && s.bailouts == 0 ? "" : s.status_reason;
  // Tier-ups: done (and their background seconds), still under way, failed (the quick
  // bodies stay) or dropped with their kernel.
  int tier_done = 0, tier_pending = 0, tier_failed = 0;
  double tier_s = 0;
  std::string tier_error;
  for (auto& t : s.tier_ups) {
    int st = t->state.load();
    if (st == backends::cpu::TierUp::Done) tier_done++, tier_s += t->seconds.load();
    else if (st == backends::cpu::TierUp::Pending) tier_pending++;
    else if (st == backends::cpu::TierUp::Failed) tier_failed++, tier_error = t->error;
  }
  PyRef phases = PyRef::steal(Py_BuildValue("{s:d,s:d,s:d,s:d,s:d,s:i,s:i,s:i,s:i,s:d}", "infer_s", s.infer_s,
                                             "codegen_s", s.codegen_s, "optimize_s", s.optimize_s, "jit_s", s.jit_s,
                                             "ptx_s", s.ptx_s, "cached", s.cached, "tier_ups", tier_done,
                                             "tier_ups_pending", tier_pending, "tier_ups_failed", tier_failed,
                                             "tier_up_s", tier_s));
  if (!phases) return nullptr;
  if (tier_failed) {
    PyRef why = PyRef::steal(PyUnicode_FromString(("the fully optimized parallel bodies failed to compile: " + tier_error).c_str()));
    if (!why || PyDict_SetItemString(phases.get(), "tier_up_error", why.get()) < 0) return nullptr;
  }
  PyRef loops = PyRef::steal(loop_records(s));
  if (!loops) return nullptr;
  unsigned long long par_runs = 0;
  for (auto& r : s.loops) par_runs += r.parallel_runs;
  return Py_BuildValue(
      "{s:s,s:s,s:i,s:i,s:s,s:s,s:K,s:K,s:K,s:K,s:d,s:O,s:d,s:d,s:K,s:i,s:O,s:O,s:O,s:i,s:d}", "file", s.filename.c_str(),
      "function", s.function.c_str(), "line", s.line, "end_line", s.lift.ok ? s.lift.nest.end_line : s.line, "status",
      status, "reason", reason.c_str(), "calls", s.calls, "native_calls", s.native_calls, "bailouts", s.bailouts,
      "declined", s.declined, "compile_s", s.compile_s, "compile_phases", phases.get(), "native_s", s.native_s,
      "convert_s", s.convert_s, "lists_read", s.lists_read, "specializations", s.compiles, "lifted", s.lift.ok ? Py_True : Py_False, "user", s.user ? Py_True : Py_False,
      "loops", loops.get(), "threads", par_runs ? s.threads : 1, "analysis_s", s.analysis_s);
}

}  // namespace

PyObject* nest_record(const NestState& s) {
  unsigned long long launches = 0;
  for (auto& r : s.loops) launches += gpu_figures(r).launches;
  PyRef d = PyRef::steal(base_record(s, launches));
  if (!d) return nullptr;
  PyRef n = PyRef::steal(PyLong_FromUnsignedLongLong(launches));
  if (!n || PyDict_SetItemString(d.get(), "gpu_launches", n.get()) < 0) return nullptr;
  PyRef e = PyRef::steal(PyLong_FromUnsignedLongLong(s.exits));
  if (!e || PyDict_SetItemString(d.get(), "exits", e.get()) < 0) return nullptr;
  return d.release();
}

PyObject* nest_records() {
  PyRef list = PyRef::steal(PyList_New(0));
  if (!list) return nullptr;
  // Live and retired nests merged by creation.
  Registry& reg = registry();
  auto live = reg.live.begin();
  auto old = reg.retired.begin();
  while (live != reg.live.end() || old != reg.retired.end()) {
    PyRef r;
    if (old == reg.retired.end() || (live != reg.live.end() && live->first < old->first)) {
      const NestState& s = *(live++)->second;
      if (s.calls == 0) continue;
      r = PyRef::steal(nest_record(s));
      if (!r) return nullptr;
    } else {
      r = PyRef::steal(PyDict_Copy((old++)->second.get()));
      if (!r) return nullptr;
    }
    if (PyList_Append(list.get(), r.get()) < 0) return nullptr;
  }
  return list.release();
}

PyObject* nest_vectorcall(PyObject* self, PyObject* const*, size_t nargsf, PyObject* kwnames) {
  auto& s = *((NestObject*)self)->state;
  return dispatch(s);
}

}  // namespace stagepy::runtime
