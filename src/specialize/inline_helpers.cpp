// See inline_helpers.h.
#include "specialize/inline_helpers.h"

#include "analysis/attribute_columns.h"
#include "analysis/cfg.h"

#include <algorithm>
#include <functional>
#include <set>

#include "analysis/while_exits.h"
#include "ir/mutate.h"
#include "specialize/defer_attribute_stores.h"

namespace stagepy::specialize {
namespace {

using ir::Expr;
using ir::ExprNode;
using ir::Stmt;
using ir::StmtNode;
using EK = ExprNode::Kind;

constexpr int kMaxDepth = 4;  // helpers calling helpers; deeper calls stay calls (and fail typing)
// A statement's expressions, counted as trees (the passes after this one walk trees): what
// is substituted rather than computed once can grow without bound.
constexpr size_t kMaxNodes = 4000;

size_t count_nodes(const Expr& e, size_t limit) {
  if (!e) return 0;
  size_t n = 1;
  for (auto& a : e->args) {
    if (n > limit) break;
    n += count_nodes(a, limit);
  }
  return n;
}

struct Failure {
  std::string why;
  bool needs_hoist = false;
};

bool trivial(const Expr& e) { return e->kind == EK::Load || e->kind == EK::Const; }

// Whether `e` may be a tuple (a helper's `return a, b`): never a Temp's value.
bool maybe_tuple(const Expr& e) {
  switch (e->kind) {
    case EK::Tuple: return true;
    case EK::Seq: return maybe_tuple(e->args.back());
    case EK::Cond: return maybe_tuple(e->args[1]) || maybe_tuple(e->args[2]);
    default: return false;
  }
}

// A helper's own computation worth a Temp when its value is used more than once: arithmetic,
// comparisons and calls (of builtins: a helper's calls are inlined by then).
bool spillable(const Expr& e) {
  switch (e->kind) {
    case EK::Binary: case EK::Unary: case EK::Compare: case EK::Truth: case EK::Call: return true;
    case EK::Cond: return !maybe_tuple(e);
    default: return false;
  }
}

// Per node of a DAG: how many parents refer to it (each distinct parent node once per edge).
void count_uses(const Expr& e, std::map<const ExprNode*, int>& uses, std::set<const ExprNode*>& seen) {
  if (!e) return;
  uses[e.get()]++;
  if (!seen.insert(e.get()).second) return;
  for (auto& a : e->args) count_uses(a, uses, seen);
}

// The parameters (variables below `nparams`) `e` reads wherever it is evaluated.
void read_first(const Expr& e, int nparams, std::set<int>& out, std::set<const ExprNode*>& seen) {
  if (!seen.insert(e.get()).second) return;
  if (e->kind == EK::Load && e->var < nparams) out.insert(e->var);
  for (size_t k = 0; k < e->args.size() && !(e->kind == EK::Cond && k > 0); k++) read_first(e->args[k], nparams, out, seen);
}

class Inliner {
 public:
  Inliner(ir::Nest& out, const std::map<int, Helper>& helpers, bool hoist, bool number, int first_number)
      : out_(out), helpers_(helpers), hoist_(hoist), number_(number), next_origin_(first_number),
        first_temp_((int)out.vars.size()) {
    for (auto& [v, h] : helpers) {
      std::set<const ExprNode*> seen;
      count_uses(h.body->body, body_uses_[&h], seen);
      seen.clear();
      read_first(h.body->body, h.body->nparams, uncond_params_[&h], seen);
    }
  }

  Stmt stmt(const Stmt& s) {
    auto c = std::make_shared<StmtNode>(*s);
    std::vector<Stmt> pre;  // Temps (one Seg each: a Temp may read the ones before it) and the
                            // statements of helpers that loop
    switch (s->kind) {
      case StmtNode::Kind::Seg: {
        // Codegen evaluates every expression of a Seg before it applies any effect (the
        // lifter refuses an element read after a write in one statement): all of them may
        // go first.
        Statement st(s->resume >= 0 && hoist_, s->resume, s->line);
        for (auto& f : c->effects) st.count({f.base, f.index, f.value});
        if (c->effects.size() == 1 && c->effects[0].value && c->effects[0].value->kind == EK::Call &&
            (c->effects[0].kind == ir::Effect::Kind::Eval ||
             (c->effects[0].kind == ir::Effect::Kind::Assign && c->effects[0].var >= 0)))
          st.whole = c->effects[0].value.get();
        else if (std::all_of(c->effects.begin(), c->effects.end(), [](const ir::Effect& f) {
                   return f.value && (f.kind == ir::Effect::Kind::Eval ||
                                      (f.kind == ir::Effect::Kind::Assign && f.var >= 0) ||
                                      (f.kind == ir::Effect::Kind::Store && !f.attr.empty() && object_ref(f.base)));
                 })) {
          // (`ra, rb = find(p, a), find(p, b)`: one value per effect, evaluated in order.)
          std::set<const ExprNode*> calls;
          bool numbers = true;
          for (auto& f : c->effects) numbers = numbers && combined_calls(f.value, &calls, &st.combined_attrs);
          if (numbers) st.combined = calls;
        }
        for (auto& f : c->effects) {
          f.base = top(f.base, st, true);
          f.index = top(f.index, st, true);
          f.value = top(f.value, st, true);
        }
        // After an inlined call made its changes (defer_attribute_stores.h) the statement is
        // no place to hand over to CPython, which would run the call again: where what is left
        // of it (the call's value evaluated or assigned) is a constant or one of this pass's
        // Temps, it cannot fail, and resumes nowhere.
        if (st.changed && c->effects.size() == 1 &&
            (c->effects[0].value->kind == EK::Const ||
             (c->effects[0].value->kind == EK::Load && c->effects[0].value->var >= first_temp_)))
          c->resume = -1;
        pre = std::move(st.pre);
        break;
      }
      case StmtNode::Kind::If: {
        Statement st(s->resume >= 0 && hoist_, s->resume, s->line);
        st.count({c->cond});
        if (std::set<const ExprNode*> calls; combined_calls(c->cond, &calls, &st.combined_attrs)) st.combined = calls;
        c->cond = top(c->cond, st, true);
        pre = std::move(st.pre);
        break;
      }
      default: {
        // Loop headers: substituted in place (Temps there would come between a loop and the
        // loop around it).
        Statement st(false, s->resume, s->line);
        for (auto& a : c->args) a = top(a, st, false);
        for (auto& o : c->over) o = top(o, st, false);
        c->range_callee = top(c->range_callee, st, false);
        c->reversed_callee = top(c->reversed_callee, st, false);
        c->zip_callee = top(c->zip_callee, st, false);
        break;
      }
    }
    for (auto& b : c->body) b = stmt(b);
    if (pre.empty()) return c;
    pre.push_back(c);
    return ir::make_block(std::move(pre));
  }

