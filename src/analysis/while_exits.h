// Whether a lifted while loop can end by itself. In: a While statement of the lifted IR.
// Out: an empty string, or why it may not (the report's reason).
//
// A native nest holds the GIL and sees only its own writes: a loop whose exits test nothing
// the loop changes (`while not done: n += 1`, with `done` set by another thread) would spin
// forever where CPython lets the other thread run, and one whose test also reads an element
// of a container at a place the loop never changes (`while not ready[0] and spins < limit:`)
// would never see the flag another thread sets. Such loops stay interpreted. With `watched`,
// that last case is no problem here: *watched is the container (-1 if none), for type
// inference to refuse unless no thread can change it (a str, a tuple).
#pragma once
#include <string>

#include "ir/ir.h"

namespace stagepy::analysis {

std::string while_exit_problem(const ir::Stmt& loop, const std::vector<ir::Var>& vars, int* watched = nullptr);
// The reason for a watched container (`name`), in the report's words.
std::string watched_element_problem(const std::string& name);

}  // namespace stagepy::analysis
