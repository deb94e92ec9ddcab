// See lower_complex.h.
#include "specialize/lower_complex.h"

#include <cmath>
#include <map>
#include <optional>

#include "ir/mutate.h"

namespace stagepy::specialize {
namespace {

using ir::Expr;
using ir::ExprNode;
using ir::Stmt;
using ir::StmtNode;
using EK = ExprNode::Kind;
using Pair = std::pair<Expr, Expr>;
using backends::cpu::CFn;

struct LowerError {
  std::string reason;
  int line;
};

bool any_complex(const TypeRef& t) {
  if (!t) return false;
  if (t->kind == Type::Kind::Union) {
    for (auto& e : t->elems)
      if (e->is_complex()) return true;
    return false;
  }
  return t->is_complex() || (t->kind == Type::Kind::Array && dtype_is_complex(t->dtype));
}

bool is_np(const TypeRef& t) { return t && t->kind == Type::Kind::NpScalar; }

class Lower {
 public:
  Lower(const TypedNest& tn, std::vector<TypeRef>* entry, const Oracle& oracle, FpMode fp)
      : out_(tn), entry_(*entry), entry_out_(entry), oracle_(oracle), fp_(fp) {}

  TypedNest run() {
    try {
      entry_.resize(out_.nest.vars.size(), types::unbound());
      for (size_t v = 0; v < entry_.size(); v++)
        if (entry_[v] && entry_[v]->is_complex()) parts((int)v);
      out_.nest.root = stmt(out_.nest.root);
      *entry_out_ = entry_;
    } catch (const LowerError& e) {
      out_.ok = false;
      out_.reason = e.reason;
      out_.reason_line = e.line;
    }
    return out_;
  }

 private:
  TypedNest out_;
  std::vector<TypeRef> entry_;
  std::vector<TypeRef>* entry_out_;
  const Oracle& oracle_;
  FpMode fp_;
  std::map<int, std::pair<int, int>> parts_;
  int temps_ = 0;
  // The statement being lowered: where its Temp statements go, and its resume point.
  std::vector<Stmt>* pre_ = nullptr;
  int resume_ = -1, line_ = 0;

  [[noreturn]] void fail(const std::string& why) { throw LowerError{why, line_}; }

  void note_tag(const TypeRef& t) {
    for (auto& x : out_.tags)
      if (*x == *t) return;
    out_.tags.push_back(t);
  }

  int new_var(const std::string& name, ir::Var::Storage st, int parent, int index) {
    ir::Var v;
    v.name = name;
    v.storage = st;
    v.parent = parent;
    v.index = index;
    v.assigned = true;
    v.read = true;
    v.statement_local = st == ir::Var::Storage::Temp;  // (spill(): the statement's own)
    out_.nest.vars.push_back(v);
    entry_.push_back(types::unbound());
    note_tag(types::py_float());
    return (int)out_.nest.vars.size() - 1;
  }

  // The Part variables of complex variable `v` (its value at entry, if any, split).
  std::pair<int, int> parts(int v) {
    auto it = parts_.find(v);
    if (it != parts_.end()) return it->second;
    const std::string n = out_.nest.vars[(size_t)v].name;  // a copy: new_var grows the vector
    int re = new_var(n + ".real", ir::Var::Storage::Part, v, 0);
    int im = new_var(n + ".imag", ir::Var::Storage::Part, v, 1);
    if ((size_t)v < entry_.size() && entry_[(size_t)v] && entry_[(size_t)v]->is_complex()) {
      entry_[(size_t)re] = types::py_float();
      entry_[(size_t)im] = types::py_float();
    }
    return parts_[v] = {re, im};
  }

  // ------------------------------------------------------------ building blocks
  static Expr node(EK k, TypeRef t, std::vector<Expr> args) {
    auto e = std::make_shared<ExprNode>();
    e->kind = k;
    e->type = std::move(t);
    e->origin = ir::kInlinedOrigin;  // no fact of the analysis is about these operations
    e->args = std::move(args);
    return e;
  }
  static Expr constant(const ir::ConstValue& c, TypeRef t) {
    auto e = std::make_shared<ExprNode>(*ir::make_const(c));
    e->type = std::move(t);
    return e;
  }
  static Expr fconst(double v) {
    ir::ConstValue c;
    c.kind = ir::ConstValue::Kind::Float;
    c.f = v;
    return constant(c, types::py_float());
  }
  static Expr iconst(int64_t v) {
    ir::ConstValue c;
    c.kind = ir::ConstValue::Kind::Int;
    c.i = v;
    return constant(c, types::py_int());
  }
  static Expr bin(ir::BinOp op, Expr a, Expr b) {
    auto e = node(EK::Binary, op == ir::BinOp::And || op == ir::BinOp::Or ? types::py_bool() : types::py_float(),
                  {std::move(a), std::move(b)});
    std::const_pointer_cast<ExprNode>(e)->binop = op;
    return e;
  }
  // Arithmetic on parts: on doubles, or, while computing a numpy.complex64 result
  // (single_), each operation rounded to float32 as NumPy's float arithmetic rounds it
  // (a double result of + - * / of two float32 values, rounded to float32, is the float32
  // result: 53 >= 2 * 24 + 2 bits).
  Expr arith(ir::BinOp op, Expr a, Expr b) const {
    Expr r = bin(op, std::move(a), std::move(b));
    return single_ ? round32(r) : r;
  }
  Expr add(Expr a, Expr b) const { return arith(ir::BinOp::Add, std::move(a), std::move(b)); }
  Expr sub(Expr a, Expr b) const { return arith(ir::BinOp::Sub, std::move(a), std::move(b)); }
  Expr mul(Expr a, Expr b) const { return arith(ir::BinOp::Mul, std::move(a), std::move(b)); }
  Expr div(Expr a, Expr b) const { return arith(ir::BinOp::TrueDiv, std::move(a), std::move(b)); }
  // x (a double) rounded to float32, as a double, or as a numpy.float32 if `t` is one.
  static Expr round32(Expr x, TypeRef t = types::py_float()) { return call(Builtin::Round32, std::move(t), {std::move(x)}); }

