// See lift.h.
#include "analysis/lift.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

#include "analysis/append_targets.h"
#include "analysis/attribute_columns.h"
#include "analysis/bind_methods.h"
#include "analysis/bind_module_attributes.h"
#include "analysis/cfg.h"
#include "analysis/structure_returns.h"
#include "analysis/while_exits.h"
#include "ir/mutate.h"

namespace stagepy::analysis {
namespace {

using ir::Expr;
using ir::Stmt;

// A value on the symbolic stack.
struct SVal {
  enum class K : uint8_t {
    Expr,       // an IR expression
    Null,       // PUSH_NULL / the NULL half of a global or method load
    Iter,       // the iterator of active For `loop`
    RangeIter,  // GET_ITER: of a call callee(args...), or of a sequence (`form`)
    Next,       // the value FOR_ITER just produced for loop `loop`
    NextItem,   // item `item` of that value, unpacked (for i, x in enumerate(S))
    Opaque,     // a value below the nest (an enclosing interpreted loop's iterator)
    // A generator expression on its way to sum()/min()/max()/any()/all(): its code constant (`cidx`),
    // the closure's cells, the function made of them, and that function called on its
    // first iterable (`inner`, a RangeIter).
    Code, Closure, GenFunc, Generator,
    KwNames,    // 3.13: the keyword names CALL_KW takes (`names`)
    SetConst,   // a frozenset constant of numbers (`cidx`), for `in` only
  } k = K::Expr;
  Expr e;
  int loop = -1;
  Expr callee;
  std::vector<Expr> args;
  ir::StmtNode::Iter form = ir::StmtNode::Iter::Range;  // RangeIter
  Expr reversed;                                         // RangeIter: reversed(range(...))'s or reversed(S)'s callee
  Expr zipped;                                           // RangeIter (Enumerate): enumerate(zip(A, B, ...))'s zip
  std::vector<Expr> over;                                // RangeIter (not Range): the sequences
  int64_t start = 0;                                     // RangeIter (Enumerate)
  int item = -1;                                         // NextItem
  bool shared = false;  // duplicated by COPY: discarding it evaluates nothing
  int origin = -1;
  int cidx = -1;                       // Code, GenFunc, Generator
  std::vector<std::string> names;      // KwNames
  std::shared_ptr<const SVal> inner;         // Generator
};

SVal of(Expr e) {
  SVal v;
  v.k = SVal::K::Expr;
  v.e = std::move(e);
  return v;
}
SVal special(SVal::K k, int loop = -1) {
  SVal v;
  v.k = k;
  v.loop = loop;
  return v;
}

struct State {
  std::vector<SVal> stack;
  std::vector<ir::Effect> pending;  // effects of the open Seg
  std::map<int, Expr> shadow;       // values assigned in the open Seg
  int stmt_start = -1;              // offset where the current statement began
  int stmt_line = -1;
  bool stmt_reenter = false;        // the statement start is "re-enter this iteration"
  int pending_resume = -1;
  bool pending_resume_reenter = false;
  int nest_line_of_pending = -1;
  bool after_loop_store = false;    // the last instruction stored a for loop's variable
  std::vector<int> popped_iters;    // For loops whose iterator this path popped (break)
  std::vector<std::string> kwnames; // 3.11/3.12: KW_NAMES's names, for the next CALL
};

struct Ctx {
  int cfg_loop;
  int ir_loop;
  bool is_for;
  int header;
  int follow;
  int base;  // stack depth at statement boundaries inside this loop
  int var = -1;
  int header_offset = -1;
  std::vector<int> items{};  // the variables the unpacked items went to (-1: not yet; -2: unpacked
                             // further, into items[sub_first[k]] and the sub_count[k] - 1 after it)
  std::vector<int> sub_first{}, sub_count{};
  size_t top = 0;  // how many names the item itself was unpacked into (0: none, `var`)
  // A for loop with an else clause: where its breaks go (cfg.h's Loop::else_exit), and the
  // hidden variable a break sets (the clause runs where it is clear).
  int else_exit = -1;
  int broke = -1;
};

[[noreturn]] void fail(const std::string& why, int line) { throw LiftError{why, line}; }

// The code point of a UTF-8 string of exactly one character, or -1.
int64_t single_code_point(const std::string& s) {
  const auto* u = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  if (n == 0) return -1;
  const size_t len = u[0] < 0x80 ? 1 : (u[0] >> 5) == 6 ? 2 : (u[0] >> 4) == 14 ? 3 : (u[0] >> 3) == 30 ? 4 : 0;
  if (len == 0 || len != n) return -1;
  int64_t cp = len == 1 ? u[0] : len == 2 ? (u[0] & 0x1f) : len == 3 ? (u[0] & 0x0f) : (u[0] & 0x07);
  for (size_t k = 1; k < len; k++) {
    if ((u[k] >> 6) != 2) return -1;
    cp = (cp << 6) | (u[k] & 0x3f);
  }
  return cp;
}

// The hidden variable a function's body that returns from several places assigns its
// return value to (lift_function).
constexpr const char* kReturnVar = "return";

constexpr const char* kNotReduced =
    "uses a generator expression other than as the argument of sum(), min(), max(), any() or all()";

// The callee of a CALL from the two values below its arguments: a function with the NULL
// beside it (before it up to 3.12, after it from 3.13); anything else is a method call.
Expr callee_of(const SVal& a, const SVal& b, const char* why, int line) {
  if (a.k == SVal::K::Null && b.k == SVal::K::Expr) return b.e;
  if (b.k == SVal::K::Null && a.k == SVal::K::Expr) return a.e;
  fail(why, line);
}

Expr bool_const(bool b, int origin) {
  ir::ConstValue k;
  k.kind = ir::ConstValue::Kind::Bool;
  k.b = b;
  return ir::make_const(k, origin);
}

// `var = value` as an effect of a Seg.
ir::Effect assignment(int var, Expr value, int origin) {
  ir::Effect e;
  e.kind = ir::Effect::Kind::Assign;
  e.var = var;
  e.value = std::move(value);
  e.origin = origin;
  return e;
}

Expr none_const(int origin) { return ir::make_const(ir::ConstValue{}, origin); }

Expr int_const(int64_t v, int origin) {
  ir::ConstValue k;
  k.kind = ir::ConstValue::Kind::Int;
  k.i = v;
  return ir::make_const(k, origin);
}

std::string friendly(const Instr& in) {
  switch (in.op) {
    case Op::RETURN_VALUE: case Op::RETURN_CONST: return "returns from inside the loop";
    case Op::RAISE_VARARGS: case Op::RERAISE: case Op::LOAD_ASSERTION_ERROR:
      return "raises an exception (raise or assert) inside the loop";
    case Op::KW_NAMES: case Op::CALL_KW: case Op::CALL_FUNCTION_EX: return "calls with keyword or unpacked arguments";
    case Op::BUILD_LIST: case Op::LIST_APPEND: case Op::LIST_EXTEND: return "builds a list";
    case Op::BUILD_MAP: return "builds a dict";
    case Op::BUILD_SET: return "builds a set";
    case Op::STORE_ATTR: return "assigns an attribute";
    case Op::DELETE_FAST: case Op::DELETE_NAME: case Op::DELETE_GLOBAL: case Op::DELETE_DEREF:
    case Op::DELETE_SUBSCR: return "uses del";
    case Op::LOAD_CLOSURE: case Op::MAKE_FUNCTION: return "defines a function or lambda";
    case Op::LOAD_FAST_AND_CLEAR: return "uses a comprehension";
    case Op::YIELD_VALUE: return "yields";
    case Op::IMPORT_NAME: return "imports";
    case Op::FORMAT_VALUE: case Op::BUILD_STRING: return "formats a string";
    case Op::BEFORE_WITH: return "uses a with statement";
    case Op::PUSH_EXC_INFO: return "uses try/except";
    case Op::CONTAINS_OP: return "uses `in`";
    default: return "uses the bytecode " + in.opname;
  }
}

// What a generator expression's yields become when the lifter inlines it into the nest
// that consumes it (a child Lifter on the generator's code, lift_generator below).
struct Reduction {
  Builtin kind = Builtin::Sum;  // Sum, Min, Max, Any, All
  Expr callee;                  // the enclosing code's `sum` (whose identity typing checks)
  int acc = -1;                 // the hidden variable holding the result
  int comp = -1;                // sum: the compensation of a run of Python floats (3.12+)
  int item = -1;                // sum, min, max: the item being added or compared
  int seen = -1;                // min, max: whether an item came (none: CPython raises)
  SVal iter;                    // the generator's argument `.0`: its first iterable
  int resume = -1;              // where CPython takes over: the consuming statement
  int id = 0;                   // numbers the generator's hidden variables
};

class Lifter {
 public:
  Lifter(const CodeInfo& code, const LoopSpec& spec)
      : code_(code), spec_(spec), g_(build_cfg(code, spec)), nest_(own_nest_) {}
  // A child lifting generator expression code into `parent`'s nest.
  Lifter(const CodeInfo& code, const LoopSpec& spec, Lifter* parent, Reduction red)
      : code_(code), spec_(spec), g_(build_cfg(code, spec)), own_nest_(), nest_(parent->nest_), parent_(parent),
        red_(std::move(red)) {
    Lifter* root = parent;
    while (root->parent_) root = root->parent_;
    origin_base_ = ++root->children_ * kChildOrigins;
  }

  // The child's loop, its yields replaced by the reduction's steps.
  Stmt lift_generator(int line) {
    State st;
    std::vector<Stmt> out;
    lift_from(g_.entry, -1, st, out, false);
    flush(st, out);
    if (out.size() != 1 || out[0]->kind != ir::StmtNode::Kind::For)
      fail("a generator expression stagepy cannot follow", line);
    return out[0];
  }

  // A function's body (the region: its first instruction up to its return, left out): the
  // statements, and the value left on the stack for the return (its constant for
  // RETURN_CONST).
  void run_function(FunctionBody& fb, const Instr& ret, bool several) {
    State st;
    std::vector<Stmt> out;
    if (several) {
      // Every path ends in a return (or a raise): each assigned the return variable.
      if (lift_from(g_.entry, -1, st, out, false)) fail("its body ends without a return", ret.line);
      const int rv = var_of(ir::Var::Storage::Temp, -1, kReturnVar);
      // Set on every path before the caller's statement reads it, and read nowhere else.
      nest_.vars[(size_t)rv].assigned = nest_.vars[(size_t)rv].scratch = true;
      fb.result = load(rv, st, org(ret));
      nest_.root = structure_returns(ir::make_block(std::move(out)), nest_);
      nest_.py_version = code_.version;
      nest_.line = line_at(spec_.entry_offset);
      fb.nest = std::move(nest_);
      return;
    }
    lift_from(g_.entry, -1, st, out, false);
    if (ret.op == Op::RETURN_CONST) {
      if (!st.stack.empty()) fail("its return leaves values on the stack", ret.line);
      if (ret.iarg < 0 || ret.iarg >= (int)code_.consts.size()) fail("bad constant index", ret.line);
      fb.result = const_expr(code_.consts[(size_t)ret.iarg], org(ret), ret.line);
    } else {
      if (st.stack.size() != 1 || st.stack.back().k != SVal::K::Expr || !st.stack.back().e)
        fail("returns something other than a value", ret.line);
      fb.result = st.stack.back().e;
    }
    if (!st.pending.empty()) fail("assigns in its return statement", ret.line);
    nest_.root = ir::make_block(std::move(out));
    nest_.py_version = code_.version;
    nest_.line = line_at(spec_.entry_offset);
    fb.nest = std::move(nest_);
  }

  ir::Nest run() {
    State st;
    for (int i = 0; i < spec_.entry_depth; i++) st.stack.push_back(special(SVal::K::Opaque));
    std::vector<Stmt> out;
    lift_from(g_.entry, -1, st, out, false);
    flush(st, out);
    if (spec_.while_loop) {
      // The statement's first test (an If around the loop) or the loop itself.
      if (out.size() != 1 || (out[0]->kind != ir::StmtNode::Kind::While && out[0]->kind != ir::StmtNode::Kind::If))
        fail("the while statement lifts to more than one statement", line_at(spec_.header_offset));
    } else if (out.size() != 1 || out[0]->kind != ir::StmtNode::Kind::For) {
      fail("the loop's range() call is part of a larger statement", line_at(spec_.header_offset));
    }
    nest_.root = ir::make_block(std::move(out));
    nest_.entry_offset = spec_.entry_offset;
    nest_.exit_offset = spec_.exit_offset;
    nest_.stack_depth = spec_.entry_depth;
    nest_.py_version = code_.version;
    nest_.line = line_at(spec_.header_offset);
    int end_line = nest_.line;
    for (int i = g_.first_instr; i < g_.end_instr; i++) end_line = std::max(end_line, code_.instrs[i].line);
    nest_.end_line = end_line;
    return std::move(nest_);
  }

