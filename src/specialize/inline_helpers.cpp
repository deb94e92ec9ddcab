// See inline_helpers.h.
#include "specialize/inline_helpers.h"

#include "ir/mutate.h"

namespace stagepy::specialize {
namespace {

constexpr int kMaxDepth = 4;  // helpers calling helpers; deeper calls stay calls (and fail typing)
// Arguments are substituted at each use (pure expressions; LLVM shares the common ones):
// a body that uses its parameters many times, nested, could grow without bound.
constexpr size_t kMaxNodes = 4000;

size_t count_nodes(const ir::Expr& e, size_t limit) {
  size_t n = 1;
  for (auto& a : e->args) {
    if (n > limit) break;
    n += count_nodes(a, limit);
  }
  return n;
}

struct Failure {
  std::string why;
};

class Inliner {
 public:
  Inliner(const ir::Nest& nest, const std::map<int, Helper>& helpers) : nest_(nest), helpers_(helpers) {}

  // A call node whose callee names a helper: its inlined form; otherwise `e` itself.
  ir::Expr call(const ir::Expr& e, int depth) {
    if (e->kind != ir::ExprNode::Kind::Call || e->args[0]->kind != ir::ExprNode::Kind::Load) return e;
    auto it = helpers_.find(e->args[0]->var);
    if (it == helpers_.end() || depth >= kMaxDepth) return e;
    const Helper& h = it->second;
    if (!e->kwnames.empty()) throw Failure{"calls `" + h.name + "` with keyword arguments"};
    std::vector<ir::Expr> args(e->args.begin() + 1, e->args.end());
    const int n = h.body->nparams, given = (int)args.size(), first_default = n - (int)h.defaults.size();
    if (given > n || given < first_default)
      throw Failure{"calls `" + h.name + "` with " + std::to_string(given) + " arguments (it takes " +
                    (first_default < n ? std::to_string(first_default) + " to " : "") + std::to_string(n) + ")"};
    const size_t evaluated = args.size();  // the defaults are constants: nothing to evaluate
    for (int k = given; k < n; k++) args.push_back(h.defaults[(size_t)(k - first_default)]);
    ir::Expr body = ir::map_expr(h.body->body, [&](const ir::Expr& x) -> ir::Expr {
      if (x->kind == ir::ExprNode::Kind::Load) {
        if (x->var < h.body->nparams) return args[(size_t)x->var];
        return ir::make_load(h.global_vars[(size_t)(x->var - h.body->nparams)], ir::kInlinedOrigin);
      }
      if (x->kind == ir::ExprNode::Kind::Attr) return bind_attr(x);
      if (x->kind == ir::ExprNode::Kind::Call) return call(x, depth + 1);
      return x;
    });
    std::vector<ir::Expr> items(args.begin(), args.begin() + (std::ptrdiff_t)evaluated);
    items.push_back(std::move(body));
    ir::Expr out = ir::make_seq(std::move(items), e->origin);
    if (count_nodes(out, kMaxNodes) > kMaxNodes) throw Failure{"inlining `" + h.name + "` makes too large an expression"};
    return out;
  }

 private:
  const ir::Nest& nest_;
  const std::map<int, Helper>& helpers_;

  // `math.sqrt` in a helper: the attribute variable the dispatcher made for it.
  ir::Expr bind_attr(const ir::Expr& x) const {
    const ir::Expr& base = x->args[0];
    if (base->kind != ir::ExprNode::Kind::Load || x->pseudo >= 0) return x;
    const std::string full = nest_.vars[(size_t)base->var].name + "." + x->name;
    for (size_t v = 0; v < nest_.vars.size(); v++)
      if (nest_.vars[v].storage == ir::Var::Storage::Attr && nest_.vars[v].index == base->var &&
          nest_.vars[v].name == full) {
        auto c = std::make_shared<ir::ExprNode>(*x);
        c->pseudo = (int)v;
        return c;
      }
    return x;
  }
};

}  // namespace

InlineResult inline_helpers(const ir::Nest& nest, const std::map<int, Helper>& helpers) {
  InlineResult r;
  r.nest = nest;
  if (helpers.empty()) return r;
  Inliner in(nest, helpers);
  try {
    r.nest.root = ir::map_exprs(nest.root, [&](const ir::Expr& e) { return in.call(e, 0); });
  } catch (const Failure& f) {
    r.ok = false;
    r.reason = f.why;
  }
  return r;
}

}  // namespace stagepy::specialize
