// See types.h.
#include "ir/types.h"

#include <algorithm>
#include <functional>

namespace stagepy {

const char* dtype_name(DType d) {
  static const char* n[] = {"bool", "int8", "int16", "int32", "int64", "uint8",
                            "uint16", "uint32", "uint64", "float32", "float64", "complex64", "complex128"};
  return n[static_cast<int>(d)];
}
int dtype_size(DType d) {
  static const int s[] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 4, 8, 8, 16};
  return s[static_cast<int>(d)];
}
bool dtype_is_int(DType d) { return d != DType::Bool && !dtype_is_float(d) && !dtype_is_complex(d); }
bool dtype_is_signed(DType d) {
  return d == DType::Int8 || d == DType::Int16 || d == DType::Int32 || d == DType::Int64;
}
bool dtype_is_float(DType d) { return d == DType::Float32 || d == DType::Float64; }
bool dtype_is_complex(DType d) { return d == DType::Complex64 || d == DType::Complex128; }

const char* builtin_name(Builtin b) {
  static const char* n[] = {
      "<none>", "range", "len", "abs", "min", "max", "int", "float", "bool", "round",
      "math.sqrt", "math.exp", "math.log", "math.log2", "math.log10", "math.sin", "math.cos",
      "math.tan", "math.asin", "math.acos", "math.atan", "math.sinh", "math.cosh", "math.tanh",
      "math.fabs", "math.floor", "math.ceil", "math.trunc", "math.atan2", "math.pow", "math.hypot",
      "math.copysign", "math.fmod", "math.isnan", "math.isinf", "math.isfinite", "math.expm1",
      "math.log1p", "math.erf", "math.erfc", "math.asinh", "math.acosh", "math.atanh", "math.cbrt", "math.exp2",
      "math.degrees", "math.radians",
      "numpy.sqrt", "numpy.exp", "numpy.log", "numpy.sin", "numpy.cos", "numpy.tan", "numpy.abs",
      "numpy.floor", "numpy.ceil", "numpy.arctan2", "numpy.hypot", "numpy.minimum", "numpy.maximum",
      "numpy.fabs", "numpy.tanh", "numpy.arctan", "numpy.log2", "numpy.log10", "numpy.expm1",
      "numpy.log1p", "numpy.sinh", "numpy.cosh", "numpy.arcsin", "numpy.arccos", "numpy.power",
      "numpy.isnan", "numpy.isinf", "numpy.isfinite", "numpy.sign", "numpy.square", "numpy.trunc",
      "numpy.rint", "numpy.cbrt", "numpy.exp2", "numpy.arcsinh", "numpy.arccosh", "numpy.arctanh",
      "numpy.deg2rad", "numpy.rad2deg", "numpy.radians", "numpy.degrees", "numpy.copysign", "numpy.fmin",
      "numpy.fmax", "complex", "complex.conjugate", "<hypot>",
      "numpy.float64", "numpy.float32", "numpy.int64", "numpy.int32", "numpy.int16", "numpy.int8",
      "numpy.uint8", "numpy.uint16", "numpy.uint32", "numpy.uint64", "numpy.bool", "enumerate", "zip", "reversed", "sum", "any", "all", "numpy.sum", "numpy.max", "numpy.min", "numpy.mean", "numpy.where", "numpy.clip", "numpy.dot", "divmod", "pow", "ord",
      "math.gcd", "math.lcm", "math.isqrt", "math.factorial", "math.comb", "math.perm",
      "str.isdigit", "str.isdecimal", "str.isnumeric", "str.isalpha", "str.isalnum", "str.isspace", "str.isupper",
      "str.islower", "str.lower", "str.upper",
      "cmath.sqrt", "cmath.exp", "cmath.log", "cmath.log10", "cmath.sin", "cmath.cos", "cmath.tan", "cmath.sinh",
      "cmath.cosh", "cmath.tanh", "cmath.asin", "cmath.acos", "cmath.atan", "cmath.asinh",
      "cmath.acosh", "cmath.atanh", "cmath.phase", "cmath.polar", "cmath.rect", "cmath.isnan", "cmath.isinf",
      "cmath.isfinite", "<complex function>", "<float32 rounding>", "<numpy complex loop>",
      "<float32 cast>", "list.append", "list.pop",
      "random.random", "random.uniform", "random.randint", "random.randrange", "random.choice",
      "random.gauss", "random.normalvariate", "random.expovariate", "<random below>", "<gauss z>", "<normal z>",
      "<exponential draw>", "numpy.random.random", "numpy.random.uniform", "numpy.random.randint",
      "numpy.random.standard_normal", "numpy.random.normal", "numpy.random.exponential"};
  static_assert(sizeof(n) / sizeof(n[0]) == static_cast<size_t>(Builtin::Count_), "builtin names");
  return n[static_cast<int>(b)];
}

