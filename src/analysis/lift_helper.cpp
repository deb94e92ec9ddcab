// See lift_helper.h.
#include "analysis/lift_helper.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>

#include "analysis/lift.h"
#include "ir/mutate.h"

namespace stagepy::analysis {
namespace {

using ir::Expr;
constexpr int O = ir::kInlinedOrigin;
constexpr int kBudget = 4000;  // instructions executed over all paths

struct Failure {
  std::string why;
};
[[noreturn]] void fail(const std::string& why) { throw Failure{why}; }
constexpr const char* kAssignsAttribute = "it assigns an attribute";
constexpr const char* kCallsForEffects = "it calls a function whose value it drops";
constexpr const char* kStoresIntoContainer = "it stores into a container";

class HelperLifter {
 public:
  HelperLifter(const CodeInfo& code, int nparams) : code_(code), nparams_(nparams) {
    // A superinstruction's halves share its offset: a jump lands on the first.
    for (size_t i = 0; i < code.instrs.size(); i++) index_of_.emplace(code.instrs[i].offset, i);
  }

  HelperBody run() {
    HelperBody out;
    out.nparams = nparams_;
    State st;
    for (int k = 0; k < nparams_; k++) st.locals[k] = ir::make_load(k, O);
    out.body = exec(0, st);
    out.globals = globals_;
    out.lines = std::move(lines_);
    out.ok = true;
    return out;
  }

 private:
  struct State {
    std::vector<Expr> stack;  // nullptr: the NULL of a function or method load
    std::map<int, Expr> locals;
    // Values this path computed before the return (assigned to locals, or dropped): their
    // errors must happen even where the returned value does not use them.
    std::vector<Expr> evaluated;
  };
  static bool trivial(const Expr& e) {
    return e->kind == ir::ExprNode::Kind::Load || e->kind == ir::ExprNode::Kind::Const;
  }
  static Expr returning(const State& st, Expr v) {
    if (st.evaluated.empty()) return v;
    std::vector<Expr> items = st.evaluated;
    items.push_back(std::move(v));
    return ir::make_seq(std::move(items), O);
  }
  const CodeInfo& code_;
  int nparams_;
  std::map<int, size_t> index_of_;
  std::vector<std::string> globals_;
  int budget_ = kBudget;
  std::map<const ir::ExprNode*, int> lines_;
  Expr at_line(Expr e, const Instr& in) {
    lines_[e.get()] = in.line;
    return e;
  }

  Expr pop(State& st) {
    if (st.stack.empty()) fail("its bytecode underflows the stack");
    Expr e = st.stack.back();
    st.stack.pop_back();
    if (!e) fail("it calls a method");
    return e;
  }
  void push_null_and(State& st, Expr e, bool null) {
    if (null && code_.version < 313) st.stack.push_back(nullptr);
    st.stack.push_back(std::move(e));
    if (null && code_.version >= 313) st.stack.push_back(nullptr);
  }
  int global(const std::string& name) {
    for (size_t k = 0; k < globals_.size(); k++)
      if (globals_[k] == name) return nparams_ + (int)k;
    globals_.push_back(name);
    return nparams_ + (int)globals_.size() - 1;
  }
  size_t target(const Instr& in) {
    if (in.target <= in.offset) fail("it loops");
    auto it = index_of_.find(in.target);
    if (it == index_of_.end()) fail("it jumps where stagepy cannot follow");
    return it->second;
  }
  Expr constant(const Const& c) {
    Expr e = constant_expr(c, O);
    if (!e) fail("it " + unlifted_constant_reason(c));
    return e;
  }
  Expr none() {
    ir::ConstValue v;
    return ir::make_const(v, O);
  }

