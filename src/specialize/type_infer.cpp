// See type_infer.h.
#include "specialize/type_infer.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "analysis/append_targets.h"
#include "analysis/while_exits.h"
#include "ir/mutate.h"
#include "ir/printer.h"

namespace stagepy::specialize {
namespace {

using ir::Expr;
using ir::ExprNode;
using ir::Stmt;
using ir::StmtNode;
using Env = std::vector<TypeRef>;

struct SpecError {
  std::string reason;
  int line;
  int retag = -1;  // TypedNest::retag
  uint8_t retag_tags = kTagsNp;
  // Type again with variable `empty_var`'s class making its empty lists (`st = []`) of
  // `empty_dtype`: an item of that type is appended to them, or they meet such lists.
  int empty_var = -1;
  DType empty_dtype = DType::Int64;
};

// Breaks and continues collected per loop while its body is typed.
struct LoopOuts {
  std::map<int, std::vector<Env>> brk, cont;
};

bool same_env(const Env& a, const Env& b) {
  for (size_t i = 0; i < a.size(); i++)
    if (!types::same(a[i], b[i])) return false;
  return true;
}

bool is_int_scalar(const TypeRef& t) {
  return t->kind == Type::Kind::PyInt || (t->kind == Type::Kind::NpScalar && dtype_is_int(t->dtype));
}

// An integer, or a union of integer types.
bool int_like(const TypeRef& t) {
  if (t->kind != Type::Kind::Union) return is_int_scalar(t);
  for (auto& e : t->elems)
    if (!is_int_scalar(e)) return false;
  return true;
}

}  // namespace

bool index_like(const TypeRef& t) { return t && is_int_scalar(t); }

int TypedNest::tag_of(const TypeRef& t) const {
  if (!t || t->kind == Type::Kind::Unbound) return 0;
  for (size_t i = 0; i < tags.size(); i++)
    if (*tags[i] == *t) return (int)i + 1;
  return -1;
}

namespace {

class Infer {
 public:
  Infer(const InferInput& in, const std::map<int, DType>& empty_dtypes)
      : in_(in),
        nest_(*in.nest),
        made_(ir::made_list_vars(in.nest->root, in.nest->vars)),
        empty_dtypes_(empty_dtypes),
        resized_while_iterated_(resized_while_iterated(*in.nest)) {
    if (in.empty_lists) empty_default_.insert(in.empty_lists->begin(), in.empty_lists->end());
  }

  // After run(): the class and item type its empty lists should have been typed with, or -1.
  int empty_var = -1;
  DType empty_dtype = DType::Int64;

  TypedNest run() {
    TypedNest out;
    try {
      cross_shared_ = calls_in_two_statements(nest_.root);
      Env env = in_.entry;
      env.resize(nest_.vars.size(), types::unbound());
      for (auto& t : env)
        if (!t) t = types::unbound();
      // Assigned variables are boxed by tag at exit, their entry type included.
      for (size_t v = 0; v < env.size(); v++)
        if (nest_.vars[v].assigned) note_tag(env[v]);
      LoopOuts lo;
      std::optional<Env> fall;
      auto stmts = seq(nest_.root->body, 0, env, lo, fall);
      refuse_first_test_of_nothing(stmts);
      for (const Stmt& x : stmts) ragged_uses(x), mixed_uses(x);
      out.nest = nest_;
      out.nest.root = ir::make_block(std::move(stmts));
      out.tags = tags_;
      out.ok = true;
    } catch (const SpecError& e) {
      out.ok = false;
      out.reason = e.reason;
      out.reason_line = e.line;
      out.retag = e.retag;
      out.retag_tags = e.retag_tags;
      empty_var = e.empty_var;
      empty_dtype = e.empty_dtype;
    }
    return out;
  }

 private:
  const InferInput& in_;
  const ir::Nest& nest_;
  std::vector<TypeRef> tags_;
  size_t emitted_ = 0;
  const std::set<int> made_;  // variables that may hold lists the nest makes (made_lists.h)
  // The item type of the empty lists (`st = []`) each variable makes, where known (else ints).
  const std::map<int, DType>& empty_dtypes_;
  std::set<int> empty_default_;  // variables given an empty list of ints for want of that
  // The call `L.append(x)` / `L.pop()` the statement being typed may be (seg): alone.
  const ExprNode* resize_ok_ = nullptr;
  // Such calls inside a loop over a sequence naming L, or a variable passing lists to or
  // from it: the loop runs over the length the list had at its start, CPython's iterator
  // over the length it has at each step.
  const std::set<const ExprNode*> resized_while_iterated_;
  // The variable of `L.append(...)` / `L.pop(...)` with L one whose lists grow, or -1.
  static int resize_var(const ir::Nest& nest, const Expr& e) {
    if (!e || e->kind != ExprNode::Kind::Call || e->args.empty() || e->args[0]->kind != ExprNode::Kind::Attr ||
        e->args[0]->args.empty() || e->args[0]->args[0]->kind != ExprNode::Kind::Load)
      return -1;
    const int v = e->args[0]->args[0]->var;
    const std::string& m = e->args[0]->name;
    return (size_t)v < nest.vars.size() && nest.vars[(size_t)v].resized && (m == "append" || m == "pop") ? v : -1;
  }
  // The one such call statement `s` may hold: reached from its effects through operations
  // that evaluate all their operands (no `x if c else y`, no `and`/`or`), with no read of
  // the list's variables outside the call (CPython's reads after it see the list changed;
  // codegen changes it once every value is computed: change_length). Else null.
  const ExprNode* allowed_resize(const Stmt& s) const {
    const ExprNode* found = nullptr;
    int calls = 0;
    bool eager = true;
    std::function<void(const Expr&, bool)> walk = [&](const Expr& e, bool on_eager_path) {
      if (!e) return;
      if (resize_var(nest_, e) >= 0) {
        calls++;
        found = e.get();
        eager = eager && on_eager_path;
      }
      using K = ExprNode::Kind;
      const bool k = e->kind == K::Binary || e->kind == K::Unary || e->kind == K::Subscript || e->kind == K::Tuple ||
                     e->kind == K::Call || e->kind == K::Attr;
      for (auto& a : e->args) walk(a, on_eager_path && k);
    };
    for (auto& f : s->effects) {
      walk(f.base, true);
      walk(f.index, true);
      walk(f.value, true);
    }
    if (calls != 1 || !eager) return nullptr;
    const int v = found->args[0]->args[0]->var;
    const std::set<int> cls = ir::moved_with(nest_.root, v);  // (v among them)
    int inside = 0, all = 0;
    auto count = [&](const Expr& e, int* n) {
      ir::walk_expr(e, [&](const Expr& x) {
        if (x->kind == ExprNode::Kind::Load && cls.count(x->var)) (*n)++;
      });
    };
    for (auto& a : found->args) count(a, &inside);
    for (auto& f : s->effects) {
      if (f.kind == ir::Effect::Kind::Assign && cls.count(f.var)) return nullptr;
      count(f.base, &all);
      count(f.index, &all);
      count(f.value, &all);
    }
    return all == inside ? found : nullptr;
  }
  static std::set<const ExprNode*> resized_while_iterated(const ir::Nest& nest) {
    std::set<const ExprNode*> out;
    auto resize_var = [&](const Expr& e) { return Infer::resize_var(nest, e); };
    ir::for_each_stmt(nest.root, [&](const Stmt& loop) {
      if (loop->kind != StmtNode::Kind::For || loop->over.empty()) return;
      std::set<int> named;
      for (auto& seq : loop->over)
        ir::walk_expr(seq, [&](const Expr& x) {
          if (x->kind == ExprNode::Kind::Load && x->var >= 0)
            for (int m : ir::moved_with(nest.root, x->var)) named.insert(m);  // (x->var among them)
        });
      ir::for_each_expr(loop, [&](const Expr& x) {
        const int v = resize_var(x);
        if (v >= 0 && named.count(v)) out.insert(x.get());
      });
    });
    return out;
  }

  int line(const Expr& e) const { return in_.line_of && e ? in_.line_of(e->origin) : -1; }

  // A nest whose first statement is a test of a variable that holds no value here (`while
  // x: x = x[0]`: a list x holds at entry is not read, as a row the loop left; dispatch.cpp)
  // would hand every call to CPython at once: it stays there, saying why.
  void refuse_first_test_of_nothing(const std::vector<Stmt>& stmts) {
    if (stmts.empty() || stmts[0]->kind != StmtNode::Kind::If || !stmts[0]->cond || !unbound(stmts[0]->cond->type)) return;
    std::string names;
    ir::walk_expr(stmts[0]->cond, [&](const Expr& x) {
      if (x->kind == ExprNode::Kind::Load && unbound(x->type) && (size_t)x->var < nest_.vars.size()) {
        const std::string n = "`" + nest_.vars[(size_t)x->var].name + "`";
        if (names.find(n) == std::string::npos) names += (names.empty() ? "" : ", ") + n;
      }
    });
    fail("its first test reads " + (names.empty() ? std::string("a value") : names) +
             ", which holds no value a kernel reads at entry (it is unbound, or a list the loop replaces by its "
             "own items)",
         stmts[0]->line);
  }
  [[noreturn]] void fail(const std::string& why, int line) { throw SpecError{why, line}; }

  // A ragged list of lists (Type::ragged) has no one row length: kernels take a row by an int
  // index, its length, its truth, loop over its rows, and give it to another variable (a
  // helper's parameter included); any other use of it whole (which codegen would compute from
  // one row length) is refused.
  static bool ragged(const Expr& e) { return e && e->type && e->type->kind == Type::Kind::Array && e->type->ragged; }
  void ragged_uses(const Stmt& s) {
    whole_list_uses(s, ragged, false, [&](const Expr& e, int line) {
      fail("uses " + list_name(e, "a list of lists") + ", whose rows differ in length, otherwise than by its rows", line);
    });
  }
  // A list of ints and floats (Type::tags kTagsInts) holds each element's bits and tag: kernels
  // read and store its elements by index (codegen: tagged_element, stored_item), take its
  // rows, its length, its truth, loop over it, and give it to another variable; any other use
  // of it whole (an operation that would read its elements as one type) is refused.
  static bool mixed(const Expr& e) {
    if (!e || !e->type) return false;
    const Type* t = e->type.get();
    if (t->kind == Type::Kind::View && !t->elems.empty()) t = t->elems[0].get();
    return t->kind == Type::Kind::Array && t->pylist && (t->tags & kTagsBits);
  }
  void mixed_uses(const Stmt& s) {
    whole_list_uses(s, mixed, true, [&](const Expr& e, int line) {
      fail("uses " + list_name(e, "a list") + ", which mixes kinds of numbers (ints, floats, bools), otherwise than by its elements", line);
    });
  }
  std::string list_name(const Expr& e, const char* otherwise) const {
    return e->kind == ExprNode::Kind::Load && (size_t)e->var < nest_.vars.size() ? "`" + nest_.vars[(size_t)e->var].name + "`"
                                                                                 : otherwise;
  }
  // Refuses (`refuse`) every use in `s` of a list `is(e)` other than a subscript of it, its
  // len(), its truth, a loop over it, an inlined call's argument, an assignment to a variable,
  // and (`stores`) a store into its elements.
  void whole_list_uses(const Stmt& s, bool (*is)(const Expr&), bool stores,
                       const std::function<void(const Expr&, int)>& refuse_at) {
    auto refuse = [&](const Expr& e) { refuse_at(e, s->line); };
    std::function<void(const Expr&)> walk = [&](const Expr& e) {
      if (!e) return;
      for (size_t k = 0; k < e->args.size(); k++) {
        const Expr& a = e->args[k];
        if (is(a)) {
          const bool row = e->kind == ExprNode::Kind::Subscript && k == 0;
          const bool truth = e->kind == ExprNode::Kind::Truth;
          const bool evaluated = e->kind == ExprNode::Kind::Seq && k + 1 < e->args.size();  // an inlined call's argument
          const bool len = e->kind == ExprNode::Kind::Call && k == 1 && e->args.size() == 2 && e->args[0]->type &&
                           e->args[0]->type->kind == Type::Kind::Callable && e->args[0]->type->builtin == Builtin::Len;
          // (A row variable's index: view_row's `A[as(row)]`.)
          const bool index = e->kind == ExprNode::Kind::AsType && a->type && a->type->kind == Type::Kind::View;
          if (!row && !truth && !len && !evaluated && !index) refuse(a);
        }
        walk(a);
      }
    };
    for (const ir::Effect& f : s->effects) {
      // (`eval A`, `eval ps[as(p)]`: an inlined call's argument, a list or a row variable,
      // evaluated for its errors.)
      const bool given = f.kind == ir::Effect::Kind::Assign ||
                         (f.kind == ir::Effect::Kind::Eval &&
                          (f.value->kind == ExprNode::Kind::Load || f.value->kind == ExprNode::Kind::Subscript));
      // (A store into an element: `A[i] = x`, `A[i][j] = x`, never a row.)
      const bool element = stores && f.kind == ir::Effect::Kind::Store && f.base && f.base->type &&
                           (f.base->type->kind == Type::Kind::View || f.base->type->ndim == 1);
      if ((is(f.base) && !element) || is(f.index) || (is(f.value) && !given))
        refuse(is(f.base) && !element ? f.base : is(f.index) ? f.index : f.value);
      walk(f.base), walk(f.index), walk(f.value);
    }
    if (is(s->cond)) refuse(s->cond);
    walk(s->cond);
    for (const Expr& a : s->args) {
      if (is(a)) refuse(a);
      walk(a);
    }
    for (const Expr& o : s->over) walk(o);  // a loop over it (`for row in A`)
    for (const Stmt& b : s->body) whole_list_uses(b, is, stores, refuse_at);
  }

  // A value of type `vt` given to a list of `elem`s (a store, an append): `member`, it may be
  // one of them (a tagged list's: a float or an np.float64); `np_float`, it may be an
  // np.float64; `never`, it can be none of them, and is not an int given to a list of floats
  // either (codegen hands that one to CPython where it happens: `s = 0` before a loop that
  // may run no iteration and `L[i] = s` after it).
  struct ItemFit {
    bool member = false, np_float = false, never = false;
  };
  static ItemFit item_fit(const TypeRef& vt, const TypeRef& elem) {
    ItemFit fit;
    for (auto& m : members(vt)) {
      fit.member = fit.member || types::same(m, elem);
      fit.np_float = fit.np_float || (m->kind == Type::Kind::NpScalar && m->dtype == DType::Float64);
      if (elem->kind == Type::Kind::Union)
        for (auto& e : elem->elems) fit.member = fit.member || types::same(m, e);
    }
    fit.never = !fit.member && !(types::same(elem, types::py_float()) && vt->kind == Type::Kind::PyInt);
    return fit;
  }

  // Whether a variable passing lists to or from `var` made an empty list typed as one of
  // ints for want of its item type.
  bool class_defaulted(int var) const {
    if (empty_default_.empty()) return false;
    for (int v : ir::moved_with(nest_.root, var))  // (var among them)
      if (empty_default_.count(v)) return true;
    return false;
  }
  // Types the nest again with the empty lists of `var`'s class holding `d`s (infer_types).
  [[noreturn]] void empty_again(int var, DType d, int line) {
    SpecError e{"makes an empty list whose items it learns later", line};
    e.empty_var = var;
    e.empty_dtype = d;
    throw e;
  }

  // `L.append(x)` (Eval) or `L.pop()` (the value assigned, or dropped) of a variable whose
  // lists grow and shrink (Var::resized), typed as a call of ListAppend / ListPop on a list
  // held by a header (Type::made). Alone in its statement: the call changes the list before
  // the statement's effects, which must not go to CPython after it (seg).
  Expr resize(const Expr& e, const Env& env, int ln) {
    const bool push = e->args[0]->name == "append";
    const std::string what = push ? "`.append()`" : "`.pop()`";
    if (!e->kwnames.empty() || (push ? e->args.size() != 2 : e->args.size() > 2))
      fail("calls " + what + " with " + (e->kwnames.empty() ? "other arguments" : "keyword arguments"), ln);
    const int var = e->args[0]->args[0]->var;
    Expr obj = expr(e->args[0]->args[0], env);
    std::vector<Expr> args = {nullptr, obj};
    if (e->args.size() == 2) args.push_back(expr(e->args[1], env));  // the item, or pop's index
    for (size_t k = 1; k < args.size(); k++)
      if (unbound(args[k]->type)) return typed(e, {args.begin() + 1, args.end()}, types::unbound());
    const Type& lt = *obj->type;
    if (!(lt.kind == Type::Kind::Array && lt.made))
      fail("changes the length of a list it also reads (" + what + " of a " + lt.str() +
               "; lists of numbers grow natively)",
           ln);
    if (resized_while_iterated_.count(e.get()))
      fail("changes the length of " + vname(var) + " inside a loop over it (" + what + ")", ln);
    if (e.get() != resize_ok_)
      fail("changes the length of a list in a statement that also reads it, changes it twice or may not evaluate "
           "the call (" + what + ")",
           ln);
    if (in_.overlapping)
      for (auto& [a, b] : *in_.overlapping)
        if (a == var || b == var)
          fail("changes the length of " + vname(var) + ", whose list another variable also holds at entry (" + what + ")", ln);
    args[0] = typed(e->args[0], {obj}, types::callable(push ? Builtin::ListAppend : Builtin::ListPop));
    const TypeRef item = types::list_elem(lt);
    if (!push) {
      if (args.size() == 3 && !index_like(args[2]->type)) fail("calls `.pop()` with a " + args[2]->type->str(), ln);
      return typed(e, args, item);
    }
    const TypeRef& vt = args[2]->type;
    if (!types::same(vt, item)) {
      // (As for stores: an untagged list of floats is read or made tagged once it gets a
      // np.float64.)
      const ItemFit fit = item_fit(vt, item);
      if (fit.np_float && lt.dtype == DType::Float64 && !lt.tagged)
        throw SpecError{"appends a np.float64 to a list of floats", ln, var};
      if (!fit.member && class_defaulted(var)) {
        const TypeRef m0 = members(vt)[0];
        if (m0->kind == Type::Kind::PyFloat) empty_again(var, DType::Float64, ln);
        if (m0->kind == Type::Kind::PyBool) empty_again(var, DType::Bool, ln);
      }
      if (fit.never) fail("appends a " + vt->str() + " to a " + lt.str(), ln);
    }
    return typed(e, args, types::none());
  }