  bool single_ = false;  // computing a numpy.complex64 result
  struct Precision {
    Lower* l;
    bool old;
    Precision(Lower* l, bool single) : l(l), old(l->single_) { l->single_ = single; }
    ~Precision() { l->single_ = old; }
  };
  static bool is_c64(const TypeRef& t) { return t && t->kind == Type::Kind::NpScalar && t->dtype == DType::Complex64; }
  // Whether every value of type `t` is exactly a float32 (NumPy converts it to complex64
  // without rounding).
  static bool single_exact(const TypeRef& t) {
    if (t->kind == Type::Kind::PyBool) return true;
    if (t->kind != Type::Kind::NpScalar) return false;
    switch (t->dtype) {
      case DType::Bool: case DType::Int8: case DType::UInt8: case DType::Int16: case DType::UInt16:
      case DType::Float32: case DType::Complex64:
        return true;
      default: return false;
    }
  }
  // Python ints become doubles first (float(x)): exact below 2**53, beyond which NumPy's
  // own conversion to float32 could round differently, so CPython takes those.
  Pair int_exact(const Expr& e, const Pair& p) {
    bool ints = false;
    for (auto& m : e->type->kind == Type::Kind::Union ? e->type->elems : std::vector<TypeRef>{e->type})
      ints = ints || m->kind == Type::Kind::PyInt;
    if (!ints) return p;
    Pair q = spill(p);
    Expr ok = cmp(ir::CmpOp::LT, fabs(q.first), fconst(9007199254740992.0));
    return {ir::make_guard(ok, q.first), q.second};
  }
  // An operand of an operation whose result is numpy.complex64: converted to complex64
  // first (NumPy casts a Python number, and a float32 or a small integer exactly). A finite
  // part the cast makes infinite makes NumPy warn "overflow encountered in cast" (Cast32),
  // as the statement is evaluated: before every warning recorded after it (ComplexWarn),
  // which is NumPy's order only while no operation before this one could warn.
  // `origin`: the operation's (the cast's warning is on its line).
  Pair single_operand(const Expr& e, int origin) {
    Pair p = operand(e);
    if (single_exact(e->type)) return p;
    p = int_exact(e, p);
    auto cast = [&](const Expr& x) {
      // A number that stays finite (below FLT_MAX + half an ulp), or is not finite, casts
      // without a warning.
      if (x->kind == EK::Const && x->value.kind == ir::ConstValue::Kind::Float &&
          !(std::isfinite(x->value.f) && std::fabs(x->value.f) >= 3.4028235677973366e38))
        return round32(x);
      if (!deferred_.empty()) late_cast_ = true;
      auto c = std::const_pointer_cast<ExprNode>(call(Builtin::Cast32, types::py_float(), {x}));
      c->origin = origin;
      return Expr(c);
    };
    return {cast(p.first), cast(p.second)};
  }
  static Expr neg(Expr a) {
    auto e = node(EK::Unary, types::py_float(), {std::move(a)});
    std::const_pointer_cast<ExprNode>(e)->unop = ir::UnOp::Neg;
    return e;
  }
  static Expr cmp(ir::CmpOp op, Expr a, Expr b) {
    auto e = node(EK::Compare, types::py_bool(), {std::move(a), std::move(b)});
    std::const_pointer_cast<ExprNode>(e)->cmpop = op;
    return e;
  }
  static Expr lnot(Expr a) {
    auto e = node(EK::Unary, types::py_bool(), {std::move(a)});
    std::const_pointer_cast<ExprNode>(e)->unop = ir::UnOp::Not;
    return e;
  }
  static Expr call(Builtin f, TypeRef t, std::vector<Expr> args) {
    args.insert(args.begin(), node(EK::Const, types::callable(f), {}));
    return node(EK::Call, std::move(t), std::move(args));
  }
  static Expr cond(Expr c, Expr a, Expr b) {
    TypeRef t = a->type;
    return node(EK::Cond, t, {std::move(c), std::move(a), std::move(b)});
  }
  static Expr fabs(Expr x) { return call(Builtin::MathFabs, types::py_float(), {std::move(x)}); }
  static Expr isfinite(Expr x) { return call(Builtin::MathIsfinite, types::py_bool(), {std::move(x)}); }
  static Expr isinf(Expr x) { return call(Builtin::MathIsinf, types::py_bool(), {std::move(x)}); }
  static Expr isnan(Expr x) { return call(Builtin::MathIsnan, types::py_bool(), {std::move(x)}); }
  Expr load(int v, bool check_bound) {
    auto e = std::make_shared<ExprNode>(*ir::make_load(v, ir::kInlinedOrigin));
    e->type = types::py_float();
    e->check_bound = check_bound;
    return e;
  }
  // A real value as a Python float (what CPython's to_complex and NumPy's casts compute).
  static Expr to_float(const Expr& x) {
    if (x->type->kind == Type::Kind::PyFloat) return x;
    if (is_np(x->type) && x->type->dtype == DType::Float64) return ir::make_as_type(x, types::py_float());
    return call(Builtin::Float, types::py_float(), {x});
  }

  // The builtin a Call calls (None_ for anything else).
  static Builtin called_builtin(const Expr& e) {
    return e->kind == EK::Call && e->args[0]->type && e->args[0]->type->kind == Type::Kind::Callable
               ? e->args[0]->type->builtin
               : Builtin::None_;
  }

  static bool simple(const Expr& e) {
    switch (e->kind) {
      case EK::Load: case EK::Const: return true;
      case EK::Attr: return e->args[0]->kind == EK::Subscript;  // a part of an array element
      case EK::AsType: case EK::Unary: return simple(e->args[0]);
      case EK::Guard: return simple(e->args[1]);  // its check is a few compares of simple values
      default: return false;
    }
  }

  // Computes both parts once, into Temp variables, before the statement (where they are
  // not simple already, unless `force`).
  Pair spill(const Pair& p, bool force = false) {
    if (!force && simple(p.first) && simple(p.second)) return p;
    int k = temps_++;
    int re = new_var("$c" + std::to_string(k) + ".real", ir::Var::Storage::Temp, -1, 0);
    int im = new_var("$c" + std::to_string(k) + ".imag", ir::Var::Storage::Temp, -1, 1);
    ir::Effect a, b;
    a.kind = b.kind = ir::Effect::Kind::Assign;
    a.var = re;
    a.value = p.first;
    b.var = im;
    b.value = p.second;
    pre_->push_back(ir::make_seg({a, b}, resume_, line_));
    return {load(re, false), load(im, false)};
  }

  // Operands in CPython's order: `a` was lowered before `b`, whose lowering computed parts
  // into Temps before the statement (from `before` on in pre_, `ops_before` deferred
  // operations then): an `a` that may fail (an element read whose index may be out of range
  // or divide by zero: `M[0][i % n] += z * w`) is computed into Temps ahead of those, so
  // that its checks come first.
  Pair ahead_of(const Pair& a, size_t before, size_t ops_before) {
    // Only where those Temps may record a warning themselves (a cast to complex64 that may
    // overflow: Cast32 warns where it is computed); elsewhere a check that fails hands the
    // statement to CPython, which redoes it in order, and nothing observable came before.
    bool warns = false;
    for (size_t i = before; i < pre_->size() && !warns; i++)
      ir::for_each_expr((*pre_)[i], [&](const Expr& x) {
        warns = warns || called_builtin(x) == Builtin::Cast32;
      });
    auto check_free = [](const Expr& x) {
      const Expr* y = &x;
      while ((*y)->kind == EK::AsType || (*y)->kind == EK::Unary) y = &(*y)->args[0];
      return (*y)->kind == EK::Load || (*y)->kind == EK::Const;
    };
    if (!warns || (check_free(a.first) && check_free(a.second))) return a;
    Pair k = spill(a, /*force=*/true);
    Stmt seg = pre_->back();
    pre_->pop_back();
    pre_->insert(pre_->begin() + (std::ptrdiff_t)before, seg);
    for (size_t i = ops_before; i < deferred_.size(); i++) {
      deferred_[i].at++;
      if (deferred_[i].r_at != SIZE_MAX) deferred_[i].r_at++;
    }
    return k;
  }

