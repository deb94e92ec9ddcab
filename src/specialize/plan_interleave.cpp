// See plan_interleave.h.
#include "specialize/plan_interleave.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "ir/mutate.h"

namespace stagepy::specialize {
namespace {

using ir::Expr;
using ir::ExprNode;
using ir::Stmt;
using ir::StmtNode;
using EK = ExprNode::Kind;
using SK = StmtNode::Kind;
using ir::contains_loop;
using ir::reads_var;

bool is_float(const TypeRef& t) {
  if (!t) return false;
  if (t->kind == Type::Kind::Union) {
    for (auto& m : t->elems)
      if (!is_float(m)) return false;
    return !t->elems.empty();
  }
  return t->kind == Type::Kind::PyFloat || (t->kind == Type::Kind::NpScalar && dtype_is_float(t->dtype));
}

// Checks the leading part F of one loop's body (plan_interleave.h) statement by statement.
class FastPart {
 public:
  FastPart(const std::set<int>& body_assigns) : vj_(body_assigns) {}

  std::set<int> assigned;  // variables F's statements assign
  std::set<int> loop_vars; // variables of F's loops
  bool recurrence = false; // a float variable updated from itself in one of F's loops

  // A statement at F's top level; D: the variables assigned on every way so far.
  bool top(const Stmt& s, std::set<int>& D) {
    switch (s->kind) {
      case SK::Block:
        for (auto& b : s->body)
          if (!top(b, D)) return false;
        return true;
      case SK::Seg:
        return simple(s, D, -1, false) == 1;
      case SK::If:
        if (s->cond->kind == EK::LoopNonEmpty) {
          // Typing's guard around a peeled loop: the same for every lane.
          std::set<int> a = D, b = D;
          return top(s->body[0], a) && top(s->body[1], b);
        }
        return !contains_loop(s) && simple(s, D, -1, false) == 1;
      case SK::Range:
        return shared(s->args);
      case SK::For:
        return loop(s, D);
      default:
        return false;
    }
  }

 private:
  const std::set<int>& vj_;

  // range() arguments all lanes share: reading nothing J's body assigns but F's loop
  // variables (the same in every lane).
  bool shared(const std::vector<Expr>& args) const {
    for (auto& a : args)
      if (!reads_ok(a, loop_vars)) return false;
    return true;
  }

  // One of F's For loops. Its body is simple (no loop), or, around loops of its own (a
  // 3x3 window's `for di: for dj:`), a sequence whose only continue is its last statement:
  // codegen then runs each statement for all lanes in turn, and a lane could not skip the
  // rest of an iteration alone. The loop may run no iteration: D is unchanged.
  bool loop(const Stmt& s, const std::set<int>& D) {
    if (!shared(s->args)) return false;
    loop_vars.insert(s->var);
    std::set<int> inner = D;
    inner.insert(s->var);
    for (int b = s->peeled ? 1 : 0; b >= 0; b--) {
      std::set<int> in = inner;
      if (!contains_loop(s->body[(size_t)b])) {
        if (simple(s->body[(size_t)b], in, s->loop, true) < 0) return false;
        continue;
      }
      const std::vector<Stmt> xs = ir::flatten_blocks(s->body[(size_t)b]);
      for (size_t k = 0; k < xs.size(); k++) {
        if (xs[k]->kind == SK::Continue && xs[k]->loop == s->loop && k + 1 == xs.size()) break;
        if (!around(xs[k], in)) return false;
      }
    }
    return true;
  }

  // One statement of a loop body that holds loops: a range(), a loop, typing's guard around
  // a peeled loop (each side such statements), or a simple statement with no continue.
  bool around(const Stmt& x, std::set<int>& D) {
    if (x->kind == SK::Range) return shared(x->args);
    if (x->kind == SK::For) return loop(x, D);
    if (x->kind == SK::If && x->cond->kind == EK::LoopNonEmpty) {
      for (auto& side : x->body) {
        std::set<int> d = D;
        for (auto& y : ir::flatten_blocks(side))
          if (!around(y, d)) return false;
      }
      return true;
    }
    return !contains_loop(x) && simple(x, D, -1, true) == 1;
  }

