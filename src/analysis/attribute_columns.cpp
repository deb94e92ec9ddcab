// See attribute_columns.h.
#include "analysis/attribute_columns.h"

#include <map>
#include <set>

#include "analysis/cfg.h"
#include "ir/mutate.h"

namespace stagepy::analysis {
namespace {
using ir::Expr;
using ir::ExprNode;
using ir::Stmt;
using ir::StmtNode;
using K = ExprNode::Kind;

// Attributes that numbers, arrays and complex values have themselves (type inference
// reads them): never an object's column.
bool value_attribute(const std::string& n) {
  static const std::set<std::string> names = {"real",  "imag",    "shape",  "ndim",    "size",      "T",
                                              "dtype", "flat",    "ravel()", "itemsize", "nbytes",   "strides",
                                              "data",  "base",    "numerator", "denominator"};
  return names.count(n) > 0;
}

class Columns {
 public:
  Columns(ir::Nest& nest, bool inlined) : nest_(nest), inlined_(inlined) {}

  void run() {
    find_singles(nest_.root);
    nest_.root = rewrite(nest_.root);
    if (inlined_) {
      // Attribute variables the inlined nest no longer reads (an inlined method's `self.t`,
      // read through the object's table or its Temps: defer_attribute_stores.h).
      std::set<int> bound;
      ir::for_each_expr(nest_.root, [&](const Expr& x) {
        if (x->kind == K::Attr && x->pseudo >= 0) bound.insert(x->pseudo);
      });
      for (size_t v = 0; v < nest_.vars.size(); v++)
        if (nest_.vars[v].storage == ir::Var::Storage::Attr && !bound.count((int)v)) nest_.vars[v].read = false;
    }
    if (rows_.empty() && lists_.empty()) return;
    // The lists the items come from (the roots of the items' assigned values); and every
    // variable given an item of such a list holds objects too (`for q in ps: d(p, q)`, q's
    // attributes read by the helper): a row, its uses checked like the others'.
    for (bool more = true; more;) {
      more = false;
      ir::for_each_stmt(nest_.root, [&](const Stmt& s) {
        for (auto& f : s->effects) {
          if (f.kind != ir::Effect::Kind::Assign) continue;
          const int c = list_of_item(f.value);
          if (rows_.count(f.var)) {
            if (c < 0)
              throw LiftError{"assigns " + name(f.var) + ", which holds objects whose attributes it uses, something other "
                              "than an item of a list",
                              s->line};
            more = lists_.insert(c).second || more;
          } else if (c >= 0 && lists_.count(c)) {
            rows_.insert(f.var);
            more = true;
          }
        }
      });
    }
    // (The columns used through an item are used through its list.)
    ir::for_each_stmt(nest_.root, [&](const Stmt& s) {
      for (auto& f : s->effects)
        if (f.kind == ir::Effect::Kind::Assign && rows_.count(f.var))
          for (int k : used_[f.var]) used_[list_of_item(f.value)].insert(k);
    });
    for (int c : lists_) {
      const ir::Var& v = nest_.vars[(size_t)c];
      if (rows_.count(c) || v.assigned)
        throw LiftError{"uses the attributes of the items of `" + v.name + "`, which it also assigns", nest_.line};
    }
    check(nest_.root);
    for (int c : lists_) {
      ir::Var& v = nest_.vars[(size_t)c];
      v.objects = true;
      v.columns_used.assign(nest_.columns.size(), 0);
      for (int k : used_[c]) v.columns_used[(size_t)k] = 1;
    }
    for (int r : rows_) nest_.vars[(size_t)r].object_row = true;
  }

 private:
  std::string name(int v) const { return ir::shown_name(nest_.vars[(size_t)v]); }

  // The list variable an item expression `L[i]` reads (L a variable, or an attribute the nest
  // reads at entry: `self.ps`), else -1.
  static int list_of_item(const Expr& e) {
    if (!e || e->kind != K::Subscript || !e->name.empty()) return -1;
    const Expr& b = e->args[0];
    if (b->kind == K::Load) return b->var;
    if (b->kind == K::Attr && b->pseudo >= 0) return b->pseudo;
    return -1;
  }