  // NumPy warns where an operation's result is not finite (and, for a division, where its
  // scaled divisor overflowed: `also`): CPython redoes it.
  Pair finite_or_cpython(const Pair& p0, Expr also = nullptr) {
    if (fp_ == FpMode::Ignore) return p0;
    Pair p = spill(p0);
    Expr ok = bin(ir::BinOp::And, isfinite(p.first), isfinite(p.second));
    if (also) ok = bin(ir::BinOp::And, ok, also);
    return {ir::make_guard(ok, p.first), ir::make_guard(ok, p.second)};
  }

  // NumPy's + - * / of complex numbers whose warnings the kernel records itself (FpMode::
  // Deferred): the operands and the result in Temps (the statement may assign the
  // variables they came from), for finish_warnings to record after the statement.
  struct DeferredOp {
    ir::BinOp op;
    bool single;
    Pair a, b, r;
    std::vector<std::string> types;  // the operands' ("np.complex128", "float"...)
    int origin;
    size_t at;      // the statement's Temp statements before it checks r (pre_'s size)
    Expr scaled;    // a division's scaled divisor (in a Temp), else null
    const ExprNode* expr = nullptr;  // the operation
    size_t r_at = SIZE_MAX;          // the Temp statement that keeps r, if any
    // `v += e`, `v = v + e`, `v -= e`: the statement's value, assigned to v (effect()); where
    // the statement is quiet the parts are assigned r itself (finish_warnings), so the
    // update reads `v.real = v.real + e.real`, a sum plan_parallel splits.
    int into = -1;
  };
  std::vector<DeferredOp> deferred_;  // the statement's, in CPython's order (post-order)
  bool late_cast_ = false;  // the statement casts an operand after an operation that may warn
  bool in_seg_ = false;               // lowering a Seg (only those defer warnings)

  bool defers_warnings(const Expr& e) const {
    return fp_ == FpMode::Deferred && in_seg_ && !ir::is_inlined_origin(e->origin) &&
           (e->binop == ir::BinOp::Add || e->binop == ir::BinOp::Sub || e->binop == ir::BinOp::Mul ||
            e->binop == ir::BinOp::TrueDiv);
  }
  // (`scaled`: a division's scaled divisor, whose overflow a finite quotient can hide.)
  Pair defer_warnings(const Expr& e, const Pair& a, const Pair& b, const Pair& r, const Expr& scaled) {
    auto kept = [&](const Pair& p) {  // (a copy costs nothing once LLVM promotes the Temps)
      return p.first->kind == EK::Const && p.second->kind == EK::Const ? p : spill(p, /*force=*/true);
    };
    Pair ka = kept(a), kb = kept(b);
    const size_t r_at = pre_->size();
    Pair kr = kept(r);
    DeferredOp d{e->binop, single_, ka, kb, kr, {e->args[0]->type->str(), e->args[1]->type->str()},
                 e->origin, pre_->size(), scaled ? spill({scaled, fconst(0.0)}, /*force=*/true).first : nullptr};
    d.expr = e.get();
    if (pre_->size() > r_at) d.r_at = r_at;
    deferred_.push_back(d);
    return d.r;
  }

  // Whether evaluating `e` cannot record a NumPy warning: it holds no NumPy operation of
  // its own (the parts' arithmetic is on Python floats; NumPy's complex functions and
  // Round32 hand a non-finite result to CPython or cannot warn; Cast32 warns before the
  // statement's operations do, late_cast_ says where that is not NumPy's order).
  static bool quiet(const Expr& e) {
    if (!e) return true;
    if (e->kind == EK::Binary || e->kind == EK::Unary || e->kind == EK::Call) {
      auto numpy = [](const TypeRef& t) {
        if (!t) return true;
        auto one = [](const TypeRef& m) { return m->kind == Type::Kind::NpScalar || m->kind == Type::Kind::Array; };
        if (t->kind != Type::Kind::Union) return one(t);
        for (auto& m : t->elems)
          if (one(m)) return true;
        return false;
      };
      const Builtin f = called_builtin(e);
      const bool own = f == Builtin::Round32 || f == Builtin::Cast32 || f == Builtin::CFunc || f == Builtin::NpCLoop;
      if (numpy(e->type) && !own) return false;
    }
    for (auto& a : e->args)
      if (!quiet(a)) return false;
    return true;
  }
  // ... and a store: of a part into a complex128 element, a float into a float64 one, or
  // anything into a list (no conversion that could warn).
  static bool quiet_store(const ir::Effect& f) {
    const TypeRef& bt = f.base->type;
    if (!bt || bt->kind != Type::Kind::Array) return false;
    if (bt->pylist) return true;
    if (f.part >= 0)  // (a float32 part into complex64: exact, above)
      return bt->dtype == DType::Complex128 ||
             (bt->dtype == DType::Complex64 && is_np(f.value->type) && f.value->type->dtype == DType::Float32);
    const TypeRef& v = f.value->type;
    return bt->dtype == DType::Float64 && v &&
           (v->kind == Type::Kind::PyFloat || (v->kind == Type::Kind::NpScalar && v->dtype == DType::Float64));
  }
  static bool quiet_seg(const StmtNode& s) {
    if (s.kind != StmtNode::Kind::Seg) return false;
    for (auto& f : s.effects) {
      if (!quiet(f.value) || !quiet(f.base) || !quiet(f.index)) return false;
      if (f.kind == ir::Effect::Kind::Store && !quiet_store(f)) return false;
    }
    return true;
  }