std::string Type::str() const {
  switch (kind) {
    case Kind::Unknown: return "?";
    case Kind::Unbound: return "unbound";
    case Kind::None: return "None";
    case Kind::PyBool: return "bool";
    case Kind::PyInt: return "int";
    case Kind::PyFloat: return "float";
    case Kind::PyComplex: return "complex";
    case Kind::NpScalar: return std::string("np.") + (dtype == DType::Bool ? "bool_" : dtype_name(dtype));
    case Kind::Array: {
      if (pystr) return "str";
      if (pybuf) return std::string("buffer of ") + dtype_name(dtype) + (writeable ? "" : ", readonly");
      if (pylist) {
        std::string s = tuples && ndim == 1 ? "tuple" : ragged ? "ragged list" : "list";
        for (int i = 1; i < ndim; i++) s += tuples && i == ndim - 1 ? " of tuples" : " of lists";
        if (tagged) {
          std::string kinds = (tags & kTagsInts) ? "ints, floats" : "floats";
          if (tags & kTagsNp) kinds += (tags & kTagsBools) ? ", np.float64s" : " and np.float64s";
          if (tags & kTagsBools) kinds += " and bools";
          else if (tags == kTagsInts) kinds = "ints and floats";
          s += " of " + kinds;
          if (!columns.empty()) {
            static const char* const names[] = {"float", "np.float64", "int", "bool"};
            s += " (columns";
            for (int8_t c : columns) s += std::string(" ") + (c >= 0 && c <= 3 ? names[c] : "mixed");
            s += ")";
          }
          return s;
        }
        return s + " of " + (dtype == DType::Int64 ? "ints" : dtype == DType::Float64 ? "floats" : dtype == DType::Complex128 ? "complex numbers" : "bools");
      }
      std::string s = std::string("array(") + dtype_name(dtype) + ", " + std::to_string(ndim) + "d";
      if (layout == CContig) s += ", C";
      if (layout == FContig) s += ", F";
      if (!writeable) s += ", readonly";
      if (temp) s += ", computed";
      if (local) s += ", kept";
      return s + ")";
    }
    case Kind::Tuple: {
      std::string s = "(";
      for (size_t i = 0; i < elems.size(); i++) s += (i ? ", " : "") + elems[i]->str();
      return s + (elems.size() == 1 ? ",)" : ")");
    }
    case Kind::Module: return "module " + name;
    case Kind::Object: return name + " object";
    case Kind::Function: return "the Python function " + name;
    case Kind::Callable: return builtin_name(builtin);
    case Kind::Union: {
      std::string s;
      for (size_t i = 0; i < elems.size(); i++) s += (i ? " | " : "") + elems[i]->str();
      return s;
    }
    case Kind::View: return "row (" + elems[0]->str() + ")";
    case Kind::Slice: return "slice";
    case Kind::Appended: return "list (appended to)";
    case Kind::PyChar: return "character of a str";
  }
  return "?";
}

bool Type::operator==(const Type& o) const {
  if (kind != o.kind) return false;
  switch (kind) {
    case Kind::NpScalar: return dtype == o.dtype;
    case Kind::Array:
      return dtype == o.dtype && ndim == o.ndim && layout == o.layout && writeable == o.writeable && pylist == o.pylist &&
             tagged == o.tagged && tags == o.tags && columns == o.columns && tuples == o.tuples && ragged == o.ragged && made == o.made &&
             pybuf == o.pybuf && pystr == o.pystr && temp == o.temp && local == o.local;
    case Kind::Module:
    case Kind::Object:
    case Kind::Function: return name == o.name;
    case Kind::Callable: return builtin == o.builtin;
    case Kind::View: return base == o.base && origin == o.origin && *elems[0] == *o.elems[0];
    case Kind::Tuple:
    case Kind::Union:
    case Kind::Slice:
      if (elems.size() != o.elems.size()) return false;
      for (size_t i = 0; i < elems.size(); i++)
        if (*elems[i] != *o.elems[i]) return false;
      return true;
    default: return true;
  }
}

