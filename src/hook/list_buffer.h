// Python lists as kernel data: in, a list (of lists, rectangular; the innermost rows may be
// tuples, read only) whose elements are all
// exact Python ints that fit 64 bits, all floats (or floats, numpy.float64s, such ints and
// bools: a tagged list, each element its value and a tag saying which), or all bools; out, a C-contiguous native
// buffer the kernel reads and writes like an array, and afterwards the elements that
// changed written back into the same list objects as new Python objects of the element
// type (the lists keep their identity and every reference into them sees the change).
//
// A list of lists of items whose inner lists differ in length is held ragged (Type::ragged):
// the items of all rows one after another, and where each row starts (offsets()).
//
// A list of objects whose attributes the nest uses (ir::Var::objects) is read as a table: one
// row per object, one column per attribute name the caller gives (each as the object's
// attribute lookup finds it, where that runs no code), and the values that changed are set
// back on the objects as attributes.
//
// A list that cannot be held this way (ragged deeper down, mixed or other element types, ints beyond
// 64 bits, an inner list that appears twice) gives a reason instead: the nest stays with
// CPython.
#pragma once
#include <Python.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "hook/py_ref.h"
#include "ir/types.h"

namespace stagepy::runtime {

// The Python object of one list element as kernels hold it at `p` (ListBuffer's items, a
// made list's: kernel_abi.h MadeList): a bool, a float or (tagged: its tag says so) an
// np.float64 or an int, a complex, or an int. A new reference, or nullptr with an exception set.
PyObject* box_list_item(DType d, bool tagged, const uint8_t* p);

// The attributes a nest uses on objects (ir::Nest::columns): their names, interned (borrowed),
// and whether the nest assigns each.
struct ObjectColumns {
  std::vector<PyObject*> names;
  std::vector<uint8_t> assigned;
  // Those the nest uses through this list (ir::Var::columns_used); the others are not looked
  // up (the objects need not have them), each held as a copy of a used one of its row.
  std::vector<uint8_t> used;
};

class ListBuffer {
 public:
  // Reads `list` (borrowed; it must outlive the buffer). `seen` maps every list object read
  // in this call to the buffer that copied it; a list met again (`A[0] is A[1]`, or `row`
  // beside `A` with `row is A[0]`) adds the two buffers to `shared`. The caller refuses
  // those where the kernel may write either (`written`): its copies would disagree. Copies
  // of a list only read hold the same values. A list of numbers is read tagged
  // (Type::tagged) where it holds floats with numpy.float64s or with ints, or where `tags`
  // asks for it (kTagsNp, kTagsInts: a nest that stores NumPy floats into a list of floats,
  // or ints into one of floats, or floats into one of ints). On failure returns false and
  // sets `why` (no Python exception is set).
  //
  // With `columns`, `list` holds objects: read as a table of their attributes, every object
  // once (an object met twice is shared like a list; with `track_objects` only: the caller
  // leaves it off where no table of objects may be written); `will_write` (the kernel may store
  // into it) also asks that its class set attributes the default way, as write_back will, and
  // that each attribute the nest assigns be the object's own (where it is the class's,
  // CPython would add it to the instance even when the value stays the same).
  bool read(PyObject* list, std::unordered_map<PyObject*, ListBuffer*>& seen,
            std::vector<std::pair<ListBuffer*, ListBuffer*>>& shared, std::string* why, uint8_t tags = 0,
            const struct ObjectColumns* columns = nullptr, bool will_write = false, bool track_objects = true);
  bool objects() const { return columns_ != nullptr; }
  const ObjectColumns* object_columns() const { return columns_; }
  // Whether the kernel may store into the list (some variable holding it is a store's root).
  bool written = false;
  // Keeps a copy of the elements as read, for write_back; called (before the kernel runs)
  // for a list that is `written`. Reading a list only needs no copy.
  void keep_before();

  // Writes the elements that differ from what was read back into the lists (none for a
  // list without keep_before()). -1 with a Python exception set if a new object could not
  // be made.
  int write_back();

  DType dtype() const { return dtype_; }
  bool tagged() const { return tagged_; }
  uint8_t tags() const { return tags_; }  // Type::tags
  // A tagged table of objects: per column, the tag its elements share, or -1 (Type::columns).
  const std::vector<int8_t>& column_tags() const { return columns_tags_; }
  // The innermost rows are tuples (`[(x, y), ...]`): read only (Type::tuples).
  bool tuples() const { return tuples_; }
  int item_bytes() const { return tagged_ ? 16 : dtype_size(dtype_); }
  int ndim() const { return (int)shape_.size(); }
  void* data() { return bytes_.data(); }
  const Py_ssize_t* shape() const { return shape_.data(); }
  const Py_ssize_t* strides() const { return strides_.data(); }
  size_t elements() const;
  // Rows of different lengths: shape()[1] is 0, and row r holds the items offsets()[r] to
  // offsets()[r + 1] (rows + 1 int64s).
  bool ragged() const { return ragged_; }
  const int64_t* offsets() const { return offsets_.data(); }
  size_t bytes() const { return bytes_.size(); }

 private:
  // Element `at`'s value, as an item of `d` (its own type: in a list of ints and floats,
  // either, each 8 bytes); false (with `why`) for an int beyond 64 bits.
  bool store(PyObject* item, DType d, size_t at, std::string* why);
  // Reads every element (ints or floats, dtype_) where all are of that exact type: 1; 0 at the
  // first that is not (the general loop then reads them); -1 with `why` (an int beyond 64 bits).
  int read_exact(std::string* why);
  // read()'s parts: the shape and innermost rows of a list (of lists), or of a list of
  // objects (with columns: shape_, rows_ and values_); then every item.
  bool read_lists(PyObject* list, std::unordered_map<PyObject*, ListBuffer*>& seen,
                  std::vector<std::pair<ListBuffer*, ListBuffer*>>& shared, std::string* why);
  bool read_items(std::string* why, uint8_t tags);
  // The rows of a list of objects (read() with columns): shape_, rows_ and values_.
  bool read_objects(PyObject* list, bool will_write, bool track_objects, std::unordered_map<PyObject*, ListBuffer*>& seen,
                    std::vector<std::pair<ListBuffer*, ListBuffer*>>& shared, std::string* why);
  // The items of innermost row r (a list's or tuple's; an object's attribute values).
  PyObject* const* row_items(size_t r) const;

  DType dtype_ = DType::Int64;
  bool tagged_ = false;
  uint8_t tags_ = 0;
  std::vector<int8_t> columns_tags_;
  bool tuples_ = false;
  bool ragged_ = false;
  // The length of innermost row r.
  Py_ssize_t row_length(size_t r) const;
  std::vector<Py_ssize_t> shape_, strides_;
  std::vector<int64_t> offsets_;  // ragged: where each row starts, then the number of items
  std::vector<PyObject*> rows_;  // the innermost lists (or tuples), in order (borrowed)
  std::vector<uint8_t> bytes_;   // the elements, as the kernel sees them
  std::vector<uint8_t> before_;  // the same, as read
  const ObjectColumns* columns_ = nullptr;  // a list of objects: its attributes
  std::vector<PyRef> values_;      // ... and their values, row by row (while reading)
  std::vector<PyObject*> value_items_;  // the same, borrowed (row_items)
};

}  // namespace stagepy::runtime