  // The statement's deferred operations: where nothing else in the statement could warn,
  // their warnings are recorded in a statement after it (ComplexWarn), in CPython's order
  // among themselves, and only once the statement completed (one handed to CPython, which
  // warns as it redoes it, records none). Otherwise each result must be finite, checked
  // right after it is computed (as finite_or_cpython does).
  void finish_warnings(std::vector<Stmt>& pre, StmtNode& c, std::vector<Stmt>* after) {
    const bool late_cast = late_cast_;
    late_cast_ = false;
    if (deferred_.empty()) return;
    bool quiet = !late_cast && quiet_seg(c);
    for (auto& s : pre) quiet = quiet && quiet_seg(*s);
    if (quiet) {
      // An update of v in place (DeferredOp::into): v's parts take r's expressions, and
      // the warnings read v's parts after the statement (r's Temp goes).
      for (auto& d : deferred_) {
        if (d.into < 0 || d.r_at >= pre.size()) continue;
        const StmtNode& keep = *pre[d.r_at];
        auto [re, im] = parts(d.into);
        for (auto& f : c.effects)
          if (f.kind == ir::Effect::Kind::Assign && (f.var == re || f.var == im))
            f.value = keep.effects[f.var == re ? 0 : 1].value;
        pre.erase(pre.begin() + (std::ptrdiff_t)d.r_at);
        d.r = {load(re, false), load(im, false)};
        break;  // (one per statement: effect() marks only a Seg's single assignment)
      }
      std::vector<ir::Effect> effects;
      for (auto& d : deferred_) {
        ir::Effect f;
        f.kind = ir::Effect::Kind::Eval;
        std::vector<Expr> parts = {d.r.first, d.r.second, d.a.first, d.a.second, d.b.first, d.b.second};
        if (d.scaled) parts.push_back(d.scaled);
        f.value = ir::make_complex_warn(d.op, d.single, std::move(parts), d.types, d.origin);
        effects.push_back(f);
      }
      after->push_back(ir::make_seg(std::move(effects), resume_, line_));
    } else {
      for (size_t k = deferred_.size(); k-- > 0;) {
        const DeferredOp& d = deferred_[k];
        ir::Effect f;
        f.kind = ir::Effect::Kind::Eval;
        Expr ok = bin(ir::BinOp::And, isfinite(d.r.first), isfinite(d.r.second));
        if (d.scaled) ok = bin(ir::BinOp::And, ok, isfinite(d.scaled));  // (as finite_or_cpython's, conservatively)
        f.value = ir::make_guard(ok, fconst(0.0));
        pre.insert(pre.begin() + (std::ptrdiff_t)d.at, ir::make_seg({f}, resume_, line_));
      }
    }
    deferred_.clear();
  }

  // ------------------------------------------------------------ complex values
  // The parts of an operand converted to a complex number (x -> x + 0j).
  Pair operand(const Expr& e) {
    if (any_complex(e->type)) return spill(cx(e));
    if (!e->type->is_scalar()) fail("computes with complex numbers and a " + e->type->str());
    return {to_float(real(e)), fconst(0.0)};
  }

  Pair cx(const Expr& e) {
    Precision wide(this, false);  // (a complex64 operation sets it for its own arithmetic)
    const TypeRef& t = e->type;
    if (t->kind == Type::Kind::Union) fail("holds complex numbers and other values (" + t->str() + ") in one variable");
    const bool np = is_np(t);
    switch (e->kind) {
      case EK::Const: {
        if (e->value.kind != ir::ConstValue::Kind::Complex) break;
        return {fconst(e->value.f), fconst(e->value.f2)};
      }
      case EK::Load: {
        auto [re, im] = parts(e->var);
        return {load(re, e->check_bound), load(im, e->check_bound)};
      }
      case EK::Subscript: {
        const TypeRef& bt = e->args[0]->type;
        if (bt->kind != Type::Kind::Array || bt->pybuf) break;
        auto s = std::make_shared<ExprNode>(*e);
        s->args = {real(e->args[0]), real(e->args[1])};
        Expr sub = s;
        auto part = [&](const char* name) {
          auto a = std::make_shared<ExprNode>(*ir::make_attr(sub, name, e->origin));
          a->type = types::py_float();
          return Expr(a);
        };
        return {part("real"), part("imag")};
      }
      case EK::Binary: {
        if (is_c64(t)) {
          Pair a = single_operand(e->args[0], e->origin);
          if (e->binop == ir::BinOp::Pow) {
            Precision single(this, true);
            return power_numpy(e, a);
          }
          const size_t before = pre_->size(), ops_before = deferred_.size();
          Pair b = single_operand(e->args[1], e->origin);
          a = ahead_of(a, before, ops_before);
          Precision single(this, true);
          return binary(e, a, b, np);
        }
        Pair a = operand(e->args[0]);
        if (e->binop == ir::BinOp::Pow) return np ? power_numpy(e, a) : power(e, a);
        const size_t before = pre_->size(), ops_before = deferred_.size();
        Pair b = operand(e->args[1]);
        a = ahead_of(a, before, ops_before);
        Precision wide(this, false);
        return binary(e, a, b, np);
      }
      case EK::Unary: {
        if (e->unop == ir::UnOp::Neg) {
          Pair a = operand(e->args[0]);
          return {neg(a.first), neg(a.second)};
        }
        if (e->unop == ir::UnOp::Pos) return operand(e->args[0]);
        break;
      }
      case EK::Call: {
        Builtin f = e->args[0]->type->kind == Type::Kind::Callable ? e->args[0]->type->builtin : Builtin::None_;
        if (f == Builtin::Conjugate) {
          Pair a = operand(e->args[1]);
          return {a.first, neg(a.second)};
        }
        if (f == Builtin::Complex) {
          if (e->args.size() == 2) return operand(e->args[1]);
          return {to_float(real(e->args[1])), to_float(real(e->args[2]))};
        }
        const Pair zero = {fconst(0.0), fconst(0.0)};
        if (f == Builtin::CmathRect)  // rect(r, phi): float(r), float(phi)
          return cfunc(CFn::Rect, {to_float(real(e->args[1])), to_float(real(e->args[2]))}, zero, f);
        if (f == Builtin::CmathLog && e->args.size() == 3)
          return cfunc(CFn::LogBase, operand(e->args[1]), operand(e->args[2]), f);
        if (auto fn = cmath_function(f)) return cfunc(*fn, operand(e->args[1]), zero, f);
        if (numpy_complex_function(f) && e->args.size() == 2 && np) return numpy_loop(f, t->dtype, e->args[1]);
        if (f != Builtin::None_) fail(std::string("calls ") + builtin_name(f) + "() on complex numbers");
        break;
      }
      case EK::Cond: {
        Expr c = real(e->args[0]);
        Pair a = operand(e->args[1]), b = operand(e->args[2]);
        return {cond(c, a.first, b.first), cond(c, a.second, b.second)};
      }
      case EK::Seq: {
        std::vector<Expr> head;
        for (size_t i = 0; i + 1 < e->args.size(); i++) head.push_back(real(e->args[i]));
        Pair last = operand(e->args.back());
        auto seq = [&](Expr x) {
          auto args = head;
          args.push_back(x);
          return node(EK::Seq, x->type, std::move(args));
        };
        return {seq(last.first), seq(last.second)};
      }
      default: break;
    }
    fail("computes on complex numbers in a way stagepy does not support");
  }

