// See while_exits.h.
#include "analysis/while_exits.h"

#include <set>

#include "ir/mutate.h"

namespace stagepy::analysis {
namespace {

using ir::Stmt;
using ir::StmtNode;

// The loops `s` holds (its own included).
void loops_in(const Stmt& s, std::set<int>* out) {
  ir::for_each_stmt(s, [&](const Stmt& x) {
    if (x->kind == StmtNode::Kind::For || x->kind == StmtNode::Kind::While) out->insert(x->loop);
  });
}

// Whether `s` holds a statement that leaves `loop`: a break of it or of a loop around it, a
// continue of a loop around it (`inner`: the loops inside `loop`, and `loop` itself).
bool leaves(const Stmt& s, int loop, const std::set<int>& inner) {
  bool found = false;
  ir::for_each_stmt(s, [&](const Stmt& x) {
    if (x->kind == StmtNode::Kind::Break) found = found || !inner.count(x->loop) || x->loop == loop;
    if (x->kind == StmtNode::Kind::Continue) found = found || !inner.count(x->loop);
    if (x->kind == StmtNode::Kind::Exit) found = true;
  });
  return found;
}

}  // namespace

std::string while_exit_problem(const Stmt& loop, const std::vector<ir::Var>& vars, int* watched) {
  if (watched) *watched = -1;
  std::set<int> inner;
  loops_in(loop, &inner);
  // What the loop changes: variables it assigns, containers it stores into.
  std::set<int> changed;
  ir::collect_assigned(loop->body[0], &changed);
  ir::for_each_stmt(loop->body[0], [&](const Stmt& x) {
    if (x->kind != StmtNode::Kind::Seg) return;
    for (const auto& f : x->effects)
      if (f.kind == ir::Effect::Kind::Store) changed.insert(ir::root_var(f.base));
  });
  // A method may change its object (`d.popitem()`): whether the nest can call it is for
  // type inference to say, with its own reason.
  ir::for_each_expr(loop->body[0], [&](const ir::Expr& e) {
    if (e->kind == ir::ExprNode::Kind::Call && e->args.size() >= 1 && e->args[0] &&
        e->args[0]->kind == ir::ExprNode::Kind::Attr && !e->args[0]->args.empty())
      changed.insert(ir::root_var(e->args[0]->args[0]));
  });
  // What decides its exits: the tests of the conditionals that hold one (a break with no
  // conditional around it ends the loop by itself).
  bool exits = false, decided = false;
  std::set<int> tested;
  // An element the tests read at a place the loop never moves, of a container it never
  // writes (`ready[0]` in `while not ready[0] and spins < limit:`): only another thread
  // could change it, and native code would not see that.
  // (An element of a container the tests also read at a place the loop moves, `a[i]` in
  // `while st and a[st[-1]] < a[i]:`, is data the loop compares, not such a flag.)
  std::string flag;
  int flag_var = -1;
  std::vector<int> fixed_roots;  // containers read at a place the loop never moves, in order
  std::set<int> moving_roots;    // containers read at a place it moves
  std::set<const ir::ExprNode*> chained;  // subscripts inside a chain seen from its outermost
  std::function<void(const Stmt&, bool)> walk = [&](const Stmt& s, bool under_test) {
    switch (s->kind) {
      case StmtNode::Kind::Break: case StmtNode::Kind::Continue: case StmtNode::Kind::Exit:
        if (leaves(s, loop->loop, inner)) {
          exits = true;
          decided = decided || !under_test;
        }
        return;
      case StmtNode::Kind::If:
        if (leaves(s, loop->loop, inner))
          ir::walk_expr(s->cond, [&](const ir::Expr& e) {
            if (e->kind == ir::ExprNode::Kind::Load) tested.insert(e->var);
            if (e->kind == ir::ExprNode::Kind::Subscript && !chained.count(e.get())) {
              // The whole chain (`M[0][j]` moves with j): every index along it.
              const int root = ir::root_var(e);
              bool moves = root < 0 || changed.count(root);
              for (const ir::ExprNode* x = e.get(); x && x->kind == ir::ExprNode::Kind::Subscript;
                   x = x->args[0].get()) {
                chained.insert(x->args[0].get());
                ir::walk_expr(x->args[1], [&](const ir::Expr& y) {
                  moves = moves || y->kind == ir::ExprNode::Kind::Call ||
                          (y->kind == ir::ExprNode::Kind::Load && changed.count(y->var));
                });
              }
              if (!moves && (size_t)root < vars.size()) fixed_roots.push_back(root);
              if (moves && root >= 0) moving_roots.insert(root);
            }
          });
        for (const auto& b : s->body) walk(b, true);
        return;
      default:
        for (const auto& b : s->body) walk(b, under_test);
    }
  };
  walk(loop->body[0], false);
  for (int root : fixed_roots)
    if (!moving_roots.count(root)) {
      flag = vars[(size_t)root].name, flag_var = root;
      break;
    }
  if (!exits) return "a while loop with no way out but an exception";
  if (decided) return "";
  bool moves = false;
  for (int v : tested) moves = moves || changed.count(v);
  if (moves && flag.empty()) return "";
  if (moves && watched) {
    *watched = flag_var;
    return "";
  }
  if (moves)
    return watched_element_problem(flag);
  std::string names;
  for (int v : tested)
    if (v >= 0 && (size_t)v < vars.size()) names += (names.empty() ? "`" : ", `") + vars[(size_t)v].name + "`";
  return "a while loop whose test reads nothing the loop changes" +
         (names.empty() ? std::string() : " (" + names + ")") + ": it could only end by another thread's hand";
}

std::string watched_element_problem(const std::string& name) {
  return "a while loop whose test reads an element of `" + name +
         "` that the loop never changes: only another thread could change it while the loop runs";
}

}  // namespace stagepy::analysis