  bool hoisted() const { return temps_ > 0; }
  std::map<int, int>& lines() { return lines_; }

 private:
  // Where rewrite() is: the statement's own expressions, or one inlined call's body.
  struct Scope {
    const Helper* h = nullptr;
    std::vector<Expr> args;  // h's parameters: what the call passed, then defaults
    const std::map<const ExprNode*, int>* uses = nullptr;  // parents per node
    // What rewrite() made of a node: where it is evaluated whenever the statement is (its
    // Temps may serve anywhere in the statement), and where it is not.
    std::map<const ExprNode*, Expr> done_first, done_in_place;
    int depth = 0;
  };
  // One statement being rewritten: the Temps it computes first.
  struct Statement {
    Statement(bool may_hoist, int resume, int line) : may_hoist(may_hoist), resume(resume), line(line) {
      caller.uses = &uses;
    }
    bool may_hoist;
    int resume, line;        // the statement's
    // The call that is the whole statement (`p.update(dt)`, `e = p.step()`), if one is: a
    // helper that assigns attributes is inlined only there (its changes are made after
    // every check of the statement, and nothing else in it reads them).
    const ExprNode* whole = nullptr;
    // Or the calls in values that otherwise combine numbers in variables (`merges +=
    // union(p, a, b)`, `if step(w) > 0:`, `ra, rb = find(p, a), find(p, b)`): a call that
    // changes objects is inlined there too, its statement logged (nothing else in it reads
    // what the calls change; they run in their order).
    std::set<const ExprNode*> combined;
    std::set<std::string> combined_attrs;  // the attributes the rest reads (`self.total += t.run(s)`)
    bool changed = false;  // an inlined call in it changes objects (its last statements do)
    std::vector<Stmt> pre;   // what runs before it
    std::map<const ExprNode*, int> uses;
    Scope caller;
    void count(std::initializer_list<Expr> es) {
      std::set<const ExprNode*> seen;
      for (auto& e : es) count_uses(e, uses, seen);
    }
  };

  ir::Nest& out_;
  const std::map<int, Helper>& helpers_;
  std::map<const Helper*, std::map<const ExprNode*, int>> body_uses_;
  std::map<const Helper*, std::set<int>> uncond_params_;  // parameters the body always reads
  bool hoist_;
  bool number_;
  int next_origin_;
  int locals_ = 0;      // Temps made for the locals of helpers that loop
  int stmt_depth_ = 0;  // helpers that loop being inlined inside one another
  bool log_needed_ = false;  // the outermost call being inlined needs its statement logged
  std::map<int, int> lines_;  // numbered origin -> the helper's line
  const int first_temp_;  // this pass's Temps are the variables from here on
  int temps_ = 0;

  Expr top(const Expr& e, Statement& st, bool first) {
    if (!e) return e;
    Expr r = rewrite(e, st.caller, st, first && st.may_hoist);
    if (count_nodes(r, kMaxNodes) > kMaxNodes) throw Failure{"inlining its helpers makes too large an expression"};
    return r;
  }

  // A new Temp `name` and the statement assigning it `e` (resuming at `st`'s statement, the
  // assignment's origin `origin`); its Load in *load.
  Stmt temp_of(const std::string& name, const Expr& e, const Statement& st, bool scratch, bool statement_local,
               int origin, Expr* load) {
    ir::Var v;
    v.name = name;
    v.storage = ir::Var::Storage::Temp;
    v.assigned = v.read = true;
    v.scratch = scratch;
    v.statement_local = statement_local;
    out_.vars.push_back(v);
    ir::Effect f;
    f.kind = ir::Effect::Kind::Assign;
    f.var = (int)out_.vars.size() - 1;
    f.value = e;
    f.origin = origin;
    *load = ir::make_load(f.var, ir::kInlinedOrigin);
    return ir::make_seg({f}, st.resume, st.line);
  }

  // `e`'s value in a new Temp, assigned before the statement.
  Expr spill(const Expr& e, Statement& st) {
    Expr load;
    st.pre.push_back(temp_of("$inl" + std::to_string(temps_++), e, st, true, false, -1, &load));
    return load;
  }

  // A new Temp for local `x` of helper `h` (not a scratch, as a helper's loop may carry it,
  // unless the lifter's return variable: set before its one read in the caller's statement).
  // `in_call`: the helper has no loops of its own (one that assigns attributes, or calls for
  // effects): its locals live within the calling statement, and no parallel loop keeps a
  // last value of them.
  int local(const Helper& h, const ir::Var& x, bool in_call) {
    ir::Var v;
    v.name = "$" + h.name + "." + x.name + "#" + std::to_string(locals_++);
    v.storage = ir::Var::Storage::Temp;
    v.assigned = v.read = true;
    v.scratch = x.storage == ir::Var::Storage::Temp && x.scratch;
    v.statement_local = in_call;
    out_.vars.push_back(v);
    return (int)out_.vars.size() - 1;
  }

