// See oracle.h.
#include "specialize/oracle.h"

#include <map>

namespace stagepy::specialize {

namespace {
const char* kNames[kSK] = {"bool", "int", "float", "numpy.bool", "numpy.int8", "numpy.int16", "numpy.int32",
                           "numpy.int64", "numpy.uint8", "numpy.uint16", "numpy.uint32", "numpy.uint64",
                           "numpy.float32", "numpy.float64", "numpy.complex64", "numpy.complex128", "complex"};
const DType kDtypes[] = {DType::Bool, DType::Int8, DType::Int16, DType::Int32, DType::Int64, DType::UInt8,
                         DType::UInt16, DType::UInt32, DType::UInt64, DType::Float32, DType::Float64,
                         DType::Complex64, DType::Complex128};
constexpr int kPyComplex = static_cast<int>(SK::PyComplex);

int binop_index(const std::string& s) {
  static const std::map<std::string, int> m = {{"+", 0}, {"-", 1}, {"*", 2}, {"/", 3}, {"//", 4}, {"%", 5}, {"**", 6},
                                               {"<<", 7}, {">>", 8}, {"&", 9}, {"|", 10}, {"^", 11}, {"@", 12}};
  auto it = m.find(s);
  return it == m.end() ? -1 : it->second;
}
int unop_index(const std::string& s) {
  static const std::map<std::string, int> m = {{"-", 0}, {"+", 1}, {"~", 2}, {"not", 3}};
  auto it = m.find(s);
  return it == m.end() ? -1 : it->second;
}
}  // namespace

int sk_index(const Type& t) {
  switch (t.kind) {
    case Type::Kind::PyBool: return 0;
    case Type::Kind::PyInt: return 1;
    case Type::Kind::PyFloat: return 2;
    case Type::Kind::NpScalar: return 3 + static_cast<int>(t.dtype);
    case Type::Kind::PyComplex: return kPyComplex;
    default: return -1;
  }
}

TypeRef sk_type(int sk) {
  switch (sk) {
    case 0: return types::py_bool();
    case 1: return types::py_int();
    case 2: return types::py_float();
    case kPyComplex: return types::py_complex();
    default: return sk >= 3 && sk < kSK ? types::np_scalar(kDtypes[sk - 3]) : nullptr;
  }
}

const char* sk_name(int sk) { return sk >= 0 && sk < kSK ? kNames[sk] : "?"; }

int sk_from_name(const std::string& name) {
  for (int i = 0; i < kSK; i++)
    if (name == kNames[i]) return i;
  return -1;
}

bool is_numpy_builtin(Builtin b) { return b >= Builtin::NpSqrt && b < Builtin::Complex; }

std::optional<DType> numpy_type_dtype(Builtin b) {
  switch (b) {
    case Builtin::NpFloat64Type: return DType::Float64;
    case Builtin::NpFloat32Type: return DType::Float32;
    case Builtin::NpInt64Type: return DType::Int64;
    case Builtin::NpInt32Type: return DType::Int32;
    case Builtin::NpInt16Type: return DType::Int16;
    case Builtin::NpInt8Type: return DType::Int8;
    case Builtin::NpUInt8Type: return DType::UInt8;
    case Builtin::NpUInt16Type: return DType::UInt16;
    case Builtin::NpUInt32Type: return DType::UInt32;
    case Builtin::NpUInt64Type: return DType::UInt64;
    case Builtin::NpBoolType: return DType::Bool;
    default: return std::nullopt;
  }
}
bool looped_unary(Builtin b) {
  switch (b) {
    case Builtin::NpExp: case Builtin::NpLog: case Builtin::NpSin: case Builtin::NpCos: case Builtin::NpTan:
    case Builtin::NpTanh: case Builtin::NpArctan: case Builtin::NpLog2: case Builtin::NpLog10: case Builtin::NpExpm1:
    case Builtin::NpLog1p: case Builtin::NpSinh: case Builtin::NpCosh: case Builtin::NpArcsin: case Builtin::NpArccos:
    case Builtin::NpCbrt: case Builtin::NpExp2: case Builtin::NpArcsinh: case Builtin::NpArccosh: case Builtin::NpArctanh:
    case Builtin::NpDeg2rad: case Builtin::NpRad2deg: case Builtin::NpRadians: case Builtin::NpDegrees:
      return true;
    default:
      return false;
  }
}

bool is_math_builtin(Builtin b) { return b >= Builtin::MathSqrt && b < Builtin::NpSqrt; }

int builtin_arity(Builtin b) {
  switch (b) {
    case Builtin::MathAtan2: case Builtin::MathPow: case Builtin::MathHypot: case Builtin::MathCopysign:
    case Builtin::MathFmod: case Builtin::NpArctan2: case Builtin::NpHypot: case Builtin::NpMinimum:
    case Builtin::NpMaximum: case Builtin::NpPower: case Builtin::CHypot: case Builtin::NpCopysign:
    case Builtin::NpFmin: case Builtin::NpFmax: case Builtin::CmathRect:
      return 2;
    case Builtin::NpWhere: case Builtin::NpClip:
      return 3;
    case Builtin::Range: case Builtin::Min: case Builtin::Max: case Builtin::Round: case Builtin::Complex:
    case Builtin::Enumerate: case Builtin::Zip: case Builtin::Reversed: case Builtin::Sum: case Builtin::Any:
    case Builtin::All: case Builtin::CmathLog: case Builtin::CFunc: case Builtin::NpCLoop: case Builtin::Pow:
    case Builtin::MathGcd: case Builtin::MathLcm:
      return -1;
    default:
      return 1;
  }
}

Builtin builtin_from_name(const std::string& q) {
  for (int i = 1; i < static_cast<int>(Builtin::Count_); i++)
    if (q == builtin_name(static_cast<Builtin>(i))) return static_cast<Builtin>(i);
  return Builtin::None_;
}

Oracle::Oracle() {
  call1.resize(static_cast<size_t>(Builtin::Count_));
  call2.resize(static_cast<size_t>(Builtin::Count_));
  auto B = types::py_bool(), I = types::py_int(), F = types::py_float();
  // Binary operators on Python bool/int/float.
  for (int op = 0; op < kBinOps; op++) {
    for (int a = 0; a < 3; a++) {
      for (int b = 0; b < 3; b++) {
        bool fl = a == 2 || b == 2;
        TypeRef r;
        switch (static_cast<ir::BinOp>(op)) {
          case ir::BinOp::Add: case ir::BinOp::Sub: case ir::BinOp::Mul: case ir::BinOp::FloorDiv:
          case ir::BinOp::Mod: case ir::BinOp::Pow:
            r = fl ? F : I;
            break;
          case ir::BinOp::TrueDiv: r = F; break;
          case ir::BinOp::LShift: case ir::BinOp::RShift: r = fl ? nullptr : I; break;
          case ir::BinOp::And: case ir::BinOp::Or: case ir::BinOp::Xor:
            r = fl ? nullptr : (a == 0 && b == 0 ? B : I);
            break;
          case ir::BinOp::MatMul: r = nullptr; break;
        }
        bin[op][a][b] = r;
      }
    }
  }
  // Python complex with bool/int/float/complex: the arithmetic operators give complex
  // (//, % and the bitwise ones raise TypeError); the order comparisons raise.
  {
    auto Z = types::py_complex();
    const int pys[] = {0, 1, 2, kPyComplex};
    for (int op = 0; op < kBinOps; op++)
      for (int a : pys)
        for (int b : pys) {
          if (a != kPyComplex && b != kPyComplex) continue;
          auto o = static_cast<ir::BinOp>(op);
          bool arith = o == ir::BinOp::Add || o == ir::BinOp::Sub || o == ir::BinOp::Mul || o == ir::BinOp::TrueDiv ||
                       o == ir::BinOp::Pow;
          bin[op][a][b] = arith ? Z : nullptr;
        }
    un[0][kPyComplex] = Z;
    un[1][kPyComplex] = Z;
    call1[static_cast<size_t>(Builtin::Abs)][kPyComplex] = F;
    call1[static_cast<size_t>(Builtin::Bool)][kPyComplex] = B;
  }
  // Unary: -x, +x (bool -> int), ~x (int only; ~bool is deprecated), not x.
  un[0][0] = I; un[0][1] = I; un[0][2] = F;
  un[1][0] = I; un[1][1] = I; un[1][2] = F;
  un[2][1] = I;
  for (int a = 0; a < kSK; a++) un[3][a] = B;
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++) cmp[a][b] = B;
  // Builtins on Python scalars.
  auto set1 = [&](Builtin f, int a, TypeRef r) { call1[static_cast<size_t>(f)][a] = r; };
  for (int a = 0; a < 3; a++) {
    set1(Builtin::Abs, a, a == 2 ? F : I);
    set1(Builtin::Int, a, I);
    set1(Builtin::Float, a, F);
    set1(Builtin::Bool, a, B);
    set1(Builtin::Round, a, I);
  }
  // math functions take any real scalar (NumPy ones included: they convert to float);
  // complex numbers raise TypeError.
  auto real = [](int a) { return a < static_cast<int>(SK::C64); };
  for (int f = static_cast<int>(Builtin::MathSqrt); f < static_cast<int>(Builtin::NpSqrt); f++) {
    Builtin bf = static_cast<Builtin>(f);
    TypeRef r = F;
    if (bf == Builtin::MathFloor || bf == Builtin::MathCeil || bf == Builtin::MathTrunc) r = I;
    if (bf == Builtin::MathIsnan || bf == Builtin::MathIsinf || bf == Builtin::MathIsfinite) r = B;
    for (int a = 0; a < kSK; a++) {
      call1[f][a] = real(a) ? r : nullptr;
      for (int b = 0; b < kSK; b++) call2[f][a][b] = real(a) && real(b) ? r : nullptr;
    }
  }
  // np.float32(x) and the other scalar types, of a real number: a scalar of that type
  // (complex numbers stay with CPython: a ComplexWarning, or a TypeError).
  for (int f = static_cast<int>(Builtin::NpFloat64Type); f <= static_cast<int>(Builtin::NpBoolType); f++) {
    TypeRef r = types::np_scalar(*numpy_type_dtype(static_cast<Builtin>(f)));
    for (int a = 0; a < kSK; a++) call1[f][a] = real(a) ? r : nullptr;
  }
}

