// NestBuilder: loop nests built directly as IR for the analysis tests (test_analysis.cpp,
// test_box_conditions.cpp), with named variables and bytecode offsets handed out in order.
#pragma once
#include <string>
#include <vector>

#include "ir/ir.h"

namespace stagepy::test_nests {

using ir::Expr;
using ir::Stmt;

// Builds a nest with named variables; offsets (origins) are handed out in order.
struct NestBuilder {
  ir::Nest nest;
  int next_origin = 10;

  int var(const std::string& name, bool assigned = false) {
    for (size_t i = 0; i < nest.vars.size(); i++)
      if (nest.vars[i].name == name) {
        nest.vars[i].assigned = nest.vars[i].assigned || assigned;
        return (int)i;
      }
    ir::Var v;
    v.name = name;
    v.read = true;
    v.assigned = assigned;
    v.index = (int)nest.vars.size();
    nest.vars.push_back(v);
    return (int)nest.vars.size() - 1;
  }
  Expr ld(const std::string& name) { return ir::make_load(var(name), next_origin++); }
  Expr c(int64_t v) {
    ir::ConstValue k;
    k.kind = ir::ConstValue::Kind::Int;
    k.i = v;
    return ir::make_const(k, next_origin++);
  }
  Expr bin(ir::BinOp op, Expr a, Expr b) { return ir::make_binary(op, a, b, false, next_origin++); }
  Expr add(Expr a, Expr b) { return bin(ir::BinOp::Add, a, b); }
  Expr sub(Expr a, Expr b) { return bin(ir::BinOp::Sub, a, b); }
  Expr mul(Expr a, Expr b) { return bin(ir::BinOp::Mul, a, b); }
  Expr idx(const std::string& arr, std::vector<Expr> ix) {
    Expr i = ix.size() == 1 ? ix[0] : ir::make_tuple(ix, next_origin++);
    return ir::make_subscript(ld(arr), i, next_origin++);
  }
  Stmt store(const std::string& arr, std::vector<Expr> ix, Expr value) {
    ir::Effect e;
    e.kind = ir::Effect::Kind::Store;
    e.base = ld(arr);
    e.index = ix.size() == 1 ? ix[0] : ir::make_tuple(ix, next_origin++);
    e.value = value;
    e.origin = next_origin++;
    return ir::make_seg({e}, 0, 5);
  }
  Stmt assign(const std::string& v, Expr value) {
    ir::Effect e;
    e.kind = ir::Effect::Kind::Assign;
    e.var = var(v, true);
    e.value = value;
    e.origin = next_origin++;
    return ir::make_seg({e}, 0, 5);
  }
  Expr cmp(ir::CmpOp op, Expr a, Expr b) { return ir::make_compare(op, a, b, next_origin++); }
  // if cond: body
  Stmt when(Expr cond, std::vector<Stmt> body) {
    return ir::make_if(cond, ir::make_block(body), ir::make_block({}), 0, 5);
  }
  // Loop `id` (ids must be numbered outermost first, as the lifter does).
  Stmt loop(int id, const std::string& v, std::vector<Expr> range_args, std::vector<Stmt> body) {
    if ((int)nest.loops.size() <= id) nest.loops.resize((size_t)id + 1);
    nest.loops[(size_t)id].is_for = true;
    nest.loops[(size_t)id].line = 4;
    return ir::make_for(var(v, true), ld("range"), range_args, ir::make_block(body), id, 0, 4);
  }
  void root(Stmt s) { nest.root = ir::make_block({s}); }
};

}  // namespace stagepy::test_nests