  // The origin a node an inlined body contributes gets: with `number`, an element read or an
  // arithmetic operation its own (its line in the helper kept, where known: `line` > 0);
  // else ir::kInlinedOrigin.
  int origin_for(const ExprNode& x, int line) {
    // (And calls: each inlined draw of the random module is one of its own, type_infer's
    // draws_once.)
    // (And attributes: an object's becomes a subscript of its table by its column,
    // attribute_columns.h, an element read like the others.)
    const bool numbered = (x.kind == EK::Subscript && x.unpack == 0) || x.kind == EK::Binary || x.kind == EK::Unary ||
                          x.kind == EK::Call || (x.kind == EK::Attr && x.pseudo < 0);
    if (!number_ || !numbered) return ir::kInlinedOrigin;
    const int o = next_origin_++;
    if (line > 0) lines_[o] = line;
    return o;
  }

  // An object a variable holds, or an item of one at a constant or a variable (`self`,
  // `self[0]`: a table of one object, `ps[i]`): no call changes which object it is.
  static bool object_ref(const Expr& e) {
    if (e->kind == EK::Load) return true;
    return e->kind == EK::Subscript && e->name.empty() && e->unpack == 0 && e->args.size() == 2 &&
           e->args[0]->kind == EK::Load && (e->args[1]->kind == EK::Const || e->args[1]->kind == EK::Load);
  }
  // Whether the rest of `e` but its calls (into `calls`) only combines constants, variables
  // and their attributes (arithmetic, comparisons, truth, tuples); the attributes' names
  // into `attrs`.
  static bool combined_calls(const Expr& e, std::set<const ExprNode*>* calls, std::set<std::string>* attrs) {
    std::function<bool(const Expr&)> numbers = [&](const Expr& x) {
      switch (x->kind) {
        case EK::Call:
          calls->insert(x.get());
          return true;
        case EK::Const: case EK::Load: return true;
        case EK::Attr:
          if (!object_ref(x->args[0])) return false;
          attrs->insert(x->name);
          return true;
        case EK::Subscript:  // (an attribute column: `p.x` of a table of objects, attribute_columns.h)
          if (x->name.empty() || !object_ref(x->args[0])) return false;
          attrs->insert(x->name);
          return true;
        case EK::Binary: case EK::Unary: case EK::Compare: case EK::Truth: case EK::Tuple:
          for (auto& a : x->args)
            if (!numbers(a)) return false;
          return true;
        default: return false;
      }
    };
    return numbers(e);
  }

