// See debug.h.
#include "support/debug.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace stagepy {

int debug_level() {
  static const int level = [] {
    const char* v = std::getenv("STAGEPY_DEBUG");
    return v && *v ? std::atoi(v) : 0;
  }();
  return level;
}

namespace {
int64_t g_bail_period = [] {
  const char* v = std::getenv("STAGEPY_DEBUG_BAIL");
  return v && *v ? std::atoll(v) : 0LL;
}();
int64_t g_bail_counter = 0;
}  // namespace

int64_t debug_bail_period() { return g_bail_period; }
void set_debug_bail(int64_t n) { g_bail_period = n < 0 ? 0 : n; }
int64_t* debug_bail_counter() { return &g_bail_counter; }

void debug_dump(const std::string& title, const std::string& text) {
  static std::mutex m;  // kernels' parts are compiled on several threads
  std::lock_guard<std::mutex> lock(m);
  std::fprintf(stderr, "---- stagepy: %s\n%s", title.c_str(), text.c_str());
  if (!text.empty() && text.back() != '\n') std::fputc('\n', stderr);
  std::fflush(stderr);
}

namespace {
const volatile int* g_interrupt_flag = nullptr;
}  // namespace

const volatile int* interrupt_flag() { return g_interrupt_flag; }
void set_interrupt_flag(const volatile int* flag) { g_interrupt_flag = flag; }

}  // namespace stagepy
