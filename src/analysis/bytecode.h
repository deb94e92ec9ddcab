// Version-neutral bytecode, as python/stagepy/_bytecode.py normalizes it: the input of
// the lifter. One Instr per CPython instruction (superinstructions expanded), with names,
// local indices and compare operators already decoded.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace stagepy::analysis {

#define STAGEPY_OPS(X)                                                                         \
  X(LOAD_FAST) X(LOAD_FAST_CHECK) X(STORE_FAST) X(LOAD_DEREF) X(STORE_DEREF) X(LOAD_GLOBAL)     \
  X(STORE_GLOBAL) X(LOAD_NAME) X(STORE_NAME) X(LOAD_ATTR) X(LOAD_CONST) X(RETURN_CONST)         \
  X(BINARY_OP) X(BINARY_SUBSCR) X(STORE_SUBSCR) X(COMPARE_OP) X(IS_OP) X(CONTAINS_OP)           \
  X(UNARY_NEGATIVE) X(UNARY_NOT) X(UNARY_INVERT) X(UNARY_POSITIVE) X(CALL_INTRINSIC_1)          \
  X(TO_BOOL) X(CALL) X(PUSH_NULL) X(BUILD_TUPLE) X(UNPACK_SEQUENCE) X(POP_TOP) X(COPY) X(SWAP)  \
  X(GET_ITER) X(FOR_ITER) X(END_FOR) X(JUMP_FORWARD) X(JUMP_BACKWARD)                           \
  X(JUMP_BACKWARD_NO_INTERRUPT) X(JUMP) X(JUMP_NO_INTERRUPT) X(POP_JUMP_IF_FALSE)               \
  X(POP_JUMP_IF_TRUE) X(POP_JUMP_IF_NONE) X(POP_JUMP_IF_NOT_NONE) X(POP_JUMP_FORWARD_IF_FALSE)  \
  X(POP_JUMP_FORWARD_IF_TRUE) X(POP_JUMP_FORWARD_IF_NONE) X(POP_JUMP_FORWARD_IF_NOT_NONE)       \
  X(POP_JUMP_BACKWARD_IF_FALSE) X(POP_JUMP_BACKWARD_IF_TRUE) X(POP_JUMP_BACKWARD_IF_NONE)       \
  X(POP_JUMP_BACKWARD_IF_NOT_NONE) X(JUMP_IF_FALSE_OR_POP) X(JUMP_IF_TRUE_OR_POP)               \
  X(RETURN_VALUE) X(RAISE_VARARGS) X(RERAISE) X(KW_NAMES) X(CALL_KW) X(CALL_FUNCTION_EX)         \
  X(BUILD_LIST) X(BUILD_MAP) X(BUILD_SET) X(BUILD_SLICE) X(BINARY_SLICE) X(STORE_SLICE)         \
  X(STORE_ATTR) X(DELETE_FAST) X(DELETE_NAME) X(DELETE_GLOBAL) X(DELETE_DEREF) X(DELETE_SUBSCR)  \
  X(LOAD_CLOSURE) X(LOAD_FAST_AND_CLEAR) X(MAKE_FUNCTION) X(YIELD_VALUE) X(IMPORT_NAME)         \
  X(FORMAT_VALUE) X(BUILD_STRING) X(LOAD_ASSERTION_ERROR) X(BEFORE_WITH) X(PUSH_EXC_INFO)       \
  X(LIST_APPEND) X(LIST_EXTEND) X(NOT_TAKEN) X(SET_FUNCTION_ATTRIBUTE) X(NOP)

enum class Op : uint16_t {
#define STAGEPY_OP_ENUM(name) name,
  STAGEPY_OPS(STAGEPY_OP_ENUM)
#undef STAGEPY_OP_ENUM
  OTHER
};

Op op_from_name(std::string_view name);
const char* op_name(Op op);
inline bool is_return(Op op) { return op == Op::RETURN_VALUE || op == Op::RETURN_CONST; }

struct Instr {
  Op op = Op::OTHER;
  std::string opname;   // as CPython names it (kept for messages about unsupported ops)
  int offset = 0;       // bytes, start of the instruction (EXTENDED_ARG prefixes included)
  int target = -1;      // jump target offset, or -1
  int line = -1;
  std::string sarg;     // name or operator
  int iarg = 0;         // local index, const index, or small argument
  int flags = 0;        // 1: pushes NULL too (LOAD_GLOBAL / method LOAD_ATTR); 2: COMPARE_OP -> bool
};

// A candidate loop as _bytecode.candidate_loops finds it (offsets in bytes).
struct LoopSpec {
  int entry_offset = 0;   // first instruction of the range(...) call expression, or of the while statement
  int header_offset = 0;  // FOR_ITER; for a while statement, its first instruction (entry_offset)
  int exit_offset = 0;    // first instruction after the loop
  int entry_depth = 0;    // values on the stack below the call
  bool while_loop = false;  // the nest is a while statement (its first test, then the loop)
  // The region is a function's body (lift_function): any loops, one after another, and
  // where it returns from more than one place, a return ends the body, not the frame
  // (raises still do).
  bool function = false;
};

struct CodeInfo;

struct Const {
  // Code: a generator expression's code object (`code`), whose loop over its argument `.0`
  // is `spec`; other code objects are Other.
  // Names: a tuple of strings (a call's keyword names, `names`).
  // Other: anything else; `names` may hold what the code does with it ("defines a lambda").
  // FrozenSet: a frozenset of numbers (`elems`), which only `in` may use; with `str`, the
  // characters of a short str constant (`c in "aeiou"`: the same test for a character).
  bool str = false;
  // With `str`: float() of the str is `f` (`float("inf")`, `float("1e-9")`).
  bool float_str = false;
  // Char: a str of one character (`i`: its code point).
  enum class Kind : uint8_t { None, Bool, Int, Float, Complex, Char, Tuple, FrozenSet, Code, Names, Other } kind = Kind::Other;
  int64_t i = 0;
  double f = 0.0;   // Float; Complex: the real part
  double f2 = 0.0;  // Complex: the imaginary part
  std::vector<Const> elems;
  std::vector<std::string> names;
  std::shared_ptr<const CodeInfo> code;
  LoopSpec spec;
};

struct CodeInfo {
  std::vector<Instr> instrs;
  std::vector<Const> consts;
  bool fast_locals = true;         // CO_OPTIMIZED: variables live in frame slots
  std::vector<std::string> localsplus_names;
  std::vector<uint8_t> localsplus_kinds;  // CPython's CO_FAST_* bits per slot
  std::string filename;
  std::string qualname;
  int firstlineno = 0;
  int version = 0;                 // 311, 312, 313
};

// CPython's localsplus kind bits (Include/internal/pycore_code.h).
constexpr uint8_t CO_FAST_LOCAL = 0x20, CO_FAST_CELL = 0x40, CO_FAST_FREE = 0x80;

}  // namespace stagepy::analysis