  // Reads only variables the body does not assign, or that this iteration already did.
  bool reads_ok(const Expr& e, const std::set<int>& D) const {
    bool ok = true;
    ir::walk_expr(e, [&](const Expr& x) {
      if (x->kind == EK::Load && vj_.count(x->var) && !D.count(x->var)) ok = false;
    });
    return ok;
  }

  // A statement without loops: a loop body's (`inner`: that loop's id) or F's own. Returns
  // -1 where F cannot hold it, 0 where no way falls through it (continue), else 1.
  int simple(const Stmt& s, std::set<int>& D, int inner, bool in_loop) {
    switch (s->kind) {
      case SK::Block:
        for (auto& b : s->body) {
          int r = simple(b, D, inner, in_loop);
          if (r <= 0) return r;
        }
        return 1;
      case SK::Seg:
        for (auto& f : s->effects) {
          if (f.kind == ir::Effect::Kind::Store || ir::changes_lists(f)) return -1;
          // An array kept in a variable: each lane would need buffers of its own.
          if (f.kind == ir::Effect::Kind::Assign && f.value->type && f.value->type->kind == Type::Kind::Array) return -1;
          if (!reads_ok(f.base, D) || !reads_ok(f.index, D) || !reads_ok(f.value, D)) return -1;
        }
        for (auto& f : s->effects) {
          if (f.kind != ir::Effect::Kind::Assign) continue;
          assigned.insert(f.var);
          if (in_loop && is_float(f.value->type) && reads_var(f.value, f.var)) recurrence = true;
          D.insert(f.var);
        }
        return 1;
      case SK::If: {
        if (s->cond->kind == EK::LoopNonEmpty || !reads_ok(s->cond, D)) return -1;
        std::set<int> a = D, b = D;
        int ra = simple(s->body[0], a, inner, in_loop), rb = simple(s->body[1], b, inner, in_loop);
        if (ra < 0 || rb < 0) return -1;
        if (ra && rb) {
          std::set<int> both;
          for (int v : a)
            if (b.count(v)) both.insert(v);
          D = both;
        } else if (ra) {
          D = a;
        } else if (rb) {
          D = b;
        }
        return ra || rb ? 1 : 0;
      }
      case SK::Continue:
        return inner >= 0 && s->loop == inner ? 0 : -1;
      default:
        return -1;
    }
  }
};

// How the lanes' elements lie in memory wherever F's loops subscript an array with J's
// variable. Side by side: only in the last position, as `j + c`, of arrays whose last
// dimension is contiguous, with J stepping by 1 or -1; then the lanes' loads are vector
// loads. Rows: a row per lane (`A[j, k]`, `A[j][k]`), each lane streaming its own, in loops
// whose runs all have fewer than 512 iterations: the lanes' rows stay in the cache (gemm
// A·Bᵀ at 200: 4 lanes 2.7x faster than one row after the other); long rows run together
// were measured slower (8 rows of 250K elements: 3.0 ms against 1.7). Else neither.
enum class Lanes { Neither, SideBySide, Rows };
Lanes lanes_layout(const std::vector<Stmt>& fast, int jvar, const Expr& step, const ParallelPlan& plan) {
  if (step && !(step->kind == EK::Const && step->value.kind == ir::ConstValue::Kind::Int &&
                (step->value.i == 1 || step->value.i == -1)))
    return Lanes::Neither;
  bool side = true, rows = true;
  for (auto& x : fast)
    ir::for_each_stmt(x, [&](const Stmt& loop) {
      if (loop->kind != SK::For) return;
      const bool short_runs = plan.loops[(size_t)loop->loop].few_iterations;
      for (auto& body : loop->body)
        ir::for_each_expr(body, [&](const Expr& e) {
          if (e->kind != EK::Subscript || !reads_var(e->args[1], jvar)) return;
          const TypeRef& t = e->args[0]->type;
          const bool contiguous = t && t->kind == Type::Kind::Array &&
                                  (t->layout == Type::CContig || (t->ndim == 1 && t->layout == Type::FContig));
          const Expr& index = e->args[1];
          const size_t n = index->kind == EK::Tuple ? index->args.size() : 1;
          for (size_t p = 0; p < n; p++) {
            const Expr& at = index->kind == EK::Tuple ? index->args[p] : index;
            if (!reads_var(at, jvar)) continue;
            if (p + 1 != n || !contiguous || !ir::var_plus_offset(at, jvar)) side = false;
            if (!short_runs || !ir::var_plus_offset(at, jvar)) rows = false;
          }
        });
    });
  return side ? Lanes::SideBySide : rows ? Lanes::Rows : Lanes::Neither;
}

// Expression nodes of F (its loops' bodies once): the size of one lane's copy.
size_t size_of(const std::vector<Stmt>& xs, size_t n) {
  size_t ops = 0;
  for (size_t k = 0; k < n; k++) ir::for_each_expr(xs[k], [&](const Expr&) { ops++; });
  return ops;
}

// ------------------------------------------------------------ promoted elements
// An array element only F touches in each iteration (`C[i, j]` in `C[i, j] = 0.0; for k:
// C[i, j] += A[i, k] * B[k, j]`) becomes a Temp variable in F: F then stores nothing and
// its update is a recurrence like `acc += ...`. Each lane reads its element before F and
// stores it back just before the rest of its iteration, so everything after F sees memory
// as CPython leaves it (the other lanes' elements are theirs alone: J's iterations are
// independent, and codegen runs blocks only where the arrays plan_parallel pairs share no
// memory, which pairs the element's array with every other array J's body touches).
struct Element {
  int root = -1;          // the array variable
  Expr base, index;       // the element: base[index]
  TypeRef type;           // what reading it gives
  int origin = -1;        // an access at F's top level: its index facts prove the element's
  int line = 0, resume = -1;
  int var = -1;           // the Temp variable standing for it
  int loop = -1;          // with no use at F's top level: the loop of F holding them all,
                          // whose body starts with one (read first only if it runs)
};

bool is_element(const Element& el, const Expr& base, const Expr& index) {
  return ir::same_pure_expr(base, el.base) && ir::same_pure_expr(index, el.index);
}

class Elements {
 public:
  Elements(const std::vector<Stmt>& fast, const std::set<int>& vj, int jvar) : fast_(fast), vj_(vj), jvar_(jvar) {}