  // A call of a helper that loops: its statements, with its locals in new Temps, its loops
  // numbered after the nest's, every resume point the calling statement's (a check failing
  // inside hands the whole statement to CPython, which calls the function), put before the
  // statement; the value is its return's. Only where the call is evaluated whenever its
  // statement is (its loops run before the statement, as its Temps are computed). One that
  // changes objects (stores into containers, assigns attributes) only as a statement of its
  // own: the attributes of objects it is passed are set at its end (defer_attribute_stores);
  // where that is not all (stores into containers before its last statement, attributes of
  // the objects it loops over), the calling statement is logged (ResumePoint::logged: its
  // stores are undone before CPython runs it again). Appends and new lists: refused.
  Expr inline_statements(const Expr& e, const Helper& h, Scope& sc, Statement& st, bool first) {
    const analysis::HelperBody& b = *h.body;
    const ir::Nest& hn = *b.statements;
    if (!hoist_) throw Failure{"calls `" + h.name + "`, which loops (its arguments must go into variables)", true};
    if (!first || !st.may_hoist)
      throw Failure{"calls `" + h.name + "`, which loops, where the call may not be evaluated (a branch of a " +
                    "conditional expression or of `and`/`or`, a loop's header)"};
    if (stmt_depth_ >= kMaxDepth) throw Failure{"calls `" + h.name + "`, which loops, too deep (recursion)"};
    const int n = b.nparams, given = (int)e->args.size() - 1, first_default = n - (int)h.defaults.size();
    const int first_local = n + (int)b.globals.size();
    check_arguments(e, h);
    std::set<int> assigned;
    ir::collect_assigned(hn.root, &assigned);
    // Stores into containers (`self.h[i] += 1`): only in its last statement, in a function
    // without loops called from the nest's own statement: nothing after them can fail, a check
    // failing in that statement comes before any of its effects, and the attributes it
    // assigns are set after it (defer_attribute_stores.h).
    const std::vector<Stmt> flat = ir::flatten_blocks(hn.root);
    const StmtNode* last = !flat.empty() && flat.back()->kind == StmtNode::Kind::Seg ? flat.back().get() : nullptr;
    const bool may_store = last && stmt_depth_ == 0 && !ir::contains_loop(hn.root);
    if (stmt_depth_ == 0) log_needed_ = false;
    bool stores = false, appends = false, lists = false, attributes = false;
    ir::for_each_stmt(hn.root, [&](const Stmt& x) {
      for (auto& f : x->effects) {
        if (f.kind == ir::Effect::Kind::Store && !f.attr.empty()) attributes = true;
        else if (f.kind == ir::Effect::Kind::Store && !(may_store && x.get() == last)) stores = attributes = true;
        else if (f.kind == ir::Effect::Kind::Store) attributes = true;  // (inlined only as a statement, as those)
        else if (f.kind == ir::Effect::Kind::Append) appends = true;
        else if (ir::changes_lists(f)) lists = true;
      }
    });
    if (appends)
      throw Failure{"calls `" + h.name + "`, which stores into a container (appends to a list: stagepy would not undo "
                    "that when CPython runs the call again)"};
    if (lists) throw Failure{"calls `" + h.name + "`, which builds a list"};
    if (stores) log_needed_ = true;
    // One that assigns attributes: only as a statement of its own (its changes are made
    // after every check, defer_attribute_stores.h, and nothing else in the statement reads
    // them before or after the call).
    const bool combined = st.combined.count(e.get()) > 0;
    const bool whole = st.whole == e.get() || combined;
    const Failure inside_expression{"calls `" + h.name + "`, which assigns attributes or stores into a container, inside "
                                    "a larger expression (stagepy inlines it as a statement of its own, or the value "
                                    "assigned to a variable)"};
    if (attributes && !whole) throw inside_expression;
    for (int v : assigned)
      if (v >= n && v < first_local) throw Failure{"calls `" + h.name + "`, which assigns a global"};
    // The arguments: a parameter the body assigns gets a Temp of its own. A variable, or an
    // element or row of one (`A[i]`), is evaluated first, for its errors (an unbound variable,
    // an index out of range: CPython raises at the call), and then read where the body reads
    // the parameter: nothing changes it meanwhile (the body stores nowhere), and the analysis
    // then sees `a[k]` as `A[i][k]`. Other values go into Temps.
    // (A function that may change containers or attributes: an element passed as a number
    // is its value at the call, which a store before the body reads it may change; those go
    // into Temps. Rows and containers, which the body subscripts, stay views.)
    const std::set<int> values = may_change(h, 0) ? params_used_as_values(hn, b.body, n) : std::set<int>{};
    std::vector<Expr> params;
    for (int k = 1; k <= n; k++) {
      Expr a = k <= given ? rewrite(e->args[(size_t)k], sc, st, true) : h.defaults[(size_t)(k - 1 - first_default)];
      if (values.count(k - 1) && a->kind == EK::Subscript) {
        a = spill(a, st);
      } else if (!assigned.count(k - 1) && a->kind != EK::Const && plain_access(a)) {
        ir::Effect f;
        f.kind = ir::Effect::Kind::Eval;
        f.value = a;
        st.pre.push_back(ir::make_seg({f}, st.resume, st.line));
      } else if (assigned.count(k - 1) || (!trivial(a) && !maybe_tuple(a))) {
        a = spill(a, st);
      }
      params.push_back(a);
    }
    std::vector<int> locals;
    const bool in_call = !ir::contains_loop(hn.root);
    for (size_t v = (size_t)first_local; v < hn.vars.size(); v++) locals.push_back(local(h, hn.vars[v], in_call));
    std::map<int, int> loops;
    for (size_t l = 0; l < hn.loops.size(); l++) {
      if (hn.loops[l].watched >= 0)
        throw Failure{"calls `" + h.name + "`, which has " +
                      analysis::watched_element_problem(hn.vars[(size_t)hn.loops[l].watched].name)};
      loops[(int)l] = (int)out_.loops.size();
      out_.loops.push_back(hn.loops[l]);
      out_.loops.back().statement = st.resume;
    }
    auto var_of = [&](int v) -> int {  // an assigned variable's
      if (v < n) return params[(size_t)v]->var;
      if (v >= first_local) return locals[(size_t)(v - first_local)];
      throw Failure{"calls `" + h.name + "`, which assigns a global"};
    };
    auto expr = [&](const Expr& x) -> Expr {
      if (x->kind == EK::Load && x->var >= 0) {
        if (x->var < n) return params[(size_t)x->var];
        if (x->var < first_local) return ir::make_load(h.global_vars[(size_t)(x->var - n)], ir::kInlinedOrigin);
        auto c = std::make_shared<ExprNode>(*x);
        c->var = locals[(size_t)(x->var - first_local)];
        c->origin = ir::kInlinedOrigin;
        return c;
      }
      auto c = std::make_shared<ExprNode>(*x);
      auto l = b.origin_lines.find(x->origin);
      c->origin = origin_for(*x, l == b.origin_lines.end() ? -1 : l->second);
      if (c->kind == EK::Call && c->name.empty() && c->args[0]->kind == EK::Attr && n > 0 &&
          c->args[0]->args[0] == params[0]) {
        // A method of its first parameter's (`self.move(dt)`): inlined with the statements.
        auto m = h.self_methods.find(c->args[0]->name);
        if (m != h.self_methods.end()) c->method = m->second;
      }
      if (c->kind == EK::Call) {
        // A method of the items its loops take from a list of its object's (`b.kinetic()`).
        auto m = h.item_methods.find(x->origin);
        if (m != h.item_methods.end()) c->method = m->second;
      }
      return c->kind == EK::Attr ? bind_attr(c) : Expr(c);
    };
    Stmt body = ir::map_stmts(ir::map_exprs(hn.root, expr), [&](StmtNode& x) {
      for (auto& f : x.effects) {
        if (f.kind == ir::Effect::Kind::Assign) f.var = var_of(f.var);
        f.origin = ir::kInlinedOrigin;  // (the helper's own offsets mean nothing here)
      }
      if (x.kind == StmtNode::Kind::For) x.var = var_of(x.var);
      if (x.loop >= 0) x.loop = loops.at(x.loop);
      if (x.resume >= 0 || x.kind == StmtNode::Kind::Exit) x.resume = st.resume;
      x.line = st.line;
    });
    // A function that changes objects (assigns attributes, stores into a container): its
    // value is computed inside its statements, before its changes are made (the calling
    // statement, which reads it, must have nothing left that can fail: CPython would call the
    // function again).
    Expr early_value;
    bool calls = false;  // (helpers it calls may change objects too)
    ir::for_each_expr(body, [&](const Expr& x) {
      calls = calls || (x->kind == EK::Call && (x->method >= 0 || (x->args[0]->kind == EK::Load && helpers_.count(x->args[0]->var))));
    });
    if (attributes || calls) {
      early_value = ir::map_expr(b.body, expr);
      none_value(&body, &early_value);
      if (early_value->kind != EK::Const && early_value->kind != EK::Load) {
        // (Computed after a store into a container in its last statement: a check failing
        // there must find the store undone.)
        if (last && may_store)
          for (auto& f : last->effects)
            if (f.kind == ir::Effect::Kind::Store && f.attr.empty()) log_needed_ = true;
        Expr load;
        body = ir::make_block(
            {body, temp_of("$" + h.name + ".value#" + std::to_string(locals_++), early_value, st, false, in_call,
                                     ir::kInlinedOrigin, &load)});
        early_value = load;
      }
    }
    // Its own calls of helpers, inlined in turn (each of its statements gets its Temps).
    stmt_depth_++;
    body = stmt(body);
    stmt_depth_--;
    bool assigns = false, changes = false;  // (its own statements, or the helpers it calls)
    ir::for_each_stmt(body, [&](const Stmt& x) {
      for (auto& f : x->effects) {
        assigns = assigns || (f.kind == ir::Effect::Kind::Store && !f.attr.empty());
        changes = changes || f.kind == ir::Effect::Kind::Store;
      }
    });
    if (changes && !whole) throw inside_expression;
    if (combined)  // (the rest of the statement reads these attributes before the call, in CPython)
      ir::for_each_stmt(body, [&](const Stmt& x) {
        for (auto& f : x->effects)
          if (f.kind == ir::Effect::Kind::Store && st.combined_attrs.count(f.attr)) throw inside_expression;
      });
    if ((changes || attributes) && stmt_depth_ == 0) st.changed = true;
    if (assigns && stmt_depth_ == 0) {
      // The attributes it (and the helpers it calls) assigns of the objects it is passed:
      // changed at its end; those of objects it computes (the items it loops over), in
      // place, logged.
      DeferredStores d = defer_attribute_stores(body, out_.vars, h.name, st.resume, st.line,
                                                [&] { return number_ ? next_origin_++ : ir::kInlinedOrigin; });
      if (!d.ok) throw Failure{"calls `" + h.name + "`, which " + d.why};
      body = d.body;
      log_needed_ = log_needed_ || d.in_place;
    }
    if (combined && (changes || attributes)) log_needed_ = true;  // (what follows the call may hand over)
    if (log_needed_ && stmt_depth_ == 0) out_.resumes[(size_t)st.resume].logged = true;
    st.pre.push_back(body);
    if (early_value) return early_value;
    Expr value = ir::map_expr(b.body, expr);
    none_value(&st.pre.back(), &value);
    stmt_depth_++;
    Scope inner;
    inner.uses = sc.uses;
    inner.depth = sc.depth + 1;
    value = rewrite(value, inner, st, true);
    stmt_depth_--;
    return value;
  }