 private:
  const CodeInfo& code_;
  const LoopSpec& spec_;
  RegionCFG g_;
  ir::Nest own_nest_;
  ir::Nest& nest_;              // own_nest_, or a child's parent's
  Lifter* parent_ = nullptr;    // set in a child (generator expression code)
  // Bytecode offsets are each code object's own: a generator expression's collide with the
  // enclosing code's, and every fact of the analysis (a subscript in bounds, an int op
  // that cannot overflow) is keyed by an origin. A child gives the nodes it lifts the
  // origins `offset + origin_base_`, past any offset of the enclosing code (no line table
  // knows them: their lines are the consuming statement's).
  static constexpr int kChildOrigins = 1 << 24;
  int origin_base_ = 0;
  int children_ = 0;  // in the root lifter: children made so far
  int org(const Instr& in) const { return in.offset + origin_base_; }
  Reduction red_;               // a child's
  int generators_ = 0;          // generator expressions inlined so far (the root counts)
  std::map<std::pair<int, std::string>, int> var_ids_;
  std::map<std::tuple<int, bool, std::vector<int>>, int> resume_ids_;
  std::vector<Ctx> active_;

  int line_at(int offset) const {
    for (auto& in : code_.instrs)
      if (in.offset == offset) return in.line;
    return -1;
  }

  int base() const { return active_.empty() ? spec_.entry_depth : active_.back().base; }

  // ------------------------------------------------------------ variables, resumes
  int var_of(ir::Var::Storage storage, int index, const std::string& name) {
    if (parent_) return parent_->var_of(storage, index, name);
    std::string key = (storage == ir::Var::Storage::Fast || storage == ir::Var::Storage::Cell)
                          ? std::to_string(index) : name;
    auto k = std::make_pair((int)storage, key);
    auto it = var_ids_.find(k);
    if (it != var_ids_.end()) return it->second;
    ir::Var v;
    v.name = name;
    v.storage = storage;
    v.index = index;
    nest_.vars.push_back(v);
    int id = (int)nest_.vars.size() - 1;
    var_ids_[k] = id;
    return id;
  }

  Lifter& root() { return parent_ ? parent_->root() : *this; }
  bool is_cell_slot(int index) const {
    return index >= 0 && (size_t)index < code_.localsplus_kinds.size() && (code_.localsplus_kinds[(size_t)index] & CO_FAST_CELL);
  }
  bool is_free_slot(int index) const {
    return index >= 0 && (size_t)index < code_.localsplus_kinds.size() && (code_.localsplus_kinds[(size_t)index] & CO_FAST_FREE);
  }
  // A generator's own local (its loop variables, its cells): hidden, never the frame's.
  int generator_local(const std::string& name) {
    return var_of(ir::Var::Storage::Temp, -1, "genexpr" + (red_.id > 1 ? std::to_string(red_.id) : "") + "." + name);
  }
  // The variable `name` of this code's scope that an inner generator expression reads.
  int enclosing_var(const std::string& name, int line) {
    if (parent_) {
      for (auto& in : code_.instrs)
        if ((in.op == Op::LOAD_DEREF || in.op == Op::STORE_DEREF || in.op == Op::LOAD_CLOSURE) && in.sarg == name)
          return is_free_slot(in.iarg) ? parent_->enclosing_var(name, line) : generator_local(name);
      return parent_->enclosing_var(name, line);
    }
    for (auto& in : code_.instrs)
      if ((in.op == Op::LOAD_DEREF || in.op == Op::STORE_DEREF || in.op == Op::LOAD_CLOSURE ||
           (in.op == Op::LOAD_FAST && is_cell_slot(in.iarg))) && in.sarg == name)
        return var_of(ir::Var::Storage::Cell, in.iarg, name);
    fail("a generator expression reads `" + name + "`, which stagepy cannot find in the enclosing scope", line);
  }
  // A global an inner generator expression reads: at module level, the module's name.
  int enclosing_global(const std::string& name) {
    if (parent_) return parent_->enclosing_global(name);
    if (!code_.fast_locals && code_.qualname == "<module>") return var_of(ir::Var::Storage::Name, -1, name);
    return var_of(ir::Var::Storage::Global, -1, name);
  }

  int var_for(const Instr& in) {
    if (parent_) {
      switch (in.op) {
        case Op::LOAD_FAST: case Op::LOAD_FAST_CHECK: case Op::STORE_FAST:
          return generator_local(in.sarg);
        case Op::LOAD_DEREF:
          return is_free_slot(in.iarg) ? parent_->enclosing_var(in.sarg, in.line) : generator_local(in.sarg);
        case Op::STORE_DEREF:
          if (is_free_slot(in.iarg)) fail("assigns `" + in.sarg + "` inside a generator expression (:=)", in.line);
          return generator_local(in.sarg);
        case Op::LOAD_GLOBAL:
          return enclosing_global(in.sarg);
        default:
          fail("a generator expression uses " + in.opname, in.line);
      }
    }
    switch (in.op) {
      case Op::LOAD_FAST: case Op::LOAD_FAST_CHECK: case Op::STORE_FAST:
        return var_of(ir::Var::Storage::Fast, in.iarg, in.sarg);
      case Op::LOAD_DEREF: case Op::STORE_DEREF:
        return var_of(ir::Var::Storage::Cell, in.iarg, in.sarg);
      case Op::LOAD_GLOBAL: case Op::STORE_GLOBAL:
        return var_of(ir::Var::Storage::Global, -1, in.sarg);
      default:
        return var_of(ir::Var::Storage::Name, -1, in.sarg);
    }
  }

  int resume(const State& st) {
    // In a generator expression, CPython takes over at the statement consuming it.
    if (parent_) return red_.resume;
    if (st.stmt_start < 0) fail("a statement without a start", st.stmt_line);
    // Keyed by the enclosing loops too: a statement the structuring duplicated into a copy
    // of its loop resumes with that copy's iterator.
    std::vector<int> loops;
    for (auto& c : active_)
      if (c.is_for) loops.push_back(c.ir_loop);
    auto k = std::make_tuple(st.stmt_start, st.stmt_reenter, loops);
    auto it = resume_ids_.find(k);
    if (it != resume_ids_.end()) return it->second;
    ir::ResumePoint r;
    r.offset = st.stmt_start;
    r.line = st.stmt_line;
    r.reenter = st.stmt_reenter;
    r.loops = loops;
    nest_.resumes.push_back(r);
    int id = (int)nest_.resumes.size() - 1;
    resume_ids_[k] = id;
    return id;
  }

  // An Exit at the statement that starts at st's statement start: what the statement
  // computed so far (pure expressions, unapplied effects) is dropped, CPython computes it.
  Stmt exit_here(State& st) {
    st.pending.clear();
    st.shadow.clear();
    int r = resume(st);
    nest_.resumes[(size_t)r].exit = true;
    return ir::make_exit(r, st.stmt_line);
  }

  // ------------------------------------------------------------ segments
  void flush(State& st, std::vector<Stmt>& out) {
    if (st.pending.empty()) return;
    std::vector<int> apply_order = in_evaluation_order(st.pending);
    State tmp = st;
    tmp.stmt_start = st.pending_resume;
    tmp.stmt_reenter = st.pending_resume_reenter;
    int r = resume(tmp);
    Stmt seg = ir::make_seg(std::move(st.pending), r, st.nest_line_of_pending);
    if (!apply_order.empty()) {
      auto m = std::make_shared<ir::StmtNode>(*seg);
      m->apply_order = std::move(apply_order);
      seg = m;
    }
    out.push_back(seg);
    st.pending.clear();
    st.shadow.clear();
  }

  // A statement's values are evaluated in its effects' order (codegen evaluates them all
  // before it applies any; inline_helpers hoists their calls in that order), but CPython
  // stores in another order than it computes: `a, b = f(), g()` stores b first. Where values
  // that call something (a draw, a helper that changes things) are stored in another order
  // than their origins say CPython computes them, the effects are put in evaluation order,
  // and the order they are applied in is returned (StmtNode::apply_order); else nothing.
  std::vector<int> in_evaluation_order(std::vector<ir::Effect>& effects) {
    if (effects.size() < 2) return {};
    bool calls = false, ordered = true;
    int last = -1;
    for (auto& e : effects) {
      if (!e.value) return {};
      ir::walk_expr(e.value, [&](const Expr& x) { calls = calls || x->kind == ir::ExprNode::Kind::Call; });
      ordered = ordered && e.value->origin >= last;
      last = std::max(last, e.value->origin);
    }
    if (!calls || ordered) return {};
    std::vector<int> by_origin(effects.size());
    for (size_t k = 0; k < effects.size(); k++) by_origin[k] = (int)k;
    std::stable_sort(by_origin.begin(), by_origin.end(),
                     [&](int a, int b) { return effects[(size_t)a].value->origin < effects[(size_t)b].value->origin; });
    std::vector<ir::Effect> sorted;
    std::vector<int> position(effects.size());  // store order -> its place in `sorted`
    for (size_t k = 0; k < by_origin.size(); k++) {
      position[(size_t)by_origin[k]] = (int)k;
      sorted.push_back(effects[(size_t)by_origin[k]]);
    }
    effects = std::move(sorted);
    return position;
  }

  void add_effect(State& st, ir::Effect e, int line) {
    if (st.pending.empty()) {
      st.pending_resume = st.stmt_start;
      st.pending_resume_reenter = st.stmt_reenter;
      st.nest_line_of_pending = line;
    }
    st.pending.push_back(std::move(e));
  }

  // Called before each instruction: a statement boundary when only the enclosing loops'
  // iterators are on the stack.
  void boundary(const Instr& in, bool first_half, State& st, std::vector<Stmt>& out) {
    if ((int)st.stack.size() != base()) return;
    if (!first_half) {
      // Inside a superinstruction: not a point CPython can resume at. Right after a
      // for loop's variable store, re-entering the iteration is equivalent.
      if (st.pending.empty() && st.after_loop_store) {
        st.stmt_start = active_.back().header_offset;
        st.stmt_reenter = true;
        st.stmt_line = in.line;
      }
      return;
    }
    flush(st, out);
    st.stmt_start = in.offset;
    st.stmt_reenter = false;
    st.stmt_line = in.line;
  }

  // ------------------------------------------------------------ stack helpers
  SVal pop(State& st, const Instr& in) {
    if ((int)st.stack.size() <= 0) fail("stack underflow at " + in.opname, in.line);
    SVal v = st.stack.back();
    st.stack.pop_back();
    return v;
  }
  Expr pop_expr(State& st, const Instr& in) {
    SVal v = pop(st, in);
    if (v.k == SVal::K::Next || v.k == SVal::K::NextItem)
      fail("uses a for loop's item other than by assigning it to names", in.line);
    if (v.k == SVal::K::Generator || v.k == SVal::K::GenFunc || v.k == SVal::K::Code || v.k == SVal::K::Closure)
      fail(kNotReduced, in.line);
    if (v.k == SVal::K::SetConst)
      fail(std::string("uses a ") + (code_.consts[(size_t)v.cidx].str ? "str" : "set") +
               " constant other than as the right side of `in`",
           in.line);
    if (v.k != SVal::K::Expr) fail("unexpected stack value for " + in.opname, in.line);
    return v.e;
  }
  // `float("inf")` (any str float() reads, `"-inf"`, `"nan"`, `"1e-9"`): the call of `float`
  // (type inference guards that it is the builtin) on the float constant it gives, for a
  // CALL with that one argument on the stack; else null, the stack untouched.
  Expr float_of_str(int n, const std::vector<std::string>& kw, State& st, int origin) {
    if (n != 1 || !kw.empty() || st.stack.size() < 3 || st.stack.back().k != SVal::K::SetConst) return nullptr;
    const Const& c = code_.consts[(size_t)st.stack.back().cidx];
    if (!c.str || !c.float_str) return nullptr;
    const SVal& a = st.stack[st.stack.size() - 3];
    const SVal& b = st.stack[st.stack.size() - 2];
    const SVal& f = a.k == SVal::K::Null ? b : a;
    if ((a.k != SVal::K::Null && b.k != SVal::K::Null) || f.k != SVal::K::Expr || f.e->kind != ir::ExprNode::Kind::Load ||
        nest_.vars[(size_t)f.e->var].name != "float")
      return nullptr;
    Expr callee = f.e;
    st.stack.resize(st.stack.size() - 3);
    ir::ConstValue v;
    v.kind = ir::ConstValue::Kind::Float;
    v.f = c.f;
    auto call = std::make_shared<ir::ExprNode>(*ir::make_call(callee, {ir::make_const(v, origin)}, {}, origin));
    call->name = ir::kFloatOfStr;
    return call;
  }