  // Runs from instruction `pc` until every path returns; the value returned.
  Expr exec(size_t pc, State st) {
    while (true) {
      if (pc >= code_.instrs.size()) fail("it runs off its end");
      if (--budget_ < 0) fail("it is too large to inline");
      const Instr& in = code_.instrs[pc];
      switch (in.op) {
        case Op::NOP: case Op::NOT_TAKEN: break;
        case Op::LOAD_FAST: case Op::LOAD_FAST_CHECK: {
          auto it = st.locals.find(in.iarg);
          if (it == st.locals.end()) fail("it may read `" + in.sarg + "` before assigning it");
          st.stack.push_back(it->second);
          break;
        }
        case Op::STORE_FAST: {
          Expr v = pop(st);
          if (!trivial(v)) st.evaluated.push_back(v);
          st.locals[in.iarg] = v;
          break;
        }
        case Op::LOAD_CONST:
          if (in.iarg < 0 || in.iarg >= (int)code_.consts.size()) fail("bad constant index");
          st.stack.push_back(constant(code_.consts[(size_t)in.iarg]));
          break;
        case Op::LOAD_GLOBAL: push_null_and(st, ir::make_load(global(in.sarg), O), in.flags & 1); break;
        case Op::LOAD_ATTR: {
          Expr obj = pop(st);
          push_null_and(st, ir::make_attr(obj, in.sarg, O), in.flags & 1);
          break;
        }
        case Op::PUSH_NULL: st.stack.push_back(nullptr); break;
        case Op::BINARY_OP: {
          Expr b = pop(st), a = pop(st);
          auto op = binary_op_of(in.sarg);
          if (!op) fail("it uses the operator " + in.sarg);
          st.stack.push_back(at_line(ir::make_binary(op->first, a, b, op->second, O), in));
          break;
        }
        case Op::COMPARE_OP: {
          Expr b = pop(st), a = pop(st);
          auto op = compare_op_of(in.sarg);
          if (!op) fail("it uses the comparison " + in.sarg);
          Expr c = ir::make_compare(*op, a, b, O);
          if (in.flags & 2) c = ir::make_truth(c, O);
          st.stack.push_back(c);
          break;
        }
        case Op::IS_OP: {
          Expr b = pop(st), a = pop(st);
          st.stack.push_back(ir::make_compare(in.iarg ? ir::CmpOp::IsNot : ir::CmpOp::Is, a, b, O));
          break;
        }
        case Op::UNARY_NEGATIVE: st.stack.push_back(at_line(ir::make_unary(ir::UnOp::Neg, pop(st), O), in)); break;
        case Op::UNARY_POSITIVE: st.stack.push_back(at_line(ir::make_unary(ir::UnOp::Pos, pop(st), O), in)); break;
        case Op::UNARY_INVERT: st.stack.push_back(at_line(ir::make_unary(ir::UnOp::Invert, pop(st), O), in)); break;
        case Op::UNARY_NOT: st.stack.push_back(at_line(ir::make_unary(ir::UnOp::Not, pop(st), O), in)); break;
        case Op::CALL_INTRINSIC_1:
          if (in.sarg != "INTRINSIC_UNARY_POSITIVE") fail("it uses " + in.sarg);
          st.stack.push_back(ir::make_unary(ir::UnOp::Pos, pop(st), O));
          break;
        case Op::TO_BOOL: st.stack.push_back(ir::make_truth(pop(st), O)); break;
        case Op::CALL: {
          int n = in.iarg;
          std::vector<Expr> args((size_t)n);
          for (int i = n - 1; i >= 0; i--) args[(size_t)i] = pop(st);
          if (st.stack.size() < 2) fail("its bytecode underflows the stack");
          Expr b = st.stack.back();
          st.stack.pop_back();
          Expr a = st.stack.back();
          st.stack.pop_back();
          Expr callee = !a && b ? b : !b && a ? a : nullptr;
          if (!callee) fail("it calls a method");
          st.stack.push_back(ir::make_call(callee, std::move(args), {}, O));
          break;
        }
        case Op::BUILD_TUPLE: {
          std::vector<Expr> elems((size_t)in.iarg);
          for (int i = in.iarg - 1; i >= 0; i--) elems[(size_t)i] = pop(st);
          st.stack.push_back(ir::make_tuple(std::move(elems), O));
          break;
        }
        case Op::UNPACK_SEQUENCE: {
          Expr v = pop(st);
          if (v->kind == ir::ExprNode::Kind::Tuple) {
            if ((int)v->args.size() != in.iarg) fail("it unpacks a tuple into a different number of names");
            for (int i = in.iarg - 1; i >= 0; i--) st.stack.push_back(v->args[(size_t)i]);
            break;
          }
          // `a, b = other(x)`: the items of the value, each v[i] that checks v's length
          // (make_unpacked_item); a helper's tuple is evaluated whole and in order for each
          // item, as CPython does once: pure expressions, which LLVM shares.
          for (int i = in.iarg - 1; i >= 0; i--) st.stack.push_back(ir::make_unpacked_item(v, i, in.iarg, O));
          break;
        }
        case Op::COPY: {
          if (in.iarg < 1 || in.iarg > (int)st.stack.size()) fail("bad COPY");
          st.stack.push_back(st.stack[st.stack.size() - (size_t)in.iarg]);
          break;
        }
        case Op::SWAP: {
          if (in.iarg < 2 || in.iarg > (int)st.stack.size()) fail("bad SWAP");
          std::swap(st.stack.back(), st.stack[st.stack.size() - (size_t)in.iarg]);
          break;
        }
        case Op::POP_TOP: {
          // A value computed only to be dropped (an expression statement, the leftover of
          // a chained comparison): pure, but its errors still happen.
          if (st.stack.empty()) fail("its bytecode underflows the stack");
          Expr v = st.stack.back();
          st.stack.pop_back();
          // A call made for its effects (`self.move(dt)`, which may assign attributes): the
          // body's statements, each inlined as a statement of its own.
          if (v && v->kind == ir::ExprNode::Kind::Call) fail(kCallsForEffects);
          if (v && !trivial(v)) st.evaluated.push_back(v);
          break;
        }
        case Op::RETURN_VALUE: {
          Expr v = pop(st);
          return returning(st, v);
        }
        case Op::RETURN_CONST:
          if (in.iarg < 0 || in.iarg >= (int)code_.consts.size()) fail("bad constant index");
          return returning(st, constant(code_.consts[(size_t)in.iarg]));
        case Op::JUMP_FORWARD: case Op::JUMP: case Op::JUMP_NO_INTERRUPT:
          pc = target(in);
          continue;
        case Op::POP_JUMP_IF_FALSE: case Op::POP_JUMP_FORWARD_IF_FALSE:
        case Op::POP_JUMP_IF_TRUE: case Op::POP_JUMP_FORWARD_IF_TRUE:
        case Op::POP_JUMP_IF_NONE: case Op::POP_JUMP_FORWARD_IF_NONE:
        case Op::POP_JUMP_IF_NOT_NONE: case Op::POP_JUMP_FORWARD_IF_NOT_NONE: {
          Expr v = pop(st);
          size_t jump = target(in);
          bool on_true = in.op == Op::POP_JUMP_IF_TRUE || in.op == Op::POP_JUMP_FORWARD_IF_TRUE;
          bool on_none = in.op == Op::POP_JUMP_IF_NONE || in.op == Op::POP_JUMP_FORWARD_IF_NONE;
          bool on_not_none = in.op == Op::POP_JUMP_IF_NOT_NONE || in.op == Op::POP_JUMP_FORWARD_IF_NOT_NONE;
          Expr cond;  // true: the jump is taken
          if (on_none) cond = ir::make_compare(ir::CmpOp::Is, v, none(), O);
          else if (on_not_none) cond = ir::make_compare(ir::CmpOp::IsNot, v, none(), O);
          else cond = ir::make_truth(v, O);
          Expr taken = exec(jump, st), fall = exec(pc + 1, st);
          if (on_true || on_none || on_not_none) return ir::make_cond(cond, taken, fall, O);
          return ir::make_cond(cond, fall, taken, O);  // jump if false: the truth picks `fall`
        }
        case Op::JUMP_IF_FALSE_OR_POP: case Op::JUMP_IF_TRUE_OR_POP: {
          if (st.stack.empty()) fail("its bytecode underflows the stack");
          Expr v = st.stack.back();
          size_t jump = target(in);
          State popped = st;
          popped.stack.pop_back();
          Expr cond = ir::make_truth(v, O);
          if (in.op == Op::JUMP_IF_FALSE_OR_POP) return ir::make_cond(cond, exec(pc + 1, popped), exec(jump, st), O);
          return ir::make_cond(cond, exec(jump, st), exec(pc + 1, popped), O);
        }
        case Op::GET_ITER: case Op::FOR_ITER: case Op::JUMP_BACKWARD: case Op::JUMP_BACKWARD_NO_INTERRUPT:
        case Op::POP_JUMP_BACKWARD_IF_FALSE: case Op::POP_JUMP_BACKWARD_IF_TRUE:
        case Op::POP_JUMP_BACKWARD_IF_NONE: case Op::POP_JUMP_BACKWARD_IF_NOT_NONE:
          fail("it loops");
        case Op::BINARY_SUBSCR: {
          // An element (or row) of a container it was passed or reads as a global: the
          // caller's plan sees these reads in the inlined IR (plan_parallel), not in the
          // polyhedral model, which was built before the helper was known.
          Expr idx = pop(st), obj = pop(st);
          st.stack.push_back(at_line(ir::make_subscript(obj, idx, O), in));
          break;
        }
        case Op::BINARY_SLICE: case Op::BUILD_SLICE: fail("it takes a slice");
        case Op::STORE_SUBSCR: fail(kStoresIntoContainer);
        case Op::STORE_SLICE: fail("it stores into a slice");
        case Op::STORE_ATTR: fail(kAssignsAttribute);
        default:
          fail("it uses " + in.opname);
      }
      pc++;
    }
  }
};

// Definite assignment over a helper's statements: every call starts with its locals
// unbound, and where a read may find one so (`for i in range(n): pass` then `return i`, with
// n == 0) CPython raises UnboundLocalError. Inlined, a local is a Temp that keeps the value
// the previous call left, so such a helper is not inlined. The state: the locals assigned on
// every path to a point; `top` where no path reaches it (after break, continue, exit).
class DefiniteAssignment {
 public:
  DefiniteAssignment(const ir::Nest& n, int first_local) : n_(n), first_local_(first_local) {}