  // The elements F stores that can be promoted; empty if F stores anything else.
  std::vector<Element> find() {
    std::map<int, Element> cand;
    std::set<int> bad;
    for (auto& x : fast_)
      ir::for_each_stmt(x, [&](const Stmt& s) {
        for (auto& f : s->effects) {
          if (f.kind != ir::Effect::Kind::Store) continue;
          const int r = f.part >= 0 ? -1 : ir::root_var(f.base);
          if (r < 0) {
            bad.insert(-1);
            continue;
          }
          auto it = cand.find(r);
          if (it == cand.end()) {
            Element el;
            el.root = r;
            el.base = f.base;
            el.index = f.index;
            cand[r] = el;
          } else if (!is_element(it->second, f.base, f.index)) {
            bad.insert(r);
          }
        }
      });
    std::vector<Element> out;
    if (bad.count(-1)) return out;
    for (auto& [r, el] : cand) {
      if (bad.count(r) || !promotable(el)) return {};
      out.push_back(el);
    }
    return out;
  }

 private:
  const std::vector<Stmt>& fast_;
  const std::set<int>& vj_;
  const int jvar_;

  // Reads only variables J's body does not assign, or J's own.
  bool fixed(const Expr& e) const {
    bool ok = ir::same_pure_expr(e, e);  // no call, nothing the comparison does not know
    ir::walk_expr(e, [&](const Expr& x) {
      if (x->kind == EK::Load && x->var != jvar_ && vj_.count(x->var)) ok = false;
    });
    return ok;
  }

  // Every use of el.root in `e` is the element itself (counted in `n`) or its shape.
  bool uses_ok(const Expr& e, const Element& el, int* n) const {
    if (!e) return true;
    if (e->kind == EK::Subscript && ir::root_var(e) == el.root) {
      if (!is_element(el, e->args[0], e->args[1]) || !types::same(e->type, el.type)) return false;
      ++*n;
      return true;
    }
    if (e->kind == EK::Attr && !e->args.empty() && ir::root_var(e->args[0]) == el.root)
      return e->name == "shape" || e->name == "ndim" || e->name == "size";
    if ((e->kind == EK::Load && e->var == el.root) || (e->kind == EK::Attr && e->pseudo == el.root)) return false;
    for (auto& a : e->args)
      if (!uses_ok(a, el, n)) return false;
    return true;
  }

