// The core library links the real isl (not the copy inside libLLVM) and a supported LLVM.
#include <gtest/gtest.h>

#include "support/version.h"

TEST(Support, IslIsTheRealLibrary) {
  EXPECT_TRUE(stagepy::isl_is_real()) << "isl_version bound to " << stagepy::isl_library_path();
  EXPECT_EQ(stagepy::isl_version_string().rfind("isl-", 0), 0u) << stagepy::isl_version_string();
}

TEST(Support, LlvmVersionInRange) {
  EXPECT_GE(stagepy::llvm_major_version(), 16);
  EXPECT_LE(stagepy::llvm_major_version(), 19);
}
