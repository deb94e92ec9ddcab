// Python-level types of loop-nest values, as the specializer sees them at run time.
//
// A Type names what CPython would hold in a variable: a Python int/float/bool, a NumPy
// scalar of some dtype, an ndarray of some dtype/rank/layout, a known module or callable,
// a tuple. Types decide both the machine representation in a kernel and the exact
// semantics of every operation on it.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace stagepy {

// NumPy element types the kernels handle (same order as DType::name()).
enum class DType : uint8_t {
  Bool, Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64, Float32, Float64, Complex64, Complex128
};
constexpr int kDTypes = 13;
const char* dtype_name(DType d);
int dtype_size(DType d);
bool dtype_is_int(DType d);       // signed or unsigned integer (not bool)
bool dtype_is_signed(DType d);
bool dtype_is_float(DType d);       // float32/float64 (not complex)
bool dtype_is_complex(DType d);

// Functions the kernels know how to compute exactly.
enum class Builtin : uint16_t {
  None_,
  Range, Len, Abs, Min, Max, Int, Float, Bool, Round,
  // math module (CPython calls libm for these; errors as math_1 reports them)
  MathSqrt, MathExp, MathLog, MathLog2, MathLog10, MathSin, MathCos, MathTan, MathAsin, MathAcos,
  MathAtan, MathSinh, MathCosh, MathTanh, MathFabs, MathFloor, MathCeil, MathTrunc, MathAtan2,
  MathPow, MathHypot, MathCopysign, MathFmod, MathIsnan, MathIsinf, MathIsfinite, MathExpm1, MathLog1p,
  MathErf, MathErfc, MathAsinh, MathAcosh, MathAtanh, MathCbrt, MathExp2, MathDegrees, MathRadians,
  // numpy scalar functions (ufuncs)
  NpSqrt, NpExp, NpLog, NpSin, NpCos, NpTan, NpAbs, NpFloor, NpCeil, NpArctan2, NpHypot, NpMinimum,
  NpMaximum, NpFabs, NpTanh, NpArctan, NpLog2, NpLog10, NpExpm1, NpLog1p, NpSinh, NpCosh, NpArcsin,
  NpArccos, NpPower, NpIsnan, NpIsinf, NpIsfinite, NpSign, NpSquare, NpTrunc, NpRint, NpCbrt, NpExp2,
  NpArcsinh, NpArccosh, NpArctanh, NpDeg2rad, NpRad2deg, NpRadians, NpDegrees, NpCopysign, NpFmin, NpFmax,
  // complex(re[, im]); z.conjugate(); and, only in lowered IR (lower_complex.h), the C
  // library's hypot(re, im), which is what abs() of a complex number computes
  Complex, Conjugate, CHypot,
  // NumPy's scalar types called as functions (np.float32(x)): x converted as NumPy does
  NpFloat64Type, NpFloat32Type, NpInt64Type, NpInt32Type, NpInt16Type, NpInt8Type, NpUInt8Type, NpUInt16Type,
  NpUInt32Type, NpUInt64Type, NpBoolType,
  // only as the iterable of a for loop (the lifter desugars them)
  Enumerate, Zip, Reversed,
  // sum(g), any(g), all(g) of a generator expression: the lifter turns them into a loop
  // (lift.cpp). In IR, a call with no argument (or sum's start) is the reduction's initial
  // value, and sum(acc, x) one step of sum's addition
  Sum, Any, All,
  // np.sum, np.max, np.min, np.mean of a one-dimensional NumPy array (a slice, a row, an
  // operation on them; also as x.sum(), x.max(), x.min(), x.mean())
  NpSum, NpMax, NpMin, NpMean,
  // np.where(c, x, y) and np.clip(x, lo, hi), elementwise (arrays, or clip of numbers)
  NpWhere, NpClip,
  // np.dot(x, y) of one-dimensional float arrays (also `x @ y`): NumPy's own dot function
  NpDot,
  // divmod(a, b) of numbers: typed as the tuple (a // b, a % b), which is what it computes
  Divmod,
  // pow(a, b): typed as a ** b; pow(a, b, m) of Python ints: int_functions.h's
  Pow,
  // ord(c) of a character of a str (Type::Kind::PyChar): its code point
  Ord,
  // math.gcd, math.lcm (any number of arguments), math.isqrt and math.factorial of Python
  // ints (and bools): computed by the runtime (int_functions.h); a result beyond 64 bits or
  // an argument CPython refuses (a negative isqrt or factorial) goes to CPython
  MathGcd, MathLcm, MathIsqrt, MathFactorial,
  // math.comb(n, k) and math.perm(n[, k]) of the same: computed by the runtime too
  MathComb, MathPerm,
  // c.isdigit() ... c.lower(), c.upper() of a character of a str (Type::Kind::PyChar):
  // computed for ASCII characters; any other goes to CPython (its Unicode database)
  CharIsDigit, CharIsDecimal, CharIsNumeric, CharIsAlpha, CharIsAlnum, CharIsSpace, CharIsUpper, CharIsLower,
  CharLower, CharUpper,
  // cmath functions of a number (complex, or real converted to x + 0j): computed as CPython's
  // cmathmodule.c computes them (backends/cpu/complex_functions.h). cmath.polar(z) is typed as
  // the tuple (CmathPolar(z), CmathPhase(z)): CmathPolar alone is its modulus.
  CmathSqrt, CmathExp, CmathLog, CmathLog10, CmathSin, CmathCos, CmathTan, CmathSinh, CmathCosh,
  CmathTanh, CmathAsin, CmathAcos, CmathAtan, CmathAsinh, CmathAcosh, CmathAtanh, CmathPhase, CmathPolar, CmathRect, CmathIsnan, CmathIsinf, CmathIsfinite,
  // only in lowered IR (lower_complex.h): CFunc(fn, part, ar, ai, br, bi), a part of
  // stagepy_cfunc's result (complex_functions.h); where that is not CPython's result the
  // statement goes to CPython
  CFunc,
  // only in lowered IR: Round32(x), a double rounded to float32 (the part of a complex64
  // result), as a double, or as a numpy.float32 where the call's type is that
  Round32,
  // only in lowered IR: NpCLoop(f, dtype, part, re, im), a part of what NumPy's own loop of
  // ufunc `f` (np.exp...) for complex dtype `dtype` gives for the number (re, im)
  NpCLoop,
  // only in lowered IR: Cast32(x), a Python number's part converted to float32 as NumPy
  // casts an operand of a complex64 operation (NEP 50), as a double: NumPy warns "overflow
  // encountered in cast" where a finite x becomes infinite
  Cast32,
  // L.append(x) and L.pop() of a list held by a header that grows and shrinks (Var::resized,
  // Type::made): args (callee, L[, x])
  ListAppend, ListPop,
  // the `random` module's functions bound to its generator (random.random(), random.uniform(a,
  // b), random.randint(a, b), random.randrange(stop) / (start, stop), random.choice(seq),
  // random.gauss(mu, sigma), normalvariate(mu, sigma), expovariate(lambd)), registered once
  // their draws matched CPython's (hook/random_generator.h); type inference writes the others
  // as random.py computes them, from RandomRandom() and, only in typed IR, the draws after
  // RandomBelow: RandomBelow(n): Random._randbelow(n), random ints in [0, n) (n <= 0 goes to
  // CPython, which raises); RandomGaussZ(), RandomNormalZ(): gauss()'s and normalvariate()'s z
  // before `mu + z * sigma`; RandomExpoZ(): expovariate()'s -log(1.0 - random()) before `/ lambd`
  RandomRandom, RandomUniform, RandomRandint, RandomRandrange, RandomChoice, RandomGauss, RandomNormalvariate,
  RandomExpovariate, RandomBelow, RandomGaussZ, RandomNormalZ, RandomExpoZ,
  // np.random's functions of NumPy's global RandomState (np.random.rand(), random(),
  // random_sample(), sample(); uniform(low, high); randint(low[, high]); randn(),
  // standard_normal(); normal(loc, scale); exponential(scale)), registered once their draws
  // matched NumPy's (hook/numpy_random.h); each is one draw, computed in codegen, with its
  // arguments in place (type inference puts keywords and defaults there)
  NpRandomRandom, NpRandomUniform, NpRandomRandint, NpRandomStandardNormal, NpRandomNormal, NpRandomExponential,
  Count_
};
const char* builtin_name(Builtin b);