  // Uses of the element in statement s (and the statements in it); false on any other use
  // of its array.
  bool stmt_ok(const Stmt& s, const Element& el, int* n) const {
    for (auto& f : s->effects) {
      if (f.kind == ir::Effect::Kind::Store && ir::root_var(f.base) == el.root) {
        if (!is_element(el, f.base, f.index) || !storable(f.value, el)) return false;
        ++*n;
      } else if (!uses_ok(f.base, el, n) || !uses_ok(f.index, el, n)) {
        return false;
      }
      if (!uses_ok(f.value, el, n)) return false;
    }
    if (!uses_ok(s->cond, el, n) || !uses_ok(s->range_callee, el, n)) return false;
    for (auto& a : s->args)
      if (!uses_ok(a, el, n)) return false;
    for (auto& b : s->body)
      if (!stmt_ok(b, el, n)) return false;
    return true;
  }

  // A value whose store and read back give the same value, of the element's type: a
  // Python float into a float64 element (a float32 one rounds it).
  static bool storable(const Expr& v, const Element& el) {
    if (types::same(v->type, el.type)) return true;
    return el.type->kind == Type::Kind::NpScalar && el.type->dtype == DType::Float64 && v->type &&
           v->type->kind == Type::Kind::PyFloat;
  }

  bool promotable(Element& el) const {
    const TypeRef& bt = el.base->type;
    if (!bt || bt->kind != Type::Kind::Array || !dtype_is_float(bt->dtype)) return false;
    const size_t nidx = el.index->type && el.index->type->kind == Type::Kind::Tuple ? el.index->type->elems.size() : 1;
    if ((int)nidx != bt->ndim) return false;  // an element, not a row
    if (bt->py_items()) {
      if (bt->dtype != DType::Float64) return false;  // a float32 buffer's item reads back rounded
      if (bt->tagged) return false;                   // its type is the element's tag's
      el.type = types::py_float();
    } else {
      el.type = types::np_scalar(bt->dtype);
    }
    if (!fixed(el.base) || !fixed(el.index)) return false;
    // Every use in F is the element, and F's first top-level statement that uses it gives
    // el.origin: every iteration touches the element, and that access's facts (or its
    // check, which makes codegen give the interleaving up) cover reading it first.
    bool top = false;
    std::vector<Stmt> holders;  // F's top-level statements that use it
    for (auto& x : fast_) {
      int n = 0;
      if (!stmt_ok(x, el, &n)) return false;
      if (n > 0) holders.push_back(x);
      if (x->kind != SK::Seg || n == 0 || top) continue;
      top = true;
      take_origin(x, &el);
    }
    if (el.origin >= 0) return true;
    // `for k: C[i, j] += ...` (gemm written i-j-k): all uses in one loop of F whose body
    // starts with one. If the loop runs, its first iteration touches the element first
    // thing, and that access's facts cover reading it before the loop; if it does not run,
    // the element is neither read nor stored (codegen's LoopNonEmpty guards, plan_loop).
    if (holders.size() != 1 || holders[0]->kind != SK::For || holders[0]->peeled) return false;
    const std::vector<Stmt> body = ir::flatten_blocks(holders[0]->body[0]);
    int n = 0;
    if (body.empty() || body[0]->kind != SK::Seg || !stmt_ok(body[0], el, &n) || n == 0) return false;
    take_origin(body[0], &el);
    el.loop = holders[0]->loop;
    return el.origin >= 0;
  }

