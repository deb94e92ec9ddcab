// Control flow of one candidate loop nest's bytecode region: in, the normalized
// instructions and the LoopSpec; out, basic blocks, the natural loops (for and while),
// and, for each two-way branch, the block where its arms meet again.
#pragma once
#include <string>
#include <vector>

#include "analysis/bytecode.h"

namespace stagepy::analysis {

struct Block {
  int first = 0, last = 0;  // instruction indices [first, last)
  enum class Term : uint8_t { Fall, Jump, Cond, ForIter, Stop } term = Term::Fall;
  // Fall/Jump: succ[0]. Cond: succ[0] = jump taken, succ[1] = fall through.
  // ForIter: succ[0] = loop exhausted, succ[1] = body.
  std::vector<int> succ;
  std::vector<int> pred;
};

struct Loop {
  int header = -1;           // block
  bool is_for = false;       // header ends in FOR_ITER
  std::vector<bool> in;      // block membership
  int follow = -1;           // block execution continues at after the loop; -1: none;
                             // kExitBlock: the region's exit
  // A for loop with an else clause: the block its breaks go to, past the clause (which
  // starts at `follow`, entered only when the iterator is exhausted); -1 for none.
  int else_exit = -1;
  int parent = -1;           // enclosing loop, -1 for none
  int depth = 0;
};

struct RegionCFG {
  static constexpr int kExitBlock = -2;  // the region's exit (the outer loop's follow)
  std::vector<Block> blocks;
  std::vector<int> block_of_instr;        // instruction index -> block (or -1)
  int entry = 0;                          // block of the range(...) evaluation
  int first_instr = 0, end_instr = 0;     // region [first_instr, end_instr)
  std::vector<Loop> loops;
  std::vector<int> loop_of_header;        // block -> loop whose header it is, or -1
  std::vector<int> innermost;             // block -> innermost loop containing it, or -1
  // block -> every path from it ends in a return or raise, through no loop header and
  // not to the region's exit (the code that leaves the frame from inside the loops); in a
  // function's body (LoopSpec::function), every path raises
  std::vector<bool> ends_frame;

  // The block where the two arms of the branch ending block `b` meet again, following
  // only paths that stay in `b`'s innermost loop body (breaks and continues end an arm);
  // -1 if they never meet before the end of the loop body.
  int merge_point(int b) const;
  bool loop_contains(int loop, int block) const {
    return block >= 0 && loops[loop].in[block];
  }
};

// Builds the region; throws LiftError (lift.h) for control flow stagepy cannot structure.
RegionCFG build_cfg(const CodeInfo& code, const LoopSpec& spec);

struct LiftError {
  std::string reason;
  int line = -1;
};

}  // namespace stagepy::analysis
