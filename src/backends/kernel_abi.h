// The calling convention between the runtime and a compiled kernel, shared by every
// backend and by the dispatcher that marshals arguments (through libffi).
//
//   int32 kernel(int64* state, <params...>)
//
// params: for each variable the nest reads that holds a value at entry, in variable
// order: a scalar (its machine representation); for an array its data pointer, then
// its shape (int64 per dimension), then its strides in bytes (int64 per dimension); for
// a tuple of scalars, its items.
// state: for each variable the nest assigns, two slots (value bits, type tag; tag 0 means
// unbound) and for each For loop three slots (current value, stop, step). The kernel
// fills them before returning: 0 when the nest finished, k when it stopped before resume
// point k - 1 so CPython can run that statement itself.
#pragma once
#include <cstdint>
#include <vector>

#include "ir/types.h"

namespace stagepy {

struct KernelParam {
  enum class Kind : uint8_t { Scalar, Data, Shape, Stride, TupleItem } kind = Kind::Scalar;
  int var = -1;    // the variable it comes from
  Repr repr = Repr::I64;  // Scalar
  int dim = 0;     // Shape/Stride: the dimension; TupleItem: the item
};

struct KernelLayout {
  std::vector<KernelParam> params;
  std::vector<int> var_slot;    // per variable: first state slot, or -1 (not assigned)
  std::vector<int> loop_slot;   // per loop: first state slot, or -1 (while loops)
  int slots = 0;
  std::vector<int> arrays;      // array id -> variable (live-in arrays, in parameter order)
};

}  // namespace stagepy
