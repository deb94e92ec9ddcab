// env_long: in, the name of a STAGEPY_* environment variable and its default; out, the
// number it holds (as atol reads it), or the default when it is unset or empty. Callers
// clamp the value to their own range.
#pragma once
#include <cstdlib>

namespace stagepy {

inline long env_long(const char* name, long fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atol(v) : fallback;
}

}  // namespace stagepy