  // A call in helper sc.h's body of a method on its first parameter (`self.move(dt)`): the
  // Method variable that holds it, or -1.
  static int self_method(const Scope& sc, const Expr& call) {
    if (!sc.h || call->args.empty() || call->args[0]->kind != EK::Attr || !call->name.empty()) return -1;
    const Expr& o = call->args[0]->args[0];
    if (o->kind != EK::Load || o->var != 0) return -1;
    auto it = sc.h->self_methods.find(call->args[0]->name);
    return it == sc.h->self_methods.end() ? -1 : it->second;
  }

  // A function that returns None (a method that changes its object) from several places,
  // its value the variable its statements `*body` assign None to in each: the value is None,
  // and the variable's assignments (which type inference would refuse) are dropped.
  void none_value(Stmt* body, Expr* value) const {
    const Expr& v = *value;
    if (v->kind != EK::Load || v->var < first_temp_) return;
    bool all = true, any = false;  // (a Temp the body never assigns, an argument's, is no return value)
    ir::for_each_stmt(*body, [&](const Stmt& x) {
      for (auto& f : x->effects)
        if (f.kind == ir::Effect::Kind::Assign && f.var == v->var) {
          any = true;
          all = all && f.value->kind == EK::Const && f.value->value.kind == ir::ConstValue::Kind::None;
        }
    });
    if (!all || !any) return;
    const int var = v->var;
    *body = ir::map_stmts(*body, [&](StmtNode& x) {
      std::vector<ir::Effect> kept;
      for (auto& f : x.effects)
        if (f.kind != ir::Effect::Kind::Assign || f.var != var) kept.push_back(f);
      x.effects = std::move(kept);
    });
    *value = ir::make_const(ir::ConstValue{}, ir::kInlinedOrigin);
  }

  // `e` with helper calls inlined. `first`: `e` is evaluated whenever the statement is, so
  // what it computes may go into Temps computed before it.
  Expr rewrite(const Expr& e, Scope& sc, Statement& st, bool first) {
    if (!e) return e;
    if (auto it = sc.done_first.find(e.get()); it != sc.done_first.end()) return it->second;
    if (!first)
      if (auto it = sc.done_in_place.find(e.get()); it != sc.done_in_place.end()) return it->second;
    Expr r = rewrite_node(e, sc, st, first);
    if (first && r != e && sc.h && !trivial(r) && spillable(r)) {
      auto u = sc.uses->find(e.get());
      if (u != sc.uses->end() && u->second > 1) r = spill(r, st);
    }
    (first ? sc.done_first : sc.done_in_place)[e.get()] = r;
    return r;
  }

