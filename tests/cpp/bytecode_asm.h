// A tiny assembler of bytecode in the neutral form python/stagepy/_bytecode.py produces,
// for tests of the core without Python.
#pragma once
#include <cstdint>
#include <string>

#include "analysis/bytecode.h"

namespace stagepy::test_asm {

// A tiny assembler for neutral instructions (3.12 conventions), offsets in steps of 2.
struct Asm {
  analysis::CodeInfo code;
  int offset = 0;
  Asm() { code.version = 312; }
  int emit(const char* op, std::string sarg = "", int iarg = 0, int flags = 0, int target = -1, int line = 1) {
    analysis::Instr in;
    in.opname = op;
    in.op = analysis::op_from_name(op);
    in.offset = offset;
    in.target = target;
    in.sarg = std::move(sarg);
    in.iarg = iarg;
    in.flags = flags;
    in.line = line;
    code.instrs.push_back(in);
    offset += 2;
    return in.offset;
  }
  int konst(analysis::Const c) {
    code.consts.push_back(c);
    return (int)code.consts.size() - 1;
  }
  void patch(int at_offset, int target) {
    for (auto& in : code.instrs)
      if (in.offset == at_offset) in.target = target;
  }
};

inline analysis::Const int_const(int64_t v) {
  analysis::Const c;
  c.kind = analysis::Const::Kind::Int;
  c.i = v;
  return c;
}

inline analysis::Const float_const(double v) {
  analysis::Const c;
  c.kind = analysis::Const::Kind::Float;
  c.f = v;
  return c;
}

}  // namespace stagepy::test_asm
