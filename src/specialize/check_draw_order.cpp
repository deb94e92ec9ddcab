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
  auto offset = [&](int r) { return r >= 0 && (size_t)r < nest.resumes.size() ? nest.resumes[(size_t)r].offset : -1; };
  auto start = [&](const Stmt& s) { return offset(s->resume); };
  std::string why;
  // `inside`: the start of the statement whose inlined call's statements these are (a loop
  // or branch of the call's: they run in their order, none computed ahead), or -1.
  std::function<void(const Stmt&, int)> walk = [&](const Stmt& b, int inside) {
    if (!why.empty()) return;
    if (b->kind == StmtNode::Kind::Block) {
      // The statements in order, blocks inside blocks flattened (inline_helpers puts a
      // statement and the parts before it in a block of their own, or the parts alone).
      const std::vector<Stmt> xs = ir::flatten_blocks(b);
      for (size_t i = 0; i < xs.size();) {
        // One source statement: the parts computed before it and the statement, one resume point.
        size_t j = i + 1;
        while (j < xs.size() && start(xs[i]) >= 0 && start(xs[j]) == start(xs[i])) j++;
        int drawing = 0;
        for (size_t k = i; k < j && start(xs[i]) != inside; k++)
          if (k + 1 < j ? ir::draws_random(xs[k]) : own_expressions_draw(xs[k])) drawing++;
        if (drawing >= 2) {
          why = "draws random numbers at line " + std::to_string(xs[j - 1]->line) +
                " both in a generator expression or a function it calls (computed first) and elsewhere in the "
                "statement: the numbers would come in another order than CPython's";
          return;
        }
        i = j;
      }
      for (auto& x : xs) walk(x, inside);
      return;
    }
    // A compound statement's own statements: within its statement where it has one (an
    // inlined call's loop or branch carries its calling statement's resume point; its while
    // loops, LoopInfo::statement).
    int in = start(b) >= 0 ? start(b) : inside;
    if (const int r = ir::inlined_while_statement(nest, b); r >= 0) in = offset(r);
    for (auto& c : b->body) walk(c, in);
  };
  walk(nest.root, -1);
  return why;
}

}  // namespace stagepy::specialize
