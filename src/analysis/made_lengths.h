// made_lengths: in, a nest (untyped IR) and the variables that may hold lists it makes
// (ir::made_list_vars); out, for each class of those variables (the ones that pass lists
// to one another, `prev = cur`), where the lengths of the lists they hold come from, or
// that a list's length may change or come from something else.
//
// A class whose lists are made only as `[x] * n` (n an int expression of variables the nest
// does not assign, and `len()` of lists and arrays it neither assigns nor appends to; or
// `len(row)` of a made list, which has row's class's length), as
// displays `[a, b]`, or as whole copies `L[:]` / `L.copy()` of a list of such a class or of
// such a list, and that nothing else touches but subscripts with an index, len(), copies,
// loops over it and moves, holds lists of one length for the whole run when every source
// gives the same number at the call: the lists it holds at entry (of the variables read
// before the nest assigns them), each `n` (at least 0), each display's length. The
// dispatcher evaluates the sources (param_values) and gives the class's extent parameters
// that length where they agree: the subscripts of made lists then get facts as arrays do.
#pragma once
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace stagepy::analysis {

struct MadeLengthSource {
  enum class Kind : uint8_t {
    Entry,  // the list variable `var` holds at entry (when it holds one)
    Count,  // constant + sum of terms, at least 0
    Class,  // the length of class `var`'s lists (a whole copy of one)
  } kind = Kind::Count;
  int var = -1;
  int64_t constant = 0;
  struct Term {
    int64_t coef = 0;
    int var = -1;
    bool len = false;  // len(var), else var's int value
  };
  std::vector<Term> terms;
};

struct MadeListClass {
  std::vector<int> vars;
  bool known = false;  // false: the sources do not say every length (`why`)
  std::string why;
  std::vector<MadeLengthSource> sources;
  std::vector<int> len_callees;  // variables called as len(): builtins.len where the class's length holds
};

std::vector<MadeListClass> made_list_lengths(const ir::Nest& nest, const std::set<int>& made);

// The class holding variable `var`, or -1.
int made_class_of(const std::vector<MadeListClass>& classes, int var);

}  // namespace stagepy::analysis