  // ---------------------------------------------------------------- single objects
  // Objects in variables the nest never assigns (`self`, a global `stats`) whose attributes it
  // assigns (`self.total += x`): each held as a table of one row, a hidden variable
  // (Var::single_of) whose value is the list [obj]. The attributes assigned are its columns,
  // read and written through it; the object's other attributes stay attribute variables.
  void find_singles(const Stmt& s) {
    for (auto& f : s->effects) {
      if (f.kind != ir::Effect::Kind::Store || f.attr.empty()) continue;
      if (f.base->kind == K::Load && !nest_.vars[(size_t)f.base->var].assigned) singles_[f.base->var].insert(f.attr);
      // (Made an item of its table by a first run: `[c][0].v = ...`, an inlined nest's own.)
      const Expr& b = f.base;
      if (b->kind == K::Subscript && b->args[0]->kind == K::Load && nest_.vars[(size_t)b->args[0]->var].single_of >= 0)
        singles_[nest_.vars[(size_t)b->args[0]->var].single_of].insert(f.attr);
    }
    for (auto& b : s->body) find_singles(b);
  }
  // `v.attr` of such an object, as an item of its table (`[v][0]`), or nullptr.
  Expr single_item(const Expr& b, const std::string& attr) {
    if (b->kind != K::Load) return nullptr;
    auto it = singles_.find(b->var);
    if (it == singles_.end() || !it->second.count(attr)) return nullptr;
    auto [at, fresh] = table_of_.emplace(b->var, -1);
    int& t = at->second;
    for (size_t x = 0; fresh && x < nest_.vars.size(); x++)
      if (nest_.vars[x].storage == ir::Var::Storage::Table && nest_.vars[x].single_of == b->var) {
        t = (int)x;  // (the dispatcher made it for a method of the object's: bind_methods.h)
        fresh = false;
      }
    if (fresh) {
      ir::Var v;
      v.name = nest_.vars[(size_t)b->var].name;
      v.storage = ir::Var::Storage::Table;
      v.read = true;
      v.single_of = b->var;
      nest_.vars.push_back(v);
      t = (int)nest_.vars.size() - 1;
    }
    ir::ConstValue zero;
    zero.kind = ir::ConstValue::Kind::Int;
    return ir::make_subscript(ir::make_load(t, b->origin), ir::make_const(zero, b->origin), b->origin);
  }

  // Whether `b` may be an object whose attribute is a column: a variable the nest assigns
  // (an item it picked), or an item of a list variable.
  bool object_like(const Expr& b) const {
    if (b->kind == K::Load) return nest_.vars[(size_t)b->var].assigned;
    return list_of_item(b) >= 0;
  }

  int column(const std::string& attr, bool assigned) {
    size_t k = 0;
    while (k < nest_.columns.size() && nest_.columns[k] != attr) k++;
    if (k == nest_.columns.size()) {
      nest_.columns.push_back(attr);
      nest_.columns_assigned.push_back(0);
    }
    nest_.columns_assigned[k] |= assigned ? 1 : 0;
    return (int)k;
  }

  Expr column_subscript(const Expr& base, const std::string& attr, int origin, bool assigned = false) {
    ir::ConstValue k;
    k.kind = ir::ConstValue::Kind::Int;
    k.i = column(attr, assigned);
    // (The column's Const is named for the attribute too: the report's accesses show `.x`.)
    auto col = std::make_shared<ExprNode>(*ir::make_const(k, origin));
    col->name = attr;
    auto e = std::make_shared<ExprNode>(*ir::make_subscript(base, col, origin));
    e->name = attr;
    note_column(base, (int)k.i);
    return e;
  }
  // Column `k` used through `base`: an item variable (a row) or an item of a list.
  void note_column(const Expr& base, int k) {
    const int through = base->kind == K::Load ? base->var : list_of_item(base);
    if (through < 0) return;
    if (base->kind == K::Load) rows_.insert(through);
    else lists_.insert(through);
    used_[through].insert(k);
  }

  Expr rewrite(const Expr& e, bool callee = false) {
    if (!e) return e;
    bool changed = false;
    std::vector<Expr> args;
    args.reserve(e->args.size());
    for (size_t i = 0; i < e->args.size(); i++) {
      Expr m = rewrite(e->args[i], e->kind == K::Call && i == 0);
      changed = changed || m != e->args[i];
      args.push_back(std::move(m));
    }
    Expr out = e;
    if (changed) {
      auto c = std::make_shared<ExprNode>(*e);
      c->args = std::move(args);
      out = c;
    }
    if (out->kind == K::Subscript && !out->name.empty()) {  // a column already (the nest's own, inlined)
      note_column(out->args[0], (int)out->args[1]->value.i);
      return out;
    }
    if (out->kind == K::Attr && !callee) {
      if (Expr item = single_item(out->args[0], out->name)) {
        if (out->pseudo >= 0) nest_.vars[(size_t)out->pseudo].read = false;  // (read through the table)
        return column_subscript(item, out->name, out->origin);
      }
    }
    if (out->kind == K::Attr && out->pseudo < 0 && !callee && !value_attribute(out->name) && object_like(out->args[0]))
      return column_subscript(out->args[0], out->name, out->origin);
    return out;
  }