  // The first access of el's array in Seg x (the store, else a read) gives el its origin.
  static void take_origin(const Stmt& x, Element* el) {
    for (auto& f : x->effects) {
      if (f.kind == ir::Effect::Kind::Store && ir::root_var(f.base) == el->root) el->origin = f.origin;
      ir::walk_expr(f.value, [&](const Expr& e) {
        if (el->origin < 0 && e->kind == EK::Subscript && ir::root_var(e) == el->root) el->origin = e->origin;
      });
      if (el->origin >= 0) break;
    }
    el->line = x->line;
    el->resume = x->resume;
  }
};

Expr typed_load(int var, const TypeRef& t, int origin) {
  auto e = std::make_shared<ExprNode>(*ir::make_load(var, origin));
  e->type = t;
  return e;
}

// F's statement s with each element as its variable.
Stmt promote(const Stmt& s, const std::vector<Element>& els) {
  auto match = [&](const Expr& base, const Expr& index) -> const Element* {
    for (auto& el : els)
      if (is_element(el, base, index)) return &el;
    return nullptr;
  };
  const ir::ExprFn reads = [&](const Expr& e) -> Expr {
    if (e->kind != EK::Subscript) return e;
    const Element* el = match(e->args[0], e->args[1]);
    return el ? typed_load(el->var, el->type, e->origin) : e;
  };
  auto c = std::make_shared<StmtNode>(*s);
  for (auto& b : c->body) b = promote(b, els);
  for (auto& f : c->effects) {
    const Element* el = f.kind == ir::Effect::Kind::Store ? match(f.base, f.index) : nullptr;
    f.value = ir::map_expr(f.value, reads);
    if (el) {
      f.kind = ir::Effect::Kind::Assign;
      f.var = el->var;
      f.base = f.index = nullptr;
      if (!types::same(f.value->type, el->type)) f.value = ir::make_as_type(f.value, el->type);
    } else {
      f.base = ir::map_expr(f.base, reads);
      f.index = ir::map_expr(f.index, reads);
    }
  }
  c->cond = ir::map_expr(c->cond, reads);
  for (auto& a : c->args) a = ir::map_expr(a, reads);
  c->range_callee = ir::map_expr(c->range_callee, reads);
  return c;
}

// The variables a plan adds to the nest (Temp variables for promoted elements).
class NewVars {
 public:
  NewVars(TypedNest* tn, std::vector<TypeRef>* entry) : tn_(tn), entry_(entry) {}
  int add(const std::string& name, const TypeRef& t) {
    ir::Var v;
    v.name = name;
    v.storage = ir::Var::Storage::Temp;
    v.assigned = true;
    v.read = true;
    tn_->nest.vars.push_back(v);
    entry_->push_back(types::unbound());
    if (tn_->tag_of(t) < 0) tn_->tags.push_back(t);
    return (int)tn_->nest.vars.size() - 1;
  }
  void drop_since(size_t n) {
    tn_->nest.vars.resize(n);
    entry_->resize(n);
  }
  size_t count() const { return tn_->nest.vars.size(); }
  std::string name(int v) const { return tn_->nest.vars[(size_t)v].name; }

