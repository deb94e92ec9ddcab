// The loop-nest IR.
//
// The lifter (src/analysis) produces it from a code object's bytecode, untyped; the
// specializer (src/specialize) returns a typed copy for one set of run-time types; the
// backends turn the typed copy into machine code. Nodes are immutable and shared; passes
// are free functions IR -> IR.
//
// Python semantics are kept exactly:
//  * Exprs are pure, but may fail (an IndexError, an int overflow, a division by zero...).
//  * A Seg is one bytecode "statement": the span between two points where CPython's value
//    stack holds nothing but the enclosing loops' iterators. All its expressions are
//    evaluated before any of its effects is applied, so a failure anywhere in a Seg can
//    hand control back to CPython at the Seg's `resume` point with nothing half done.
//  * If and For also carry a resume point: the evaluation of their condition / range().
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/types.h"

namespace stagepy::ir {

// ---------------------------------------------------------------- variables
// A Python variable the nest reads or writes, and where CPython keeps it.
struct Var {
  enum class Storage : uint8_t {
    Fast,    // a fast local (LOAD_FAST/STORE_FAST): frame slot `index`
    Cell,    // a cell or free variable (LOAD_DEREF/STORE_DEREF): the cell in slot `index`
    Name,    // LOAD_NAME/STORE_NAME (module and class bodies): f_locals, then globals, builtins
    Global,  // LOAD_GLOBAL/STORE_GLOBAL: globals, then builtins
    Attr,    // not a Python variable: `base.name` where `base` is a module, read at entry
    Part,    // not a Python variable: the real (`index` 0) or imaginary (1) part of the
             // complex value of variable `parent` (lowered IR, lower_complex.h)
    Temp,    // not a Python variable: a value lowered IR computes once for one statement,
             // or the hidden position of a `for x in seq` loop (the lifter's desugaring)
    Builtin, // not a Python variable: the builtin function `name` itself (len, min), which
             // the desugared `for x in seq` calls whatever the frame's names hold
    Table,   // not a Python variable: the list [the object variable `single_of` holds], made
             // by the dispatcher at entry (attribute_columns.h: `self.total += x`)
    Method,  // not a Python variable: the plain Python function `type(o).<method>` for the
             // objects `o` that `method_sources` give, which the dispatcher finds at entry
             // (bind_methods.h: `p.update(dt)`); no value where they are no such objects
  };
  std::string name;
  Storage storage = Storage::Fast;
  int index = -1;  // Fast/Cell: localsplus index; Attr: the base variable; Part: 0 or 1
  int parent = -1; // Part: the complex variable
  bool assigned = false;  // the nest stores to it (so it is written back)
  bool read = false;      // the nest reads it
  // A lifter's hidden variable whose value never outlives the statement that sets it
  // (min()/max()'s answer, read only once its generator gave an item in that statement):
  // never carried from one iteration of an enclosing loop to the next.
  bool scratch = false;
  // Lowered IR: a Temp set and read within one statement only (lower_complex's parts of
  // intermediate complex values): a parallel loop keeps no last value of it.
  bool statement_local = false;
  // The nest only appends to it (`v.append(x)` statements, `len(v)`, appended as an item;
  // never assigned, or assigned new lists only: append_targets.h): a list it holds is not
  // read into a buffer, the items are collected (Type::Appended).
  bool appended = false;
  // The nest changes the length of the list it holds and reads it too (`L.append(x)` with
  // `L[-1]` read, `L.pop()`: append_targets.h): its lists are held by MadeList headers
  // that grow and shrink (Type::made); `assigned` is set with it, for its length changes.
  bool resized = false;
  // analysis/attribute_columns.h: a list of objects whose attributes the nest reads or
  // assigns (`for p in ps: p.x += p.v`), held as a table: one row per object, one column per
  // attribute name (Nest::columns).
  bool objects = false;
  std::vector<uint8_t> columns_used;  // objects: which of Nest::columns the nest uses through it
  // A variable that holds only items of such lists (`p`), used only for their attributes.
  bool object_row = false;
  // Storage::Table: the variable whose object it holds, as a list of one object.
  int single_of = -1;
  // Storage::Method: the method's name, and the variables whose objects it is called on:
  // one variable holding the object (the nest never assigns it), or, `method_on_items`,
  // lists (tuples) of objects whose items the receiver is.
  std::string method;
  std::vector<int> method_sources;
  bool method_on_items = false;
};

// How the report names variable `v` (in backquotes): its Python name; for the Temp of a
// local of an inlined helper that loops ("$h.x#3"), "`x` of `h`", and for the value such a
// helper returns, "the value `h` returns".
std::string shown_name(const Var& v);
// Its name as the source spells it, without backquotes: a helper's local's own name (`o` of
// "$b.steer.o#5"), else the variable's.
std::string source_name(const Var& v);

// ---------------------------------------------------------------- expressions
enum class BinOp : uint8_t {
  Add, Sub, Mul, TrueDiv, FloorDiv, Mod, Pow, LShift, RShift, And, Or, Xor, MatMul
};
enum class UnOp : uint8_t { Neg, Pos, Invert, Not };
enum class CmpOp : uint8_t { LT, LE, EQ, NE, GT, GE, Is, IsNot };
const char* binop_name(BinOp op);   // "+", "-", ...
const char* unop_name(UnOp op);
const char* cmpop_name(CmpOp op);

struct ExprNode;
using Expr = std::shared_ptr<const ExprNode>;

struct ConstValue {
  enum class Kind : uint8_t { None, Bool, Int, Float, Complex, Char } kind = Kind::None;
  bool b = false;
  int64_t i = 0;    // Int; Char: a str of one character, its code point
  double f = 0.0;   // Float; Complex: the real part
  double f2 = 0.0;  // Complex: the imaginary part
};

struct ExprNode {
  enum class Kind : uint8_t {
    Const,      // value
    Load,       // var: read a Python variable
    Attr,       // args[0].name
    Subscript,  // args[0][args[1]]
    Tuple,      // (args...)
    Binary,     // args[0] binop args[1]   (inplace: the augmented form, a += b)
    Unary,      // unop args[0]
    Compare,    // args[0] cmpop args[1]
    Truth,      // bool(args[0]) as a jump or TO_BOOL would take it
    Call,       // args[0](args[1:]); kwnames for keyword arguments at the end
    Cond,       // args[1] if args[0] else args[2]   (lazy; args[0] is a truth value)
    Seq,        // evaluates args[0..n-2] (for their errors only), then is args[n-1]: an
                // inlined call, whose arguments CPython evaluates even where the body
                // does not use them
    Slice,      // slice(args[0], args[1], args[2]): `a:b:c` in a subscript (None where omitted)
    NewList,    // a new list of args (`[]`, `[i, x]`): typed only as the value assigned to a
                // variable the nest builds lists in, or as an appended item (append_targets)
    // Only in typed IR:
    LoopNonEmpty,  // whether For loop `var` (a loop id here) has at least one iteration
    // Only in lowered IR (lower_complex.h):
    Guard,         // args[1], provided args[0] (a truth value) holds; else the statement
                   // goes to CPython
    AsType,        // args[0]'s value as `type`, a type with the same machine value
                   // (float <-> np.float64, bool <-> np.bool_)
    ComplexWarn,   // records the warnings NumPy's complex operation `binop` (+, -, *, /) gave:
                   // result parts args[0..1], operand parts args[2..5] (Python floats;
                   // complex64 when `name` is "complex64"), for / the scaled divisor args[6];
                   // `kwnames` holds the operands' types (how NumPy words the warning);
                   // `origin`, the operation's. No value.
  };
  Kind kind;
  TypeRef type;        // Unknown until specialized
  int origin = -1;     // bytecode offset of the instruction it came from (for errors)
  ConstValue value;    // Const
  int var = -1;        // Load: index into Nest::vars
  // Attr; Subscript: an attribute column (`p.x` as p[column], attribute_columns.h), the
  // attribute's name; Call: the step of sum()/any()/all() of a generator expression the
  // lifter made ("init", "total", "compensation", "result"; lift.cpp), kFloatOfStr for
  // `float("inf")` read as float(inf), empty for a call in the program.
  std::string name;
  int pseudo = -1;     // Attr on a variable the nest never assigns: the Attr variable for it
  // Call of a method on an object (`o.m(a)`, args[0] the Attr `o.m`): the Method variable
  // that holds `type(o).m` where that is a plain Python function (bind_methods.h), inlined
  // as `m(o, a)`; -1 otherwise.
  int method = -1;
  bool check_bound = false;  // typed Load of a variable that may be unbound here
  BinOp binop = BinOp::Add;
  bool inplace = false;
  // Call/Binary: prove_domains showed that the operation's domain check cannot fail
  // (math.sqrt of a value never below zero, a division by one never zero or below).
  // Subscript: the item of a `for x in seq` at the loop's hidden position (lift.cpp), whose
  // index is in range by construction.
  bool in_domain = false;
  // Subscript by a slice: a sequence a for loop iterates (`for x in L[1:]`, lift.cpp's
  // desugar_for). A slice of a list (a copy in CPython) is read in place instead, where
  // type inference finds that the loop stores into no list (so the copy and the list agree).
  // Attr `flat` / `ravel()` (`for x in A.flat`, `for x in A.ravel()`): the items of a NumPy
  // array in C order, a view of its memory where type inference finds it C-contiguous and
  // written by no store of the nest.
  bool loop_sequence = false;
  // Subscript: item args[1] of `a, b, ... = args[0]` with this many names (0: not an
  // unpacking): args[0] must have exactly that many items, or CPython raises ValueError.
  int unpack = 0;
  // Compare (EQ): `x == S[k]` of `x in S` (lift.cpp): CPython's `in` tries identity first, so a
  // NaN x may be found (the same object in S); a NaN x hands the statement to CPython.
  bool nan_bails = false;
  UnOp unop = UnOp::Neg;
  CmpOp cmpop = CmpOp::LT;
  std::vector<std::string> kwnames;  // Call
  std::vector<Expr> args;
};

// Constructors (untyped; `origin` is the bytecode offset).
Expr make_const(ConstValue v, int origin = -1);
Expr make_load(int var, int origin = -1);
Expr make_attr(Expr obj, std::string name, int origin = -1);
Expr make_subscript(Expr base, Expr index, int origin = -1);
Expr make_tuple(std::vector<Expr> elems, int origin = -1);
Expr make_new_list(std::vector<Expr> elems, int origin = -1);
Expr make_binary(BinOp op, Expr a, Expr b, bool inplace, int origin = -1);
Expr make_unary(UnOp op, Expr a, int origin = -1);
Expr make_compare(CmpOp op, Expr a, Expr b, int origin = -1);
Expr make_truth(Expr a, int origin = -1);
Expr make_call(Expr callee, std::vector<Expr> args, std::vector<std::string> kwnames, int origin = -1);
Expr make_cond(Expr c, Expr t, Expr f, int origin = -1);
Expr make_seq(std::vector<Expr> items, int origin = -1);
Expr make_slice(Expr start, Expr stop, Expr step, int origin = -1);
// Item k of `a, b, ... = v` with n names: v[k], which checks that v has n items.
Expr make_unpacked_item(Expr v, int k, int n, int origin = -1);
// The Call's name where the lifter read `float("<str>")` as float() of the float that str
// gives (lift.cpp: float_of_str): valid only where `float` is the builtin (no helper is
// inlined there; type inference refuses it otherwise).
inline constexpr const char* kFloatOfStr = "float(str)";
// The `name` of a call type inference made of random.uniform/randint/randrange (a draw of
// RandomRandom or RandomBelow, whose callee is typed already).
inline constexpr const char* kRandomDraw = "random draw";

// The origin of every node an inlined helper's body contributes: no fact of the caller's
// analysis (keyed by the caller's bytecode offsets) applies to it.
constexpr int kInlinedOrigin = -2;
// Where the static stage runs on a nest with its helpers inlined (dispatch.cpp), the
// element reads and operations the helpers contribute get origins of their own from here
// on (above any bytecode offset, and past any origin the nest has: inline_helpers.cpp), so
// that its facts can be about them.
constexpr int kFirstNumberedInlinedOrigin = 1 << 28;
// Whether a node came from an inlined helper's body (numbered or not): its operations warn
// at the helper's line, which no offset of the caller's names.
inline bool is_inlined_origin(int origin) { return origin == kInlinedOrigin || origin >= kFirstNumberedInlinedOrigin; }
// A copy of `e` with `type` set.
Expr with_type(const Expr& e, TypeRef type);

// ---------------------------------------------------------------- statements
struct StmtNode;
using Stmt = std::shared_ptr<const StmtNode>;

// One effect of a Seg: a variable assignment, a subscript store, an expression
// statement evaluated for its errors only (its value is discarded), or `base.append(value)`
// of a list the nest only appends to (analysis/append_targets.h).
struct Effect {
  enum class Kind : uint8_t { Assign, Store, Eval, Append } kind = Kind::Assign;
  int var = -1;    // Assign: the Python variable
  Expr base;       // Store: the container ...; Append: the list (a Load, or `self.out`: appended_list_var)
  Expr index;      // ... and the subscript
  Expr value;
  int origin = -1; // bytecode offset of the STORE_* instruction
  int part = -1;   // Store into a complex array (lowered IR): 0 the real part, 1 the imaginary
  // Store: `base.attr = value` (STORE_ATTR). The lifter leaves `index` a placeholder;
  // attribute_columns makes it the attribute's column (a Const) or refuses the nest.
  std::string attr;
};

struct StmtNode {
  enum class Kind : uint8_t {
    Block,     // body...
    Seg,       // effects, resume
    If,        // cond, body[0] (then), body[1] (else), resume
    For,       // var = range(args...) over body[0], resume (evaluation of range())
    While,     // loop forever over body[0]; left by Break
    Break,     // leaves loop `loop`
    Continue,  // next iteration of loop `loop`
    Exit,      // leaves the nest for good: CPython runs the rest of the frame from `resume`
               // (a `return` or `raise` inside the loops, and what leads to it)
    // Only in typed IR:
    Range,     // evaluates range(args...) for loop `loop` (bails on errors), resume
  };
  // How a For came to be (the lifter desugars every for loop into one over range()):
  enum class Iter : uint8_t {
    Range,      // for v in range(args...)
    Seq,        // for v in S:  hidden k over range(len(S)); body opens with v = S[k]
    Enumerate,  // for i, v in enumerate(S[, c]): i over range(c, c + len(S)); v = S[i - c]
                //   (enumerate(zip(A, B)): over range(c, c + min(len(A), len(B))))
    Zip,        // for a, b in zip(A, B): hidden k over range(min(len(A), len(B))); a = A[k]...
  };
  Kind kind;
  Iter iter = Iter::Range;       // For
  std::vector<Expr> over;        // For (not Range): the sequences iterated (S; A, B)
  int64_t start = 0;             // For (Enumerate): enumerate's start
  std::vector<Stmt> body;        // Block: statements; If: {then, else}; For/While: {body}
  std::vector<Effect> effects;   // Seg, in the order their values are evaluated
  // Seg: the order the effects are applied in (indices into `effects`), where it is not
  // theirs: `a, b = f(), g()` evaluates f() first and stores b first (the lifter's
  // in_evaluation_order). Empty: their order. Codegen ignores one that is no permutation
  // of the effects (a pass that dropped an effect).
  std::vector<int> apply_order;
  Expr cond;                     // If
  std::vector<Expr> args;        // For: range() arguments (1 to 3)
  Expr range_callee;             // For: the object called (builtins.range; enumerate, zip);
                                 // null for Iter::Seq
  Expr reversed_callee;          // For over reversed(range(...)) (desugared into the range
                                 // counting down) or reversed(S) (Iter::Seq, its position
                                 // counting down): the object called, builtins.reversed
  Expr zip_callee;               // For over enumerate(zip(A, B, ...)) (Iter::Enumerate, `over`
                                 // holding A, B, ...): the object called inside, builtins.zip
  int var = -1;                  // For: the loop variable
  int loop = -1;                 // For/While: this loop's id; Break/Continue: target loop
  int resume = -1;               // Seg/If/For/Exit: index into Nest::resumes
  int line = 0;                  // source line of the statement
  // Typed IR: a peeled For runs body[1] for its first iteration and body[0] for the
  // others (the types of variables change in the first iteration); its range() was
  // evaluated by the Range statement before it.
  bool peeled = false;
};

Stmt make_block(std::vector<Stmt> stmts);
Stmt make_seg(std::vector<Effect> effects, int resume, int line);
Stmt make_if(Expr cond, Stmt then_s, Stmt else_s, int resume, int line);
Stmt make_for(int var, Expr callee, std::vector<Expr> range_args, Stmt body, int loop, int resume, int line);
Stmt make_while(Stmt body, int loop, int line);
Stmt make_break(int loop, int line);
Stmt make_continue(int loop, int line);
Stmt make_exit(int resume, int line);
Stmt make_range(int loop, std::vector<Expr> args, int resume, int line);
Expr make_loop_nonempty(int loop);
Expr make_guard(Expr ok, Expr value);        // typed as `value`
Expr make_complex_warn(BinOp op, bool single, std::vector<Expr> parts, std::vector<std::string> operand_types,
                       int origin);
Expr make_as_type(Expr value, TypeRef type);
// The iterations of range(args...) where its arguments are int constants (of at most 2^40
// in size), else nullopt.
std::optional<int64_t> constant_trip(const std::vector<Expr>& range_args);

// ---------------------------------------------------------------- the nest
// Where CPython can take over: the bytecode offset of a statement start, with the
// iterators of the enclosing `for` loops (outermost first) on its value stack.
// With `reenter`, CPython restarts the current iteration of the innermost For instead:
// `offset` is its FOR_ITER and the iterator is positioned on the current value (used
// where a statement start falls inside a superinstruction, as 3.13's
// STORE_FAST_LOAD_FAST right after FOR_ITER).
struct ResumePoint {
  int offset = 0;                // bytecode offset (bytes) in the original code
  std::vector<int> loops;        // ids of the enclosing For loops, outermost first
  int line = 0;
  bool reenter = false;
  // An Exit's: the statement returns or raises (CPython finishes the frame from there).
  // Stopping here is a way for the nest to end, not a failed check.
  bool exit = false;
  // lift_function's, in a body that returns from more than one place: the Exit after the
  // Seg that assigns the return value (analysis/structure_returns.h removes them).
  bool returns = false;
  // A statement whose stores are logged while it runs (specialize/inline_helpers.h: a call
  // inlined whose changes cannot all wait for its end, such as `world.step()` moving every
  // particle): a hand-over from inside it undoes them first, so CPython runs it again from
  // its start on what it held before (backends/cpu/undo_log.h). Its loops stay sequential.
  bool logged = false;
};

struct LoopInfo {
  bool is_for = true;
  // For loops over sequences: how CPython's iterator is rebuilt at a resume point
  // (iter(S) moved to the position; enumerate/zip around such iterators).
  StmtNode::Iter iter = StmtNode::Iter::Range;
  std::vector<Expr> over;  // Load or Attr(Load) of the sequences, as the lifter saw them
  int64_t start = 0;
  bool backward = false;   // Seq: reversed(S), its position counting down from len(S) - 1
  bool zipped = false;     // Enumerate: enumerate(zip(A, B, ...)) of the sequences `over`
  std::string targets;     // the loop's names as written ("i, x"; empty: the For's variable)
  int header_offset = 0;  // FOR_ITER (for) or first body instruction (while)
  int line = 0;
  // While loops: a container whose element the exit tests read at a place the loop never
  // changes (analysis/while_exits.h); type inference refuses the loop unless no thread can
  // change that container (a str, a tuple). -1: none.
  int watched = -1;
  // A loop of a function inline_helpers inlined: the resume point of the calling statement,
  // of which the loop's iterations are part (codegen commits no draws or logged stores at
  // their tops); -1 for the nest's own loops.
  int statement = -1;
};

struct Nest {
  Stmt root;                        // a Block holding the outermost For, or the while statement (a While, or an If around it)
  std::vector<Var> vars;
  std::vector<ResumePoint> resumes;
  std::vector<LoopInfo> loops;
  int entry_offset = 0;             // where the runtime call goes: start of the range() evaluation (or the while's first test)
  int exit_offset = 0;              // the first instruction after the loop
  int stack_depth = 0;              // values on CPython's stack at entry (outer iterators)
  int line = 0;                     // line of the `for` (or `while`)
  int end_line = 0;
  int py_version = 0;               // of the code: 311, 312, 313 (sum() of floats differs)
  // inline_helpers inlined one call of the code twice (the lifter read it at two places, the
  // middle of `a < h() < b`) where the helper calls functions: a draw of the random module
  // there would be made twice (type inference refuses draws in such a nest).
  bool helper_called_twice = false;
  // The attribute names of the objects in Var::objects lists, in column order, and whether
  // the nest assigns each.
  std::vector<std::string> columns;
  std::vector<uint8_t> columns_assigned;
  // It passes such an item to a function that may be a helper (`d(p, q)`): the dispatcher
  // declines it unless the helpers are inlined (and attribute_columns accepts the result).
  bool objects_to_helpers = false;
};

}  // namespace stagepy::ir
