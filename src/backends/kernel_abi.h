// The calling convention between the runtime and a compiled kernel, shared by every
// backend and by the dispatcher that marshals arguments (through libffi).
//
//   int32 kernel(int64* state, <params...>)
//
// params: for each variable the nest reads that holds a value at entry, in variable
// order: a scalar (its machine representation); for an array its data pointer, then
// its shape (int64 per dimension), then its strides in bytes (int64 per dimension), and for
// a ragged list of lists (Type::ragged) the address of its row offsets (list_buffer.h); for
// a tuple of scalars, its items.
// state: for each variable the nest assigns, two slots (value bits, type tag; tag 0 means
// unbound) and for each For loop three slots (current value, stop, step). The kernel
// fills them before returning: 0 when the nest finished, k when it stopped before resume
// point k - 1 so CPython can run that statement itself. After those, three slots per
// warning site (FpMode::Deferred), one per kind (divide by zero, overflow, invalid): 0 if
// the site's operation never raised it, else the place of its first occurrence among all
// the warnings the kernel saw (1, 2, ...), for the runtime to emit them afterwards in
// CPython's order. Then, per parallel loop, how many times it ran on several threads.
//
// A variable holding an array the nest computed (`d = X[i] - X[j]`, Type::local) has as its
// value bits the address of the kernel's scratch memory that holds it: kLocalArrayHeader
// bytes whose first int64s are its extents, then its items in C order. The memory stays
// valid until the calling thread's next kernel.
//
// A variable that may hold a list the nest makes (Type::made) has as its value bits the
// address of a MadeList header (backends/cpu/made_lists.h): the list's length, the address
// of its items, and for a list read at entry the id of its live-in array (its position
// among the kernel's array parameters), for one the kernel made -1; and whether a list it
// appends to holds it (then no variable need hold it to keep it).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ir/types.h"

namespace stagepy {

constexpr int64_t kLocalArrayHeader = 64;  // bytes before a kept array's items (at most 8 extents)

struct MadeList {
  int64_t len = 0;
  char* data = nullptr;
  int64_t source = -1;  // the live-in array's id, or -1 for a list the kernel made
  int64_t bytes = 0;    // made: how many bytes its items may take
  int64_t pinned = 0;   // made: 1 once appended to another list (its memory is never reused)
  int64_t kind = 0;     // made: its items' DType, | 256 for a tagged list (floats and np.float64s)
};

struct KernelParam {
  enum class Kind : uint8_t { Scalar, Data, Shape, Stride, RowOffsets, TupleItem } kind = Kind::Scalar;
  int var = -1;    // the variable it comes from
  Repr repr = Repr::I64;  // Scalar
  int dim = 0;     // Shape/Stride: the dimension; TupleItem: the item
};

// How a kernel treats the NumPy operations that make NumPy warn (a float operation whose
// result is infinite or NaN from operands that were not, an integer that wraps):
//   Exact:    the statement goes to CPython, which warns (or raises) itself;
//   Deferred: the kernel computes on (the values are the same) and records which warnings
//             each site would have raised; the runtime emits them after the kernel, as
//             NumPy would have (np.errstate "warn", warnings filters that neither raise
//             nor show every occurrence);
//   Ignore:   np.errstate ignores all of them: no check at all.
enum class FpMode : uint8_t { Exact, Deferred, Ignore };

struct WarnSite {
  const char* op = "";   // NumPy's name of the operation: "add", "subtract", "multiply", "divide"
  DType dtype = DType::Float64;
  int line = 0;
  // The operands' Python-level types ("np.bool_", "int", ...): NumPy words the warning
  // differently when it computes through its ufuncs rather than its scalar arithmetic.
  std::string lhs, rhs;
};

struct KernelLayout {
  std::vector<KernelParam> params;
  std::vector<int> var_slot;    // per variable: first state slot, or -1 (not assigned)
  std::vector<int> loop_slot;   // per loop: first state slot, or -1 (while loops)
  int slots = 0;
  std::vector<int> arrays;      // array id -> variable (live-in arrays, in parameter order)
  int warn_slot = -1;           // first warning-site slot (FpMode::Deferred)
  std::vector<WarnSite> warn_sites;
  // Per loop outlined to run on several threads: (loop id, slot counting the times it did).
  std::vector<std::pair<int, int>> parallel_runs;
};

}  // namespace stagepy