  Expr load(int var, State& st, int origin) {
    nest_.vars[var].read = true;
    auto it = st.shadow.find(var);
    if (it != st.shadow.end()) return it->second;
    return ir::make_load(var, origin);
  }

  Expr const_expr(const Const& c, int origin, int line) {
    Expr e = constant_expr(c, origin);
    if (!e) fail(unlifted_constant_reason(c), line);
    return e;
  }

  // `A.ravel()` (no arguments): the Attr named `ravel()` (no attribute's name), which stands
  // for A's items in C order as a loop's sequence (loop_sequence: a view of a C-contiguous
  // array, typing checks; `A.flat` is another such Attr); else e.
  static Expr ravel_view(const Expr& e) {
    using K = ir::ExprNode::Kind;
    if (e->kind == K::Call && e->args.size() == 1 && e->kwnames.empty() && e->args[0]->kind == K::Attr &&
        e->args[0]->name == "ravel" && e->args[0]->args[0]->kind == K::Load) {
      auto view = std::make_shared<ir::ExprNode>(*e->args[0]);
      view->name = "ravel()";
      return view;
    }
    return e;
  }
  // A sequence a desugared for loop can index: a variable or an attribute of one.
  // What a loop may iterate over: a variable, an attribute of one, a slice of either
  // (`A[1:]`, `x[:-1]`, `A[i + 1:, 0]`) whose bounds are numbers, variables, and + - * of
  // them, or an item of either at such an index (`for v in adj[u]`, `for x in M[i]`: a row).
  // The loop re-evaluates the expression where it needs the sequence (its length before the
  // loop; its items, as S[k]; iter(S) when CPython takes over): the same object each time as
  // long as none of the names it reads is assigned in the loop (checked in desugar_for), and
  // as long as slicing the object makes no copy (type inference accepts slices of NumPy
  // arrays only, which are views, and of lists only where it reads them in place). A row of
  // a list of lists is the inner list itself (rows are never replaced natively: a store of
  // a list into a list of lists stays in CPython); of an array, a view.
  static bool sequence_expr(const Expr& e) {
    using K = ir::ExprNode::Kind;
    if (e->kind == K::Load || (e->kind == K::Attr && e->args[0]->kind == K::Load)) return true;
    if (e->kind != K::Subscript || e->args[0]->kind == K::Subscript || !sequence_expr(e->args[0])) return false;
    const Expr& ix = e->args[1];
    auto part = [&](const Expr& x) {
      if (x->kind == K::Slice) {
        for (auto& b : x->args)
          if (!bound_expr(b)) return false;
        return true;
      }
      return bound_expr(x);
    };
    if (ix->kind == K::Tuple) {
      for (auto& x : ix->args)
        if (!part(x)) return false;
    } else if (!part(ix)) {
      return false;
    }
    return true;
  }
  // A tuple constant (`for d in (-1, 0, 1)`, also CPython's form of `for d in [-1, 0, 1]`):
  // its items are numbers, or tuples of numbers that a `for a, b in ...` unpacks.
  static bool constant_tuple(const Expr& e) {
    if (e->kind != ir::ExprNode::Kind::Tuple) return false;
    for (auto& x : e->args)
      if (x->kind != ir::ExprNode::Kind::Const && !constant_tuple(x)) return false;
    return true;
  }
  static bool bound_expr(const Expr& e) {
    using K = ir::ExprNode::Kind;
    switch (e->kind) {
      case K::Const: return e->value.kind == ir::ConstValue::Kind::Int || e->value.kind == ir::ConstValue::Kind::None;
      case K::Load: return true;
      case K::Unary: return e->unop == ir::UnOp::Neg && bound_expr(e->args[0]);
      case K::Binary:
        return !e->inplace && (e->binop == ir::BinOp::Add || e->binop == ir::BinOp::Sub || e->binop == ir::BinOp::Mul) &&
               bound_expr(e->args[0]) && bound_expr(e->args[1]);
      default: return false;
    }
  }
  // The columns of a tuple constant whose items are all tuples of n constants (numbers):
  // column k holds the items' k-th elements. Empty where the items are not all such.
  static std::vector<Expr> constant_columns(const Expr& t, size_t n) {
    if (t->kind != ir::ExprNode::Kind::Tuple) return {};
    std::vector<std::vector<Expr>> cols(n);
    for (auto& row : t->args) {
      if (row->kind != ir::ExprNode::Kind::Tuple || row->args.size() != n) return {};
      for (size_t k = 0; k < n; k++) {
        if (row->args[k]->kind != ir::ExprNode::Kind::Const) return {};
        cols[k].push_back(row->args[k]);
      }
    }
    std::vector<Expr> out;
    for (auto& c : cols) out.push_back(ir::make_tuple(std::move(c), t->origin));
    return out;
  }
  std::string show(const Expr& e) const {
    if (e->kind == ir::ExprNode::Kind::Load) return nest_.vars[(size_t)e->var].name;
    if (e->kind == ir::ExprNode::Kind::Attr && e->args[0]->kind == ir::ExprNode::Kind::Load)
      return nest_.vars[(size_t)e->args[0]->var].name + "." + e->name;
    if (e->kind == ir::ExprNode::Kind::Subscript) return "a slice of " + show(e->args[0]);
    return "an expression";
  }

  // What GET_ITER makes of its operand: range(...) (any call but enumerate/zip: type
  // inference checks the callee), a sequence, enumerate(S[, c]) or zip(A, B, ...). Whether
  // `enumerate` and `zip` are the builtins is checked at run time, as for range.
  SVal iterable(const Expr& v, int line) {
    using Iter = ir::StmtNode::Iter;
    SVal r = special(SVal::K::RangeIter);
    r.origin = v->origin;
    if (v->kind != ir::ExprNode::Kind::Call) {
      if (!sequence_expr(v) && !constant_tuple(v))
        fail("loops over an expression (stagepy compiles loops over range(), or over a variable or attribute "
             "holding a sequence, or a slice of one)", line);
      r.form = Iter::Seq;
      r.over = {v};
      return r;
    }
    if (const Expr view = ravel_view(v); view != v) {
      r.form = Iter::Seq;
      r.over = {view};
      return r;
    }
    r.callee = v->args[0];
    r.args.assign(v->args.begin() + 1, v->args.end());
    if (r.args.size() == 1) r.args[0] = ravel_view(r.args[0]);  // reversed(A.ravel())
    const Expr& c = v->args[0];
    std::string name = c->kind == ir::ExprNode::Kind::Load ? nest_.vars[(size_t)c->var].name : "";
    if (name == "reversed" && r.args.size() == 1 && r.args[0]->kind == ir::ExprNode::Kind::Call &&
        v->kwnames.empty() && r.args[0]->kwnames.empty() && (r.args[0]->args.size() == 2 || r.args[0]->args.size() == 3)) {
      // reversed(range(n)) is range(n - 1, -1, -1); reversed(range(a, b)) is range(b - 1, a - 1, -1):
      // the same values, and CPython's iterator for it is that range's. (Their arguments are
      // evaluated once, before the loop; if that fails, CPython evaluates the statement.)
      const Expr& inner = r.args[0];
      const int o = inner->origin;
      auto minus_one = [&](const Expr& x) { return ir::make_binary(ir::BinOp::Sub, x, int_const(1, o), false, o); };
      Expr lo = inner->args.size() == 3 ? inner->args[1] : nullptr, hi = inner->args.back();
      r.reversed = c;
      r.callee = inner->args[0];
      r.args = {minus_one(hi), lo ? minus_one(lo) : int_const(-1, o), int_const(-1, o)};
      return r;
    }
    if (name == "reversed" && r.args.size() == 1 && v->kwnames.empty() && sequence_expr(r.args[0])) {
      // reversed(S) of a sequence: S indexed from len(S) - 1 down to 0, as CPython's
      // reversed iterators do (a list's reads the list as it is then, never a copy).
      r.form = Iter::Seq;
      r.reversed = c;
      r.callee = nullptr;
      r.over = {r.args[0]};
      r.args.clear();
      return r;
    }
    if (name != "enumerate" && name != "zip") {
      if (!v->kwnames.empty()) fail("loops over a call with keyword arguments", line);
      return r;
    }
    const bool start_kw = name == "enumerate" && v->kwnames.size() == 1 && v->kwnames[0] == "start";
    if (!v->kwnames.empty() && !start_kw) fail("calls " + name + "() with keyword arguments", line);
    r.form = name == "zip" ? Iter::Zip : Iter::Enumerate;
    if (r.form == Iter::Enumerate) {
      if (r.args.empty() || r.args.size() > 2) fail("calls enumerate() with " + std::to_string(r.args.size()) + " arguments", line);
      if (r.args.size() == 2) {
        const Expr& k = r.args[1];
        if (k->kind != ir::ExprNode::Kind::Const || k->value.kind != ir::ConstValue::Kind::Int ||
            k->value.i < -(int64_t(1) << 40) || k->value.i > (int64_t(1) << 40))
          fail("calls enumerate() with a start that is not an integer constant", line);
        r.start = k->value.i;
      }
      r.over = {r.args[0]};
      const Expr& a = r.args[0];
      if (a->kind == ir::ExprNode::Kind::Call && a->kwnames.empty() && a->args.size() >= 2 &&
          a->args[0]->kind == ir::ExprNode::Kind::Load && nest_.vars[(size_t)a->args[0]->var].name == "zip") {
        // enumerate(zip(A, B)): the index, then the zip's items (whether `zip` is the
        // builtin is checked at run time, as for enumerate).
        r.zipped = a->args[0];
        r.over.assign(a->args.begin() + 1, a->args.end());
      }
    } else {
      if (r.args.empty()) fail("calls zip() without arguments", line);
      r.over = r.args;
    }
    for (auto& o : r.over) {
      o = ravel_view(o);
      if (!sequence_expr(o))
        fail("calls " + name + "() on an expression (stagepy compiles it on variables or attributes holding sequences, "
             "and slices of them)", line);
    }
    return r;
  }