  void note_tag(const TypeRef& t) {
    if (!t || t->kind == Type::Kind::Unbound) return;
    if (t->kind == Type::Kind::Union) {
      for (auto& e : t->elems) note_tag(e);
      return;
    }
    for (auto& x : tags_)
      if (*x == *t) return;
    tags_.push_back(t);
  }

  std::string vname(int v) const { return ir::shown_name(nest_.vars[v]); }

  // An item the kernel collects for a list (append_buffer.h): a number or bool, a tuple of
  // them, or a list the nest appends to or makes (its buffer's address); its type gets a tag.
  void check_item(const TypeRef& vt, const std::string& verb, const std::string& where, int ln) {
    if (vt->kind == Type::Kind::Appended) return;
    if (vt->kind == Type::Kind::Array && vt->made) return;  // (a list made and read: made_lists.h)
    const std::vector<TypeRef> items = vt->kind == Type::Kind::Tuple ? vt->elems : std::vector<TypeRef>{vt};
    for (auto& item : items) {
      for (auto& m : members(item))
        if (!unbound(m) && (!m->is_scalar() || m->is_complex()))
          fail(verb + " a " + vt->str() + " " + where + " (numbers, bools, tuples of them and lists it makes only)", ln);
      note_tag(item);
    }
  }

  // `[a, b]`, where append_targets allowed a new list (assigned to a variable the nest
  // builds lists in, or appended): Appended, holding its items.
  Expr new_list(const Expr& e, const Env& env) {
    std::vector<Expr> args;
    bool ub = false;  // an item that is never bound here: the kernel stops for CPython
    for (const Expr& a : e->args) {
      args.push_back(a->kind == ExprNode::Kind::NewList ? new_list(a, env) : expr(a, env));
      if (unbound(args.back()->type)) ub = true;
      else check_item(args.back()->type, "puts", "into a new list", line(e));
    }
    return typed(e, args, ub ? types::unbound() : types::appended());
  }

  // The value of `v = <a new list>` where v may hold lists the nest makes (ir::makes_list):
  // a NewList of type made_list(d), of three forms for codegen, by its `name`: "repeat"
  // (args: the item, the count: `[x] * n`, `n * [x]`), "copy" (args: a one-dimensional list,
  // a slice: `L[a:b]`, `L.copy()`) and "" (args: the items of a display `[a, b, c]`). The
  // items are Python ints, floats or bools, all of one type (a list of another mix stays in
  // CPython). nullptr where `e` is not such a value of lists (`v = A[1:]` of an array).
  Expr made_list(const Expr& e, const Env& env, int var, int ln) {
    // Floats and np.float64s, each with its tag, where the variables passing these lists
    // among themselves store NumPy floats into them (made_lists.h).
    const bool tagged = in_.tagged_made && in_.tagged_made->count(var);
    auto list_of = [&](DType d) { return types::made_list(d, tagged && d == DType::Float64); };
    auto elem_dtype = [&](const TypeRef& t, const char* what) {
      if (unbound(t)) return DType::Int64;
      switch (t->kind) {
        case Type::Kind::PyInt: return DType::Int64;
        case Type::Kind::PyFloat: return DType::Float64;
        case Type::Kind::PyBool: return DType::Bool;
        default: fail(std::string("makes a list of ") + what + " " + t->str() + " (ints, floats or bools only)", ln);
      }
    };
    auto make = [&](const char* form, std::vector<Expr> args, TypeRef t) {
      auto c = std::make_shared<ExprNode>(*e);
      c->kind = ExprNode::Kind::NewList;
      c->name = form;
      c->args = std::move(args);
      c->type = std::move(t);
      return Expr(c);
    };
    auto copy = [&](const Expr& base, Expr slice) -> Expr {
      Expr b = expr(base, env);
      if (unbound(b->type)) return make("copy", {b, slice}, types::unbound());
      const Type& bt = *b->type;
      if (bt.kind != Type::Kind::Array || !bt.pylist) return nullptr;
      if (bt.ndim != 1 || bt.tuples) fail("copies a " + bt.str() + " (lists of numbers only)", ln);
      if (bt.dtype != DType::Int64 && bt.dtype != DType::Float64 && bt.dtype != DType::Bool)
        fail("copies a " + bt.str(), ln);
      if (bt.tags & kTagsBits) fail("copies " + bt.str() + " (lists of one type of number only)", ln);
      if (bt.tagged && !tagged) throw SpecError{"copies a list of floats holding np.float64s into " + vname(var), ln, var};
      return make("copy", {b, slice}, list_of(bt.dtype));
    };
    switch (e->kind) {
      case ExprNode::Kind::NewList: {
        if (e->args.empty()) {
          // `st = []`: of the items appended to it, if the type was found (infer_types).
          auto it = empty_dtypes_.find(var);
          if (it == empty_dtypes_.end()) empty_default_.insert(var);
          return make("", {}, list_of(it == empty_dtypes_.end() ? DType::Int64 : it->second));
        }
        bool ub = false;
        std::vector<Expr> items = exprs(e->args, env, &ub);
        if (ub) return make("", items, types::unbound());
        const DType d = elem_dtype(items[0]->type, "the items");
        for (auto& x : items)
          if (!types::same(x->type, items[0]->type))
            fail("makes a list of " + items[0]->type->str() + " and " + x->type->str() + " items", ln);
        return make("", items, list_of(d));
      }
      case ExprNode::Kind::Binary: {
        const int l = e->args[0]->kind == ExprNode::Kind::NewList ? 0 : 1;
        const Expr& lst = e->args[(size_t)l];
        if (lst->args.size() != 1) fail("repeats a list of " + std::to_string(lst->args.size()) + " items", ln);
        Expr item = expr(lst->args[0], env);
        Expr count = expr(e->args[(size_t)(1 - l)], env);
        if (unbound(item->type) || unbound(count->type)) return make("repeat", {item, count}, types::unbound());
        if (count->type->kind != Type::Kind::PyInt) fail("repeats a list by a " + count->type->str(), ln);
        return make("repeat", {item, count}, list_of(elem_dtype(item->type, "the item")));
      }
      case ExprNode::Kind::Subscript: return copy(e->args[0], expr(e->args[1], env));
      case ExprNode::Kind::Call: {
        ir::ConstValue none;
        Expr n = ir::with_type(ir::make_const(none, e->origin), types::none());
        Expr all = ir::with_type(ir::make_slice(n, n, n, e->origin), types::slice({types::none(), types::none(), types::none()}));
        return copy(e->args[0]->args[0], all);
      }
      default: return nullptr;
    }
  }

  // ------------------------------------------------------------ expressions
  Expr typed(const Expr& e, std::vector<Expr> args, TypeRef t) {
    if (t && t->kind == Type::Kind::Union) note_tag(t);  // run-time tags name its members
    // The array an operation on arrays computes exists only as elements a statement
    // stores: only another elementwise operation may take it (see elementwise).
    if (!(t && t->temp))
      for (auto& a : args)
        if (a && a->type && a->type->temp) fail("uses the result of an operation on arrays other than to store it into an array", line(e));
    auto c = std::make_shared<ExprNode>(*e);
    c->args = std::move(args);
    c->type = std::move(t);
    return c;
  }

  static bool unbound(const TypeRef& t) { return !t || t->kind == Type::Kind::Unbound; }

  // The members of a scalar type (a union's elements, or itself).
  static std::vector<TypeRef> members(const TypeRef& t) {
    if (t->kind == Type::Kind::Union) return t->elems;
    return {t};
  }

  // Applies `f` to every combination of members; the results must agree or form a
  // uniform union.
  template <class F>
  TypeRef combine(const TypeRef& a, const TypeRef& b, F f, const std::string& what, int ln) {
    std::vector<TypeRef> rs;
    for (auto& x : members(a)) {
      for (auto& y : members(b)) {
        TypeRef r = f(x, y);
        if (!r) fail(what + " is not defined for " + x->str() + " and " + y->str(), ln);
        rs.push_back(r);
      }
    }
    TypeRef r = types::join(rs);
    if (!r) fail(what + " gives values of types that cannot share a variable", ln);
    return r;
  }

  // Each of `es` typed, in order; *ub: whether one of them is unbound.
  std::vector<Expr> exprs(const std::vector<Expr>& es, const Env& env, bool* ub) {
    std::vector<Expr> out;
    for (auto& a : es) {
      out.push_back(expr(a, env));
      *ub = *ub || unbound(out.back()->type);
    }
    return out;
  }

  Expr expr(const Expr& e, const Env& env) {
    using K = ExprNode::Kind;
    const int ln = line(e);
    switch (e->kind) {
      case K::Const: {
        TypeRef t;
        switch (e->value.kind) {
          case ir::ConstValue::Kind::None: t = types::none(); break;
          case ir::ConstValue::Kind::Bool: t = types::py_bool(); break;
          case ir::ConstValue::Kind::Int: t = types::py_int(); break;
          case ir::ConstValue::Kind::Float: t = types::py_float(); break;
          case ir::ConstValue::Kind::Complex: t = types::py_complex(); break;
          case ir::ConstValue::Kind::Char: t = types::py_char(); break;
        }
        return typed(e, {}, t);
      }
      case K::Load: {
        TypeRef t = env[e->var];
        if (unbound(t)) return typed(e, {}, types::unbound());  // always fails at run time
        TypeRef r = types::without_unbound(t);
        auto c = std::make_shared<ExprNode>(*e);
        c->type = r;
        c->check_bound = types::may_be_unbound(t);
        if (r->kind == Type::Kind::View) return view_row(c);
        return c;
      }
      case K::Attr: {
        if (object_attribute(e, env)) {
          int base = base_of(e);
          {
            TypeRef t = env[e->pseudo];
            if (unbound(t))
              fail("uses `" + nest_.vars[e->pseudo].name + "`, which the " +
                       (env[base]->kind == Type::Kind::Module ? "module" : "object") + " does not have",
                   ln);
            return typed(e, e->args, t);  // the base stays for codegen to recognise the module
          }
        }
        Expr obj = expr(e->args[0], env);
        if (unbound(obj->type)) return typed(e, {obj}, types::unbound());
        const Type& ot = *obj->type;
        if (e->loop_sequence && (e->name == "flat" || e->name == "ravel()")) return flat_view(e, obj, ln);
        if (ot.kind == Type::Kind::Array && !ot.py_items()) {
          if (e->name == "shape") {
            std::vector<TypeRef> el(ot.ndim, types::py_int());
            return typed(e, {obj}, types::tuple(el));
          }
          if (e->name == "ndim" || e->name == "size") return typed(e, {obj}, types::py_int());
        }
        if (ot.is_complex() && (e->name == "real" || e->name == "imag")) {
          TypeRef part = ot.kind == Type::Kind::PyComplex       ? types::py_float()
                         : ot.dtype == DType::Complex64          ? types::np_scalar(DType::Float32)
                                                                 : types::np_scalar(DType::Float64);
          return typed(e, {obj}, part);
        }
        if (e->name == "real" || e->name == "imag") {
          // A real number's: itself and a zero of its type (a bool's are ints).
          std::vector<TypeRef> rs;
          for (auto& m : members(obj->type))
            if (TypeRef r = types::real_part(m)) rs.push_back(r);
          if (rs.size() == members(obj->type).size())
            if (TypeRef r = types::join(rs)) return typed(e, {obj}, r);
        }
        if (ot.kind == Type::Kind::Module) fail("uses `" + ot.name + "." + e->name + "`", ln);
        if (ot.pylist && (e->name == "append" || e->name == "extend" || e->name == "pop" || e->name == "insert"))
          fail("changes the length of a list it also reads (`." + e->name + "()`); appending to a list the nest "
               "does nothing else with runs natively",
               ln);
        fail("uses the attribute `." + e->name + "` of a " + ot.str(), ln);
      }
      case K::Subscript: {
        Expr base = expr(e->args[0], env);
        Expr idx = expr(e->args[1], env);
        if (unbound(base->type) || unbound(idx->type)) return typed(e, {base, idx}, types::unbound());
        if (e->unpack > 0) {
          // `a, b = v`: a tuple's length is its type's (CPython raises where it differs);
          // an array's or a list's is checked where the item is taken (codegen).
          const Type& bt = *base->type;
          if (bt.kind == Type::Kind::Tuple && (int)bt.elems.size() != e->unpack)
            fail("unpacks a tuple of " + std::to_string(bt.elems.size()) + " items into " + std::to_string(e->unpack) +
                     " names",
                 ln);
          // (Complex arrays are lowered into parts, which do not keep the length check.)
          if (bt.kind != Type::Kind::Tuple && !(bt.kind == Type::Kind::Array && bt.ndim >= 1 && !dtype_is_complex(bt.dtype)))
            fail("unpacks a " + bt.str() + " into names", ln);
        }
        if (e->loop_sequence && idx->type->kind == Type::Kind::Slice) {
          // `for x in L[a:b]`: a view of the list for the loop (for_stmt checks the loop
          // stores into no list, so it reads what the copy would hold).
          const Type& bt = *base->type;
          if (bt.kind == Type::Kind::Array && bt.py_items()) {
            if (bt.ndim != 1 && !(bt.pylist && bt.tuples)) fail("loops over a slice of a " + bt.str() + " (which copies it)", ln);
            // (A list of tuples: its rows are read-only, so the slice's items are the list's.)
            TypeRef view = bt.pylist ? types::py_list_like(bt, bt.ndim) : base->type;
            return typed(e, {base, idx}, view);
          }
        }
        return typed(e, {base, idx}, subscript_type(base, idx, ln));
      }
      case K::Tuple: {
        bool ub = false;
        std::vector<Expr> args = exprs(e->args, env, &ub);
        std::vector<TypeRef> ts;
        for (auto& a : args) ts.push_back(a->type);
        return typed(e, args, ub ? types::unbound() : types::tuple(ts));
      }
      case K::Binary: {
        Expr a = expr(e->args[0], env), b = expr(e->args[1], env);
        if (unbound(a->type) || unbound(b->type)) return typed(e, {a, b}, types::unbound());
        if (e->binop == ir::BinOp::MatMul && !e->inplace && (np_array(a->type) || np_array(b->type)))
          return np_dot(e, {a, b}, {a->type, b->type}, "`@`", ln);
        if (np_array(a->type) || np_array(b->type)) return elementwise(e, {a, b}, ln);
        if (!a->type->is_scalar() || !b->type->is_scalar()) {
          if (a->type->kind == Type::Kind::Array || b->type->kind == Type::Kind::Array)
            fail(std::string("computes `") + ir::binop_name(e->binop) + "` on whole arrays", ln);
          fail(std::string("computes `") + ir::binop_name(e->binop) + "` on " + a->type->str() + " and " + b->type->str(), ln);
        }
        const Oracle& o = *in_.oracle;
        ir::BinOp op = e->binop;
        TypeRef r = combine(a->type, b->type, [&](const TypeRef& x, const TypeRef& y) { return o.binary(op, x, y); },
                            std::string("`") + ir::binop_name(op) + "`", ln);
        if (op == ir::BinOp::Pow && promoted_power(a->type, b->type)) {
          // NumPy computes a scalar ** scalar with its scalar math (libm's pow) only where one
          // operand is a NumPy scalar of the result's type; otherwise (np.int32(7) ** 1.5,
          // np.float32(x) ** np.int64(3)) it promotes both and runs its power ufunc, whose loop
          // (SIMD on many CPUs) may differ from libm in the last bit: kernels call that loop.
          if (a->type->kind == Type::Kind::Union || b->type->kind == Type::Kind::Union)
            fail("computes `**` of " + a->type->str() + " and " + b->type->str() +
                     ", values NumPy may promote (its power loop) or not",
                 ln);
          Expr callee = ir::with_type(ir::make_const(ir::ConstValue{}, e->origin), types::callable(Builtin::NpPower));
          return typed(ir::make_call(callee, {e->args[0], e->args[1]}, {}, e->origin), {callee, a, b}, r);
        }
        return typed(e, {a, b}, r);
      }
      case K::Unary: {
        Expr a = expr(e->args[0], env);
        if (unbound(a->type)) return typed(e, {a}, types::unbound());
        if (e->unop == ir::UnOp::Not) {
          check_truth(a, ln);
          return typed(e, {a}, types::py_bool());
        }
        if (np_array(a->type)) return elementwise(e, {a}, ln);
        if (!a->type->is_scalar()) fail(std::string("computes `") + ir::unop_name(e->unop) + "` on a " + a->type->str(), ln);
        const Oracle& o = *in_.oracle;
        std::vector<TypeRef> rs;
        for (auto& x : members(a->type)) {
          TypeRef r = o.unary(e->unop, x);
          if (!r) fail(std::string("`") + ir::unop_name(e->unop) + "` is not defined for " + x->str(), ln);
          rs.push_back(r);
        }
        TypeRef r = types::join(rs);
        if (!r) fail("a unary operator whose result types cannot share a variable", ln);
        return typed(e, {a}, r);
      }
      case K::Compare: {
        Expr a = expr(e->args[0], env), b = expr(e->args[1], env);
        if (unbound(a->type) || unbound(b->type)) return typed(e, {a, b}, types::unbound());
        if (e->cmpop == ir::CmpOp::Is || e->cmpop == ir::CmpOp::IsNot) {
          bool an = a->type->kind == Type::Kind::None, bn = b->type->kind == Type::Kind::None;
          if (!an && !bn) fail("uses `is` on values other than None", ln);
          return typed(e, {a, b}, types::py_bool());
        }
        if (e->nan_bails) {  // `x in S`
          if (np_array(a->type)) fail("uses `in` with an array to look up", ln);
          if (np_array(b->type)) fail("uses `in` on a " + std::to_string(b->type->ndim + 1) + "-d array (NumPy compares elementwise)", ln);
          for (auto& m : members(a->type))
            if (m->is_complex()) fail("uses `in` with a complex number to look up", ln);
        }
        if (np_array(a->type) || np_array(b->type)) return elementwise(e, {a, b}, ln);
        if (a->type->kind == Type::Kind::PyChar && b->type->kind == Type::Kind::PyChar)
          return typed(e, {a, b}, types::py_bool());  // one-character strs: their code points
        // A str a variable holds against a character (`ca != cb`, `ca` from an enclosing loop
        // over a str): equal when it has one character, that one.
        const bool str_a = a->type->kind == Type::Kind::Array && a->type->pystr;
        const bool str_b = b->type->kind == Type::Kind::Array && b->type->pystr;
        if ((e->cmpop == ir::CmpOp::EQ || e->cmpop == ir::CmpOp::NE) &&
            ((str_a && b->type->kind == Type::Kind::PyChar) || (str_b && a->type->kind == Type::Kind::PyChar)))
          return typed(e, {a, b}, types::py_bool());
        if (!a->type->is_scalar() || !b->type->is_scalar())
          fail(std::string("compares a ") + a->type->str() + " and a " + b->type->str(), ln);
        const Oracle& o = *in_.oracle;
        const bool eq = e->cmpop == ir::CmpOp::EQ || e->cmpop == ir::CmpOp::NE;
        TypeRef r = combine(a->type, b->type, [&](const TypeRef& x, const TypeRef& y) -> TypeRef {
          // Complex numbers compare for equality only (the order comparisons raise).
          // (complex.__eq__ answers for a np.float64, a float subclass; NumPy for the others.)
          if (eq && (x->is_complex() || y->is_complex())) {
            bool py = (x->kind != Type::Kind::NpScalar && y->kind != Type::Kind::NpScalar) ||
                      (x->kind == Type::Kind::PyComplex && y->kind == Type::Kind::NpScalar && y->dtype == DType::Float64);
            return py ? types::py_bool() : types::np_scalar(DType::Bool);
          }
          return o.compare(x, y);
        }, "a comparison", ln);
        return typed(e, {a, b}, r);
      }
      case K::Truth: {
        Expr a = expr(e->args[0], env);
        if (unbound(a->type)) return typed(e, {a}, types::unbound());
        check_truth(a, ln);
        return typed(e, {a}, types::py_bool());
      }
      case K::Call: return call(e, env, ln);
      case K::Cond: {
        Expr c = expr(e->args[0], env);
        // `x * n if k is None else x * k` where the types decide `is` (a helper's default
        // None): only the way taken is typed, and the expression is that way (the test
        // cannot fail). The other may not type at all (x * None).
        if (auto known = known_truth(c)) return expr(e->args[*known ? 1 : 2], env);
        Expr t = expr(e->args[1], env), f = expr(e->args[2], env);
        if (unbound(c->type)) return typed(e, {c, t, f}, types::unbound());
        check_truth(c, ln);
        TypeRef r;
        if (unbound(t->type) && unbound(f->type)) r = types::unbound();
        else if (unbound(t->type)) r = f->type;
        else if (unbound(f->type)) r = t->type;
        else {
          r = types::join({t->type, f->type});
          if (!r) fail("a conditional expression gives " + t->type->str() + " or " + f->type->str(), ln);
        }
        return typed(e, {c, t, f}, r);
      }
      case K::Seq: {
        bool ub = false;
        std::vector<Expr> args = exprs(e->args, env, &ub);
        return typed(e, args, ub ? types::unbound() : args.back()->type);
      }
      case K::Slice: {
        bool ub = false;
        std::vector<Expr> args = exprs(e->args, env, &ub);
        std::vector<TypeRef> ts;
        for (auto& a : args) {
          const TypeRef& t = a->type;
          if (!unbound(t) && t->kind != Type::Kind::None && !(is_int_scalar(t) && t->kind != Type::Kind::Union))
            fail("slices with a " + t->str() + " (only integers and None are supported)", ln);
          ts.push_back(t);
        }
        return typed(e, args, ub ? types::unbound() : types::slice(ts));
      }
      case K::NewList: fail("builds a list", ln);  // (where append_targets allowed one: new_list)
      case K::LoopNonEmpty: return e;
      case K::Guard: case K::AsType: case K::ComplexWarn: break;  // lowered IR only
    }
    fail("an expression stagepy cannot type", ln);
  }

