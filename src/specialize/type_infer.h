// infer_types: in, a lifted nest and the Python-level types of the values its variables
// hold at entry; out, a typed copy of the nest, or the reason no kernel can be built for
// these types.
//
// Types are flow-sensitive: a variable may hold an int before a loop and a NumPy float
// after its first iteration (s = 0; s += A[i]). Where the types after a loop's first
// iteration differ from those before it, the first iteration is peeled; where the two
// arms of an `if` leave a variable with types that cannot share a computation, the rest
// of the block is typed (and later compiled) once per arm. Variables keep a run-time tag
// naming their current type, which is how values are boxed back into Python objects.
#pragma once
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "specialize/facts.h"
#include "specialize/oracle.h"

namespace stagepy::specialize {

struct TypedNest {
  bool ok = false;
  std::string reason;   // why not, in a user's words
  int reason_line = -1;
  ir::Nest nest;        // root typed; Range statements inserted before each For
  std::vector<TypeRef> tags;  // tag k (k >= 1) names tags[k - 1]; tag 0 is "unbound"
  // Not ok because the nest stores NumPy floats into the list of floats variable `retag`
  // holds at entry (`retag_tags` kTagsNp), or ints into a list of floats or floats into one
  // of ints (kTagsInts): read tagged (Type::tagged) with those bits, its values may be typed
  // (dispatch.cpp).
  int retag = -1;
  uint8_t retag_tags = kTagsNp;
  // Not ok until the empty list variable `empty_var` holds at entry (InferInput::empty_lists)
  // is typed as one of `empty_dtype`s: the nest appends those to it (dispatch.cpp).
  int empty_var = -1;
  DType empty_dtype = DType::Int64;
  int tag_of(const TypeRef& t) const;  // 0 for Unbound
};

struct InferInput {
  const ir::Nest* nest = nullptr;
  std::vector<TypeRef> entry;             // per variable; Unbound where it has no value
  const Oracle* oracle = nullptr;
  std::function<int(int)> line_of;        // bytecode offset -> source line
  // The facts of these values (facts.h), where they are about `nest`: a loop they say
  // always runs (FactKind::NonEmpty) is typed without the way around it.
  const FactSet* facts = nullptr;
  size_t budget = 20000;                  // typed statements before giving up on duplication
  // Variables whose new lists of floats are tagged (made_lists.h), or null.
  const std::set<int>* tagged_made = nullptr;
  // Pairs of variables whose arrays or lists share memory at entry (part of the dispatcher's
  // key), or null: a loop over a slice of one list may store into another (for_stmt).
  const std::vector<std::pair<int, int>>* overlapping = nullptr;
  // Variables whose list grows (Var::resized) holding an empty list at entry, typed as one
  // of ints for want of its items' type, or null.
  const std::vector<int>* empty_lists = nullptr;
};

TypedNest infer_types(const InferInput& in);

// Whether values of this type can be indices (Python int, or a NumPy integer scalar).
bool index_like(const TypeRef& t);

}  // namespace stagepy::specialize
