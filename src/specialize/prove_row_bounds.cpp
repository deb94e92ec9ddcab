// See prove_row_bounds.h.
#include "specialize/prove_row_bounds.h"

#include <map>
#include <optional>
#include <set>
#include <vector>

#include "ir/mutate.h"

namespace stagepy::specialize {
namespace {

using ir::Expr;
using ir::ExprNode;
using ir::Stmt;
using ir::StmtNode;
using K = ExprNode::Kind;

std::optional<int64_t> const_int(const Expr& e) {
  if (e && e->kind == K::Const && e->value.kind == ir::ConstValue::Kind::Int) return e->value.i;
  return std::nullopt;
}

// `len(R)` or `len(R) - d` (d >= 0 constant): R; else null.
Expr len_operand(const Expr& stop) {
  Expr e = stop;
  if (e && e->kind == K::Binary && e->binop == ir::BinOp::Sub && !e->inplace) {
    auto d = const_int(e->args[1]);
    if (!d || *d < 0) return nullptr;
    e = e->args[0];
  }
  if (!e || e->kind != K::Call || e->args.size() != 2 || !e->kwnames.empty()) return nullptr;
  const TypeRef& f = e->args[0]->type;
  if (!f || f->kind != Type::Kind::Callable || f->builtin != Builtin::Len) return nullptr;
  return e->args[1];
}

class Prover {
 public:
  explicit Prover(const TypedNest& tn) : tn_(tn) {}

  FactSet run(const FactSet& facts) {
    ir::for_each_stmt(tn_.nest.root, [&](const Stmt& s) {
      if (s->kind == StmtNode::Kind::Range) ranges_[s->loop] = s.get();
    });
    visit(tn_.nest.root);
    // Every subscript of the offset, proven: the fact describes them all.
    std::map<int, int> seen;
    ir::for_each_expr(tn_.nest.root, [&](const Expr& e) {
      if (e->kind == K::Subscript) seen[e->origin]++;
    });
    FactSet out = facts;
    for (auto& [origin, n] : proven_)
      if (origin >= 0 && seen[origin] == n) {
        out.add(Fact{FactKind::InBounds, origin, 0, -1});
        out.add(Fact{FactKind::NonNeg, origin, 0, -1});
      }
    return out;
  }

 private:
  const TypedNest& tn_;
  std::map<int, const StmtNode*> ranges_;  // loop -> its Range statement
  std::map<int, int> proven_;             // origin -> subscripts of it proven in range

  void visit(const Stmt& s) {
    if (s->kind == StmtNode::Kind::For) {
      if (Expr row = row_of(s)) {
        std::set<const ExprNode*> found;
        ir::for_each_expr(s->body[0], [&](const Expr& e) {
          if (e->kind == K::Subscript && !found.count(e.get()) && e->args[1]->kind == K::Load &&
              e->args[1]->var == s->var && ir::same_pure_expr(e->args[0], row)) {
            found.insert(e.get());
            proven_[e->origin]++;
          }
        });
      }
    }
    for (const Stmt& b : s->body) visit(b);
  }

  // R, for a loop `for j in range([c,] len(R) [- d][, s])` over a row R whose length stays
  // the same while the loop runs, and a body that assigns neither j nor R's variables.
  Expr row_of(const Stmt& s) {
    if (s->iter != StmtNode::Iter::Range || s->reversed_callee || s->var < 0) return nullptr;
    auto it = ranges_.find(s->loop);
    if (it == ranges_.end()) return nullptr;
    const std::vector<Expr>& a = it->second->args;
    if (a.empty() || a.size() > 3) return nullptr;
    if (a.size() >= 2) {
      auto c = const_int(a[0]);
      if (!c || *c < 0) return nullptr;
    }
    if (a.size() == 3) {
      auto st = const_int(a[2]);
      if (!st || *st <= 0) return nullptr;
    }
    Expr row = len_operand(a.size() == 1 ? a[0] : a[1]);
    if (!row || !row->type || row->type->kind == Type::Kind::Unknown) return nullptr;
    std::set<int> assigned;
    ir::collect_assigned(s->body[0], &assigned);
    if (assigned.count(s->var) || !steady_row(row, assigned)) return nullptr;
    return row;
  }

  // Whether `row` names the same row of the same length all through a loop body that
  // assigns `assigned`.
  bool steady_row(const Expr& row, const std::set<int>& assigned) const {
    const Type& t = *row->type;
    if (row->kind == K::Load) {
      if (assigned.count(row->var)) return false;
      if (t.kind == Type::Kind::View) return true;  // a row of a container, taken before
      return t.kind == Type::Kind::Array && !t.made && !t.temp && !t.local && t.ndim >= 1;
    }
    if (row->kind != K::Subscript || t.kind != Type::Kind::Array || t.made) return false;
    const Expr& base = row->args[0];
    if (base->kind != K::Load || assigned.count(base->var) || !base->type || base->type->kind != Type::Kind::Array ||
        base->type->made || base->type->temp || base->type->local)
      return false;
    return steady_int(row->args[1], assigned);
  }

  // An int expression of constants and variables the body does not assign.
  static bool steady_int(const Expr& e, const std::set<int>& assigned) {
    switch (e->kind) {
      case K::Const: return e->value.kind == ir::ConstValue::Kind::Int;
      case K::Load: return !assigned.count(e->var) && e->type && e->type->kind == Type::Kind::PyInt;
      case K::Binary:
        return !e->inplace && steady_int(e->args[0], assigned) && steady_int(e->args[1], assigned);
      case K::Unary: return steady_int(e->args[0], assigned);
      // The index a row variable holds (`row = A[i]` reads as `A[as(row)]` once typed).
      case K::AsType: return e->args[0]->kind == K::Load && !assigned.count(e->args[0]->var);
      default: return false;
    }
  }
};

}  // namespace

FactSet prove_row_bounds(const TypedNest& tn, const FactSet& facts) { return Prover(tn).run(facts); }

}  // namespace stagepy::specialize