  // A statement's typed expressions draw from the random module's generator once per call
  // in the code: the lifter reads an expression CPython computes once at each place it is
  // used (the index of `c[randint(1, 6)] += 1`, the middle of `a < f() < b`), copies that
  // have the call's bytecode offset. In a statement's effects (`effects`: a Seg), copies all
  // evaluated whatever the values (none in a way of a conditional expression, `and`, `or`)
  // are one draw: codegen makes it where the first is evaluated, which comes before the
  // others on every path, and reads it at the others (Gen::draw_memo_). Any other copy (in
  // an If's test, under a condition, or of an inlined call without an offset of its own)
  // refuses the statement.
  void draws_once(const std::vector<Expr>& es, int ln, bool effects = false) {
    std::map<int, std::pair<int, bool>> seen;  // offset -> copies, one under a condition
    std::function<void(const Expr&, bool)> walk = [&](const Expr& x, bool cond) {
      if (!x) return;
      if (ir::is_draw(x)) {
        auto& s = seen[x->origin];
        s.first++;
        s.second = s.second || cond;
      }
      for (size_t i = 0; i < x->args.size(); i++) walk(x->args[i], cond || (x->kind == ExprNode::Kind::Cond && i > 0));
    };
    for (auto& e : es) walk(e, false);
    for (auto& [origin, s] : seen)
      if (s.first > 1 && (!effects || origin < 0 || s.second))
        fail("computes one call of the random module at two places (a copy of it under a condition, or in a test)", ln);
  }

  // The bytecode offsets of calls the lifted nest reads in two statements (the middle of a
  // chained comparison in an `if` test: `if a < f() < b` is two Ifs). CPython calls them
  // once; a draw there is refused (draws_once handles copies within one statement).
  static std::set<int> calls_in_two_statements(const Stmt& root) {
    std::map<int, int> statements;  // offset -> statements holding it
    ir::for_each_stmt(root, [&](const Stmt& s) {
      std::set<int> mine;
      auto note = [&](const Expr& x) {
        if (x->kind == ExprNode::Kind::Call && x->origin >= 0) mine.insert(x->origin);
      };
      for (auto& f : s->effects) ir::walk_expr(f.base, note), ir::walk_expr(f.index, note), ir::walk_expr(f.value, note);
      ir::walk_expr(s->cond, note);
      for (auto& a : s->args) ir::walk_expr(a, note);
      for (auto& o : s->over) ir::walk_expr(o, note);
      for (int o : mine) statements[o]++;
    });
    std::set<int> out;
    for (auto& [o, n] : statements)
      if (n > 1) out.insert(o);
    return out;
  }
  std::set<int> cross_shared_;
  static constexpr const char* kHelperTwice =
      "draws random numbers in a nest that calls a helper twice for one call in the code (the middle of a "
      "chained comparison)";

  // random.uniform(a, b), random.randint(a, b), random.randrange(stop) and randrange(start,
  // stop) of the module's generator, as random.py computes them from random() and
  // _randbelow(n) (Builtin::RandomBelow): a + (b - a) * random(); a + _randbelow(b + 1 - a);
  // _randbelow(stop); start + _randbelow(stop - start). The same operations on the same types
  // give the same results (an int past 64 bits, an empty range: CPython), and the draws come
  // where random.py makes them, after the arguments. (`a` is read twice: not a draw itself.)
  // The parameters kernels take of the random module's and np.random's functions (random.py's
  // and NumPy's names; randrange's step, np.random's size and dtype: CPython), and their
  // defaults where they have one, for calls with keyword arguments and calls that leave some out.
  struct RandomParam {
    const char* name;
    bool has_default;
    double value;
  };
  static std::vector<RandomParam> random_parameters(Builtin f) {
    switch (f) {
      case Builtin::RandomUniform: case Builtin::RandomRandint: return {{"a", false, 0}, {"b", false, 0}};
      case Builtin::RandomRandrange: return {{"start", false, 0}, {"stop", false, 0}};
      case Builtin::RandomChoice: return {{"seq", false, 0}};
      case Builtin::RandomGauss: case Builtin::RandomNormalvariate: return {{"mu", true, 0.0}, {"sigma", true, 1.0}};
      case Builtin::RandomExpovariate: return {{"lambd", false, 0}};
      case Builtin::NpRandomUniform: return {{"low", true, 0.0}, {"high", true, 1.0}};
      case Builtin::NpRandomNormal: return {{"loc", true, 0.0}, {"scale", true, 1.0}};
      case Builtin::NpRandomExponential: return {{"scale", true, 1.0}};
      case Builtin::NpRandomRandint: return {{"low", false, 0}, {"high", false, 0}};
      default: return {};
    }
  }

  // A call with keyword arguments (the last kwnames.size() of e's arguments) as the same
  // call with positional ones: `e` and `args` (typed) rewritten in place. The arguments keep
  // their values (they draw nothing: random_call refuses those), so their order does not
  // matter. A parameter left out before one given gets its default (gauss(sigma=0.5)); with
  // `all_defaults`, the ones after the last given too (np.random's, computed in codegen).
  void random_keywords(Expr* e, std::vector<Expr>* args, std::vector<TypeRef>* at, Builtin f, const std::string& fname,
                       const Env& env, int ln, bool all_defaults = false) {
    const std::vector<RandomParam> params = random_parameters(f);
    const size_t nkw = (*e)->kwnames.size(), npos = at->size() - nkw;
    std::vector<Expr> raw(params.size()), typed_args(params.size());
    if (npos > params.size()) fail("calls " + fname + " with " + std::to_string(at->size()) + " arguments", ln);
    for (size_t i = 0; i < npos; i++) raw[i] = (*e)->args[i + 1], typed_args[i] = (*args)[i + 1];
    for (size_t k = 0; k < nkw; k++) {
      const std::string& name = (*e)->kwnames[k];
      auto it = std::find_if(params.begin(), params.end(), [&](const RandomParam& p) { return name == p.name; });
      if (it == params.end()) fail("calls " + fname + " with the keyword argument `" + name + "`", ln);
      const size_t i = (size_t)(it - params.begin());
      if (raw[i]) fail("calls " + fname + " with `" + name + "` twice", ln);
      raw[i] = (*e)->args[npos + 1 + k];
      typed_args[i] = (*args)[npos + 1 + k];
    }
    size_t given = raw.size();
    while (given > 0 && !raw[given - 1]) given--;
    if (all_defaults)
      while (given < params.size() && params[given].has_default) given++;
    if (nkw == 0 && given == at->size()) return;
    for (size_t i = 0; i < given; i++)
      if (!raw[i]) {
        if (!params[i].has_default) fail("calls " + fname + " without `" + params[i].name + "`", ln);
        ir::ConstValue c;
        c.kind = ir::ConstValue::Kind::Float;
        c.f = params[i].value;
        raw[i] = ir::make_const(c, ir::kInlinedOrigin);
        typed_args[i] = expr(raw[i], env);
      }
    auto call = std::make_shared<ExprNode>(**e);
    call->kwnames.clear();
    call->args.resize(1 + given);
    args->resize(1 + given);
    at->clear();
    for (size_t i = 0; i < given; i++) {
      call->args[1 + i] = raw[i];
      (*args)[1 + i] = typed_args[i];
      at->push_back(typed_args[i]->type);
    }
    *e = call;
  }

  // np.random.rand() and the other functions of NumPy's global RandomState: one draw each, of
  // real numbers (ints for randint), a Python float (int for randint) as NumPy returns them
  // for scalars. Arguments that draw themselves are refused, as for the random module.
  Expr numpy_random_call(Expr e, Builtin f, std::vector<Expr> args, std::vector<TypeRef> at, const Env& env, int ln) {
    const std::string fname = std::string("`") + builtin_name(f) + "()`";
    if (cross_shared_.count(e->origin))
      fail("computes one call of " + fname + " in two statements (a chained comparison)", ln);
    if (nest_.helper_called_twice) fail(kHelperTwice, ln);
    random_keywords(&e, &args, &at, f, fname, env, ln, true);
    const size_t n = random_parameters(f).size();
    const size_t lo = f == Builtin::NpRandomRandint ? 1 : n;
    if (at.size() < lo || at.size() > n) fail("calls " + fname + " with " + std::to_string(at.size()) + " arguments", ln);
    for (size_t i = 1; i < args.size(); i++)
      if (ir::draws_random(args[i])) fail("calls " + fname + " with an argument that draws random numbers", ln);
    const bool ints = f == Builtin::NpRandomRandint;
    for (auto& t : at)
      for (auto& m : members(t)) {
        if (!ints && (!m->is_scalar() || m->is_complex()))
          fail("calls " + fname + " on a " + t->str() + " (real numbers only)", ln);
        const bool int_like = m->kind == Type::Kind::PyInt || m->kind == Type::Kind::PyBool ||
                              (m->kind == Type::Kind::NpScalar && dtype_is_int(m->dtype));
        if (ints && !int_like) fail("calls " + fname + " on a " + t->str() + " (integers only)", ln);
      }
    auto c = std::make_shared<ExprNode>(*e);
    c->args = args;
    return typed(c, args, ints ? types::py_int() : types::py_float());
  }

  Expr random_call(Expr e, Builtin f, std::vector<Expr> args, std::vector<TypeRef> at, const Env& env, int ln) {
    const std::string fname = std::string("`") + builtin_name(f) + "()`";
    if (cross_shared_.count(e->origin))
      fail("computes one call of " + fname + " in two statements (a chained comparison)", ln);
    if (nest_.helper_called_twice) fail(kHelperTwice, ln);
    // (gauss() and normalvariate() get random.py's defaults for what they leave out.)
    const bool normal = f == Builtin::RandomGauss || f == Builtin::RandomNormalvariate;
    random_keywords(&e, &args, &at, f, fname, env, ln, normal);
    const size_t hi = random_parameters(f).size();
    const size_t lo = f == Builtin::RandomRandrange ? 1 : hi;  // (randrange(stop))
    if (at.size() < lo || at.size() > hi) fail("calls " + fname + " with " + std::to_string(at.size()) + " arguments", ln);
    for (size_t i = 1; i < args.size(); i++)
      if (ir::draws_random(args[i])) fail("calls " + fname + " with an argument that draws random numbers", ln);
    const int o = ir::kInlinedOrigin;  // (no fact of the analysis is about these operators)
    auto draw = [&](Builtin b, std::vector<Expr> more) -> Expr {
      auto callee = std::make_shared<ExprNode>(*args[0]);
      callee->type = types::callable(b);
      auto c = std::make_shared<ExprNode>(*e);
      c->name = ir::kRandomDraw;
      c->args = {callee};
      for (auto& m : more) c->args.push_back(m);
      return c;
    };
    if (f == Builtin::RandomChoice) {
      // seq[_randbelow(len(seq))]: of a sequence the nest indexes (a list, an array, a str,
      // a tuple); an empty one goes to CPython, which raises IndexError.
      const Type& st = *at[0];
      if (!(st.kind == Type::Kind::Array && st.ndim >= 1 && !st.temp) && st.kind != Type::Kind::Tuple)
        fail("calls " + fname + " on a " + st.str(), ln);
      auto len_callee = std::make_shared<ExprNode>(*args[0]);
      len_callee->type = types::callable(Builtin::Len);
      auto len = std::make_shared<ExprNode>(*e);  // (typed: the draw's typing keeps it)
      len->name.clear();
      len->kwnames.clear();
      len->args = {len_callee, args[1]};
      len->type = types::py_int();
      return expr(ir::make_subscript(e->args[1], draw(Builtin::RandomBelow, {len}), o), env);
    }
    const bool real = f == Builtin::RandomUniform || normal || f == Builtin::RandomExpovariate;
    for (auto& t : at)
      for (auto& m : members(t)) {
        if (real && (!m->is_scalar() || m->is_complex()))
          fail("calls " + fname + " on a " + t->str() + " (real numbers only)", ln);
        if (!real && m->kind != Type::Kind::PyInt && m->kind != Type::Kind::PyBool)
          fail("calls " + fname + " on a " + t->str() + " (Python ints only)", ln);
      }
    auto bin = [&](ir::BinOp op, Expr x, Expr y) { return ir::make_binary(op, std::move(x), std::move(y), false, o); };
    if (normal) {  // mu + z * sigma
      Builtin z = f == Builtin::RandomGauss ? Builtin::RandomGaussZ : Builtin::RandomNormalZ;
      return expr(bin(ir::BinOp::Add, e->args[1], bin(ir::BinOp::Mul, draw(z, {}), e->args[2])), env);
    }
    if (f == Builtin::RandomExpovariate)  // -log(1.0 - random()) / lambd
      return expr(bin(ir::BinOp::TrueDiv, draw(Builtin::RandomExpoZ, {}), e->args[1]), env);
    const Expr& a = e->args[1];
    switch (f) {
      case Builtin::RandomUniform: return expr(bin(ir::BinOp::Add, a, bin(ir::BinOp::Mul, bin(ir::BinOp::Sub, e->args[2], a), draw(Builtin::RandomRandom, {}))), env);
      case Builtin::RandomRandint: {
        ir::ConstValue one;
        one.kind = ir::ConstValue::Kind::Int;
        one.i = 1;
        Expr width = bin(ir::BinOp::Sub, bin(ir::BinOp::Add, e->args[2], ir::make_const(one, o)), a);
        return expr(bin(ir::BinOp::Add, a, draw(Builtin::RandomBelow, {width})), env);
      }
      default:
        if (at.size() == 1) return expr(draw(Builtin::RandomBelow, {a}), env);
        return expr(bin(ir::BinOp::Add, a, draw(Builtin::RandomBelow, {bin(ir::BinOp::Sub, e->args[2], a)})), env);
    }
  }

  // Whether `x ** y` of these scalars gives a NumPy float through a promotion: no operand
  // is a NumPy scalar of the result's dtype (then NumPy runs its power ufunc, not its scalar
  // math). For any pair of their members.
  bool promoted_power(const TypeRef& a, const TypeRef& b) const {
    for (auto& x : members(a))
      for (auto& y : members(b)) {
        TypeRef r = in_.oracle->binary(ir::BinOp::Pow, x, y);
        if (!r || r->kind != Type::Kind::NpScalar || !dtype_is_float(r->dtype)) continue;
        auto own = [&](const TypeRef& t) { return t->kind == Type::Kind::NpScalar && t->dtype == r->dtype; };
        if (!own(x) && !own(y)) return true;
      }
    return false;
  }

  // ------------------------------------------------------------ whole arrays and slices
  // A NumPy array value: a whole array, a row or a slice of one, or what an operation on
  // them computes.
  static bool np_array(const TypeRef& t) { return t && t->kind == Type::Kind::Array && !t->py_items(); }

