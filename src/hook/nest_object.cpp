// See nest_object.h.
#include "hook/nest_object.h"

#include <new>

#include "analysis/lift.h"
#include "hook/nest_runtime.h"
#include "hook/py_ref.h"
#include "ir/printer.h"

namespace stagepy::runtime {
namespace {

// ---------------------------------------------------------------- conversions

bool to_string(PyObject* o, std::string& out) {
  Py_ssize_t n;
  const char* s = PyUnicode_AsUTF8AndSize(o, &n);
  if (!s) return false;
  out.assign(s, (size_t)n);
  return true;
}

bool to_const(PyObject* pair, analysis::Const& c) {
  if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
    PyErr_SetString(PyExc_TypeError, "constant must be a (kind, value) pair");
    return false;
  }
  std::string kind;
  if (!to_string(PyTuple_GET_ITEM(pair, 0), kind)) return false;
  PyObject* v = PyTuple_GET_ITEM(pair, 1);
  using K = analysis::Const::Kind;
  if (kind == "none") c.kind = K::None;
  else if (kind == "bool") { c.kind = K::Bool; c.i = PyObject_IsTrue(v); }
  else if (kind == "int") {
    c.kind = K::Int;
    c.i = PyLong_AsLongLong(v);
    if (c.i == -1 && PyErr_Occurred()) return false;
  } else if (kind == "float") {
    c.kind = K::Float;
    c.f = PyFloat_AsDouble(v);
    if (c.f == -1.0 && PyErr_Occurred()) return false;
  } else if (kind == "char") {
    c.kind = K::Char;
    c.i = PyLong_AsLongLong(v);
    if (c.i == -1 && PyErr_Occurred()) return false;
  } else if (kind == "complex" && PyComplex_Check(v)) {
    c.kind = K::Complex;
    c.f = PyComplex_RealAsDouble(v);
    c.f2 = PyComplex_ImagAsDouble(v);
  } else if (kind == "tuple" || kind == "frozenset" || kind == "strchars" || kind == "strfloat") {
    c.kind = kind == "tuple" ? K::Tuple : K::FrozenSet;
    c.str = kind == "strchars" || kind == "strfloat";
    PyObject* items = v;
    if (kind == "strfloat") {  // (the characters, float() of the str)
      c.float_str = true;
      if (!PyArg_ParseTuple(v, "Od", &items, &c.f)) return false;
    }
    PyRef seq = PyRef::steal(PySequence_Fast(items, "tuple constant"));
    if (!seq) return false;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq.get()); i++) {
      analysis::Const e;
      if (!to_const(PySequence_Fast_GET_ITEM(seq.get(), i), e)) return false;
      c.elems.push_back(std::move(e));
    }
  } else if (kind == "names") {
    c.kind = K::Names;
    PyRef seq = PyRef::steal(PySequence_Fast(v, "names"));
    if (!seq) return false;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq.get()); i++) {
      std::string n;
      if (!to_string(PySequence_Fast_GET_ITEM(seq.get(), i), n)) return false;
      c.names.push_back(std::move(n));
    }
  } else if (kind == "genexpr") {
    // (CodeInfo, entry, FOR_ITER, exit): a generator expression and its loop over `.0`.
    PyObject* info;
    if (!PyArg_ParseTuple(v, "O!iii", &CodeInfoType, &info, &c.spec.entry_offset, &c.spec.header_offset,
                          &c.spec.exit_offset))
      return false;
    c.kind = K::Code;
    c.code = ((CodeInfoObject*)info)->info;
  } else {
    c.kind = K::Other;  // value: what the nest does with it, for the report
    std::string why;
    if (PyUnicode_Check(v) && to_string(v, why)) c.names.push_back(std::move(why));
    PyErr_Clear();
  }
  return true;
}

// ---------------------------------------------------------------- CodeInfo