  // + - * / of complex operands (converted already).
  Pair binary(const Expr& e, const Pair& a, const Pair& b, bool np) {
    Pair r;
    Expr scaled_ok, scaled;
    switch (e->binop) {
      case ir::BinOp::Add: r = {add(a.first, b.first), add(a.second, b.second)}; break;
      case ir::BinOp::Sub: r = {sub(a.first, b.first), sub(a.second, b.second)}; break;
      case ir::BinOp::Mul: r = prod(a, b); break;
      case ir::BinOp::TrueDiv:
        r = !np ? quot(a, b) : defers_warnings(e) ? quot_numpy(a, b, &scaled_ok, &scaled) : quot_numpy(a, b, &scaled_ok);
        break;
      default: fail(std::string("computes `") + ir::binop_name(e->binop) + "` on complex numbers");
    }
    if (!np) return r;
    return defers_warnings(e) ? defer_warnings(e, a, b, r, scaled) : finite_or_cpython(r, scaled_ok);
  }

  // _Py_c_prod (NumPy's is the same).
  Pair prod(const Pair& a, const Pair& b) const {
    return {sub(mul(a.first, b.first), mul(a.second, b.second)), add(mul(a.first, b.second), mul(a.second, b.first))};
  }

  // _Py_c_quot: Smith's algorithm. A zero divisor is CPython's EDOM (ZeroDivisionError):
  // there the Python float division by b.real == 0 hands the statement to CPython.
  Pair quot(const Pair& a, const Pair& b) {
    Expr abr = fabs(b.first), abi = fabs(b.second);
    Expr c1 = cmp(ir::CmpOp::GE, abr, abi), c2 = cmp(ir::CmpOp::GE, abi, abr);
    Expr r1 = div(b.second, b.first);                          // |b.real| >= |b.imag|
    Expr d1 = add(b.first, mul(b.second, r1));
    Expr re1 = div(add(a.first, mul(a.second, r1)), d1);
    Expr im1 = div(sub(a.second, mul(a.first, r1)), d1);
    Expr r2 = div(b.first, b.second);                          // |b.imag| > |b.real|
    Expr d2 = add(mul(b.first, r2), b.second);
    Expr re2 = div(add(mul(a.first, r2), a.second), d2);
    Expr im2 = div(sub(mul(a.second, r2), a.first), d2);
    Expr nan = fconst(std::nan(""));                           // a NaN in b
    return {cond(c1, re1, cond(c2, re2, nan)), cond(c1, im1, cond(c2, im2, nan))};
  }

  // NumPy's complex division (loops.c.src): a reciprocal of the scaled divisor, and a
  // zero divisor divides each part by |b.real|. Where NumPy could warn, a non-finite
  // result goes to CPython (finite_or_cpython), so a zero divisor can stop at the first
  // Python float division; where np.errstate ignores everything, the divisions are
  // NumPy's own, which give infinities and NaNs. The one overflow a finite quotient can
  // hide is the scaled divisor's (b.real + b.imag * (b.imag / b.real) for 1e308 + 1e308j:
  // its reciprocal is 0): `scaled_ok` says it is finite (also false for an infinite
  // divisor, which CPython then computes without a warning). Where the warnings are
  // deferred (`scaled` wanted: it is that divisor), the divisions are IEEE ones, as NumPy's.
  Pair quot_numpy(const Pair& a, const Pair& b, Expr* scaled_ok, Expr* scaled = nullptr) {
    auto q = [&](Expr x, Expr y) {
      if (scaled) {  // deferred warnings: IEEE division, as NumPy's (complex_warn classifies it)
        auto e = std::const_pointer_cast<ExprNode>(bin(ir::BinOp::TrueDiv, std::move(x), std::move(y)));
        e->in_domain = true;
        return single_ ? round32(e) : Expr(e);
      }
      if (fp_ != FpMode::Ignore) return div(std::move(x), std::move(y));
      TypeRef f64 = types::np_scalar(DType::Float64);
      auto e = node(EK::Binary, f64, {ir::make_as_type(x, f64), ir::make_as_type(y, f64)});
      std::const_pointer_cast<ExprNode>(e)->binop = ir::BinOp::TrueDiv;
      Expr r = ir::make_as_type(e, types::py_float());
      return single_ ? round32(r) : r;
    };
    Expr abr = fabs(b.first), abi = fabs(b.second);
    Expr c1 = cmp(ir::CmpOp::GE, abr, abi);
    Expr zero = bin(ir::BinOp::And, cmp(ir::CmpOp::EQ, abr, fconst(0.0)), cmp(ir::CmpOp::EQ, abi, fconst(0.0)));
    Expr r1 = q(b.second, b.first);
    Expr d1 = add(b.first, mul(b.second, r1));
    Expr s1 = q(fconst(1.0), d1);
    Expr re1 = mul(add(a.first, mul(a.second, r1)), s1);
    Expr im1 = mul(sub(a.second, mul(a.first, r1)), s1);
    Expr r2 = q(b.first, b.second);
    Expr d2 = add(b.second, mul(b.first, r2));
    Expr s2 = q(fconst(1.0), d2);
    *scaled_ok = bin(ir::BinOp::Or, bin(ir::BinOp::And, c1, zero), isfinite(cond(c1, d1, d2)));
    if (scaled) *scaled = cond(c1, d1, d2);
    Expr re2 = mul(add(mul(a.first, r2), a.second), s2);
    Expr im2 = mul(sub(mul(a.second, r2), a.first), s2);
    return {cond(c1, cond(zero, q(a.first, abr), re1), re2), cond(c1, cond(zero, q(a.second, abr), im1), im2)};
  }

  // The value of a constant exponent with no imaginary part; NaN for any other.
  static double real_constant(const Expr& x) {
    if (x->kind != EK::Const) return NAN;
    const auto& c = x->value;
    if (c.kind == ir::ConstValue::Kind::Int) return (double)c.i;
    if (c.kind == ir::ConstValue::Kind::Bool) return c.b ? 1 : 0;
    if (c.kind == ir::ConstValue::Kind::Float) return c.f;
    if (c.kind == ir::ConstValue::Kind::Complex && c.f2 == 0.0) return c.f;
    return NAN;
  }

