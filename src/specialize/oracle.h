// The type oracle: in, an operation and the Python-level types of its operands; out, the
// type CPython (with the installed NumPy) gives the result, or nullptr when the
// operation raises TypeError for those types.
//
// Pure-Python rules are built in. Everything involving a NumPy scalar comes from tables
// the CPython-facing layer fills by running each operation once on sample values with
// the installed NumPy (python/stagepy/_types.py), so promotion follows whichever NumPy
// is installed instead of a copy of its rules.
#pragma once
#include <optional>
#include <array>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "backends/cpu/complex_functions.h"
#include "ir/ir.h"
#include "ir/types.h"

namespace stagepy::specialize {

// The scalar types the oracle indexes.
enum class SK : uint8_t {
  PyBool, PyInt, PyFloat, NpBool, I8, I16, I32, I64, U8, U16, U32, U64, F32, F64, C64, C128, PyComplex, Count
};
constexpr int kSK = static_cast<int>(SK::Count);
int sk_index(const Type& t);   // -1 if `t` is not one of them
TypeRef sk_type(int sk);
const char* sk_name(int sk);   // "bool", "int", "float", "numpy.bool_", "numpy.int8", ...
int sk_from_name(const std::string& name);

constexpr int kBinOps = 13;
constexpr int kUnOps = 4;

struct Oracle {
  Oracle();  // pure-Python entries filled in

  TypeRef binary(ir::BinOp op, const TypeRef& a, const TypeRef& b) const;
  TypeRef unary(ir::UnOp op, const TypeRef& a) const;
  TypeRef compare(const TypeRef& a, const TypeRef& b) const;   // the order comparisons
  TypeRef call(Builtin f, const std::vector<TypeRef>& args) const;

  // Entries from probing NumPy: kind is "bin", "un", "cmp", "call1" or "call2"; `op` names
  // the operator or builtin; result "" for "raises".
  bool set_entry(const std::string& kind, const std::string& op, int a, int b, const std::string& result);

  // NumPy's own inner loops for the functions stagepy does not compute itself (np.exp...):
  // (builtin, dtype) -> (loop, its data). Kernels call them one element at a time, so the
  // results are NumPy's, bit for bit. Registered only after a self-test against NumPy.
  struct UfuncLoop {
    void* fn = nullptr;
    void* data = nullptr;
    // Called one element at a time it also gives what the ufunc gives for whole arrays
    // (contiguous, strided and reversed ones; NumPy may take other paths for arrays than
    // for scalars): elementwise operations on arrays may use it.
    bool arrays = false;
  };
  // The self-test runs the first time a kernel needs the loop: `verify_loop` (set by the
  // runtime, which calls NumPy) registers it in `ufunc_loops` if it passes.
  std::map<std::pair<int, int>, UfuncLoop> ufunc_loops;
  std::function<void(Builtin, DType)> verify_loop;
  mutable std::set<std::pair<int, int>> loops_tried;
  const UfuncLoop* ufunc_loop(Builtin f, DType d) const {
    const std::pair<int, int> key{static_cast<int>(f), static_cast<int>(d)};
    auto it = ufunc_loops.find(key);
    if (it == ufunc_loops.end() && verify_loop && loops_tried.insert(key).second) {
      verify_loop(f, d);
      it = ufunc_loops.find(key);
    }
    return it == ufunc_loops.end() ? nullptr : &it->second;
  }

  // A self-test against the installed NumPy (`run`, set by the runtime), run the first time
  // a nest needs what it checks; its answer is kept.
  struct SelfTest {
    std::function<bool()> run;
    mutable int state = 0;  // 0 unchecked, 1 passed, -1 failed
    bool passed() const {
      if (state == 0) state = run && run() ? 1 : -1;
      return state > 0;
    }
  };

  // np.sum of 1-d float arrays is NumPy's pairwise summation (pairwise_sum.h), checked on
  // sample arrays (_types.verify_np_sum).
  SelfTest sum_test;
  bool sum_verified() const { return sum_test.passed(); }

  // math.hypot is CPython's own vector_norm (backends/cpu/vector_norm.h), checked against
  // math.hypot on sample values (_types.verify_hypot).
  SelfTest hypot_test;
  bool hypot_verified() const { return hypot_test.passed(); }

  // np.dot (and `@`) of 1-d float64 / float32 arrays: NumPy's own dot function for the
  // dtype (its ArrFuncs' dotfunc, which both reach for such arrays), by index 0 / 1, checked
  // against np.dot and `@` on sample arrays (_types.verify_np_dot).
  std::array<void*, 2> dot_fn{};
  SelfTest dot_test;
  bool dot_verified() const { return dot_fn[0] && dot_fn[1] && dot_test.passed(); }

  // complex ** and the cmath functions as kernels compute them (complex_functions.h),
  // checked against the running CPython on sample values (_types.verify_cfunc).
  std::array<SelfTest, backends::cpu::kCFnCount> cfunc_tests;
  bool cfunc_verified(backends::cpu::CFn f) const { return cfunc_tests[static_cast<size_t>(f)].passed(); }

  bool numpy = false;             // NumPy entries present
  bool numpy_weak_scalars = true; // NEP 50 (NumPy 2): Python scalars do not decide types by value

  std::array<std::array<std::array<TypeRef, kSK>, kSK>, kBinOps> bin{};
  std::array<std::array<TypeRef, kSK>, kUnOps> un{};
  std::array<std::array<TypeRef, kSK>, kSK> cmp{};
  std::vector<std::array<TypeRef, kSK>> call1;                 // by Builtin
  std::vector<std::array<std::array<TypeRef, kSK>, kSK>> call2;
};

bool is_numpy_builtin(Builtin b);
// The dtype of a NumPy scalar type called as a function (np.float32(x)), if `b` is one.
std::optional<DType> numpy_type_dtype(Builtin b);
bool is_math_builtin(Builtin b);
// NumPy functions of one argument that kernels compute by calling NumPy's own inner loop
// (np.exp, np.sin...; python/stagepy/_types.py, _LOOPED).
bool looped_unary(Builtin b);
int builtin_arity(Builtin b);  // 1 or 2 for math/numpy functions; -1 for variadic builtins
Builtin builtin_from_name(const std::string& qualified);  // "math.sqrt", "numpy.exp", "abs"...

}  // namespace stagepy::specialize
