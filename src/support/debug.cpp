// See debug.h.
#include "support/debug.h"

#include <cstdio>
#include <cstdlib>

namespace stagepy {

int debug_level() {
  static const int level = [] {
    const char* v = std::getenv("STAGEPY_DEBUG");
    return v && *v ? std::atoi(v) : 0;
  }();
  return level;
}

void debug_dump(const std::string& title, const std::string& text) {
  std::fprintf(stderr, "---- stagepy: %s\n%s", title.c_str(), text.c_str());
  if (!text.empty() && text.back() != '\n') std::fputc('\n', stderr);
  std::fflush(stderr);
}

}  // namespace stagepy