PyObject* codeinfo_new(PyTypeObject* type, PyObject* args, PyObject*) {
  PyObject *instrs, *consts, *filename, *qualname, *cells = nullptr;
  int fast_locals, firstlineno, version;
  if (!PyArg_ParseTuple(args, "OOpUUii|O", &instrs, &consts, &fast_locals, &filename, &qualname, &firstlineno, &version,
                        &cells))
    return nullptr;
  auto info = std::make_shared<analysis::CodeInfo>();
  PyRef seq = PyRef::steal(PySequence_Fast(instrs, "instructions"));
  if (!seq) return nullptr;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq.get());
  info->instrs.reserve((size_t)n);
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject* t = PySequence_Fast_GET_ITEM(seq.get(), i);
    PyObject *op, *sarg;
    analysis::Instr in;
    if (!PyArg_ParseTuple(t, "UiiiUii", &op, &in.offset, &in.target, &in.line, &sarg, &in.iarg, &in.flags))
      return nullptr;
    if (!to_string(op, in.opname) || !to_string(sarg, in.sarg)) return nullptr;
    in.op = analysis::op_from_name(in.opname);
    info->instrs.push_back(std::move(in));
  }
  PyRef cseq = PyRef::steal(PySequence_Fast(consts, "constants"));
  if (!cseq) return nullptr;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(cseq.get()); i++) {
    analysis::Const c;
    if (!to_const(PySequence_Fast_GET_ITEM(cseq.get(), i), c)) return nullptr;
    info->consts.push_back(std::move(c));
  }
  if (cells) {  // the frame slots that hold cells
    PyRef cseq2 = PyRef::steal(PySequence_Fast(cells, "cell slots"));
    if (!cseq2) return nullptr;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(cseq2.get()); i++) {
      long k = PyLong_AsLong(PySequence_Fast_GET_ITEM(cseq2.get(), i));
      const bool free = k < 0;  // -1 - slot: a free variable
      if (free) k = -1 - k;
      if (k < 0 || k > 1 << 16) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "bad cell slot");
        return nullptr;
      }
      if (info->localsplus_kinds.size() <= (size_t)k) info->localsplus_kinds.resize((size_t)k + 1, 0);
      info->localsplus_kinds[(size_t)k] |= free ? (analysis::CO_FAST_CELL | analysis::CO_FAST_FREE) : analysis::CO_FAST_CELL;
    }
  }
  info->fast_locals = fast_locals;
  if (!to_string(filename, info->filename) || !to_string(qualname, info->qualname)) return nullptr;
  info->firstlineno = firstlineno;
  info->version = version;
  auto* self = (CodeInfoObject*)type->tp_alloc(type, 0);
  if (!self) return nullptr;
  new (&self->info) std::shared_ptr<analysis::CodeInfo>(std::move(info));
  return (PyObject*)self;
}

void codeinfo_dealloc(PyObject* o) {
  auto* self = (CodeInfoObject*)o;
  self->info.~shared_ptr();
  Py_TYPE(o)->tp_free(o);
}

// ---------------------------------------------------------------- Nest

PyObject* nest_new(PyTypeObject* type, PyObject* args, PyObject*) {
  PyObject* info_obj;
  analysis::LoopSpec spec;
  int user, while_loop = 0;
  if (!PyArg_ParseTuple(args, "O!iiiip|p", &CodeInfoType, &info_obj, &spec.entry_offset, &spec.header_offset,
                        &spec.exit_offset, &spec.entry_depth, &user, &while_loop))
    return nullptr;
  spec.while_loop = while_loop != 0;
  auto& info = ((CodeInfoObject*)info_obj)->info;
  auto state = std::make_shared<NestState>();
  state->code = info;
  state->lift = analysis::lift_nest(*info, spec);
  state->user = user;
  state->filename = info->filename;
  state->function = info->qualname;
  state->line = state->lift.ok ? state->lift.nest.line : -1;
  if (state->line < 0) {
    for (auto& in : info->instrs)
      if (in.offset == spec.header_offset) state->line = in.line;
  }
  if (!state->lift.ok) {
    state->status_reason = state->lift.reason;
    if (state->lift.reason_line >= 0) state->status_reason += " (line " + std::to_string(state->lift.reason_line) + ")";
  }
  auto* self = (NestObject*)type->tp_alloc(type, 0);
  if (!self) return nullptr;
  new (&self->state) std::shared_ptr<NestState>(state);
  self->vectorcall = nest_vectorcall;
  register_nest(state);
  return (PyObject*)self;
}

void nest_dealloc(PyObject* o) {
  auto* self = (NestObject*)o;
  if (self->state) retire_nest(self->state);
  self->state.~shared_ptr();
  Py_TYPE(o)->tp_free(o);
}