  // ------------------------------------------------------------ one instruction
  void step(const Instr& in, State& st, std::vector<Stmt>& out) {
    const int o = org(in);
    switch (in.op) {
      case Op::LOAD_FAST: case Op::LOAD_FAST_CHECK: case Op::LOAD_DEREF: case Op::LOAD_NAME:
        if (parent_ && in.op == Op::LOAD_FAST && in.sarg == ".0") {  // the generator's argument
          st.stack.push_back(red_.iter);
          break;
        }
        if (in.op == Op::LOAD_FAST && code_.version >= 313 && is_cell_slot(in.iarg)) {
          st.stack.push_back(special(SVal::K::Closure));  // 3.13's LOAD_CLOSURE
          break;
        }
        st.stack.push_back(of(load(var_for(in), st, o)));
        break;
      case Op::LOAD_CLOSURE:
        st.stack.push_back(special(SVal::K::Closure));
        break;
      case Op::MAKE_FUNCTION: {
        // 3.11/3.12: flag 8 takes the closure too; 3.13 sets it afterwards.
        SVal c = pop(st, in);
        if (c.k != SVal::K::Code || (in.iarg & ~8)) fail("defines a function or lambda", in.line);
        if (in.iarg & 8) {
          SVal cl = pop(st, in);
          if (cl.k != SVal::K::Closure) fail("defines a function or lambda", in.line);
        }
        c.k = SVal::K::GenFunc;
        st.stack.push_back(c);
        break;
      }
      case Op::SET_FUNCTION_ATTRIBUTE: {
        SVal f = pop(st, in), cl = pop(st, in);
        if (f.k != SVal::K::GenFunc || in.iarg != 8 || cl.k != SVal::K::Closure) fail("defines a function or lambda", in.line);
        st.stack.push_back(f);
        break;
      }
      case Op::YIELD_VALUE:
        if (!parent_) fail(friendly(in), in.line);
        reduce(pop_expr(st, in), st, out, in);
        st.stack.push_back(special(SVal::K::Null));  // the value sent in, which the POP_TOP drops
        break;
      case Op::LOAD_GLOBAL: {
        SVal v = of(load(var_for(in), st, o));
        bool null = in.flags & 1;
        if (null && code_.version < 313) st.stack.push_back(special(SVal::K::Null));
        st.stack.push_back(v);
        if (null && code_.version >= 313) st.stack.push_back(special(SVal::K::Null));
        break;
      }
      case Op::LOAD_CONST:
        if (in.iarg < 0 || in.iarg >= (int)code_.consts.size()) fail("bad constant index", in.line);
        if (code_.consts[(size_t)in.iarg].kind == Const::Kind::Names) {
          SVal n = special(SVal::K::KwNames);
          n.names = code_.consts[(size_t)in.iarg].names;
          st.stack.push_back(n);
          break;
        }
        if (code_.consts[(size_t)in.iarg].kind == Const::Kind::Code ||
            code_.consts[(size_t)in.iarg].kind == Const::Kind::FrozenSet) {
          SVal c = special(code_.consts[(size_t)in.iarg].kind == Const::Kind::Code ? SVal::K::Code : SVal::K::SetConst);
          c.cidx = in.iarg;
          st.stack.push_back(c);
          break;
        }
        st.stack.push_back(of(const_expr(code_.consts[in.iarg], o, in.line)));
        break;
      case Op::LOAD_ATTR: {
        Expr obj = pop_expr(st, in);
        SVal v = of(ir::make_attr(obj, in.sarg, o));
        bool null = in.flags & 1;
        if (null && code_.version < 313) st.stack.push_back(special(SVal::K::Null));
        st.stack.push_back(v);
        if (null && code_.version >= 313) st.stack.push_back(special(SVal::K::Null));
        break;
      }
      case Op::PUSH_NULL: st.stack.push_back(special(SVal::K::Null)); break;
      case Op::STORE_FAST: case Op::STORE_DEREF: case Op::STORE_NAME: case Op::STORE_GLOBAL: {
        SVal v = pop(st, in);
        int var = var_for(in);
        nest_.vars[var].assigned = true;
        if (v.k == SVal::K::Next) {
          if (active_.empty() || active_.back().ir_loop != v.loop || active_.back().var >= 0 || !active_.back().items.empty())
            fail("a for loop variable stored in an unexpected place", in.line);
          active_.back().var = var;
          st.after_loop_store = true;
          return;
        }
        if (v.k == SVal::K::NextItem) {
          if (active_.empty() || active_.back().ir_loop != v.loop || active_.back().items[(size_t)v.item] >= 0)
            fail("a for loop variable stored in an unexpected place", in.line);
          std::vector<int>& items = active_.back().items;
          items[(size_t)v.item] = var;
          st.after_loop_store = std::find(items.begin(), items.end(), -1) == items.end();
          return;
        }
        if (v.k != SVal::K::Expr) fail("stores a value stagepy cannot follow", in.line);
        ir::Effect e;
        e.kind = ir::Effect::Kind::Assign;
        e.var = var;
        e.value = v.e;
        e.origin = o;
        add_effect(st, e, in.line);
        st.shadow[var] = v.e;
        break;
      }
      case Op::BINARY_OP: {
        Expr b = pop_expr(st, in), a = pop_expr(st, in);
        auto op = binary_op_of(in.sarg);
        if (!op) fail("uses the operator " + in.sarg, in.line);
        st.stack.push_back(of(ir::make_binary(op->first, a, b, op->second, o)));
        break;
      }
      case Op::BINARY_SUBSCR: {
        Expr idx = pop_expr(st, in), obj = pop_expr(st, in);
        for (auto& e : st.pending)
          if (e.kind == ir::Effect::Kind::Store)
            fail("reads an element after writing one in the same statement", in.line);
        st.stack.push_back(of(ir::make_subscript(obj, idx, o)));
        break;
      }
      case Op::BUILD_SLICE: {
        if (in.iarg != 2 && in.iarg != 3) fail(friendly(in), in.line);
        Expr step = in.iarg == 3 ? pop_expr(st, in) : none_const(o);
        Expr stop = pop_expr(st, in), start = pop_expr(st, in);
        st.stack.push_back(of(ir::make_slice(start, stop, step, o)));
        break;
      }
      case Op::BINARY_SLICE: {  // 3.12+: container[start:stop]
        Expr stop = pop_expr(st, in), start = pop_expr(st, in), obj = pop_expr(st, in);
        for (auto& e : st.pending)
          if (e.kind == ir::Effect::Kind::Store)
            fail("reads an element after writing one in the same statement", in.line);
        st.stack.push_back(of(ir::make_subscript(obj, ir::make_slice(start, stop, none_const(o), o), o)));
        break;
      }
      case Op::STORE_SLICE:  // 3.12+: container[start:stop] = value
      case Op::STORE_SUBSCR: {
        Expr idx;
        if (in.op == Op::STORE_SLICE) {
          Expr stop = pop_expr(st, in), start = pop_expr(st, in);
          idx = ir::make_slice(start, stop, none_const(o), o);
        } else {
          idx = pop_expr(st, in);
        }
        Expr obj = pop_expr(st, in), val = pop_expr(st, in);
        ir::Effect e;
        e.kind = ir::Effect::Kind::Store;
        e.base = obj;
        e.index = idx;
        e.value = val;
        e.origin = o;
        add_effect(st, e, in.line);
        break;
      }
      case Op::STORE_ATTR: {
        // `obj.name = val`: a store into the attribute's column, where attribute_columns
        // finds `obj` an item of a list of objects; else it refuses the nest.
        Expr obj = pop_expr(st, in), val = pop_expr(st, in);
        ir::Effect e;
        e.kind = ir::Effect::Kind::Store;
        e.base = obj;
        e.index = int_const(-1, o);
        e.attr = in.sarg;
        e.value = val;
        e.origin = o;
        add_effect(st, e, in.line);
        break;
      }
      case Op::COMPARE_OP: {
        Expr b = pop_expr(st, in), a = pop_expr(st, in);
        auto op = compare_op_of(in.sarg);
        if (!op) fail("uses the comparison " + in.sarg, in.line);
        Expr c = ir::make_compare(*op, a, b, o);
        if (in.flags & 2) c = ir::make_truth(c, o);
        st.stack.push_back(of(c));
        break;
      }
      case Op::IS_OP: {
        Expr b = pop_expr(st, in), a = pop_expr(st, in);
        st.stack.push_back(of(ir::make_compare(in.iarg ? ir::CmpOp::IsNot : ir::CmpOp::Is, a, b, o)));
        break;
      }
      case Op::CONTAINS_OP: {
        // `x in (1, 2, 3)` of a tuple constant of numbers: `x == 1 or x == 2 or x == 3` as a
        // Python bool (what `in` compares with, after identity; a number that is identical
        // to one of the constants is also equal to it, NaN apart, which is refused).
        if (!st.stack.empty() && st.stack.back().k == SVal::K::SetConst) {
          contains_set_constant(st, in);
          break;
        }
        if (!st.stack.empty() && st.stack.back().k == SVal::K::KwNames) {
          // `c in ('a', 'e')`: a tuple constant of strs comes as keyword names (the same
          // constant kind); of one-character strs, their characters.
          SVal names = pop(st, in);
          Expr a = pop_expr(st, in);
          std::vector<Expr> items;
          for (auto& n : names.names) {
            const int64_t cp = single_code_point(n);
            if (cp < 0) fail("uses `in` on a tuple of strs longer than one character", in.line);
            ir::ConstValue k;
            k.kind = ir::ConstValue::Kind::Char;
            k.i = cp;
            items.push_back(ir::make_const(k, o));
          }
          st.stack.push_back(of(membership(a, items, "tuple", in)));
          break;
        }
        Expr b = pop_expr(st, in), a = pop_expr(st, in);
        if (b->kind != ir::ExprNode::Kind::Tuple) {
          contains_sequence(a, b, st, out, in);
          break;
        }
        if (b->args.empty()) fail("uses `in` on an empty tuple", in.line);
        st.stack.push_back(of(membership(a, b->args, "tuple", in)));
        break;
      }
      case Op::UNARY_NEGATIVE: st.stack.push_back(of(ir::make_unary(ir::UnOp::Neg, pop_expr(st, in), o))); break;
      case Op::UNARY_POSITIVE: st.stack.push_back(of(ir::make_unary(ir::UnOp::Pos, pop_expr(st, in), o))); break;
      case Op::UNARY_INVERT: st.stack.push_back(of(ir::make_unary(ir::UnOp::Invert, pop_expr(st, in), o))); break;
      case Op::UNARY_NOT: st.stack.push_back(of(ir::make_unary(ir::UnOp::Not, pop_expr(st, in), o))); break;
      case Op::CALL_INTRINSIC_1:
        if (in.sarg != "INTRINSIC_UNARY_POSITIVE") fail("uses " + in.sarg, in.line);
        st.stack.push_back(of(ir::make_unary(ir::UnOp::Pos, pop_expr(st, in), o)));
        break;
      case Op::TO_BOOL: st.stack.push_back(of(ir::make_truth(pop_expr(st, in), o))); break;
      case Op::KW_NAMES:
        if (in.iarg < 0 || in.iarg >= (int)code_.consts.size() || code_.consts[(size_t)in.iarg].kind != Const::Kind::Names)
          fail(friendly(in), in.line);
        st.kwnames = code_.consts[(size_t)in.iarg].names;
        break;
      case Op::CALL_KW: {
        SVal names = pop(st, in);
        if (names.k != SVal::K::KwNames) fail(friendly(in), in.line);
        st.kwnames = names.names;
      }
        [[fallthrough]];
      case Op::CALL: {
        int n = in.iarg;
        // The last kw.size() arguments are keyword arguments (typing refuses them but for
        // the few calls that take them: enumerate's and sum's start).
        std::vector<std::string> kw = std::move(st.kwnames);
        st.kwnames.clear();
        if ((int)kw.size() > n) fail(friendly(in), in.line);
        if (n == 0 && st.stack.size() >= 2 && st.stack.back().k == SVal::K::RangeIter &&
            st.stack[st.stack.size() - 2].k == SVal::K::GenFunc) {
          // The generator function called on its first iterable's iterator: a generator.
          SVal it = pop(st, in), g = pop(st, in);
          g.k = SVal::K::Generator;
          g.inner = std::make_shared<const SVal>(std::move(it));
          st.stack.push_back(std::move(g));
          break;
        }
        if (n >= 1 && n <= 2 && (int)st.stack.size() >= n + 2 && st.stack[st.stack.size() - (size_t)n].k == SVal::K::Generator) {
          inline_generator(n, kw, st, out, in);
          break;
        }
        if (n >= 1 && n <= 2 && inline_sequence_reduction(n, kw, st, out, in)) break;
        if (Expr f = float_of_str(n, kw, st, o)) {  // `float("inf")`
          st.stack.push_back(of(f));
          break;
        }
        std::vector<Expr> args(n);
        for (int i = n - 1; i >= 0; i--) args[i] = pop_expr(st, in);
        SVal b = pop(st, in), a = pop(st, in);
        Expr callee = callee_of(a, b, "calls a method", in.line);
        st.stack.push_back(of(ir::make_call(callee, std::move(args), std::move(kw), o)));
        break;
      }
      case Op::BUILD_TUPLE: {
        int n = in.iarg;
        if (n > 0 && (int)st.stack.size() >= n && st.stack.back().k == SVal::K::Closure) {
          for (int i = 0; i < n; i++)
            if (pop(st, in).k != SVal::K::Closure) fail("defines a function or lambda", in.line);
          st.stack.push_back(special(SVal::K::Closure));
          break;
        }
        std::vector<Expr> elems(n);
        for (int i = n - 1; i >= 0; i--) elems[i] = pop_expr(st, in);
        st.stack.push_back(of(ir::make_tuple(std::move(elems), o)));
        break;
      }
      case Op::BUILD_LIST: {
        // `[]`, `[a, b]`: a new list, which the nest may only keep in a variable it builds a
        // list in, or append (append_targets; type inference refuses it anywhere else).
        int n = in.iarg;
        std::vector<Expr> elems(n);
        for (int i = n - 1; i >= 0; i--) elems[i] = pop_expr(st, in);
        st.stack.push_back(of(ir::make_new_list(std::move(elems), o)));
        break;
      }
      case Op::UNPACK_SEQUENCE: {
        int n = in.iarg;
        if (!st.stack.empty() && st.stack.back().k == SVal::K::Next) {
          // for i, x in ...: the items go to names (checked when the loop is done).
          SVal next = pop(st, in);
          if (active_.empty() || active_.back().ir_loop != next.loop || active_.back().var >= 0 ||
              !active_.back().items.empty() || n < 1)
            fail("unpacks a for loop's item in an unexpected place", in.line);
          active_.back().items.assign((size_t)n, -1);
          active_.back().top = (size_t)n;
          active_.back().sub_first.assign((size_t)n, -1);
          active_.back().sub_count.assign((size_t)n, 0);
          for (int i = n - 1; i >= 0; i--) {
            SVal item = special(SVal::K::NextItem, next.loop);
            item.item = i;
            st.stack.push_back(item);
          }
          break;
        }
        if (!st.stack.empty() && st.stack.back().k == SVal::K::NextItem) {
          // for i, (x, y) in ...: an item unpacked again, into names of its own.
          SVal item = pop(st, in);
          if (active_.empty() || active_.back().ir_loop != item.loop || n < 1 ||
              active_.back().items[(size_t)item.item] != -1)
            fail("unpacks a for loop's item in an unexpected place", in.line);
          Ctx& c = active_.back();
          const size_t first = c.items.size();
          c.items[(size_t)item.item] = -2;
          c.sub_first[(size_t)item.item] = (int)first;
          c.sub_count[(size_t)item.item] = n;
          c.items.resize(first + (size_t)n, -1);
          c.sub_first.resize(first + (size_t)n, -1);
          c.sub_count.resize(first + (size_t)n, 0);
          for (int i = n - 1; i >= 0; i--) {
            SVal sub = special(SVal::K::NextItem, item.loop);
            sub.item = (int)first + i;
            st.stack.push_back(sub);
          }
          break;
        }
        Expr v = pop_expr(st, in);
        if (v->kind == ir::ExprNode::Kind::Tuple && (int)v->args.size() == n) {
          for (int i = n - 1; i >= 0; i--) st.stack.push_back(of(v->args[i]));
        } else {
          for (int i = n - 1; i >= 0; i--) {
            SVal s = of(ir::make_unpacked_item(v, i, n, o));
            s.shared = true;
            st.stack.push_back(s);
          }
        }
        break;
      }
      case Op::POP_TOP: {
        SVal v = pop(st, in);
        if (v.k == SVal::K::Iter) {
          st.popped_iters.push_back(v.loop);
        } else if (v.k == SVal::K::Next || v.k == SVal::K::NextItem) {
          fail("discards a for loop's item", in.line);
        } else if (v.k == SVal::K::Expr && !v.shared) {
          ir::Effect e;
          e.kind = ir::Effect::Kind::Eval;
          e.value = v.e;
          e.origin = o;
          add_effect(st, e, in.line);
        } else if (v.k != SVal::K::Expr && v.k != SVal::K::Null) {
          fail("discards a value stagepy cannot follow", in.line);
        }
        break;
      }
      case Op::COPY: {
        int n = in.iarg;
        if (n < 1 || n > (int)st.stack.size()) fail("bad COPY", in.line);
        SVal& src = st.stack[st.stack.size() - n];
        src.shared = true;
        SVal c = src;
        st.stack.push_back(c);
        break;
      }
      case Op::SWAP: {
        int n = in.iarg;
        if (n < 2 || n > (int)st.stack.size()) fail("bad SWAP", in.line);
        std::swap(st.stack.back(), st.stack[st.stack.size() - n]);
        break;
      }
      case Op::GET_ITER: {
        Expr v = pop_expr(st, in);
        st.stack.push_back(iterable(v, in.line));
        break;
      }
      case Op::RETURN_VALUE: case Op::RETURN_CONST: {
        // A function's body returning from one of several places: the value goes into the
        // return variable, and an Exit at a return point marks where the body ends
        // (structure_returns turns those into breaks).
        if (!spec_.function || spec_.exit_offset >= 0 || parent_) fail(friendly(in), in.line);
        Expr v;
        if (in.op == Op::RETURN_CONST) {
          if (in.iarg < 0 || in.iarg >= (int)code_.consts.size()) fail("bad constant index", in.line);
          v = const_expr(code_.consts[(size_t)in.iarg], o, in.line);
        } else {
          v = pop_expr(st, in);
        }
        if (!st.stack.empty()) fail("returns with values on the stack", in.line);
        add_effect(st, assignment(var_of(ir::Var::Storage::Temp, -1, kReturnVar), v, o), in.line);
        flush(st, out);
        ir::ResumePoint r;
        r.offset = in.offset;
        r.line = in.line;
        r.returns = true;
        nest_.resumes.push_back(r);
        out.push_back(ir::make_exit((int)nest_.resumes.size() - 1, in.line));
        break;
      }
      case Op::NOP:
        break;
      case Op::END_FOR:
        fail("unexpected END_FOR", in.line);
      default:
        fail(friendly(in), in.line);
    }
  }