  // The first local a read may find unassigned, or -1.
  int run(const ir::Expr& result) {
    State st = stmt(n_.root, State{});
    if (!st.top) reads(result, st.must);
    return bad_;
  }

 private:
  struct State {
    std::set<int> must;
    bool top = false;
  };
  const ir::Nest& n_;
  const int first_local_;
  int bad_ = -1;
  std::map<int, std::vector<std::set<int>>> breaks_;  // loop -> the sets at its breaks

  static State meet(const State& a, const State& b) {
    if (a.top) return b;
    if (b.top) return a;
    State r;
    std::set_intersection(a.must.begin(), a.must.end(), b.must.begin(), b.must.end(),
                          std::inserter(r.must, r.must.begin()));
    return r;
  }
  void reads(const ir::Expr& e, const std::set<int>& must) {
    ir::walk_expr(e, [&](const ir::Expr& x) {
      // (The return variable of a body that returns from several places is set on every path
      // by construction, behind the flag that says it was: not something this follows.)
      if (bad_ < 0 && x->kind == ir::ExprNode::Kind::Load && x->var >= first_local_ && !must.count(x->var) &&
          !n_.vars[(size_t)x->var].scratch)
        bad_ = x->var;
    });
  }
  State stmt(const ir::Stmt& s, State st) {
    using SK = ir::StmtNode::Kind;
    switch (s->kind) {
      case SK::Block:
        for (auto& b : s->body) {
          if (st.top) break;
          st = stmt(b, st);
        }
        return st;
      case SK::Seg:
        for (auto& f : s->effects) {
          reads(f.base, st.must);
          reads(f.index, st.must);
          reads(f.value, st.must);
          if (f.kind == ir::Effect::Kind::Assign && f.var >= 0) st.must.insert(f.var);
        }
        return st;
      case SK::If:
        reads(s->cond, st.must);
        return meet(stmt(s->body[0], st), stmt(s->body[1], st));
      case SK::For: case SK::While: {
        for (auto& a : s->args) reads(a, st.must);
        for (auto& o : s->over) reads(o, st.must);
        State in = st;
        if (s->kind == SK::For && s->var >= 0) in.must.insert(s->var);
        stmt(s->body[0], in);
        // After a for loop: what held before it (it may not run). After a while loop, left
        // by its breaks only: what held at every break.
        if (s->kind == SK::For) return st;
        State out;
        out.top = true;
        for (auto& b : breaks_[s->loop]) {
          State x;
          x.must = b;
          out = meet(out, x);
        }
        return out;
      }
      case SK::Break:
        breaks_[s->loop].push_back(st.must);
        return State{{}, true};
      case SK::Continue: case SK::Exit:
        return State{{}, true};
      default:
        return st;
    }
  }
};

// A helper that loops: lift_function's statements with the variables renumbered as an
// expression body's are (parameters, globals, then locals).
HelperBody statement_helper(const CodeInfo& code, int nparams) {
  HelperBody h;
  h.nparams = nparams;
  FunctionBody fb = lift_function(code);
  if (!fb.ok) {
    h.reason = fb.reason;
    return h;
  }
  const std::vector<ir::Var>& vars = fb.nest.vars;
  std::vector<int> renum(vars.size(), -1);
  std::vector<size_t> locals;
  for (size_t v = 0; v < vars.size(); v++) {
    const ir::Var& x = vars[v];
    if (x.storage == ir::Var::Storage::Fast && x.index >= 0 && x.index < nparams) {
      renum[v] = x.index;
    } else if (x.storage == ir::Var::Storage::Global || x.storage == ir::Var::Storage::Builtin) {
      renum[v] = nparams + (int)h.globals.size();
      h.globals.push_back(x.name);
      h.builtin.push_back(x.storage == ir::Var::Storage::Builtin);
    } else if (x.storage == ir::Var::Storage::Fast || x.storage == ir::Var::Storage::Temp) {
      locals.push_back(v);
    } else {
      h.reason = "it loops, and uses `" + x.name + "` (a variable of an enclosing scope or a name)";
      return h;
    }
  }
  auto nest = std::make_shared<ir::Nest>(fb.nest);
  nest->vars.assign((size_t)nparams + h.globals.size(), ir::Var{});
  for (int k = 0; k < nparams; k++) nest->vars[(size_t)k].name = "param" + std::to_string(k);
  for (size_t v = 0; v < vars.size(); v++)
    if (renum[v] >= 0) nest->vars[(size_t)renum[v]] = vars[v];
  for (size_t v : locals) {
    renum[v] = (int)nest->vars.size();
    nest->vars.push_back(vars[v]);
  }
  auto load = [&](const Expr& e) -> Expr {
    if (e->kind != ir::ExprNode::Kind::Load || e->var < 0) return e;
    auto c = std::make_shared<ir::ExprNode>(*e);
    c->var = renum[(size_t)e->var];
    return c;
  };
  ir::Stmt root = ir::map_exprs(fb.nest.root, load);
  nest->root = ir::map_stmts(root, [&](ir::StmtNode& x) {
    for (auto& f : x.effects)
      if (f.var >= 0) f.var = renum[(size_t)f.var];
    if (x.var >= 0 && (x.kind == ir::StmtNode::Kind::For)) x.var = renum[(size_t)x.var];
  });
  h.body = ir::map_expr(fb.result, load);
  const int unassigned = DefiniteAssignment(*nest, nparams + (int)h.globals.size()).run(h.body);
  if (unassigned >= 0) {
    h.reason = "it loops, and may read `" + nest->vars[(size_t)unassigned].name +
               "` where no assignment reached it (CPython raises UnboundLocalError there)";
    return h;
  }
  for (auto& in : code.instrs) h.origin_lines.emplace(in.offset, in.line);
  h.statements = std::move(nest);
  h.ok = true;
  return h;
}

}  // namespace

HelperBody lift_helper(const CodeInfo& code, int nparams, bool loops) {
  try {
    return HelperLifter(code, nparams).run();
  } catch (const Failure& f) {
    // (One that loops, or assigns attributes of objects it is passed: its statements.)
    if (loops && (f.why == "it loops" || f.why == kAssignsAttribute || f.why == kCallsForEffects ||
                  f.why == kStoresIntoContainer))
      return statement_helper(code, nparams);
    HelperBody h;
    h.reason = f.why;
    return h;
  }
}

}  // namespace stagepy::analysis
