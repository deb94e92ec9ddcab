// See dispatch.h.
//
// One call: read the frame's variables the nest uses, describe each as a Type and a few
// key words (exact type, dtype/rank/layout, identity of modules and functions), find the
// specialization compiled for that key (or compile it), unbox, call the kernel through
// libffi, box what it assigned and write it back to the frame.
#include "hook/dispatch.h"
#include "ir/mutate.h"
#include "ir/printer.h"

#include "backends/cpu/jit.h"
#include "backends/gpu/gpu_runtime.h"

#include <ffi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <deque>
#include <array>

#include "backends/cpu/append_buffer.h"
#include "backends/cpu/made_lists.h"
#include "hook/appended_lists.h"
#include "backends/cpu/parallel_runtime.h"
#include "backends/cpu/scratch.h"
#include "hook/eval_hook.h"
#include "hook/fp_warnings.h"
#include "hook/frame_access.h"
#include "hook/list_buffer.h"
#include "hook/nest_object.h"
#include "hook/py_buffer.h"
#include "hook/numpy_bridge.h"
#include "hook/py_ref.h"
#include "hook/numpy_random.h"
#include "hook/random_generator.h"
#include "hook/runtime_state.h"
#include "specialize/pipeline.h"
#include "support/debug.h"
#include "support/env.h"