  // The NumPy functions computed on arrays: those kernels compute exactly (NumPy's own
  // loops, called one element at a time for scalars, may take other paths for arrays).
  static bool elementwise_function(Builtin f) {
    switch (f) {
      case Builtin::Abs: case Builtin::NpAbs: case Builtin::NpFabs: case Builtin::NpSqrt: case Builtin::NpFloor:
      case Builtin::NpCeil: case Builtin::NpTrunc: case Builtin::NpRint: case Builtin::NpSign: case Builtin::NpSquare:
      case Builtin::NpCopysign: case Builtin::NpMinimum: case Builtin::NpMaximum: case Builtin::NpIsnan:
      case Builtin::NpIsinf: case Builtin::NpIsfinite: case Builtin::NpWhere: case Builtin::NpClip:
        return true;
      case Builtin::NpArctan2: case Builtin::NpHypot: case Builtin::NpPower: case Builtin::NpFmin:
      case Builtin::NpFmax:
        // Through NumPy's own loop, as the one-argument functions below; its self-test
        // also covers a number beside an array (the loop then sees a zero stride).
        return true;
      default:
        // Through NumPy's own loop, where its self-test found it gives the ufunc's values
        // for arrays too (codegen refuses it otherwise: oracle.h, UfuncLoop::arrays).
        return looped_unary(f);
    }
  }

  // An operation (Binary, Unary, Compare, or a Call whose args[0] is the callee) with an
  // array operand: NumPy applies it element by element, broadcasting, into a new array
  // (`temp`). With NumPy 2 (NEP 50) the elements' dtype is what the operation gives NumPy
  // scalars of the operands' dtypes (Python numbers stay weak), which is what the oracle
  // knows; the kernel computes each element as it computes such scalars, except that
  // wherever NumPy's scalar would warn (an int that wraps, a float that turns infinite)
  // the whole statement goes to CPython, whose array operation then decides.
  Expr elementwise(const Expr& e, std::vector<Expr> args, int ln) {
    using K = ExprNode::Kind;
    const std::string what = e->kind == K::Binary ? std::string("`") + ir::binop_name(e->binop) + "`"
                              : e->kind == K::Unary ? std::string("`") + ir::unop_name(e->unop) + "`"
                              : e->kind == K::Compare ? std::string("a comparison")
                                                      : std::string("`") + builtin_name(args[0]->type->builtin) + "()`";
    if (!in_.oracle->numpy_weak_scalars) fail("computes " + what + " on whole arrays (stagepy follows NumPy 2's rules for them only)", ln);
    if (e->kind == K::Binary && e->binop == ir::BinOp::Pow && np_array(args[0]->type) &&
        args[1]->kind == K::Const && !dtype_is_complex(args[0]->type->dtype) && args[0]->type->dtype != DType::Bool &&
        ((args[1]->value.kind == ir::ConstValue::Kind::Int && args[1]->value.i == 2) ||
         (args[1]->value.kind == ir::ConstValue::Kind::Float && args[1]->value.f == 2.0 && dtype_is_float(args[0]->type->dtype)))) {
      // a ** 2 of an array: NumPy squares it (np.square, `a * a`), in a's dtype.
      auto sq = std::make_shared<ExprNode>(*e);
      sq->binop = ir::BinOp::Mul;
      return elementwise(sq, {args[0], args[0]}, ln);
    }
    if (e->kind == K::Binary && e->binop == ir::BinOp::Pow && !e->inplace) return array_power(e, std::move(args), ln);
    if (e->kind == K::Binary && (e->binop == ir::BinOp::Pow || e->binop == ir::BinOp::MatMul))
      fail("computes " + what + " on whole arrays or slices (other than `** 2`)", ln);
    int ndim = 0;
    std::vector<TypeRef> elems;
    for (size_t k = e->kind == K::Call ? 1 : 0; k < args.size(); k++) {
      const TypeRef& t = args[k]->type;
      if (np_array(t)) {
        if (dtype_is_complex(t->dtype)) fail("computes " + what + " on an array of complex numbers", ln);
        ndim = std::max(ndim, t->ndim);
        elems.push_back(types::np_scalar(t->dtype));
      } else if (t->is_scalar() && t->kind != Type::Kind::Union && !t->is_complex()) {
        elems.push_back(t);
      } else {
        fail("computes " + what + " on an array and a " + t->str(), ln);
      }
    }
    const Oracle& o = *in_.oracle;
    TypeRef r;
    switch (e->kind) {
      case K::Binary: r = o.binary(e->binop, elems[0], elems[1]); break;
      case K::Unary: r = o.unary(e->unop, elems[0]); break;
      case K::Compare:
        if (e->cmpop == ir::CmpOp::Is || e->cmpop == ir::CmpOp::IsNot) fail("uses `is` on an array", ln);
        r = e->cmpop == ir::CmpOp::EQ || e->cmpop == ir::CmpOp::NE ? types::np_scalar(DType::Bool) : o.compare(elems[0], elems[1]);
        break;
      case K::Call: {
        Builtin f = args[0]->type->builtin;
        if (f == Builtin::NpWhere || f == Builtin::NpClip) {
          // NumPy's result_type of the values (where: x, y; clip: x, lo, hi), which for
          // numbers is the type `+` gives them (bools stay bools).
          if (elems.size() != 3) fail("calls " + what + " with " + std::to_string(elems.size()) + " arguments", ln);
          r = f == Builtin::NpWhere ? o.binary(ir::BinOp::Add, elems[1], elems[2])
                                    : o.binary(ir::BinOp::Add, elems[0], elems[1]);
          if (r && f == Builtin::NpClip) r = o.binary(ir::BinOp::Add, r, elems[2]);
          if (r && r->kind != Type::Kind::NpScalar)  // Python numbers only: NumPy's default types
            r = types::np_scalar(r->kind == Type::Kind::PyFloat ? DType::Float64
                                 : r->kind == Type::Kind::PyBool ? DType::Bool : DType::Int64);
          if (r && f == Builtin::NpWhere && !(elems[0]->kind == Type::Kind::NpScalar || elems[0]->kind == Type::Kind::PyBool ||
                                                  elems[0]->kind == Type::Kind::PyInt || elems[0]->kind == Type::Kind::PyFloat))
            r = nullptr;
          break;
        }
        if (f == Builtin::NpPower && !np_array(args[1]->type))
          fail("computes np.power() of a number and an array (NumPy's loop for it differs from the ufunc there)", ln);
        r = o.call(f == Builtin::Abs ? Builtin::NpAbs : f, elems);
        break;
      }
      default: break;
    }
    if (!r || r->kind != Type::Kind::NpScalar || dtype_is_complex(r->dtype))
      fail(what + " on arrays of " + elems[0]->str() + (elems.size() > 1 ? " and " + elems[1]->str() : std::string()) +
               " is not supported",
           ln);
    if (e->kind == K::Binary && e->inplace) {
      // a op= b writes a's elements: NumPy casts the result back with casting='same_kind'.
      const TypeRef& a = args[0]->type;
      if (!np_array(a)) fail("computes " + what + " with an array into a " + a->str(), ln);
      if (!a->writeable) fail("writes to a read-only array", ln);
      if (!same_kind_cast(r->dtype, a->dtype))
        fail("computes " + what + " in place into an array of " + std::string(dtype_name(a->dtype)) + " from " +
                 dtype_name(r->dtype) + " values (NumPy refuses the cast)",
             ln);
      if (a->ndim < ndim) fail("computes " + what + " in place into an array of fewer dimensions", ln);
    }
    auto c = std::make_shared<ExprNode>(*e);
    c->args = std::move(args);
    c->type = types::array_temp(r->dtype, ndim);
    return c;
  }
  // x ** y with an array of floats: ndarray.__pow__ is np.power(x, y) (NumPy's own loop,
  // through its self-test), except for a Python number exponent for which NumPy takes
  // another function: `** -1` np.reciprocal (1 / x here), `** 0.5` np.sqrt (`** 2`, np.square,
  // is handled before). So the exponent is a constant, a NumPy scalar or an array: a Python
  // number in a variable could be one of those values at run time.
  Expr array_power(const Expr& e, std::vector<Expr> args, int ln) {
    using K = ExprNode::Kind;
    const Expr& x = args[0];
    const Expr& y = args[1];
    if (!np_array(x->type)) fail("computes a number `**` an array (stagepy computes powers of float arrays)", ln);
    if (!dtype_is_float(x->type->dtype))
      fail("computes `**` of an array of " + std::string(dtype_name(x->type->dtype)) +
               " (stagepy computes powers of float arrays)",
           ln);
    const bool py_number = y->type->kind == Type::Kind::PyInt || y->type->kind == Type::Kind::PyFloat ||
                           y->type->kind == Type::Kind::PyBool;
    if (py_number && y->kind != K::Const)
      fail("computes `**` of an array with a Python number in a variable (NumPy picks np.reciprocal, np.sqrt or "
           "np.square for some values)",
           ln);
    if (y->kind == K::Const && y->value.kind == ir::ConstValue::Kind::Int && y->value.i == -1) {
      ir::ConstValue v1;
      v1.kind = ir::ConstValue::Kind::Float;
      v1.f = 1.0;
      auto one = ir::with_type(ir::make_const(v1, e->origin), types::py_float());
      auto div = std::make_shared<ExprNode>(*e);
      div->binop = ir::BinOp::TrueDiv;
      return elementwise(div, {one, x}, ln);
    }
    auto callee = ir::with_type(ir::make_const(ir::ConstValue{}, e->origin),
                                types::callable(y->kind == K::Const && y->value.kind == ir::ConstValue::Kind::Float &&
                                                        y->value.f == 0.5
                                                    ? Builtin::NpSqrt
                                                    : Builtin::NpPower));
    auto call = std::make_shared<ExprNode>(*e);
    call->kind = K::Call;
    call->kwnames.clear();
    if (callee->type->builtin == Builtin::NpSqrt) return elementwise(call, {callee, x}, ln);
    return elementwise(call, {callee, x, y}, ln);
  }

  // np.sum(x) of a one-dimensional NumPy array x (a slice, a row, or an operation on them,
  // which NumPy computes first): NumPy 2's pairwise summation in x's float type
  // (pairwise_sum.h), or an integer sum that wraps, as np.int64 (np.uint64 for unsigned
  // items; bools count). np.max(x), np.min(x): of x's dtype. np.mean(x) of floats: that sum
  // divided by the count, in x's float type.
  Expr np_reduce(const Expr& e, std::vector<Expr> args, const std::vector<TypeRef>& at, int ln) {
    const Builtin f = args[0]->type->builtin;
    const std::string fname = std::string(builtin_name(f)).replace(0, 6, "np.") + "()";
    if (at.size() != 1) fail("calls " + fname + " with " + std::to_string(at.size()) + " arguments", ln);
    const TypeRef& t = at[0];
    if (!np_array(t)) fail("calls " + fname + " on a " + t->str(), ln);
    if (t->ndim != 1) fail("calls " + fname + " on a " + std::to_string(t->ndim) + "-d array (stagepy reduces 1-d ones)", ln);
    if (dtype_is_complex(t->dtype)) fail("calls " + fname + " on an array of complex numbers", ln);
    if (!in_.oracle->numpy_weak_scalars) fail("calls " + fname + " (stagepy follows NumPy 2 only)", ln);
    if (f == Builtin::NpMean && !dtype_is_float(t->dtype))
      fail("calls np.mean() on integers (NumPy sums them as floats in buffered chunks)", ln);
    if (f == Builtin::NpMax || f == Builtin::NpMin) {
      // max/min: the array's own dtype.
      auto c = std::make_shared<ExprNode>(*e);
      c->args = std::move(args);
      c->type = types::np_scalar(t->dtype);
      return c;
    }
    if (dtype_is_float(t->dtype) && !in_.oracle->sum_verified())
      fail("calls np.sum() on floats, and the installed NumPy's sums did not match stagepy's pairwise summation "
           "in its self-test",
           ln);
    DType r = dtype_is_float(t->dtype) ? t->dtype
              : t->dtype == DType::Bool || dtype_is_signed(t->dtype) ? DType::Int64 : DType::UInt64;
    auto c = std::make_shared<ExprNode>(*e);  // (not typed(): its argument may be computed)
    c->args = std::move(args);
    c->type = types::np_scalar(r);
    return c;
  }

  // np.dot(x, y) and x @ y of two one-dimensional arrays of float64 (float32): a NumPy
  // scalar of that dtype, which kernels get from NumPy's own dot function for the dtype
  // (oracle.h: what both reach for such arrays, checked by a self-test). Arrays computed by
  // an operation, other dtypes and other ranks stay in CPython.
  Expr np_dot(const Expr& e, std::vector<Expr> args, const std::vector<TypeRef>& at, const std::string& what, int ln) {
    if (e->kind == ExprNode::Kind::Call && !e->kwnames.empty()) fail("calls " + what + " with keyword arguments", ln);
    if (at.size() != 2) fail("calls " + what + " with " + std::to_string(at.size()) + " arguments", ln);
    for (auto& t : at) {
      if (!np_array(t)) fail("computes " + what + " of a " + t->str() + " (stagepy computes it for two 1-d arrays)", ln);
      if (t->temp) fail("computes " + what + " of an array an operation computes", ln);
      if (t->ndim != 1) fail("computes " + what + " of a " + std::to_string(t->ndim) + "-d array (stagepy computes it for 1-d arrays)", ln);
    }
    const DType d = at[0]->dtype;
    if (at[1]->dtype != d || (d != DType::Float64 && d != DType::Float32))
      fail("computes " + what + " of arrays of " + std::string(dtype_name(at[0]->dtype)) + " and " + dtype_name(at[1]->dtype) +
               " (stagepy computes it for two float64 or two float32 arrays)",
           ln);
    if (!in_.oracle->dot_verified())
      fail("computes " + what + ", and NumPy's dot function did not give np.dot's and `@`'s values in stagepy's self-test", ln);
    auto c = std::make_shared<ExprNode>(*e);  // (not typed(): its arguments are arrays)
    c->args = std::move(args);
    c->type = types::np_scalar(d);
    return c;
  }

  // np.clip(x, lo, hi) of numbers: a NumPy scalar of their result type (NumPy computes a
  // 0-d array and returns its scalar).
  Expr clip_of_numbers(const Expr& e, std::vector<Expr> args, const std::vector<TypeRef>& at, int ln) {
    for (auto& t : at)
      if (!t->is_scalar() || t->kind == Type::Kind::Union || t->is_complex()) fail("calls np.clip() on a " + t->str(), ln);
    const Oracle& o = *in_.oracle;
    TypeRef r = o.binary(ir::BinOp::Add, at[0], at[1]);
    if (r) r = o.binary(ir::BinOp::Add, r, at[2]);
    if (!r) fail("calls np.clip() on " + at[0]->str() + ", " + at[1]->str() + " and " + at[2]->str(), ln);
    if (r->kind != Type::Kind::NpScalar) {
      // Python numbers only: NumPy's default types for them.
      r = r->kind == Type::Kind::PyFloat ? types::np_scalar(DType::Float64)
          : r->kind == Type::Kind::PyBool ? types::np_scalar(DType::Bool) : types::np_scalar(DType::Int64);
    }
    if (dtype_is_complex(r->dtype)) fail("calls np.clip() on complex numbers", ln);
    return typed(e, std::move(args), r);
  }

  // NumPy's can_cast(from, to, 'same_kind'): bools to anything; integers to integers and
  // floats, but signed ones not to unsigned ones; floats to floats.
  static bool same_kind_cast(DType from, DType to) {
    if (from == DType::Bool || from == to) return true;
    if (to == DType::Bool) return false;
    if (dtype_is_float(from)) return dtype_is_float(to);
    if (dtype_is_signed(from)) return dtype_is_float(to) || dtype_is_signed(to);
    return true;  // unsigned
  }

  // The value of a typed truth test that its operands' types decide: `a is None` / `a is
  // not None` of variables and constants where neither operand's type may hold both None
  // and other values.
  static std::optional<bool> known_truth(const Expr& c) {
    const Expr& x = c->kind == ExprNode::Kind::Truth ? c->args[0] : c;
    if (x->kind != ExprNode::Kind::Compare || (x->cmpop != ir::CmpOp::Is && x->cmpop != ir::CmpOp::IsNot))
      return std::nullopt;
    auto definite = [](const TypeRef& t) {
      return t && t->kind != Type::Kind::Union && t->kind != Type::Kind::Unknown && t->kind != Type::Kind::Unbound;
    };
    // (Operands that cannot raise: a bound variable, a constant.)
    for (auto& o : x->args)
      if (!(o->kind == ExprNode::Kind::Const || (o->kind == ExprNode::Kind::Load && !o->check_bound))) return std::nullopt;
    const TypeRef &a = x->args[0]->type, &b = x->args[1]->type;
    if (!definite(a) || !definite(b)) return std::nullopt;
    const bool an = a->kind == Type::Kind::None, bn = b->kind == Type::Kind::None;
    if (!an && !bn) return std::nullopt;
    const bool same = an && bn;
    return x->cmpop == ir::CmpOp::Is ? same : !same;
  }

  // For a typed test `v is None` / `v is not None` (`None is v`...) of a bound variable `v`
  // whose type is a union holding None and others: `v`'s type where the test is true (in
  // *t) and where it is false (in *f), None in one and the other members in the other.
  static void narrow_none(const Expr& c, Env* t, Env* f) {
    const Expr& x = c->kind == ExprNode::Kind::Truth ? c->args[0] : c;
    if (x->kind != ExprNode::Kind::Compare || (x->cmpop != ir::CmpOp::Is && x->cmpop != ir::CmpOp::IsNot)) return;
    const Expr &a = x->args[0], &b = x->args[1];
    auto none = [](const Expr& e) { return e->type && e->type->kind == Type::Kind::None; };
    const Expr& v = none(b) ? a : b;
    if (!none(v == a ? b : a) || v->kind != ExprNode::Kind::Load || v->check_bound || v->var < 0 ||
        (size_t)v->var >= t->size() || !v->type || v->type->kind != Type::Kind::Union)
      return;
    std::vector<TypeRef> rest;
    bool has_none = false;
    for (auto& m : v->type->elems) {
      if (m->kind == Type::Kind::None) has_none = true;
      else if (m->kind == Type::Kind::Unbound) return;
      else rest.push_back(m);
    }
    if (!has_none || rest.empty()) return;
    TypeRef other = types::join(rest);
    if (!other) return;
    const bool is = x->cmpop == ir::CmpOp::Is;
    (*t)[(size_t)v->var] = is ? types::none() : other;
    (*f)[(size_t)v->var] = is ? other : types::none();
  }

  // Inlined helper bodies compute on Python numbers only: a NumPy operation there could
  // warn, and its warning would name the helper's line, which the kernel does not track.
  void check_truth(const Expr& a, int ln) {
    auto k = a->type->kind;
    if (a->type->is_scalar() || k == Type::Kind::None) return;
    if (k == Type::Kind::Array && a->type->pylist) return;  // whether it is empty
    if (k == Type::Kind::Array && !a->type->py_items()) fail("tests the truth of a whole array", ln);
    fail("tests the truth of a " + a->type->str(), ln);
  }

