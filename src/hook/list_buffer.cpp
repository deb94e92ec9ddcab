// See list_buffer.h.
#include "hook/list_buffer.h"

#include <cstring>

#include "hook/frame_access.h"
#include "hook/numpy_bridge.h"

namespace stagepy::runtime {

namespace {
constexpr size_t kMaxDepth = 8;

std::string type_name(PyObject* o) {
  if (PyLong_Check(o) || PyFloat_Check(o) || PyComplex_Check(o)) return std::string("instances of ") + Py_TYPE(o)->tp_name;
  return std::string(Py_TYPE(o)->tp_name) + " objects";
}
// The item type an element is held as: exact floats (and numpy.float64s: `*np`), ints,
// bools and complex numbers only.
bool item_dtype(PyObject* item, DType* d, bool* np, std::string* why) {
  PyTypeObject* t = Py_TYPE(item);
  *np = false;
  DType sd;
  if (t == &PyFloat_Type) *d = DType::Float64;
  else if (t == &PyLong_Type) *d = DType::Int64;
  else if (t == &PyBool_Type) *d = DType::Bool;
  else if (t == &PyComplex_Type) *d = DType::Complex128;
  else if (PyFloat_Check(item) && np::scalar_dtype(item, &sd) && sd == DType::Float64) *d = DType::Float64, *np = true;
  else {
    *why = "holds " + type_name(item);
    // (Objects read as values: the nest uses them otherwise, e.g. calls a method of theirs
    // inside a loop of a function it inlines, where no method is looked up.)
    if (plain_object(item)) *why += ", which the nest uses otherwise than through their attributes and the methods it inlines";
    return false;
  }
  return true;
}
// A float (or numpy.float64) element's value at `p`.
inline void put_float(PyObject* item, uint8_t* p) {
  double v = PyFloat_AS_DOUBLE(item);
  std::memcpy(p, &v, 8);
}
// An int element's value at `p`; false (with `why`) beyond 64 bits.
inline bool put_int(PyObject* item, uint8_t* p, std::string* why) {
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(item, &overflow);
  if (overflow) {
    *why = "holds an int beyond 64 bits";
    return false;
  }
  std::memcpy(p, &v, 8);
  return true;
}
}  // namespace

bool ListBuffer::store(PyObject* item, DType d, size_t at, std::string* why) {
  uint8_t* p = bytes_.data() + at * (size_t)dtype_size(dtype_);  // tagged: made below
  switch (d) {
    case DType::Bool:
      if (dtype_ == DType::Bool) {
        *p = item == Py_True ? 1 : 0;
      } else {  // among numbers: 0 or 1 in 64 bits (kTagBool)
        const int64_t v = item == Py_True ? 1 : 0;
        std::memcpy(p, &v, 8);
      }
      return true;
    case DType::Float64: put_float(item, p); return true;
    case DType::Complex128: {
      Py_complex c = ((PyComplexObject*)item)->cval;
      double v[2] = {c.real, c.imag};
      std::memcpy(p, v, 16);
      return true;
    }
    default: return put_int(item, p, why);
  }
}

int ListBuffer::read_exact(std::string* why) {
  PyTypeObject* want = dtype_ == DType::Int64 ? &PyLong_Type : &PyFloat_Type;
  uint8_t* out = bytes_.data();
  for (size_t r = 0; r < rows_.size(); r++) {
    PyObject* const* items = row_items(r);
    for (Py_ssize_t j = 0, len = row_length(r); j < len; j++, out += 8) {
      if (Py_TYPE(items[j]) != want) return 0;
      if (dtype_ == DType::Float64) put_float(items[j], out);
      else if (!put_int(items[j], out, why)) return -1;
    }
  }
  return 1;
}

bool ListBuffer::read(PyObject* list, std::unordered_map<PyObject*, ListBuffer*>& seen,
                      std::vector<std::pair<ListBuffer*, ListBuffer*>>& shared, std::string* why, uint8_t tags,
                      const ObjectColumns* columns, bool will_write, bool track_objects) {
  columns_ = columns;
  values_.clear();
  value_items_.clear();
  if (columns) {
    if (!read_objects(list, will_write, track_objects, seen, shared, why)) return false;
  } else if (!read_lists(list, seen, shared, why)) {
    return false;
  }
  return read_items(why, tags);
}

bool ListBuffer::read_lists(PyObject* list, std::unordered_map<PyObject*, ListBuffer*>& seen,
                            std::vector<std::pair<ListBuffer*, ListBuffer*>>& shared, std::string* why) {
  // The shape, from the first element at each depth; tuples only as the innermost rows.
  shape_.clear();
  tuples_ = false;
  PyObject* at = list;
  while (PyList_CheckExact(at) || (!shape_.empty() && PyTuple_CheckExact(at))) {
    if (shape_.size() == kMaxDepth) {
      *why = "is nested more than " + std::to_string(kMaxDepth) + " deep";
      return false;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(at);
    shape_.push_back(n);
    if (PyTuple_CheckExact(at)) {
      tuples_ = true;
      break;
    }
    if (n == 0) break;
    at = PyList_GET_ITEM(at, 0);
  }
  // Every list of the right length, every list once; the innermost ones in order. A list
  // of lists of items whose rows differ in length is read ragged: all rows' items one after
  // another, offsets_ saying where each row starts.
  rows_.clear();
  ragged_ = false;
  std::vector<PyObject*> level = {list}, next;
  for (size_t d = 0; d < shape_.size(); d++) {
    next.clear();
    const bool tuple_level = tuples_ && d + 1 == shape_.size();
    for (PyObject* l : level) {
      if (tuple_level ? !PyTuple_CheckExact(l) : !PyList_CheckExact(l)) {
        *why = tuple_level ? (PyTuple_Check(l) ? "holds a subclass of tuple (a named tuple)" : "mixes tuples with other values")
               : PyList_Check(l) ? "holds a subclass of list"
                                 : "is ragged (lists mixed with other values)";
        return false;
      }
      if (PySequence_Fast_GET_SIZE(l) != shape_[d]) {
        if (d == 1 && shape_.size() == 2 && !tuple_level) {
          ragged_ = true;
        } else {
          *why = tuple_level ? "holds tuples of different lengths" : "is ragged (inner lists of different lengths)";
          return false;
        }
      }
      if (!tuple_level) {  // (a tuple met twice is harmless: nothing stores into it)
        auto [it, first] = seen.emplace(l, this);
        if (!first) shared.emplace_back(it->second, this);
      }
      if (d + 1 < shape_.size())
        for (Py_ssize_t i = 0; i < shape_[d]; i++) next.push_back(PyList_GET_ITEM(l, i));
    }
    if (d + 1 < shape_.size()) level.swap(next);
  }
  rows_ = level;
  offsets_.clear();
  if (ragged_) {
    offsets_.reserve(rows_.size() + 1);
    int64_t at = 0;
    offsets_.push_back(0);
    for (PyObject* r : rows_) offsets_.push_back(at += PyList_GET_SIZE(r));
    shape_[1] = 0;  // no one length: kernels read the rows' own (Type::ragged)
  }
  return true;
}

bool ListBuffer::read_objects(PyObject* list, bool will_write, bool track_objects, std::unordered_map<PyObject*, ListBuffer*>& seen,
                              std::vector<std::pair<ListBuffer*, ListBuffer*>>& shared, std::string* why) {
  tuples_ = ragged_ = false;
  offsets_.clear();
  // (A tuple of objects too: the nest never stores into the sequence itself.)
  if (!PyList_CheckExact(list) && !PyTuple_CheckExact(list)) {
    *why = PyList_Check(list) || PyTuple_Check(list) ? "is a subclass of list or tuple" : "is not a list or a tuple";
    return false;
  }
  auto [it, first] = seen.emplace(list, this);
  if (!first) shared.emplace_back(it->second, this);
  const size_t n = (size_t)PySequence_Fast_GET_SIZE(list), k = columns_->names.size();
  shape_ = {(Py_ssize_t)n, (Py_ssize_t)k};
  rows_.assign(n, nullptr);
  values_.reserve(n * k);
  if (track_objects) seen.reserve(seen.size() + n);
  for (size_t r = 0; r < n; r++) {
    PyObject* o = PySequence_Fast_GET_ITEM(list, (Py_ssize_t)r);
    if (!plain_object(o)) {
      *why = "holds " + type_name(o) + (PyList_Check(o) || PyTuple_Check(o) || PyLong_Check(o) || PyFloat_Check(o)
                                            ? ", which have no attributes"
                                            : ", whose attributes only code of their class can read");
      return false;
    }
    if (will_write && Py_TYPE(o)->tp_setattro != PyObject_GenericSetAttr) {
      *why = "holds " + type_name(o) + ", whose class sets attributes with code of its own (__setattr__)";
      return false;
    }
    if (track_objects) {
      auto [at, once] = seen.emplace(o, this);
      if (!once) shared.emplace_back(at->second, this);
    }
    rows_[r] = o;
    const size_t row_start = values_.size();
    size_t first_used = k;
    for (size_t c = 0; c < k; c++) {
      if (!columns_->used[c]) {
        values_.emplace_back();  // (filled below)
        continue;
      }
      if (first_used == k) first_used = c;
      PyObject* value = nullptr;
      bool own = true;
      std::string no;
      const bool assigned = will_write && columns_->assigned[c];
      if (object_attribute(o, columns_->names[c], &value, &no, assigned ? &own : nullptr) < 0) {
        PyErr_Clear();  // (a failed lookup: the nest stays with CPython, which meets it too)
        no = "cannot be read";
      }
      // (The attribute's name, for a reason only.)
      auto attr = [&] { return std::string(PyUnicode_AsUTF8(columns_->names[c])); };
      if (!no.empty()) {
        *why = "holds " + type_name(o) + " whose attribute `" + attr() + "` " + no;
        return false;
      }
      values_.push_back(PyRef::steal(value));
      if (!own) {
        *why = "holds " + type_name(o) + " whose attribute `" + attr() +
               "` is their class's, which the nest would set on each object";
        return false;
      }
    }
    // Columns the nest never uses through this list: a used one's value again (the same
    // item type; never read or written).
    for (size_t c = 0; c < k && first_used < k; c++)
      if (!columns_->used[c]) values_[row_start + c] = PyRef::borrow(values_[row_start + first_used].get());
  }
  value_items_.reserve(values_.size());
  for (auto& v : values_) value_items_.push_back(v.get());
  return true;
}

PyObject* const* ListBuffer::row_items(size_t r) const {
  if (columns_) return value_items_.data() + r * columns_->names.size();
  return PySequence_Fast_ITEMS(rows_[r]);
}

bool ListBuffer::read_items(std::string* why, uint8_t tags) {
  // The elements, in one pass: the first decides the type (an empty list holds ints),
  // every other must match it, or be another of the numbers (ints, floats, np.float64s,
  // bools: a list of numbers mixed, read tagged).
  dtype_ = DType::Int64;
  columns_tags_.clear();
  bool np = false;
  PyObject* first = nullptr;
  for (size_t r = 0; r < rows_.size() && !first; r++)
    if (row_length(r) > 0) first = row_items(r)[0];
  // (A list of objects: its objects' attributes, said so.)
  auto items_are = [&](const std::string& what) {
    if (columns_)
      *why = what.rfind("holds ", 0) == 0 ? "holds objects whose attributes include " + what.substr(6)
                                          : "holds objects whose attributes mix numbers with complex numbers";
    else *why = what;
    return false;
  };
  if (first && !item_dtype(first, &dtype_, &np, why)) return items_are(*why);
  auto is_number = [](PyObject* x) { return PyLong_CheckExact(x) || PyFloat_Check(x) || PyBool_Check(x); };
  if (dtype_ == DType::Bool) {
    // Bools with ints or floats: each held in 64 bits, as the numbers are (then tagged).
    bool others = false;
    for (size_t r = 0; r < rows_.size() && !others; r++)
      for (Py_ssize_t j = 0, len = row_length(r); j < len && !others; j++)
        others = !PyBool_Check(row_items(r)[j]) && is_number(row_items(r)[j]);
    if (others) dtype_ = DType::Int64;
  }
  // The tag of an element of the first one's type (kTagBool where bools come first).
  const int64_t plain = first && PyBool_Check(first) ? kTagBool : dtype_ == DType::Int64 ? kTagInt : kTagFloat;
  bytes_.resize(elements() * (size_t)dtype_size(dtype_));
  before_.clear();  // made by keep_before(), for a list the kernel may write
  const bool numbers = dtype_ == DType::Int64 || dtype_ == DType::Float64;
  // Each element's tag (kTagFloat, kTagNpFloat64, kTagInt, kTagBool), made at the first
  // element that is not of the first one's exact type.
  std::vector<uint8_t> kind;
  bool has_np = false, has_int = plain == kTagInt, has_float = plain == kTagFloat, has_bool = plain == kTagBool;
  // The common case first: every element of the first one's exact type (ints, floats),
  // read without a call per element; else the general loop reads them all.
  const int exact = numbers && plain != kTagBool ? read_exact(why) : 0;
  if (exact < 0) return false;
  size_t k = 0;
  for (size_t r = 0; r < rows_.size() && !exact; r++)
    for (Py_ssize_t j = 0, len = row_length(r); j < len; j++, k++) {
      PyObject* x = row_items(r)[j];
      DType d;
      if (!item_dtype(x, &d, &np, why)) return items_are(*why);
      const bool number = d == DType::Int64 || d == DType::Float64 || d == DType::Bool;
      if (d != dtype_ && !(numbers && number)) return items_are("mixes element types");
      const int64_t tag = d == DType::Int64 ? kTagInt : d == DType::Bool ? kTagBool : np ? kTagNpFloat64 : kTagFloat;
      if (numbers && kind.empty() && (tag != plain)) kind.assign(elements(), (uint8_t)plain);
      if (!kind.empty()) kind[k] = (uint8_t)tag;
      has_np = has_np || np;
      has_int = has_int || d == DType::Int64;
      has_float = has_float || d == DType::Float64;
      has_bool = has_bool || d == DType::Bool;
      if (!store(x, d, k, why)) return false;
    }
  // A tagged list: each element's value, then its tag (an int64, so that no byte is
  // padding and write_back compares whole elements). Floats among ints, or ints, bools or
  // np.float64s among floats, or bools among ints; or what `tags` asks for (a nest that
  // stores such values into the list): floats and np.float64s, or ints and floats.
  uint8_t bits = 0;
  if (numbers) {
    if (has_np || (has_float && (tags & kTagsNp))) bits |= kTagsNp;
    if ((has_int && (has_float || has_np || has_bool)) || (tags & kTagsInts)) bits |= kTagsInts;
    if ((has_bool && (has_int || has_float || has_np)) || (tags & kTagsBools)) bits |= kTagsBools;
    if (bits & kTagsBits) bits |= tags & kTagsNp;
  }
  tagged_ = bits != 0;
  tags_ = bits;
  if (tagged_) {
    dtype_ = DType::Float64;
    std::vector<uint8_t> wide(elements() * 16);
    for (size_t i = 0; i < elements(); i++) {
      const int64_t tag = kind.empty() ? plain : (int64_t)kind[i];
      std::memcpy(&wide[i * 16], &bytes_[i * 8], 8);
      std::memcpy(&wide[i * 16 + 8], &tag, 8);
    }
    bytes_.swap(wide);
    // A table of objects: the tag each column's elements share, where they do (unless
    // `tags` asks for the table whole).
    if (columns_ && !(tags & kTagsWhole) && shape_.size() == 2) {
      const size_t n = rows_.size(), nc = (size_t)shape_[1];
      columns_tags_.assign(nc, -1);
      for (size_t c = 0; c < nc && n > 0; c++) {
        const int64_t t0 = kind.empty() ? plain : kind[c];
        bool one = true;
        for (size_t r = 1; r < n && one && !kind.empty(); r++) one = kind[r * nc + c] == t0;
        columns_tags_[c] = one ? (int8_t)t0 : (int8_t)-1;
      }
      if (n == 0) columns_tags_.clear();
    }
  }
  strides_.assign(shape_.size(), (Py_ssize_t)item_bytes());
  for (size_t d = shape_.size() - 1; d-- > 0;) strides_[d] = strides_[d + 1] * shape_[d + 1];
  value_items_.clear();  // (the values are copied)
  values_.clear();
  return true;
}

size_t ListBuffer::elements() const {
  if (ragged_) return (size_t)offsets_.back();
  return rows_.size() * (shape_.empty() ? 0 : (size_t)shape_.back());
}

Py_ssize_t ListBuffer::row_length(size_t r) const {
  return ragged_ ? (Py_ssize_t)(offsets_[r + 1] - offsets_[r]) : shape_.back();
}

PyObject* box_list_item(DType d, bool tagged, const uint8_t* p) {
  switch (d) {
    case DType::Bool: return Py_NewRef(*p ? Py_True : Py_False);
    case DType::Float64: {
      double v;
      std::memcpy(&v, p, 8);
      int64_t tag = kTagFloat;
      if (tagged) std::memcpy(&tag, p + 8, 8);
      if (tag == kTagNpFloat64) {
        uint64_t bits;
        std::memcpy(&bits, p, 8);
        return np::box_scalar(DType::Float64, bits);
      }
      if (tag == kTagInt) {
        long long i;
        std::memcpy(&i, p, 8);
        return PyLong_FromLongLong(i);
      }
      if (tag == kTagBool) return Py_NewRef(p[0] ? Py_True : Py_False);
      return PyFloat_FromDouble(v);
    }
    case DType::Complex128: {
      double v[2];
      std::memcpy(v, p, 16);
      return PyComplex_FromDoubles(v[0], v[1]);
    }
    default: {
      long long v;
      std::memcpy(&v, p, 8);
      return PyLong_FromLongLong(v);
    }
  }
}

void ListBuffer::keep_before() {
  if (before_.size() != bytes_.size()) before_ = bytes_;
}

int ListBuffer::write_back() {
  // A list no kernel store reaches is unchanged; so are tuples (type inference refuses
  // stores into them).
  if (before_.size() != bytes_.size() || tuples_) return 0;
  const size_t item = (size_t)item_bytes();
  if (elements() == 0) return 0;  // nothing changed (and no buffers to compare)
  size_t at = 0;  // where row r starts, in bytes
  for (size_t r = 0; r < rows_.size(); r++) {
    const Py_ssize_t len = row_length(r);
    const size_t row_bytes = item * (size_t)len;
    const uint8_t* now = bytes_.data() + at;
    const uint8_t* old = before_.data() + at;
    at += row_bytes;
    if (std::memcmp(now, old, row_bytes) == 0) continue;
    for (Py_ssize_t j = 0; j < len; j++) {
      const uint8_t* p = now + (size_t)j * item;
      if (std::memcmp(p, old + (size_t)j * item, item) == 0) continue;
      PyObject* obj = box_list_item(dtype_, tagged_, p);
      if (!obj) return -1;
      if (columns_) {  // an object's attribute (its class sets them the default way: read())
        PyRef value = PyRef::steal(obj);
        if (PyObject_SetAttr(rows_[r], columns_->names[(size_t)j], value.get()) < 0) return -1;
      } else if (PyList_SetItem(rows_[r], j, obj) < 0) {  // steals obj, releases the old item
        return -1;
      }
    }
  }
  return 0;
}

}  // namespace stagepy::runtime