  // ------------------------------------------------------------ structuring
  // Lifts from block `b` until `stop` (or until every path has left through break or
  // continue). Returns whether control reaches `stop` (falls through).
  bool lift_from(int b, int stop, State& st, std::vector<Stmt>& out, bool entering_header) {
    while (true) {
      if (b == stop && !entering_header) {
        if ((int)st.stack.size() == base()) flush(st, out);
        return true;
      }
      if (!entering_header) {
        for (int k = (int)active_.size() - 1; k >= 0; k--) {
          Ctx& c = active_[k];
          if (b == c.header) {
            if ((int)st.stack.size() != c.base) fail("continue with values on the stack", -1);
            flush(st, out);
            out.push_back(ir::make_continue(c.ir_loop, st.stmt_line));
            return false;
          }
          if (b == c.follow || (c.else_exit >= 0 && b == c.else_exit)) {
            if (c.else_exit >= 0 && b == c.follow) fail("a jump into a for loop's else clause", st.stmt_line);
            int expect = c.base - (c.is_for ? 1 : 0);
            if ((int)st.stack.size() != expect) fail("break with values on the stack", -1);
            if (c.is_for && (st.popped_iters.empty() || st.popped_iters.back() != c.ir_loop))
              fail("leaves a for loop without dropping its iterator", -1);
            if (c.is_for) st.popped_iters.pop_back();
            if (c.broke >= 0) add_effect(st, assignment(c.broke, bool_const(true, -1), -1), st.stmt_line);
            flush(st, out);
            out.push_back(ir::make_break(c.ir_loop, st.stmt_line));
            return false;
          }
        }
        if (b == RegionCFG::kExitBlock) {
          flush(st, out);
          return true;
        }
        if (b < 0) fail("control flow stagepy cannot structure", -1);
        int l = g_.loop_of_header[b];
        if (l >= 0) {
          b = lift_loop(l, st, out);
          if (b == -1) return false;
          continue;
        }
      }
      entering_header = false;

      const Block& blk = g_.blocks[b];
      int stop_at = blk.last;
      if (blk.term == Block::Term::Jump || blk.term == Block::Term::Cond) stop_at = blk.last - 1;
      if (blk.term == Block::Term::ForIter) fail("unexpected FOR_ITER", -1);
      for (int i = blk.first; i < stop_at; i++) {
        const Instr& in = code_.instrs[i];
        bool first_half = i == 0 || code_.instrs[i - 1].offset != in.offset;
        const bool at_start = first_half && (int)st.stack.size() == base();
        boundary(in, first_half, st, out);
        if (at_start && !parent_ && g_.ends_frame[(size_t)b]) {
          // Every way on from this statement returns or raises: CPython runs it (and
          // whatever it needs, f-strings, tuples, calls) once, from here.
          out.push_back(exit_here(st));
          return false;
        }
        step(in, st, out);
        if (in.op != Op::STORE_FAST && in.op != Op::STORE_NAME && in.op != Op::STORE_DEREF &&
            in.op != Op::STORE_GLOBAL)
          st.after_loop_store = false;
      }
      if (blk.term == Block::Term::Stop && spec_.function && spec_.exit_offset < 0 && !parent_ &&
          is_return(code_.instrs[blk.last - 1].op))
        return false;  // (step lifted the return)
      if (blk.term == Block::Term::Stop) {
        // A return or raise whose statement began before the blocks that lead only to it
        // (`return x if c else y`): CPython runs the whole statement again.
        if (parent_) fail(friendly(code_.instrs[blk.last - 1]), code_.instrs[blk.last - 1].line);
        out.push_back(exit_here(st));
        return false;
      }
      if (blk.term == Block::Term::Fall) {
        b = blk.succ[0];
        continue;
      }
      const Instr& term = code_.instrs[blk.last - 1];
      bool first_half = blk.last - 1 == 0 || code_.instrs[blk.last - 2].offset != term.offset;
      boundary(term, first_half, st, out);
      if (blk.term == Block::Term::Jump) {
        b = blk.succ[0];
        continue;
      }
      // A two-way branch.
      std::optional<int> next = branch(b, term, st, out, stop);
      if (!next) return false;
      b = *next;
      if (b == stop) {
        if ((int)st.stack.size() == base()) flush(st, out);
        return true;
      }
    }
  }

  // Lifts the two arms of the branch ending block `b`; returns where to continue, or
  // nothing when neither arm falls through.
  std::optional<int> branch(int b, const Instr& term, State& st, std::vector<Stmt>& out, int outer_stop) {
    const Block& blk = g_.blocks[b];
    int taken = blk.succ[0], fall = blk.succ[1];
    State st_t = st, st_f = st;  // arm states: "condition true" and "condition false"
    Expr cond;
    int t_target, f_target;
    const int o = term.offset + origin_base_;
    switch (term.op) {
      case Op::POP_JUMP_IF_FALSE: case Op::POP_JUMP_FORWARD_IF_FALSE: case Op::POP_JUMP_BACKWARD_IF_FALSE:
        cond = ir::make_truth(pop_expr(st_t, term), o);
        pop(st_f, term);
        t_target = fall, f_target = taken;
        break;
      case Op::POP_JUMP_IF_TRUE: case Op::POP_JUMP_FORWARD_IF_TRUE: case Op::POP_JUMP_BACKWARD_IF_TRUE:
        cond = ir::make_truth(pop_expr(st_t, term), o);
        pop(st_f, term);
        t_target = taken, f_target = fall;
        break;
      case Op::POP_JUMP_IF_NONE: case Op::POP_JUMP_FORWARD_IF_NONE: case Op::POP_JUMP_BACKWARD_IF_NONE:
        cond = ir::make_compare(ir::CmpOp::Is, pop_expr(st_t, term), none_const(o), o);
        pop(st_f, term);
        t_target = taken, f_target = fall;
        break;
      case Op::POP_JUMP_IF_NOT_NONE: case Op::POP_JUMP_FORWARD_IF_NOT_NONE: case Op::POP_JUMP_BACKWARD_IF_NOT_NONE:
        cond = ir::make_compare(ir::CmpOp::IsNot, pop_expr(st_t, term), none_const(o), o);
        pop(st_f, term);
        t_target = taken, f_target = fall;
        break;
      case Op::JUMP_IF_FALSE_OR_POP:  // false: jump keeping the value; true: pop, fall through
        cond = ir::make_truth(st.stack.back().e, o);
        pop(st_t, term);
        t_target = fall, f_target = taken;
        break;
      case Op::JUMP_IF_TRUE_OR_POP:
        cond = ir::make_truth(st.stack.back().e, o);
        pop(st_f, term);
        t_target = taken, f_target = fall;
        break;
      default:
        fail("unexpected branch " + term.opname, term.line);
    }
    if (!cond) fail("a condition stagepy cannot follow", term.line);
    if (!st.pending.empty()) fail("assigns inside a condition (:=)", term.line);
    int m = g_.merge_point(b);
    if (m == -1 && outer_stop >= 0) m = -1;
    const int saved_start = st.stmt_start;
    const bool saved_reenter = st.stmt_reenter;
    const int saved_line = st.stmt_line;
    std::vector<Stmt> out_t, out_f;
    bool ft = lift_from(t_target, m, st_t, out_t, false);
    bool ff = lift_from(f_target, m, st_f, out_f, false);
    if (ft && ff && out_t.empty() && out_f.empty() && st_t.pending.empty() && st_f.pending.empty() &&
        st_t.stack.size() == st_f.stack.size() && (int)st_t.stack.size() > base()) {
      // A conditional expression (x if c else y, and, or, chained comparisons).
      std::vector<SVal> merged;
      for (size_t i = 0; i < st_t.stack.size(); i++) {
        const SVal& a = st_t.stack[i];
        const SVal& c = st_f.stack[i];
        if (a.k == SVal::K::Expr && c.k == SVal::K::Expr) {
          if (a.e == c.e) merged.push_back(a);
          else merged.push_back(of(ir::make_cond(cond, a.e, c.e, o)));
        } else if (a.k == c.k && a.loop == c.loop && a.k != SVal::K::RangeIter) {
          merged.push_back(a);
        } else {
          fail("a conditional expression stagepy cannot follow", term.line);
        }
      }
      st.stack = std::move(merged);
      st.stmt_start = saved_start;
      st.stmt_reenter = saved_reenter;
      st.stmt_line = saved_line;
      st.popped_iters = st_t.popped_iters;
      if (m < 0) fail("a conditional expression whose arms do not meet", term.line);
      return m;
    }
    for (auto* s : {&st_t, &st_f})
      if (!s->pending.empty()) fail("a conditional stagepy cannot structure", term.line);
    if ((ft && (int)st_t.stack.size() != base()) || (ff && (int)st_f.stack.size() != base()))
      fail("a conditional stagepy cannot structure", term.line);
    State cond_state = st;
    cond_state.stmt_start = saved_start;
    cond_state.stmt_reenter = saved_reenter;
    cond_state.stmt_line = saved_line;
    int r = resume(cond_state);
    out.push_back(ir::make_if(cond, ir::make_block(std::move(out_t)), ir::make_block(std::move(out_f)), r, saved_line));
    if (!ft && !ff) return std::nullopt;
    st.stack = ft ? st_t.stack : st_f.stack;
    st.popped_iters = ft ? st_t.popped_iters : st_f.popped_iters;
    st.shadow.clear();
    if (m < 0) return std::nullopt;
    return m;
  }

