// Text form of the loop-nest IR, for STAGEPY_DEBUG dumps and tests.
#pragma once
#include <string>

#include "ir/ir.h"

namespace stagepy::ir {

std::string to_string(const Expr& e, const Nest& nest);
std::string to_string(const Stmt& s, const Nest& nest, int indent = 0);
std::string to_string(const Nest& nest);  // variables, resume points and the body

}  // namespace stagepy::ir