  Expr rewrite_node(const Expr& e, Scope& sc, Statement& st, bool first) {
    if (e->kind == EK::Load && sc.h) {
      const auto& body = *sc.h->body;
      if (e->var < body.nparams) return sc.args[(size_t)e->var];
      return ir::make_load(sc.h->global_vars[(size_t)(e->var - body.nparams)], ir::kInlinedOrigin);
    }
    std::vector<Expr> args;
    args.reserve(e->args.size());
    bool changed = false;
    for (size_t k = 0; k < e->args.size(); k++) {
      // A conditional expression's branches are evaluated only where they are taken.
      const bool lazy = e->kind == EK::Cond && k > 0;
      if (e->kind == EK::Call && k > 0) break;  // the arguments: inline_call's
      args.push_back(rewrite(e->args[k], sc, st, first && !lazy));
      changed = changed || args.back() != e->args[k];
    }
    // A method the dispatcher found a plain Python function (bind_methods.h): `o.m(a)` is
    // `m(o, a)`.
    const int method = e->kind != EK::Call ? -1 : e->method >= 0 ? e->method : self_method(sc, e);
    if (method >= 0 && sc.depth >= kMaxDepth && helpers_.count(method))
      throw Failure{"calls `" + helpers_.at(method).name + "` more than " + std::to_string(kMaxDepth) +
                    " calls deep (recursion)"};
    if (method >= 0 && sc.depth < kMaxDepth) {
      auto it = helpers_.find(method);
      if (it != helpers_.end()) {
        auto with_self = std::make_shared<ExprNode>(*e);
        with_self->method = -1;
        with_self->args.insert(with_self->args.begin() + 1, e->args[0]->args[0]);
        const Expr call = positions(with_self, it->second);
        if (!sc.h) once(call, it->second);
        if (st.whole == e.get()) st.whole = call.get();
        if (st.combined.erase(e.get())) st.combined.insert(call.get());
        if (it->second.body->statements) return inline_statements(call, it->second, sc, st, first);
        return inline_call(call, it->second, sc, st, first);
      }
    }
    // The callee: a variable, or a module's attribute the nest reads as one (`bisect.bisect`).
    const int callee = e->kind != EK::Call ? -1
                       : args[0]->kind == EK::Load ? args[0]->var
                       : args[0]->kind == EK::Attr ? bind_attr(args[0])->pseudo : -1;
    if (callee >= 0 && e->name != ir::kFloatOfStr) {
      auto it = helpers_.find(callee);
      if (it != helpers_.end() && sc.depth < kMaxDepth) {
        const Expr call = positions(e, it->second);
        if (call != e && st.whole == e.get()) st.whole = call.get();
        if (call != e && st.combined.erase(e.get())) st.combined.insert(call.get());
        if (!sc.h) once(call, it->second);  // (a call in the nest's own code: its offset is its own)
        if (it->second.body->statements) return inline_statements(call, it->second, sc, st, first);
        return inline_call(call, it->second, sc, st, first);
      }
    }
    if (e->kind == EK::Call)
      for (size_t k = 1; k < e->args.size(); k++) {
        args.push_back(rewrite(e->args[k], sc, st, first));
        changed = changed || args.back() != e->args[k];
      }
    Expr r = e;
    if (changed) {
      auto c = std::make_shared<ExprNode>(*e);
      c->args = std::move(args);
      r = c;
    }
    if (r->kind == EK::Attr && sc.h) r = bind_attr(r);
    if (r->kind == EK::Seq && first) r = drop_computed(r);
    if (r->kind == EK::Subscript) r = tuple_item(r);
    if (sc.h && r->origin == ir::kInlinedOrigin) {
      auto l = sc.h->body->lines.find(e.get());
      const int o = origin_for(*r, l == sc.h->body->lines.end() ? -1 : l->second);
      if (o != r->origin) {
        auto c = std::make_shared<ExprNode>(*r);
        c->origin = o;
        r = c;
      }
    }
    return r;
  }

  // A call CPython makes once that the lifter reads at two places (the middle of `a < h() <
  // b`, whose second comparison is another statement; a copy it could not share): inlined
  // twice it runs twice, the same value for a helper of numbers, but a draw of the random
  // module inside would be made twice: marked on the nest (Nest::helper_called_twice).
  void once(const Expr& call, const Helper& h) {
    if (call->origin < 0) return;
    bool calls = false;
    ir::walk_expr(h.body->body, [&](const Expr& x) { calls = calls || x->kind == EK::Call; });
    if (h.body->statements)
      ir::for_each_expr(h.body->statements->root, [&](const Expr& x) { calls = calls || x->kind == EK::Call; });
    if (calls && !inlined_calls_.insert(call->origin).second) out_.helper_called_twice = true;
  }
  std::set<int> inlined_calls_;  // origins of the calls of helpers that call, inlined so far

  Expr inline_call(const Expr& e, const Helper& h, Scope& sc, Statement& st, bool first) {
    check_arguments(e, h);
    const int n = h.body->nparams, given = (int)e->args.size() - 1, first_default = n - (int)h.defaults.size();
    Scope inner;
    inner.h = &h;
    inner.uses = &body_uses_.at(&h);
    inner.depth = sc.depth + 1;
    // CPython evaluates every argument, used by the body or not: those not in Temps go
    // in front of the body (a Seq).
    std::vector<Expr> evaluated;
    for (int k = 1; k <= given; k++) {
      Expr a = rewrite(e->args[(size_t)k], sc, st, first);
      if (first && !trivial(a) && !maybe_tuple(a)) a = spill(a, st);
      // (A variable's load may raise UnboundLocalError: kept unless the body reads it anyway.)
      if (!computed(a) && (!trivial(a) || !uncond_params_.at(&h).count(k - 1))) evaluated.push_back(a);
      inner.args.push_back(a);
    }
    for (int k = given; k < n; k++) inner.args.push_back(h.defaults[(size_t)(k - first_default)]);
    Expr body = rewrite(h.body->body, inner, st, first);
    if (first && body->kind == EK::Seq) body = drop_computed(body);
    if (first && body->kind == EK::Tuple) {
      // `a, b = h(x)`: each item is taken from the returned tuple; its items, once.
      auto c = std::make_shared<ExprNode>(*body);
      for (auto& item : c->args)
        if (!trivial(item) && spillable(item)) item = spill(item, st);
      body = c;
    } else if (first && !trivial(body) && spillable(body)) {
      auto u = sc.uses->find(e.get());
      if (u != sc.uses->end() && u->second > 1) body = spill(body, st);
    }
    if (evaluated.empty()) return body;
    evaluated.push_back(std::move(body));
    return ir::make_seq(std::move(evaluated), e->origin);
  }

