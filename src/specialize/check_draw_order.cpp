// See check_draw_order.h.
#include "specialize/check_draw_order.h"

#include <functional>
#include <vector>

#include "ir/mutate.h"

namespace stagepy::specialize {
namespace {
using ir::Stmt;
using ir::StmtNode;

// Whether the statement's own expressions draw (not those of the statements in its body).
bool own_expressions_draw(const Stmt& s) {
  bool found = false;
  ir::for_each_own_expr(s, [&](const ir::Expr& x) { found = found || ir::is_draw(x); });
  return found;
}
}  // namespace

std::string check_draw_order(const ir::Nest& nest) {
  // A statement's start (its resume point's offset: the parts before it resume there too,
  // some through resume points of their own, inside their loops).
  auto start = [&](const Stmt& s) {
    return s->resume >= 0 && (size_t)s->resume < nest.resumes.size() ? nest.resumes[(size_t)s->resume].offset : -1;
  };
  std::string why;
  ir::for_each_stmt(nest.root, [&](const Stmt& b) {
    if (!why.empty() || b->kind != StmtNode::Kind::Block) return;
    // The statements in order, blocks inside blocks flattened (inline_helpers puts a
    // statement and the parts before it in a block of their own, or the parts alone).
    std::vector<Stmt> xs;
    std::function<void(const Stmt&)> flatten = [&](const Stmt& x) {
      if (x->kind != StmtNode::Kind::Block) {
        xs.push_back(x);
        return;
      }
      for (auto& y : x->body) flatten(y);
    };
    flatten(b);
    for (size_t i = 0; i < xs.size();) {
      // One source statement: the parts computed before it and the statement, one resume point.
      size_t j = i + 1;
      while (j < xs.size() && start(xs[i]) >= 0 && start(xs[j]) == start(xs[i])) j++;
      int drawing = 0;
      for (size_t k = i; k < j; k++)
        if (k + 1 < j ? ir::draws_random(xs[k]) : own_expressions_draw(xs[k])) drawing++;
      if (drawing >= 2) {
        why = "draws random numbers at line " + std::to_string(xs[j - 1]->line) +
              " both in a generator expression or a function it calls (computed first) and elsewhere in the "
              "statement: the numbers would come in another order than CPython's";
        return;
      }
      i = j;
    }
  });
  return why;
}

}  // namespace stagepy::specialize
