// Rebuilding IR trees: in, a tree and a function applied to every node bottom-up; out,
// the new tree (nodes the function leaves alone are shared, not copied). And walks and
// small queries over a tree.
#pragma once
#include <functional>
#include <set>

#include "ir/ir.h"

namespace stagepy::ir {

using ExprFn = std::function<Expr(const Expr&)>;  // sees a node whose children are rewritten

Expr map_expr(const Expr& e, const ExprFn& f);
Stmt map_exprs(const Stmt& s, const ExprFn& f);   // applies map_expr to every expression in `s`
// A copy of `s` in which `f` has seen every statement node (children first), to change its
// own fields (variables, loop ids, resume points; not its expressions: map_exprs).
Stmt map_stmts(const Stmt& s, const std::function<void(StmtNode&)>& f);
void for_each_expr(const Stmt& s, const std::function<void(const Expr&)>& f);  // pre-order
// The statement's own expressions only (its effects, condition, range and loop headers),
// not those of the statements in its body.
void for_each_own_expr(const Stmt& s, const std::function<void(const Expr&)>& f);
void for_each_stmt(const Stmt& s, const std::function<void(const Stmt&)>& f);  // pre-order
void walk_expr(const Expr& e, const std::function<void(const Expr&)>& f);      // pre-order; e may be null
bool reads_var(const Expr& e, int var);  // whether e loads variable `var`
// Whether an effect appends to a list or makes one (`out.append(x)`, `row = []`): the
// runtime keeps those lists' items in order, so loops holding it run in order, on the CPU.
bool changes_lists(const Effect& f);
// Whether `e` (or any expression of statement `s`, nested ones included) calls one of the
// `random` module's functions (Builtin::RandomRandom...): each call draws from the generator,
// so such statements run once each, in CPython's order.
bool draws_random(const Expr& e);
bool draws_random(const Stmt& s);
bool is_draw(const Expr& x);  // `x` itself is such a call (typed)
bool is_draw_builtin(Builtin f);  // a call of `f` draws (RandomRandom... NpRandomExponential)
// The generator a draw builtin draws from (backends/cpu/random_draws.h's RandomSource: 0 the
// random module's, 1 NumPy's); the set of them `s` draws from, as bits.
int random_source(Builtin f);
unsigned random_sources(const Stmt& s);
// Whether `s` draws a number whose twin the generator keeps (random.gauss(), np.random.randn()).
bool draws_gauss(const Stmt& s);
bool contains_loop(const Stmt& s);       // whether s is or holds a For or While loop
// Adds to `out` the variables `s` assigns: by assignment effects, or as a For loop's variable.
void collect_assigned(const Stmt& s, std::set<int>* out);
// The variables some assignment in `s` gives a subscript's value (`row = A[i]`, the items of a
// loop over a sequence) or another such variable's (`prev = row`): they may come to hold a
// row of another container (a view), which no fact about the value they held at entry
// describes. (A slice `L[a:b]` is a copy: made_list_vars.)
std::set<int> subscript_assigned(const Stmt& s);
// The variables some assignment in `s` gives a computed value (an operator or a call, but
// not `a op= x` of the variable itself): where that value is an array (`d = X[i] - X[j]`),
// the variable holds memory of the kernel's own, which no access to the arrays at entry
// touches, and no fact about the value it held at entry describes.
std::set<int> computed_assigned(const Stmt& s);
// Whether an assigned value makes a new list (untyped IR): `[x] * n`, `n * [x]`, a list
// display `[a, b]`, a slice `L[a:b]` (a copy of a list; of an array, a view that typing
// refuses), `L.copy()`.
bool makes_list(const Expr& value);
// The variables that may hold a list the nest makes (Type::made): those assigned a value
// that makes one (makes_list; not lists the nest only appends to, Var::appended), those whose
// lists grow or shrink (Var::resized), and with them every variable one of them is assigned to or from (`prev = cur`), so that all hold
// their lists the same way. No fact about a list such a variable held at entry describes
// what it holds later.
std::set<int> made_list_vars(const Stmt& s, const std::vector<Var>& vars);
// Whether the nest `root` surely assigns `var` before anything reads it: the first statement
// that mentions it, at the top level of the nest or of its outermost loop's body, assigns it
// without reading it, and nothing after that loop mentions it (an empty loop would leave the
// value it held at entry).
bool assigned_before_read(const Stmt& root, int var);
// The moves `a = b` (assignments of one variable's value to another) in `s`: (a, b).
std::vector<std::pair<int, int>> variable_moves(const Stmt& s);
// Adds to `vars` every variable one of them moves to or from, directly or through others.
void add_moved_with(std::set<int>* vars, const std::vector<std::pair<int, int>>& moves);
// `var` and every variable it moves to or from (`a = b`), directly or through others.
std::set<int> moved_with(const Stmt& s, int var);
// Whether a and b are the same expression of variables, constants, subscripts and operators
// (no call): evaluated one after the other, with nothing assigned between, they give the
// same value.
bool same_pure_expr(const Expr& a, const Expr& b);
// For a store `A[s] = A[s] + e` (or `- e`, `e + A[s]`, and the augmented forms), A a
// variable: which operand of the stored value is the element A[s] read (0 or 1); else -1.
// (The other operand may still read A: callers check.)
int update_operand(const Effect& f);
// The statements of `s` with blocks flattened (a loop body's top level).
std::vector<Stmt> flatten_blocks(const Stmt& s);
// For a while loop that inline_helpers made from a called function's: the resume point of
// the calling statement its iterations are part of (LoopInfo::statement); else -1.
int inlined_while_statement(const Nest& n, const Stmt& s);
// The statements of For loop `loop`'s body, flattened, without a `continue` of the loop at
// its end (the one every body ends with).
std::vector<Stmt> body_statements(const Stmt& loop);
// For straight-line statements (Segs, run in order once per iteration): whether every
// variable they assign is assigned by an earlier Seg before any of them reads it, so that no
// value flows from one iteration to the next through a variable. (A Seg evaluates its
// expressions before it assigns: a read in the Seg that assigns the variable reads the
// previous iteration's value.)
bool assigned_before_read(const std::vector<Stmt>& segs);
// Whether `e` is variable `var` plus or minus something that does not read it (`j`, `j + 1`,
// `k - j` is not): a subscript that steps by one element when `var` does.
bool var_plus_offset(const Expr& e, int var);
// Whether typed effect `f` stores into a row or a slice of an array (`A[i] = ...` of a 2-d
// array, `A[i, 1:] = ...`): many elements, the value a number or an array.
bool stores_section(const Effect& f);
bool stores_sections(const Stmt& s);  // some statement in `s` does
// Whether some statement in `s` stores into an array element or a section, or appends.
bool stores_anything(const Stmt& s);
// Whether `e` is lowered complex64 arithmetic's float32 rounding of a double,
// round32(args[1]) (lower_complex).
bool is_round32(const Expr& e);
// The variable at the root of a subscript chain (A in A[i][j]; the attribute's variable for
// self.A), or -1.
int root_var(const Expr& e);

}  // namespace stagepy::ir