  // A call with keyword arguments (`h(x, scale=2.0)`) as the same call by position, where
  // the keywords name parameters after the positional arguments (in their order, so that the
  // arguments are evaluated in the order CPython evaluates them, unless every keyword's value
  // is a constant or a variable: nothing to order), the parameters they skip taking their
  // defaults; else `e` itself (check_arguments refuses it).
  static Expr positions(const Expr& e, const Helper& h) {
    if (e->kwnames.empty()) return e;
    const int n = h.body->nparams, nkw = (int)e->kwnames.size(), npos = (int)e->args.size() - 1 - nkw;
    const int first_default = n - (int)h.defaults.size();
    bool any_order = true;
    for (int j = 0; j < nkw; j++) any_order = any_order && trivial(e->args[(size_t)(1 + npos + j)]);
    std::vector<Expr> by_param((size_t)std::max(n, 0));
    int next = npos;  // the first parameter a keyword may name (in order)
    int end = npos;   // past the last one named
    for (int j = 0; j < nkw; j++) {
      int p = -1;
      for (int q = 0; q < n && q < (int)h.params.size(); q++)
        if (h.params[(size_t)q] == e->kwnames[(size_t)j]) p = q;
      if (p < (any_order ? npos : next) || p < h.posonly || by_param[(size_t)p]) return e;
      by_param[(size_t)p] = e->args[(size_t)(1 + npos + j)];
      next = p + 1;
      end = std::max(end, p + 1);
    }
    next = end;
    auto c = std::make_shared<ExprNode>(*e);
    c->kwnames.clear();
    c->args.resize((size_t)(1 + npos));
    for (int p = npos; p < next; p++) {
      if (by_param[(size_t)p]) c->args.push_back(by_param[(size_t)p]);
      else if (p >= first_default) c->args.push_back(h.defaults[(size_t)(p - first_default)]);
      else return e;
    }
    return c;
  }

  // Positional arguments, as many as the function takes (its defaults for the last ones).
  static void check_arguments(const Expr& e, const Helper& h) {
    if (!e->kwnames.empty())
      throw Failure{"calls `" + h.name + "` with keyword arguments stagepy cannot place (a name it has no parameter "
                    "of, or only by position; or computed values in another order than its parameters)"};
    const int n = h.body->nparams, given = (int)e->args.size() - 1, first_default = n - (int)h.defaults.size();
    if (given > n || given < first_default)
      throw Failure{"calls `" + h.name + "` with " + std::to_string(given) + " arguments (it takes " +
                    (first_default < n ? std::to_string(first_default) + " to " : "") + std::to_string(n) + ")"};
  }

  // A variable, or a subscript of one by indices of variables, constants and arithmetic
  // (`A`, `A[i]`, `M[i + 1, j]`): pure, cheap, the same value wherever it is read while
  // nothing is stored.
  // Whether helper h, or a function it calls that is inlined, stores into a container or
  // assigns an attribute (calls of anything else change nothing the nest reads, or keep
  // the nest in CPython).
  bool may_change(const Helper& h, int depth) const {
    if (depth > kMaxDepth) return true;
    const analysis::HelperBody& b = *h.body;
    const int n = b.nparams;
    bool found = false;
    auto callee = [&](const Expr& x) -> const Helper* {
      int v = -1;  // (a body's own calls carry no Method variable: the maps below say)
      const Expr& f = x->args[0];
      if (v < 0 && f->kind == EK::Load && f->var >= n && (size_t)(f->var - n) < h.global_vars.size())
        v = h.global_vars[(size_t)(f->var - n)];
      if (v < 0 && f->kind == EK::Attr && f->args[0]->kind == EK::Load && f->args[0]->var == 0 && n > 0) {
        auto m = h.self_methods.find(f->name);
        if (m != h.self_methods.end()) v = m->second;
      }
      if (v < 0) {
        auto m = h.item_methods.find(x->origin);
        if (m != h.item_methods.end()) v = m->second;
      }
      auto it = helpers_.find(v);
      return it == helpers_.end() ? nullptr : &it->second;
    };
    auto visit = [&](const Expr& x) {
      if (found || x->kind != EK::Call || x->args.empty()) return;
      const Helper* c = callee(x);
      found = c && (c == &h || may_change(*c, depth + 1));  // (itself: recursion, assumed to)
    };
    if (b.statements) {
      ir::for_each_stmt(b.statements->root, [&](const Stmt& x) {
        for (auto& f : x->effects) found = found || f.kind == ir::Effect::Kind::Store;
      });
      ir::for_each_expr(b.statements->root, visit);
    }
    if (b.body) ir::walk_expr(b.body, visit);
    return found;
  }

