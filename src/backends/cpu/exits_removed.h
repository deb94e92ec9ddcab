// exits_removed: in, a function generated for a parallel loop body whose every way out
// returns a status (0: the iterations ran; k: CPython must take over at resume point
// k - 1); out, whether LLVM's function simplification pipeline (instcombine, SROA,
// correlated value propagation, ...) proves that it only ever returns 0, i.e. that all
// its hand-over checks are dead (`k += 1` under `while k < n` cannot overflow). The
// function is simplified in place; it is optimised again with its module later.
// `statuses`, if given, gets the nonzero statuses the simplified function may still return
// (where they are constants: the statements whose checks remain, for the report).
#pragma once
#include <set>

namespace llvm {
class Function;
}

namespace stagepy::backends::cpu {

bool exits_removed(llvm::Function& body, std::set<int>* statuses = nullptr);

}  // namespace stagepy::backends::cpu