  // NumPy's npy_cpow for a constant integer exponent |n| < 100: x ** 0 is 1, 0 ** n is 0
  // (n > 0) or NaN with an "invalid" warning (n < 0), n = 1, 2, 3 unrolled, others (the
  // negative ones too) by repeated squaring from 1 + 0j, and 1 / x**-n by NumPy's complex
  // division. Where NumPy could warn, any intermediate or result that is not finite goes to
  // CPython (one that is finite came from finite operations, which raise no flag NumPy
  // reports). Other exponents call the C library's cpow: not here.
  Pair power_numpy(const Expr& e, const Pair& base) {
    const double n = real_constant(e->args[1]);
    if (!(n == std::floor(n) && std::fabs(n) < 100.0))
      fail("raises a NumPy complex number to a power other than a constant integer below 100");
    // (x ** 0 evaluates x all the same, for its errors: `A[i] ** 0` past A's end)
    const Pair a = spill(base, /*force=*/n == 0);
    if (n == 0) return {fconst(1.0), fconst(0.0)};
    std::vector<Pair> steps;
    auto step = [&](Pair p) {
      p = spill(p);
      steps.push_back(p);
      return p;
    };
    const long k = (long)std::fabs(n);
    Pair r;
    if (n == 1) r = a;  // (unrolled for positive exponents only)
    else if (n == 2) r = step(prod(a, a));
    else if (n == 3) r = step(prod(a, step(prod(a, a))));
    else {
      Pair aa = {fconst(1.0), fconst(0.0)}, p = a;
      for (long mask = 1;; mask <<= 1) {
        if (k & mask) aa = step(prod(aa, p));
        if (k < (mask << 1)) break;
        p = step(prod(p, p));
      }
      r = aa;
    }
    Expr scaled_ok;
    if (n < 0) r = step(quot_numpy({fconst(1.0), fconst(0.0)}, r, &scaled_ok));
    // The zero base: 0 (n > 0) or NaN + NaN j.
    Expr zero = bin(ir::BinOp::And, cmp(ir::CmpOp::EQ, a.first, fconst(0.0)), cmp(ir::CmpOp::EQ, a.second, fconst(0.0)));
    const double z = n > 0 ? 0.0 : NAN;
    r = {cond(zero, fconst(z), r.first), cond(zero, fconst(z), r.second)};
    if (fp_ == FpMode::Ignore) return r;
    Expr ok = bin(ir::BinOp::And, isfinite(r.first), isfinite(r.second));
    for (auto& q : steps) ok = bin(ir::BinOp::And, ok, bin(ir::BinOp::And, isfinite(q.first), isfinite(q.second)));
    if (scaled_ok) ok = bin(ir::BinOp::And, ok, scaled_ok);
    r = spill(r);
    return {ir::make_guard(ok, r.first), ir::make_guard(ok, r.second)};
  }

  // complex_pow: an exponent CPython takes as a small integer by c_powi, repeated squaring
  // (c_powu) and the quotient 1 / x**-n for a negative one, unrolled here (an infinite part
  // is CPython's OverflowError); any other exponent by stagepy_cfunc.
  Pair power(const Expr& e, const Pair& base) {
    const Expr& x = e->args[1];
    const double n = real_constant(x);
    if (!(n == std::floor(n) && std::fabs(n) <= 100.0))  // any other exponent: complex_pow itself
      return cfunc(CFn::Pow, base, operand(x), Builtin::None_);
    long k = (long)n;
    long m = k > 0 ? k : -k;
    Pair r = {fconst(1.0), fconst(0.0)};
    Pair p = spill(base, /*force=*/m == 0);  // (x ** 0 evaluates x all the same, for its errors)
    for (long mask = 1; mask > 0 && m >= mask; mask <<= 1) {
      if (m & mask) r = spill(prod(r, p));
      if (m >= (mask << 1)) p = spill(prod(p, p));
    }
    if (k <= 0) r = spill(quot({fconst(1.0), fconst(0.0)}, r));
    Expr ok = bin(ir::BinOp::And, lnot(isinf(r.first)), lnot(isinf(r.second)));
    return {ir::make_guard(ok, r.first), ir::make_guard(ok, r.second)};
  }

  static std::optional<CFn> cmath_function(Builtin f) {
    switch (f) {
      case Builtin::CmathSqrt: return CFn::Sqrt;
      case Builtin::CmathExp: return CFn::Exp;
      case Builtin::CmathLog: return CFn::Log;
      case Builtin::CmathLog10: return CFn::Log10;
      case Builtin::CmathSin: return CFn::Sin;
      case Builtin::CmathCos: return CFn::Cos;
      case Builtin::CmathTan: return CFn::Tan;
      case Builtin::CmathSinh: return CFn::Sinh;
      case Builtin::CmathCosh: return CFn::Cosh;
      case Builtin::CmathTanh: return CFn::Tanh;
      case Builtin::CmathAsin: return CFn::Asin;
      case Builtin::CmathAcos: return CFn::Acos;
      case Builtin::CmathAtan: return CFn::Atan;
      case Builtin::CmathAsinh: return CFn::Asinh;
      case Builtin::CmathAcosh: return CFn::Acosh;
      case Builtin::CmathAtanh: return CFn::Atanh;
      default: return std::nullopt;
    }
  }

  // f(a, b) computed by stagepy_cfunc (complex_functions.h), once for both parts; where
  // that is not CPython's result (an error, a special value), CPython redoes the statement.
  // Used only once the function passed its self-test against the running CPython.
  Pair cfunc(CFn f, const Pair& a0, const Pair& b0, Builtin which) {
    if (!oracle_.cfunc_verified(f)) {
      std::string what = which == Builtin::None_ ? std::string("`**`") : std::string(builtin_name(which)) + "()";
      fail("computes " + what + " on complex numbers, and stagepy's " + what +
           " did not give CPython's results on this machine (self-test)");
    }
    Pair a = spill(a0), b = spill(b0);
    return both_parts(Builtin::CFunc, {iconst(static_cast<int>(f))}, {a.first, a.second, b.first, b.second});
  }

  // The two parts of a lowered call `b` (CFunc, NpCLoop) that computes a complex number:
  // b(head..., part, operands...) for part 0 and 1, into Temps of one statement (codegen
  // makes the call once for both).
  Pair both_parts(Builtin b, const std::vector<Expr>& head, const std::vector<Expr>& operands) {
    auto part = [&](int k) {
      std::vector<Expr> args = head;
      args.push_back(iconst(k));
      args.insert(args.end(), operands.begin(), operands.end());
      return call(b, types::py_float(), std::move(args));
    };
    return spill({part(0), part(1)});
  }

  // NumPy's functions of one complex number that kernels compute by calling NumPy's own
  // loop for the dtype (verified against the ufunc on sample values first).
  static bool numpy_complex_function(Builtin f) {
    switch (f) {
      case Builtin::NpSqrt: case Builtin::NpExp: case Builtin::NpLog: case Builtin::NpLog10: case Builtin::NpLog2:
      case Builtin::NpExpm1: case Builtin::NpLog1p: case Builtin::NpSin: case Builtin::NpCos: case Builtin::NpTan:
      case Builtin::NpSinh: case Builtin::NpCosh: case Builtin::NpTanh: case Builtin::NpArcsin: case Builtin::NpArccos:
      case Builtin::NpArctan: case Builtin::NpArcsinh: case Builtin::NpArccosh: case Builtin::NpArctanh:
      case Builtin::NpSquare:
        return true;
      default: return false;
    }
  }