  // The parameters (below n) of `hn` that some expression (or the value it returns) uses as
  // a value: anywhere but as the container of a subscript, the argument of len() or a
  // loop's sequence.
  static std::set<int> params_used_as_values(const ir::Nest& hn, const Expr& value, int n) {
    std::set<int> out;
    std::function<void(const Expr&, bool)> walk = [&](const Expr& x, bool container) {
      if (!x) return;
      if (x->kind == EK::Load) {
        if (x->var >= 0 && x->var < n && !container) out.insert(x->var);
        return;
      }
      const bool len = x->kind == EK::Call && x->args.size() == 2 && x->args[0]->kind == EK::Load &&
                       x->args[0]->var >= 0 && (size_t)x->args[0]->var < hn.vars.size() &&
                       hn.vars[(size_t)x->args[0]->var].name == "len";
      for (size_t k = 0; k < x->args.size(); k++)
        walk(x->args[k], (x->kind == EK::Subscript && k == 0) || (len && k == 1));
    };
    walk(value, false);
    ir::for_each_stmt(hn.root, [&](const Stmt& s) {
      walk(s->cond, false);
      for (auto& a : s->args) walk(a, false);
      for (auto& o : s->over) walk(o, true);
      for (auto& f : s->effects) {
        walk(f.base, true);
        walk(f.index, false);
        walk(f.value, false);
      }
    });
    return out;
  }

  static bool plain_access(const Expr& e) {
    switch (e->kind) {
      case EK::Load: case EK::Const: return true;
      case EK::Subscript:
        return e->unpack == 0 && e->args[0]->kind != EK::Tuple && plain_access(e->args[0]) && plain_index(e->args[1]);
      default: return false;
    }
  }
  static bool plain_index(const Expr& e) {
    switch (e->kind) {
      case EK::Load: case EK::Const: return true;
      case EK::Binary: case EK::Tuple: case EK::Unary:
        for (auto& a : e->args)
          if (!plain_index(a)) return false;
        return true;
      default: return false;
    }
  }

  // `(a, b)[k]` (an item of a helper's returned tuple) as that item, where nothing else the
  // tuple computes is lost: `x, y = h()` takes every item, or the others are computed.
  Expr tuple_item(const Expr& sub) const {
    const Expr& t = sub->args[0];
    const Expr& k = sub->args[1];
    if (t->kind != EK::Tuple || k->kind != EK::Const || k->value.kind != ir::ConstValue::Kind::Int) return sub;
    const int64_t n = (int64_t)t->args.size(), i = k->value.i;
    if (i < 0 || i >= n || (sub->unpack != 0 && sub->unpack != n)) return sub;
    if (sub->unpack == 0)
      for (int64_t j = 0; j < n; j++)
        if (j != i && !computed(t->args[(size_t)j])) return sub;
    return t->args[(size_t)i];
  }
  // A constant, or one of this pass's Temps (computed before the statement).
  bool computed(const Expr& x) const {
    return x->kind == EK::Const || (x->kind == EK::Load && x->var >= first_temp_);
  }

  // A Seq without the items that are this pass's Temps (computed before the statement).
  Expr drop_computed(const Expr& seq) const {
    std::vector<Expr> items;
    for (size_t k = 0; k + 1 < seq->args.size(); k++) {
      if (!computed(seq->args[k])) items.push_back(seq->args[k]);
    }
    if (items.size() + 1 == seq->args.size()) return seq;
    if (items.empty()) return seq->args.back();
    items.push_back(seq->args.back());
    return ir::make_seq(std::move(items), seq->origin);
  }

  // `math.sqrt` in a helper: the attribute variable the dispatcher made for it.
  Expr bind_attr(const Expr& x) const {
    const Expr& base = x->args[0];
    if (base->kind != EK::Load || x->pseudo >= 0) return x;
    const std::string full = out_.vars[(size_t)base->var].name + "." + x->name;
    for (size_t v = 0; v < out_.vars.size(); v++)
      if (out_.vars[v].storage == ir::Var::Storage::Attr && out_.vars[v].index == base->var &&
          out_.vars[v].name == full) {
        auto c = std::make_shared<ExprNode>(*x);
        c->pseudo = (int)v;
        return c;
      }
    return x;
  }
};

}  // namespace

InlineResult inline_helpers(const ir::Nest& nest, const std::map<int, Helper>& helpers, bool hoist,
                            bool number, const std::vector<std::string>* columns) {
  InlineResult r;
  r.nest = nest;
  if (helpers.empty()) return r;
  // Numbers past every origin the nest has (a nest with many generator expressions gives
  // their nodes origins in steps of 2^24: lift.cpp).
  int top = ir::kFirstNumberedInlinedOrigin - 1;
  ir::for_each_expr(nest.root, [&](const Expr& x) { top = std::max(top, x->origin); });
  Inliner in(r.nest, helpers, hoist, number, top + 1);
  try {
    r.nest.root = in.stmt(nest.root);
    r.hoisted = in.hoisted();
    r.lines = std::move(in.lines());
    // A method inlined as the function found at entry must stay that function: an attribute
    // of that name assigned on an object (`p.update = ...`) would put another in its place.
    std::set<std::string> methods;
    for (auto& [v, h] : helpers)
      if (r.nest.vars[(size_t)v].storage == ir::Var::Storage::Method) methods.insert(r.nest.vars[(size_t)v].method);
    ir::for_each_stmt(r.nest.root, [&](const Stmt& x) {
      for (auto& f : x->effects)
        if (f.kind == ir::Effect::Kind::Store && methods.count(f.attr))
          throw Failure{"assigns attribute `" + f.attr + "`, the name of a method it calls"};
    });
  } catch (const Failure& f) {
    r.ok = false;
    r.reason = f.why;
    r.needs_hoist = f.needs_hoist;
    return r;
  }
  try {
    r.nest = analysis::attribute_columns(std::move(r.nest), true, columns);
  } catch (const analysis::LiftError& e) {
    r.ok = false;
    r.reason = e.reason;
    r.reason_line = e.line;
  }
  return r;
}

}  // namespace stagepy::specialize
