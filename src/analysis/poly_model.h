// build_poly_model: in, a lifted (untyped) nest; out, its polyhedral model with loop
// bounds, shapes and offsets left symbolic: one iteration domain per statement, the array
// elements each statement reads and writes, and the sites where the kernel checks an index
// or an integer overflow. Nothing here needs run-time values or types; what the model
// assumes about them (parameters are Python ints, an array variable has the rank its
// subscripts imply, `len` is the builtin) is recorded in `assumptions` and checked at
// dispatch before any condition derived from the model is trusted.
//
// Expressions are kept as isl syntax over named dimensions:
//   loop iterators  i<L>  (the value of For loop L's variable; w<L> counts While loop L)
//   parameters      the names in `params` (live-in ints, array extents)
// so that derive_conditions can hand them to isl directly.
#pragma once
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "analysis/made_lengths.h"
#include "ir/ir.h"

namespace stagepy::analysis {

// A symbolic value fixed for the whole nest execution: a live-in Python int variable, or
// the extent of a live-in array variable along one dimension.
struct PolyParam {
  enum class Kind : uint8_t { Int, Extent } kind = Kind::Int;
  int var = -1;
  int dim = 0;        // Extent
  std::string name;   // isl name
};

struct PolyLoop {
  int id = -1;           // ir loop id
  bool is_for = true;
  int parent = -1;       // enclosing loop id, or -1
  int depth = 0;         // 0 for the outermost loop
  int var = -1;          // For: the loop variable
  bool affine = false;   // For with affine bounds, a constant step, and a variable the body never assigns
  std::string dim;       // "i3" / "w3"
  std::string constraints;  // isl constraints on `dim` given the outer dims ("" when none are known)
  int line = 0;
  std::vector<int> stmts;   // statements inside it, at any depth
};

// One subscript position of an access, e.g. the `j` of A[i, j].
struct PolyIndex {
  std::optional<std::string> expr;  // isl expression, or none (not affine)
  // Not affine, but `x % d` with d affine (`(i + 1) % n`): an int index in [0, d) where d > 0,
  // as Python's % gives it for any x. The isl expression of d.
  std::optional<std::string> mod_divisor;
  int origin = -1;  // bytecode offset of the subscript operation
  int pos = 0;      // position in that operation's index tuple
};

struct PolyAccess {
  int var = -1;           // the array variable (-1: an unknown object, conflicts with everything)
  bool write = false;
  // One of the two accesses of an update statement `A[s] = A[s] + e` (or `-`, `+=`, `-=`;
  // `e + A[s]`), e not reading A: the read and the write of one element, in one statement.
  // A loop in which every access to A is one may sum into a private copy of A per thread
  // (derive_conditions' NoCarriedBesideUpdates; plan_parallel's array reductions).
  bool update = false;
  // A read of which object sits at that position (`p = ps[i]` of a variable used only for
  // the object's attributes, Var::object_row), not of anything in it: no store into the
  // attributes (a deeper subscript) changes it, and the nest stores no objects.
  bool identity = false;
  std::vector<PolyIndex> index;  // outermost subscript first
  int line = 0;
  std::string text;       // "A[i - 1, j]" for reports
};

// A Python int operation whose value is affine: the kernel's overflow check for it can go
// where the value provably stays within 64 bits.
struct PolyIntOp {
  int origin = -1;
  std::string expr;       // isl expression of its value
};

// A check of an operation that is not affine itself (`i * j`, `x / n`, `(i + j) % n`),
// in terms of affine parts: the check can go where every `within` expression stays in
// [-bound, bound] and no `nonzero` expression is 0, over the statement's domain.
struct PolyRange {
  enum class Kind : uint8_t {
    NoOverflow,  // the Python-int operation stays within 64 bits
    NonZero,     // the divisor is never 0
    Exact,       // operand `pos` is an int of at most 53 bits (a double holds it exactly)
  } kind = Kind::NoOverflow;
  int origin = -1;
  int pos = 0;
  std::vector<std::pair<std::string, int64_t>> within;
  std::vector<std::string> nonzero;
};

struct PolyStmt {
  int id = -1;
  std::string name;         // "S3"
  std::vector<int> loops;   // enclosing loop ids, outermost first
  std::vector<std::string> guards;  // affine conditions of enclosing ifs (isl syntax)
  std::vector<PolyAccess> accesses;
  std::vector<PolyIntOp> int_ops;
  std::vector<PolyRange> ranges;
  // (variable, origin of the unpacking) for `x, y = h(a)`: the variable takes an item of a
  // call's result, which the model reads as no memory (plan_parallel checks it).
  std::vector<std::pair<int, int>> call_items;
  int line = 0;
};

struct PolyAssumptions {
  std::vector<std::pair<int, int>> array_rank;  // (var, most indices an access gives it): its arrays have at least that many dimensions
  std::vector<int> int_params;                  // vars that must hold a Python int
  std::vector<std::pair<int, std::string>> builtins;  // (var, name): var must be that builtin
  // Made-list variables whose len() the model took as their extent: their class's lists must
  // have one length for the run (made_lengths.h), else `len(prev)` at one point and `prev[k]`
  // at another may be of different lists, which a shared symbol would not show.
  std::vector<int> made_lengths;
};

struct PolyModel {
  std::vector<PolyParam> params;
  std::vector<PolyLoop> loops;   // indexed by ir loop id
  std::vector<PolyStmt> stmts;
  PolyAssumptions assumptions;
  bool unknown_base = false;     // some access has a base that is not a plain variable
  // The variables that may hold lists the nest makes (ir::made_list_vars), by class, with
  // where their lengths come from (made_lengths.h).
  std::vector<MadeListClass> made_classes;

  int param_index(const std::string& name) const;
  std::string param_list() const;             // "[n, N_A_0]"
  std::string dims_of(const PolyStmt& s) const;  // "i0, i1"
  std::string domain_of(const PolyStmt& s) const;  // isl set "[..] -> { S3[i0, i1] : ... }"
  std::string domain_body(const PolyStmt& s) const;  // the same without the parameters: "S3[i0, i1] : ..."
};

// `ragged`: variables that may hold a list of lists whose rows differ in length
// (Type::ragged): an extent past their first (`len(A[i])`) is no parameter, so nothing
// derived from the model assumes one length for their rows.
PolyModel build_poly_model(const ir::Nest& nest, const std::set<int>& ragged = {});

std::string to_string(const PolyModel& m, const ir::Nest& nest);

}  // namespace stagepy::analysis
