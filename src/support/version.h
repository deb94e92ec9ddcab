// Versions of the libraries the core was built and linked with, and the check that isl
// calls reach the real libisl rather than the copy Debian's libLLVM exports.
#pragma once
#include <string>

namespace stagepy {

const char* core_version();          // "stagepy-core 0.1.0 (LLVM x.y, isl-0.z)"
std::string isl_version_string();    // what isl_version() returns
std::string isl_library_path();      // the shared object the isl_version symbol came from
bool isl_is_real();                  // that object is libisl, not libLLVM
int llvm_major_version();

}  // namespace stagepy
