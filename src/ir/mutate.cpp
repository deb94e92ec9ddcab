// See mutate.h.
#include "ir/mutate.h"

#include <cstring>

namespace stagepy::ir {

Expr map_expr(const Expr& e, const ExprFn& f) {
  if (!e) return e;
  bool changed = false;
  std::vector<Expr> args;
  args.reserve(e->args.size());
  for (auto& a : e->args) {
    Expr m = map_expr(a, f);
    changed = changed || m != a;
    args.push_back(std::move(m));
  }
  if (!changed) return f(e);
  auto c = std::make_shared<ExprNode>(*e);
  c->args = std::move(args);
  return f(c);
}

Stmt map_exprs(const Stmt& s, const ExprFn& f) {
  auto c = std::make_shared<StmtNode>(*s);
  for (auto& b : c->body) b = map_exprs(b, f);
  for (auto& e : c->effects) {
    e.base = map_expr(e.base, f);
    e.index = map_expr(e.index, f);
    e.value = map_expr(e.value, f);
  }
  c->cond = map_expr(c->cond, f);
  for (auto& a : c->args) a = map_expr(a, f);
  c->range_callee = map_expr(c->range_callee, f);
  c->reversed_callee = map_expr(c->reversed_callee, f);
  c->zip_callee = map_expr(c->zip_callee, f);
  for (auto& o : c->over) o = map_expr(o, f);
  return c;
}

Stmt map_stmts(const Stmt& s, const std::function<void(StmtNode&)>& f) {
  if (!s) return s;
  auto c = std::make_shared<StmtNode>(*s);
  for (auto& b : c->body) b = map_stmts(b, f);
  f(*c);
  return c;
}

void walk_expr(const Expr& e, const std::function<void(const Expr&)>& f) {
  if (!e) return;
  f(e);
  for (auto& a : e->args) walk_expr(a, f);
}

bool reads_var(const Expr& e, int var) {
  bool r = false;
  walk_expr(e, [&](const Expr& x) { r = r || (x->kind == ExprNode::Kind::Load && x->var == var); });
  return r;
}

void collect_assigned(const Stmt& s, std::set<int>* out) {
  for_each_stmt(s, [&](const Stmt& x) {
    for (auto& e : x->effects)
      if (e.kind == Effect::Kind::Assign) out->insert(e.var);
    if (x->kind == StmtNode::Kind::For) out->insert(x->var);
  });
}

std::set<int> subscript_assigned(const Stmt& s) {
  std::set<int> out;
  for (size_t before = (size_t)-1; before != out.size();) {  // `prev = row` passes it on
    before = out.size();
    for_each_stmt(s, [&](const Stmt& x) {
      for (auto& e : x->effects) {
        if (e.kind != Effect::Kind::Assign || !e.value) continue;
        if ((e.value->kind == ExprNode::Kind::Subscript && !makes_list(e.value)) ||
            (e.value->kind == ExprNode::Kind::Load && out.count(e.value->var)))
          out.insert(e.var);
      }
    });
  }
  return out;
}

std::set<int> computed_assigned(const Stmt& s) {
  std::set<int> out;
  for_each_stmt(s, [&](const Stmt& x) {
    for (auto& e : x->effects) {
      if (e.kind != Effect::Kind::Assign || !e.value) continue;
      const Expr& v = e.value;
      if (v->kind != ExprNode::Kind::Binary && v->kind != ExprNode::Kind::Unary && v->kind != ExprNode::Kind::Call &&
          v->kind != ExprNode::Kind::NewList)
        continue;
      if (v->kind == ExprNode::Kind::Binary && v->inplace && v->args[0]->kind == ExprNode::Kind::Load &&
          v->args[0]->var == e.var)
        continue;
      out.insert(e.var);
    }
  });
  return out;
}

bool makes_list(const Expr& v) {
  if (!v) return false;
  switch (v->kind) {
    case ExprNode::Kind::NewList: return true;
    case ExprNode::Kind::Binary:
      return v->binop == BinOp::Mul && !v->inplace &&
             (v->args[0]->kind == ExprNode::Kind::NewList || v->args[1]->kind == ExprNode::Kind::NewList);
    case ExprNode::Kind::Subscript: return v->args[1]->kind == ExprNode::Kind::Slice;
    case ExprNode::Kind::Call:
      return v->args[0]->kind == ExprNode::Kind::Attr && v->args[0]->name == "copy" && v->args.size() == 1 &&
             v->kwnames.empty();
    default: return false;
  }
}

std::vector<std::pair<int, int>> variable_moves(const Stmt& s) {
  std::vector<std::pair<int, int>> moves;
  for_each_stmt(s, [&](const Stmt& x) {
    for (auto& e : x->effects)
      if (e.kind == Effect::Kind::Assign && e.value && e.value->kind == ExprNode::Kind::Load)
        moves.push_back({e.var, e.value->var});
  });
  return moves;
}

void add_moved_with(std::set<int>* vars, const std::vector<std::pair<int, int>>& moves) {
  for (size_t before = (size_t)-1; before != vars->size();) {
    before = vars->size();
    for (auto& [a, b] : moves)
      if (vars->count(a) || vars->count(b)) vars->insert(a), vars->insert(b);
  }
}

std::set<int> made_list_vars(const Stmt& s, const std::vector<Var>& vars) {
  std::set<int> out;
  for_each_stmt(s, [&](const Stmt& x) {
    for (auto& e : x->effects)
      if (e.kind == Effect::Kind::Assign && e.var >= 0 && (size_t)e.var < vars.size() && makes_list(e.value) &&
          !vars[(size_t)e.var].appended)
        out.insert(e.var);
  });
  for (size_t v = 0; v < vars.size(); v++)
    if (vars[v].resized) out.insert((int)v);  // (append_targets.h)
  add_moved_with(&out, variable_moves(s));
  return out;
}

bool assigned_before_read(const Stmt& root, int var) {
  auto mentions = [&](const Stmt& s) {
    bool found = false;
    for_each_stmt(s, [&](const Stmt& x) {
      if ((x->kind == StmtNode::Kind::For && x->var == var)) found = true;
      for (auto& e : x->effects) found = found || (e.kind == Effect::Kind::Assign && e.var == var);
    });
    for_each_expr(s, [&](const Expr& e) { found = found || (e->kind == ExprNode::Kind::Load && e->var == var); });
    return found;
  };
  // The first statement of `seq` that mentions var: a Seg assigning it without reading it.
  auto first_assigns = [&](const std::vector<Stmt>& seq, size_t* at) {
    for (size_t k = 0; k < seq.size(); k++) {
      const Stmt& s = seq[k];
      if (!mentions(s)) continue;
      *at = k;
      if (s->kind != StmtNode::Kind::Seg) return false;
      bool reads = false, assigns = false;
      for (auto& e : s->effects) {
        reads = reads || reads_var(e.base, var) || reads_var(e.index, var) || reads_var(e.value, var);
        assigns = assigns || (e.kind == Effect::Kind::Assign && e.var == var);
      }
      return assigns && !reads;
    }
    *at = seq.size();
    return false;
  };
  const std::vector<Stmt> top = flatten_blocks(root);
  size_t at = 0;
  if (first_assigns(top, &at)) return true;
  if (at >= top.size()) return false;
  const Stmt& loop = top[at];
  if (loop->kind != StmtNode::Kind::For && loop->kind != StmtNode::Kind::While) return false;
  for (auto& a : loop->args)
    if (reads_var(a, var)) return false;
  if (loop->cond && reads_var(loop->cond, var)) return false;
  if (loop->var == var || loop->body.empty()) return false;
  for (size_t k = at + 1; k < top.size(); k++)
    if (mentions(top[k])) return false;
  size_t inner = 0;
  return first_assigns(flatten_blocks(loop->body[0]), &inner);
}

std::set<int> moved_with(const Stmt& s, int var) {
  std::set<int> out{var};
  add_moved_with(&out, variable_moves(s));
  return out;
}

bool changes_lists(const Effect& f) {
  if (f.kind == Effect::Kind::Append) return true;
  bool made = false;
  if (f.kind == Effect::Kind::Assign || f.kind == Effect::Kind::Eval)
    walk_expr(f.value, [&](const Expr& e) { made = made || e->kind == ExprNode::Kind::NewList; });
  return made;
}

bool is_draw_builtin(Builtin f) { return f >= Builtin::RandomRandom && f <= Builtin::NpRandomExponential; }

int random_source(Builtin f) { return f >= Builtin::NpRandomRandom ? 1 : 0; }

unsigned random_sources(const Stmt& s) {
  unsigned bits = 0;
  for_each_expr(s, [&](const Expr& x) {
    if (is_draw(x)) bits |= 1u << random_source(x->args[0]->type->builtin);
  });
  return bits;
}

bool is_draw(const Expr& x) {
  return x->kind == ExprNode::Kind::Call && !x->args.empty() && x->args[0]->type &&
         x->args[0]->type->kind == Type::Kind::Callable && is_draw_builtin(x->args[0]->type->builtin);
}

bool draws_gauss(const Stmt& s) {
  bool found = false;
  for_each_expr(s, [&](const Expr& x) {
    if (!is_draw(x)) return;
    const Builtin f = x->args[0]->type->builtin;
    found = found || f == Builtin::RandomGaussZ || f == Builtin::NpRandomStandardNormal || f == Builtin::NpRandomNormal;
  });
  return found;
}

bool draws_random(const Expr& e) {
  bool found = false;
  walk_expr(e, [&](const Expr& x) { found = found || is_draw(x); });
  return found;
}

bool draws_random(const Stmt& s) {
  bool found = false;
  for_each_expr(s, [&](const Expr& x) { found = found || is_draw(x); });
  return found;
}

bool contains_loop(const Stmt& s) {
  bool found = false;
  for_each_stmt(s, [&](const Stmt& x) {
    found = found || x->kind == StmtNode::Kind::For || x->kind == StmtNode::Kind::While;
  });
  return found;
}

void for_each_own_expr(const Stmt& s, const std::function<void(const Expr&)>& f) {
  for (auto& e : s->effects) {
    walk_expr(e.base, f);
    walk_expr(e.index, f);
    walk_expr(e.value, f);
  }
  walk_expr(s->cond, f);
  for (auto& a : s->args) walk_expr(a, f);
  walk_expr(s->range_callee, f);
  walk_expr(s->reversed_callee, f);
  walk_expr(s->zip_callee, f);
  for (auto& o : s->over) walk_expr(o, f);
}

void for_each_expr(const Stmt& s, const std::function<void(const Expr&)>& f) {
  for_each_own_expr(s, f);
  for (auto& b : s->body) for_each_expr(b, f);
}

void for_each_stmt(const Stmt& s, const std::function<void(const Stmt&)>& f) {
  f(s);
  for (auto& b : s->body) for_each_stmt(b, f);
}

// Whether a and b are the same expression of variables, constants, subscripts and
// operators (no call): evaluated one after the other, with nothing assigned between, they
// give the same value.
bool same_pure_expr(const Expr& a, const Expr& b) {
  if (!a || !b) return a == b;
  if (a->kind != b->kind || a->args.size() != b->args.size() || !types::same(a->type, b->type)) return false;
  switch (a->kind) {
    case ExprNode::Kind::Const:
      if (a->value.kind != b->value.kind || a->value.b != b->value.b || a->value.i != b->value.i) return false;
      if (std::memcmp(&a->value.f, &b->value.f, sizeof(double)) || std::memcmp(&a->value.f2, &b->value.f2, sizeof(double)))
        return false;
      break;
    case ExprNode::Kind::Load:
      if (a->var != b->var) return false;
      break;
    case ExprNode::Kind::Attr:
      if (a->name != b->name || a->pseudo != b->pseudo) return false;
      break;
    case ExprNode::Kind::Binary:
      if (a->binop != b->binop) return false;
      break;
    case ExprNode::Kind::Unary:
      if (a->unop != b->unop) return false;
      break;
    case ExprNode::Kind::Compare:
      if (a->cmpop != b->cmpop) return false;
      break;
    case ExprNode::Kind::Subscript:
    case ExprNode::Kind::Slice:
    case ExprNode::Kind::Tuple:
    case ExprNode::Kind::Truth:
    case ExprNode::Kind::Cond:
    case ExprNode::Kind::AsType:
      break;
    default:
      return false;
  }
  for (size_t k = 0; k < a->args.size(); k++)
    if (!same_pure_expr(a->args[k], b->args[k])) return false;
  return true;
}

int update_operand(const Effect& f) {
  using K = ExprNode::Kind;
  const Expr& v = f.value;
  if (f.kind != Effect::Kind::Store || !f.base || f.base->kind != K::Load || !v || v->kind != K::Binary ||
      (v->binop != BinOp::Add && v->binop != BinOp::Sub))
    return -1;
  auto is_element = [&](const Expr& x) {
    return x->kind == K::Subscript && x->args[0]->kind == K::Load && x->args[0]->var == f.base->var &&
           same_pure_expr(x->args[1], f.index);
  };
  if (is_element(v->args[0])) return 0;
  if (v->binop == BinOp::Add && is_element(v->args[1])) return 1;
  return -1;
}

std::vector<Stmt> flatten_blocks(const Stmt& s) {
  std::vector<Stmt> out;
  std::function<void(const Stmt&)> flat = [&](const Stmt& x) {
    if (x->kind == StmtNode::Kind::Block) {
      for (auto& b : x->body) flat(b);
    } else {
      out.push_back(x);
    }
  };
  flat(s);
  return out;
}

int inlined_while_statement(const Nest& n, const Stmt& s) {
  if (s->kind != StmtNode::Kind::While || s->loop < 0 || (size_t)s->loop >= n.loops.size()) return -1;
  return n.loops[(size_t)s->loop].statement;
}

std::vector<Stmt> body_statements(const Stmt& loop) {
  std::vector<Stmt> xs = flatten_blocks(loop->body[0]);
  if (!xs.empty() && xs.back()->kind == StmtNode::Kind::Continue && xs.back()->loop == loop->loop) xs.pop_back();
  return xs;
}

bool assigned_before_read(const std::vector<Stmt>& segs) {
  std::set<int> all, assigned;  // assigned anywhere; by the Segs so far
  for (auto& s : segs) collect_assigned(s, &all);
  for (auto& s : segs) {
    bool ok = true;
    for_each_expr(s, [&](const Expr& x) {
      if (x->kind == ExprNode::Kind::Load && all.count(x->var) && !assigned.count(x->var)) ok = false;
    });
    if (!ok) return false;
    for (auto& f : s->effects)
      if (f.kind == Effect::Kind::Assign) assigned.insert(f.var);
  }
  return true;
}

bool var_plus_offset(const Expr& e, int var) {
  if (e->kind == ExprNode::Kind::Load) return e->var == var;
  if (e->kind != ExprNode::Kind::Binary) return false;
  if (e->binop == BinOp::Add)
    return (var_plus_offset(e->args[0], var) && !reads_var(e->args[1], var)) ||
           (var_plus_offset(e->args[1], var) && !reads_var(e->args[0], var));
  if (e->binop == BinOp::Sub) return var_plus_offset(e->args[0], var) && !reads_var(e->args[1], var);
  return false;
}

// The variable at the root of a subscript chain (A in A[i][j]), or -1.
int root_var(const Expr& e) {
  if (e->kind == ExprNode::Kind::Load) return e->var;
  if (e->kind == ExprNode::Kind::Attr && e->pseudo >= 0) return e->pseudo;  // self.A: read at entry
  if (e->kind == ExprNode::Kind::Subscript) return root_var(e->args[0]);
  return -1;
}

bool stores_section(const Effect& f) {
  if (f.kind != Effect::Kind::Store || f.part >= 0 || !f.base || !f.base->type || f.base->type->kind != Type::Kind::Array)
    return false;
  std::vector<Expr> parts = f.index->kind == ExprNode::Kind::Tuple ? f.index->args : std::vector<Expr>{f.index};
  for (auto& p : parts)
    if (p->kind == ExprNode::Kind::Slice) return true;
  return (int)parts.size() < f.base->type->ndim;
}

bool stores_sections(const Stmt& s) {
  bool any = false;
  for_each_stmt(s, [&](const Stmt& x) {
    for (auto& f : x->effects) any = any || stores_section(f);
  });
  return any;
}

bool is_round32(const Expr& e) {
  return e && e->kind == ExprNode::Kind::Call && e->args.size() == 2 && e->args[0]->type &&
         e->args[0]->type->kind == Type::Kind::Callable && e->args[0]->type->builtin == Builtin::Round32;
}

bool stores_anything(const Stmt& s) {
  bool any = false;
  for_each_stmt(s, [&](const Stmt& x) {
    for (auto& f : x->effects) any = any || f.kind == Effect::Kind::Store || changes_lists(f);
  });
  return any;
}

}  // namespace stagepy::ir
