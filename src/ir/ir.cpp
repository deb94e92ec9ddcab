// Constructors for the loop-nest IR (see ir.h).
#include "ir/ir.h"

#include <cstdlib>

namespace stagepy::ir {

std::string shown_name(const Var& v) {
  const std::string& n = v.name;
  // (The helper's name may hold dots, a method's "p.update"; a local's holds none.)
  const size_t hash = n.rfind('#'), dot = hash == std::string::npos ? n.find('.') : n.rfind('.', hash);
  if (v.storage != Var::Storage::Temp || n.size() < 2 || n[0] != '$' || dot == std::string::npos ||
      hash == std::string::npos || hash < dot)
    return "`" + n + "`";
  const std::string helper = n.substr(1, dot - 1), local = n.substr(dot + 1, hash - dot - 1);
  if (local == "return") return "the value `" + helper + "` returns";
  return "`" + local + "` of `" + helper + "`";
}

std::string source_name(const Var& v) {
  const std::string& n = v.name;
  const size_t hash = n.rfind('#');
  if (v.storage != Var::Storage::Temp || n.size() < 2 || n[0] != '$' || hash == std::string::npos) return n;
  const size_t dot = n.rfind('.', hash);
  if (dot == std::string::npos) return n;
  return n.substr(dot + 1, hash - dot - 1);
}

const char* binop_name(BinOp op) {
  static const char* n[] = {"+", "-", "*", "/", "//", "%", "**", "<<", ">>", "&", "|", "^", "@"};
  return n[static_cast<int>(op)];
}
const char* unop_name(UnOp op) {
  static const char* n[] = {"-", "+", "~", "not "};
  return n[static_cast<int>(op)];
}
const char* cmpop_name(CmpOp op) {
  static const char* n[] = {"<", "<=", "==", "!=", ">", ">=", "is", "is not"};
  return n[static_cast<int>(op)];
}

namespace {
std::shared_ptr<ExprNode> node(ExprNode::Kind k, int origin) {
  auto e = std::make_shared<ExprNode>();
  e->kind = k;
  e->origin = origin;
  e->type = types::unknown();
  return e;
}
std::shared_ptr<StmtNode> snode(StmtNode::Kind k, int line) {
  auto s = std::make_shared<StmtNode>();
  s->kind = k;
  s->line = line;
  return s;
}
}  // namespace

Expr make_const(ConstValue v, int origin) {
  auto e = node(ExprNode::Kind::Const, origin);
  e->value = v;
  return e;
}
Expr make_load(int var, int origin) {
  auto e = node(ExprNode::Kind::Load, origin);
  e->var = var;
  return e;
}
Expr make_attr(Expr obj, std::string name, int origin) {
  auto e = node(ExprNode::Kind::Attr, origin);
  e->name = std::move(name);
  e->args = {std::move(obj)};
  return e;
}
Expr make_slice(Expr start, Expr stop, Expr step, int origin) {
  auto e = node(ExprNode::Kind::Slice, origin);
  e->args = {std::move(start), std::move(stop), std::move(step)};
  return e;
}
Expr make_unpacked_item(Expr v, int k, int n, int origin) {
  ConstValue c;
  c.kind = ConstValue::Kind::Int;
  c.i = k;
  auto e = node(ExprNode::Kind::Subscript, origin);
  e->args = {std::move(v), make_const(c, origin)};
  e->unpack = n;
  return e;
}
Expr make_subscript(Expr base, Expr index, int origin) {
  auto e = node(ExprNode::Kind::Subscript, origin);
  e->args = {std::move(base), std::move(index)};
  return e;
}
Expr make_tuple(std::vector<Expr> elems, int origin) {
  auto e = node(ExprNode::Kind::Tuple, origin);
  e->args = std::move(elems);
  return e;
}
Expr make_new_list(std::vector<Expr> elems, int origin) {
  auto e = node(ExprNode::Kind::NewList, origin);
  e->args = std::move(elems);
  return e;
}
Expr make_binary(BinOp op, Expr a, Expr b, bool inplace, int origin) {
  auto e = node(ExprNode::Kind::Binary, origin);
  e->binop = op;
  e->inplace = inplace;
  e->args = {std::move(a), std::move(b)};
  return e;
}
Expr make_unary(UnOp op, Expr a, int origin) {
  auto e = node(ExprNode::Kind::Unary, origin);
  e->unop = op;
  e->args = {std::move(a)};
  return e;
}
Expr make_compare(CmpOp op, Expr a, Expr b, int origin) {
  auto e = node(ExprNode::Kind::Compare, origin);
  e->cmpop = op;
  e->args = {std::move(a), std::move(b)};
  return e;
}
Expr make_truth(Expr a, int origin) {
  if (a->kind == ExprNode::Kind::Truth) return a;
  auto e = node(ExprNode::Kind::Truth, origin);
  e->args = {std::move(a)};
  return e;
}
Expr make_call(Expr callee, std::vector<Expr> args, std::vector<std::string> kwnames, int origin) {
  auto e = node(ExprNode::Kind::Call, origin);
  e->args.reserve(args.size() + 1);
  e->args.push_back(std::move(callee));
  for (auto& a : args) e->args.push_back(std::move(a));
  e->kwnames = std::move(kwnames);
  return e;
}
Expr make_cond(Expr c, Expr t, Expr f, int origin) {
  auto e = node(ExprNode::Kind::Cond, origin);
  e->args = {std::move(c), std::move(t), std::move(f)};
  return e;
}
Expr make_seq(std::vector<Expr> items, int origin) {
  auto e = node(ExprNode::Kind::Seq, origin);
  e->args = std::move(items);
  return e;
}
Expr with_type(const Expr& e, TypeRef type) {
  auto c = std::make_shared<ExprNode>(*e);
  c->type = std::move(type);
  return c;
}

Stmt make_block(std::vector<Stmt> stmts) {
  auto s = snode(StmtNode::Kind::Block, 0);
  s->body = std::move(stmts);
  return s;
}
Stmt make_seg(std::vector<Effect> effects, int resume, int line) {
  auto s = snode(StmtNode::Kind::Seg, line);
  s->effects = std::move(effects);
  s->resume = resume;
  return s;
}
Stmt make_if(Expr cond, Stmt then_s, Stmt else_s, int resume, int line) {
  auto s = snode(StmtNode::Kind::If, line);
  s->cond = std::move(cond);
  s->body = {std::move(then_s), std::move(else_s)};
  s->resume = resume;
  return s;
}
Stmt make_for(int var, Expr callee, std::vector<Expr> range_args, Stmt body, int loop, int resume, int line) {
  auto s = snode(StmtNode::Kind::For, line);
  s->var = var;
  s->range_callee = std::move(callee);
  s->args = std::move(range_args);
  s->body = {std::move(body)};
  s->loop = loop;
  s->resume = resume;
  return s;
}
Stmt make_while(Stmt body, int loop, int line) {
  auto s = snode(StmtNode::Kind::While, line);
  s->body = {std::move(body)};
  s->loop = loop;
  return s;
}
Stmt make_break(int loop, int line) {
  auto s = snode(StmtNode::Kind::Break, line);
  s->loop = loop;
  return s;
}
Stmt make_continue(int loop, int line) {
  auto s = snode(StmtNode::Kind::Continue, line);
  s->loop = loop;
  return s;
}
Stmt make_exit(int resume, int line) {
  auto s = snode(StmtNode::Kind::Exit, line);
  s->resume = resume;
  return s;
}

Stmt make_range(int loop, std::vector<Expr> args, int resume, int line) {
  auto s = snode(StmtNode::Kind::Range, line);
  s->loop = loop;
  s->args = std::move(args);
  s->resume = resume;
  return s;
}
Expr make_loop_nonempty(int loop) {
  auto e = node(ExprNode::Kind::LoopNonEmpty, -1);
  e->var = loop;
  e->type = types::py_bool();
  return e;
}
Expr make_guard(Expr ok, Expr value) {
  auto e = node(ExprNode::Kind::Guard, value->origin);
  e->type = value->type;
  e->args = {std::move(ok), std::move(value)};
  return e;
}
Expr make_complex_warn(BinOp op, bool single, std::vector<Expr> parts, std::vector<std::string> operand_types,
                       int origin) {
  auto e = node(ExprNode::Kind::ComplexWarn, origin);
  e->type = types::none();
  e->binop = op;
  e->name = single ? "complex64" : "complex128";
  e->args = std::move(parts);
  e->kwnames = std::move(operand_types);
  return e;
}
Expr make_as_type(Expr value, TypeRef type) {
  auto e = node(ExprNode::Kind::AsType, value->origin);
  e->type = std::move(type);
  e->args = {std::move(value)};
  return e;
}

std::optional<int64_t> constant_trip(const std::vector<Expr>& range_args) {
  std::vector<int64_t> a;
  for (auto& e : range_args) {
    if (e->kind != ExprNode::Kind::Const || e->value.kind != ConstValue::Kind::Int) return std::nullopt;
    a.push_back(e->value.i);
  }
  if (a.empty() || a.size() > 3) return std::nullopt;
  int64_t start = a.size() == 1 ? 0 : a[0], stop = a.size() == 1 ? a[0] : a[1], step = a.size() == 3 ? a[2] : 1;
  if (step == 0 || std::abs(start) > (int64_t(1) << 40) || std::abs(stop) > (int64_t(1) << 40)) return std::nullopt;
  int64_t span = step > 0 ? stop - start : start - stop;
  return span <= 0 ? 0 : (span - 1) / std::abs(step) + 1;
}

}  // namespace stagepy::ir
