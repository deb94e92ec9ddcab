// See defer_attribute_stores.h.
#include "specialize/defer_attribute_stores.h"

#include <map>
#include <set>

#include "ir/mutate.h"

namespace stagepy::specialize {
namespace {
using ir::Expr;
using ir::ExprNode;
using ir::Stmt;
using ir::StmtNode;
using K = ExprNode::Kind;

struct Refused {
  std::string why;
};

// One attribute assigned: through which object expression, and the Temp that holds it.
struct Slot {
  Expr base;
  std::string attr;
  int temp = -1;
};

class Deferral {
 public:
  Deferral(std::vector<ir::Var>& vars, const Stmt& body) : vars_(vars) { ir::collect_assigned(body, &assigned_); }

  // Every attribute assigned, with the order checks (see the header).
  void scan(const Stmt& s) {
    switch (s->kind) {
      case StmtNode::Kind::Seg:
        for (auto& f : s->effects) {
          reads(f.base);
          reads(f.index);
          reads(f.value);
        }
        for (auto& f : s->effects)
          if (f.kind == ir::Effect::Kind::Store && !f.attr.empty()) store(f.base, f.attr);
        return;
      case StmtNode::Kind::If:
        reads(s->cond);
        scan(s->body[0]);
        scan(s->body[1]);
        return;
      case StmtNode::Kind::For: case StmtNode::Kind::While:
        for (auto& a : s->args) reads(a);
        for (auto& o : s->over) reads(o);
        // Twice: a read at the top of the body comes after an assignment at its end.
        scan(s->body[0]);
        scan(s->body[0]);
        return;
      default:
        for (auto& b : s->body) scan(b);
        return;
    }
  }

  Stmt rewrite(const Stmt& body, const std::string& helper, int resume, int line, const std::function<int()>& origin) {
    // (Without loops in the call, a Temp is set and read within one iteration of any loop
    // around it: no parallel loop keeps a last value of it.)
    const bool local = !ir::contains_loop(body);
    for (auto& sl : slots_) {
      ir::Var v;
      v.name = "$" + helper + "." + sl.attr + "#" + std::to_string(vars_.size());
      v.storage = ir::Var::Storage::Temp;
      v.assigned = v.read = true;
      v.statement_local = local;
      vars_.push_back(v);
      sl.temp = (int)vars_.size() - 1;
    }
    Stmt b = ir::map_exprs(body, [&](const Expr& x) -> Expr {
      if (x->kind != K::Attr) return x;
      const Slot* sl = slot(x->args[0], x->name);
      return sl ? ir::make_load(sl->temp, x->origin) : x;
    });
    b = ir::map_stmts(b, [&](StmtNode& x) {
      for (auto& f : x.effects) {
        if (f.kind != ir::Effect::Kind::Store || f.attr.empty()) continue;
        const Slot* sl = slot(f.base, f.attr);
        if (!sl) continue;  // (an object it computes: assigned in place)
        f.kind = ir::Effect::Kind::Assign;
        f.var = sl->temp;
        f.base = f.index = nullptr;
        f.attr.clear();
      }
    });
    std::vector<ir::Effect> first, last;
    for (auto& sl : slots_) {
      ir::Effect r;
      r.kind = ir::Effect::Kind::Assign;
      r.var = sl.temp;
      r.value = ir::make_attr(sl.base, sl.attr, origin());
      r.origin = ir::kInlinedOrigin;
      first.push_back(r);
      ir::Effect w;
      w.kind = ir::Effect::Kind::Store;
      w.base = sl.base;
      ir::ConstValue placeholder;
      placeholder.kind = ir::ConstValue::Kind::Int;
      placeholder.i = -1;
      w.index = ir::make_const(placeholder, ir::kInlinedOrigin);
      w.attr = sl.attr;
      w.value = ir::make_load(sl.temp, ir::kInlinedOrigin);
      w.origin = origin();
      last.push_back(w);
    }
    return ir::make_block({ir::make_seg(std::move(first), resume, line), b, ir::make_seg(std::move(last), resume, line)});
  }

  bool any() const { return !slots_.empty(); }
  bool in_place() const { return !in_place_.empty(); }

 private:
  const Slot* slot(const Expr& base, const std::string& attr) const {
    for (auto& sl : slots_)
      if (sl.attr == attr && ir::same_pure_expr(sl.base, base)) return &sl;
    return nullptr;
  }

  void reads(const Expr& e) {
    ir::walk_expr(e, [&](const Expr& x) {
      if (x->kind == K::Attr) access(x->args[0], x->name);
    });
  }
  // `base.attr` read or assigned: after an assignment through another expression, refused.
  void access(const Expr& base, const std::string& attr) {
    auto it = owner_.find(attr);
    if (it != owner_.end() && !ir::same_pure_expr(it->second, base))
      throw Refused{"reads or assigns attribute `" + attr +
                    "` of two objects that may be one after assigning it through one of them"};
  }
  // An attribute of an object the statements compute (the items a loop takes from a list)
  // is assigned in place, where every read of it sees it (logged: see the header); one of
  // a fixed object, deferred. Never the same attribute both ways (the objects may be one).
  void store(const Expr& base, const std::string& attr) {
    if (!fixed(base)) {
      if (owner_.count(attr))
        throw Refused{"assigns attribute `" + attr + "` of an object it is passed and of one it computes (they may be one)"};
      in_place_.insert(attr);
      return;
    }
    if (in_place_.count(attr))
      throw Refused{"assigns attribute `" + attr + "` of an object it is passed and of one it computes (they may be one)"};
    access(base, attr);
    if (owner_.emplace(attr, base).second) slots_.push_back(Slot{base, attr});
  }

  // An object expression the statements never change: a variable they never assign, an
  // item of one by such indices.
  bool fixed(const Expr& e) const {
    switch (e->kind) {
      case K::Load: return !assigned_.count(e->var);
      case K::Const: return true;
      case K::Attr: return e->pseudo >= 0 && fixed(e->args[0]);
      case K::Subscript:
        if (!e->name.empty() || e->unpack != 0) return false;
        [[fallthrough]];
      case K::Binary: case K::Unary:
        for (auto& a : e->args)
          if (!fixed(a)) return false;
        return true;
      default: return false;
    }
  }

  std::vector<ir::Var>& vars_;
  std::set<int> assigned_;
  std::map<std::string, Expr> owner_;  // per attribute assigned: the object expression
  std::vector<Slot> slots_;
  std::set<std::string> in_place_;  // attributes assigned through objects it computes
};
}  // namespace

DeferredStores defer_attribute_stores(const Stmt& body, std::vector<ir::Var>& vars, const std::string& helper,
                                      int resume, int line, const std::function<int()>& origin) {
  DeferredStores r;
  r.body = body;
  try {
    Deferral d(vars, body);
    d.scan(body);
    if (d.any()) r.body = d.rewrite(body, helper, resume, line, origin);
    r.in_place = d.in_place();
  } catch (const Refused& e) {
    r.ok = false;
    r.why = e.why;
  }
  return r;
}

}  // namespace stagepy::specialize