struct Type;
using TypeRef = std::shared_ptr<const Type>;

struct Type {
  enum class Kind : uint8_t {
    Unknown,   // not typed yet
    Unbound,   // a variable with no value (UnboundLocalError/NameError on read)
    None,      // Python None
    PyBool,    // Python bool
    PyInt,     // Python int (arbitrary precision; i64 in kernels, overflow leaves native code)
    PyFloat,   // Python float
    PyComplex, // Python complex (its parts live in two float variables in kernels: lower_complex.h)
    NpScalar,  // NumPy scalar of `dtype`
    Array,     // numpy.ndarray; with `pylist`, a Python list (of lists) of ints, floats, complex numbers or
               // bools, read into a C-contiguous buffer for the kernel (list_buffer.h)
    Tuple,     // Python tuple of `elems`
    Module,    // a module object, identified by `name` (guarded by identity)
    Object,    // another object (`self`) whose plain attributes the nest reads, each read
               // at entry into its attribute variable; `name`: its class (guarded by the
               // exact type)
    Callable,  // a function stagepy knows (`builtin`), guarded by identity
    Function,  // a plain Python function the nest calls, inlined (`name`: its qualified
               // name); guarded by the identity of the function and of its code
    Union,     // one of `elems` (scalars or Unbound, or Unbound and a View); a run-time tag
               // tells which
    View,      // a row of the container variable `base` never reassigns (`row = A[i]`):
               // kernels keep the index i (an i64) and read `A[i]`, of type elems[0], at
               // every use; boxed as `A[i]` again when written back
    Slice,     // a slice object `a:b:c` of a subscript; elems: the types of a, b, c (None
               // where omitted)
    Appended,  // a Python list the nest only appends to (`out.append(x)`, Var::appended), or
               // a new one it makes (`row = []`): kernels hold the address of a buffer
               // collecting the items (append_buffer.h), which the dispatcher appends to
               // the list, or makes a new list of, when the kernel returns
    PyChar,    // a str of one character, an item of a str (`s[i]`) or a constant (`'G'`): its
               // code point (an i32 in kernels); compared with another only, or taken by
               // ord(); never a variable's value
  };
  Kind kind = Kind::Unknown;
  DType dtype = DType::Float64;  // NpScalar, Array
  int ndim = 0;                  // Array
  enum Layout : uint8_t { Strided = 0, CContig = 1, FContig = 2 } layout = Strided;  // Array
  bool writeable = true;         // Array
  bool pylist = false;           // Array: a Python list; its elements are Python ints
                                 // (dtype Int64), floats (Float64) or bools (Bool)
  bool tagged = false;           // Array (pylist, Float64): its elements are floats,
                                 // numpy.float64s or Python ints (`tags` says which may be
                                 // there), each held as its value's bits and then a tag
                                 // (kTagFloat, kTagNpFloat64, kTagInt), 16 bytes (list_buffer.h)
  uint8_t tags = 0;              // Array (tagged): kTagsNp, kTagsInts and kTagsBools, what its
                                 // elements may be besides floats (tagged is tags != 0)
  std::vector<int8_t> columns;   // Array (tagged; a table of objects' attributes, 2-d, or one of
                                 // its rows): per column, the tag (kTagFloat ... kTagBool) all
                                 // its elements have, or -1 (they differ): `p.x` of a column of
                                 // one tag reads as that type (types::column_elem), and only a
                                 // value of that type is stored into it. Empty: every element
                                 // reads as list_elem's union.
  bool tuples = false;           // Array (pylist): its innermost rows are tuples (`[(x, y), ...]`,
                                 // each of one length; 1-d: one such tuple, a row), read
                                 // only: `writeable` is false
  bool ragged = false;           // Array (pylist, 2-d, not tuples): its rows (the inner lists)
                                 // have different lengths; kernels hold the items of all rows one
                                 // after another and where each row starts (list_buffer.h), take
                                 // rows by an int index, their lengths and iterate them, and use
                                 // the list whole in no other way (type_infer: ragged_uses)
  bool made = false;             // Array (pylist, 1-d): a list the variable may hold
                                 // is one the nest makes (`cur = [0] * (m + 1)`, `new =
                                 // best[:]`, made_lists.h): kernels hold the address of its
                                 // header (backends/kernel_abi.h: MadeList), a list read at
                                 // entry included
  bool pybuf = false;            // Array: an array.array, bytearray, bytes or memoryview
                                 // (1-d); its items of `dtype` read as Python ints/floats/bools
  bool pystr = false;            // Array (with pybuf): a str, its code points of `dtype`
                                 // (UInt8, UInt16, UInt32: CPython's kinds); items read as
                                 // PyChar; read-only
  // Items are Python objects (a list or a buffer), not NumPy scalars.
  bool py_items() const { return pylist || pybuf; }
  bool temp = false;             // Array: the new array an operation on whole arrays or
                                 // slices computes (`A[i, :] * 2`); kernels compute its
                                 // elements where a statement stores them (never a variable's)
  bool local = false;            // Array: such an array a variable holds (`d = X[i] - X[j]`):
                                 // kernels compute it into scratch memory of their own,
                                 // keep a pointer to it, and box a copy when written back
  Builtin builtin = Builtin::None_;  // Callable
  std::string name;              // Module, Object
  std::vector<TypeRef> elems;    // Tuple, Union; View: {the row's type}
  int base = -1;                 // View: the variable whose row it is
  int origin = -2;               // View: the subscript that took every row it may hold (its
                                 // facts hold for the index), or -2 (several: none apply)