  // `A.flat` / `A.ravel()` as the sequence of a loop (lift.cpp): A's items in C order, typed
  // as a one-dimensional read-only array over A's memory (codegen: flat_view). So where A
  // is a C-contiguous NumPy array (ravel() copies any other; `.flat` reads it in C order)
  // that no store of the nest may write: ravel()'s view and `.flat` read A as it is at each
  // step, which the kernel does too; the guard keeps that true for every call it serves.
  Expr flat_view(const Expr& e, const Expr& obj, int ln) {
    const Type& ot = *obj->type;
    const std::string what = "`." + e->name + "`";
    if (!np_array(obj->type) || ot.ndim < 1) fail("loops over " + what + " of a " + ot.str(), ln);
    if (ot.layout != Type::CContig) fail("loops over " + what + " of an array that is not C-contiguous", ln);
    if (dtype_is_complex(ot.dtype)) fail("loops over " + what + " of an array of complex numbers", ln);
    const int a = ir::root_var(obj);  // (a row `r` of a 2-d array reads as `A[i]`: A)
    bool written = a < 0;
    ir::for_each_stmt(nest_.root, [&](const Stmt& x) {
      for (auto& f : x->effects) {
        if (f.kind != ir::Effect::Kind::Store) continue;
        const int r = ir::root_var(f.base);
        written = written || r < 0 || r == a || nest_.vars[(size_t)r].assigned || overlap_at_entry(r, a);
      }
    });
    if (written) fail("loops over " + what + " of an array the nest may write", ln);
    return typed(e, {obj}, types::array(ot.dtype, 1, Type::CContig, false));
  }

  // The variable whose value at entry holds the list `base` (a subscript chain of it, or of
  // a row of it) of numbers read without some of the tag bits `bits` (Type::tags), or -1.
  int entry_list(const Expr& base, uint8_t bits) const {
    Expr e = base;
    while (e->kind == ExprNode::Kind::Subscript) e = e->args[0];
    if (e->kind != ExprNode::Kind::Load || !e->type) return -1;
    return retaggable_at_entry(e->type->kind == Type::Kind::View ? e->type->base : e->var, bits);
  }
  // `v`, if it holds a list of ints or floats at entry (not one the nest makes) that is read
  // without some of the tag bits `bits`; else -1.
  int retaggable_at_entry(int v, uint8_t bits) const {
    if (v < 0 || (size_t)v >= in_.entry.size() || !in_.entry[(size_t)v]) return -1;
    const Type& t = *in_.entry[(size_t)v];
    if (t.kind != Type::Kind::Array || !t.pylist || t.made || t.tuples) return -1;
    if (t.dtype != DType::Float64 && !(t.dtype == DType::Int64 && (bits & kTagsInts))) return -1;
    // (A tagged list without Type::columns is read whole already.)
    const uint8_t have = (uint8_t)(t.tags | (t.tagged && t.columns.empty() ? kTagsWhole : 0));
    return (have | bits) != have ? v : -1;
  }
  // The tag bits (Type::tags) a list must be read with to hold the elements of the lists of
  // numbers `a` and `b` (of one shape; ints, floats, tagged) one variable is given, or 0.
  static uint8_t tags_to_swap(const Type& a, const Type& b) {
    auto numbers = [](const Type& x) {
      return x.kind == Type::Kind::Array && x.pylist && !x.made && !x.tuples && (x.dtype == DType::Float64 || x.dtype == DType::Int64);
    };
    if (!numbers(a) || !numbers(b) || a.ndim != b.ndim || a.ragged != b.ragged) return 0;
    auto ints = [](const Type& x) { return x.tagged ? (x.tags & kTagsInts) != 0 : x.dtype == DType::Int64; };
    const bool i = ints(a) || ints(b), f = a.dtype == DType::Float64 || b.dtype == DType::Float64;
    const uint8_t need = (uint8_t)(((a.tags | b.tags) & kTagsNp) | (i && f ? kTagsInts : 0));
    return need;
  }
  // The tag bits (Type::tags) a list of numbers of type `lt` (ints, floats, tagged) must be
  // read with to hold the value of type `vt` a store gives it, or 0 (it holds all it may
  // get, or the value may be something else: a bool). NumPy floats among floats wherever
  // the value may be one; ints among floats (or floats among ints) only where the value can
  // be none of the list's element types (where it may be one, codegen checks it is, and
  // hands the store of another to CPython).
  static uint8_t tags_to_hold(const Type& lt, const TypeRef& vt, bool member) {
    if (lt.kind != Type::Kind::Array || !lt.pylist || lt.tuples || (lt.dtype != DType::Float64 && lt.dtype != DType::Int64))
      return 0;
    bool i = false, f = false, n = false, other = false;
    for (auto& m : members(vt)) {
      if (m->kind == Type::Kind::PyInt) i = true;
      else if (m->kind == Type::Kind::PyFloat) f = true;
      else if (m->kind == Type::Kind::NpScalar && m->dtype == DType::Float64) n = true;
      else if (m->kind != Type::Kind::Unbound) other = true;
    }
    const bool floats = lt.dtype == DType::Float64;  // (a tagged list's dtype is Float64)
    const bool ints = lt.tagged ? (lt.tags & kTagsInts) != 0 : lt.dtype == DType::Int64;
    uint8_t need = 0;
    if (n && floats && !(lt.tags & kTagsNp)) need |= kTagsNp;
    if (!member && !other) {
      if (i && !ints) need |= kTagsInts;
      if ((f || n) && !floats) need |= kTagsInts | (n ? kTagsNp : 0);
    }
    return need ? (uint8_t)(need | lt.tags) : 0;
  }

  TypeRef subscript_type(const Expr& base, const Expr& idx, int ln) {
    const Type& bt = *base->type;
    if (bt.kind == Type::Kind::Array && bt.py_items()) {
      // A list takes one index at a time: A[i][j], never A[i, j] (a TypeError in CPython).
      if (idx->type->kind == Type::Kind::Tuple) fail("indexes a " + bt.str() + " with a tuple", ln);
      if (idx->type->kind == Type::Kind::Slice) fail("slices a " + bt.str() + " (which copies it)", ln);
      if (!int_like(idx->type)) fail("indexes a list with a " + idx->type->str() + " (only integers are supported)", ln);
      if (bt.pystr) return types::py_char();
      if (bt.ndim == 1 && !bt.columns.empty()) {  // `p.x` of a table of objects (Type::columns)
        if (idx->kind == ExprNode::Kind::Const && idx->value.kind == ir::ConstValue::Kind::Int)
          return types::column_elem(bt, idx->value.i);
        fail("indexes a row of a table of objects by a computed column", ln);
      }
      if (bt.ndim == 1) return types::list_elem(bt);
      return types::py_list_like(bt, bt.ndim - 1);
    }
    if (bt.kind == Type::Kind::Array) {
      std::vector<TypeRef> parts;
      if (idx->type->kind == Type::Kind::Tuple) parts = idx->type->elems;
      else parts = {idx->type};
      int slices = 0;
      for (auto& p : parts) {
        if (p->kind == Type::Kind::Slice) {
          slices++;
          continue;
        }
        if (!int_like(p)) fail("indexes an array with a " + p->str() + " (only integers and slices are supported)", ln);
      }
      int k = (int)parts.size();
      if (k > bt.ndim) fail("indexes a " + std::to_string(bt.ndim) + "-d array with " + std::to_string(k) + " indices", ln);
      if (slices) {
        if (dtype_is_complex(bt.dtype)) fail("slices an array of complex numbers", ln);
        if (!in_.oracle->numpy_weak_scalars) fail("slices an array (stagepy follows NumPy 2's rules for them only)", ln);
        return types::array(bt.dtype, bt.ndim - (k - slices), Type::Strided, bt.writeable);
      }
      if (k == bt.ndim) return types::np_scalar(bt.dtype);
      auto layout = bt.layout == Type::CContig ? Type::CContig : Type::Strided;
      return types::array(bt.dtype, bt.ndim - k, layout, bt.writeable);
    }
    if (bt.kind == Type::Kind::Tuple) {
      if (!is_int_scalar(idx->type)) fail("indexes a tuple with a " + idx->type->str(), ln);
      if (idx->kind == ExprNode::Kind::Const) {
        long long i = idx->value.i, n = (long long)bt.elems.size();
        if (i < 0) i += n;
        if (i < 0 || i >= n) fail("indexes a tuple out of range", ln);
        return bt.elems[(size_t)i];
      }
      TypeRef r = types::join(bt.elems);
      if (!r || !types::uniform(r) || r->kind == Type::Kind::Union) fail("indexes a tuple of mixed types", ln);
      return r;
    }
    fail("indexes a " + bt.str(), ln);
  }

  // A variable holding a row (`row = A[i]`) read: `A[i]` with the index it keeps. The
  // container's variable is never reassigned, so it is the row the assignment took (a list's
  // inner list, or a view of an array's memory). The read is the subscript that took the
  // row, again with the same index: that subscript's facts hold for it (the variable holds
  // no row at entry, only rows taken in this call).
  Expr view_row(const Expr& load) {
    const TypeRef& v = load->type;
    Expr base = ir::with_type(ir::make_load(v->base, load->origin), entry_type(v->base));
    Expr at = ir::make_as_type(load, types::py_int());
    return ir::with_type(ir::make_subscript(base, at, v->origin >= 0 ? v->origin : ir::kInlinedOrigin), v->elems[0]);
  }
  TypeRef entry_type(int var) const { return var < (int)in_.entry.size() && in_.entry[var] ? in_.entry[var] : types::unbound(); }

  // `v = A[i]` taking a row: the index to keep, checked by taking the row once (nullptr if
  // this is not such a row: A is reassigned in the nest, or the index not a 64-bit int).
  // (`why`: what keeps it from being one, for the report.)
  Expr row_index(const Expr& value, int* base, std::string* why) {
    if (value->kind != ExprNode::Kind::Subscript) {
      *why = "a list or array it computes";
      return nullptr;
    }
    const Expr& b = value->args[0];
    const Expr& i = value->args[1];
    int var = b->kind == ExprNode::Kind::Load ? b->var : b->kind == ExprNode::Kind::Attr ? b->pseudo : -1;
    const char* what = b->type && b->type->pylist ? "a row of a list" : "a row or view of an array";
    if (var < 0) {
      *why = std::string(what) + " it cannot name (rows of rows are not supported)";
      return nullptr;
    }
    if (nest_.vars[(size_t)var].assigned) {
      *why = std::string(what) + ", " + vname(var) + ", that the nest " +
             (nest_.vars[(size_t)var].resized ? "grows or shrinks" : "reassigns");
      return nullptr;
    }
    if (b->check_bound) {
      *why = std::string(what) + ", " + vname(var) + ", that may be unset there";
      return nullptr;
    }
    const Type& it = *i->type;
    if (!(it.kind == Type::Kind::PyInt || (it.kind == Type::Kind::NpScalar && it.dtype == DType::Int64))) {
      *why = std::string(what) + " at an index that is not one int (a slice or several indices)";
      return nullptr;
    }
    if (value->type->dtype == DType::Complex64 || value->type->dtype == DType::Complex128) {
      *why = "a row of complex numbers";
      return nullptr;
    }
    *base = var;
    return ir::make_seq({value, ir::make_as_type(i, types::py_int())}, value->origin);
  }

  // The variable an attribute is read from: a variable, or a module's attribute itself
  // (`np.random` of `np.random.rand`, bind_module_attributes).
  static int base_of(const Expr& attr) {
    const Expr& b = attr->args[0];
    return b->kind == ExprNode::Kind::Load ? b->var : b->pseudo;
  }
  // An attribute of a module or an object, read at entry into its pseudo-variable.
  static bool object_attribute(const Expr& attr, const Env& env) {
    if (attr->pseudo < 0) return false;
    const TypeRef& t = env[base_of(attr)];
    return !unbound(t) && (t->kind == Type::Kind::Module || t->kind == Type::Kind::Object);
  }

  // The lifter's steps of sum()/min()/max()/any()/all() over a generator expression
  // (lift.cpp), once the callee is known to be the builtin (ir.h: Call's name). "init": the
  // initial value (0, sum's start, False, True); sum(total, compensation, item) as "total"
  // and "compensation" is one step, and sum(total, compensation) as "result" the value
  // sum() returns; min/max(answer, seen) as "result" the answer, once an item came. sum()
  // adds as `+` does (its int fast path gives the same values), except that from Python
  // 3.12 on a float total meeting Python floats runs Neumaier's compensated summation,
  // which is spelled out here exactly as CPython's builtin_sum_impl computes it.
  Expr reduction(const Expr& e, Builtin f, const std::vector<Expr>& args, const std::vector<TypeRef>& at,
                 const Env& env, int ln) {
    const int o = e->origin;
    auto constant = [&](ir::ConstValue::Kind k, double x, bool b) {
      ir::ConstValue v;
      v.kind = k;
      v.f = x;
      v.b = b;
      return ir::make_const(v, o);
    };
    const std::string& step = e->name;
    if (f == Builtin::Max || f == Builtin::Min) {
      // "result" (answer, seen): the answer, once an item came.
      if (step != "result" || at.size() != 2) fail("internal error: a step of min()/max() named " + step, ln);
      return ir::make_guard(args[2], args[1]);
    }
    if (step == "init") {
      if (at.empty())
        return expr(f == Builtin::Sum ? constant(ir::ConstValue::Kind::Int, 0, false)
                                      : constant(ir::ConstValue::Kind::Bool, 0, f == Builtin::All), env);
      if (f != Builtin::Sum || at.size() > 1)
        fail(std::string("calls ") + builtin_name(f) + "() on something other than a generator expression", ln);
      if (!at[0]->is_scalar()) fail("calls sum() with a start that is a " + at[0]->str(), ln);
      return args[1];
    }
    if (f != Builtin::Sum || !((step == "result" && at.size() == 2) || at.size() == 3))
      fail("internal error: a step of sum() with " + std::to_string(at.size()) + " arguments", ln);
    auto has = [&](const TypeRef& t, std::initializer_list<Type::Kind> ks) {
      for (auto& m : members(t))
        for (auto k : ks)
          if (m->kind == k) return true;
      return false;
    };
    auto only = [&](const TypeRef& t, std::initializer_list<Type::Kind> ks) {
      for (auto& m : members(t)) {
        bool in = false;
        for (auto k : ks) in = in || m->kind == k;
        if (!in) return false;
      }
      return true;
    };
    using TK = Type::Kind;
    const Expr& total = e->args[1];
    const Expr& comp = e->args[2];
    // A nonzero compensation implies a float total: it grows only while the total and the
    // item are Python floats, and goes back to 0 when the total leaves the float path. So
    // the result and the step leaving the path may add it whatever the total's type.
    const bool compensated = nest_.py_version >= 312 && has(at[0], {TK::PyFloat});
    const std::string why = "sums Python floats with sum() where stagepy cannot follow its compensated summation "
                            "(Python 3.12+): the total or the items change type";
    // The total with the compensation added, as CPython does when leaving the float path:
    // only a nonzero finite one (c - c == 0 holds for finite c only).
    auto flushed = [&]() {
      Expr nonzero = ir::make_compare(ir::CmpOp::NE, comp, constant(ir::ConstValue::Kind::Float, 0, false), o);
      Expr finite = ir::make_compare(ir::CmpOp::EQ, ir::make_binary(ir::BinOp::Sub, comp, comp, false, o),
                                     constant(ir::ConstValue::Kind::Float, 0, false), o);
      Expr both = ir::make_cond(nonzero, finite, nonzero, o);
      return ir::make_cond(both, ir::make_binary(ir::BinOp::Add, total, comp, false, o), total, o);
    };
    if (step == "result") return expr(compensated ? flushed() : total, env);
    const Expr& item = e->args[3];
    const TypeRef& it = at[2];
    const bool float_items = only(it, {TK::PyFloat}), int_items = only(it, {TK::PyInt, TK::PyBool});
    const bool other_items = !has(it, {TK::PyFloat, TK::PyInt, TK::PyBool});
    if (compensated && !(other_items || int_items || (float_items && at[0]->kind == TK::PyFloat))) fail(why, ln);
    if (step == "total") {
      Expr base = compensated && other_items ? flushed() : total;
      return expr(ir::make_binary(ir::BinOp::Add, base, item, false, o), env);
    }
    if (step != "compensation") fail("internal error: a step of sum() named " + step, ln);
    if (!compensated || int_items) return expr(comp, env);
    if (other_items) return expr(constant(ir::ConstValue::Kind::Float, 0, false), env);
    // Neumaier: t = total + x; c += (|total| >= |x|) ? (total - t) + x : (x - t) + total.
    auto add = [&](const Expr& a, const Expr& b) { return ir::make_binary(ir::BinOp::Add, a, b, false, o); };
    auto sub = [&](const Expr& a, const Expr& b) { return ir::make_binary(ir::BinOp::Sub, a, b, false, o); };
    auto fabs_ = [&](const Expr& a) {  // NaN stays NaN, so comparisons with it fail as fabs's do
      Expr neg = ir::make_compare(ir::CmpOp::LT, a, constant(ir::ConstValue::Kind::Float, 0, false), o);
      return ir::make_cond(neg, ir::make_unary(ir::UnOp::Neg, a, o), a, o);
    };
    Expr t = add(total, item);
    Expr bigger = ir::make_compare(ir::CmpOp::GE, fabs_(total), fabs_(item), o);
    Expr delta = ir::make_cond(bigger, add(sub(total, t), item), add(sub(item, t), total), o);
    return expr(add(comp, delta), env);
  }

