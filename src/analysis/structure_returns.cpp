// structure_returns: the returns of a function's lifted body as a flag and breaks
// (structure_returns.h).
#include "analysis/structure_returns.h"

#include <utility>
#include <vector>

namespace stagepy::analysis {
namespace {

using ir::Stmt;
using ir::StmtNode;
using SK = ir::StmtNode::Kind;

class ReturnStructurer {
 public:
  ReturnStructurer(ir::Nest& nest, int flag) : nest_(nest), flag_(flag) {}

  // The statements `in` inside loop `loop` (-1: outside every loop), and whether any of
  // them returns.
  std::pair<std::vector<Stmt>, bool> list(const std::vector<Stmt>& in, int loop) {
    std::vector<Stmt> out;
    bool any = false;
    for (size_t k = 0; k < in.size(); k++) {
      const Stmt& s = in[k];
      if (returns_here(s)) {
        out.push_back(set_flag(s));
        if (loop >= 0) out.push_back(ir::make_break(loop, s->line));
        return {std::move(out), true};  // (what follows a return never runs)
      }
      auto [t, returns] = stmt(s, loop);
      out.push_back(t);
      if (!returns) continue;
      any = true;
      if (loop >= 0) {
        // A return in this loop's body left it already (a break); one in an inner loop
        // left only that loop.
        if (s->kind == SK::For || s->kind == SK::While)
          out.push_back(ir::make_if(flag(), ir::make_block({ir::make_break(loop, s->line)}), ir::make_block({}),
                                    resume_, s->line));
        continue;
      }
      // Outside every loop: the rest runs where the flag is clear.
      auto [rest, r] = list(std::vector<Stmt>(in.begin() + (std::ptrdiff_t)k + 1, in.end()), loop);
      (void)r;
      out.push_back(ir::make_if(flag(), ir::make_block({}), ir::make_block(std::move(rest)), resume_, s->line));
      return {std::move(out), true};
    }
    return {std::move(out), any};
  }

  // One statement inside loop `loop`, and whether it may return.
  std::pair<Stmt, bool> stmt(const Stmt& s, int loop) {
    switch (s->kind) {
      case SK::Block: {
        auto [b, r] = list(s->body, loop);
        return {r ? ir::make_block(std::move(b)) : s, r};
      }
      case SK::If: {
        auto [a, ra] = list(statements(s->body[0]), loop);
        auto [b, rb] = list(statements(s->body[1]), loop);
        if (!ra && !rb) return {s, false};
        auto c = std::make_shared<StmtNode>(*s);
        c->body = {ir::make_block(std::move(a)), ir::make_block(std::move(b))};
        return {c, true};
      }
      case SK::For: case SK::While: {
        auto [b, r] = list(statements(s->body[0]), s->loop);
        if (!r) return {s, false};
        auto c = std::make_shared<StmtNode>(*s);
        c->body = {ir::make_block(std::move(b))};
        return {c, true};
      }
      default:
        return {s, false};
    }
  }

  static std::vector<Stmt> statements(const Stmt& s) {
    return s->kind == SK::Block ? s->body : std::vector<Stmt>{s};
  }

  Stmt run(const Stmt& body) {
    for (size_t r = 0; r < nest_.resumes.size(); r++)
      if (nest_.resumes[r].returns) resume_ = (int)r;
    auto [b, returns] = list(body->body, -1);
    (void)returns;
    ir::ConstValue f;
    f.kind = ir::ConstValue::Kind::Bool;
    ir::Effect clear;
    clear.kind = ir::Effect::Kind::Assign;
    clear.var = flag_;
    clear.value = ir::make_const(f, -1);
    b.insert(b.begin(), ir::make_seg({clear}, resume_, body->body.empty() ? 0 : body->body[0]->line));
    return ir::make_block(std::move(b));
  }

 private:
  ir::Nest& nest_;
  const int flag_;
  int resume_ = -1;  // a resume point for the statements this pass makes (the inliner
                     // gives every statement its calling statement's)

  bool returns_here(const Stmt& s) const {
    return s->kind == SK::Exit && s->resume >= 0 && nest_.resumes[(size_t)s->resume].returns;
  }
  ir::Expr flag() const { return ir::make_truth(ir::make_load(flag_, -1), -1); }
  Stmt set_flag(const Stmt& exit) const {
    ir::ConstValue t;
    t.kind = ir::ConstValue::Kind::Bool;
    t.b = true;
    ir::Effect e;
    e.kind = ir::Effect::Kind::Assign;
    e.var = flag_;
    e.value = ir::make_const(t, -1);
    return ir::make_seg({e}, exit->resume, exit->line);
  }
};

}  // namespace

Stmt structure_returns(const Stmt& body, ir::Nest& nest) {
  ir::Var flag;
  flag.name = "returned";
  flag.storage = ir::Var::Storage::Temp;
  flag.assigned = flag.read = true;
  nest.vars.push_back(flag);
  return ReturnStructurer(nest, (int)nest.vars.size() - 1).run(body);
}

}  // namespace stagepy::analysis