  // f(x) of complex dtype `d` (NumPy converts x to it first: exactly, as x is of that
  // dtype or narrower): NumPy's loop, called once for both parts (NpCLoop); a result that
  // is not finite goes to CPython, which warns as NumPy does.
  Pair numpy_loop(Builtin f, DType d, const Expr& x) {
    if (!oracle_.ufunc_loop(f, d))
      fail(std::string("calls ") + builtin_name(f) + "() on " + dtype_name(d) +
           " numbers (no NumPy loop for it gave the ufunc's values in stagepy's self-test)");
    Pair a = spill(d == DType::Complex64 ? single_operand(x, x->origin) : operand(x));
    return both_parts(Builtin::NpCLoop, {iconst(static_cast<int>(f)), iconst(static_cast<int>(d))}, {a.first, a.second});
  }

  // cmath functions with a real result, of a number (complex or real).
  Expr cmath_real(const Expr& e, Builtin f) {
    Pair p = spill(operand(e->args[1]));
    switch (f) {
      case Builtin::CmathPhase: {  // c_atan2: the C library's atan2 for finite parts
        Expr ok = bin(ir::BinOp::And, isfinite(p.first), isfinite(p.second));
        return ir::make_guard(ok, call(Builtin::MathAtan2, types::py_float(), {p.second, p.first}));
      }
      case Builtin::CmathPolar:  // the modulus: _Py_c_abs, hypot (not finite: CPython redoes it)
        return call(Builtin::CHypot, types::py_float(), {p.first, p.second});
      case Builtin::CmathIsnan: return bin(ir::BinOp::Or, isnan(p.first), isnan(p.second));
      case Builtin::CmathIsinf: return bin(ir::BinOp::Or, isinf(p.first), isinf(p.second));
      case Builtin::CmathIsfinite: return bin(ir::BinOp::And, isfinite(p.first), isfinite(p.second));
      default: fail(std::string("calls ") + builtin_name(f) + "()");
    }
  }

  // ------------------------------------------------------------ real values
  // One part of pair p, the other still evaluated for its errors and warnings
  // (`complex(x, 0 ** -1).real` raises ZeroDivisionError), in CPython's order: the real
  // part's first.
  static Expr part_of(const Pair& p, bool imag) {
    auto quiet = [](const Expr& x) { return x->kind == EK::Const || (x->kind == EK::Load && !x->check_bound); };
    auto seq = [&](std::vector<Expr> xs) {
      TypeRef last = xs.back()->type;
      return ir::with_type(ir::make_seq(std::move(xs)), last);
    };
    if (imag) return quiet(p.first) ? p.second : seq({p.first, p.second});
    if (quiet(p.second)) return p.first;
    if (quiet(p.first)) return seq({p.second, p.first});
    return seq({p.first, p.second, p.first});  // (the real part's errors come first)
  }

  // `e` (not complex) with every complex computation inside it lowered.
  Expr real(const Expr& e) {
    if (!e) return e;
    if (any_complex(e->type) && e->type->kind != Type::Kind::Array)
      fail("uses a complex number where stagepy expects a real one");
    auto arg_complex = [&](size_t i) { return i < e->args.size() && any_complex(e->args[i]->type) &&
                                              e->args[i]->type->kind != Type::Kind::Array; };
    switch (e->kind) {
      case EK::Attr:
        if (arg_complex(0) && (e->name == "real" || e->name == "imag")) {
          Pair p = cx(e->args[0]);
          Expr r = part_of(p, e->name == "imag");
          if (is_np(e->type) && e->type->dtype == DType::Float32) return round32(r, e->type);  // exact
          return is_np(e->type) ? ir::make_as_type(r, e->type) : r;
        }
        break;
      case EK::Call: {
        Builtin f = e->args[0]->type->kind == Type::Kind::Callable ? e->args[0]->type->builtin : Builtin::None_;
        if (f == Builtin::CmathPhase || f == Builtin::CmathPolar || f == Builtin::CmathIsnan ||
            f == Builtin::CmathIsinf || f == Builtin::CmathIsfinite)
          return cmath_real(e, f);
        bool any = false;
        for (size_t i = 1; i < e->args.size(); i++) any = any || arg_complex(i);
        if (!any) break;
        if ((f == Builtin::Abs || f == Builtin::NpAbs) && e->args.size() == 2) {
          // CPython's _Py_c_abs and NumPy's npy_cabs: hypot(re, im); CPython redoes a
          // result that is not finite (an OverflowError, or NumPy's warning).
          Pair p = spill(cx(e->args[1]));
          return call(Builtin::CHypot, e->type, {p.first, p.second});
        }
        if (f == Builtin::Bool && e->args.size() == 2) return truth(e->args[1]);
        fail(std::string("calls ") + (f == Builtin::None_ ? "a function" : builtin_name(f)) + "() on complex numbers");
      }
      case EK::Truth:
        if (arg_complex(0)) return truth(e->args[0]);
        break;
      case EK::Unary:
        if (e->unop == ir::UnOp::Not && arg_complex(0)) return lnot(truth(e->args[0]));
        break;
      case EK::Compare:
        if ((e->cmpop == ir::CmpOp::EQ || e->cmpop == ir::CmpOp::NE) && (arg_complex(0) || arg_complex(1)))
          return equality(e);
        break;
      default: break;
    }
    for (size_t i = 0; i < e->args.size(); i++)
      if (arg_complex(i)) fail("computes on complex numbers in a way stagepy does not support");
    bool changed = false;
    std::vector<Expr> args;
    for (auto& a : e->args) {
      args.push_back(real(a));
      changed = changed || args.back() != a;
    }
    if (!changed) return e;
    auto c = std::make_shared<ExprNode>(*e);
    c->args = std::move(args);
    return c;
  }

  // complex_bool: real != 0 or imag != 0.
  Expr truth(const Expr& z) {
    Pair p = spill(cx(z));
    return bin(ir::BinOp::Or, cmp(ir::CmpOp::NE, p.first, fconst(0.0)), cmp(ir::CmpOp::NE, p.second, fconst(0.0)));
  }

  // complex_richcompare (a real operand compares exactly with the real part, and the
  // imaginary part must be 0) or NumPy's equal (both converted to complex).
  Expr equality(const Expr& e) {
    const bool np = is_np(e->type);
    // Compared as NumPy compares: both converted to the common type (complex64 rounds).
    const TypeRef common = np ? oracle_.binary(ir::BinOp::Add, e->args[0]->type, e->args[1]->type) : nullptr;
    auto side = [&](const Expr& x) -> Pair {
      if (is_c64(common)) return spill(single_operand(x, e->origin));
      if (any_complex(x->type)) return spill(cx(x));
      Expr r = real(x);
      if (np) return {to_float(r), fconst(0.0)};
      if (is_np(r->type)) r = ir::make_as_type(r, types::py_float());  // np.float64: a float
      return {r, fconst(0.0)};
    };
    Pair a = side(e->args[0]), b = side(e->args[1]);
    Expr eq = bin(ir::BinOp::And, cmp(ir::CmpOp::EQ, a.first, b.first), cmp(ir::CmpOp::EQ, a.second, b.second));
    Expr r = e->cmpop == ir::CmpOp::EQ ? eq : lnot(eq);
    return np ? ir::make_as_type(r, e->type) : r;
  }