  Expr call(const Expr& e, const Env& env, int ln) {
    if (e->name == ir::kRandomDraw) {  // (random_call's draw: its callee typed already)
      std::vector<Expr> args = {e->args[0]};
      for (size_t i = 1; i < e->args.size(); i++) {  // (random.choice's len(seq): typed already)
        const bool typed_already = e->args[i]->type && e->args[i]->type->kind != Type::Kind::Unknown;
        args.push_back(typed_already ? e->args[i] : expr(e->args[i], env));
      }
      for (auto& a : args)
        if (unbound(a->type)) return typed(e, args, types::unbound());
      auto c = std::make_shared<ExprNode>(*e);
      c->name.clear();
      if (e->args[0]->type->builtin != Builtin::RandomBelow) return typed(c, args, types::py_float());
      for (auto& m : members(args[1]->type))  // (of Python ints, random_call: an int)
        if (m->kind != Type::Kind::PyInt && m->kind != Type::Kind::PyBool)
          fail("internal error: a random int below a " + args[1]->type->str(), ln);
      return typed(c, args, types::py_int());
    }
    // L.append(x), L.pop() of a list that grows and shrinks.
    if (resize_var(nest_, e) >= 0) return resize(e, env, ln);
    // c.isdigit() ... c.upper() of a character of a str.
    if (e->args[0]->kind == ExprNode::Kind::Attr && !object_attribute(e->args[0], env)) {
      static const std::pair<const char*, Builtin> kCharMethods[] = {
          {"isdigit", Builtin::CharIsDigit}, {"isdecimal", Builtin::CharIsDecimal}, {"isnumeric", Builtin::CharIsNumeric},
          {"isalpha", Builtin::CharIsAlpha}, {"isalnum", Builtin::CharIsAlnum},     {"isspace", Builtin::CharIsSpace},
          {"isupper", Builtin::CharIsUpper}, {"islower", Builtin::CharIsLower},     {"lower", Builtin::CharLower},
          {"upper", Builtin::CharUpper}};
      for (const auto& [name, f] : kCharMethods) {
        if (e->args[0]->name != name) continue;
        Expr obj = expr(e->args[0]->args[0], env);
        if (unbound(obj->type)) return typed(e, {obj}, types::unbound());
        if (obj->type->kind != Type::Kind::PyChar) break;  // (the attribute's own reason below)
        if (e->args.size() != 1 || !e->kwnames.empty()) fail(std::string("calls ") + name + "() with arguments", ln);
        Expr callee = typed(e->args[0], {obj}, types::callable(f));
        return typed(e, {callee, obj}, f == Builtin::CharLower || f == Builtin::CharUpper ? types::py_char() : types::py_bool());
      }
    }
    // z.conjugate(): a call of the builtin Conjugate on z.
    if (e->args[0]->kind == ExprNode::Kind::Attr && e->args[0]->name == "conjugate" && !object_attribute(e->args[0], env)) {
      Expr obj = expr(e->args[0]->args[0], env);
      if (unbound(obj->type)) return typed(e, {obj}, types::unbound());
      if (obj->type->is_complex()) {
        if (e->args.size() != 1 || !e->kwnames.empty()) fail("calls conjugate() with arguments", ln);
        Expr callee = typed(e->args[0], {obj}, types::callable(Builtin::Conjugate));
        return typed(e, {callee, obj}, obj->type);
      }
      if (e->args.size() == 1 && e->kwnames.empty()) {
        // A real number's conjugate() is its .real.
        auto attr = std::make_shared<ExprNode>(*e->args[0]);
        attr->name = "real";
        attr->args = {e->args[0]->args[0]};
        return expr(attr, env);
      }
    }
    // x.sum(), x.max(), x.min() of a one-dimensional NumPy array: np.sum(x)...
    if (e->args[0]->kind == ExprNode::Kind::Attr && e->args.size() == 1 && e->kwnames.empty() &&
        (e->args[0]->name == "sum" || e->args[0]->name == "max" || e->args[0]->name == "min" ||
         e->args[0]->name == "mean") &&
        !object_attribute(e->args[0], env)) {
      Expr obj = expr(e->args[0]->args[0], env);
      if (unbound(obj->type)) return typed(e, {obj}, types::unbound());
      if (np_array(obj->type)) {
        auto callee = std::make_shared<ExprNode>(*e->args[0]);
        callee->args = {obj};
        const std::string& m = e->args[0]->name;
        callee->type = types::callable(m == "sum" ? Builtin::NpSum : m == "max" ? Builtin::NpMax
                                       : m == "min" ? Builtin::NpMin : Builtin::NpMean);
        return np_reduce(e, {callee, obj}, {obj->type}, ln);
      }
    }
    // x.copy() of a NumPy array of real numbers: a new array of its elements, as `x * 1`
    // computes it (the same dtype under NumPy's promotion of a Python int; every value, -0.0,
    // infinities and NaNs, unchanged), kept where a variable takes it (`un = u.copy()`).
    if (e->args[0]->kind == ExprNode::Kind::Attr && e->args[0]->name == "copy" && e->args.size() == 1 &&
        e->kwnames.empty() && !object_attribute(e->args[0], env)) {
      Expr obj = expr(e->args[0]->args[0], env);
      if (unbound(obj->type)) return typed(e, {obj}, types::unbound());
      if (np_array(obj->type)) {
        const DType d = obj->type->dtype;
        if (d == DType::Bool || dtype_is_complex(d)) fail("copies an array of " + std::string(dtype_name(d)), ln);
        ir::ConstValue one;
        one.kind = ir::ConstValue::Kind::Int;
        one.i = 1;
        return expr(ir::make_binary(ir::BinOp::Mul, e->args[0]->args[0], ir::make_const(one, ir::kInlinedOrigin), false,
                                    e->origin),
                    env);
      }
    }
    // x.dot(y) of a NumPy array: np.dot(x, y).
    if (e->args[0]->kind == ExprNode::Kind::Attr && e->args[0]->name == "dot" && e->args.size() == 2 &&
        e->kwnames.empty() && !object_attribute(e->args[0], env)) {
      Expr obj = expr(e->args[0]->args[0], env);
      if (unbound(obj->type)) return typed(e, {obj}, types::unbound());
      if (np_array(obj->type)) {
        Expr y = expr(e->args[1], env);
        if (unbound(y->type)) return typed(e, {obj, y}, types::unbound());
        auto callee = std::make_shared<ExprNode>(*e->args[0]);
        callee->args = {obj};
        callee->type = types::callable(Builtin::NpDot);
        return np_dot(e, {callee, obj, y}, {obj->type, y->type}, "`dot()`", ln);
      }
    }
    Expr callee = expr(e->args[0], env);
    std::vector<Expr> args = {callee};
    for (size_t i = 1; i < e->args.size(); i++) args.push_back(expr(e->args[i], env));
    for (auto& a : args)
      if (unbound(a->type)) return typed(e, args, types::unbound());
    const Type& ct = *callee->type;
    if (!e->kwnames.empty() && !(ct.kind == Type::Kind::Callable && !random_parameters(ct.builtin).empty()))
      fail("calls with keyword arguments", ln);
    if (ct.kind != Type::Kind::Callable) {
      std::string name = e->args[0]->kind == ExprNode::Kind::Load ? nest_.vars[e->args[0]->var].name
                       : e->args[0]->kind == ExprNode::Kind::Attr ? e->args[0]->name : "a value";
      if (ct.kind == Type::Kind::Module) fail("calls the module `" + name + "`", ln);
      if (ct.kind == Type::Kind::Function) fail("calls " + ct.str() + ", which is not inlined", ln);
      fail("calls `" + name + "` (a " + ct.str() + ")", ln);
    }
    Builtin f = ct.builtin;
    std::vector<TypeRef> at;
    for (size_t i = 1; i < args.size(); i++) at.push_back(args[i]->type);
    const std::string fname = std::string("`") + builtin_name(f) + "()`";
    if (e->name == ir::kFloatOfStr) {  // `float("inf")`, read as float(inf): of the builtin only
      if (f != Builtin::Float) fail("calls `float` on a str, and `float` holds " + std::string(builtin_name(f)) + ", not the builtin", ln);
    } else if (!e->name.empty()) {
      return reduction(e, f, args, at, env, ln);  // a lifter's step (ir.h)
    }
    if (f == Builtin::NpSum || f == Builtin::NpMax || f == Builtin::NpMin || f == Builtin::NpMean)
      return np_reduce(e, std::move(args), at, ln);
    if (f == Builtin::NpDot) return np_dot(e, std::move(args), at, fname, ln);
    if (f == Builtin::NpClip && at.size() == 3) {
      bool arrays = false;
      for (auto& t : at) arrays = arrays || np_array(t);
      if (!arrays) return clip_of_numbers(e, std::move(args), at, ln);
    }
    for (auto& t : at)
      if (np_array(t) && (is_numpy_builtin(f) || f == Builtin::Abs || f == Builtin::NpWhere || f == Builtin::NpClip)) {
        if (!elementwise_function(f))
          fail("calls " + fname + " on a " + t->str() + " (stagepy computes only +, -, *, /, //, %, comparisons, bitwise "
               "operators and NumPy's elementwise functions such as np.sqrt or np.exp on whole arrays and slices)", ln);
        return elementwise(e, args, ln);
      }
    switch (f) {
      case Builtin::RandomRandom:
        if (!at.empty()) fail("calls random.random() with arguments", ln);
        if (nest_.helper_called_twice) fail(kHelperTwice, ln);
        if (cross_shared_.count(e->origin))
          fail("computes one call of the random module in two statements (a chained comparison)", ln);
        return typed(e, args, types::py_float());
      case Builtin::RandomUniform: case Builtin::RandomRandint: case Builtin::RandomRandrange:
      case Builtin::RandomChoice: case Builtin::RandomGauss: case Builtin::RandomNormalvariate:
      case Builtin::RandomExpovariate:
        return random_call(e, f, args, at, env, ln);
      case Builtin::RandomBelow: case Builtin::RandomGaussZ: case Builtin::RandomNormalZ: case Builtin::RandomExpoZ:
        fail("internal error: a call of " + fname, ln);
      case Builtin::NpRandomRandom: case Builtin::NpRandomUniform: case Builtin::NpRandomRandint:
      case Builtin::NpRandomStandardNormal: case Builtin::NpRandomNormal: case Builtin::NpRandomExponential:
        return numpy_random_call(e, f, args, at, env, ln);
      case Builtin::MathHypot:
        if (!in_.oracle->hypot_verified())
          fail("calls math.hypot(), and stagepy's did not give CPython's results on samples", ln);
        break;
      case Builtin::Divmod: {
        // (a // b, a % b): CPython's divmod of Python ints and floats computes both parts as
        // those operators do. Any error hands the statement to CPython, which raises divmod's
        // own. (Of NumPy scalars it is np.divmod, whose warnings name divmod: not here.)
        if (at.size() != 2) fail("calls divmod() with " + std::to_string(at.size()) + " arguments", ln);
        for (auto& t : at)
          for (auto& m : members(t))
            if (m->kind != Type::Kind::PyInt && m->kind != Type::Kind::PyFloat && m->kind != Type::Kind::PyBool)
              fail("calls divmod() on a " + t->str() + " (Python ints and floats only)", ln);
        const int o = ir::kInlinedOrigin;  // (no fact of the analysis is about these operators)
        return expr(ir::make_tuple({ir::make_binary(ir::BinOp::FloorDiv, e->args[1], e->args[2], false, o),
                                    ir::make_binary(ir::BinOp::Mod, e->args[1], e->args[2], false, o)},
                                   o),
                    env);
      }
      case Builtin::Ord: {
        if (at.size() != 1 || at[0]->kind != Type::Kind::PyChar)
          fail("calls ord() on " + (at.size() == 1 ? "a " + at[0]->str() : "other than one value") +
                   " (stagepy takes the ord() of a str's characters)", ln);
        return typed(e, args, types::py_int());
      }
      case Builtin::MathGcd: case Builtin::MathLcm: case Builtin::MathIsqrt: case Builtin::MathFactorial:
      case Builtin::MathComb: case Builtin::MathPerm: {
        // Python ints and bools, and NumPy integers up to int64 (taken by __index__, as
        // CPython does); CPython's TypeError for floats (and np.uint64, whose values may not
        // fit an int64) stay with CPython.
        if ((f == Builtin::MathIsqrt || f == Builtin::MathFactorial) && at.size() != 1)
          fail("calls " + fname + "() with " + std::to_string(at.size()) + " arguments", ln);
        if ((f == Builtin::MathComb && at.size() != 2) || (f == Builtin::MathPerm && at.size() != 1 && at.size() != 2))
          fail("calls " + fname + "() with " + std::to_string(at.size()) + " arguments", ln);
        for (auto& t : at)
          for (auto& m : members(t))
            if (m->kind != Type::Kind::PyInt && m->kind != Type::Kind::PyBool &&
                !(m->kind == Type::Kind::NpScalar && dtype_is_int(m->dtype) && m->dtype != DType::UInt64))
              fail("calls " + fname + "() on a " + t->str() + " (Python ints and NumPy integers up to int64 only)", ln);
        return typed(e, args, types::py_int());
      }
      case Builtin::Pow: {
        // pow(a, b) is a ** b (the same __pow__); pow(a, b, m) of Python ints (and bools) is
        // computed by the runtime (any other operand: CPython's TypeError or NumPy's).
        if (at.size() == 2)
          return expr(ir::make_binary(ir::BinOp::Pow, e->args[1], e->args[2], false, ir::kInlinedOrigin), env);
        if (at.size() != 3) fail("calls pow() with " + std::to_string(at.size()) + " arguments", ln);
        for (auto& t : at)
          for (auto& m : members(t))
            if (m->kind != Type::Kind::PyInt && m->kind != Type::Kind::PyBool)
              fail("calls pow() with a modulus on a " + t->str() + " (Python ints only)", ln);
        return typed(e, args, types::py_int());
      }
      case Builtin::CmathSqrt: case Builtin::CmathExp: case Builtin::CmathLog: case Builtin::CmathLog10:
      case Builtin::CmathSin: case Builtin::CmathCos: case Builtin::CmathTan: case Builtin::CmathSinh:
      case Builtin::CmathCosh: case Builtin::CmathTanh: case Builtin::CmathAsin: case Builtin::CmathAcos:
      case Builtin::CmathAtan: case Builtin::CmathAsinh: case Builtin::CmathAcosh: case Builtin::CmathAtanh:
      case Builtin::CmathPhase: case Builtin::CmathPolar:
      case Builtin::CmathRect: case Builtin::CmathIsnan: case Builtin::CmathIsinf: case Builtin::CmathIsfinite: {
        // cmath converts each argument as complex(x) would (rect's as float(x)): numbers only.
        const size_t want = f == Builtin::CmathRect ? 2 : 1;
        if (at.size() != want && !(f == Builtin::CmathLog && at.size() == 2))
          fail("calls " + fname + " with " + std::to_string(at.size()) + " arguments", ln);
        for (auto& t : at)
          for (auto& m : members(t)) {
            if (!m->is_scalar()) fail("calls " + fname + " on a " + m->str(), ln);
            if (f == Builtin::CmathRect && m->is_complex()) fail("calls " + fname + " on a complex number", ln);
          }
        if (f == Builtin::CmathPhase) return typed(e, args, types::py_float());
        if (f == Builtin::CmathIsnan || f == Builtin::CmathIsinf || f == Builtin::CmathIsfinite)
          return typed(e, args, types::py_bool());
        if (f == Builtin::CmathPolar) {
          // (r, phi): the modulus (this call) and the phase, both floats.
          Expr modulus = typed(e, args, types::py_float());
          Expr phase = typed(e, {typed(args[0], args[0]->args, types::callable(Builtin::CmathPhase)), args[1]}, types::py_float());
          return ir::with_type(ir::make_tuple({modulus, phase}, e->origin), types::tuple({types::py_float(), types::py_float()}));
        }
        return typed(e, args, types::py_complex());
      }
      case Builtin::Range: fail("uses range() outside a for statement", ln);
      case Builtin::Enumerate: case Builtin::Zip: case Builtin::Reversed:
        fail("uses " + fname + " outside a for statement", ln);
      case Builtin::Len: {
        if (at.size() != 1) fail("calls len() with " + std::to_string(at.size()) + " arguments", ln);
        if (at[0]->kind == Type::Kind::Array) {
          if (at[0]->ndim == 0) fail("calls len() on a 0-d array", ln);
          return typed(e, args, types::py_int());
        }
        if (at[0]->kind == Type::Kind::Tuple || at[0]->kind == Type::Kind::Appended) return typed(e, args, types::py_int());
        fail("calls len() on a " + at[0]->str(), ln);
      }
      case Builtin::Complex: {
        // complex(x) of a number, complex(re, im) of two real numbers: a Python complex.
        if (at.empty() || at.size() > 2) fail("calls complex() with " + std::to_string(at.size()) + " arguments", ln);
        for (size_t i = 0; i < at.size(); i++)
          for (auto& m : members(at[i])) {
            if (!m->is_scalar() || (m->is_complex() && (at.size() == 2 || m->kind != Type::Kind::PyComplex)))
              fail("calls complex() on a " + m->str(), ln);
          }
        return typed(e, args, types::py_complex());
      }
      case Builtin::Min: case Builtin::Max: {
        if (at.size() < 2) fail("calls " + fname + " on an iterable", ln);
        for (auto& t : at)
          if (!t->is_scalar()) fail("calls " + fname + " on a " + t->str(), ln);
        for (size_t i = 1; i < at.size(); i++)
          combine(at[0], at[i], [&](const TypeRef& x, const TypeRef& y) { return in_.oracle->compare(x, y); },
                  "a comparison in " + fname, ln);
        TypeRef r = types::join(at);
        if (!r) fail(fname + " of values that cannot share a variable", ln);
        return typed(e, args, r);
      }
      case Builtin::Sum: case Builtin::Any: case Builtin::All:  // the program's own: sum(row)...
        fail(std::string("calls ") + builtin_name(f) + "() on something other than a generator expression", ln);
      default: break;
    }
    int arity = builtin_arity(f);
    if (arity > 0 && (int)at.size() != arity) fail("calls " + fname + " with " + std::to_string(at.size()) + " arguments", ln);
    if (f == Builtin::Round && at.size() != 1) fail("calls round() with ndigits", ln);
    std::vector<std::vector<TypeRef>> combos = {{}};
    for (auto& t : at) {
      if (!t->is_scalar()) fail("calls " + fname + " on a " + t->str(), ln);
      std::vector<std::vector<TypeRef>> next;
      for (auto& c : combos)
        for (auto& m : members(t)) {
          auto d = c;
          d.push_back(m);
          next.push_back(d);
        }
      combos = std::move(next);
    }
    std::vector<TypeRef> rs;
    for (auto& c : combos) {
      TypeRef r = in_.oracle->call(f, c);
      if (!r) fail(fname + " is not supported for " + (c.empty() ? "no arguments" : c[0]->str()), ln);
      rs.push_back(r);
    }
    TypeRef r = types::join(rs);
    if (!r) fail(fname + " returns values that cannot share a variable", ln);
    return typed(e, args, r);
  }