namespace stagepy::runtime {

// A plain Python function a nest calls: its body lifted once per code object, and the
// nest variables (appended to the nest when first seen) its globals are read through.
struct HelperEntry {
  PyRef code;           // keeps the code object (the key) alive
  std::string reason;   // why it cannot be inlined ("" when it can)
  std::shared_ptr<const analysis::HelperBody> body;
  std::vector<int> global_vars;
  bool in_caller_file = false;  // its code's file is the calling nest's (lines there mean its lines)
  std::vector<std::string> params;  // its parameters' names (calls with keyword arguments)
  int posonly = 0;                  // how many of them are positional-only
  // What its body does with its first parameter, for a method (found once, with the body):
  // the methods it calls on it, the attributes it reads of it, and its calls of methods on
  // the items of a list attribute of it (by the call's origin, the attribute's name).
  struct ItemCall {
    int origin;
    std::string list, method;  // list: the attribute of its first parameter's, or ""
    int param = -1;            // or the parameter that is the list (`for p in ps`)
  };
  std::set<std::string> self_methods, self_attributes;
  std::vector<ItemCall> item_calls;
};

// An item variable of a loop over a list or tuple (`for v in S`) that holds S's item at the
// loop's position wherever the nest stops: every assignment of it is `v = S[k]` (the loop's,
// peeled copies too), the nest stores into or appends to no list that is S (`stored`: the
// variables it stores through, each checked against S at write-back) and resizes no list
// (`L.pop()`). Such a variable gets
// that item itself, not a new number, where the values agree: CPython's object, which `in`
// finds by identity (a NaN) and `is` sees.
struct SeqItem {
  int seq = -1, loop = -1;  // S's variable; the loop, whose position (its `cur`) is the item's index
};
std::map<int, SeqItem> seq_items(const ir::Nest& n, std::set<int>* stored) {
  using K = ir::ExprNode::Kind;
  std::map<int, int> loop_of;  // a loop over a sequence's position variable -> the loop
  ir::for_each_stmt(n.root, [&](const ir::Stmt& x) {
    if (x->kind == ir::StmtNode::Kind::For && x->iter == ir::StmtNode::Iter::Seq && x->var >= 0) loop_of[x->var] = x->loop;
  });
  std::map<int, SeqItem> items;
  std::set<int> other;  // variables assigned otherwise
  bool unknown = false;
  ir::for_each_stmt(n.root, [&](const ir::Stmt& x) {
    if (x->kind == ir::StmtNode::Kind::For && x->var >= 0 && !loop_of.count(x->var)) other.insert(x->var);
    for (auto& e : x->effects) {
      if (e.kind == ir::Effect::Kind::Store || e.kind == ir::Effect::Kind::Append) {
        const int r = ir::root_var(e.base);
        if (r < 0) unknown = true;
        else stored->insert(r);
      }
      if (e.kind != ir::Effect::Kind::Assign || e.var < 0) continue;
      const ir::Expr& v = e.value;
      if (v && v->kind == K::Subscript && v->name.empty() && v->args.size() == 2 && v->args[0]->kind == K::Load &&
          v->args[1]->kind == K::Load && loop_of.count(v->args[1]->var)) {
        SeqItem it{v->args[0]->var, loop_of.at(v->args[1]->var)};
        auto [at, first] = items.emplace(e.var, it);
        if (first || (at->second.seq == it.seq && at->second.loop == it.loop)) continue;
      }
      other.insert(e.var);
    }
  });
  // (A list the nest grows or shrinks, `L.pop()`: its items move; any, conservatively.)
  for (auto& var : n.vars) unknown = unknown || var.resized;
  if (unknown) return {};
  for (int v : other) items.erase(v);
  for (auto it = items.begin(); it != items.end();)  // (S as the frame holds it: never reassigned)
    it = n.vars[(size_t)it->second.seq].assigned ? items.erase(it) : std::next(it);
  return items;
}

struct Specialization {
  std::vector<uint64_t> key;
  specialize::FactSet facts;
  FpMode fp = FpMode::Exact;
  specialize::Kernel kernel;
  std::vector<TypeRef> entry;
  ffi_cif cif;
  std::vector<ffi_type*> arg_types;
  unsigned long long uses = 0;
  unsigned long long last_use = 0;  // kernel_clock at its last call (eviction takes the oldest)
  std::map<int, SeqItem> seq_items;  // of kernel.typed.nest (seq_items())
  std::set<int> seq_items_stored;    // (its `stored`)
};

NestState::NestState() = default;
NestState::~NestState() = default;

namespace {
// STAGEPY_STRICT_FP=1, or set_strict_fp (under the GIL): float reductions keep CPython's
// order (their loops stay sequential).
int strict_fp_setting = -1;  // -1: the environment's
}  // namespace

bool strict_fp() {
  if (strict_fp_setting < 0) strict_fp_setting = env_flag("STAGEPY_STRICT_FP", false) ? 1 : 0;
  return strict_fp_setting == 1;
}
void set_strict_fp(bool on) { strict_fp_setting = on ? 1 : 0; }

namespace {

thread_local PyObject* t_resume_iters = nullptr;


// Kernels loaded at once (STAGEPY_MAX_KERNELS, default 1024): past that, the specializations
// called longest ago are dropped with their kernels (their nests compile them again, or
// load them from the kernel cache, if they are called again).
size_t max_kernels() {
  static const size_t n = (size_t)std::max(4L, env_long("STAGEPY_MAX_KERNELS", 1024));
  return n;
}
unsigned long long kernel_clock = 0;  // counts kernel calls (under the GIL)
unsigned long long kernels_evicted = 0;

// Drops the least recently called specializations (never `keep`) until a quarter below the
// limit. Under the GIL, with no kernel running: kernels never call back into Python.
void evict_kernels(const Specialization* keep) {
  if (backends::cpu::loaded_kernels() <= max_kernels()) return;
  struct Old {
    unsigned long long last_use;
    NestState* nest;
    const Specialization* spec;
  };
  std::vector<Old> olds;
  for_each_nest([&](NestState& n) {
    for (auto& sp : n.specs)
      if (sp.get() != keep && sp->kernel.code) olds.push_back({sp->last_use, &n, sp.get()});
  });
  std::sort(olds.begin(), olds.end(), [](const Old& a, const Old& b) { return a.last_use < b.last_use; });
  size_t target = max_kernels() - max_kernels() / 4;
  for (auto& o : olds) {
    if (backends::cpu::loaded_kernels() <= target) break;
    auto& specs = o.nest->specs;
    for (size_t k = 0; k < specs.size(); k++)
      if (specs[k].get() == o.spec) {
        o.nest->evicted.insert(specs[k]->key);
        specs.erase(specs.begin() + (long)k);  // its kernel goes with its last handle
        kernels_evicted++;
        break;
      }
  }
}

int recompile_limit() {
  static const int n = (int)std::max(1L, env_long("STAGEPY_RECOMPILE_LIMIT", 8));
  return n;
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

PyObject* decline(NestState& s, std::string why) {
  s.declined++;
  s.status_reason = std::move(why);
  Py_RETURN_NONE;
}

// Where a live-in array's elements are: an ndarray's own memory, or the buffer a Python
// list was read into for this call.
struct ArrayView {
  void* data = nullptr;
  int ndim = 0;
  const Py_ssize_t* shape = nullptr;
  const Py_ssize_t* strides = nullptr;
};

// Whether two different subscripts of array `a` (items of `itemsize` bytes) may reach
// overlapping bytes. Sufficient for "no": with the dimensions of more than one element
// sorted by |stride|, each stride at least the extent of the dimensions before it (every C
// or Fortran array, every slice of one, a transpose). Zero strides, and windows that share
// elements, fail it; so would a rare interleaving that does not overlap (then CPython runs).
bool may_overlap_itself(const ArrayView& a, Py_ssize_t itemsize) {
  std::vector<std::pair<Py_ssize_t, Py_ssize_t>> dims;  // |stride|, length
  for (int d = 0; d < a.ndim; d++) {
    if (a.shape[d] == 0) return false;
    if (a.shape[d] > 1) dims.push_back({a.strides[d] < 0 ? -a.strides[d] : a.strides[d], a.shape[d]});
  }
  std::sort(dims.begin(), dims.end());
  Py_ssize_t extent = itemsize;
  for (auto& [st, n] : dims) {
    if (st < extent) return true;
    extent = st * (n - 1) + extent;
  }
  return false;
}

// A live-in value: its Type and the key words that decide it.
struct Described {
  TypeRef type;
  uint64_t k1 = 0, k2 = 0;
  std::vector<uint64_t> extra;  // more key words (a tuple's item types)
  std::string why;  // set when stagepy cannot take this value
  bool by_type = false;  // why depends on the value's type alone
};

Described describe(PyObject* v, const ir::Var& var) {
  Described d;
  if (!v) {
    d.type = types::unbound();
    return d;
  }
  PyTypeObject* t = Py_TYPE(v);
  d.k1 = (uint64_t)(uintptr_t)t;
  DType dt;
  if (t == &PyLong_Type) d.type = types::py_int();
  else if (t == &PyFloat_Type) d.type = types::py_float();
  else if (t == &PyComplex_Type) d.type = types::py_complex();
  else if (t == &PyBool_Type) d.type = types::py_bool();
  else if (v == Py_None) d.type = types::none();
  else if (np::scalar_dtype(v, &dt)) d.type = types::np_scalar(dt);
  else if (np::is_ndarray(v)) {
    d.k2 = np::array_key(v);
    d.type = np::array_type(v, &d.why);
    if (!d.type) d.why = "`" + var.name + "` is " + d.why;
  } else if (t == &PyTuple_Type) {
    Py_ssize_t n = PyTuple_GET_SIZE(v);
    d.k2 = (uint64_t)n;
    std::vector<TypeRef> items;
    for (Py_ssize_t i = 0; i < n && n <= 16; i++) {
      PyObject* x = PyTuple_GET_ITEM(v, i);
      PyTypeObject* xt = Py_TYPE(x);
      d.extra.push_back((uint64_t)(uintptr_t)xt);
      if (xt == &PyLong_Type) items.push_back(types::py_int());
      else if (xt == &PyFloat_Type) items.push_back(types::py_float());
      else if (xt == &PyBool_Type) items.push_back(types::py_bool());
      else if (np::scalar_dtype(x, &dt)) items.push_back(types::np_scalar(dt));
      else break;
    }
    if ((Py_ssize_t)items.size() == n && n <= 16) d.type = types::tuple(items);
    else d.why = "`" + var.name + "` is a tuple of other things than numbers";
  } else if (PyModule_CheckExact(v)) {
    d.k2 = (uint64_t)(uintptr_t)v;
    const char* name = PyModule_GetName(v);
    if (!name) PyErr_Clear();
    d.type = types::module(name ? name : "?");
  } else if (PyMethod_Check(v) && known_callable(v) == Builtin::None_ && registered_numpy_random_now()) {
    return describe(v, var);  // (np.random's functions, known from now on)
  } else if (Builtin b = known_callable(v); b != Builtin::None_) {
    d.k2 = (uint64_t)(uintptr_t)v;
    d.type = types::callable(b);
    if (b >= Builtin::NpRandomRandom && b <= Builtin::NpRandomExponential && !numpy_random_intact()) {
      d.type = nullptr;
      d.why = "uses `" + var.name + "`, and np.random's generator is another than stagepy checked, or another "
              "thread is drawing from it";
    }
    if (b >= Builtin::RandomRandom && b < Builtin::RandomBelow && !random_methods_intact()) {
      d.type = nullptr;
      d.why = "uses `" + var.name + "`, and the random module's generator has methods (or the module the helpers "
              "gauss() and others call) other than the ones stagepy checked";
    }
  } else if (plain_object(v)) {
    d.type = types::object(t->tp_name);  // k1, its exact type, guards its class
  } else {
    std::string what = t->tp_name;
    if (PyFunction_Check(v)) what = "the Python function `" + var.name + "`";
    else if (PyMethod_Check(v)) what = "a method";
    else if (PyList_Check(v)) what = "a subclass of list";
    else if (PyTuple_Check(v)) what = "a tuple";
    else if (PyComplex_Check(v)) what = "a complex number";
    else what = "a " + what;
    d.why = var.storage == ir::Var::Storage::Attr ? "uses `" + var.name + "`, " + what
                                                  : "`" + var.name + "` is " + what;
    d.by_type = true;
  }
  return d;
}

// The parts of a complex number (Python's, or a NumPy complex scalar).
bool complex_value(PyObject* z, double parts[2]) {
  if (!z) return false;
  if (PyComplex_CheckExact(z)) {
    Py_complex c = PyComplex_AsCComplex(z);
    parts[0] = c.real;
    parts[1] = c.imag;
    return true;
  }
  DType d;
  if (np::scalar_dtype(z, &d) && dtype_is_complex(d)) {
    np::complex_parts(z, d, &parts[0], &parts[1]);
    return true;
  }
  return false;
}

ffi_type* ffi_of(Repr r) {
  switch (r) {
    case Repr::I1: case Repr::I8: return &ffi_type_sint8;
    case Repr::I16: return &ffi_type_sint16;
    case Repr::I32: return &ffi_type_sint32;
    case Repr::I64: return &ffi_type_sint64;
    case Repr::F32: return &ffi_type_float;
    case Repr::F64: return &ffi_type_double;
    case Repr::None: break;
  }
  return &ffi_type_sint64;
}

std::unique_ptr<Specialization> specialize_for(NestState& s, std::vector<uint64_t> key, std::vector<TypeRef> entry,
                                               specialize::FactSet facts, FpMode fp,
                                               std::vector<std::pair<int, int>> overlapping, int threads, bool gpu,
                                               const std::map<int, specialize::Helper>& helpers,
                                               const NestState::Inlined* inl) {
  auto sp = std::make_unique<Specialization>();
  sp->key = std::move(key);
  sp->entry = std::move(entry);
  sp->facts = std::move(facts);
  sp->fp = fp;
  auto code = s.code;
  std::map<int, int> helper_lines = inl ? inl->lines : std::map<int, int>{};
  auto line_of = [code, helper_lines](int offset) {
    if (offset >= ir::kFirstNumberedInlinedOrigin) {
      auto it = helper_lines.find(offset);
      return it == helper_lines.end() ? -1 : it->second;
    }
    for (auto& in : code->instrs)
      if (in.offset == offset) return in.line;
    return -1;
  };
  std::string name = "stagepy_" + std::to_string(next_kernel_id());
  double t0 = now_s();
  specialize::KernelRequest rq;
  rq.nest = &s.lift.nest;
  rq.helpers = helpers;
  rq.entry = sp->entry;
  rq.tag_lists = s.tag_lists;
  rq.empty_lists = s.empty_now;
  rq.oracle = &oracle();
  rq.conds = inl ? inl->conds.get() : s.conds.get();
  rq.inlined = inl ? &inl->nest : nullptr;
  rq.facts = sp->facts;
  rq.fp = fp;
  rq.overlapping_vars = std::move(overlapping);
  rq.threads = threads;
  rq.gpu = gpu;
  rq.reassociate = !strict_fp();
  rq.line_of = line_of;
  rq.name = name;
  sp->kernel = specialize::compile_kernel(rq);
  if (sp->kernel.ok) sp->seq_items = seq_items(sp->kernel.typed.nest, &sp->seq_items_stored);
  if (sp->kernel.ok) {
    s.threads = rq.threads;
    s.loops.resize(s.lift.nest.loops.size());
    for (size_t l = 0; l < s.loops.size() && l < sp->kernel.plan.loops.size(); l++) {
      const auto& lp = sp->kernel.plan.loops[l];
      auto& rec = s.loops[l];
      rec.parallel = false;
      rec.why = lp.why;
      auto il = sp->kernel.interleaved_loops.find((int)l);
      rec.interleaved = il == sp->kernel.interleaved_loops.end() ? 0 : il->second;
      rec.interchanged = false;
      rec.schedule = lp.ordered || lp.interchange ? "in order" : lp.blocks ? "blocks" : "chunks";
      rec.summed.clear();
      for (auto& ar : lp.array_reductions)
        rec.summed += (rec.summed.empty() ? "" : ", ") + s.lift.nest.vars[(size_t)ar.var].name;
    }
    // (Loops of inlined helpers have ids past the nest's own: not in the report.)
    for (int l : sp->kernel.interchanged_loops)
      if ((size_t)l < s.loops.size()) s.loops[(size_t)l].interchanged = true;
    for (int l : sp->kernel.parallel_loops)
      if ((size_t)l < s.loops.size()) s.loops[(size_t)l].parallel = true;
    for (auto& rec : s.loops) rec.gpu_why.clear();
    for (auto& [l, why] : sp->kernel.gpu_refused)
      if ((size_t)l < s.loops.size()) s.loops[(size_t)l].gpu_why = why;
    for (auto* gl : sp->kernel.gpu_loops)
      if ((size_t)gl->loop < s.loops.size()) s.loops[(size_t)gl->loop].gpu.push_back(gl);
    for (auto& [l, why] : sp->kernel.refused_loops)
      if ((size_t)l < s.loops.size()) s.loops[(size_t)l].why = why;
  }
  s.compile_s += now_s() - t0;
  s.infer_s += sp->kernel.infer_s;
  s.codegen_s += sp->kernel.codegen_s;
  s.optimize_s += sp->kernel.optimize_s;
  s.jit_s += sp->kernel.jit_s;
  s.cached += sp->kernel.cached ? 1 : 0;
  if (sp->kernel.tier_up && !sp->kernel.cached) s.tier_ups.push_back(sp->kernel.tier_up);
  s.ptx_s += sp->kernel.ptx_s;
  if (sp->kernel.ok) {
    sp->arg_types.push_back(&ffi_type_pointer);
    for (auto& p : sp->kernel.layout.params) {
      switch (p.kind) {
        // (A tuple's items are scalars too: a float one travels as a double.)
        case KernelParam::Kind::Scalar:
        case KernelParam::Kind::TupleItem: sp->arg_types.push_back(ffi_of(p.repr)); break;
        case KernelParam::Kind::Data: sp->arg_types.push_back(&ffi_type_pointer); break;
        default: sp->arg_types.push_back(&ffi_type_sint64); break;
      }
    }
    if (ffi_prep_cif(&sp->cif, FFI_DEFAULT_ABI, (unsigned)sp->arg_types.size(), &ffi_type_sint32,
                     sp->arg_types.data()) != FFI_OK) {
      sp->kernel.ok = false;
      sp->kernel.reason = "libffi could not describe the kernel's signature";
    }
  }
  return sp;
}

// The variable of `nest` with this storage and name, appended (read at entry) if missing.
int var_named(ir::Nest& nest, ir::Var::Storage storage, const std::string& name, int index) {
  for (size_t v = 0; v < nest.vars.size(); v++)
    if (nest.vars[v].storage == storage && nest.vars[v].name == name && nest.vars[v].index == index) {
      nest.vars[v].read = true;
      return (int)v;
    }
  ir::Var v;
  v.name = name;
  v.storage = storage;
  v.index = index;
  v.read = true;
  nest.vars.push_back(v);
  return (int)nest.vars.size() - 1;
}

// The name of attribute variable `v` (`np.pi` -> "pi"), interned once per nest: dispatch
// reads attributes at every entry. Borrowed; nullptr with an error.
PyObject* attr_name(NestState& s, size_t v) {
  if (s.attr_names.size() < s.lift.nest.vars.size()) s.attr_names.resize(s.lift.nest.vars.size());
  PyRef& n = s.attr_names[v];
  if (!n) {
    const std::string& full = s.lift.nest.vars[v].name;
    n = PyRef::steal(PyUnicode_InternFromString(full.substr(full.rfind('.') + 1).c_str()));
  }
  return n.get();
}

// The attribute columns of list-of-objects variable `v` of `nest` (`p.x`: ir::Nest::columns;
// the lifted nest's or, with helpers, the inlined one's), their names interned once in
// `tables`. nullptr with an error.
const ObjectColumns* object_columns(ObjectTables& tables, const ir::Nest& nest, size_t v) {
  const auto& cols = nest.columns;
  if (tables.names.size() != cols.size()) {
    tables.names.clear();
    tables.of.clear();
    for (const std::string& c : cols) {
      PyRef n = PyRef::steal(PyUnicode_InternFromString(c.c_str()));
      if (!n) return nullptr;
      tables.names.push_back(std::move(n));
    }
  }
  auto [it, fresh] = tables.of.emplace(v, ObjectColumns{});
  if (fresh) {
    for (auto& n : tables.names) it->second.names.push_back(n.get());
    it->second.assigned = nest.columns_assigned;
    it->second.assigned.resize(cols.size(), 0);
    it->second.used = nest.vars[v].columns_used;
    it->second.used.resize(cols.size(), 1);
  }
  return &it->second;
}

constexpr size_t kMaxHelpers = 16;  // distinct functions per nest

// Whether the frame's names (LOAD_NAME) are its globals: module code, not a class body or
// exec(code, g, l) with separate locals.
bool names_are_globals(const FrameRef& f) { return !f.locals || f.locals == f.globals; }

// A function of another module's (an imported class's method, a helper from a module of
// the user's), inlined where the globals it reads are what the caller's module has under
// those names (the nest reads them from its own frame), and the nest assigns none of them.
// "" or why not; -1 in *err with a Python error set.
std::string same_globals(PyObject* fn, const HelperEntry& h, const FrameRef& f, const std::vector<ir::Var>& vars,
                         int* err) {
  *err = 0;
  const analysis::HelperBody& b = *h.body;
  PyObject* fglobals = PyFunction_GET_GLOBALS(fn);
  PyObject* fbuiltins = ((PyFunctionObject*)fn)->func_builtins;
  for (size_t k = 0; k < b.globals.size(); k++) {
    if (k < b.builtin.size() && b.builtin[k]) continue;  // (a desugared loop's `len`: the builtins module's)
    PyRef name = PyRef::steal(PyUnicode_FromString(b.globals[k].c_str()));
    if (!name) return *err = -1, "";
    auto find = [&](PyObject* g, PyObject* bi) -> PyObject* {
      PyObject* x = g && PyDict_Check(g) ? PyDict_GetItemWithError(g, name.get()) : nullptr;
      if (!x && !PyErr_Occurred() && bi && PyDict_Check(bi)) x = PyDict_GetItemWithError(bi, name.get());
      return x;
    };
    PyObject* theirs = find(fglobals, fbuiltins);
    if (PyErr_Occurred()) return *err = -1, "";
    PyObject* mine = f.locals && f.locals != f.globals && PyDict_Check(f.locals)
                         ? PyDict_GetItemWithError(f.locals, name.get())
                         : nullptr;
    if (!mine && !PyErr_Occurred()) mine = find(f.globals, f.builtins);
    if (PyErr_Occurred()) return *err = -1, "";
    if (!theirs || mine != theirs)
      return "it is defined in another module, and reads `" + b.globals[k] +
             "`, which is not the same object in the calling module";
    const int gv = k < h.global_vars.size() ? h.global_vars[k] : -1;
    if (gv >= 0 && vars[(size_t)gv].assigned)
      return "it is defined in another module, and reads `" + b.globals[k] + "`, which the loop assigns";
  }
  return "";
}

// The names of the methods a helper's body calls on its first parameter (`self.move(dt)`).
std::set<std::string> self_method_names(const analysis::HelperBody& b) {
  std::set<std::string> names;
  auto note = [&](const ir::Expr& x) {
    if (x->kind == ir::ExprNode::Kind::Call && x->name.empty() && !x->args.empty() &&
        x->args[0]->kind == ir::ExprNode::Kind::Attr && x->args[0]->args[0]->kind == ir::ExprNode::Kind::Load &&
        x->args[0]->args[0]->var == 0 && b.nparams > 0)
      names.insert(x->args[0]->name);
  };
  if (b.body) ir::walk_expr(b.body, note);
  if (b.statements) ir::for_each_expr(b.statements->root, note);
  return names;
}

// A helper's calls of methods on a local its statements give only items of one list: an
// attribute of its first parameter (`for b in self.bodies: e += b.kinetic()`) or a parameter
// (`def advance(ps, dt): for p in ps: p.update(dt)`): per call, its origin, that attribute's
// name or that parameter, and the method's.
std::vector<HelperEntry::ItemCall> item_method_calls(const analysis::HelperBody& b) {
  std::vector<HelperEntry::ItemCall> out;
  if (!b.statements || b.nparams < 1) return out;
  using K = ir::ExprNode::Kind;
  // `self.a[...]`: {"a", -1}; `ps[...]` of parameter k: {"", k}; else {"", -1}.
  auto list_of = [&](const ir::Expr& e) -> std::pair<std::string, int> {
    if (!e || e->kind != K::Subscript || !e->name.empty() || e->unpack != 0) return {"", -1};
    const ir::Expr& l = e->args[0];
    if (l->kind == K::Attr && l->args[0]->kind == K::Load && l->args[0]->var == 0) return {l->name, -1};
    if (l->kind == K::Load && l->var >= 0 && l->var < b.nparams) return {"", l->var};
    return {"", -1};
  };
  std::map<int, std::pair<std::string, int>> source;  // local -> the list whose items it is given
  std::set<int> other;
  ir::for_each_stmt(b.statements->root, [&](const ir::Stmt& s) {
    if (s->kind == ir::StmtNode::Kind::For && s->var >= 0) other.insert(s->var);
    for (auto& f : s->effects) {
      if (f.kind != ir::Effect::Kind::Assign || f.var < 0) continue;
      const auto l = list_of(f.value);
      auto [it, fresh] = source.emplace(f.var, l);
      if ((l.first.empty() && l.second < 0) || (!fresh && it->second != l)) other.insert(f.var);
    }
  });
  // (Parameters the body assigns hold other lists by then.)
  std::set<int> assigned;
  ir::collect_assigned(b.statements->root, &assigned);
  ir::for_each_expr(b.statements->root, [&](const ir::Expr& x) {
    if (x->kind != K::Call || !x->name.empty() || x->args.empty() || x->args[0]->kind != K::Attr) return;
    const ir::Expr& o = x->args[0]->args[0];
    if (o->kind != K::Load || o->var < b.nparams || other.count(o->var)) return;
    auto it = source.find(o->var);
    if (it == source.end()) return;
    if (!it->second.first.empty()) out.push_back({x->origin, it->second.first, x->args[0]->name, -1});
    else if (it->second.second >= 0 && !assigned.count(it->second.second))
      out.push_back({x->origin, "", x->args[0]->name, it->second.second});
  });
  return out;
}

// The attributes a helper's body reads of its first parameter (`self.dt`), not those it
// calls (`self.move(dt)`).
std::set<std::string> self_attribute_names(const analysis::HelperBody& b) {
  std::set<std::string> names, called;
  auto note = [&](const ir::Expr& x) {
    using K = ir::ExprNode::Kind;
    if (x->kind == K::Call && !x->args.empty() && x->args[0]->kind == K::Attr) called.insert(x->args[0].get()->name);
    if (x->kind == K::Attr && x->args[0]->kind == K::Load && x->args[0]->var == 0 && b.nparams > 0)
      names.insert(x->name);
  };
  if (b.body) ir::walk_expr(b.body, note);
  if (b.statements) ir::for_each_expr(b.statements->root, note);
  for (auto& c : called) names.erase(c);
  return names;
}

// Per variable of `n` below fresh.size(): whether a store of `n` has it as its root
// (NestState::stored); `unknown` where some store's root is a variable the nest assigns or
// gives a fresh value, or no variable.
void find_stored(const ir::Nest& n, const std::vector<uint8_t>& fresh, std::vector<uint8_t>* stored, bool* unknown) {
  const size_t nv = fresh.size();
  stored->assign(nv, 0);
  *unknown = false;
  ir::for_each_stmt(n.root, [&](const ir::Stmt& x) {
    for (auto& e : x->effects) {
      if (e.kind != ir::Effect::Kind::Store) continue;
      const int r = ir::root_var(e.base);
      if (r < 0 || (size_t)r >= nv || fresh[(size_t)r] || n.vars[(size_t)r].assigned) *unknown = true;
      else (*stored)[(size_t)r] = 1;
    }
  });
}

// A Method variable's function (bind_methods.h): the one plain Python function that the
// method's name finds on every object it may be called on, a new reference in *out. Nothing
// where those are no plain objects (a list's `append`: the call stays a call), or where a
// list of them is empty; `why` where they are plain objects on which the call is not one
// function's. -1 with an error set.
int method_for_objects(const std::vector<PyRef>& vals, const ir::Var& m, PyObject** out, std::string* why) {
  *out = nullptr;
  PyRef name = PyRef::steal(PyUnicode_InternFromString(m.method.c_str()));
  if (!name) return -1;
  PyObject* found = nullptr;
  PyTypeObject* found_on = nullptr;  // the class it was found on (its other objects: fewer checks)
  // One receiver: 1 to go on, 0 to stop (no such function), -1 on error.
  auto one = [&](PyObject* o) -> int {
    if (found && Py_TYPE(o) == found_on) {
      const int own = method_shadowed(o, name.get(), found);
      if (own > 0) *why = "calls `" + m.name + "`, which is an attribute of the object itself, not its class's method";
      if (own != 0) found = nullptr;
      return own == 0 ? 1 : own > 0 ? 0 : -1;
    }
    PyObject* fn = nullptr;
    std::string no;
    const int r = method_function(o, name.get(), &fn, &no);
    if (r <= 0) {
      if (r == 0 && !no.empty()) *why = "calls `" + m.name + "`, which " + no;
      found = nullptr;
      return r;
    }
    if (found && found != fn) {
      *why = "calls `" + m.name + "`, a different function for different objects";
      found = nullptr;
      return 0;
    }
    found = fn;
    found_on = Py_TYPE(o);
    return 1;
  };
  for (int src : m.method_sources) {
    PyObject* x = vals[(size_t)src].get();
    if (!x) return 0;
    if (!m.method_on_items) {
      const int r = one(x);
      if (r <= 0) return r;
      continue;
    }
    if (!PyList_CheckExact(x) && !PyTuple_CheckExact(x)) return 0;
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(x);
    for (Py_ssize_t i = 0; i < n; i++) {
      const int r = one(PySequence_Fast_GET_ITEM(x, i));
      if (r <= 0) return r;
    }
  }
  *out = Py_XNewRef(found);
  return 0;
}

// The plain Python function `fn` the nest calls, lifted for inlining the first time its
// code object is seen; the globals its body reads (and their attributes, `math.sqrt`)
// become variables of the nest, read at every entry like the nest's own. nullptr with
// `why` when it cannot be inlined; nullptr with a Python error on failure.
HelperEntry* helper_for(NestState& s, PyObject* fn, const FrameRef& f, std::string* why) {
  // (A twin's globals are stagepy's: it reads none but builtins, which the nest guards. A
  // function of another module's is checked at each call: same_globals.)
  const bool twin = is_twin(fn);
  PyObject* code = PyFunction_GET_CODE(fn);
  for (auto& h : s.helpers)
    if (h->code.get() == code) {
      *why = h->reason;
      return h->reason.empty() ? h.get() : nullptr;
    }
  if (s.helpers.size() >= kMaxHelpers) {
    *why = "the nest has seen too many different functions";
    return nullptr;
  }
  auto h = std::make_unique<HelperEntry>();
  h->code = PyRef::borrow(code);
  PyObject* fname = ((PyCodeObject*)code)->co_filename;
  const char* u = fname && PyUnicode_Check(fname) ? PyUnicode_AsUTF8(fname) : nullptr;
  if (!u) PyErr_Clear();
  h->in_caller_file = u && s.filename == u;
  PyObject* info_fn = helper_info_fn();
  if (!info_fn) {
    h->reason = "stagepy cannot read its bytecode";
  } else {
    PyRef r = PyRef::steal(PyObject_CallOneArg(info_fn, fn));
    if (!r) return nullptr;
    if (PyUnicode_Check(r.get())) {
      const char* msg = PyUnicode_AsUTF8(r.get());
      if (!msg) return nullptr;
      h->reason = msg;
    } else {
      PyObject* info = nullptr;
      int nparams = 0, posonly = 0;
      PyObject* names = nullptr;
      if (!PyArg_ParseTuple(r.get(), "O!i|iO!", &CodeInfoType, &info, &nparams, &posonly, &PyTuple_Type, &names))
        return nullptr;
      const analysis::CodeInfo& ci = *((CodeInfoObject*)info)->info;
      for (Py_ssize_t k = 0; names && k < PyTuple_GET_SIZE(names); k++) {
        const char* u = PyUnicode_Check(PyTuple_GET_ITEM(names, k)) ? PyUnicode_AsUTF8(PyTuple_GET_ITEM(names, k)) : nullptr;
        if (!u) return nullptr;
        h->params.push_back(u);
      }
      h->posonly = posonly;
      auto body = std::make_shared<analysis::HelperBody>(analysis::lift_helper(ci, nparams));
      if (!body->ok) h->reason = body->reason;
      if (body->ok) {
        h->self_methods = self_method_names(*body);
        h->self_attributes = self_attribute_names(*body);
        h->item_calls = item_method_calls(*body);
      }
      h->body = std::move(body);
    }
  }
  if (h->reason.empty()) {
    ir::Nest& nest = s.lift.nest;
    const analysis::HelperBody& b = *h->body;
    // A twin's globals are builtins (`len`): the builtins module's, never a global of the
    // caller's module that happens to share the name. In module code whose names are the
    // module's globals, a global the function reads is the nest's own name of it: one
    // variable, so the function sees what the nest assigned (`best = v` in the loop,
    // `return v > best` in the function); with separate locals (exec(code, g, l)), two. Which
    // of the two is kept for later entries, whose frames must agree (NestState::names_mode).
    const bool module_names = names_are_globals(f);
    for (size_t k = 0; k < b.globals.size(); k++) {
      const bool builtin = twin || (k < b.builtin.size() && b.builtin[k]);
      int v = -1;
      if (!builtin)
        for (size_t w = 0; w < nest.vars.size() && v < 0; w++)
          if (nest.vars[w].storage == ir::Var::Storage::Name && nest.vars[w].name == b.globals[k]) v = (int)w;
      if (v >= 0) s.names_mode = module_names ? 1 : 0;
      if (v >= 0 && module_names) {
        nest.vars[(size_t)v].read = true;
      } else {
        v = var_named(nest, builtin ? ir::Var::Storage::Builtin : ir::Var::Storage::Global, b.globals[k], -1);
      }
      h->global_vars.push_back(v);
    }
    const int first_local = b.nparams + (int)b.globals.size();
    auto attr = [&](const ir::Expr& x) {
      if (x->kind != ir::ExprNode::Kind::Attr || x->args[0]->kind != ir::ExprNode::Kind::Load ||
          x->args[0]->var < b.nparams || x->args[0]->var >= first_local)
        return;
      int base = h->global_vars[(size_t)(x->args[0]->var - b.nparams)];
      var_named(nest, ir::Var::Storage::Attr, nest.vars[(size_t)base].name + "." + x->name, base);
    };
    ir::walk_expr(b.body, attr);
    if (b.statements) ir::for_each_expr(b.statements->root, attr);
  }
  s.helpers.push_back(std::move(h));
  HelperEntry* e = s.helpers.back().get();
  *why = e->reason;
  return e->reason.empty() ? e : nullptr;
}

// The nest with its helpers inlined, and its static stage, for the set of helpers `key`
// names (each: its variable, function, code, defaults): the model built before the helpers
// were known has none of their element reads and no facts about their operations, so the
// analysis runs again on the inlined nest, whose reads and operations have origins of their
// own (inline_helpers.h).
// Made once per set (at most kMaxInlined kept; the nest's variables must not have grown
// since: Temps are numbered after them).
constexpr size_t kMaxInlined = 8;
NestState::Inlined* inlined_for(NestState& s, const std::vector<uint64_t>& key,
                                      const std::map<int, specialize::Helper>& helpers) {
  for (auto& x : s.inlined)
    if (x->key == key && x->nvars == s.lift.nest.vars.size()) return x.get();
  if (s.inlined.size() >= kMaxInlined) {
    s.last_conds = nullptr, s.last_nest = nullptr;  // (they may be the erased set's)
    s.inlined.erase(s.inlined.begin());
  }
  auto x = std::make_unique<NestState::Inlined>();
  x->key = key;
  x->nvars = s.lift.nest.vars.size();
  double t0 = now_s();
  specialize::InlineResult r = specialize::inline_helpers(s.lift.nest, helpers, true, true);
  if (!r.ok) {
    x->reason = r.reason;
  } else {
    x->nest = std::move(r.nest);
    if (std::all_of(helpers.begin(), helpers.end(), [](auto& vh) { return vh.second.in_caller_file; }))
      x->lines = std::move(r.lines);
    const std::string name = s.function + ":" + std::to_string(s.line);
    if (debug_level() > 0) debug_dump("inline_helpers (for the analysis): " + name, ir::to_string(x->nest));
    x->conds = std::make_unique<analysis::NestConditions>(specialize::first_sight(x->nest, name));
  }
  s.analysis_s += now_s() - t0;
  s.inlined.push_back(std::move(x));
  return s.inlined.back().get();
}

// The static stage for this call: the nest's (or, with helpers, the inlined nest's); where
// variables hold ragged lists, the one whose model gives their rows no one length, made at
// the first such call. Every variable the nest assigns may come to hold such a list too.
const analysis::NestConditions& conditions_for(NestState& s, NestState::Inlined* inl,
                                               const std::vector<Described>& descs) {
  std::vector<int> ragged;
  for (size_t v = 0; v < descs.size(); v++)
    if (descs[v].type && descs[v].type->kind == Type::Kind::Array && descs[v].type->ragged) ragged.push_back((int)v);
  if (ragged.empty()) return inl ? *inl->conds : *s.conds;
  NestState::RaggedConds& m = inl ? inl->ragged_conds : s.ragged_conds;
  std::unique_ptr<analysis::NestConditions>& c = m[ragged];
  if (!c) {
    const ir::Nest& nest = inl ? inl->nest : s.lift.nest;
    std::set<int> vars(ragged.begin(), ragged.end());
    for (size_t v = 0; v < nest.vars.size(); v++)
      if (nest.vars[v].assigned) vars.insert((int)v);
    const double t0 = now_s();
    c = std::make_unique<analysis::NestConditions>(
        specialize::first_sight(nest, s.function + ":" + std::to_string(s.line) + " (ragged lists)", vars));
    s.analysis_s += now_s() - t0;
  }
  return *c;
}

// A helper's default value as a constant of the kernel, with the words that key it (its
// kind and value): Python ints within 64 bits, floats, complex numbers, bools and None
// (exactly those types). nullptr for anything else (a Python error only on failure).
ir::Expr default_constant(PyObject* o, uint64_t bits[3]) {
  ir::ConstValue c;
  bits[1] = bits[2] = 0;
  if (o == Py_None) {
    c.kind = ir::ConstValue::Kind::None;
  } else if (PyBool_Check(o)) {
    c.kind = ir::ConstValue::Kind::Bool;
    c.b = o == Py_True;
    bits[1] = c.b;
  } else if (PyLong_CheckExact(o)) {
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (x == -1 && PyErr_Occurred()) return nullptr;
    if (overflow) return nullptr;
    c.kind = ir::ConstValue::Kind::Int;
    c.i = x;
    bits[1] = (uint64_t)x;
  } else if (PyFloat_CheckExact(o)) {
    c.kind = ir::ConstValue::Kind::Float;
    c.f = PyFloat_AS_DOUBLE(o);
    std::memcpy(&bits[1], &c.f, 8);
  } else if (PyComplex_CheckExact(o)) {
    c.kind = ir::ConstValue::Kind::Complex;
    c.f = PyComplex_RealAsDouble(o);
    c.f2 = PyComplex_ImagAsDouble(o);
    std::memcpy(&bits[1], &c.f, 8);
    std::memcpy(&bits[2], &c.f2, 8);
  } else {
    return nullptr;
  }
  bits[0] = (uint64_t)c.kind;
  return ir::make_const(c, ir::kInlinedOrigin);
}

// Boxes a state slot's value as the Python object of type `t`. New reference.
PyObject* box(const TypeRef& t, uint64_t bits) {
  switch (t->kind) {
    case Type::Kind::PyBool: return PyBool_FromLong((long)(bits & 1));
    case Type::Kind::PyInt: return PyLong_FromLongLong((long long)bits);
    case Type::Kind::PyFloat: {
      double d;
      std::memcpy(&d, &bits, 8);
      return PyFloat_FromDouble(d);
    }
    case Type::Kind::NpScalar: return np::box_scalar(t->dtype, bits);
    case Type::Kind::None: Py_RETURN_NONE;
    case Type::Kind::PyChar: return PyUnicode_FromOrdinal((int)(bits & 0x1fffff));  // a str of one character
    default: break;
  }
  PyErr_Format(PyExc_SystemError, "stagepy: cannot box a %s", t->str().c_str());
  return nullptr;
}

// The iterators CPython needs to resume at `r`: for each enclosing for loop, a range
// iterator positioned after its current value (on it, for a re-entered iteration).
// The value a desugared loop's sequence expression (a variable or an attribute of one)
// has now, after the write-back: the object the loop iterates (its names are not assigned
// inside the loop).
PyObject* sequence_now(const FrameRef& f, const ir::Nest& nest, const ir::Expr& e) {
  using K = ir::ExprNode::Kind;
  switch (e->kind) {
    case K::Load:
    case K::Attr: {
      bool attr = e->kind == K::Attr;
      const ir::Var& v = nest.vars[(size_t)(attr ? e->args[0]->var : e->var)];
      PyObject* val = nullptr;
      std::string why;
      if (read_variable(f, v, &val, &why) < 0) return nullptr;
      PyRef base = PyRef::steal(val);
      if (base && attr && (e->name == "ravel()" || (e->name == "flat" && np::is_ndarray(base.get())))) {
        // `A.ravel()`, `A.flat` of an array (lift.cpp): A.ravel(), a view of A (C-contiguous,
        // as the kernel's key says), whose iterator yields what the loop's did from there.
        return PyObject_CallMethod(base.get(), "ravel", nullptr);
      }
      if (base && attr) {
        PyRef name = PyRef::steal(PyUnicode_FromString(e->name.c_str()));
        if (!name || read_attribute(base.get(), v, name.get(), &val, &why) < 0) return nullptr;
        base = PyRef::steal(val);
      }
      if (!base) PyErr_Format(PyExc_SystemError, "stagepy: the sequence of a loop is gone (%s)", why.c_str());
      return base.release();
    }
    // A slice of one (lift.cpp, sequence_expr): its bounds are numbers and variables.
    // (and a tuple constant's items: `for d in (-1, 0.5, True)`).
    case K::Const:
      switch (e->value.kind) {
        case ir::ConstValue::Kind::Int: return PyLong_FromLongLong(e->value.i);
        case ir::ConstValue::Kind::Bool: return PyBool_FromLong(e->value.b);
        case ir::ConstValue::Kind::Float: return PyFloat_FromDouble(e->value.f);
        case ir::ConstValue::Kind::Complex: return PyComplex_FromDoubles(e->value.f, e->value.f2);
        case ir::ConstValue::Kind::Char: return PyUnicode_FromOrdinal((int)e->value.i);
        case ir::ConstValue::Kind::None: return Py_NewRef(Py_None);
      }
      return Py_NewRef(Py_None);
    case K::Unary: {
      PyRef x = PyRef::steal(sequence_now(f, nest, e->args[0]));
      return x ? PyNumber_Negative(x.get()) : nullptr;
    }
    case K::Binary: {
      PyRef x = PyRef::steal(sequence_now(f, nest, e->args[0]));
      PyRef y = x ? PyRef::steal(sequence_now(f, nest, e->args[1])) : PyRef();
      if (!y) return nullptr;
      return e->binop == ir::BinOp::Add   ? PyNumber_Add(x.get(), y.get())
             : e->binop == ir::BinOp::Sub ? PyNumber_Subtract(x.get(), y.get())
                                          : PyNumber_Multiply(x.get(), y.get());
    }
    case K::Slice:
    case K::Tuple: {
      std::vector<PyRef> parts;
      for (auto& a : e->args) {
        parts.push_back(PyRef::steal(sequence_now(f, nest, a)));
        if (!parts.back()) return nullptr;
      }
      if (e->kind == K::Slice)
        return PySlice_New(parts[0].get(), parts.size() > 1 ? parts[1].get() : nullptr,
                           parts.size() > 2 ? parts[2].get() : nullptr);
      PyRef t = PyRef::steal(PyTuple_New((Py_ssize_t)parts.size()));
      if (!t) return nullptr;
      for (size_t k = 0; k < parts.size(); k++) PyTuple_SET_ITEM(t.get(), (Py_ssize_t)k, parts[k].release());
      return t.release();
    }
    case K::Subscript: {
      PyRef base = PyRef::steal(sequence_now(f, nest, e->args[0]));
      PyRef index = base ? PyRef::steal(sequence_now(f, nest, e->args[1])) : PyRef();
      return index ? PyObject_GetItem(base.get(), index.get()) : nullptr;
    }
    default:
      PyErr_SetString(PyExc_SystemError, "stagepy: a loop over a sequence it cannot evaluate");
      return nullptr;
  }
}

// it.__setstate__(state): 0, or -1 with the exception set.
int set_state(PyObject* it, int64_t state) {
  PyRef p = PyRef::steal(PyLong_FromLongLong(state));
  if (!p) return -1;
  PyRef r = PyRef::steal(PyObject_CallMethod(it, "__setstate__", "O", p.get()));
  return r ? 0 : -1;
}

// iter(seq) moved on to position `pos`: the iterator CPython's loop would hold.
PyObject* iterator_at(PyObject* seq, int64_t pos) {
  PyRef it = PyRef::steal(PyObject_GetIter(seq));
  if (!it) return nullptr;
  if (pos <= 0 || set_state(it.get(), pos) == 0) return it.release();
  if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return nullptr;
  PyErr_Clear();  // an iterator without __setstate__ (memoryview's): step it
  for (int64_t i = 0; i < pos; i++) {
    PyRef x = PyRef::steal(PyIter_Next(it.get()));
    if (!x) return PyErr_Occurred() ? nullptr : it.release();
  }
  return it.release();
}

// reversed(seq) whose next item is seq[index] (-1: none left): CPython's reversed
// iterators (a list's, and the generic one over __len__ and __getitem__) take their index
// by __setstate__.
PyObject* reversed_at(PyObject* seq, int64_t index) {
  PyRef it = PyRef::steal(PyObject_CallOneArg((PyObject*)&PyReversed_Type, seq));
  if (!it || set_state(it.get(), index) < 0) return nullptr;
  return it.release();
}

// The iterators of the loops enclosing resume point `r`, rebuilt from the kernel's loop
// state: range(next, stop, step), or for a desugared loop iter(seq) at its position
// (inside enumerate() or zip() where the loop had them).
PyObject* iterators_for(const NestState& s, const specialize::Kernel& k, int r, const std::vector<int64_t>& state,
                        const FrameRef& f) {
  const ir::ResumePoint& rp = s.lift.nest.resumes[r];
  size_t n = rp.loops.size();
  PyRef tuple = PyRef::steal(PyTuple_New((Py_ssize_t)n));
  if (!tuple) return nullptr;
  for (size_t i = 0; i < n; i++) {
    int loop = rp.loops[i];
    int slot = k.layout.loop_slot[loop];
    if (debug_level() > 0)
      debug_dump("resume", "at resume point " + std::to_string(r) + " (offset " + std::to_string(rp.offset) + ", line " +
                               std::to_string(rp.line) + "): loop L" + std::to_string(loop) + " cur " +
                               std::to_string(state[slot]) + " stop " + std::to_string(state[slot + 1]) + " step " +
                               std::to_string(state[slot + 2]));
    bool here = rp.reenter && i == n - 1;
    const int64_t next = here ? state[slot] : state[slot] + state[slot + 2];
    const ir::LoopInfo& info = s.lift.nest.loops[(size_t)loop];
    PyObject* it = nullptr;
    if (info.iter == ir::StmtNode::Iter::Range) {
      PyRef start = PyRef::steal(PyLong_FromLongLong(next));
      PyRef stop = PyRef::steal(PyLong_FromLongLong(state[slot + 1]));
      PyRef step = PyRef::steal(PyLong_FromLongLong(state[slot + 2]));
      if (!start || !stop || !step) return nullptr;
      PyRef range = PyRef::steal(PyObject_CallFunctionObjArgs((PyObject*)&PyRange_Type, start.get(), stop.get(), step.get(), nullptr));
      if (!range) return nullptr;
      it = PyObject_GetIter(range.get());
    } else {
      const int64_t pos = next - info.start;  // enumerate's loop variable counts from start
      PyRef its = PyRef::steal(PyTuple_New((Py_ssize_t)info.over.size()));
      if (!its) return nullptr;
      for (size_t q = 0; q < info.over.size(); q++) {
        PyRef seq = PyRef::steal(sequence_now(f, s.lift.nest, info.over[q]));
        if (!seq) return nullptr;
        PyObject* one = info.backward ? reversed_at(seq.get(), next) : iterator_at(seq.get(), pos);
        if (!one) return nullptr;
        PyTuple_SET_ITEM(its.get(), (Py_ssize_t)q, one);
      }
      if (info.iter == ir::StmtNode::Iter::Seq) {
        it = Py_NewRef(PyTuple_GET_ITEM(its.get(), 0));
      } else if (info.iter == ir::StmtNode::Iter::Enumerate) {
        PyRef count = PyRef::steal(PyLong_FromLongLong(next));
        if (!count) return nullptr;
        PyRef inner;
        if (info.zipped) {
          inner = PyRef::steal(PyObject_Call((PyObject*)&PyZip_Type, its.get(), nullptr));
          if (!inner) return nullptr;
        } else {
          inner = PyRef::borrow(PyTuple_GET_ITEM(its.get(), 0));
        }
        it = PyObject_CallFunctionObjArgs((PyObject*)&PyEnum_Type, inner.get(), count.get(), nullptr);
      } else {
        it = PyObject_Call((PyObject*)&PyZip_Type, its.get(), nullptr);
      }
    }
    if (!it) return nullptr;
    PyTuple_SET_ITEM(tuple.get(), (Py_ssize_t)(n - 1 - i), it);  // innermost first: it ends on top
  }
  return tuple.release();
}

// The one length of the lists class `k` of the made lists holds during this call, where its
// sources (made_lengths.h) agree on one; else nothing (its subscripts keep their checks).
std::optional<int64_t> made_class_length(const analysis::NestConditions& c, size_t k, const std::vector<PyRef>& vals,
                                         const std::vector<Described>& descs, const std::vector<ArrayView>& views,
                                         int depth = 0) {
  const analysis::MadeListClass& mc = c.made_classes[k];
  if (!mc.known || depth > 8) return std::nullopt;
  auto bound = [&](int v) { return (size_t)v < vals.size() && vals[(size_t)v]; };
  auto list_length = [&](int v) -> std::optional<int64_t> {
    const TypeRef& t = descs[(size_t)v].type;
    if (!t || t->kind != Type::Kind::Array || views[(size_t)v].ndim < 1) return std::nullopt;
    return (int64_t)views[(size_t)v].shape[0];
  };
  for (int f : mc.len_callees) {
    if (!bound(f)) return std::nullopt;
    const TypeRef& t = descs[(size_t)f].type;
    if (!t || t->kind != Type::Kind::Callable || t->builtin != Builtin::Len) return std::nullopt;
  }
  std::optional<int64_t> length;
  for (const analysis::MadeLengthSource& s : mc.sources) {
    std::optional<int64_t> n;
    switch (s.kind) {
      case analysis::MadeLengthSource::Kind::Entry: {
        if (!bound(s.var)) continue;  // unbound: reading it first raises, and CPython does that
        const TypeRef& t = descs[(size_t)s.var].type;
        if (!t || t->kind != Type::Kind::Array || !t->pylist || views[(size_t)s.var].ndim != 1) return std::nullopt;
        n = list_length(s.var);
        break;
      }
      case analysis::MadeLengthSource::Kind::Class:
        n = made_class_length(c, (size_t)s.var, vals, descs, views, depth + 1);
        break;
      case analysis::MadeLengthSource::Kind::Count: {
        __int128 x = s.constant;
        for (auto& t : s.terms) {
          if (!bound(t.var)) return std::nullopt;
          int64_t v;
          if (t.len) {
            std::optional<int64_t> l = list_length(t.var);
            if (!l) return std::nullopt;
            v = *l;
          } else {
            PyObject* o = vals[(size_t)t.var].get();
            if (!PyLong_CheckExact(o)) return std::nullopt;
            int overflow = 0;
            long long y = PyLong_AsLongLongAndOverflow(o, &overflow);
            if (overflow || (y == -1 && PyErr_Occurred())) {
              PyErr_Clear();
              return std::nullopt;
            }
            v = y;
          }
          x += (__int128)t.coef * v;
        }
        if (x < 0) x = 0;  // [x] * -2 == []
        if (x > ((__int128)1 << 62)) return std::nullopt;
        n = (int64_t)x;
        break;
      }
    }
    if (!n || (length && *length != *n)) return std::nullopt;
    length = n;
  }
  return length;
}

// The values of the analysis parameters for this call, and whether the model's
// assumptions (ranks, builtins) hold for the values the variables hold.
specialize::ParamValues param_values(const analysis::NestConditions& c, const std::vector<ir::Var>& vars,
                                     const std::vector<PyRef>& vals, const std::vector<Described>& descs,
                                     const std::vector<ArrayView>& views) {
  specialize::ParamValues p;
  p.values.assign(c.params.size(), 0);
  p.known.assign(c.params.size(), 0);
  auto is_array = [&](int v) { return descs[(size_t)v].type && descs[(size_t)v].type->kind == Type::Kind::Array; };
  // (Conditions of a nest with helpers inlined may name its Temps: variables no frame holds.)
  for (auto& [var, rank] : c.assumptions.array_rank) {
    if ((size_t)var >= descs.size()) return p;
    const TypeRef& t = descs[(size_t)var].type;
    // An attribute variable that holds nothing (`A.shape` of an array: the nest computes
    // the attribute itself) has no elements the nest could access.
    if (vars[(size_t)var].storage == ir::Var::Storage::Attr && (!t || t->kind == Type::Kind::Unbound)) continue;
    // A variable that may hold lists the nest makes holds one-dimensional lists only where
    // a kernel runs (type_infer), whatever it holds at entry (nothing, often).
    if (analysis::made_class_of(c.made_classes, var) >= 0) continue;
    if (!t) return p;
    // An access with fewer indices than the array has dimensions (`X[i]` of a 2-d X) takes
    // a row: the model compares indices by prefix, which covers every element of it.
    if (t->kind == Type::Kind::Array && t->ndim < rank) return p;
    if (t->kind != Type::Kind::Array && t->kind != Type::Kind::Tuple) return p;
  }
  for (auto& [var, name] : c.assumptions.builtins) {
    if ((size_t)var >= descs.size()) return p;
    const TypeRef& t = descs[(size_t)var].type;
    Builtin want = name == "len" ? Builtin::Len : name == "min" ? Builtin::Min : Builtin::Max;
    if (!t || t->kind != Type::Kind::Callable || t->builtin != want) return p;
  }
  // A, where variable `var` is `A.<attr>` of an array A: an attribute the nest computes
  // itself (its attribute variable holds nothing); else -1.
  auto array_attr = [&](size_t var, const char* attr) -> int {
    const ir::Var& pv = vars[var];
    const size_t k = std::strlen(attr);
    if (pv.storage != ir::Var::Storage::Attr || pv.index < 0 || vals[var] || !is_array(pv.index)) return -1;
    if (pv.name.size() <= k || pv.name.compare(pv.name.size() - k, k, attr) != 0) return -1;
    return pv.index;
  };
  // Each class of made lists: its one length for this call, if it has one.
  std::vector<std::optional<int64_t>> made_length;
  for (size_t k = 0; k < c.made_classes.size(); k++) made_length.push_back(made_class_length(c, k, vals, descs, views));
  for (size_t i = 0; i < c.params.size(); i++) {
    const analysis::PolyParam& pp = c.params[i];
    if ((size_t)pp.var >= vals.size()) continue;  // unknown
    if (const int k = analysis::made_class_of(c.made_classes, pp.var);
        pp.kind == analysis::PolyParam::Kind::Extent && k >= 0) {
      // Of a made list: its class's one length, if it has one.
      if (pp.dim == 0 && made_length[(size_t)k]) {
        p.values[i] = *made_length[(size_t)k];
        p.known[i] = 1;
      }
      continue;
    }
    int a = -1;
    if (pp.kind == analysis::PolyParam::Kind::Extent && pp.dim == 0 && (a = array_attr((size_t)pp.var, ".shape")) >= 0) {
      // `A.shape` of an array: a tuple of A's rank.
      p.values[i] = views[(size_t)a].ndim;
      p.known[i] = 1;
      continue;
    }
    if (pp.kind == analysis::PolyParam::Kind::Int && (a = array_attr((size_t)pp.var, ".size")) >= 0) {
      // `A.size` of an array: the product of its extents.
      int64_t n = 1;
      for (int d = 0; d < views[(size_t)a].ndim; d++) n *= (int64_t)views[(size_t)a].shape[d];
      p.values[i] = n;
      p.known[i] = 1;
      continue;
    }
    PyObject* v = vals[(size_t)pp.var].get();
    if (!v) continue;
    if (pp.kind == analysis::PolyParam::Kind::Int) {
      if (!PyLong_CheckExact(v)) continue;
      int overflow = 0;
      long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
      if (overflow || (x == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        continue;
      }
      p.values[i] = x;
      p.known[i] = 1;
      continue;
    }
    // An extent: of the array the variable holds; a variable the nest reassigns may come
    // to hold any live-in array of its type, so all of those must agree.
    if (!is_array((int)pp.var) || views[(size_t)pp.var].ndim <= pp.dim) continue;
    // A ragged list's rows have no one length (its static stage names none: conditions_for).
    if (descs[(size_t)pp.var].type->ragged && pp.dim >= 1) continue;
    int64_t n = (int64_t)views[(size_t)pp.var].shape[pp.dim];
    bool agree = true;
    if (vars[(size_t)pp.var].assigned)
      for (size_t w = 0; w < vars.size(); w++)
        if (vals[w] && is_array((int)w) && types::same(descs[w].type, descs[(size_t)pp.var].type) &&
            (int64_t)views[w].shape[pp.dim] != n)
          agree = false;
    if (!agree) continue;
    p.values[i] = n;
    p.known[i] = 1;
  }
  // `len(prev)` taken as prev's extent: its class must hold lists of one length.
  for (int var : c.assumptions.made_lengths) {
    const int k = analysis::made_class_of(c.made_classes, var);
    if (k < 0 || !made_length[(size_t)k]) return p;
  }
  p.assumptions_hold = true;
  return p;
}

}  // namespace

// A nest whose native runs take less than this on average (as measured here, libffi's
// call and the clock included: about 80 ns of it) does less work than the ~0.5 us call
// into it costs: it is left to CPython (measured again later: NestState::small_retry).
constexpr double kSmallWork_s = 90e-9;
// Above that, up to this: the calls alternate between the kernel and CPython for a while,
// and CPython keeps the nest if it is the faster (support/cost_probe.h).
constexpr double kProbeWork_s = 2e-6;
// Also probed: a nest that spends most of its time reading and writing back lists (a
// 3x3 neighbourhood of a big list of lists converts all of it at every call), up to this
// per call (the probe compares gaps of at most CostProbe::kMaxGap_s).
constexpr double kConvertShare = 0.5, kConvertProbe_s = 1e-3;
// Longer calls are probed too where reading the lists takes this many times the kernel's own
// time or more (a binary search in a 100 000-element list reads all of it to touch 17):
// CPython's loop costs some 30-100 times the kernel's per element it touches, so it may well
// win there. Gaps of such a probe count up to kConvertGapFactor times the native call.
constexpr double kConvertDominates = 50, kConvertGapFactor = 8;
// A nest found too small is measured again after NestState::small_retry calls (4096), then
// after twice as many each time (measuring runs the kernel 64 to 160 times), until a probe
// finds the kernel faster.
constexpr unsigned long long kSmallProbe = 64, kSmallRetryMax = 1ULL << 20;
constexpr unsigned kFailedBeforeSkipping = 3;
constexpr int64_t kKeepScratchBytes = 1 << 20;  // kernels' scratch kept between calls (scratch.h)

// Values the nest cannot run on (a list whose items are of mixed types or hold an int
// beyond 64 bits; values a kernel could not be compiled for): finding that out again costs
// reading them (a list of lists is read whole) on every call, which made a helper called
// once per row quadratic. From the third such call in a row, the next 1, 2, 4... calls go
// to CPython without looking, up to 2**20: the values are then read O(log calls) times.
// (A cap of 1024 left a nest that is called once per vertex and reads every vertex's list
// reading it every 1024 calls: quadratic still.)
constexpr unsigned kMaxSkipDoublings = 20;
PyObject* decline_values(NestState& s, std::string why) {
  if (++s.failed_in_a_row >= kFailedBeforeSkipping)
    s.skip_failing = 1ULL << std::min(s.failed_in_a_row - kFailedBeforeSkipping, kMaxSkipDoublings);
  return decline(s, std::move(why));
}

PyObject* run_nest(NestState& s, const FrameRef& f);

PyObject* dispatch(NestState& s) {
  // Code rewritten while stagepy was enabled keeps its nest entries; after disable() they
  // answer "not handled" and the original loops run.
  if (!hook::enabled()) Py_RETURN_NONE;
  s.calls++;
  if (!s.lift.ok || s.gave_up) {  // (its reason stays)
    s.declined++;
    Py_RETURN_NONE;
  }
  if (s.probe.active()) {
    if (s.probe.enter(now_s())) {  // this call is the probe's interpreted half
      s.declined++;
      Py_RETURN_NONE;
    }
    if (s.probe.done()) {
      s.probe.stop();
      if (s.probe.interpreter_faster()) {
        s.too_small = true;
        s.skipped_small = 0;
        // Measuring again runs the kernel up to some 160 times: first leave CPython at least
        // 20 times that long (a kernel that reads a big list at every call costs milliseconds).
        const double remeasure_s = 160 * s.probe.median_native_s();
        const double interpreted_s = std::max(s.probe.median_interpreted_s(), 1e-7);
        s.small_retry = std::max(s.small_retry, (unsigned long long)std::min(
                                                    (double)kSmallRetryMax, 20 * remeasure_s / interpreted_s));
        char buf[320];
        std::snprintf(buf, sizeof buf,
                      "CPython runs it faster than a call into native code costs%s (%.2f us from one call to the next "
                      "when interpreted, %.2f us when native, on alternate calls)",
                      s.win_convert_s > kConvertShare * s.win_native_s ? ", reading and writing back its lists included" : "",
                      1e6 * s.probe.median_interpreted_s(), 1e6 * s.probe.median_native_s());
        s.status_reason = buf;
        s.declined++;
        Py_RETURN_NONE;
      }
      s.small_retry = NestState::kFirstSmallRetry;
    }
  }
  if (s.too_small) {
    if (++s.skipped_small % s.small_retry != 0) {
      s.declined++;
      Py_RETURN_NONE;
    }
    s.too_small = false;  // measure again; if it is still too small, again after twice as many calls
    s.skipped_small = 0;
    s.small_retry = std::min(2 * s.small_retry, kSmallRetryMax);
    s.win_native_calls = s.win_bailed_calls = 0;
    s.win_native_s = s.win_convert_s = 0;
  }
  if (s.skip_failing > 0) {  // recent calls' values could not be compiled for (below)
    s.skip_failing--;
    s.declined++;
    Py_RETURN_NONE;
  }
  if (!s.user && s.calls < 100) return decline(s, "library code: compiled only once it has run 100 times");
  PyThreadState* ts = PyThreadState_Get();
  FrameRef f;
  if (!caller_frame(&f) || (const void*)f.code != s.owner || f.code->co_nlocalsplus != s.owner_nlocalsplus)
    return decline(s, "called from a frame it was not made for");
  if (being_traced(ts, f.code)) return decline(s, "a tracer or sys.monitoring tool is active");
  if (s.declined_type) {  // the last call declined for this variable's type: the same type, the same answer
    PyObject* val = nullptr;
    std::string why;
    if (read_variable(f, s.lift.nest.vars[(size_t)s.declined_var], &val, &why) < 0) return nullptr;
    PyRef held = PyRef::steal(val);
    if (why.empty() && val && Py_TYPE(val) == s.declined_type &&
        (!s.declined_code || (PyFunction_Check(val) && (const void*)PyFunction_GET_CODE(val) == s.declined_code))) {
      s.declined++;
      Py_RETURN_NONE;
    }
    s.declined_type = nullptr;
  }

  return run_nest(s, f);
}

// A new list of the items a kernel made (made_lists.h; MadeList::kind says their type).
PyObject* made_list_object(const MadeList& m) {
  const DType d = (DType)(m.kind & 255);
  const bool tagged = (m.kind & 256) != 0;
  const int64_t item = tagged ? 16 : dtype_size(d);
  PyRef list = PyRef::steal(PyList_New((Py_ssize_t)m.len));
  if (!list) return nullptr;
  for (int64_t k = 0; k < m.len; k++) {
    PyObject* x = box_list_item(d, tagged, reinterpret_cast<const uint8_t*>(m.data + item * k));
    if (!x) return nullptr;
    PyList_SET_ITEM(list.get(), (Py_ssize_t)k, x);
  }
  return list.release();
}

// flags[v] = value for `var` and every variable it passes lists to or takes them from
// (made_lists.h), growing `flags` as needed.
void mark_class(std::vector<uint8_t>* flags, const ir::Stmt& root, int var, uint8_t value) {
  for (int v : ir::moved_with(root, var)) {
    if ((size_t)v >= flags->size()) flags->resize((size_t)v + 1, 0);
    (*flags)[(size_t)v] = value;
  }
}

// A list read at entry whose length the kernel changed (`L.append(x)`, `L.pop()`): its items
// past the new length go, or the new items come after the old (`m`'s, boxed). Its items
// before both lengths are the buffer's, written back already. -1 with an exception set.
int resize_list_object(PyObject* list, const MadeList& m) {
  const Py_ssize_t n = PyList_GET_SIZE(list);
  if (m.len < n) return PyList_SetSlice(list, (Py_ssize_t)m.len, n, nullptr);
  // (Its items' type as the kernel holds them: an empty list's may not be the buffer's.)
  const DType d = (DType)(m.kind & 255);
  const bool tagged = (m.kind & 256) != 0;
  const int64_t item = tagged ? 16 : dtype_size(d);
  for (int64_t k = n; k < m.len; k++) {
    PyRef x = PyRef::steal(box_list_item(d, tagged, reinterpret_cast<const uint8_t*>(m.data + k * item)));
    if (!x || PyList_Append(list, x.get()) < 0) return -1;
  }
  return 0;
}

// The rest of a call: reads the values of the nest's variables, finds (or makes) their
// specialization, runs it and writes back.
// Variable v's object at write-back where it is a loop's item (seq_items) of a list or tuple
// whose item at the loop's position is a float of v's value: that item (borrowed); else null.
PyObject* seq_item_object(const Specialization& sp, size_t v, const TypeRef& t, const std::vector<int64_t>& state,
                          const KernelLayout& L, const std::vector<PyRef>& vals) {
  if (t->kind != Type::Kind::PyFloat) return nullptr;
  auto it = sp.seq_items.find((int)v);
  if (it == sp.seq_items.end()) return nullptr;
  const SeqItem& si = it->second;
  if (si.seq < 0 || (size_t)si.seq >= vals.size() || si.loop < 0 || (size_t)si.loop >= L.loop_slot.size() ||
      L.loop_slot[(size_t)si.loop] < 0)
    return nullptr;
  PyObject* seq = vals[(size_t)si.seq].get();
  if (!seq || !(PyList_CheckExact(seq) || PyTuple_CheckExact(seq))) return nullptr;
  for (int r : sp.seq_items_stored)  // (S itself changed, under any of its names)
    if (r < 0 || (size_t)r >= vals.size() || vals[(size_t)r].get() == seq) return nullptr;
  const int64_t k = state[(size_t)L.loop_slot[(size_t)si.loop]];  // (its `cur`)
  if (k < 0 || k >= PySequence_Fast_GET_SIZE(seq)) return nullptr;
  PyObject* item = PySequence_Fast_GET_ITEM(seq, (Py_ssize_t)k);
  if (!PyFloat_CheckExact(item)) return nullptr;
  const double d = PyFloat_AS_DOUBLE(item);
  return std::memcmp(&d, &state[(size_t)L.var_slot[v]], 8) == 0 ? item : nullptr;
}

PyObject* run_nest(NestState& s, const FrameRef& f) {
  // CPython looks a name up in a dict subclass through its `__getitem__` at every use (code
  // that may answer anything); the kernel reads names once, from the dict itself.
  if ((f.globals && !PyDict_CheckExact(f.globals)) || (f.builtins && !PyDict_CheckExact(f.builtins)))
    return decline(s, "its globals or builtins are not a dict but a subclass of one (looking a name up may run code)");
  if (s.names_mode >= 0 && s.names_mode != (names_are_globals(f) ? 1 : 0))
    return decline(s, s.names_mode ? "it runs with names that are not its module's globals, and a function it "
                                     "calls reads a global of the same name as one of them"
                                   : "it ran with names apart from its module's globals first, and a function it "
                                     "calls reads a global of the same name as one of them");
  // Read and describe the live-in values.
  // (Functions the nest calls may add variables: the globals their bodies read.)
  const auto& vars = s.lift.nest.vars;
  size_t nv = vars.size();
  std::vector<PyRef> vals(nv);
  std::vector<uint64_t> key;
  key.reserve(2 * nv);
  std::vector<Described> descs(nv);
  std::vector<ArrayView> views(nv);
  // Python lists, read into buffers (one per list object, whichever variables hold it).
  std::vector<std::unique_ptr<ListBuffer>> lists;
  std::unordered_map<PyObject*, ListBuffer*> list_of;
  std::unordered_map<PyObject*, ListBuffer*> seen_lists;
  std::vector<std::pair<ListBuffer*, ListBuffer*>> shared_lists;
  std::vector<ListBuffer*> ragged_list(nv);  // per variable: the ragged list it holds
  std::vector<size_t> lists_later;           // variables holding lists to read into buffers
  s.empty_now.clear();
  // Lists the nest only appends to (Var::appended; a list is held by `vals`) or makes: the
  // items the kernel collects for each, appended to the list object, or made a new list,
  // when the kernel returns.
  AppendedLists appended;
  // The length and item size of each str read (ArrayView points at them: a deque keeps
  // them in place).
  std::deque<std::array<Py_ssize_t, 2>> str_dims;
  // Buffer-protocol objects, held until the kernel is done.
  std::vector<std::unique_ptr<HeldBuffer>> buffers;
  std::unordered_map<PyObject*, HeldBuffer*> buffer_of;
  double convert_s = 0;
  std::map<int, specialize::Helper> helpers;  // variable -> the function it holds, lifted
  if (!s.fresh_known) {
    s.fresh.assign(nv, 0);
    for (const auto& given : {ir::subscript_assigned(s.lift.nest.root), ir::computed_assigned(s.lift.nest.root)})
      for (int v : given)
        if ((size_t)v < nv) s.fresh[(size_t)v] = 1;
    // A variable that may hold lists the nest makes reads the list it holds at entry unless
    // the nest surely assigns it first (`prev = L` before the loop, `prev = [0] * m` at the
    // end of its body: the first iteration reads L).
    for (int v : ir::made_list_vars(s.lift.nest.root, s.lift.nest.vars))
      if ((size_t)v < nv) s.fresh[(size_t)v] = ir::assigned_before_read(s.lift.nest.root, v) ? 1 : 0;
    find_stored(s.lift.nest, s.fresh, &s.stored, &s.stores_unknown);
    s.fresh_known = true;
  }
  for (size_t v = 0; v < nv; v++) {
    if (!vars[v].read) continue;
    PyObject* val = nullptr;
    std::string why;
    if (vars[v].single_of >= 0) {
      // The list of one object whose attributes the nest assigns (`self.total += x`).
      PyObject* o = vals[(size_t)vars[v].single_of].get();
      if (!o) return decline(s, "assigns attributes of `" + vars[v].name + "`, which holds no value");
      PyRef one = PyRef::steal(PyList_New(1));
      if (!one) return nullptr;
      PyList_SET_ITEM(one.get(), 0, Py_NewRef(o));
      vals[v] = std::move(one);
      lists_later.push_back(v);
      continue;
    }
    if (vars[v].storage == ir::Var::Storage::Method) {
      if (method_for_objects(vals, vars[v], &val, &why) < 0) return nullptr;
      // A method of one object (`self.step(dt)`) may assign its attributes: the object's
      // table of one row (attribute_columns.h), read where the inlined nest uses it.
      const int o = vars[v].method_sources[0];
      const auto has_table = [&] {
        return std::any_of(vars.begin(), vars.end(), [&](const ir::Var& x) { return x.single_of == o; });
      };
      if (val && !vars[v].method_on_items && !has_table()) {
        ir::Var t;
        t.name = vars[(size_t)o].name;
        t.storage = ir::Var::Storage::Table;
        t.read = true;
        t.single_of = o;
        s.lift.nest.vars.push_back(std::move(t));
        nv = vars.size();
        vals.resize(nv);
        descs.resize(nv);
        views.resize(nv);
        ragged_list.resize(nv);
      }
    } else if (vars[v].storage == ir::Var::Storage::Attr) {
      PyObject* name = attr_name(s, v);
      PyObject* base = vals[vars[v].index].get();
      if (!name || read_attribute(base, vars[v], name, &val, &why) < 0) return nullptr;
      // A method bound to its object (`self.step` of `self.step(dt)`): no value here; the
      // call is the Method variable's (bind_methods.h), or stays a call that is declined.
      if (val && PyMethod_Check(val) && PyMethod_GET_SELF(val) == base) Py_CLEAR(val);
    } else if (read_variable(f, vars[v], &val, &why) < 0) {
      return nullptr;
    }
    if (!why.empty()) return decline(s, why);
    vals[v] = PyRef::steal(val);
    if (val && PyTuple_CheckExact(val) &&
        (vars[v].objects || (PyTuple_GET_SIZE(val) > 0 && plain_object(PyTuple_GET_ITEM(val, 0))))) {
      // A tuple of objects: a table like a list's, where the nest (its helpers and methods
      // inlined) uses their attributes; else described below, with the lists.
      lists_later.push_back(v);
      continue;
    }
    if (val && vars[v].appended && vars[v].assigned && !PyList_CheckExact(val)) {
      // A variable the nest assigns new lists only (`row = []`) and holding no list at
      // entry holds no value in kernels (a read before the nest assigns it hands the
      // statement to CPython, which finds the value in the frame). A list it holds is one
      // the nest appends to, until it assigns a new one.
      vals[v] = PyRef();
      val = nullptr;
    }
    if (val && v < s.fresh.size() && s.fresh[v] && !vars[v].appended &&
        (PyList_CheckExact(val) || np::is_ndarray(val) || PyUnicode_CheckExact(val) || vars[v].object_row ||
         plain_object(val))) {
      // A variable the nest may give a row (`row = A[i]`), an array it computes
      // (`d = X[i] - X[j]`, its own memory) or a character (`ch = s[i]`) holds only those in
      // kernels: a list, array or str it holds at entry (left by the loop's last run) is not
      // read and counts as no value (a
      // read of it before the nest assigns it hands the statement to CPython, which finds
      // the value in the frame). So does an object (`for p in ps`: the last loop's item).
      vals[v] = PyRef();
      val = nullptr;
    }
    if (val && PyList_CheckExact(val) && vars[v].appended) {
      appended.buffer_for(val);
      descs[v].type = types::appended();
      descs[v].k1 = (uint64_t)(uintptr_t)&PyList_Type;
      descs[v].k2 = 1ULL << 40;  // no dtype or rank: not a list read into a buffer
    } else if (val && PyList_CheckExact(val)) {
      lists_later.push_back(v);  // read once every other value is known to be usable
    } else if (val && PyUnicode_CheckExact(val)) {
      // A str: its code points in place (CPython's 1-, 2- or 4-byte kind), read-only; the
      // kernel compares its characters (Type::Kind::PyChar).
#if PY_VERSION_HEX < 0x030C0000
      if (PyUnicode_READY(val) < 0) return nullptr;
#endif
      const int kind = (int)PyUnicode_KIND(val);
      const DType d = kind == 1 ? DType::UInt8 : kind == 2 ? DType::UInt16 : DType::UInt32;
      str_dims.push_back({PyUnicode_GET_LENGTH(val), (Py_ssize_t)kind});
      descs[v].type = types::py_str(d);
      descs[v].k1 = (uint64_t)(uintptr_t)&PyUnicode_Type;
      descs[v].k2 = (uint64_t)kind;
      views[v] = {PyUnicode_DATA(val), 1, &str_dims.back()[0], &str_dims.back()[1]};
    } else if (val && HeldBuffer::handles(val)) {
      HeldBuffer*& hb = buffer_of[val];
      if (!hb) {
        buffers.push_back(std::make_unique<HeldBuffer>());
        if (!buffers.back()->take(val, &why)) return decline_values(s, "`" + vars[v].name + "` " + why);
        hb = buffers.back().get();
      }
      descs[v].type = types::py_buffer(hb->dtype(), hb->writeable());
      descs[v].k1 = (uint64_t)(uintptr_t)Py_TYPE(val);
      descs[v].k2 = (uint64_t)hb->dtype() | ((uint64_t)hb->writeable() << 8) | (1ULL << 16);
      views[v] = {hb->data(), 1, hb->shape(), hb->strides()};
    } else if (PyObject* fn = val && PyFunction_Check(val) ? val : val ? twin_of(val) : nullptr) {
      // A plain Python function: inlined where the nest calls it (inline_helpers.h); or a C
      // function with a twin in Python (bisect.bisect_right), inlined in its place, the C
      // function's identity guarded.
      HelperEntry* h = helper_for(s, fn, f, &why);
      if (!h && PyErr_Occurred()) return nullptr;
      if (h && PyFunction_GET_GLOBALS(fn) != f.globals && !is_twin(fn)) {
        int err = 0;
        why = same_globals(fn, *h, f, vars, &err);
        if (err) return nullptr;
        if (!why.empty()) h = nullptr;
      }
      if (!h) {
        // (helper_for's answer is its code's: the same function, the same answer, at the
        // next call without reading the variables.)
        if (fn == val && vars[v].storage != ir::Var::Storage::Attr && vars[v].storage != ir::Var::Storage::Method &&
            why.rfind("the nest has seen too many", 0) != 0)
          s.declined_var = (int)v, s.declined_type = Py_TYPE(val), s.declined_code = PyFunction_GET_CODE(fn);
        return decline(s, "calls `" + vars[v].name + "`, which stagepy cannot inline: " + why);
      }
      PyObject* qn = ((PyFunctionObject*)fn)->func_qualname;
      const char* qs = qn && PyUnicode_Check(qn) ? PyUnicode_AsUTF8(qn) : nullptr;
      if (!qs) PyErr_Clear();
      descs[v].type = types::function(qs ? qs : vars[v].name);
      descs[v].k1 = (uint64_t)(uintptr_t)Py_TYPE(val);
      descs[v].k2 = (uint64_t)(uintptr_t)val;
      descs[v].extra.push_back((uint64_t)(uintptr_t)PyFunction_GET_CODE(fn));
      specialize::Helper helper{vars[v].name, h->body, h->global_vars, {}, h->in_caller_file, h->params, h->posonly, {}};
      // The Method variable for method `m` on the objects `sources` (or their items), made
      // where there is none; `shown`, how the report names its objects.
      auto method_var = [&](const std::string& m, const std::vector<int>& sources, bool on_items,
                            const std::string& shown) -> int {
        for (size_t x = 0; x < vars.size(); x++)
          if (vars[x].storage == ir::Var::Storage::Method && vars[x].method == m &&
              vars[x].method_sources == sources && vars[x].method_on_items == on_items)
            return (int)x;
        ir::Var nm;
        nm.name = shown + "." + m;
        nm.storage = ir::Var::Storage::Method;
        nm.read = true;
        nm.method = m;
        nm.method_sources = sources;
        nm.method_on_items = on_items;
        s.lift.nest.vars.push_back(std::move(nm));
        return (int)vars.size() - 1;
      };
      // Methods of the items of a list it is passed (`def advance(ps, dt): for p in ps:
      // p.update(dt)`): Method variables on the lists the nest passes there, where each of its
      // calls in the nest passes a variable (one it calls from another function: none).
      const bool is_method = vars[v].storage == ir::Var::Storage::Method;
      for (const HelperEntry::ItemCall& c : h->item_calls) {
        if (c.param < 0 || (is_method && c.param == 0)) continue;
        std::vector<int> lists;
        bool all = true;
        ir::for_each_expr(s.lift.nest.root, [&](const ir::Expr& x) {
          if (x->kind != ir::ExprNode::Kind::Call || x->args.empty()) return;
          const bool mine = is_method ? x->method == (int)v
                                      : x->args[0]->kind == ir::ExprNode::Kind::Load && x->args[0]->var == (int)v;
          if (!mine) return;
          const size_t at = is_method ? (size_t)c.param : (size_t)c.param + 1;  // (args[0]: the callee)
          // (A variable, or an attribute the nest reads as one: `advance(s.bodies, dt)`.)
          const int list = !x->kwnames.empty() || at >= x->args.size() ? -1
                           : x->args[at]->kind == ir::ExprNode::Kind::Load ? x->args[at]->var
                           : x->args[at]->kind == ir::ExprNode::Kind::Attr ? x->args[at]->pseudo : -1;
          if (list < 0) {
            all = false;
            return;
          }
          lists.push_back(list);
        });
        std::sort(lists.begin(), lists.end());
        lists.erase(std::unique(lists.begin(), lists.end()), lists.end());
        if (all && !lists.empty())
          helper.item_methods[c.origin] = method_var(c.method, lists, true, vars[(size_t)lists[0]].name + "[...]");
      }
      if (is_method) {
        // A method's own calls of methods on its object (`self.move(dt)`): Method variables on
        // the same objects (found, and their functions inlined, in turn).
        const std::vector<int> sources = vars[v].method_sources;
        const bool on_items = vars[v].method_on_items;
        const std::string shown = vars[v].name.substr(0, vars[v].name.rfind('.'));
        for (const std::string& m : h->self_methods) helper.self_methods[m] = method_var(m, sources, on_items, shown);
        // A method of one object (`self.step(dt)`): the attributes it reads of it are read at
        // entry as the nest's own are (`self.dt`: attribute variables, which inline_helpers
        // binds), unless it assigns them (attribute_columns then reads them from the
        // object's table).
        if (!vars[v].method_on_items) {
          const int o = vars[v].method_sources[0];
          // (The attribute variable `o.a`, made where there is none.)
          auto attr_var = [&](const std::string& a) -> int {
            const std::string full = vars[(size_t)o].name + "." + a;
            for (size_t x = 0; x < vars.size(); x++)
              if (vars[x].storage == ir::Var::Storage::Attr && vars[x].index == o && vars[x].name == full) return (int)x;
            ir::Var av;
            av.name = full;
            av.storage = ir::Var::Storage::Attr;
            av.index = o;
            av.read = true;
            s.lift.nest.vars.push_back(std::move(av));
            return (int)vars.size() - 1;
          };
          for (const std::string& a : h->self_attributes) attr_var(a);
          // Methods of the objects its own loops take from a list of its object's
          // (`for b in self.bodies: e += b.kinetic()`): Method variables on that list.
          for (const HelperEntry::ItemCall& c : h->item_calls) {
            if (c.list.empty()) continue;  // (a parameter's items: above)
            const int lv = attr_var(c.list);
            helper.item_methods[c.origin] = method_var(c.method, {lv}, true, vars[(size_t)lv].name + "[...]");
          }
        }
      }
      // Its defaults are constants of the kernel: their values are part of the key.
      PyObject* defaults = PyFunction_GET_DEFAULTS(fn);
      const Py_ssize_t nd = defaults && PyTuple_Check(defaults) ? PyTuple_GET_SIZE(defaults) : 0;
      descs[v].extra.push_back((uint64_t)nd);
      for (Py_ssize_t d = 0; d < nd; d++) {
        uint64_t bits[3];
        ir::Expr c = default_constant(PyTuple_GET_ITEM(defaults, d), bits);
        if (!c) {
          if (PyErr_Occurred()) return nullptr;
          return decline(s, "calls `" + vars[v].name + "`, whose default for parameter " +
                                std::to_string(h->body->nparams - nd + d + 1) + " is not a number stagepy handles");
        }
        descs[v].extra.insert(descs[v].extra.end(), bits, bits + 3);
        helper.defaults.push_back(std::move(c));
      }
      helpers[(int)v] = std::move(helper);
      if (vars.size() > nv) {  // its globals became variables of the nest: read them too
        nv = vars.size();
        vals.resize(nv);
        descs.resize(nv);
        views.resize(nv);
        ragged_list.resize(nv);
      }
    } else {
      descs[v] = describe(val, vars[v]);
      if (!descs[v].why.empty()) {
        if (descs[v].by_type && vars[v].storage != ir::Var::Storage::Attr && !(Py_TYPE(val)->tp_flags & Py_TPFLAGS_HEAPTYPE)) {
          s.declined_var = (int)v;
          s.declined_type = Py_TYPE(val);
          s.declined_code = nullptr;
        }
        return decline(s, descs[v].why);
      }
      if (descs[v].type->kind == Type::Kind::Array)
        views[v] = {np::data(val), np::ndim(val), np::shape(val), np::strides(val)};
    }
  }
  // The helpers this call's variables hold, inlined (once per set of them).
  NestState::Inlined* inl = nullptr;
  {
    std::vector<uint64_t> hkey;
    for (auto& [v, h] : helpers) {
      hkey.push_back((uint64_t)v);
      hkey.insert(hkey.end(), descs[(size_t)v].extra.begin(), descs[(size_t)v].extra.end());
      hkey.push_back(descs[(size_t)v].k2);
    }
    if (!hkey.empty()) {
      inl = inlined_for(s, hkey, helpers);
      if (!inl->reason.empty()) {
        // One function that cannot be inlined: the same function, the same answer (a
        // recursive function's loop is declined at every level of the recursion).
        const int hv = helpers.begin()->first;
        if (helpers.size() == 1 && vars[(size_t)hv].storage != ir::Var::Storage::Attr &&
            vars[(size_t)hv].storage != ir::Var::Storage::Method && PyFunction_Check(vals[(size_t)hv].get())) {
          s.declined_var = hv;
          s.declined_type = Py_TYPE(vals[(size_t)hv].get());
          s.declined_code = PyFunction_GET_CODE(vals[(size_t)hv].get());
        }
        return decline(s, inl->reason);
      }
    }
  }
  // Lists (and tuples) of objects whose attributes the nest uses, its helpers included: the
  // compiled nest's (attribute_columns ran again on the inlined one).
  const ir::Nest& cn = inl ? inl->nest : s.lift.nest;
  ObjectTables& tables = inl ? inl->tables : s.tables;
  auto objects = [&](size_t v) { return v < cn.vars.size() && cn.vars[v].objects; };
  if (s.lift.nest.objects_to_helpers && !inl)
    return decline(s, "passes an object whose attributes it uses to a function stagepy does not inline (not a plain "
                      "Python function)");
  for (size_t v = 0; v < nv; v++) {
    if (!objects(v) || !vals[v]) continue;
    PyObject* val = vals[v].get();
    if (!PyList_CheckExact(val) && !PyTuple_CheckExact(val))
      return decline_values(s, "`" + vars[v].name + "`, whose items' attributes the nest uses, holds " +
                                   Py_TYPE(val)->tp_name + ", not a list or a tuple");
    if (std::find(lists_later.begin(), lists_later.end(), v) == lists_later.end()) lists_later.push_back(v);
  }
  // The lists, read into buffers: last, so that a nest declined for another value (a
  // function it cannot inline, a method it calls) does not first read a list of lists whole
  // at every call (quadratic in a recursion, cubic in a loop around the nest).
  // The one that could not be read last time first: a list of mixed items is found out
  // before a big list of lists is read again.
  // What the kernel may store into: the compiled nest's stores (an inlined helper's too).
  if (inl && !inl->stored_known) {
    find_stored(inl->nest, s.fresh, &inl->stored, &inl->stores_unknown);
    inl->stored_known = true;
  }
  const std::vector<uint8_t>& stored = inl ? inl->stored : s.stored;
  const bool stores_unknown = inl ? inl->stores_unknown : s.stores_unknown;
  // Objects met in two tables (or twice in one) matter only where a table may be written:
  // else every copy of an object's attributes holds the same values, and none is tracked.
  // (A variable added after `stored` was made, a helper's global, takes no store of the nest.)
  auto may_write = [&](size_t v) { return stores_unknown || (v < stored.size() && stored[v]) || vars[v].resized; };
  bool track_objects = false;
  for (size_t v : lists_later) track_objects = track_objects || (objects(v) && may_write(v));
  auto last_failed = std::find(lists_later.begin(), lists_later.end(), (size_t)s.unreadable_list);
  if (last_failed != lists_later.end()) std::rotate(lists_later.begin(), last_failed, last_failed + 1);
  for (size_t v : lists_later) {
    PyObject* val = vals[v].get();
    std::string why;
    double t0 = now_s();
    ListBuffer*& lb = list_of[val];
    const uint8_t tags = v < s.tag_lists.size() ? s.tag_lists[v] : 0;
    const bool writes = may_write(v);
    if (PyTuple_CheckExact(val) && !objects(v)) {
      descs[v] = describe(val, vars[v]);  // (a tuple of objects the nest does not use as a table)
      if (!descs[v].why.empty()) return decline(s, descs[v].why);
      continue;
    }
    if (vars[v].single_of >= 0 && !objects(v)) {
      // A method's object's table the compiled nest does not use (its methods assign no
      // attributes of it).
      vals[v] = PyRef();
      descs[v] = describe(nullptr, vars[v]);
      continue;
    }
    const ObjectColumns* columns = nullptr;
    if (objects(v) && !(columns = object_columns(tables, cn, v))) return nullptr;
    if (lb && columns && lb->objects() && lb->object_columns()->used != columns->used)
      return decline_values(s, "`" + vars[v].name + "` holds a list of objects another variable holds too, whose "
                               "attributes the nest uses otherwise");
    if (lb && lb->objects() != objects(v))
      return decline_values(s, "`" + vars[v].name + "` holds a list that the nest uses both for its items' attributes and "
                               "as a list of values");
    if (lb && columns && writes && !lb->written)
      return decline_values(s, "`" + vars[v].name + "` holds a list of objects another variable holds too");
    if (!lb) {
      s.lists_read++;
      lists.push_back(std::make_unique<ListBuffer>());
      if (!lists.back()->read(val, seen_lists, shared_lists, &why, tags, columns, writes, track_objects)) {
        s.unreadable_list = (int)v;
        return decline_values(s, "`" + vars[v].name + "` " + why);
      }
      lb = lists.back().get();
    } else if (tags && (lb->dtype() == DType::Float64 || lb->dtype() == DType::Int64) &&
               ((lb->tags() | (tags & ~kTagsWhole)) != lb->tags() || ((tags & kTagsWhole) && !lb->column_tags().empty()))) {
      return decline_values(s, "`" + vars[v].name + "` holds a list of numbers another variable holds too, and the nest "
                               "stores numbers of another type into it through `" + vars[v].name + "` only");
    }
    lb->written = lb->written || writes;
    if (lb->written) lb->keep_before();
    descs[v].type = types::py_list(lb->dtype(), lb->ndim(), lb->tags(), lb->tuples(), lb->ragged());
    descs[v].k1 = (uint64_t)(uintptr_t)&PyList_Type;
    descs[v].k2 = (uint64_t)lb->dtype() | ((uint64_t)lb->ndim() << 8) | ((uint64_t)lb->tagged() << 16) |
                  ((uint64_t)lb->tuples() << 17) | ((uint64_t)lb->ragged() << 19) | ((uint64_t)lb->tags() << 20);
    if (!lb->column_tags().empty()) {  // a table's columns of one type each (Type::columns)
      auto t = std::make_shared<Type>(*descs[v].type);
      t->columns = lb->column_tags();
      descs[v].type = t;
      descs[v].extra.push_back(lb->column_tags().size());
      for (int8_t c : lb->column_tags()) descs[v].extra.push_back((uint64_t)(uint8_t)c);
    }
    if (lb->ragged()) ragged_list[v] = lb;
    if (vars[v].resized && lb->ndim() == 1 && lb->shape()[0] == 0) {
      // An empty list that grows: of the items the nest appends (ints until it is seen
      // to append others: empty_dtypes).
      const uint8_t hint = v < s.empty_dtypes.size() ? s.empty_dtypes[v] : 0;
      const DType d = hint ? (DType)(hint - 1) : DType::Int64;
      if (!hint) s.empty_now.push_back((int)v);
      descs[v].type = types::py_list(d, 1, false, false);
      descs[v].k2 = (uint64_t)d | (1ULL << 8) | (1ULL << 18);
    }
    views[v] = {lb->data(), lb->ndim(), lb->shape(), lb->strides()};
    convert_s += now_s() - t0;
  }
  for (size_t v = 0; v < nv; v++) {
    if (!vars[v].read) continue;
    key.push_back(descs[v].k1);
    key.push_back(descs[v].k2);
    key.insert(key.end(), descs[v].extra.begin(), descs[v].extra.end());
  }

  // Lists read into two buffers (or twice into one: `[[0.0] * m] * n`) where the kernel may
  // write either: a store into one copy would not show in the other.
  for (auto& [a, b] : shared_lists)
    if (a->written || b->written) {
      std::string names;
      for (size_t v = 0; v < nv; v++) {
        auto it = vals[v] ? list_of.find(vals[v].get()) : list_of.end();
        if (it != list_of.end() && (it->second == a || it->second == b) && names.find("`" + vars[v].name + "`") == std::string::npos)
          names += (names.empty() ? "`" : " and `") + vars[v].name + "`";
      }
      if (a->objects() || b->objects())
        return decline_values(s, names + (a == b ? " holds one object twice (`ps[0] is ps[1]`)" : " share an object") +
                                     ", and the nest assigns its attributes");
      return decline_values(s, names + (a == b ? " holds one list twice (an alias such as `A[0] is A[1]`)"
                                                 : " share a list (a row passed beside its matrix)") +
                                   ", and the nest stores into it");
    }

  // An object whose attributes the nest reads at entry (`best.x`, `self.dt`: attribute
  // variables) must be in no table of objects it may change: the value read would not follow.
  // And `len(ps)` of such a table must be the builtin's (a function in its place would see
  // the table as a list of rows).
  if (!cn.columns.empty())
    for (size_t v = 0; v < nv; v++) {
      // (One the compiled nest reads through the object's table instead, an inlined method's
      // `self.t` beside `self.t += dt`, is no such read: attribute_columns.h.)
      if (vars[v].storage == ir::Var::Storage::Attr && vals[v] && v < cn.vars.size() && cn.vars[v].read) {
        const PyObject* base = vals[(size_t)vars[v].index].get();
        auto it = base ? seen_lists.find(const_cast<PyObject*>(base)) : seen_lists.end();
        const std::string attr = vars[v].name.substr(vars[v].name.rfind('.') + 1);
        const auto& cols = cn.columns;
        const auto col = std::find(cols.begin(), cols.end(), attr);
        if (it != seen_lists.end() && it->second->objects() && it->second->written && col != cols.end() &&
            cn.columns_assigned[(size_t)(col - cols.begin())])
          return decline_values(s, "reads `" + vars[v].name + "` once, of an object whose `" + attr + "` it assigns");
      }
      if (vars[v].name == "len" && vars[v].storage != ir::Var::Storage::Builtin && vals[v]) {
        static PyObject* builtin_len = nullptr;  // (held for the process's life)
        if (!builtin_len) {
          PyRef mod = PyRef::steal(PyImport_ImportModule("builtins"));
          if (!mod || !(builtin_len = PyObject_GetAttrString(mod.get(), "len"))) return nullptr;
        }
        if (vals[v].get() != builtin_len)
          return decline(s, "`len` is not the builtin len, and the nest takes the len() of a list of objects");
      }
    }

  // A list the nest appends to must be no list it reads (`A[0]` of a list of lists holding
  // it): the kernel reads the buffers as they were at entry.
  for (size_t v = 0; v < nv; v++)
    if (vals[v] && vars[v].appended && (list_of.count(vals[v].get()) || seen_lists.count(vals[v].get())))
      return decline(s, "appends to `" + vars[v].name + "`, a list the nest also reads");

  // An array whose own elements may overlap (np.lib.stride_tricks.as_strided with a zero
  // or short stride, sliding_window_view(..., writeable=True)): two subscripts the analysis
  // tells apart may be one element, which no proof here accounts for. Where the nest could
  // write it, CPython runs the nest (read-only views, sliding_window_view's default, are fine).
  for (size_t v = 0; v < nv; v++) {
    if (!vals[v] || !descs[v].type || descs[v].type->kind != Type::Kind::Array || !descs[v].type->writeable) continue;
    if (ragged_list[v]) continue;  // rows one after another (its view's shape and strides say nothing)
    if (may_overlap_itself(views[v], item_bytes(*descs[v].type)))
      return decline(s, "`" + vars[v].name + "` is a writeable view whose elements overlap one another (strides " +
                            "shorter than the elements they step over)");
  }

  // Which arrays share memory is part of the key: kernels compiled for disjoint arrays
  // may assume it (the same buffer, or views such as a[1:] passed beside a).
  std::vector<std::pair<int, int>> overlapping;  // variable pairs
  {
    std::vector<std::pair<uintptr_t, uintptr_t>> spans;
    std::vector<int> span_var;
    for (size_t v = 0; v < nv; v++) {
      if (!vals[v] || !descs[v].type || descs[v].type->kind != Type::Kind::Array) continue;
      const ArrayView& a = views[v];
      span_var.push_back((int)v);
      uintptr_t lo = (uintptr_t)a.data, hi = lo;
      if (ragged_list[v]) {  // all its rows' items, one after another
        spans.push_back({lo, lo + ragged_list[v]->bytes()});
        continue;
      }
      const Py_ssize_t* sh = a.shape;
      const Py_ssize_t* st = a.strides;
      bool empty = false;
      for (int d = 0; d < a.ndim; d++) {
        if (sh[d] == 0) empty = true;
        Py_ssize_t ext = (sh[d] - 1) * st[d];
        if (ext < 0) lo += ext; else hi += ext;
      }
      hi += (uintptr_t)item_bytes(*descs[v].type);
      spans.push_back(empty ? std::make_pair(lo, lo) : std::make_pair(lo, hi));
    }
    for (size_t i = 0; i < spans.size(); i++)
      for (size_t j = i + 1; j < spans.size(); j++)
        if (spans[i].first < spans[j].second && spans[j].first < spans[i].second) {
          overlapping.push_back({span_var[i], span_var[j]});
          key.push_back(((uint64_t)span_var[i] << 32) | (uint64_t)span_var[j]);
        }
    key.push_back(~0ULL);  // end of the overlapping pairs
  }

  // The facts that hold for these values (the static stage runs on the first call; again,
  // on the nest with them inlined, for each set of helpers it calls).
  if (!s.conds) {
    double t0 = now_s();
    s.conds = std::make_unique<analysis::NestConditions>(
        specialize::first_sight(s.lift.nest, s.function + ":" + std::to_string(s.line)));
    s.analysis_s = now_s() - t0;
  }
  const analysis::NestConditions& conds = conditions_for(s, inl, descs);
  {
    specialize::ParamValues pv = param_values(conds, vars, vals, descs, views);
    if (pv.values != s.last_params || pv.known != s.last_known || pv.assumptions_hold != s.last_assumptions ||
        s.last_bits.size() != conds.conds.size() || s.last_conds != &conds) {
      s.last_bits = specialize::evaluate_conditions(conds, pv);
      s.last_conds = &conds;
      s.last_nest = inl ? &inl->nest : &s.lift.nest;
      s.last_params = std::move(pv.values);
      s.last_known = std::move(pv.known);
      s.last_assumptions = pv.assumptions_hold;
    }
    uint64_t word = 0;
    for (size_t i = 0; i < s.last_bits.size(); i++) {
      if (s.last_bits[i]) word |= 1ULL << (i % 64);
      if (i % 64 == 63) {
        key.push_back(word);
        word = 0;
      }
    }
    key.push_back(word);
  }

  // How NumPy's floating-point warnings are kept (fp_warnings.h): part of the key.
  const np::ErrState es = np::err_state();
  if (es.under != np::ErrAction::Ignore)
    return decline(s, "NumPy is set to report floating-point underflow (np.seterr)");
  const FpMode fp = fp_mode_now(es);
  key.push_back((uint64_t)fp);
  const int threads = backends::cpu::default_threads();
  key.push_back((uint64_t)threads);
  key.push_back((uint64_t)strict_fp());
  // Whether parallel loops get GPU versions (a device, or its emulation; STAGEPY_TARGET).
  const bool gpu = backends::gpu::gpu_wanted();
  key.push_back((uint64_t)gpu);

  // Find the specialization.
  Specialization* sp = nullptr;
  bool counted = false;  // a new type: it counts toward the recompile limit
  for (auto& c : s.specs)
    if (c->key == key) { sp = c.get(); break; }
  if (!sp) {
    const bool again = s.evicted.count(key) > 0;  // evicted: compiling it again is not a new type
    if (!again && s.compiles >= recompile_limit()) {
      s.gave_up = true;
      return decline(s, "recompile limit (" + std::to_string(recompile_limit()) +
                            ") reached: the nest kept seeing new types (STAGEPY_RECOMPILE_LIMIT)");
    }
    std::vector<TypeRef> entry(nv);
    for (size_t v = 0; v < nv; v++) entry[v] = vars[v].read ? descs[v].type : types::unbound();
    if (!again) s.compiles++, counted = true;
    s.specs.push_back(
        specialize_for(s, key, std::move(entry), specialize::facts_of(conds, s.last_bits), fp, overlapping, threads,
                       gpu, helpers, inl));
    sp = s.specs.back().get();
    evict_kernels(sp);
  }
  // A specialization that asked to read the values otherwise: forgotten, and the call again.
  auto specialize_again = [&]() {
    s.specs.erase(std::find_if(s.specs.begin(), s.specs.end(), [&](const auto& c) { return c.get() == sp; }));
    if (counted) s.compiles--;
    return run_nest(s, f);
  };
  if (!sp->kernel.ok && sp->kernel.retag >= 0) {
    const uint8_t had = sp->kernel.retag < (int)s.tag_lists.size() ? s.tag_lists[(size_t)sp->kernel.retag] : 0;
    if ((had | sp->kernel.retag_tags) != had) {
      // The nest stores NumPy floats into a list of floats, or ints into one of floats, or
      // floats into one of ints: read it tagged (its elements' types then vary), and
      // specialize for that. At most once per variable and kind of value.
      // (With every variable it passes its lists to or takes them from: made_lists.h.)
      mark_class(&s.tag_lists, s.lift.nest.root, sp->kernel.retag, (uint8_t)(had | sp->kernel.retag_tags));
      return specialize_again();
    }
  }
  if (!sp->kernel.ok && sp->kernel.empty_var >= 0 && (size_t)sp->kernel.empty_var < nv &&
      !(sp->kernel.empty_var < (int)s.empty_dtypes.size() && s.empty_dtypes[(size_t)sp->kernel.empty_var])) {
    // The nest appends floats (or bools) to a list empty at entry: type it as one of those,
    // and specialize for that. At most once per variable.
    mark_class(&s.empty_dtypes, s.lift.nest.root, sp->kernel.empty_var, (uint8_t)((int)sp->kernel.empty_dtype + 1));
    return specialize_again();
  }
  if (!sp->kernel.ok) {
    std::string why = sp->kernel.reason;
    if (sp->kernel.reason_line >= 0) why += " (line " + std::to_string(sp->kernel.reason_line) + ")";
    return decline_values(s, why);
  }

  s.failed_in_a_row = 0;
  // Unbox.
  const KernelLayout& L = sp->kernel.layout;
  std::vector<int64_t> state((size_t)L.slots + 1, 0);
  std::vector<uint64_t> storage(L.params.size() + 1);
  std::vector<void*> avalues(L.params.size() + 1);
  int64_t* state_ptr = state.data();
  std::memcpy(&storage[0], &state_ptr, sizeof state_ptr);
  avalues[0] = &storage[0];
  const std::vector<ir::Var>& kvars = sp->kernel.typed.nest.vars;  // the lowered nest's
  auto lowered_only = [&](size_t v) {  // variables lower_complex added: not the frame's
    return v < kvars.size() &&
           (kvars[v].storage == ir::Var::Storage::Part || kvars[v].storage == ir::Var::Storage::Temp);
  };
  for (size_t i = 0; i < L.params.size(); i++) {
    const KernelParam& p = L.params[i];
    uint64_t& slot = storage[i + 1];
    avalues[i + 1] = &slot;
    if (lowered_only((size_t)p.var)) {
      // A part of a complex value at entry.
      const ir::Var& pv = kvars[(size_t)p.var];
      double parts[2] = {0.0, 0.0};
      if (pv.storage != ir::Var::Storage::Part || !complex_value(vals[(size_t)pv.parent].get(), parts))
        return decline(s, "internal error: a complex parameter");
      std::memcpy(&slot, &parts[pv.index], 8);
      continue;
    }
    PyObject* v = vals[p.var].get();
    switch (p.kind) {
      case KernelParam::Kind::Data: {
        void* d = views[p.var].data;
        std::memcpy(&slot, &d, sizeof d);
        break;
      }
      case KernelParam::Kind::Shape: slot = (uint64_t)views[p.var].shape[p.dim]; break;
      case KernelParam::Kind::RowOffsets: {
        const ListBuffer* lb = (size_t)p.var < ragged_list.size() ? ragged_list[(size_t)p.var] : nullptr;
        if (!lb) return decline(s, "internal error: a ragged list's parameter");
        const int64_t* o = lb->offsets();
        std::memcpy(&slot, &o, sizeof o);
        break;
      }
      case KernelParam::Kind::Stride: slot = (uint64_t)views[p.var].strides[p.dim]; break;
      case KernelParam::Kind::Scalar:
      case KernelParam::Kind::TupleItem: {
        TypeRef t = sp->entry[p.var];
        if (p.kind == KernelParam::Kind::TupleItem) {
          t = t->elems[(size_t)p.dim];
          v = PyTuple_GET_ITEM(v, p.dim);
        }
        switch (t->kind) {
          case Type::Kind::PyInt: {
            int overflow = 0;
            long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
            if (x == -1 && PyErr_Occurred()) return nullptr;
            if (overflow) return decline(s, "`" + vars[p.var].name + "` holds an int beyond 64 bits");
            slot = (uint64_t)x;
            break;
          }
          case Type::Kind::PyBool: slot = v == Py_True ? 1 : 0; break;
          case Type::Kind::PyFloat: {
            double d = PyFloat_AS_DOUBLE(v);
            std::memcpy(&slot, &d, 8);
            break;
          }
          case Type::Kind::NpScalar: slot = np::unbox_scalar(v, t->dtype); break;
          case Type::Kind::Appended: slot = (uint64_t)(uintptr_t)appended.buffer_for(v); break;
          default: return decline(s, "internal error: scalar parameter of type " + t->str());
        }
        break;
      }
    }
  }

  // Run.
  if (int64_t period = debug_bail_period()) {
    static uint64_t lcg = 88172645463325252ULL;
    lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
    *debug_bail_counter() = 1 + (int64_t)((lcg >> 33) % (uint64_t)period);
  }
  double t0 = now_s();
  ffi_arg ret = 0;
  sp->last_use = ++kernel_clock;
  if (sp->kernel.tier_up) {
    // Its fully compiled version, once the background thread has it (same IR, same results).
    if (void* full = sp->kernel.tier_up->kernel.load()) {
      sp->kernel.fn = full;
      sp->kernel.tier_up.reset();
    }
  }
  s.probe.ran_native();
  // The lists the kernel makes and reads (`cur = [0] * (m + 1)`), until written back.
  backends::cpu::MadeLists made_lists;
  {
    backends::cpu::ListArena::Scope lists_made(appended.arena());
    backends::cpu::MadeLists::Scope lists_kept(&made_lists);
    ffi_call(&sp->cif, FFI_FN(sp->kernel.fn), &ret, avalues.data());
  }
  // A huge slice's buffer goes once the variables are written back (an array a variable
  // keeps is copied out of its scratch buffer then).
  struct ReleaseScratch {
    ~ReleaseScratch() { backends::cpu::release_scratch(kKeepScratchBytes); }
  } release_scratch_after;
  const double t1 = now_s();
  // random.gauss()'s twin, where the kernel drew one, back in the generator's gauss_next
  // (a MemoryError there: raised like the GPU's fatal errors below).
  if (!flush_random_state()) return nullptr;
  if (!sp->kernel.gpu_loops.empty()) {
    // The arrays the GPU wrote come back before anything else can look at them.
    std::string fatal = backends::gpu::end_session();
    if (!fatal.empty()) {
      PyErr_Format(PyExc_RuntimeError, "stagepy: %s", fatal.c_str());
      return nullptr;
    }
  }
  // The lists get the elements the kernel changed before anything else can look at them
  // (also when it stopped for CPython: the writes before that statement are done); those
  // that grew or shrank (Var::resized), their new lengths.
  std::vector<const MadeList*> resized;
  for (const auto& m : made_lists.wrapped()) {
    if (m->source < 0 || (size_t)m->source >= L.arrays.size()) continue;
    auto it = list_of.find(vals[(size_t)L.arrays[(size_t)m->source]].get());
    if (it == list_of.end() || it->second->ndim() != 1) continue;
    ListBuffer* lb = it->second;
    const int64_t entry_len = lb->shape()[0];
    const int64_t kept = std::min(m->len, entry_len);  // the items both lengths hold
    if (m->data != lb->data() && kept > 0)  // they moved when it grew
      std::memcpy(lb->data(), m->data, (size_t)(kept * lb->item_bytes()));
    if (m->len != entry_len) resized.push_back(m.get());
  }
  for (auto& lb : lists)
    if (lb->write_back() < 0) return nullptr;
  for (const MadeList* m : resized)
    if (resize_list_object(vals[(size_t)L.arrays[(size_t)m->source]].get(), *m) < 0) return nullptr;
  // And the lists it appended to get their new items, in order; the lists it made, theirs.
  const AppendedLists::BoxNumber box_number = [&](uint64_t tag, uint64_t bits) -> PyObject* {
    if (tag == 0 || tag > sp->kernel.typed.tags.size()) {
      PyErr_Format(PyExc_SystemError, "stagepy: an appended item without a type (tag %llu)", (unsigned long long)tag);
      return nullptr;
    }
    return box(sp->kernel.typed.tags[(size_t)tag - 1], bits);
  };
  // One list object per list made and read, whichever variables and lists hold it.
  std::unordered_map<const MadeList*, PyRef> made_objects;
  const AppendedLists::MadeObject made_object = [&](uint64_t header) -> PyObject* {
    const auto* m = reinterpret_cast<const MadeList*>((uintptr_t)header);
    if (m->source >= 0) return PyRef(vals[L.arrays[(size_t)m->source]]).release();
    PyRef& made = made_objects[m];
    if (!made) made = PyRef::steal(made_list_object(*m));
    return made ? PyRef(made).release() : nullptr;
  };
  if (appended.finish(box_number, made_object) < 0) return nullptr;
  const double t2 = now_s();
  // Reading and writing back lists is part of what running the nest natively costs.
  if (!lists.empty() || !appended.empty()) convert_s += t2 - t1;
  s.convert_s += convert_s;
  s.native_s += (t1 - t0) + convert_s;
  s.win_convert_s += convert_s;
  s.win_native_s += (t1 - t0) + convert_s;
  int status = (int)(int32_t)ret;
  sp->uses++;

  // Write back every variable the kernel assigned. A list it made becomes one list object,
  // whichever variables hold it (`prev = cur`: `prev is cur`).
  for (size_t v = 0; v < nv && v < L.var_slot.size(); v++) {
    int slot = L.var_slot[v];
    if (slot < 0 || lowered_only(v)) continue;
    int64_t tag = state[(size_t)slot + 1];
    if (tag <= 0) continue;
    const TypeRef& t = sp->kernel.typed.tags[(size_t)tag - 1];
    PyRef obj;
    if (t->is_complex()) {
      // Its value is in its part variables.
      double parts[2] = {0.0, 0.0};
      int found = 0;
      for (size_t k = 0; k < kvars.size() && k < L.var_slot.size(); k++)
        if (kvars[k].storage == ir::Var::Storage::Part && kvars[k].parent == (int)v && L.var_slot[k] >= 0) {
          std::memcpy(&parts[kvars[k].index], &state[(size_t)L.var_slot[k]], 8);
          found++;
        }
      if (found != 2) {
        PyErr_Format(PyExc_SystemError, "stagepy: the parts of `%s` are missing", vars[v].name.c_str());
        return nullptr;
      }
      obj = PyRef::steal(t->kind == Type::Kind::PyComplex ? PyComplex_FromDoubles(parts[0], parts[1])
                                                          : np::box_complex(t->dtype, parts[0], parts[1]));
      if (!obj) return nullptr;
    } else if (t->kind == Type::Kind::Array && t->made) {
      obj = PyRef::steal(made_object((uint64_t)state[(size_t)slot]));
      if (!obj) return nullptr;
    } else if (t->kind == Type::Kind::Array && t->local) {
      // An array the nest computed (`d = X[i] - X[j]`): a new array with the elements its
      // scratch memory holds (backends/kernel_abi.h: the extents, then the items).
      const auto* header = reinterpret_cast<const int64_t*>((uintptr_t)state[(size_t)slot]);
      obj = PyRef::steal(np::new_array(t->dtype, t->ndim, header, reinterpret_cast<const char*>(header) + kLocalArrayHeader));
      if (!obj) return nullptr;
    } else if (t->kind == Type::Kind::Array) {
      int64_t id = state[(size_t)slot];
      obj = vals[L.arrays[(size_t)id]];
    } else if (t->kind == Type::Kind::Appended) {
      // A list the nest made (`row = []`), or one it appends to.
      obj = PyRef::steal(appended.object_of((uint64_t)state[(size_t)slot]));
      if (!obj) return nullptr;
    } else if (t->kind == Type::Kind::View) {
      // The row again: container[index] (the container's variable is never reassigned).
      PyRef index = PyRef::steal(PyLong_FromLongLong(state[(size_t)slot]));
      if (!index || !vals[(size_t)t->base]) {
        if (!PyErr_Occurred()) PyErr_Format(PyExc_SystemError, "stagepy: the container of `%s` is gone", vars[v].name.c_str());
        return nullptr;
      }
      obj = PyRef::steal(PyObject_GetItem(vals[(size_t)t->base].get(), index.get()));
      if (!obj) return nullptr;
    } else if (PyObject* item = seq_item_object(*sp, v, t, state, L, vals)) {
      obj = PyRef::borrow(item);  // (S's own item: seq_items)
    } else {
      obj = PyRef::steal(box(t, (uint64_t)state[(size_t)slot]));
      if (!obj) return nullptr;
    }
    if (write_variable(f, vars[v], obj.get()) < 0) return nullptr;
  }
  for (auto& [loop, slot] : L.parallel_runs)
    if ((size_t)loop < s.loops.size()) s.loops[(size_t)loop].parallel_runs += (unsigned long long)state[(size_t)slot];
  if (fp == FpMode::Deferred && emit_deferred_warnings(L, state.data(), f, es) < 0) return nullptr;
  s.last_target = sp->kernel.target;
  if (status < 0 || status > (int)s.lift.nest.resumes.size()) {
    PyErr_Format(PyExc_SystemError, "stagepy: kernel returned %d", status);
    return nullptr;
  }
  // A return or raise inside the loops ends the nest as its loops' exhaustion does.
  if (status == 0 || s.lift.nest.resumes[(size_t)status - 1].exit) {
    s.native_calls++;
    const unsigned long long nc = ++s.win_native_calls;
    const double per_call = s.win_native_s / (double)nc;
    // Calls 8, 16, ... 65536 may start a probe where reading the lists dominates (those calls
    // are long); the others from the 64th.
    const bool early = nc >= 8 && nc <= (1ULL << 16) && (nc & (nc - 1)) == 0;
    const bool probe = early && nc >= kSmallProbe;
    // Calls that handed a statement to CPython are no measure of the kernel: no verdict from a
    // window with one (since the previous of these checkpoints). A nest that overflowed in
    // its first calls (int powers) is measured again once its calls run to the end.
    bool calm = true;
    if (early) {
      calm = s.bailouts == s.bailouts_checked;
      s.bailouts_checked = s.bailouts;
    }
    if (probe && per_call < kSmallWork_s && calm) {
      s.too_small = true;
      char buf[160];
      std::snprintf(buf, sizeof buf, "too little work per call (%.0f ns natively on average): the call costs more",
                    1e9 * per_call);
      s.status_reason = buf;
    } else if (calm && !s.probe.active()) {
      const double kernel_s = s.win_native_s - s.win_convert_s;
      if (probe && (per_call < kProbeWork_s || (s.win_convert_s > kConvertShare * s.win_native_s && per_call < kConvertProbe_s)))
        s.probe.start();
      else if (early && s.win_convert_s > kConvertDominates * kernel_s)
        s.probe.start(std::max(CostProbe::kMaxGap_s, kConvertGapFactor * per_call));
    }
    if (status == 0) return PyLong_FromLong(0);
    s.exits++;
  } else {
    s.native_calls++;
    s.bailouts++;
    // A nest that hands most of its calls to CPython part way (a sum that outgrows 64 bits in
    // every call) is no better for running natively up to there when reading its values costs
    // more than CPython's whole run. Its native time says nothing of the rest of each call,
    // but the probe's gaps hold both: from the 8th, 16th... such call of a window where they
    // are at least half the calls, the probe compares them with CPython's own runs.
    const unsigned long long nb = ++s.win_bailed_calls;
    if (nb >= 8 && nb <= (1ULL << 16) && (nb & (nb - 1)) == 0 && nb >= s.win_native_calls && !s.probe.active())
      s.probe.start(std::max(CostProbe::kMaxGap_s, kConvertGapFactor * s.win_native_s / (double)(nb + s.win_native_calls)));
    const ir::ResumePoint& rp = s.lift.nest.resumes[(size_t)status - 1];
    s.status_reason = "stopped at line " + std::to_string(rp.line) + " for CPython to run it (an error, an overflow or a warning)";
  }
  PyObject* iters = iterators_for(s, sp->kernel, status - 1, state, f);
  if (!iters) return nullptr;
  Py_XSETREF(t_resume_iters, iters);
  return PyLong_FromLong(status);
}

PyObject* kernel_stats(PyObject*, PyObject*) {
  return Py_BuildValue("{s:n,s:K,s:n}", "loaded", (Py_ssize_t)backends::cpu::loaded_kernels(), "evicted",
                       kernels_evicted, "max", (Py_ssize_t)max_kernels());
}

PyObject* resume_iters(PyObject*, PyObject*) {
  PyObject* it = t_resume_iters;
  t_resume_iters = nullptr;
  if (!it) {
    PyErr_SetString(PyExc_SystemError, "stagepy: no iterators pending for a resume");
    return nullptr;
  }
  return it;
}

}  // namespace stagepy::runtime