  // ------------------------------------------------------------ statements
  Stmt stmt(const Stmt& s) {
    switch (s->kind) {
      case StmtNode::Kind::Block: {
        std::vector<Stmt> out;
        for (auto& b : s->body) lower_into(b, out);
        return ir::make_block(std::move(out));
      }
      default: {
        std::vector<Stmt> out;
        lower_into(s, out);
        if (out.size() == 1) return out[0];
        return ir::make_block(std::move(out));
      }
    }
  }

  void lower_into(const Stmt& s, std::vector<Stmt>& out) {
    line_ = s->line;
    resume_ = s->resume;
    std::vector<Stmt> pre;
    pre_ = &pre;
    auto c = std::make_shared<StmtNode>(*s);
    in_seg_ = s->kind == StmtNode::Kind::Seg;
    switch (s->kind) {
      case StmtNode::Kind::Seg: {
        std::vector<ir::Effect> effects;
        for (auto& f : s->effects) effect(f, effects, s->effects.size() == 1);
        c->effects = std::move(effects);
        break;
      }
      case StmtNode::Kind::If:
        c->cond = real(s->cond);
        break;
      case StmtNode::Kind::For:
      case StmtNode::Kind::Range:
        for (auto& a : c->args) a = real(a);
        break;
      default: break;
    }
    std::vector<Stmt> after;
    finish_warnings(pre, *c, &after);
    pre_ = nullptr;
    in_seg_ = false;
    for (auto& b : c->body) b = stmt(b);
    out.insert(out.end(), pre.begin(), pre.end());
    out.push_back(c);
    out.insert(out.end(), after.begin(), after.end());
  }

  // Whether f is `v = v + e`, `v = e + v` or `v = v - e`, e not reading v.
  static bool updates_in_place(const ir::Effect& f) {
    const Expr& e = f.value;
    if (e->kind != EK::Binary || (e->binop != ir::BinOp::Add && e->binop != ir::BinOp::Sub)) return false;
    auto is_v = [&](const Expr& x) { return x->kind == EK::Load && x->var == f.var; };
    if (is_v(e->args[0])) return !ir::reads_var(e->args[1], f.var);
    return e->binop == ir::BinOp::Add && is_v(e->args[1]) && !ir::reads_var(e->args[0], f.var);
  }

  // (`alone`: f is its statement's only effect.)
  void effect(const ir::Effect& f, std::vector<ir::Effect>& out, bool alone) {
    const bool cplx = f.value && any_complex(f.value->type) && f.value->type->kind != Type::Kind::Array;
    switch (f.kind) {
      case ir::Effect::Kind::Assign: {
        if (!cplx) {
          ir::Effect g = f;
          g.value = real(f.value);
          out.push_back(g);
          return;
        }
        Pair p = cx(f.value);
        if (alone && !deferred_.empty() && deferred_.back().expr == f.value.get() && updates_in_place(f))
          deferred_.back().into = f.var;
        auto [re, im] = parts(f.var);
        ir::Effect a = f, b = f, tag = f;
        a.var = re;
        a.value = p.first;
        b.var = im;
        b.value = p.second;
        // The variable itself keeps the type tag (how to box the parts at exit).
        ir::ConstValue k;
        k.kind = ir::ConstValue::Kind::Complex;
        auto marker = std::make_shared<ExprNode>(*ir::make_const(k, f.value->origin));
        marker->type = f.value->type;
        note_tag(f.value->type);
        tag.value = marker;
        out.push_back(a);
        out.push_back(b);
        out.push_back(tag);
        return;
      }
      case ir::Effect::Kind::Store: {
        const TypeRef& bt = f.base ? f.base->type : nullptr;
        if (bt && bt->kind == Type::Kind::Array && dtype_is_complex(bt->dtype)) {
          if (bt->pybuf) fail("stores into a buffer of complex numbers");
          // (Into complex64 elements, codegen rounds each part as NumPy's cast does.)
          Pair p = bt->dtype == DType::Complex64 ? int_exact(f.value, operand(f.value)) : operand(f.value);
          if (bt->dtype == DType::Complex64 && single_exact(f.value->type)) {
            // Parts that are float32 numbers already: stored as they are (no cast to check).
            const TypeRef f32 = types::np_scalar(DType::Float32);
            p = {round32(p.first, f32), round32(p.second, f32)};
          }
          ir::Effect a = f, b = f;
          a.base = b.base = real(f.base);
          a.index = b.index = real(f.index);
          a.part = 0;
          a.value = p.first;
          b.part = 1;
          b.value = p.second;
          out.push_back(a);
          out.push_back(b);
          return;
        }
        ir::Effect g = f;
        g.base = real(f.base);
        g.index = real(f.index);
        g.value = real(f.value);
        out.push_back(g);
        return;
      }
      case ir::Effect::Kind::Append: {  // of numbers and bools only (type_infer)
        ir::Effect g = f;
        g.value = real(f.value);
        out.push_back(g);
        return;
      }
      case ir::Effect::Kind::Eval: {
        ir::Effect g = f;
        if (!cplx) {
          g.value = real(f.value);
          out.push_back(g);
          return;
        }
        Pair p = cx(f.value);
        g.value = p.first;
        out.push_back(g);
        g.value = p.second;
        out.push_back(g);
        return;
      }
    }
  }
};

}  // namespace

bool mentions_complex(const TypedNest& tn, const std::vector<TypeRef>& entry) {
  for (auto& t : entry)
    if (any_complex(t)) return true;
  bool found = false;
  ir::for_each_expr(tn.nest.root, [&](const Expr& e) {
    // cmath's functions of real numbers (cmath.phase(x)) compute on x + 0j.
    const bool cmath = e->kind == EK::Call && e->args[0]->type && e->args[0]->type->kind == Type::Kind::Callable &&
                       e->args[0]->type->builtin >= Builtin::CmathSqrt && e->args[0]->type->builtin <= Builtin::CmathIsfinite;
    found = found || cmath || any_complex(e->type);
  });
  return found;
}

TypedNest lower_complex(const TypedNest& tn, std::vector<TypeRef>* entry, const Oracle& oracle, FpMode fp) {
  return Lower(tn, entry, oracle, fp).run();
}

}  // namespace stagepy::specialize