TypeRef Oracle::binary(ir::BinOp op, const TypeRef& a, const TypeRef& b) const {
  int ia = sk_index(*a), ib = sk_index(*b);
  if (ia < 0 || ib < 0) return nullptr;
  return bin[static_cast<int>(op)][ia][ib];
}

TypeRef Oracle::unary(ir::UnOp op, const TypeRef& a) const {
  int ia = sk_index(*a);
  if (ia < 0) return nullptr;
  return un[static_cast<int>(op)][ia];
}

TypeRef Oracle::compare(const TypeRef& a, const TypeRef& b) const {
  int ia = sk_index(*a), ib = sk_index(*b);
  if (ia < 0 || ib < 0) return nullptr;
  return cmp[ia][ib];
}

TypeRef Oracle::call(Builtin f, const std::vector<TypeRef>& args) const {
  auto fi = static_cast<size_t>(f);
  if (args.size() == 1) {
    int a = sk_index(*args[0]);
    return a < 0 ? nullptr : call1[fi][a];
  }
  if (args.size() == 2) {
    int a = sk_index(*args[0]), b = sk_index(*args[1]);
    return a < 0 || b < 0 ? nullptr : call2[fi][a][b];
  }
  return nullptr;
}

bool Oracle::set_entry(const std::string& kind, const std::string& op, int a, int b, const std::string& result) {
  TypeRef r;
  if (!result.empty()) {
    int s = sk_from_name(result);
    if (s < 0) return true;  // a type stagepy does not compute in (complex...): leave unsupported
    r = sk_type(s);
  }
  if (a < 0 || a >= kSK || (b >= kSK)) return false;
  if (kind == "bin") {
    int o = binop_index(op);
    if (o < 0 || b < 0) return false;
    bin[o][a][b] = r;
  } else if (kind == "un") {
    int o = unop_index(op);
    if (o < 0) return false;
    un[o][a] = r;
  } else if (kind == "cmp") {
    if (b < 0) return false;
    cmp[a][b] = r;
  } else if (kind == "call1") {
    Builtin f = builtin_from_name(op);
    if (f == Builtin::None_) return false;
    call1[static_cast<size_t>(f)][a] = r;
  } else if (kind == "call2") {
    Builtin f = builtin_from_name(op);
    if (f == Builtin::None_ || b < 0) return false;
    call2[static_cast<size_t>(f)][a][b] = r;
  } else {
    return false;
  }
  numpy = true;
  return true;
}

}  // namespace stagepy::specialize
