// See prove_domains.h.
#include "specialize/prove_domains.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "ir/mutate.h"

namespace stagepy::specialize {
namespace {

using ir::Expr;
using ir::ExprNode;
using EK = ExprNode::Kind;

// Ordered: a lower sign claims less. NonNeg: never ordered-less than zero (-0.0 and NaN
// included); Pos: never zero or below (NaN included).
enum class Sign : uint8_t { Any, NonNeg, Pos };

Sign meet(Sign a, Sign b) { return std::min(a, b); }

// Values of this type are what the arithmetic says (no wrap-around): Python numbers and
// NumPy floats.
bool exact_arith(const TypeRef& t) {
  if (!t) return false;
  switch (t->kind) {
    case Type::Kind::PyBool: case Type::Kind::PyInt: case Type::Kind::PyFloat: return true;
    case Type::Kind::NpScalar: return dtype_is_float(t->dtype);
    case Type::Kind::Union:
      for (auto& m : t->elems)
        if (m->kind != Type::Kind::Unbound && !exact_arith(m)) return false;
      return true;
    default: return false;
  }
}

Sign const_sign(const ir::ConstValue& c) {
  switch (c.kind) {
    case ir::ConstValue::Kind::Bool: return c.b ? Sign::Pos : Sign::NonNeg;
    case ir::ConstValue::Kind::Int: return c.i > 0 ? Sign::Pos : c.i == 0 ? Sign::NonNeg : Sign::Any;
    case ir::ConstValue::Kind::Float:
      if (std::isnan(c.f) || c.f > 0) return Sign::Pos;
      return c.f == 0 ? Sign::NonNeg : Sign::Any;  // -0.0 == 0
    default: return Sign::Any;
  }
}

// The exponent `e` is a constant even integer (x ** 2: never below zero, whatever x is).
bool even_exponent(const Expr& e) {
  if (e->kind != EK::Const) return false;
  const auto& c = e->value;
  if (c.kind == ir::ConstValue::Kind::Int) return c.i % 2 == 0;
  if (c.kind == ir::ConstValue::Kind::Float) return std::isfinite(c.f) && std::fmod(c.f, 2.0) == 0.0;
  return false;
}

// A constant number, not a NaN (a NaN is Positive in const_sign, as it passes every check,
// but it is no bound: max(x, nan) may be x).
bool number_const(const Expr& e) {
  return e->kind == EK::Const && !(e->value.kind == ir::ConstValue::Kind::Float && std::isnan(e->value.f));
}

class Signs {
 public:
  explicit Signs(std::vector<Sign> vars) : vars_(std::move(vars)) {}
  std::vector<Sign>& vars() { return vars_; }

  Sign of(const Expr& e) const {
    if (!e) return Sign::Any;
    switch (e->kind) {
      case EK::Compare: case EK::Truth: case EK::LoopNonEmpty: return Sign::NonNeg;  // a bool
      case EK::AsType: return of(e->args[0]);
      case EK::Guard: return of(e->args[1]);
      case EK::Seq: return of(e->args.back());
      default: break;
    }
    if (!exact_arith(e->type)) return Sign::Any;
    switch (e->kind) {
      case EK::Const: return const_sign(e->value);
      case EK::Load: return (size_t)e->var < vars_.size() ? vars_[(size_t)e->var] : Sign::Any;
      case EK::Cond: return meet(of(e->args[1]), of(e->args[2]));
      case EK::Unary:
        if (e->unop == ir::UnOp::Pos) return of(e->args[0]);
        if (e->unop == ir::UnOp::Not) return Sign::NonNeg;
        return Sign::Any;
      case EK::Binary: return binary(e);
      case EK::Call: return call(e);
      default: return Sign::Any;
    }
  }

 private:
  std::vector<Sign> vars_;

  Sign binary(const Expr& e) const {
    const Expr& x = e->args[0];
    const Expr& y = e->args[1];
    switch (e->binop) {
      case ir::BinOp::Add: {
        Sign a = of(x), b = of(y);
        if (a == Sign::Any || b == Sign::Any) return Sign::Any;
        return std::max(a, b);  // x > 0 and y >= 0: x + y >= x > 0
      }
      case ir::BinOp::Mul:
        if (ir::same_pure_expr(x, y)) return Sign::NonNeg;
        return meet(meet(of(x), of(y)), Sign::NonNeg);  // a product of positives may underflow
      case ir::BinOp::TrueDiv: case ir::BinOp::FloorDiv:
        // A divisor of -0.0 would make -inf; a positive one keeps the dividend's side.
        return of(y) == Sign::Pos ? meet(of(x), Sign::NonNeg) : Sign::Any;
      case ir::BinOp::Mod:
        return of(y) == Sign::Pos ? Sign::NonNeg : Sign::Any;  // Python's and NumPy's: the divisor's side
      case ir::BinOp::Pow: return power(x, y);
      default: return Sign::Any;
    }
  }