  Stmt rewrite(const Stmt& s) {
    auto c = std::make_shared<StmtNode>(*s);
    for (auto& b : c->body) b = rewrite(b);
    for (auto& f : c->effects) {
      f.base = rewrite(f.base);
      f.index = rewrite(f.index);
      f.value = rewrite(f.value);
      if (f.kind == ir::Effect::Kind::Store && !f.attr.empty()) {
        if (Expr item = single_item(f.base, f.attr)) f.base = item;
        if (!object_like(f.base))
          throw LiftError{"assigns an attribute of something other than an item of a list or an object in a variable it "
                          "never assigns",
                          s->line};
        const Expr col = column_subscript(f.base, f.attr, f.origin, true);
        f.index = col->args[1];
      }
    }
    c->cond = rewrite(c->cond);
    for (auto& a : c->args) a = rewrite(a);
    c->range_callee = rewrite(c->range_callee);
    c->reversed_callee = rewrite(c->reversed_callee);
    c->zip_callee = rewrite(c->zip_callee);
    for (auto& o : c->over) o = rewrite(o);
    return c;
  }

  // ---------------------------------------------------------------- every use checked
  enum class Use { Free, Item, List, Len, Over, Assigned, AttrBase };

  bool is_len(const Expr& callee) const {
    if (callee->kind != K::Load) return false;
    const ir::Var& v = nest_.vars[(size_t)callee->var];
    return v.name == "len" && (v.storage == ir::Var::Storage::Builtin || v.storage == ir::Var::Storage::Global ||
                               v.storage == ir::Var::Storage::Name);
  }

  void visit(const Expr& e, Use use, int line) {
    if (!e) return;
    auto bad_list = [&](int v) {
      throw LiftError{"uses " + name(v) + ", a list whose items' attributes it uses, other than by those attributes and len()",
                      line};
    };
    if (e->kind == K::Load && singles_.count(e->var) && use != Use::AttrBase && use != Use::Item)
      throw LiftError{"uses " + name(e->var) + ", whose attributes it assigns, other than for its attributes", line};
    if (e->kind == K::Call && e->method >= 0 && !inlined_) {
      // A method that may be a plain Python function (`p.update(dt)`, bind_methods.h): its
      // object passed to it, as to a helper (decided once the helpers are inlined).
      helper_argument(e->args[0]->args[0], line);
      for (size_t k = 1; k < e->args.size(); k++) helper_argument(e->args[k], line);
      return;
    }
    if (e->kind == K::Call && e->args[0]->kind == K::Attr && e->args[0]->args[0]->kind == K::Load &&
        singles_.count(e->args[0]->args[0]->var))
      throw LiftError{"calls a method of " + name(e->args[0]->args[0]->var) + ", whose attributes it assigns", line};
    if (e->kind == K::Load || (e->kind == K::Attr && e->pseudo >= 0)) {
      const int v = e->kind == K::Load ? e->var : e->pseudo;
      if (rows_.count(v) && use != Use::Item)
        throw LiftError{"uses " + name(v) + " other than for its attributes (passes, compares or stores the object)", line};
      if (lists_.count(v) && use != Use::List && use != Use::Len && use != Use::Over) bad_list(v);
      if (e->kind == K::Attr) visit(e->args[0], Use::AttrBase, line);
      return;
    }
    if (e->kind == K::Attr) {
      visit(e->args[0], Use::AttrBase, line);
      return;
    }
    if (e->kind == K::Subscript && !e->name.empty()) {  // an attribute column
      visit(e->args[0], Use::Item, line);
      return;
    }
    const int l = list_of_item(e);
    if (l >= 0 && lists_.count(l)) {
      if (use != Use::Item && use != Use::Assigned)
        throw LiftError{"uses an item of " + name(l) + " other than for its attributes", line};
      visit(e->args[0], Use::List, line);
      visit(e->args[1], Use::Free, line);
      return;
    }
    if (e->kind == K::Call && e->args.size() == 2 && is_len(e->args[0])) {
      visit(e->args[1], Use::Len, line);
      return;
    }
    if (e->kind == K::Call && !inlined_ && may_be_helper(e->args[0])) {
      // An item passed to a function that may be a helper (`d(p, q)`): decided once the
      // helpers are inlined (inline_helpers runs this pass again, where a call left is none).
      visit(e->args[0], Use::Free, line);
      for (size_t k = 1; k < e->args.size(); k++) helper_argument(e->args[k], line);
      return;
    }
    for (auto& a : e->args) visit(a, Use::Free, line);
  }
  // A call of a variable that may hold a plain Python function (not a builtin's, a method or
  // a module's function).
  bool may_be_helper(const Expr& callee) const {
    if (callee->kind != K::Load) return false;
    const auto st = nest_.vars[(size_t)callee->var].storage;
    return st == ir::Var::Storage::Fast || st == ir::Var::Storage::Cell || st == ir::Var::Storage::Global ||
           st == ir::Var::Storage::Name;
  }