  // `x in {1, 2.5, 3}` of a set of numbers (a frozenset constant): a number is in it when
  // it is one of its objects or equals one of them (numbers that compare equal hash
  // equal), which is `x == c1 or x == c2 ...` in any order as long as no item is a NaN
  // (the only number not equal to itself: such a set is refused).
  void contains_set_constant(State& st, const Instr& in) {
    const Const& set = code_.consts[(size_t)pop(st, in).cidx];
    Expr a = pop_expr(st, in);
    std::vector<Expr> items;
    for (auto& c : set.elems) items.push_back(const_expr(c, org(in), in.line));
    st.stack.push_back(of(membership(a, items, "set", in)));
  }

  // `a in items` (`not in` for CONTAINS_OP's argument 1) of the items of a tuple or set
  // constant (non-empty), which must be numbers other than NaN: `a == c1 or a == c2 ...` as
  // a Python bool.
  Expr membership(const Expr& a, const std::vector<Expr>& items, const std::string& container, const Instr& in) {
    const int o = org(in);
    for (auto& c : items) {
      const bool number = c->kind == ir::ExprNode::Kind::Const && c->value.kind != ir::ConstValue::Kind::None;
      if (!number) fail("uses `in` on a " + container + " of other things than numbers", in.line);
      if (std::isnan(c->value.f) || (c->value.kind == ir::ConstValue::Kind::Complex && std::isnan(c->value.f2)))
        fail("uses `in` on a " + container + " holding a NaN", in.line);
    }
    Expr r;
    for (size_t k = items.size(); k-- > 0;) {
      Expr eq = ir::make_truth(ir::make_compare(ir::CmpOp::EQ, a, items[k], o), o);
      r = k + 1 == items.size() ? eq : ir::make_cond(eq, bool_const(true, o), r, o);
    }
    return in.iarg ? ir::make_unary(ir::UnOp::Not, r, o) : r;
  }

  // ------------------------------------------------------------ generator expressions
  // `sum(g[, start])`, `min(g)`, `max(g)`, `any(g)`, `all(g)` of a generator expression g: the result goes to a
  // hidden variable, set to the reduction's initial value, then the generator's loop runs
  // inline (a child Lifter on its code) with each yield a step of the reduction. The
  // generator may not assign anything of the enclosing scope, so its loop has no effect but
  // on hidden variables: wherever the kernel stops in it, CPython runs the whole statement
  // consuming it again.
  void inline_generator(int n, const std::vector<std::string>& kw, State& st, std::vector<Stmt>& out, const Instr& in) {
    Expr start;
    if (n == 2) start = pop_expr(st, in);
    SVal g = pop(st, in);
    Reduction red = begin_reduction(n, kw, start, "calls a method on a generator expression", st, out, in);
    red.iter = *g.inner;
    const Reduction r = red;
    const Const& c = code_.consts[(size_t)g.cidx];
    Lifter child(*c.code, c.spec, this, std::move(red));
    out.push_back(child.lift_generator(in.line));
    st.stack.push_back(of(reduction_result(r, org(in))));
  }

  // `seq`, marked as a sequence a loop iterates where it is a slice (`sum(L[1:])`, `x in
  // L[i:j]`): a list's is then read in place (these loops are inside one statement, which
  // stores nothing before they end, so the copy CPython makes holds what the list holds).
  static Expr loop_sequence(const Expr& seq) {
    const bool flat = seq->kind == ir::ExprNode::Kind::Attr && (seq->name == "flat" || seq->name == "ravel()");
    if (!flat && (seq->kind != ir::ExprNode::Kind::Subscript || seq->args[1]->kind != ir::ExprNode::Kind::Slice))
      return seq;
    auto m = std::make_shared<ir::ExprNode>(*seq);
    m->loop_sequence = true;
    return m;
  }

  // The same reductions of a sequence: `sum(S[, start])`, `min(S)`, `max(S)`, `any(S)`,
  // `all(S)` of a list, tuple or array (typing decides which `S` may be), as the loop
  // `for k in range(len(S)): <step on S[k]>`. CPython's builtins iterate such a sequence
  // in that order, item by item; the loop's statements are the consuming statement's.
  bool inline_sequence_reduction(int n, const std::vector<std::string>& kw, State& st, std::vector<Stmt>& out,
                                 const Instr& in) {
    if ((int)st.stack.size() < n + 2) return false;
    // The callee and the NULL beside it (its order depends on the Python version).
    const SVal& a = st.stack[st.stack.size() - (size_t)n - 2];
    const SVal& b = st.stack[st.stack.size() - (size_t)n - 1];
    const SVal& f = b.k == SVal::K::Null ? a : b;
    if ((a.k != SVal::K::Null && b.k != SVal::K::Null) || f.k != SVal::K::Expr || !f.e ||
        f.e->kind != ir::ExprNode::Kind::Load)
      return false;
    for (int i = 1; i <= n; i++)
      if (st.stack[st.stack.size() - (size_t)i].k != SVal::K::Expr) return false;
    const std::string name = nest_.vars[(size_t)f.e->var].name;  // a copy: hidden_state grows nest_.vars
    const bool one = n == 1 && kw.empty();
    if (!(name == "sum" || (one && (name == "min" || name == "max" || name == "any" || name == "all")))) return false;
    const int o = org(in);
    Expr start;
    if (n == 2) start = pop_expr(st, in);
    Expr seq = loop_sequence(pop_expr(st, in));
    const Reduction red = begin_reduction(n, kw, start, "calls a method on a sequence", st, out, in);
    // The loop: its position a hidden variable; the item S[k], in range by construction.
    const int ir_loop = (int)nest_.loops.size();
    ir::LoopInfo info;
    info.header_offset = in.offset;
    info.line = in.line;
    nest_.loops.push_back(info);
    const int pos = hidden_state("$" + name + "(...).position" + std::to_string(ir_loop));
    auto item = std::make_shared<ir::ExprNode>(*ir::make_subscript(seq, ir::make_load(pos, o), o));
    item->in_domain = true;
    Stmt body = ir::make_block(reduction_step(red, item, ir_loop, in.line, o));
    Expr range = ir::make_load(hidden_var(ir::Var::Storage::Builtin, "range"), o);
    out.push_back(ir::make_for(pos, range, {builtin_call("len", {seq}, o)}, body, ir_loop, red.resume, in.line));
    st.stack.push_back(of(reduction_result(red, o)));
    return true;
  }

  // `x in S` (`not in`) of a sequence S that is no display: a list, a tuple, a 1-d array or
  // a str (typing decides), as `found = False; item = x` then the loop
  // `for k in range(len(S)): if item == S[k]: found = True; break` (the loop's statements
  // are the consuming statement's). CPython's list and tuple `in` compare with == after
  // identity, which only a NaN item tells apart (the same NaN object in S): its compare hands
  // a NaN to CPython (ExprNode::nan_bails). S is read at every step: only a variable,
  // attribute or element of one (no call).
  void contains_sequence(const Expr& x, const Expr& seq_in, State& st, std::vector<Stmt>& out, const Instr& in) {
    const int o = org(in);
    bool plain = true;
    ir::walk_expr(seq_in, [&](const Expr& e) {
      plain = plain && (e->kind == ir::ExprNode::Kind::Load || e->kind == ir::ExprNode::Kind::Attr ||
                        e->kind == ir::ExprNode::Kind::Subscript || e->kind == ir::ExprNode::Kind::Const ||
                        e->kind == ir::ExprNode::Kind::Binary || e->kind == ir::ExprNode::Kind::Slice);
    });
    const Expr seq = loop_sequence(seq_in);
    if (!plain) fail("uses `in` on something other than a variable, attribute or element", in.line);
    if (!st.pending.empty()) fail("assigns before an `in` test in the same statement", in.line);
    const int resume_at = resume(st);
    const int id = ++root().generators_;
    const std::string base = "in(...)" + (id > 1 ? "#" + std::to_string(id) : "");
    const int found = hidden_state(base);
    const int item = hidden_state(base + ".item");
    out.push_back(ir::make_seg({assignment(found, bool_const(false, o), o), assignment(item, x, o)}, resume_at,
                               st.stmt_line));
    const int ir_loop = (int)nest_.loops.size();
    ir::LoopInfo info;
    info.header_offset = in.offset;
    info.line = in.line;
    nest_.loops.push_back(info);
    const int pos = hidden_state("$in(...).position" + std::to_string(ir_loop));
    auto elem = std::make_shared<ir::ExprNode>(*ir::make_subscript(seq, ir::make_load(pos, o), o));
    elem->in_domain = true;
    nest_.vars[(size_t)item].read = true;
    auto eq = std::make_shared<ir::ExprNode>(*ir::make_compare(ir::CmpOp::EQ, ir::make_load(item, o), elem, o));
    eq->nan_bails = true;
    Stmt then_s = ir::make_block({ir::make_seg({assignment(found, bool_const(true, o), o)}, resume_at, in.line),
                                  ir::make_break(ir_loop, in.line)});
    Stmt body = ir::make_block({ir::make_if(ir::make_truth(eq, o), then_s, ir::make_block({}), resume_at, in.line)});
    Expr range = ir::make_load(hidden_var(ir::Var::Storage::Builtin, "range"), o);
    out.push_back(ir::make_for(pos, range, {builtin_call("len", {seq}, o)}, body, ir_loop, resume_at, in.line));
    nest_.vars[(size_t)found].read = true;
    Expr r = ir::make_load(found, o);
    st.stack.push_back(of(in.iarg ? ir::make_unary(ir::UnOp::Not, r, o) : r));
  }

  // The callee (popped from the stack), the hidden variables and their initial values
  // (a statement put in `out`) of the reduction a call of sum, min, max, any or all makes.
  Reduction begin_reduction(int n, const std::vector<std::string>& kw, const Expr& start, const char* method,
                            State& st, std::vector<Stmt>& out, const Instr& in) {
    const int o = org(in);
    if (!kw.empty() && !(n == 2 && kw.size() == 1 && kw[0] == "start"))
      fail(std::string(kNotReduced) + " (a call with keyword arguments)", in.line);
    SVal b = pop(st, in), a = pop(st, in);
    Expr callee = callee_of(a, b, method, in.line);
    std::string name = callee->kind == ir::ExprNode::Kind::Load ? nest_.vars[(size_t)callee->var].name : "";
    Reduction red;
    if (name == "sum") red.kind = Builtin::Sum;
    else if (name == "any" && n == 1) red.kind = Builtin::Any;
    else if (name == "all" && n == 1) red.kind = Builtin::All;
    else if (name == "max" && n == 1 && kw.empty()) red.kind = Builtin::Max;
    else if (name == "min" && n == 1 && kw.empty()) red.kind = Builtin::Min;
    else fail(kNotReduced, in.line);
    if (!st.pending.empty()) fail("assigns before a reduction (sum, min, max, any, all) in the same statement", in.line);
    red.callee = callee;
    red.resume = resume(st);
    red.id = ++root().generators_;
    const std::string base = name + "(...)" + (red.id > 1 ? "#" + std::to_string(red.id) : "");
    red.acc = hidden_state(base);
    std::vector<ir::Effect> inits;
    if (red.kind == Builtin::Max || red.kind == Builtin::Min) {
      // No item yet: the first one becomes the answer (an empty sequence leaves `seen`
      // false, and the result's step hands the statement to CPython, which raises).
      red.seen = hidden_state(base + ".seen");
      red.item = hidden_state(base + ".item");
      nest_.vars[(size_t)red.acc].scratch = true;
      inits.push_back(assignment(red.seen, bool_const(false, o), o));
    } else {
      inits.push_back(
          assignment(red.acc, step_call(callee, start ? std::vector<Expr>{start} : std::vector<Expr>{}, "init", o), o));
    }
    if (red.kind == Builtin::Sum) {
      // sum() from Python 3.12 on carries a compensation beside a float total (typing
      // decides whether it takes part, from the types and the Python version).
      red.comp = hidden_state(base + ".compensation");
      red.item = hidden_state(base + ".item");
      ir::ConstValue zero;
      zero.kind = ir::ConstValue::Kind::Float;
      inits.push_back(assignment(red.comp, ir::make_const(zero, o), o));
    }
    out.push_back(ir::make_seg(std::move(inits), red.resume, st.stmt_line));
    return red;
  }

  // The value of a reduction once its loop is done.
  Expr reduction_result(const Reduction& r, int o) {
    Expr result = ir::make_load(r.acc, o);
    if (r.kind == Builtin::Sum) result = step_call(r.callee, {result, ir::make_load(r.comp, o)}, "result", o);
    if (r.kind == Builtin::Max || r.kind == Builtin::Min)
      result = step_call(r.callee, {result, ir::make_load(r.seen, o)}, "result", o);
    return result;
  }