  Sign power(const Expr& base, const Expr& exp) const {
    if (even_exponent(exp)) return Sign::NonNeg;
    Sign b = of(base);
    if (b == Sign::Pos) return Sign::NonNeg;  // may underflow to 0
    if (b == Sign::NonNeg && number_const(exp) && const_sign(exp->value) == Sign::Pos)
      return Sign::NonNeg;  // (-0.0) ** 3 == -0.0
    return Sign::Any;
  }

  Sign call(const Expr& e) const {
    if (e->args.empty() || e->args[0]->type->kind != Type::Kind::Callable) return Sign::Any;
    const size_t n = e->args.size() - 1;
    auto arg = [&](size_t i) { return of(e->args[i + 1]); };
    switch (e->args[0]->type->builtin) {
      case Builtin::Abs: case Builtin::MathFabs: case Builtin::NpAbs: case Builtin::NpFabs:
      case Builtin::MathSqrt: case Builtin::NpSqrt: case Builtin::MathExp: case Builtin::NpExp:
      case Builtin::MathHypot: case Builtin::NpHypot: case Builtin::CHypot: case Builtin::Len:
      case Builtin::Bool:
        return Sign::NonNeg;
      case Builtin::MathCosh: case Builtin::NpCosh: return Sign::Pos;
      case Builtin::Float: return n == 1 ? arg(0) : Sign::Any;
      case Builtin::Int: case Builtin::Round:  // truncation or rounding may reach 0
        return n == 1 ? meet(arg(0), Sign::NonNeg) : Sign::Any;
      case Builtin::Min: case Builtin::NpMinimum: {
        Sign s = Sign::Pos;
        for (size_t i = 0; i < n; i++) s = meet(s, arg(i));
        return n ? s : Sign::Any;
      }
      case Builtin::Max: case Builtin::NpMaximum: {
        // All of them non-negative; or one a number c >= 0 (the result is c, something
        // greater, or a NaN that came first).
        Sign all = Sign::Pos, some = Sign::Any;
        for (size_t i = 0; i < n; i++) {
          all = meet(all, arg(i));
          const Expr& a = e->args[i + 1];
          if (number_const(a)) some = std::max(some, const_sign(a->value));
        }
        return n ? std::max(all, some) : Sign::Any;
      }
      case Builtin::MathPow: case Builtin::NpPower: return n == 2 ? power(e->args[1], e->args[2]) : Sign::Any;
      default: return Sign::Any;
    }
  }
};

// The sign each variable has wherever the nest reads it.
std::vector<Sign> variable_signs(const ir::Nest& nest, const std::vector<TypeRef>& entry) {
  const size_t nv = nest.vars.size();
  std::vector<Sign> init(nv, Sign::Any);
  for (size_t v = 0; v < nv && v < entry.size(); v++)
    if (entry[v] && entry[v]->kind == Type::Kind::Unbound) init[v] = Sign::Pos;
  std::vector<std::pair<int, Expr>> assigns;
  ir::for_each_stmt(nest.root, [&](const ir::Stmt& s) {
    if (s->kind == ir::StmtNode::Kind::For && s->var >= 0 && (size_t)s->var < nv) init[(size_t)s->var] = Sign::Any;
    for (auto& f : s->effects)
      if (f.kind == ir::Effect::Kind::Assign && f.var >= 0 && (size_t)f.var < nv) assigns.emplace_back(f.var, f.value);
  });
  Signs signs(std::move(init));
  for (bool changed = true; changed;) {
    changed = false;
    for (auto& [v, value] : assigns) {
      Sign s = meet(signs.vars()[(size_t)v], signs.of(value));
      if (s != signs.vars()[(size_t)v]) {
        signs.vars()[(size_t)v] = s;
        changed = true;
      }
    }
  }
  return signs.vars();
}

bool log_like(Builtin f) {
  return f == Builtin::MathLog || f == Builtin::MathLog2 || f == Builtin::MathLog10 || f == Builtin::MathLog1p;
}

}  // namespace

TypedNest prove_domains(const TypedNest& tn, const std::vector<TypeRef>& entry) {
  TypedNest out = tn;
  const Signs signs(variable_signs(tn.nest, entry));
  out.nest.root = ir::map_exprs(tn.nest.root, [&](const Expr& e) -> Expr {
    bool safe = false;
    if (e->kind == EK::Call && e->args.size() == 2 && e->args[0]->type->kind == Type::Kind::Callable) {
      Builtin f = e->args[0]->type->builtin;
      Sign s = signs.of(e->args[1]);
      safe = (f == Builtin::MathSqrt && s != Sign::Any) || (log_like(f) && s == Sign::Pos);
    } else if (e->kind == EK::Binary && (e->binop == ir::BinOp::TrueDiv || e->binop == ir::BinOp::FloorDiv ||
                                          e->binop == ir::BinOp::Mod)) {
      safe = signs.of(e->args[1]) == Sign::Pos;
    }
    if (!safe || e->in_domain) return e;
    auto c = std::make_shared<ExprNode>(*e);
    c->in_domain = true;
    return c;
  });
  return out;
}

}  // namespace stagepy::specialize
