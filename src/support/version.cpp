// See version.h.
#include "support/version.h"

#include <dlfcn.h>
#include <isl/version.h>
#include <llvm/Config/llvm-config.h>

namespace stagepy {

const char* core_version() {
  static const std::string v = "stagepy-core 0.1.0 (LLVM " + std::to_string(LLVM_VERSION_MAJOR) + "." +
                               std::to_string(LLVM_VERSION_MINOR) + ", " + isl_version_string() + ")";
  return v.c_str();
}

std::string isl_version_string() {
  const char* v = isl_version();
  std::string s = v ? v : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string isl_library_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&isl_version), &info) == 0 || info.dli_fname == nullptr) return "";
  return info.dli_fname;
}

bool isl_is_real() {
  std::string p = isl_library_path();
  return p.find("libisl") != std::string::npos && p.find("LLVM") == std::string::npos;
}

int llvm_major_version() { return LLVM_VERSION_MAJOR; }

}  // namespace stagepy
