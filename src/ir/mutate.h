// Rebuilding IR trees: in, a tree and a function applied to every node bottom-up; out,
// the new tree (nodes the function leaves alone are shared, not copied).
#pragma once
#include <functional>

#include "ir/ir.h"

namespace stagepy::ir {

using ExprFn = std::function<Expr(const Expr&)>;  // sees a node whose children are rewritten

Expr map_expr(const Expr& e, const ExprFn& f);
Stmt map_exprs(const Stmt& s, const ExprFn& f);   // applies map_expr to every expression in `s`
void for_each_expr(const Stmt& s, const std::function<void(const Expr&)>& f);  // pre-order
void for_each_stmt(const Stmt& s, const std::function<void(const Stmt&)>& f);  // pre-order

}  // namespace stagepy::ir
