// See cfg.h.
#include "analysis/cfg.h"

#include <algorithm>
#include <map>
#include <set>

namespace stagepy::analysis {
namespace {

bool is_jump(Op op) {
  switch (op) {
    case Op::JUMP_FORWARD: case Op::JUMP_BACKWARD: case Op::JUMP_BACKWARD_NO_INTERRUPT:
    case Op::JUMP: case Op::JUMP_NO_INTERRUPT:
      return true;
    default:
      return false;
  }
}

bool is_cond(Op op) {
  switch (op) {
    case Op::POP_JUMP_IF_FALSE: case Op::POP_JUMP_IF_TRUE: case Op::POP_JUMP_IF_NONE:
    case Op::POP_JUMP_IF_NOT_NONE: case Op::POP_JUMP_FORWARD_IF_FALSE: case Op::POP_JUMP_FORWARD_IF_TRUE:
    case Op::POP_JUMP_FORWARD_IF_NONE: case Op::POP_JUMP_FORWARD_IF_NOT_NONE:
    case Op::POP_JUMP_BACKWARD_IF_FALSE: case Op::POP_JUMP_BACKWARD_IF_TRUE:
    case Op::POP_JUMP_BACKWARD_IF_NONE: case Op::POP_JUMP_BACKWARD_IF_NOT_NONE:
    case Op::JUMP_IF_FALSE_OR_POP: case Op::JUMP_IF_TRUE_OR_POP:
      return true;
    default:
      return false;
  }
}

bool is_stop(Op op) { return is_return(op) || op == Op::RAISE_VARARGS || op == Op::RERAISE; }

[[noreturn]] void fail(const std::string& why, int line) { throw LiftError{why, line}; }

}  // namespace

RegionCFG build_cfg(const CodeInfo& code, const LoopSpec& spec) {
  RegionCFG g;
  const auto& ins = code.instrs;
  const int n = (int)ins.size();
  std::map<int, int> index_of;  // offset -> first instruction with it
  for (int i = n - 1; i >= 0; i--) index_of[ins[i].offset] = i;
  auto at = [&](int offset) {
    auto it = index_of.find(offset);
    if (it == index_of.end()) fail("bytecode offset " + std::to_string(offset) + " not found", -1);
    return it->second;
  };
  g.first_instr = at(spec.entry_offset);
  g.end_instr = spec.exit_offset >= 0 && index_of.count(spec.exit_offset) ? at(spec.exit_offset) : n;
  const int first = g.first_instr, end = g.end_instr;
  int header_line = ins[at(spec.header_offset)].line;

  auto same_code_from = [&](int i, int j) {
    // Straight-line instructions from i and from j are identical up to a return/raise.
    for (int k = 0; k < 64; k++, i++, j++) {
      if (i >= n || j >= n) return false;
      const Instr &a = ins[i], &b = ins[j];
      if (a.op != b.op || a.sarg != b.sarg || a.iarg != b.iarg || a.flags != b.flags || a.target != b.target)
        return false;
      if (is_stop(a.op)) return true;
      if (is_jump(a.op) || is_cond(a.op) || a.op == Op::FOR_ITER) return false;
    }
    return false;
  };

  // Jump targets as instruction indices; FOR_ITER's skip END_FOR (and 3.13's POP_TOP).
  // A while statement's exits may go to a copy of the code at the region's end (CPython
  // copies a short `return` after the loop to the places that jump to it): the same.
  std::vector<int> target(n, -1);
  for (int i = first; i < end; i++) {
    if (ins[i].target < 0) continue;
    int t = at(ins[i].target);
    if (ins[i].op == Op::FOR_ITER && t < n && ins[t].op == Op::END_FOR) {
      t++;
      if (code.version >= 313 && t < n && ins[t].op == Op::POP_TOP) t++;
    }
    if (spec.while_loop && t > end && end < n && same_code_from(t, end)) t = end;
    if (t != end && (t < first || t > end))
      fail(t > end ? "a break past the loop's else clause (or a jump out of try/finally)"
                   : "a jump leaves the loop (return, raise or try/finally inside it)",
           ins[i].line);
    target[i] = t;
  }

  // Leaders and blocks.
  std::set<int> leaders = {first};
  for (int i = first; i < end; i++) {
    Op op = ins[i].op;
    if (target[i] >= 0 && target[i] < end) leaders.insert(target[i]);
    if ((is_jump(op) || is_cond(op) || op == Op::FOR_ITER || is_stop(op)) && i + 1 < end) leaders.insert(i + 1);
  }
  // Superinstruction halves share an offset: never split them.
  g.block_of_instr.assign(n, -1);
  std::vector<int> starts(leaders.begin(), leaders.end());
  for (size_t k = 0; k < starts.size(); k++) {
    Block b;
    b.first = starts[k];
    b.last = k + 1 < starts.size() ? starts[k + 1] : end;
    for (int i = b.first; i < b.last; i++) g.block_of_instr[i] = (int)g.blocks.size();
    g.blocks.push_back(b);
  }
  auto block_at = [&](int instr) { return instr == end ? RegionCFG::kExitBlock : g.block_of_instr[instr]; };
  for (size_t k = 0; k < g.blocks.size(); k++) {
    Block& b = g.blocks[k];
    int li = b.last - 1;
    Op op = ins[li].op;
    int next = b.last < end ? (int)k + 1 : RegionCFG::kExitBlock;
    if (is_stop(op)) {
      b.term = Block::Term::Stop;
    } else if (is_jump(op)) {
      b.term = Block::Term::Jump;
      b.succ = {block_at(target[li])};
    } else if (is_cond(op)) {
      b.term = Block::Term::Cond;
      b.succ = {block_at(target[li]), next};
    } else if (op == Op::FOR_ITER) {
      b.term = Block::Term::ForIter;
      b.succ = {block_at(target[li]), next};
    } else {
      b.term = Block::Term::Fall;
      b.succ = {next};
    }
  }
  g.entry = 0;

  // Reachability from the entry; unreachable blocks (END_FOR etc.) are dropped from all
  // later analysis by leaving them without predecessors.
  const int nb = (int)g.blocks.size();
  std::vector<bool> reach(nb, false);
  std::vector<int> work = {g.entry};
  reach[g.entry] = true;
  while (!work.empty()) {
    int b = work.back();
    work.pop_back();
    for (int s : g.blocks[b].succ)
      if (s >= 0 && !reach[s]) { reach[s] = true; work.push_back(s); }
  }
  for (int b = 0; b < nb; b++) {
    if (!reach[b]) continue;
    for (int s : g.blocks[b].succ)
      if (s >= 0) g.blocks[s].pred.push_back(b);
  }

  // Dominators (iterative; graphs are small). Reverse postorder first.
  std::vector<int> rpo, state(nb, 0);
  std::vector<std::pair<int, size_t>> stack = {{g.entry, 0}};
  state[g.entry] = 1;
  while (!stack.empty()) {
    auto& [b, k] = stack.back();
    if (k < g.blocks[b].succ.size()) {
      int s = g.blocks[b].succ[k++];
      if (s >= 0 && state[s] == 0) { state[s] = 1; stack.push_back({s, 0}); }
    } else {
      rpo.push_back(b);
      stack.pop_back();
    }
  }
  std::reverse(rpo.begin(), rpo.end());
  std::vector<int> order(nb, -1);
  for (size_t i = 0; i < rpo.size(); i++) order[rpo[i]] = (int)i;
  std::vector<int> idom(nb, -1);
  idom[g.entry] = g.entry;
  for (bool changed = true; changed;) {
    changed = false;
    for (int b : rpo) {
      if (b == g.entry) continue;
      int d = -1;
      for (int p : g.blocks[b].pred) {
        if (idom[p] < 0) continue;
        if (d < 0) { d = p; continue; }
        int x = p, y = d;
        while (x != y) {
          while (order[x] > order[y]) x = idom[x];
          while (order[y] > order[x]) y = idom[y];
        }
        d = x;
      }
      if (d != idom[b]) { idom[b] = d; changed = true; }
    }
  }
  auto dominates = [&](int a, int b) {
    while (true) {
      if (a == b) return true;
      if (b == g.entry || idom[b] < 0) return false;
      b = idom[b];
    }
  };

  // Natural loops, one per header.
  g.loop_of_header.assign(nb, -1);
  for (int u : rpo) {
    for (int h : g.blocks[u].succ) {
      if (h < 0 || !dominates(h, u)) continue;
      int l = g.loop_of_header[h];
      if (l < 0) {
        l = (int)g.loops.size();
        Loop L;
        L.header = h;
        L.in.assign(nb, false);
        L.in[h] = true;
        L.is_for = g.blocks[h].term == Block::Term::ForIter;
        g.loops.push_back(L);
        g.loop_of_header[h] = l;
      }
      std::vector<int> w = {u};
      auto& in = g.loops[l].in;
      while (!w.empty()) {
        int x = w.back();
        w.pop_back();
        if (in[x]) continue;
        in[x] = true;
        for (int p : g.blocks[x].pred) w.push_back(p);
      }
    }
  }
  // Natural loops leave out the blocks of `break` paths (they never reach the back edge).
  // CPython lays a loop's code out contiguously, so the blocks inside a loop's span
  // belong to it. A for loop's span runs up to FOR_ITER's own target (3.12+: its
  // END_FOR), which also takes in a break path laid out after the last back edge
  // (3.12 inverts `if c: ...; break` so that the body ends in the back edge).
  for (auto& L : g.loops) {
    int lo = nb, hi = -1;
    for (int b = 0; b < nb; b++)
      if (L.in[b]) { lo = std::min(lo, b); hi = std::max(hi, b); }
    if (L.is_for) {
      int raw_exit = at(ins[g.blocks[L.header].last - 1].target);
      for (int b = hi + 1; b < nb && g.blocks[b].first < raw_exit; b++) hi = b;
    }
    for (int b = lo; b <= hi; b++)
      if (reach[b]) L.in[b] = true;
  }

  // Every FOR_ITER in the region must head a loop (it always does in compiled code).
  for (int b = 0; b < nb; b++) {
    if (!reach[b] || g.blocks[b].term != Block::Term::ForIter || g.loop_of_header[b] >= 0) continue;
    int line = ins[g.blocks[b].last - 1].line;
    for (int i = g.blocks[b].last; i < end; i++)
      if (is_stop(ins[i].op)) { line = ins[i].line; break; }
    fail("a for loop whose body always leaves it (return, raise or break)", line);
  }

  // Nesting: the parent is the smallest loop strictly containing the header.
  auto size_of = [&](int l) { return (int)std::count(g.loops[l].in.begin(), g.loops[l].in.end(), true); };
  for (size_t l = 0; l < g.loops.size(); l++) {
    int best = -1;
    for (size_t p = 0; p < g.loops.size(); p++) {
      if (p == l || !g.loops[p].in[g.loops[l].header]) continue;
      if (best < 0 || size_of((int)p) < size_of(best)) best = (int)p;
    }
    g.loops[l].parent = best;
  }
  for (auto& L : g.loops) {
    for (int p = L.parent; p >= 0; p = g.loops[p].parent) L.depth++;
  }
  g.innermost.assign(nb, -1);
  for (int b = 0; b < nb; b++) {
    int best = -1;
    for (size_t l = 0; l < g.loops.size(); l++)
      if (g.loops[l].in[b] && (best < 0 || g.loops[l].depth > g.loops[best].depth)) best = (int)l;
    g.innermost[b] = best;
  }

  // The outermost loop is the candidate's for loop, and nothing may sit beside it (in a
  // function's body, any loops may).
  int outer = -1;
  for (size_t l = 0; l < g.loops.size() && !spec.function; l++)
    if (g.loops[l].parent < 0) {
      if (outer >= 0) fail("more than one loop at the top of the region", header_line);
      outer = (int)l;
    }
  if (!spec.function && (outer < 0 || g.loops[outer].is_for == spec.while_loop))
    fail(spec.while_loop ? "the region's loop is not a while loop" : "the region's loop is not a for loop", header_line);

  // Follows: for loops continue where FOR_ITER exits; a while loop's exits that do not go
  // to an enclosing loop's header or follow must all go to one block.
  std::vector<int> by_depth(g.loops.size());
  for (size_t l = 0; l < g.loops.size(); l++) by_depth[l] = (int)l;
  std::sort(by_depth.begin(), by_depth.end(), [&](int a, int b) { return g.loops[a].depth < g.loops[b].depth; });
  for (int l : by_depth) {
    Loop& L = g.loops[l];
    if (L.is_for) {
      L.follow = g.blocks[L.header].succ[0];
      continue;
    }
    std::set<int> own;
    for (int b = 0; b < nb; b++) {
      if (!L.in[b]) continue;
      for (int s : g.blocks[b].succ) {
        if (s >= 0 && L.in[s]) continue;
        bool outer_target = false;
        for (int p = L.parent; p >= 0; p = g.loops[p].parent)
          outer_target = outer_target || s == g.loops[p].header || s == g.loops[p].follow;
        if (!outer_target) own.insert(s);
      }
    }
    if (own.size() > 1) fail("a while loop with an else clause or exits stagepy cannot structure", ins[g.blocks[L.header].first].line);
    L.follow = own.empty() ? -1 : *own.begin();
  }
  // A while statement ends where the region does: the rewritten code continues there.
  if (spec.while_loop && g.loops[outer].follow != RegionCFG::kExitBlock && g.loops[outer].follow != -1)
    fail("a while loop whose exit stagepy cannot find", header_line);
  // CPython copies small exit blocks (`return x` after a loop) to the places that jump
  // to them, so a `break` may run its own copy of the code after the loop instead of
  // jumping to it. A block made of the popped iterator(s) and an exact copy of the code
  // at a loop's follow is treated as a jump to the follow.
  std::vector<int> fors_inner_first;
  for (size_t l = 0; l < g.loops.size(); l++)
    if (g.loops[l].is_for) fors_inner_first.push_back((int)l);
  std::sort(fors_inner_first.begin(), fors_inner_first.end(),
            [&](int a, int b) { return g.loops[a].depth > g.loops[b].depth; });
  for (int b = 0; b < nb; b++) {
    Block& blk = g.blocks[b];
    if (!reach[b] || blk.term != Block::Term::Stop) continue;
    int k = blk.first;
    while (k < blk.last && ins[k].op == Op::POP_TOP) k++;
    if (k == blk.first || k >= blk.last) continue;
    for (int l : fors_inner_first) {
      const Loop& L = g.loops[l];
      int follow_instr = L.follow == RegionCFG::kExitBlock ? end : L.follow >= 0 ? g.blocks[L.follow].first : -1;
      if (follow_instr < 0 || !same_code_from(k, follow_instr)) continue;
      blk.last = k;
      blk.term = Block::Term::Fall;
      blk.succ = {L.follow};
      if (L.follow >= 0) g.blocks[L.follow].pred.push_back(b);
      break;
    }
  }

  // A for loop's breaks must go where its exhaustion goes (no for/else). A break is a
  // block that only drops iterators (POP_TOP) and jumps on.
  auto through_break = [&](int s) {
    for (int step = 0; step < 8 && s >= 0; step++) {
      const Block& blk = g.blocks[s];
      if (blk.term != Block::Term::Fall && blk.term != Block::Term::Jump) return s;
      int body_end = blk.term == Block::Term::Jump ? blk.last - 1 : blk.last;
      for (int i = blk.first; i < body_end; i++)
        if (ins[i].op != Op::POP_TOP) return s;
      s = blk.succ[0];
    }
    return s;
  };
  for (auto& L : g.loops) {
    if (!L.is_for) continue;
    for (int b = 0; b < nb; b++) {
      if (!L.in[b]) continue;
      for (int s0 : g.blocks[b].succ) {
        if ((s0 >= 0 && L.in[s0]) || s0 == L.follow) continue;
        int s = through_break(s0);
        if (s == L.follow) continue;
        bool outer_target = false;
        for (int p = L.parent; p >= 0; p = g.loops[p].parent)
          outer_target = outer_target || s == g.loops[p].header || s == g.loops[p].follow;
        if (outer_target) continue;
        // A break past an else clause: every such break goes to one block, and the clause
        // (from the follow) is entered only from the loop's header, when it is exhausted.
        if (s < 0 || (L.else_exit >= 0 && L.else_exit != s))
          fail("a for loop with an else clause stagepy cannot structure", ins[g.blocks[L.header].last - 1].line);
        L.else_exit = s;
      }
    }
    if (L.else_exit >= 0) {
      bool only_exhausted = L.follow >= 0;
      for (int p : L.follow >= 0 ? g.blocks[L.follow].pred : std::vector<int>{})
        only_exhausted = only_exhausted && (!reach[p] || p == L.header);
      if (!only_exhausted)
        fail("a for loop with an else clause stagepy cannot structure", ins[g.blocks[L.header].last - 1].line);
    }
  }

  // Blocks from which every path returns or raises (a least fixed point: a path around a
  // cycle never gets there).
  g.ends_frame.assign(nb, false);
  for (bool changed = true; changed;) {
    changed = false;
    for (int b = nb - 1; b >= 0; b--) {
      const Block& blk = g.blocks[b];
      if (!reach[b] || g.ends_frame[b] || g.loop_of_header[b] >= 0 || blk.term == Block::Term::ForIter) continue;
      bool all = blk.term == Block::Term::Stop && !(spec.function && is_return(ins[blk.last - 1].op));
      if (!all && blk.term != Block::Term::Stop) {
        all = !blk.succ.empty();
        for (int s : blk.succ) all = all && s >= 0 && g.ends_frame[s];
      }
      if (all) g.ends_frame[b] = changed = true;
    }
  }
  return g;
}

int RegionCFG::merge_point(int b) const {
  const int L = innermost[b];
  const int nb = (int)blocks.size();
  // Nodes: blocks directly in L (0..nb-1), inner loops directly in L (nb + loop id),
  // the sink (nb + loops.size()).
  const int nl = (int)loops.size();
  const int sink = nb + nl;
  auto child_loop_of = [&](int block) {
    // The child of L (a loop whose parent is L) that contains `block`.
    int c = innermost[block];
    while (c >= 0 && loops[c].parent != L) c = loops[c].parent;
    return c;
  };
  auto map_target = [&](int v) -> int {  // -1: dropped
    if (v == kExitBlock) return L < 0 ? sink : -1;
    if (v < 0) return -1;
    if (L >= 0 && v == loops[L].header) return sink;
    if (L >= 0 && !loops[L].in[v]) return -1;
    if (innermost[v] != L) {
      int c = child_loop_of(v);
      if (c < 0 || loops[c].header != v) return -1;
      return nb + c;
    }
    return v;
  };
  auto succs = [&](int node) {
    std::vector<int> out;
    if (node == sink) return out;
    if (node >= nb) {
      int c = node - nb;
      for (int f : {loops[c].follow, loops[c].else_exit}) {  // (else_exit: where its breaks go)
        if (f == -1) continue;
        int t = map_target(f);
        if (t >= 0) out.push_back(t);
      }
      return out;
    }
    for (int s : blocks[node].succ) {
      int t = map_target(s);
      if (t >= 0) out.push_back(t);
    }
    return out;
  };
  // Nodes reachable from b, then post-dominator sets restricted to nodes reaching the sink.
  std::vector<int> nodes;
  std::vector<bool> seen(sink + 1, false);
  std::vector<int> w = {b};
  seen[b] = true;
  while (!w.empty()) {
    int x = w.back();
    w.pop_back();
    nodes.push_back(x);
    for (int s : succs(x))
      if (!seen[s]) { seen[s] = true; w.push_back(s); }
  }
  if (!seen[sink]) return -1;
  std::map<int, std::set<int>> pdom;
  std::set<int> all(nodes.begin(), nodes.end());
  for (int x : nodes) pdom[x] = (x == sink) ? std::set<int>{sink} : all;
  for (bool changed = true; changed;) {
    changed = false;
    for (int x : nodes) {
      if (x == sink) continue;
      std::set<int> acc;
      bool first_s = true;
      for (int s : succs(x)) {
        if (pdom[s].count(sink) == 0) continue;  // does not reach the sink
        if (first_s) { acc = pdom[s]; first_s = false; }
        else {
          std::set<int> r;
          std::set_intersection(acc.begin(), acc.end(), pdom[s].begin(), pdom[s].end(), std::inserter(r, r.begin()));
          acc.swap(r);
        }
      }
      if (first_s) acc.clear();  // reaches no sink
      acc.insert(x);
      if (first_s) acc = {x};
      if (acc != pdom[x]) { pdom[x] = acc; changed = true; }
    }
  }
  if (pdom[b].count(sink) == 0) return -1;
  // The immediate post-dominator: the strict post-dominator with the largest set.
  int best = -1;
  size_t best_size = 0;
  for (int p : pdom[b]) {
    if (p == b) continue;
    if (pdom[p].size() > best_size) { best = p; best_size = pdom[p].size(); }
  }
  if (best < 0 || best == sink) return -1;
  if (best >= nb) return loops[best - nb].header;
  return best;
}

}  // namespace stagepy::analysis