  // ------------------------------------------------------------ environments
  // Joins environments; nullopt if none. Throws when a variable would hold values that
  // cannot live in one slot (two different kinds of arrays).
  std::optional<Env> merge(const std::vector<Env>& envs, int ln) {
    if (envs.empty()) return std::nullopt;
    Env out = envs[0];
    for (size_t k = 1; k < envs.size(); k++) {
      for (size_t v = 0; v < out.size(); v++) {
        if (types::same(out[v], envs[k][v])) continue;
        TypeRef j = types::join({out[v], envs[k][v]});
        if (!j) fail(vname((int)v) + " holds " + out[v]->str() + " or " + envs[k][v]->str() + " depending on the path", ln);
        out[v] = j;
      }
    }
    return out;
  }

  // Whether joining these two environments would leave a variable with types that cannot
  // share a computation (worth compiling the rest once per environment).
  bool conflict(const Env& a, const Env& b) const {
    for (size_t v = 0; v < a.size(); v++) {
      if (types::same(a[v], b[v])) continue;
      TypeRef j = types::join({a[v], b[v]});
      if (!j) return true;
      TypeRef r = types::without_unbound(j);
      if (r && !types::uniform(r)) return true;
    }
    return false;
  }

  // ------------------------------------------------------------ statements
  std::vector<Stmt> seq(const std::vector<Stmt>& ss, size_t i, Env env, LoopOuts& lo, std::optional<Env>& fall) {
    std::vector<Stmt> out;
    for (; i < ss.size(); i++) {
      const Stmt& s = ss[i];
      if (++emitted_ > in_.budget) fail("the nest needs too many type-specialized copies", s->line);
      switch (s->kind) {
        case StmtNode::Kind::Block: {
          std::optional<Env> f;
          auto inner = seq(s->body, 0, env, lo, f);
          out.push_back(ir::make_block(std::move(inner)));
          if (!f) return out;
          env = *f;
          break;
        }
        case StmtNode::Kind::Seg: out.push_back(seg(s, env)); break;
        case StmtNode::Kind::Break:
          lo.brk[s->loop].push_back(env);
          out.push_back(s);
          return out;
        case StmtNode::Kind::Continue:
          lo.cont[s->loop].push_back(env);
          out.push_back(s);
          return out;
        case StmtNode::Kind::Exit:  // nothing after it runs natively
          out.push_back(s);
          return out;
        case StmtNode::Kind::If:
        case StmtNode::Kind::For:
        case StmtNode::Kind::While: {
          // Returns the statements and the environments of the two ways on (or one).
          std::vector<Stmt> stmts;
          std::vector<std::optional<Env>> alts;
          if (s->kind == StmtNode::Kind::If) if_stmt(s, env, lo, stmts, alts);
          else if (s->kind == StmtNode::Kind::For) for_stmt(s, env, lo, stmts, alts);
          else while_stmt(s, env, lo, stmts, alts);
          std::vector<Env> live;
          for (auto& a : alts)
            if (a) live.push_back(*a);
          if (live.empty()) {
            for (auto& x : stmts) out.push_back(x);
            return out;
          }
          if (alts.size() == 2 && alts[0] && alts[1] && conflict(*alts[0], *alts[1]) && i + 1 < ss.size() &&
              emitted_ < in_.budget / 2) {
            // Compile the rest once per arm: append it to both arms of the final If.
            Stmt last = stmts.back();
            auto c = std::make_shared<StmtNode>(*last);
            for (int arm = 0; arm < 2; arm++) {
              std::vector<Stmt> body = c->body[arm]->body;
              auto rest = seq(ss, i + 1, *alts[arm], lo, fall);
              body.insert(body.end(), rest.begin(), rest.end());
              c->body[arm] = ir::make_block(std::move(body));
            }
            stmts.back() = c;
            for (auto& x : stmts) out.push_back(x);
            return out;
          }
          for (auto& x : stmts) out.push_back(x);
          env = *merge(live, s->line);
          break;
        }
        default:
          fail("a statement stagepy cannot type", s->line);
      }
    }
    if (fall) fall = merge({*fall, env}, -1);
    else fall = env;
    return out;
  }

  // A store into a row or slice of an array (typed base, index and value): the value is
  // a number, stored into every element, or an array broadcast to the target's shape (the
  // kernel checks the extents, and hands the statement to CPython where they differ).
  // NumPy reads an array value that is a view (not computed) when it stores it, so that
  // must come before any other store of the statement (`a[:], b[:] = b, a` would read the
  // new `a`): the kernel reads every value before the statement's first store.
  void section_store(const ir::Effect& f, int ln, bool stores_before) {
    const Type& bt = *f.base->type;
    TypeRef target = subscript_type(f.base, f.index, ln);
    if (bt.py_items()) fail("assigns to a slice of a " + bt.str(), ln);
    if (!bt.writeable) fail("writes to a read-only array", ln);
    if (dtype_is_complex(bt.dtype)) fail("assigns to a row or slice of an array of complex numbers", ln);
    const TypeRef& vt = f.value->type;
    if (np_array(vt)) {
      if (dtype_is_complex(vt->dtype)) fail("stores an array of complex numbers into a slice", ln);
      if (vt->ndim > target->ndim) fail("stores a " + vt->str() + " into a slice of fewer dimensions", ln);
      if (!vt->temp && stores_before) fail("stores an array view after another store in the same statement", ln);
      if (!in_.oracle->numpy_weak_scalars) fail("stores an array into a slice (stagepy follows NumPy 2's rules for them only)", ln);
      const Expr& v = f.value;
      if (v->kind == ExprNode::Kind::Binary && v->inplace && np_array(v->args[0]->type)) {
        // a[s] op= x: the operation wrote the elements of a[s] (its left operand) already.
        auto target_e = ir::with_type(ir::make_subscript(f.base, f.index, f.origin), target);
        if (!ir::same_pure_expr(v->args[0], target_e) && !(v->args[0]->kind == ExprNode::Kind::Load && f.base->kind == ExprNode::Kind::Load &&
                                                          v->args[0]->var == f.base->var))
          fail("stores the result of an in-place operation on one array into another", ln);
      }
      return;
    }
    if (vt->kind == Type::Kind::Tuple) {
      // `traj[i] = (x, y, z)`: NumPy converts the tuple to an array (its items' common
      // dtype) and casts that into the section. Only where that cast gives what storing each
      // item gives: floats (Python's or np.float64) into float64 or float32, Python ints into
      // int64, Python bools into bool; any of those, ints mixed with floats, into float64.
      bool floats = false, ints = false, bools = false;
      for (auto& it : vt->elems)
        for (auto& m : members(it)) {
          if (m->kind == Type::Kind::PyFloat || (m->kind == Type::Kind::NpScalar && m->dtype == DType::Float64)) floats = true;
          else if (m->kind == Type::Kind::PyInt) ints = true;
          else if (m->kind == Type::Kind::PyBool) bools = true;
          else fail("stores a " + vt->str() + " into a row or slice of an array", ln);
        }
      const DType d = bt.dtype;
      const bool ok = vt->elems.empty() ? false
                      : d == DType::Float64                    ? !(bools && (floats || ints))
                      : d == DType::Float32                    ? floats && !ints && !bools
                      : d == DType::Int64                      ? ints && !floats && !bools
                      : d == DType::Bool                       ? bools && !floats && !ints
                                                               : false;
      if (!ok) fail("stores a " + vt->str() + " into a row or slice of an array of " + std::string(dtype_name(d)), ln);
      return;
    }
    if (!vt->is_scalar()) fail("stores a " + vt->str() + " into a slice of an array", ln);
    for (auto& m : members(vt))
      if (m->is_complex()) fail("stores a complex number into an array of " + std::string(dtype_name(bt.dtype)), ln);
  }

  Stmt seg(const Stmt& s, Env& env) {
    auto c = std::make_shared<StmtNode>(*s);
    // The call changing a list's length the statement may hold.
    resize_ok_ = allowed_resize(c);
    std::vector<std::pair<int, TypeRef>> assigns;
    bool stores_before = false;
    bool makes_list_in_seg = false;
    for (auto& f : c->effects) {
      switch (f.kind) {
        case ir::Effect::Kind::Assign: {
          if (made_.count(f.var) && ir::makes_list(f.value)) {
            if (Expr m = made_list(f.value, env, f.var, s->line)) {
              // (One a statement: the runtime reuses the memory of a list no variable holds.)
              if (makes_list_in_seg) fail("makes two lists in one statement", s->line);
              makes_list_in_seg = true;
              f.value = m;
              if (unbound(m->type)) break;
              TypeRef old = env[f.var];
              if (!unbound(old) && !types::same(types::without_unbound(old), m->type)) {
                const TypeRef was = types::without_unbound(old);
                if (was->kind == Type::Kind::Array && was->made && was->dtype != m->type->dtype) {
                  // An empty list typed as ints where the class holds lists of floats: again.
                  if (m->args.empty() && empty_default_.count(f.var)) empty_again(f.var, was->dtype, s->line);
                  if (class_defaulted(f.var)) empty_again(f.var, m->type->dtype, s->line);
                }
                fail(vname(f.var) + " is given a new " + m->type->str() + " and holds a " +
                         types::without_unbound(old)->str() + " elsewhere",
                     s->line);
              }
              assigns.push_back({f.var, m->type});
              break;
            }
          }
          if (f.value->kind == ExprNode::Kind::NewList) {
            // `row = []` of a variable the nest only builds that list in (append_targets).
            if (!nest_.vars[(size_t)f.var].appended) fail("builds a list", line(f.value));
            f.value = new_list(f.value, env);
            assigns.push_back({f.var, f.value->type});
            break;
          }
          f.value = expr(f.value, env);
          TypeRef t = f.value->type;
          if (t->temp) {
            // `a op= x` of a whole array `a`: NumPy computes into a's elements, and `a`
            // stays the same object; a store into all of them, `a[:, :] = a op x`.
            const Expr& v = f.value;
            const bool in_place = v->kind == ExprNode::Kind::Binary && v->inplace &&
                                  v->args[0]->kind == ExprNode::Kind::Load && v->args[0]->var == f.var;
            if (in_place && v->args[0]->type->local)
              fail("changes the array " + vname(f.var) + " holds in place (an augmented assignment)", s->line);
            if (in_place && np_array(v->args[0]->type) && !v->args[0]->check_bound) {
              f.kind = ir::Effect::Kind::Store;
              f.base = v->args[0];
              std::vector<Expr> all;
              std::vector<TypeRef> ts;
              for (int d = 0; d < f.base->type->ndim; d++) {
                ir::ConstValue none;
                Expr n = ir::with_type(ir::make_const(none, v->origin), types::none());
                all.push_back(ir::with_type(ir::make_slice(n, n, n, v->origin), types::slice({types::none(), types::none(), types::none()})));
                ts.push_back(all.back()->type);
              }
              f.index = ir::with_type(ir::make_tuple(all, v->origin), types::tuple(ts));
              section_store(f, s->line, stores_before);
              stores_before = true;
              break;
            }
            // `d = X[i] - X[j]`: the variable keeps the new array (codegen computes it into
            // scratch memory of its own; it is written back as a new array). It holds only
            // such arrays, or nothing yet: one it held at entry counts as no value
            // (dispatch.cpp), as for rows.
            if (dtype_is_complex(t->dtype)) fail("keeps an operation on arrays of complex numbers in " + vname(f.var), s->line);
            TypeRef kept = types::array_local(t->dtype, t->ndim);
            TypeRef old = env[f.var];
            if (!unbound(old) && !types::same(types::without_unbound(old), kept))
              fail(vname(f.var) + " holds an operation on arrays here and a " + types::without_unbound(old)->str() +
                       " elsewhere",
                   s->line);
            assigns.push_back({f.var, kept});
            break;
          }
          if (t->kind == Type::Kind::Array && t->local)
            fail("gives " + vname(f.var) + " an array another variable holds (an operation on arrays it keeps)", s->line);
          if (t->kind == Type::Kind::Array && t->pystr) fail("assigns a str to " + vname(f.var), s->line);
          if (t->kind == Type::Kind::Array && f.value->kind != ExprNode::Kind::Load) {
            int base = -1;
            std::string why;
            Expr index = row_index(f.value, &base, &why);
            if (!index) fail("gives " + vname(f.var) + " " + why, s->line);
            TypeRef v = types::view(base, t, f.value->origin);
            f.value = ir::make_as_type(ir::with_type(index, types::py_int()), v);
            assigns.push_back({f.var, v});
            break;
          }
          if (t->kind == Type::Kind::Tuple || t->kind == Type::Kind::Module || t->kind == Type::Kind::Callable ||
              t->kind == Type::Kind::None || t->kind == Type::Kind::Object || t->kind == Type::Kind::Function)
            fail("assigns a " + t->str() + " to " + vname(f.var), s->line);
          if (t->kind == Type::Kind::Array) {
            // (A list the nest makes may share its variable with "unbound": types::join.)
            TypeRef old = unbound(env[f.var]) ? env[f.var] : types::without_unbound(env[f.var]);
            if (!unbound(old) && !types::same(old, t)) {
              // Lists of numbers swapped (`prev, cur = cur, prev`) where one holds what the
              // other's tags lack (np.float64s; ints among floats): both are read with both
              // tags, one call at a time.
              if (const uint8_t need = tags_to_swap(*old, *t)) {
                if (const int r = retaggable_at_entry(f.var, need); r >= 0)
                  throw SpecError{vname(f.var) + " is assigned lists holding numbers of different types", s->line, r, need};
                if (const int r = entry_list(f.value, need); r >= 0)
                  throw SpecError{vname(f.var) + " is assigned lists holding numbers of different types", s->line, r, need};
              }
              fail(vname(f.var) + " is assigned arrays of different types", s->line);
            }
          }
          assigns.push_back({f.var, t});
          break;
        }
        case ir::Effect::Kind::Store: {
          f.base = expr(f.base, env);
          f.index = expr(f.index, env);
          f.value = expr(f.value, env);
          if (unbound(f.base->type) || unbound(f.index->type) || unbound(f.value->type)) break;
          const Type& bt = *f.base->type;
          if (bt.kind != Type::Kind::Array) fail("assigns an item of a " + bt.str(), s->line);
          if (bt.local) fail("changes an element of an operation on arrays a variable keeps", s->line);
          TypeRef elem = subscript_type(f.base, f.index, s->line);
          if (elem->kind == Type::Kind::Array) {
            section_store(f, s->line, stores_before);
            stores_before = true;
            break;
          }
          stores_before = true;
          if (np_array(f.value->type)) fail("stores an array into an element of an array", s->line);
          if (bt.tuples) fail("stores into a " + bt.str() + " (tuples do not change)", s->line);
          if (!bt.writeable) fail("writes to a read-only array", s->line);
          if (!f.value->type->is_scalar()) fail("stores a " + f.value->type->str() + " into an array", s->line);
          for (auto& m : members(f.value->type))
            if (m->is_complex() && !dtype_is_complex(bt.dtype))
              fail("stores a complex number into an array of " + std::string(dtype_name(bt.dtype)), s->line);
          // A list keeps the objects it is given: only a value of its elements' own type
          // keeps it a list stagepy can hold (an int stored into a list of floats stays an
          // int). Codegen hands a store of any other value to CPython (`s = 0` before a
          // loop that may run no iteration and `L[i] = s` after it: the int is stored only
          // when the loop was empty).
          // A column of a table of objects whose elements share one type (Type::columns)
          // takes a value of that type only: another makes the dispatcher read the table
          // again as a whole (each element the union of what its tags say).
          if (bt.pylist && bt.ndim == 1 && !bt.columns.empty() && elem->kind != Type::Kind::Union &&
              !types::same(f.value->type, elem)) {
            uint8_t need = bt.tags | kTagsWhole;
            for (auto& m : members(f.value->type)) {
              if (m->kind == Type::Kind::PyInt) need |= kTagsInts;
              if (m->kind == Type::Kind::PyBool) need |= kTagsBools;
              if (m->kind == Type::Kind::NpScalar && m->dtype == DType::Float64) need |= kTagsNp;
            }
            if (const int r = entry_list(f.base, need); r >= 0)
              throw SpecError{"stores a " + f.value->type->str() + " into an attribute holding " + elem->str() + "s", s->line, r,
                              need};
            fail("stores a " + f.value->type->str() + " into an attribute holding " + elem->str() + "s", s->line);
          }
          if (bt.pylist && !types::same(f.value->type, elem)) {
            const ItemFit fit = item_fit(f.value->type, elem);
            const bool np_float = fit.np_float;
            // NumPy floats into a list of floats that was one at entry: its elements get
            // tags (their type is float | np.float64), and the dispatcher reads it again so.
            // (A list the nest makes: the variables passing it on hold theirs tagged.)
            if (np_float && bt.made && bt.dtype == DType::Float64 && !bt.tagged)
              if (const int r = ir::root_var(f.base); r >= 0)
                throw SpecError{"stores a np.float64 into a list of floats the nest makes", s->line, r};
            // Ints into a list of floats read at entry, or floats into one of ints, likewise
            // (the union of ints and floats: `dist = [inf] * n; dist[s] = 0`).
            if (!bt.made)
              if (const uint8_t need = tags_to_hold(bt, f.value->type, fit.member))
                if (const int r = entry_list(f.base, need); r >= 0)
                  throw SpecError{std::string("stores ") +
                                      (need & ~bt.tags & kTagsInts ? bt.dtype == DType::Int64 ? "a float into a list of ints" : "an int into a list of floats"
                                                                   : "a np.float64 into a list of floats"),
                                  s->line, r, need};
            if (fit.never) fail("stores a " + f.value->type->str() + " into a " + bt.str(), s->line);
          }
          // A buffer converts what it is given as its own setitem does: ints (and bools)
          // into integer and float items, floats into float items, bools into '?' items.
          if (bt.pybuf) {
            const Type& vt = *f.value->type;
            bool ok = bt.dtype == DType::Bool ? vt.kind == Type::Kind::PyBool
                    : dtype_is_int(bt.dtype)  ? vt.kind == Type::Kind::PyInt || vt.kind == Type::Kind::PyBool
                    : bt.dtype == DType::Float64 &&
                          (vt.kind == Type::Kind::PyInt || vt.kind == Type::Kind::PyBool || vt.kind == Type::Kind::PyFloat);
            if (!ok) fail("stores a " + vt.str() + " into a " + bt.str(), s->line);
          }
          break;
        }
        case ir::Effect::Kind::Eval:
          f.value = expr(f.value, env);
          if (f.value->type->temp) fail("computes an operation on arrays whose result it drops", s->line);
          break;
        case ir::Effect::Kind::Append: {
          // `out.append(x)` of a list the nest only appends to: the kernel collects x's bits
          // and type tag, the dispatcher boxes and appends them.
          const int lv = analysis::appended_list_var(f.base);
          f.base = expr(f.base, env);
          const TypeRef& lt = f.base->type;
          if (unbound(lt)) fail("appends to " + vname(lv) + ", which holds nothing", s->line);
          if (lt->kind != Type::Kind::Appended)
            fail("calls " + vname(lv) + ".append(), and " + vname(lv) + " is a " + lt->str(), s->line);
          f.value = f.value->kind == ExprNode::Kind::NewList ? new_list(f.value, env) : expr(f.value, env);
          check_item(f.value->type, "appends", "to " + vname(lv), s->line);
          break;
        }
      }
    }
    {
      std::vector<Expr> es;
      for (auto& f : c->effects) es.push_back(f.base), es.push_back(f.index), es.push_back(f.value);
      draws_once(es, s->line, true);
    }
    for (auto& [v, t] : assigns) {
      env[v] = t;
      note_tag(t);
    }
    return c;
  }