PyObject* nest_get_ok(PyObject* o, void*) { return PyBool_FromLong(((NestObject*)o)->state->lift.ok); }
PyObject* nest_get_reason(PyObject* o, void*) {
  return PyUnicode_FromString(((NestObject*)o)->state->status_reason.c_str());
}
PyObject* nest_get_line(PyObject* o, void*) { return PyLong_FromLong(((NestObject*)o)->state->line); }
PyObject* nest_get_ir(PyObject* o, void*) {
  auto& s = *((NestObject*)o)->state;
  if (!s.lift.ok) Py_RETURN_NONE;
  return PyUnicode_FromString(ir::to_string(s.lift.nest).c_str());
}
PyObject* nest_get_resumes(PyObject* o, void*) {
  auto& s = *((NestObject*)o)->state;
  PyRef list = PyRef::steal(PyList_New(0));
  if (!list || !s.lift.ok) return list.release();
  for (auto& r : s.lift.nest.resumes) {
    PyRef t = PyRef::steal(Py_BuildValue("(iiO)", r.offset, (int)r.loops.size(), r.reenter ? Py_True : Py_False));
    if (!t || PyList_Append(list.get(), t.get()) < 0) return nullptr;
  }
  return list.release();
}
PyObject* nest_get_record(PyObject* o, void*) { return nest_record(*((NestObject*)o)->state); }

PyObject* nest_set_owner(PyObject* o, PyObject* code) {
  if (!PyCode_Check(code)) {
    PyErr_SetString(PyExc_TypeError, "owner must be a code object");
    return nullptr;
  }
  auto& s = *((NestObject*)o)->state;
  s.owner = code;
  s.owner_nlocalsplus = ((PyCodeObject*)code)->co_nlocalsplus;
  Py_RETURN_NONE;
}

PyObject* nest_reduce(PyObject* o, PyObject*) {
  PyErr_SetString(PyExc_TypeError, "stagepy loop-nest entries cannot be pickled");
  return nullptr;
}

PyGetSetDef nest_getset[] = {
    {"ok", nest_get_ok, nullptr, "Whether the nest was lifted", nullptr},
    {"reason", nest_get_reason, nullptr, "Why the nest stays interpreted", nullptr},
    {"line", nest_get_line, nullptr, "Line of the for statement", nullptr},
    {"ir", nest_get_ir, nullptr, "The lifted IR, as text", nullptr},
    {"resumes", nest_get_resumes, nullptr, "Resume points: (offset, iterators, reenter)", nullptr},
    {"record", nest_get_record, nullptr, "The report record", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyMethodDef nest_methods[] = {
    {"set_owner", nest_set_owner, METH_O, "The code object whose bytecode calls this nest."},
    {"__reduce__", nest_reduce, METH_NOARGS, nullptr},
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace

PyTypeObject CodeInfoType = {PyVarObject_HEAD_INIT(nullptr, 0)};
PyTypeObject NestType = {PyVarObject_HEAD_INIT(nullptr, 0)};

int add_nest_types(PyObject* module) {
  CodeInfoType.tp_name = "stagepy._core.CodeInfo";
  CodeInfoType.tp_basicsize = sizeof(CodeInfoObject);
  CodeInfoType.tp_flags = Py_TPFLAGS_DEFAULT;
  CodeInfoType.tp_new = codeinfo_new;
  CodeInfoType.tp_dealloc = codeinfo_dealloc;
  CodeInfoType.tp_doc = "A code object's normalized bytecode.";
  if (PyType_Ready(&CodeInfoType) < 0) return -1;

  NestType.tp_name = "stagepy._core.Nest";
  NestType.tp_basicsize = sizeof(NestObject);
  NestType.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL;
  NestType.tp_vectorcall_offset = offsetof(NestObject, vectorcall);
  NestType.tp_call = PyVectorcall_Call;
  NestType.tp_new = nest_new;
  NestType.tp_dealloc = nest_dealloc;
  NestType.tp_getset = nest_getset;
  NestType.tp_methods = nest_methods;
  NestType.tp_doc = "A loop nest's entry into native code.";
  if (PyType_Ready(&NestType) < 0) return -1;

  if (PyModule_AddObjectRef(module, "CodeInfo", (PyObject*)&CodeInfoType) < 0) return -1;
  if (PyModule_AddObjectRef(module, "Nest", (PyObject*)&NestType) < 0) return -1;
  return 0;
}

}  // namespace stagepy::runtime
