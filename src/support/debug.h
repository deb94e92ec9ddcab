// STAGEPY_DEBUG: 1 prints the IR between passes (lifted, typed) to stderr; 2 adds the
// LLVM IR before and after optimization.
#pragma once
#include <string>

namespace stagepy {

int debug_level();
void debug_dump(const std::string& title, const std::string& text);

}  // namespace stagepy