 private:
  TypedNest* tn_;
  std::vector<TypeRef>* entry_;
};

Interleave plan_loop(const Stmt& J, const Expr& step, NewVars& nv, const ParallelPlan& plan) {
  Interleave il;
  const std::vector<Stmt> xs = ir::flatten_blocks(J->body[0]);
  size_t f = 0;
  for (size_t k = 0; k < xs.size(); k++)
    if (contains_loop(xs[k])) f = k + 1;
  if (f == 0) return il;
  std::set<int> vj;
  ir::collect_assigned(J->body[0], &vj);
  vj.insert(J->var);
  // F, with the elements it alone stores promoted to variables (read first).
  std::vector<Stmt> fast(xs.begin(), xs.begin() + (long)f);
  const size_t vars0 = nv.count();
  std::vector<Element> els = Elements(fast, vj, J->var).find();
  std::vector<Stmt> writeback;
  if (!els.empty()) {
    std::vector<Stmt> promoted;
    std::map<int, std::vector<Stmt>> loop_reads;  // F's loop -> reads of its elements
    for (auto& el : els) {
      el.var = nv.add("$" + nv.name(el.root) + ".element", el.type);
      auto read = std::make_shared<ExprNode>(*ir::make_subscript(el.base, el.index, el.origin));
      read->type = el.type;
      ir::Effect a;
      a.kind = ir::Effect::Kind::Assign;
      a.var = el.var;
      a.value = read;
      a.origin = el.origin;
      Stmt rd = ir::make_seg({a}, el.resume, el.line);
      if (el.loop >= 0) loop_reads[el.loop].push_back(rd);
      else promoted.push_back(rd);
      Expr now = typed_load(el.var, el.type, el.origin);
      ir::Effect w;
      w.kind = ir::Effect::Kind::Store;
      w.base = el.base;
      w.index = el.index;
      w.value = now;
      w.origin = el.origin;
      Stmt wb = ir::make_seg({w}, el.resume, el.line);
      // (The lanes share the loop's range(): its trip count is still there.)
      if (el.loop >= 0)
        wb = ir::make_if(ir::make_loop_nonempty(el.loop), wb, ir::make_block({}), el.resume, el.line);
      writeback.push_back(wb);
    }
    for (auto& x : fast) {
      Stmt p = promote(x, els);
      auto rd = x->kind == SK::For ? loop_reads.find(x->loop) : loop_reads.end();
      if (rd != loop_reads.end()) {
        std::vector<Stmt> then = rd->second;
        then.push_back(p);
        p = ir::make_if(ir::make_loop_nonempty(x->loop), ir::make_block(then), ir::make_block({}), x->resume, x->line);
      }
      promoted.push_back(p);
    }
    fast = std::move(promoted);
  }
  auto no = [&] {
    nv.drop_since(vars0);
    return Interleave{};
  };
  FastPart fp(vj);
  std::set<int> D = {J->var};
  for (auto& x : fast)
    if (!fp.top(x, D)) return no();
  if (!fp.recurrence || fp.assigned.count(J->var)) return no();
  const Lanes layout = lanes_layout(fast, J->var, step, plan);
  if (layout == Lanes::Neither) return no();
  for (int v : fp.loop_vars)
    if (fp.assigned.count(v)) return no();
  std::set<int> rest;
  for (size_t k = f; k < xs.size(); k++) ir::collect_assigned(xs[k], &rest);
  std::vector<int> seeded;
  for (int v : fp.assigned)
    if (!D.count(v)) seeded.push_back(v);
  for (int v : seeded)
    if (rest.count(v)) return no();
  for (int v : fp.loop_vars)
    if (rest.count(v)) return no();
  // Each lane's copy of F is generated: keep the code small. Where F is small, as many
  // lanes as keep 32 values in the lanes' copies of its variables (a gemm's one `acc`: 32
  // lanes, eight 4-wide chains of adds, each row of B loaded once per 32 columns; measured
  // 2-3x faster than 8 lanes from 250x250 up), then blocks of 8 for what is left (a loop of
  // fewer than 32 iterations would otherwise run all of them one by one).
  const size_t ops = size_of(fast, fast.size());
  const size_t vars = std::max<size_t>(1, fp.assigned.size());
  // (Loops over a few constant offsets, a window's `for d in (-1, 0, 1)`, have short
  // recurrences and read memory more than they add: 8 lanes were as fast there.)
  bool ranges = true;
  for (auto& x : fast)
    ir::for_each_stmt(x, [&](const Stmt& l) {
      if (l->kind == SK::For && l->iter != StmtNode::Iter::Range) ranges = false;
    });
  if (ops <= 32 && !ranges) {
    il.lanes = 8;
  } else if (ops <= 32) {
    il.lanes = vars == 1 ? 32 : vars == 2 ? 16 : 8;
    il.then_lanes = il.lanes > 8 ? 8 : 0;
  } else if (ops <= 96) {
    il.lanes = 4;
  }
  if (layout == Lanes::Rows && il.lanes > 8) il.lanes = 8, il.then_lanes = 0;  // (a row each: few)
  if (il.lanes == 0) return no();
  il.fast = f;
  il.lane_vars.assign(fp.assigned.begin(), fp.assigned.end());
  il.seeded = seeded;
  il.fast_body = std::move(fast);
  il.writeback = std::move(writeback);
  return il;
}

}  // namespace

void plan_interleave(TypedNest* tn, std::vector<TypeRef>* entry, ParallelPlan* plan) {
  NewVars nv(tn, entry);
  // Each loop's range() arguments: on its For, or (typed IR) on the Range before it.
  std::map<int, std::vector<Expr>> range_args;
  ir::for_each_stmt(tn->nest.root, [&](const Stmt& s) {
    if (s->kind == StmtNode::Kind::Range || (s->kind == StmtNode::Kind::For && !s->args.empty()))
      range_args[s->loop] = s->args;
  });
  const Stmt root = tn->nest.root;  // the statements stay; only variables are added
  ir::for_each_stmt(root, [&](const Stmt& s) {
    if (s->kind != StmtNode::Kind::For) return;
    LoopPlan& lp = plan->loops[(size_t)s->loop];
    const std::vector<Expr>& args = range_args[s->loop];
    if (lp.independent) lp.interleave = plan_loop(s, args.size() == 3 ? args[2] : nullptr, nv, *plan);
  });
}

}  // namespace stagepy::specialize