  // A hidden variable of a reduction, which the nest assigns.
  int hidden_state(const std::string& name) {
    int v = hidden_var(ir::Var::Storage::Temp, name);
    nest_.vars[(size_t)v].assigned = true;
    return v;
  }

  // A call of the reduction's callee that is one of the lifter's steps (ir.h: Call's name).
  static Expr step_call(const Expr& callee, std::vector<Expr> args, const char* step, int o) {
    auto e = std::make_shared<ir::ExprNode>(*ir::make_call(callee, std::move(args), {}, o));
    e->name = step;
    return e;
  }

  // One yield of a child: a step of its reduction.
  void reduce(Expr x, State& st, std::vector<Stmt>& out, const Instr& in) {
    if ((red_.kind == Builtin::Any || red_.kind == Builtin::All) && active_.size() != 1)
      fail("calls any() or all() on a generator expression with nested loops", in.line);
    flush(st, out);
    for (auto& s : reduction_step(red_, std::move(x), active_.back().ir_loop, in.line, org(in))) out.push_back(s);
  }

  // The statements of one step of reduction `red` on item `x`, in loop `ir_loop`: sum adds
  // (the steps typing turns into sum()'s addition); min and max keep the first item or a
  // better one; any and all set their answer and leave the loop at the first item that
  // decides it. Each is a statement of the consuming one (red.resume).
  std::vector<Stmt> reduction_step(const Reduction& red, Expr x, int ir_loop, int line, int o) {
    auto load = [&](int v) {
      nest_.vars[(size_t)v].read = true;
      return ir::make_load(v, o);
    };
    std::vector<Stmt> out;
    if (red.kind == Builtin::Any || red.kind == Builtin::All) {
      Expr cond = ir::make_truth(x, o);
      if (red.kind == Builtin::All) cond = ir::make_unary(ir::UnOp::Not, cond, o);
      Stmt then_s = ir::make_block({ir::make_seg({assignment(red.acc, bool_const(red.kind == Builtin::Any, o), o)},
                                                 red.resume, line),
                                    ir::make_break(ir_loop, line)});
      out.push_back(ir::make_if(cond, then_s, ir::make_block({}), red.resume, line));
      return out;
    }
    // item = x, in a statement of its own: the steps below read it twice or more.
    out.push_back(ir::make_seg({assignment(red.item, std::move(x), o)}, red.resume, line));
    const Expr item = load(red.item), acc = load(red.acc);
    if (red.kind == Builtin::Sum) {
      // Both from the old values: compensation = sum(total, compensation, item) and
      // total = sum(total, compensation, item), steps "compensation" and "total".
      std::vector<Expr> args{acc, load(red.comp), item};
      out.push_back(ir::make_seg({assignment(red.comp, step_call(red.callee, args, "compensation", o), o),
                                  assignment(red.acc, step_call(red.callee, args, "total", o), o)},
                                 red.resume, line));
      return out;
    }
    // min/max: the first item is the answer so far; a later one replaces it only if it
    // compares greater (max) or less (min) than it, as CPython's min_max does: ties and
    // NaNs keep the earlier one.
    const ir::Effect take = assignment(red.acc, item, o);
    Expr better = ir::make_compare(red.kind == Builtin::Max ? ir::CmpOp::GT : ir::CmpOp::LT, item, acc, o);
    Stmt replace = ir::make_if(ir::make_truth(better, o), ir::make_block({ir::make_seg({take}, red.resume, line)}),
                               ir::make_block({}), red.resume, line);
    Stmt first = ir::make_seg({take, assignment(red.seen, bool_const(true, o), o)}, red.resume, line);
    out.push_back(ir::make_if(ir::make_truth(load(red.seen), o), ir::make_block({replace}), ir::make_block({first}),
                              red.resume, line));
    return out;
  }

  // A variable that is not the frame's: the hidden position of a for loop, or a builtin.
  int hidden_var(ir::Var::Storage storage, const std::string& name) {
    int id = var_of(storage, -1, name);
    nest_.vars[(size_t)id].read = true;
    return id;
  }
  Expr builtin_call(const char* name, std::vector<Expr> args, int origin) {
    return ir::make_call(ir::make_load(hidden_var(ir::Var::Storage::Builtin, name), origin), std::move(args), {}, origin);
  }

  // `for x in S`, `for i, x in enumerate(S, c)`, `for a, b in zip(A, B)` as a loop over
  // range() whose body opens by assigning the items: x = S[k] (the position k is a
  // hidden variable; enumerate's own index is the loop variable). Indexing gives what the
  // iterator gives for the sequences type inference accepts (lists, tuples, arrays), and
  // the sequences stay the objects the loop started with: the body may not assign their
  // names.
  // A slice among the sequences is marked as a loop's (`for x in L[1:]`: read in place).
  Stmt desugar_for(SVal r, const Ctx& c, std::vector<Stmt> body, int ir_loop, int range_resume, int item_resume,
                   int line) {
    using Iter = ir::StmtNode::Iter;
    const int o = r.origin;
    for (auto& seq : r.over) seq = loop_sequence(seq);
    // `for a, b in ((0, 1), (1, 0))`: the items of a tuple constant unpacked are the
    // items of its columns, (0, 1) and (1, 0) here, each a tuple constant the loop indexes.
    std::vector<Expr> columns;
    const size_t top = c.top;  // names at the first level (0: the one name c.var)
    if (top == 0 && c.var < 0) fail("a for loop whose variable stagepy cannot follow", line);
    for (size_t k = 0; k < c.items.size(); k++) {
      if (c.items[k] == -1) fail("a for loop whose variable stagepy cannot follow", line);
      if (c.items[k] == -2 && k >= top) fail("unpacks a for loop's items more than two deep", line);
    }
    const bool nested = c.items.size() > top;
    if (r.form == Iter::Seq && top > 0) {
      if (nested) fail("unpacks the items of a sequence's items again (`for (a, b), c in S`)", line);
      if (constant_tuple(r.over[0])) {
        columns = constant_columns(r.over[0], top);
        if (columns.empty())
          fail("unpacks the items of a tuple constant that are not all tuples of " + std::to_string(top) + " numbers", line);
      }
    } else if (r.form == Iter::Enumerate) {
      if (top != 2 || c.items[0] < 0 || (r.zipped && (c.items[1] != -2 || c.sub_count[1] != (int)r.over.size())))
        fail(r.zipped ? "uses the items of enumerate(zip(...)) other than as `for i, (a, b) in enumerate(zip(A, B))`"
                      : "uses enumerate()'s items other than as `for i, x in enumerate(...)`",
             line);
    } else if (r.form == Iter::Zip && top != r.over.size()) {
      fail("uses zip()'s items other than by unpacking them into " + std::to_string(r.over.size()) + " names", line);
    }
    const int first_name = c.items.empty() ? c.var : *std::find_if(c.items.begin(), c.items.end(), [](int t) { return t >= 0; });
    int var;  // the loop's variable: a hidden position, or enumerate's index
    std::vector<Expr> range_args;
    std::vector<ir::Effect> items;
    // (A tuple constant's length is a number: loop bounds the analysis can use.)
    auto len = [&](const Expr& seq) {
      return constant_tuple(seq) ? int_const((int64_t)seq->args.size(), o) : builtin_call("len", {seq}, o);
    };
    auto assign = [&](int target, const Expr& value) {
      ir::Effect e;
      e.kind = ir::Effect::Kind::Assign;
      e.var = target;
      e.value = value;
      e.origin = o;
      nest_.vars[(size_t)target].assigned = true;
      items.push_back(e);
    };
    // Item `at` of `seq`: in range by construction: the loop runs over the sequences'
    // lengths, and their names keep their values (checked below). Codegen leaves a tuple's
    // check out.
    auto at_item = [&](const Expr& seq, const Expr& at) {
      auto sub = std::make_shared<ir::ExprNode>(*ir::make_subscript(seq, at, o));
      sub->in_domain = true;
      return Expr(sub);
    };
    // Entry k of the names gets `value`, or, unpacked again (`(x, y)`), its items: each
    // `value[j]`, which checks that `value` has exactly that many.
    auto place = [&](size_t k, const Expr& value) {
      if (c.items[k] >= 0) return assign(c.items[k], value);
      for (int j = 0; j < c.sub_count[k]; j++)
        assign(c.items[(size_t)(c.sub_first[k] + j)], ir::make_unpacked_item(value, j, c.sub_count[k], o));
    };
    // The item of a Seq loop at `pos`: to its one name, or unpacked (`for x, y in pts`).
    auto seq_item = [&](const Expr& pos) {
      if (c.items.empty()) return assign(c.var, at_item(r.over[0], pos));
      if (!columns.empty()) {
        for (size_t k = 0; k < c.items.size(); k++) assign(c.items[k], at_item(columns[k], pos));
        return;
      }
      const Expr row = at_item(r.over[0], pos);
      for (size_t k = 0; k < c.items.size(); k++)
        assign(c.items[k], ir::make_unpacked_item(row, (int)k, (int)c.items.size(), o));
    };
    auto position = [&]() {
      return hidden_var(ir::Var::Storage::Temp, "$" + nest_.vars[(size_t)first_name].name + ".position" + std::to_string(ir_loop));
    };
    if (r.form == Iter::Enumerate) {
      var = c.items[0];
      Expr n = len(r.over[0]);
      for (size_t k = 1; k < r.over.size(); k++) n = builtin_call("min", {n, len(r.over[k])}, o);
      range_args = r.start == 0 ? std::vector<Expr>{n}
                                : std::vector<Expr>{int_const(r.start, o), ir::make_binary(ir::BinOp::Add, int_const(r.start, o), n, false, o)};
      Expr i = ir::make_load(var, o);
      Expr pos = r.start == 0 ? i : ir::make_binary(ir::BinOp::Sub, i, int_const(r.start, o), false, o);
      if (r.zipped) {
        for (size_t k = 0; k < r.over.size(); k++) {
          const int t = c.items[(size_t)c.sub_first[1] + k];
          if (t < 0) fail("unpacks a for loop's items more than two deep", line);
          assign(t, at_item(r.over[k], pos));
        }
      } else {
        place(1, at_item(r.over[0], pos));
      }
    } else if (r.reversed) {
      // reversed(S): the position counts down from len(S) - 1 (the range its resume
      // points rebuild the iterator from: dispatch.cpp, iterators_for).
      var = position();
      range_args = {ir::make_binary(ir::BinOp::Sub, len(r.over[0]), int_const(1, o), false, o), int_const(-1, o), int_const(-1, o)};
      seq_item(ir::make_load(var, o));
    } else if (r.form == Iter::Seq) {
      var = position();
      range_args = {len(r.over[0])};
      seq_item(ir::make_load(var, o));
    } else {
      var = position();
      Expr n = len(r.over[0]);
      for (size_t k = 1; k < r.over.size(); k++) n = builtin_call("min", {n, len(r.over[k])}, o);
      range_args = {n};
      for (size_t k = 0; k < r.over.size(); k++) place(k, at_item(r.over[k], ir::make_load(var, o)));
    }
    std::vector<Stmt> full;
    full.push_back(ir::make_seg(std::move(items), item_resume, line));
    for (auto& b : body) full.push_back(std::move(b));
    Stmt block = ir::make_block(std::move(full));
    // The sequences are evaluated once, before the loop: their names must keep their values.
    std::set<int> assigned;
    ir::collect_assigned(block, &assigned);
    for (auto& seq : r.over)
      ir::walk_expr(seq, [&](const Expr& x) {
        if (x->kind == ir::ExprNode::Kind::Load && assigned.count(x->var))
          fail("assigns `" + nest_.vars[(size_t)x->var].name + "` inside a loop over " + show(seq), line);
      });
    Stmt f = ir::make_for(var, r.form == Iter::Seq ? nullptr : r.callee, std::move(range_args), std::move(block), ir_loop,
                          range_resume, line);
    auto m = std::make_shared<ir::StmtNode>(*f);
    m->iter = r.form;
    m->over = r.over;
    m->start = r.start;
    m->reversed_callee = r.reversed;
    m->zip_callee = r.zipped;
    return m;
  }