  void if_stmt(const Stmt& s, const Env& env, LoopOuts& lo, std::vector<Stmt>& stmts,
               std::vector<std::optional<Env>>& alts) {
    Expr cond = expr(s->cond, env);
    if (!unbound(cond->type)) check_truth(cond, s->line);
    draws_once({cond}, s->line);
    std::optional<Env> ft, ff;
    // `if best is None or x < best:` (its `or` two Ifs): where the types decide the test
    // (`best` None before the first iteration that assigns it, a float after), only the way
    // taken is typed; the other, which may not type at all (x < None), is left empty and
    // passes no environment on.
    const std::optional<bool> known = known_truth(cond);
    // `if best is None or x < best:` where `best` may hold None or a number at this point
    // (assigned on some iterations only): each way sees it as what the test says it holds
    // (the value is unchanged, its slot's tag says which it is).
    Env env_t = env, env_f = env;
    narrow_none(cond, &env_t, &env_f);
    auto then_s = known == false ? std::vector<Stmt>{} : seq(s->body[0]->body, 0, env_t, lo, ft);
    auto else_s = known == true ? std::vector<Stmt>{} : seq(s->body[1]->body, 0, env_f, lo, ff);
    stmts.push_back(ir::make_if(cond, ir::make_block(std::move(then_s)), ir::make_block(std::move(else_s)), s->resume, s->line));
    alts = {ft, ff};
  }

  // Types a loop body to a fixpoint from `head`, peeling once if the first iteration
  // changes types. Returns (steady body, first-iteration body or null, the environment
  // when the range is exhausted after at least one iteration).
  struct LoopTyping {
    std::vector<Stmt> steady, first;
    bool peeled = false;
    std::vector<Env> exits;  // break environments
    std::optional<Env> head;
  };

  // Variables that every iteration of `body` assigns before anything can read them or
  // leave the iteration: those its leading straight-line segments assign without reading
  // them first (a segment reads all its values before it assigns). Their type at the loop
  // head never reaches the body (`acc = 0.0` at the top of a loop), so a change of it is
  // no reason to peel the first iteration.
  // A for loop that always runs (below) counts too: its range is evaluated, then its
  // variable assigned, then its body runs (`for j in range(m): x = A[i, j]` inside `for i`:
  // j's and x's types at i's head, unbound before the first run, are no reason to peel i).
  std::vector<bool> assigned_first(const std::vector<Stmt>& body, size_t nvars) const {
    std::vector<bool> assigned(nvars, false), read(nvars, false);
    for (const Stmt& s : body) {
      if (s->kind == StmtNode::Kind::For && always_runs(s)) {
        auto reads = [&](const Expr& e) {
          if (e->kind == ExprNode::Kind::Load && e->var >= 0 && (size_t)e->var < nvars && !assigned[e->var])
            read[e->var] = true;
        };
        for (auto& a : s->args) ir::walk_expr(a, reads);
        for (auto& o : s->over) ir::walk_expr(o, reads);
        ir::walk_expr(s->range_callee, reads);
        ir::walk_expr(s->reversed_callee, reads);
        ir::walk_expr(s->zip_callee, reads);
        if (s->var >= 0 && (size_t)s->var < nvars && !read[s->var]) assigned[s->var] = true;
        // ... and what its body assigns first (`x = A[i, j]` there).
        const std::vector<bool> inner = assigned_first(s->body[0]->body, nvars);
        for (size_t v = 0; v < nvars; v++)
          if (inner[v] && !read[v]) assigned[v] = true;
        break;
      }
      if (s->kind != StmtNode::Kind::Seg) break;
      ir::for_each_expr(s, [&](const Expr& e) {
        if (e->kind == ExprNode::Kind::Load && e->var >= 0 && (size_t)e->var < nvars && !assigned[e->var])
          read[e->var] = true;
      });
      for (auto& f : s->effects)
        if (f.kind == ir::Effect::Kind::Assign && f.var >= 0 && (size_t)f.var < nvars && !read[f.var])
          assigned[f.var] = true;
    }
    return assigned;
  }

  // Types a loop body to a fixpoint of its head environment, peeling the first iteration
  // when it changes the types of variables bound before the loop that the body may read
  // before assigning. Breaks and continues that target enclosing loops (a while loop's
  // structured `continue`, a condition that leaves two loops) are handed on to `outer`
  // from the copies of the body that are kept.
  LoopTyping loop_body(const Stmt& s, const std::vector<Stmt>& body, const Env& entry0, int loop_var,
                       LoopOuts& outer) {
    auto enter = [&](Env e) {
      if (loop_var >= 0) {
        e[loop_var] = types::py_int();
        note_tag(types::py_int());
      }
      return e;
    };
    // Types the body once from head `h`: the body, the jumps it makes, and the environment
    // at its back edge (continues and the end of the body), if any.
    std::optional<Env> last_back;  // the back-edge environment of the latest typing
    auto once = [&](const Env& h, std::vector<Stmt>& out_body, LoopOuts& lo) {
      lo = LoopOuts();
      std::optional<Env> f;
      out_body = seq(body, 0, enter(h), lo, f);
      std::vector<Env> back = lo.cont[s->loop];
      if (f) back.push_back(*f);
      last_back = merge(back, s->line);
      return last_back;
    };
    // Iterates from `h` until the head environment is a fixpoint.
    auto settle = [&](Env h, std::vector<Stmt>& out_body, LoopOuts& lo) -> Env {
      for (int round = 0; round < 6; round++) {
        auto back = once(h, out_body, lo);
        if (!back) return h;
        Env next = *merge({h, *back}, s->line);
        if (same_env(next, h)) return h;
        h = next;
      }
      fail("the types in a loop keep changing", s->line);
    };
    auto forward = [&](const LoopOuts& lo) {
      for (auto& [loop, envs] : lo.brk)
        if (loop != s->loop) outer.brk[loop].insert(outer.brk[loop].end(), envs.begin(), envs.end());
      for (auto& [loop, envs] : lo.cont)
        if (loop != s->loop) outer.cont[loop].insert(outer.cont[loop].end(), envs.begin(), envs.end());
    };
    // The loop variable is an int at the head whatever it held before the loop.
    const Env entry = enter(entry0);
    const std::vector<bool> overwritten = assigned_first(body, entry.size());
    // After the last iteration the variables each iteration overwrites hold what the
    // back edge holds, whatever the head's type also allows for the first iteration.
    auto exhausted = [&](Env h) {
      if (last_back)
        for (size_t v = 0; v < h.size(); v++)
          if (overwritten[v]) h[v] = (*last_back)[v];
      return h;
    };
    LoopTyping r;
    std::vector<Stmt> b1;
    LoopOuts lo1;
    auto back1 = once(entry, b1, lo1);
    bool peel = false;
    if (back1) {
      for (size_t v = 0; v < entry.size(); v++)
        if (!overwritten[v] && !unbound(entry[v]) && !unbound((*back1)[v]) && !types::same(entry[v], (*back1)[v]))
          peel = true;
    }
    if (!peel) {
      // At most variables first bound inside the loop: widen the head and settle.
      if (!back1 || same_env(*merge({entry, *back1}, s->line), entry)) {
        r.steady = std::move(b1);
        r.exits = lo1.brk[s->loop];
        r.head = exhausted(entry);
        forward(lo1);
        return r;
      }
      LoopOuts lo;
      r.head = exhausted(settle(*merge({entry, *back1}, s->line), r.steady, lo));
      r.exits = lo.brk[s->loop];
      forward(lo);
      return r;
    }
    // The first iteration changes types (s = 0; s += A[i]): peel it.
    r.peeled = true;
    r.first = std::move(b1);
    forward(lo1);
    LoopOuts lo;
    r.head = exhausted(settle(*back1, r.steady, lo));
    forward(lo);
    r.exits = lo1.brk[s->loop];
    r.exits.insert(r.exits.end(), lo.brk[s->loop].begin(), lo.brk[s->loop].end());
    return r;
  }

  // Whether every run of for loop `s` has an iteration: a constant trip count, or a fact
  // of these values (FactKind::NonEmpty).
  bool always_runs(const Stmt& s) const {
    if (auto trip = ir::constant_trip(s->args); trip && *trip > 0) return true;
    return in_.facts && in_.facts->has(Fact{FactKind::NonEmpty, -1, 0, s->loop});
  }

  void for_stmt(const Stmt& s, const Env& env, LoopOuts& lo, std::vector<Stmt>& stmts,
                std::vector<std::optional<Env>>& alts) {
    using Iter = ir::StmtNode::Iter;
    // What is called first (a loop over `line.split(",")` is no range() of a str).
    if (s->range_callee) {
      Builtin want = s->iter == Iter::Enumerate ? Builtin::Enumerate : s->iter == Iter::Zip ? Builtin::Zip : Builtin::Range;
      Expr callee = expr(s->range_callee, env);
      const bool is_callable = callee->type->kind == Type::Kind::Callable;
      if (!unbound(callee->type) && is_callable && callee->type->builtin == Builtin::Reversed && want == Builtin::Range)
        fail("loops over reversed() of something other than range() or a sequence (stagepy compiles reversed(range(...)), and reversed() of variables or attributes holding sequences and of slices of them)", s->line);
      if (!unbound(callee->type) && !(is_callable && callee->type->builtin == want))
        fail("loops over `" + ir::to_string(s->range_callee, nest_) + "(...)`, which is not the builtin " + builtin_name(want) +
                 " (stagepy compiles for loops over range(), sequences, enumerate() and zip())",
             s->line);
    }
    if (s->reversed_callee) {
      Expr r = expr(s->reversed_callee, env);
      if (!unbound(r->type) && !(r->type->kind == Type::Kind::Callable && r->type->builtin == Builtin::Reversed))
        fail("loops over `reversed(...)` where `reversed` is not the builtin", s->line);
    }
    if (s->zip_callee) {
      Expr z = expr(s->zip_callee, env);
      if (!unbound(z->type) && !(z->type->kind == Type::Kind::Callable && z->type->builtin == Builtin::Zip))
        fail("loops over `enumerate(zip(...))` where `zip` is not the builtin", s->line);
    }
    std::vector<Expr> args;
    for (auto& a : s->args) {
      Expr t = expr(a, env);
      // (A range()'s arguments are evaluated where the loop starts, not as a statement of
      // their own: draws there have no point to be undone from.)
      if (ir::draws_random(t)) fail("draws random numbers in a loop's range()", s->line);
      if (!unbound(t->type)) {
        if (t->type->kind == Type::Kind::PyBool) {
          // range(True) is range(1): bool is an int
        } else if (!int_like(t->type)) {
          fail(s->reversed_callee ? "loops over reversed() of a " + t->type->str() + " (stagepy compiles reversed(range(...)))"
                                  : "calls range() with a " + t->type->str(),
               s->line);
        }
      }
      args.push_back(t);
    }
    // A desugared loop indexes its sequences: only where that is what iterating gives.
    std::string copied;  // a mutable list or buffer sliced for the loop (CPython loops over a copy)
    std::vector<int> copied_roots;  // the variables holding those (-1: not known)
    for (auto& o : s->over) {
      Expr t = expr(o, env);
      if (unbound(t->type)) continue;
      const Type& ot = *t->type;
      bool ok = (ot.kind == Type::Kind::Array && ot.ndim >= 1) || ot.kind == Type::Kind::Tuple;
      if (!ok)
        fail("loops over a " + ot.str() + " (stagepy compiles loops over lists, tuples and arrays)", s->line);
      if (t->kind == ExprNode::Kind::Subscript && t->loop_sequence && ot.py_items() && ot.writeable && !ot.pystr) {
        copied = ir::to_string(o, nest_);
        copied_roots.push_back(ir::root_var(t->args[0]));
      }
    }
    stmts.push_back(ir::make_range(s->loop, args, s->resume, s->line));
    LoopTyping lt = loop_body(s, s->body[0]->body, env, s->var, lo);
    if (!copied.empty()) {
      // The loop reads the list in place: the copy CPython loops over holds the same items
      // only while no store can reach the list. A store into another list is fine where
      // both variables only ever hold their lists at entry or lists the nest makes (each
      // statement its own new one), and their lists at entry share no memory (the
      // dispatcher's key says which do).
      auto store_may_reach = [&](const Expr& base) {
        const int t = ir::root_var(base);
        if (t < 0) return true;
        for (int r : copied_roots)
          if (r < 0 || r == t || !fresh_only(r) || !fresh_only(t) || overlap_at_entry(r, t)) return true;
        return false;
      };
      auto stores_into_list = [&](const std::vector<Stmt>& body) {
        bool found = false;
        for (const Stmt& b : body)
          ir::for_each_stmt(b, [&](const Stmt& x) {
            for (const ir::Effect& e : x->effects)
              if (e.kind == ir::Effect::Kind::Store && e.base && e.base->type && e.base->type->kind == Type::Kind::Array &&
                  e.base->type->py_items() && store_may_reach(e.base))
                found = true;
          });
        return found;
      };
      if (stores_into_list(lt.steady) || stores_into_list(lt.first))
        fail("loops over `" + copied + "`, a copy of a list, and stores into a list that may be it inside the loop", s->line);
    }
    auto f = std::make_shared<StmtNode>(*s);
    f->args.clear();
    f->range_callee = nullptr;
    f->reversed_callee = nullptr;
    f->zip_callee = nullptr;
    f->over.clear();
    f->body = {ir::make_block(std::move(lt.steady))};
    if (lt.peeled) {
      f->peeled = true;
      f->body.push_back(ir::make_block(std::move(lt.first)));
    }
    // After >= 1 iteration: the head env (loop exhausted) with the variable bound, or a break.
    Env after = *lt.head;
    after[s->var] = types::py_int();
    std::vector<Env> exits = lt.exits;
    exits.push_back(after);
    Env nonzero = *merge(exits, s->line);
    Env zero = env;  // no iteration: nothing changed
    if (always_runs(s)) {
      // `for d in (-1, 0, 1)`, `for k in range(3)`, or a loop every run of which has an
      // iteration for these values (`for j in range(A.shape[1])`, facts.h): the body runs;
      // after the loop the variables have its types only (`s = 0.0` then `s += A[i]` leaves
      // an np.float64).
      stmts.push_back(f);
      alts = {nonzero};
    } else if (conflict(nonzero, zero) || lt.peeled) {
      stmts.push_back(ir::make_if(ir::make_loop_nonempty(s->loop), ir::make_block({f}), ir::make_block({}), -1, s->line));
      alts = {nonzero, zero};
    } else {
      stmts.push_back(f);
      alts = {merge({nonzero, zero}, s->line)};
    }
  }

  // Whether every assignment to `v` in the nest makes a new list (`v = [0] * n`, `v = L[:]`):
  // then `v` holds its list at entry or one of its own.
  bool fresh_only(int v) const {
    bool fresh = true;
    ir::for_each_stmt(nest_.root, [&](const Stmt& x) {
      if (x->kind == StmtNode::Kind::For && x->var == v) fresh = false;
      for (const ir::Effect& e : x->effects)
        if (e.kind == ir::Effect::Kind::Assign && e.var == v && !ir::makes_list(e.value)) fresh = false;
    });
    return fresh;
  }
  bool overlap_at_entry(int a, int b) const {
    if (!in_.overlapping) return true;
    for (auto& [x, y] : *in_.overlapping)
      if ((x == a && y == b) || (x == b && y == a)) return true;
    return false;
  }

  void while_stmt(const Stmt& s, const Env& env, LoopOuts& lo, std::vector<Stmt>& stmts,
                  std::vector<std::optional<Env>>& alts) {
    // A test reading an element the loop never changes (while_exits.h): fine where no
    // thread can change it either (a str's characters, a tuple's items).
    const int watched = (size_t)s->loop < nest_.loops.size() ? nest_.loops[(size_t)s->loop].watched : -1;
    if (watched >= 0) {
      const TypeRef& t = env[(size_t)watched];
      const bool immutable = t && ((t->kind == Type::Kind::Array && t->pystr) || t->kind == Type::Kind::Tuple);
      if (!immutable) fail(analysis::watched_element_problem(nest_.vars[(size_t)watched].name), s->line);
    }
    LoopTyping lt = loop_body(s, s->body[0]->body, env, -1, lo);
    auto w = std::make_shared<StmtNode>(*s);
    w->body = {ir::make_block(std::move(lt.steady))};
    if (lt.peeled) {
      w->peeled = true;
      w->body.push_back(ir::make_block(std::move(lt.first)));
    }
    stmts.push_back(w);
    alts = {merge(lt.exits, s->line)};
  }
};

}  // namespace

TypedNest infer_types(const InferInput& in) {
  // Empty lists (`st = []`) hold ints until the nest shows they hold something else: then
  // it is typed again knowing that (a few times at most).
  std::map<int, DType> empty_dtypes;
  for (int attempt = 0;; attempt++) {
    Infer infer(in, empty_dtypes);
    TypedNest t = infer.run();
    if (t.ok || infer.empty_var < 0 || attempt == 3) return t;
    // An empty list read at entry: the dispatcher reads it as one of those items instead.
    const std::set<int> cls = ir::moved_with(in.nest->root, infer.empty_var);  // (empty_var among them)
    if (in.empty_lists) {
      for (int v : *in.empty_lists)
        if (cls.count(v)) {
          t.empty_var = v;
          t.empty_dtype = infer.empty_dtype;
          return t;
        }
    }
    for (int v : cls) empty_dtypes[v] = infer.empty_dtype;
  }
}

}  // namespace stagepy::specialize