  std::string str() const;
  bool operator==(const Type& o) const;
  bool operator!=(const Type& o) const { return !(*this == o); }
  size_t hash() const;

  bool is_scalar() const;       // PyBool/PyInt/PyFloat/PyComplex/NpScalar/Union of those
  bool is_complex() const;      // PyComplex or a NumPy complex scalar
  bool is_numeric_scalar() const { return is_scalar(); }
};

namespace types {
TypeRef unknown();
TypeRef unbound();
TypeRef none();
TypeRef py_bool();
TypeRef py_int();
TypeRef py_float();
TypeRef py_complex();
TypeRef np_scalar(DType d);
TypeRef array(DType d, int ndim, Type::Layout layout, bool writeable);
// A Python list nested `ndim` deep whose elements are all Python ints (Int64), floats
// (Float64) or bools (Bool).
// With `tags` (Float64 only; kTagsNp, kTagsInts): elements floats, np.float64s (kTagsNp)
// or Python ints (kTagsInts), each with its tag (Type::tagged).
// With `tuples`: a list of tuples (the innermost rows tuples), read-only.
// With `ragged` (ndim 2, not tuples): rows of different lengths (Type::ragged).
TypeRef py_list(DType d, int ndim, uint8_t tags = 0, bool tuples = false, bool ragged = false);
// The list of `ndim` dimensions whose elements and rows are those of list type `list` (a
// row of it, or the list seen through a slice).
TypeRef py_list_like(const Type& list, int ndim);
// A list of `d` (Int64, Float64, Bool) a variable holds by its header (Type::made); with
// `tagged` (Float64 only), of floats and np.float64s, each with its tag.
TypeRef made_list(DType d, bool tagged = false);
// A buffer-protocol object (py_buffer.h) with items of `d`.
TypeRef py_buffer(DType d, bool writeable);
// A str whose code points are of dtype `d` (its kind), and one of its characters.
TypeRef py_str(DType d);
TypeRef py_char();
// The Python type an item of dtype `d` of a list or buffer reads as (int, float or bool).
TypeRef list_elem(DType d);
// The type an element of list `list` (one dimension) reads as: list_elem(dtype), or for a
// tagged list the union of float and what its `tags` say (np.float64, int, bool).
TypeRef list_elem(const Type& list);
// The type element `c` of a row of table `list` (Type::columns) reads as: its column's, where
// all its elements have one tag; else list_elem(list).
TypeRef column_elem(const Type& list, int64_t c);
TypeRef tuple(std::vector<TypeRef> elems);
TypeRef module(const std::string& name);
TypeRef object(const std::string& class_name);
TypeRef callable(Builtin b);
TypeRef function(const std::string& qualname);
// Row `i` (kept as an index) of the container in variable `base`, a row of type `row`,
// taken by the subscript at bytecode offset `origin`.
TypeRef view(int base, TypeRef row, int origin);
TypeRef slice(std::vector<TypeRef> parts);  // start, stop, step
TypeRef appended();  // Type::Kind::Appended
// The array an elementwise NumPy operation gives: `ndim` dimensions of `d`, C-ordered, new.
TypeRef array_temp(DType d, int ndim);
// The array a variable holds after `v = <operation on arrays>` (Type::local).
TypeRef array_local(DType d, int ndim);
// A union of `members` (flattened, deduplicated, ordered); the single member if only one.
// Returns nullptr if a member cannot live in a tagged 64-bit slot (arrays, tuples,
// modules...) and the members are not all the same.
TypeRef join(const std::vector<TypeRef>& members);
// Whether values of `t` can be computed on without knowing which member they are:
// a single type; float | np.float64 (IEEE doubles either way; they differ only in how
// errors are reported, and errors hand control back to CPython); bool | np.bool_ (the
// same truth values; operations whose result types differ per member are refused).
bool uniform(const TypeRef& t);
// The type of `x.real`, `x.imag` and `x.conjugate()` for a real number `x` of type `t` (not a
// union): the same type, but a Python bool's are ints. nullptr if `t` is not a real number.
TypeRef real_part(const TypeRef& t);
bool may_be_unbound(const TypeRef& t);
TypeRef without_unbound(const TypeRef& t);  // nullptr if only Unbound
bool same(const TypeRef& a, const TypeRef& b);
}  // namespace types

// The bytes an element of array (or list, buffer) type `t` takes in kernels' memory.
int item_bytes(const Type& t);
// A tagged list's element tags (Type::tagged), as memory holds them after each value (an
// int's value is its int64 bits, a float's its double's).
// A bool's value is 0 or 1 in 64 bits.
constexpr int64_t kTagFloat = 0, kTagNpFloat64 = 1, kTagInt = 2, kTagBool = 3;
// What a tagged list's elements may be besides floats (Type::tags; the bits a nest asks a
// list to be read with, ListBuffer::read). kTagsWhole, only asked for: a table of objects'
// attributes read without Type::columns (a store gives a column a value of another type).
constexpr uint8_t kTagsNp = 1, kTagsInts = 2, kTagsBools = 4, kTagsWhole = 8;
// Tags whose elements kernels hold as bits (an int's, a bool's, a double's), not doubles.
constexpr uint8_t kTagsBits = kTagsInts | kTagsBools;

// The machine representation of a scalar type in kernels.
enum class Repr : uint8_t { None, I1, I8, I16, I32, I64, F32, F64 };
Repr repr_of(const Type& t);  // Union: the shared representation

}  // namespace stagepy