size_t Type::hash() const {
  size_t h = static_cast<size_t>(kind) * 1000003u;
  auto mix = [&](size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  mix(static_cast<size_t>(dtype));
  mix(static_cast<size_t>(ndim));
  mix(static_cast<size_t>(layout));
  mix(writeable);
  mix(pylist);
  mix(tagged);
  mix(tags);
  for (int8_t c : columns) mix((size_t)(uint8_t)c);
  mix(tuples);
  mix(ragged);
  mix(made);
  mix(pybuf);
  mix(pystr);
  mix(temp);
  mix(local);
  mix(static_cast<size_t>(builtin));
  mix(std::hash<std::string>()(name));
  mix(static_cast<size_t>(base + 1));
  mix(static_cast<size_t>(origin + 2));
  for (auto& e : elems) mix(e->hash());
  return h;
}

bool Type::is_scalar() const {
  switch (kind) {
    case Kind::PyBool:
    case Kind::PyInt:
    case Kind::PyFloat:
    case Kind::PyComplex:
    case Kind::NpScalar: return true;
    case Kind::Union: return true;
    default: return false;
  }
}

bool Type::is_complex() const {
  return kind == Kind::PyComplex || (kind == Kind::NpScalar && dtype_is_complex(dtype));
}

Repr repr_of(const Type& t) {
  switch (t.kind) {
    case Type::Kind::PyBool: return Repr::I1;
    case Type::Kind::PyInt: return Repr::I64;
    case Type::Kind::PyFloat: return Repr::F64;
    case Type::Kind::NpScalar:
      switch (t.dtype) {
        case DType::Bool: return Repr::I1;
        case DType::Int8: case DType::UInt8: return Repr::I8;
        case DType::Int16: case DType::UInt16: return Repr::I16;
        case DType::Int32: case DType::UInt32: return Repr::I32;
        case DType::Int64: case DType::UInt64: return Repr::I64;
        case DType::Float32: return Repr::F32;
        case DType::Float64: return Repr::F64;
        case DType::Complex64: case DType::Complex128: return Repr::None;  // lowered to parts
      }
      return Repr::None;
    case Type::Kind::Union: {
      for (auto& e : t.elems)
        if (e->kind != Type::Kind::Unbound) return repr_of(*e);
      return Repr::None;
    }
    case Type::Kind::View: return Repr::I64;
    case Type::Kind::Appended: return Repr::I64;  // the buffer's address
    case Type::Kind::PyChar: return Repr::I32;  // the code point
    case Type::Kind::Array: return t.local ? Repr::I64 : Repr::None;  // the pointer to its memory
    default: return Repr::None;
  }
}

namespace types {
namespace {
TypeRef simple(Type::Kind k) {
  auto t = std::make_shared<Type>();
  t->kind = k;
  return t;
}
}  // namespace

TypeRef unknown() { static TypeRef t = simple(Type::Kind::Unknown); return t; }
TypeRef unbound() { static TypeRef t = simple(Type::Kind::Unbound); return t; }
TypeRef none() { static TypeRef t = simple(Type::Kind::None); return t; }
TypeRef py_bool() { static TypeRef t = simple(Type::Kind::PyBool); return t; }
TypeRef view(int base, TypeRef row, int origin) {
  auto t = std::make_shared<Type>();
  t->kind = Type::Kind::View;
  t->base = base;
  t->origin = origin;
  t->elems = {std::move(row)};
  return t;
}

TypeRef real_part(const TypeRef& t) {
  switch (t->kind) {
    case Type::Kind::PyBool: case Type::Kind::PyInt: return py_int();
    case Type::Kind::PyFloat: return t;
    case Type::Kind::NpScalar: return t->is_complex() ? nullptr : t;
    default: return nullptr;
  }
}
TypeRef py_int() { static TypeRef t = simple(Type::Kind::PyInt); return t; }
TypeRef py_float() { static TypeRef t = simple(Type::Kind::PyFloat); return t; }
TypeRef py_complex() { static TypeRef t = simple(Type::Kind::PyComplex); return t; }
TypeRef np_scalar(DType d) {
  static TypeRef cache[kDTypes];
  auto& c = cache[static_cast<int>(d)];
  if (!c) {
    auto t = std::make_shared<Type>();
    t->kind = Type::Kind::NpScalar;
    t->dtype = d;
    c = t;
  }
  return c;
}
TypeRef array(DType d, int ndim, Type::Layout layout, bool writeable) {
  auto t = std::make_shared<Type>();
  t->kind = Type::Kind::Array;
  t->dtype = d;
  t->ndim = ndim;
  t->layout = layout;
  t->writeable = writeable;
  return t;
}
TypeRef array_temp(DType d, int ndim) {
  auto t = std::make_shared<Type>(*array(d, ndim, Type::CContig, true));
  t->temp = true;
  return t;
}
TypeRef array_local(DType d, int ndim) {
  auto t = std::make_shared<Type>(*array(d, ndim, Type::CContig, true));
  t->local = true;
  return t;
}
TypeRef slice(std::vector<TypeRef> parts) {
  auto t = std::make_shared<Type>();
  t->kind = Type::Kind::Slice;
  t->elems = std::move(parts);
  return t;
}
TypeRef appended() {
  auto t = std::make_shared<Type>();
  t->kind = Type::Kind::Appended;
  return t;
}
TypeRef py_list(DType d, int ndim, uint8_t tags, bool tuples, bool ragged) {
  ragged = ragged && ndim == 2 && !tuples;
  auto t = std::make_shared<Type>(*array(d, ndim, ragged ? Type::Strided : Type::CContig, !tuples));
  t->pylist = true;
  t->tagged = tags != 0 && d == DType::Float64;
  t->tags = t->tagged ? tags : 0;
  t->tuples = tuples;
  t->ragged = ragged;
  return t;
}
TypeRef py_list_like(const Type& list, int ndim) {
  auto t = std::make_shared<Type>(*py_list(list.dtype, ndim, list.tags, list.tuples));
  t->columns = list.columns;
  return t;
}
TypeRef made_list(DType d, bool tagged) {
  auto t = std::make_shared<Type>(*py_list(d, 1, tagged ? kTagsNp : 0));
  t->made = true;
  return t;
}
TypeRef py_buffer(DType d, bool writeable) {
  auto t = std::make_shared<Type>(*array(d, 1, Type::Strided, writeable));
  t->pybuf = true;
  return t;
}
TypeRef py_str(DType d) {
  auto t = std::make_shared<Type>(*py_buffer(d, false));
  t->pystr = true;
  return t;
}
TypeRef py_char() {
  auto t = std::make_shared<Type>();
  t->kind = Type::Kind::PyChar;
  return t;
}
TypeRef list_elem(DType d) {
  return dtype_is_complex(d) ? py_complex() : dtype_is_float(d) ? py_float() : d == DType::Bool ? py_bool() : py_int();
}
TypeRef list_elem(const Type& list) {
  if (list.tagged) {
    std::vector<TypeRef> m = {py_float()};
    if (list.tags & kTagsNp) m.push_back(np_scalar(DType::Float64));
    if (list.tags & kTagsInts) m.push_back(py_int());
    if (list.tags & kTagsBools) m.push_back(py_bool());
    return join(m);
  }
  return list_elem(list.dtype);
}
TypeRef column_elem(const Type& list, int64_t c) {
  if (c < 0 || (size_t)c >= list.columns.size()) return list_elem(list);
  switch (list.columns[(size_t)c]) {
    case kTagFloat: return py_float();
    case kTagNpFloat64: return np_scalar(DType::Float64);
    case kTagInt: return py_int();
    case kTagBool: return py_bool();
    default: return list_elem(list);
  }
}
TypeRef tuple(std::vector<TypeRef> elems) {
  auto t = std::make_shared<Type>();
  t->kind = Type::Kind::Tuple;
  t->elems = std::move(elems);
  return t;
}
TypeRef module(const std::string& name) {
  auto t = std::make_shared<Type>();
  t->kind = Type::Kind::Module;
  t->name = name;
  return t;
}
TypeRef object(const std::string& name) {
  auto t = std::make_shared<Type>();
  t->kind = Type::Kind::Object;
  t->name = name;
  return t;
}
TypeRef function(const std::string& qualname) {
  auto t = std::make_shared<Type>();
  t->kind = Type::Kind::Function;
  t->name = qualname;
  return t;
}
TypeRef callable(Builtin b) {
  auto t = std::make_shared<Type>();
  t->kind = Type::Kind::Callable;
  t->builtin = b;
  return t;
}

bool same(const TypeRef& a, const TypeRef& b) { return a == b || (a && b && *a == *b); }

TypeRef join(const std::vector<TypeRef>& members) {
  std::vector<TypeRef> flat;
  for (auto& m : members) {
    if (!m) return nullptr;
    if (m->kind == Type::Kind::Union) {
      for (auto& e : m->elems) flat.push_back(e);
    } else {
      flat.push_back(m);
    }
  }
  std::vector<TypeRef> uniq;
  for (auto& m : flat) {
    bool seen = false;
    for (auto& u : uniq) seen = seen || *u == *m;
    if (!seen) uniq.push_back(m);
  }
  if (uniq.empty()) return nullptr;
  // Rows of one container taken at different places: one view no place's facts describe.
  for (size_t a = 0; a < uniq.size(); a++)
    for (size_t b = a + 1; b < uniq.size();) {
      const Type &x = *uniq[a], &y = *uniq[b];
      if (x.kind == Type::Kind::View && y.kind == Type::Kind::View && x.base == y.base && *x.elems[0] == *y.elems[0]) {
        uniq[a] = view(x.base, x.elems[0], -2);
        uniq.erase(uniq.begin() + (long)b);
      } else {
        b++;
      }
    }
  if (uniq.size() == 1) return uniq[0];
  bool view = false;
  for (auto& u : uniq) {
    const bool local = u->kind == Type::Kind::Array && (u->local || u->made);
    view = view || u->kind == Type::Kind::View || local || u->kind == Type::Kind::PyChar || u->kind == Type::Kind::Appended;
    if (!u->is_scalar() && u->kind != Type::Kind::Unbound && u->kind != Type::Kind::None && u->kind != Type::Kind::View &&
        u->kind != Type::Kind::PyChar && u->kind != Type::Kind::Appended && !local)
      return nullptr;
  }
  // A view (or a kept array, a character of a str, a list the nest makes) shares its
  // variable only with "unbound" (one kind of row, one kind of slot).
  if (view && uniq.size() != 2) return nullptr;
  if (view && uniq[0]->kind != Type::Kind::Unbound && uniq[1]->kind != Type::Kind::Unbound) return nullptr;
  std::sort(uniq.begin(), uniq.end(), [](const TypeRef& a, const TypeRef& b) { return a->str() < b->str(); });
  auto t = std::make_shared<Type>();
  t->kind = Type::Kind::Union;
  t->elems = std::move(uniq);
  return t;
}

bool uniform(const TypeRef& t) {
  if (!t) return false;
  if (t->kind != Type::Kind::Union) return t->kind != Type::Kind::Unbound;
  bool all_f64 = true, all_bool = true;
  for (auto& u : t->elems) {
    all_f64 = all_f64 && (u->kind == Type::Kind::PyFloat || (u->kind == Type::Kind::NpScalar && u->dtype == DType::Float64));
    all_bool = all_bool && (u->kind == Type::Kind::PyBool || (u->kind == Type::Kind::NpScalar && u->dtype == DType::Bool));
  }
  return all_f64 || all_bool;
}

bool may_be_unbound(const TypeRef& t) {
  if (!t) return false;
  if (t->kind == Type::Kind::Unbound) return true;
  if (t->kind != Type::Kind::Union) return false;
  for (auto& u : t->elems)
    if (u->kind == Type::Kind::Unbound) return true;
  return false;
}

TypeRef without_unbound(const TypeRef& t) {
  if (!t || t->kind == Type::Kind::Unbound) return nullptr;
  if (t->kind != Type::Kind::Union) return t;
  std::vector<TypeRef> rest;
  for (auto& u : t->elems)
    if (u->kind != Type::Kind::Unbound) rest.push_back(u);
  return rest.empty() ? nullptr : join(rest);
}
}  // namespace types

int item_bytes(const Type& t) { return t.tagged ? 16 : dtype_size(t.dtype); }

}  // namespace stagepy
