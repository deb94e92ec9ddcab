// An isl context owned by RAII, set up the way stagepy uses isl: errors become
// isl::exception (never a message on stderr, never an abort), and a bound on the work of
// one computation so that a pathological nest costs milliseconds, not minutes (the caller
// then treats the answer as unknown, which is always the conservative side).
#pragma once
#include <isl/ctx.h>
#include <isl/options.h>

namespace stagepy::analysis {

class IslCtx {
 public:
  explicit IslCtx(unsigned long max_operations = 2'000'000) : ctx_(isl_ctx_alloc()) {
    isl_options_set_on_error(ctx_, ISL_ON_ERROR_CONTINUE);
    isl_ctx_set_max_operations(ctx_, max_operations);
  }
  ~IslCtx() { isl_ctx_free(ctx_); }
  IslCtx(const IslCtx&) = delete;
  IslCtx& operator=(const IslCtx&) = delete;
  isl_ctx* get() const { return ctx_; }

 private:
  isl_ctx* ctx_;
};

}  // namespace stagepy::analysis