  // Lifts loop `l` (its header reached from outside); returns the block after it, or -1.
  int lift_loop(int l, State& st, std::vector<Stmt>& out) {
    const Loop& L = g_.loops[l];
    int ir_loop = (int)nest_.loops.size();
    ir::LoopInfo info;
    info.is_for = L.is_for;
    const Block& hb = g_.blocks[L.header];
    info.header_offset = code_.instrs[L.is_for ? hb.last - 1 : hb.first].offset;
    info.line = code_.instrs[L.is_for ? hb.last - 1 : hb.first].line;
    nest_.loops.push_back(info);
    std::vector<Stmt> body;
    int broke = -1;  // for ... else: a hidden flag, cleared before the loop and set by its breaks
    if (L.is_for) {
      if (st.stack.empty() || st.stack.back().k != SVal::K::RangeIter)
        fail("a for loop over something other than range()", info.line);
      if (!st.pending.empty()) fail("assigns inside a for statement's range() (:=)", info.line);
      SVal r = st.stack.back();
      st.stack.pop_back();
      int rp = resume(st);
      int for_line = st.stmt_line;
      if (L.else_exit >= 0) {
        broke = var_of(ir::Var::Storage::Temp, -1, "broke" + std::to_string(ir_loop));
        nest_.vars[(size_t)broke].assigned = nest_.vars[(size_t)broke].read = true;
        out.push_back(ir::make_seg({assignment(broke, bool_const(false, -1), -1)}, rp, for_line));
      }
      State inner = st;
      inner.stack.push_back(special(SVal::K::Iter, ir_loop));
      Ctx c{l, ir_loop, true, L.header, L.follow, (int)inner.stack.size()};
      c.header_offset = info.header_offset;
      c.else_exit = L.else_exit;
      c.broke = broke;
      inner.stack.push_back(special(SVal::K::Next, ir_loop));
      active_.push_back(c);
      lift_from(hb.succ[1], -1, inner, body, false);
      Ctx done = active_.back();
      if (r.form == ir::StmtNode::Iter::Range) {
        active_.pop_back();
        if (!done.items.empty())
          fail("unpacks the items of a for loop over a call (`for k, v in d.items()`: stagepy unpacks the items "
               "of enumerate() and zip() only)", info.line);
        if (done.var < 0) fail("a for loop whose variable stagepy cannot follow", info.line);
        if (r.args.empty() || r.args.size() > 3)
          fail("loops over a call with " + std::to_string(r.args.size()) +
                   " arguments (stagepy compiles for loops over range() with 1 to 3, over sequences, enumerate() and zip())",
               info.line);
        Stmt f = ir::make_for(done.var, r.callee, r.args, ir::make_block(std::move(body)), ir_loop, rp, for_line);
        if (r.reversed) {
          auto m = std::make_shared<ir::StmtNode>(*f);
          m->reversed_callee = r.reversed;
          f = m;
        }
        out.push_back(f);
      } else {
        // Resumes at the start of an iteration re-enter it: CPython's FOR_ITER takes the
        // current item again (the iterator is rebuilt on it).
        State at_header = inner;
        at_header.stmt_start = info.header_offset;
        at_header.stmt_reenter = true;
        at_header.stmt_line = for_line;
        int item_resume = resume(at_header);
        active_.pop_back();
        out.push_back(desugar_for(r, done, std::move(body), ir_loop, rp, item_resume, for_line));
        nest_.loops[(size_t)ir_loop].iter = r.form;
        nest_.loops[(size_t)ir_loop].over = r.over;
        nest_.loops[(size_t)ir_loop].backward = r.reversed != nullptr;
        nest_.loops[(size_t)ir_loop].start = r.start;
        std::string names;
        if (done.items.empty()) names = nest_.vars[(size_t)done.var].name;
        for (size_t k = 0; k < done.top; k++) {
          names += k ? ", " : "";
          if (done.items[k] >= 0) {
            names += nest_.vars[(size_t)done.items[k]].name;
            continue;
          }
          std::string inner;
          for (int j = 0; j < done.sub_count[k]; j++)
            inner += (j ? ", " : "") + nest_.vars[(size_t)done.items[(size_t)(done.sub_first[k] + j)]].name;
          names += "(" + inner + ")";
        }
        nest_.loops[(size_t)ir_loop].targets = names;
        nest_.loops[(size_t)ir_loop].zipped = r.zipped != nullptr;
      }
    } else {
      if ((int)st.stack.size() != base()) fail("a while loop inside an expression", info.line);
      flush(st, out);
      State inner = st;
      Ctx c{l, ir_loop, false, L.header, L.follow, base()};
      c.header_offset = info.header_offset;
      active_.push_back(c);
      lift_from(L.header, -1, inner, body, true);
      active_.pop_back();
      Stmt w = ir::make_while(ir::make_block(std::move(body)), ir_loop, info.line);
      int watched = -1;
      std::string why = while_exit_problem(w, nest_.vars, &watched);
      if (!why.empty()) fail(why, info.line);
      nest_.loops[(size_t)ir_loop].watched = watched;
      out.push_back(w);
    }
    st.shadow.clear();
    if (L.else_exit >= 0) {
      // The else clause, where no break set the flag; then on where the breaks go.
      std::vector<Stmt> clause;
      State at_clause = st;
      const bool falls = lift_from(L.follow, L.else_exit, st, clause, false);
      if (falls && (int)st.stack.size() != base()) fail("a for loop's else clause leaves values on the stack", info.line);
      if (!falls) st = at_clause;  // (the breaks' path goes on from the loop's state)
      State clause_start = at_clause;  // (the If's test cannot fail: a resume point all the same)
      clause_start.stmt_start = code_.instrs[(size_t)g_.blocks[(size_t)L.follow].first].offset;
      clause_start.stmt_reenter = false;
      clause_start.stmt_line = code_.instrs[(size_t)g_.blocks[(size_t)L.follow].first].line;
      int r = resume(clause_start);
      out.push_back(ir::make_if(ir::make_truth(load(broke, st, -1), -1), ir::make_block({}),
                                ir::make_block(std::move(clause)), r, info.line));
      return L.else_exit;
    }
    return L.follow == -1 ? -1 : L.follow;
  }
};

}  // namespace

std::optional<std::pair<ir::BinOp, bool>> binary_op_of(const std::string& sarg) {
  std::string s = sarg;
  bool inplace = s.size() >= 2 && s.back() == '=' && s != "==";
  if (inplace) s.pop_back();
  static const std::map<std::string, ir::BinOp> ops = {
      {"+", ir::BinOp::Add}, {"-", ir::BinOp::Sub}, {"*", ir::BinOp::Mul}, {"/", ir::BinOp::TrueDiv},
      {"//", ir::BinOp::FloorDiv}, {"%", ir::BinOp::Mod}, {"**", ir::BinOp::Pow}, {"<<", ir::BinOp::LShift},
      {">>", ir::BinOp::RShift}, {"&", ir::BinOp::And}, {"|", ir::BinOp::Or}, {"^", ir::BinOp::Xor},
      {"@", ir::BinOp::MatMul}};
  auto it = ops.find(s);
  if (it == ops.end()) return std::nullopt;
  return std::make_pair(it->second, inplace);
}

std::optional<ir::CmpOp> compare_op_of(const std::string& sarg) {
  static const std::map<std::string, ir::CmpOp> ops = {
      {"<", ir::CmpOp::LT}, {"<=", ir::CmpOp::LE}, {"==", ir::CmpOp::EQ},
      {"!=", ir::CmpOp::NE}, {">", ir::CmpOp::GT}, {">=", ir::CmpOp::GE}};
  auto it = ops.find(sarg);
  if (it == ops.end()) return std::nullopt;
  return it->second;
}

ir::Expr constant_expr(const Const& c, int origin) {
  ir::ConstValue v;
  switch (c.kind) {
    case Const::Kind::None: v.kind = ir::ConstValue::Kind::None; break;
    case Const::Kind::Bool: v.kind = ir::ConstValue::Kind::Bool; v.b = c.i != 0; break;
    case Const::Kind::Int: v.kind = ir::ConstValue::Kind::Int; v.i = c.i; break;
    case Const::Kind::Float: v.kind = ir::ConstValue::Kind::Float; v.f = c.f; break;
    case Const::Kind::Char: v.kind = ir::ConstValue::Kind::Char; v.i = c.i; break;
    case Const::Kind::Complex:
      v.kind = ir::ConstValue::Kind::Complex;
      v.f = c.f;
      v.f2 = c.f2;
      break;
    case Const::Kind::Tuple: {
      std::vector<ir::Expr> elems;
      for (auto& e : c.elems) {
        elems.push_back(constant_expr(e, origin));
        if (!elems.back()) return nullptr;
      }
      return ir::make_tuple(std::move(elems), origin);
    }
    case Const::Kind::FrozenSet: case Const::Kind::Code: case Const::Kind::Names: case Const::Kind::Other: return nullptr;
  }
  return ir::make_const(v, origin);
}

std::string unlifted_constant_reason(const Const& c) {
  if (c.kind == Const::Kind::Other && !c.names.empty()) return c.names[0];
  return "uses a constant of a type stagepy does not handle";
}

LiftResult lift_nest(const CodeInfo& code, const LoopSpec& spec) {
  LiftResult r;
  // A generator function's frames are never swapped (the hook leaves them to CPython): say
  // so, rather than what the lifter would trip over first (a yield's value on the stack).
  for (const Instr& in : code.instrs)
    if (in.op == Op::YIELD_VALUE) {
      r.ok = false;
      r.reason = "it is in a generator or a coroutine (a function that yields or awaits): its loops stay in CPython";
      return r;
    }
  try {
    Lifter lifter(code, spec);
    r.nest = append_targets(attribute_columns(bind_methods(bind_module_attributes(lifter.run()))));
    r.ok = true;
  } catch (const LiftError& e) {
    r.ok = false;
    r.reason = e.reason;
    r.reason_line = e.line;
  }
  return r;
}

namespace {
// A function whose returns all return one constant (a method's `return None`, which CPython
// 3.11+ copies to the end of each branch: `if a: ...` then `if b: x` ends in two): the same
// code with every return but the last a jump to the last one, so that the region has one exit
// and the branches meet again (lifted with several exits, the code after each branch is
// copied into it: twice per `if`). The code unchanged where the returns differ, or the last
// instruction is no return.
CodeInfo one_return(const CodeInfo& code) {
  const auto& in = code.instrs;
  if (in.empty() || !is_return(in.back().op)) return code;
  // The constant a return at `i` returns (its const index), or -1.
  auto constant_of = [&](size_t i) -> int {
    if (in[i].op == Op::RETURN_CONST) return in[i].iarg;
    if (in[i].op == Op::RETURN_VALUE && i > 0 && in[i - 1].op == Op::LOAD_CONST) return in[i - 1].iarg;
    return -1;
  };
  const int k = constant_of(in.size() - 1);
  if (k < 0) return code;
  // (A return inside a loop stays one: the loop's other exits are its own.)
  auto in_loop = [&](size_t i) {
    for (auto& j : in)
      if (j.target >= 0 && j.target <= in[i].offset && j.offset >= in[i].offset) return true;
    return false;
  };
  // (A RETURN_VALUE another path jumps to may return another value than the constant
  // before it: `return c and None`.)
  auto jumped_to = [&](size_t i) {
    for (auto& j : in)
      if (j.target == in[i].offset) return true;
    return false;
  };
  std::vector<size_t> others;
  for (size_t i = 0; i + 1 < in.size(); i++)
    if (is_return(in[i].op)) {
      if (constant_of(i) != k || in_loop(i) || (in[i].op == Op::RETURN_VALUE && jumped_to(i))) return code;
      others.push_back(i);
    }
  if (others.empty()) return code;
  CodeInfo out = code;
  // The last return's first instruction (its LOAD_CONST on 3.11).
  const int exit = in.back().op == Op::RETURN_CONST ? in.back().offset : in[in.size() - 2].offset;
  for (size_t i : others) {
    Instr& r = out.instrs[i];
    if (r.op == Op::RETURN_VALUE) out.instrs[i - 1].op = Op::NOP, out.instrs[i - 1].opname = "NOP";
    r.op = Op::JUMP_FORWARD;
    r.opname = "JUMP_FORWARD";
    r.target = exit;
  }
  return out;
}
}  // namespace

FunctionBody lift_function(const CodeInfo& code_in) {
  const CodeInfo code = one_return(code_in);
  FunctionBody fb;
  int ret = -1, returns = 0;
  for (size_t i = 0; i < code.instrs.size(); i++)
    if (is_return(code.instrs[i].op)) {
      returns++;
      ret = (int)i;
    }
  if (returns == 0 || code.instrs.empty()) {
    fb.reason = "it loops and never returns";
    return fb;
  }
  LoopSpec spec;
  spec.entry_offset = code.instrs[0].offset;
  spec.header_offset = spec.entry_offset;
  // One return, at the end: the region ends there, and its value is the result. Else the
  // whole code, each return assigning the return variable (structure_returns.h).
  // A return inside a loop (`while True: ... return m`) is one of the several kind.
  const bool several = returns > 1 || ret + 1 != (int)code.instrs.size();
  spec.function = true;
  spec.exit_offset = several ? -1 : code.instrs[(size_t)ret].offset;
  try {
    Lifter lifter(code, spec);
    lifter.run_function(fb, code.instrs[(size_t)ret], several);
    fb.ok = true;
  } catch (const LiftError& e) {
    fb.ok = false;
    fb.reason = "it loops, and its body " + e.reason;
  }
  return fb;
}

}  // namespace stagepy::analysis
