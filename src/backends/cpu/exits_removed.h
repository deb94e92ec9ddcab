// exits_removed: in, a function generated for a parallel loop body whose every way out
// returns a status (0: the iterations ran; k: CPython must take over at resume point
// k - 1); out, whether LLVM's function simplification pipeline (instcombine, SROA,
// correlated value propagation, ...) proves that it only ever returns 0, i.e. that all
// its hand-over checks are dead (`k += 1` under `while k < n` cannot overflow). The
// function is simplified in place; it is optimised again with its module later.
#pragma once

namespace llvm {
class Function;
}

namespace stagepy::backends::cpu {

bool exits_removed(llvm::Function& body);

}  // namespace stagepy::backends::cpu