  // An argument of a call that may be inlined (a helper, a method; the object a method is
  // called on): an object (`d(p, q)`) or a list of objects (`b.steer(boids)`) there is
  // decided once the helpers are inlined (attribute_columns runs again on that nest, where a
  // call left that is given one is refused); anything else is visited as it is.
  void helper_argument(const Expr& a, int line) {
    const int list = a->kind == K::Load ? a->var : a->kind == K::Attr && a->pseudo >= 0 ? a->pseudo : -1;
    const bool object = is_object(a);
    if (object || (list >= 0 && lists_.count(list))) {
      nest_.objects_to_helpers = true;
      visit(a, object ? Use::Item : Use::List, line);
      return;
    }
    visit(a, Use::Free, line);
  }

  // A row variable, or an item of a list of objects.
  bool is_object(const Expr& e) const {
    if (!e) return false;
    if (e->kind == K::Load) return rows_.count(e->var) || singles_.count(e->var);
    return list_of_item(e) >= 0 && lists_.count(list_of_item(e));
  }

  void check(const Stmt& s) {
    for (auto& f : s->effects) {
      if (f.kind == ir::Effect::Kind::Assign && rows_.count(f.var)) {
        visit(f.value, Use::Assigned, s->line);
        continue;
      }
      const int root = f.base ? ir::root_var(f.base) : -1;
      if (f.kind == ir::Effect::Kind::Store && f.attr.empty() && root >= 0 && (lists_.count(root) || rows_.count(root)))
        throw LiftError{"stores into " + name(root) + ", whose items' attributes it uses", s->line};
      if (f.kind == ir::Effect::Kind::Eval && is_object(f.value)) {
        // An object evaluated for its errors only (an inlined helper's argument, which
        // CPython evaluates before the call: inline_helpers.h); or a list of them.
        visit(f.value, Use::Item, s->line);
        continue;
      }
      if (f.kind == ir::Effect::Kind::Eval && f.value && f.value->kind == K::Load && lists_.count(f.value->var)) {
        visit(f.value, Use::List, s->line);
        continue;
      }
      if (f.kind == ir::Effect::Kind::Store && !f.attr.empty()) visit(f.base, Use::Item, s->line);
      else visit(f.base, Use::Free, s->line);
      if (f.attr.empty()) visit(f.index, Use::Free, s->line);
      visit(f.value, Use::Free, s->line);
    }
    visit(s->cond, Use::Free, s->line);
    for (auto& a : s->args) visit(a, Use::Free, s->line);
    visit(s->range_callee, Use::Free, s->line);
    visit(s->reversed_callee, Use::Free, s->line);
    visit(s->zip_callee, Use::Free, s->line);
    for (auto& o : s->over) visit(o, Use::Over, s->line);
    for (auto& b : s->body) check(b);
  }

  ir::Nest& nest_;
  const bool inlined_;
  std::map<int, std::set<std::string>> singles_;  // single objects' variables: the attributes assigned
  std::map<int, int> table_of_;                   // ... and their tables' variables
  std::map<int, std::set<int>> used_;  // per item or list variable: the columns used through it
  std::set<int> rows_;   // variables whose attributes are columns
  std::set<int> lists_;  // lists whose items' attributes are columns
};
}  // namespace

ir::Nest attribute_columns(ir::Nest nest, bool inlined, const std::vector<std::string>* columns) {
  if (columns && columns->size() > nest.columns.size()) {
    // (The names a first inlining gave columns after the nest's own: the same numbers.)
    nest.columns_assigned.resize(columns->size(), 0);
    nest.columns = *columns;
  }
  if (inlined) nest.objects_to_helpers = false;
  Columns(nest, inlined).run();
  return nest;
}

}  // namespace stagepy::analysis
