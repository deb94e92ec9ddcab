// STAGEPY_* environment variables. env_long: in, a variable's name and its default; out, the
// number it holds (as atol reads it), or the default when it is unset or empty (callers clamp
// it to their own range). env_flag: a switch: the default when unset or empty, off when "0",
// on for anything else.
#pragma once
#include <cstdlib>
#include <cstring>

namespace stagepy {

inline long env_long(const char* name, long fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atol(v) : fallback;
}

inline bool env_flag(const char* name, bool fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strcmp(v, "0") != 0 : fallback;
}

}  // namespace stagepy
