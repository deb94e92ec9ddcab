// See param_set.h.
#include "analysis/param_set.h"

#include <isl/constraint.h>
#include <isl/cpp.h>
#include <isl/set.h>
#include <isl/space.h>
#include <isl/val.h>

#include <cstdlib>
#include <limits>
#include <map>

#include "analysis/isl_support.h"

namespace stagepy::analysis {
namespace {

// The value of `v` where it is an integer that fits 64 bits (the constants of "no
// overflow" conditions are 2^63 - 1 and -2^63), or false. The fast path multiplies such
// coefficients by 64-bit values in 128 bits, checking every sum.
bool small_int(isl_val* v, int64_t* out) {
  bool ok = false;
  if (v && isl_val_is_int(v) == isl_bool_true) {
    isl_ctx* ctx = isl_val_get_ctx(v);
    isl_val* lo = isl_val_int_from_si(ctx, std::numeric_limits<long>::min());
    isl_val* hi = isl_val_int_from_si(ctx, std::numeric_limits<long>::max());
    ok = isl_val_ge(v, lo) == isl_bool_true && isl_val_le(v, hi) == isl_bool_true;
    if (ok) *out = (int64_t)isl_val_get_num_si(v);
    isl_val_free(lo);
    isl_val_free(hi);
  }
  isl_val_free(v);
  return ok;
}

// The value of `v` where it is an integer of at most 120 bits (a constant such as
// 2^63 + 1 - n of a "no overflow" condition), or false.
bool wide_int(isl_val* v, __int128* out) {
  bool ok = false;
  if (v && isl_val_is_int(v) == isl_bool_true) {
    char* str = isl_val_to_str(v);
    const char* c = str;
    bool neg = c && *c == '-';
    if (neg) c++;
    __int128 x = 0;
    ok = c && *c;
    for (; ok && *c; c++) {
      ok = *c >= '0' && *c <= '9' && x < ((__int128)1 << 116);
      x = x * 10 + (*c - '0');
    }
    if (ok) *out = neg ? -x : x;
    free(str);
  }
  isl_val_free(v);
  return ok;
}

}  // namespace

ParamSet::ParamSet() { text_ = "{ }"; }

ParamSet ParamSet::universe() {
  ParamSet p;
  p.empty_ = false;
  p.universe_ = true;
  p.pieces_.push_back(Piece{});
  p.text_ = "{ : }";
  return p;
}

ParamSet ParamSet::from_pieces(const std::vector<std::vector<Constraint>>& pieces, const std::vector<std::string>& names,
                               std::string text) {
  ParamSet p;
  p.names_ = names;
  p.text_ = std::move(text);
  p.involved_.assign(names.size(), 0);
  for (auto& cs : pieces) {
    Piece piece;
    piece.cs = cs;
    for (auto& c : cs)
      for (size_t k = 0; k < c.coef.size() && k < names.size(); k++)
        if (c.coef[k]) p.involved_[k] = 1;
    if (cs.empty()) p.universe_ = true;
    p.pieces_.push_back(std::move(piece));
  }
  p.empty_ = p.pieces_.empty();
  return p;
}

std::string ParamSet::describe(const std::vector<std::string>& shown, const std::vector<uint8_t>& nonneg,
                               std::vector<uint8_t>* used) const {
  used->assign(shown.size(), 0);
  if (empty_) return "never";
  if (universe_) return "always";
  std::string out;
  for (const Piece& pc : pieces_) {
    if (!pc.exact) return "";
    std::string piece;
    for (const Constraint& c : pc.cs) {
      // sum(coef * param) + constant >= 0 (== 0), written as P >= N - constant with the
      // positive terms P on the left, or N <= constant where there are none.
      if (c.constant > INT64_MAX || c.constant < -INT64_MAX) return "";
      size_t terms = 0, last = 0;
      for (size_t k = 0; k < c.coef.size(); k++)
        if (c.coef[k] != 0) terms++, last = k;
      if (!c.eq && terms == 1 && c.coef[last] > 0 && c.constant >= 0 && last < nonneg.size() && nonneg[last])
        continue;  // an extent's `len(A) >= 0`
      for (size_t k = 0; k < c.coef.size() && k < shown.size(); k++)
        if (c.coef[k] != 0) (*used)[k] = 1;
      std::string pos, neg;
      for (size_t k = 0; k < c.coef.size() && k < shown.size(); k++) {
        if (c.coef[k] == 0) continue;
        const int64_t m = c.coef[k] > 0 ? c.coef[k] : -c.coef[k];
        std::string& side = c.coef[k] > 0 ? pos : neg;
        side += (side.empty() ? "" : " + ") + (m == 1 ? "" : std::to_string(m) + "*") + shown[k];
      }
      auto with_constant = [](std::string terms, int64_t k) {
        if (terms.empty()) return std::to_string(k);
        if (k > 0) return terms + " + " + std::to_string(k);
        if (k < 0) return terms + " - " + std::to_string(-k);
        return terms;
      };
      const int64_t k = (int64_t)c.constant;
      std::string text;
      if (!pos.empty()) text = pos + (c.eq ? " == " : " >= ") + with_constant(neg, -k);
      else if (!neg.empty()) text = neg + (c.eq ? " == " : " <= ") + std::to_string(k);
      else continue;  // a constant constraint (a true one: the piece is not empty)
      piece += (piece.empty() ? "" : " and ") + text;
    }
    if (piece.empty()) return "always";
    out += (out.empty() ? "" : ", or ") + piece;
  }
  return out;
}

ParamSet ParamSet::from_isl(isl_set* raw, const std::vector<std::string>& names) {
  ParamSet p;
  p.names_ = names;
  isl::set s = isl::manage(raw).coalesce();
  {
    char* str = isl_set_to_str(s.get());
    p.text_ = str ? str : "";
    free(str);
  }
  p.empty_ = s.is_empty();
  if (p.empty_) return p;
  p.universe_ = isl_set_plain_is_universe(s.get()) == isl_bool_true;
  // Parameter positions of `s` in `names` order.
  isl_space* sp = isl_set_get_space(s.get());
  int np = (int)isl_space_dim(sp, isl_dim_param);
  std::vector<int> pos_of(np, -1);
  bool all_named = true;
  for (int i = 0; i < np; i++) {
    const char* nm = isl_space_get_dim_name(sp, isl_dim_param, i);
    for (size_t k = 0; k < names.size(); k++)
      if (nm && names[k] == nm) pos_of[i] = (int)k;
    if (pos_of[i] < 0) all_named = false;
  }
  isl_space_free(sp);
  p.involved_.assign(names.size(), all_named ? 0 : 1);
  for (int i = 0; i < np; i++)
    if (pos_of[i] >= 0 && isl_set_involves_dims(s.get(), isl_dim_param, (unsigned)i, 1) != isl_bool_false)
      p.involved_[(size_t)pos_of[i]] = 1;
  isl::set explicit_divs = isl::manage(isl_set_compute_divs(s.copy()));
  explicit_divs.foreach_basic_set([&](isl::basic_set b) {
    Piece piece;
    isl_basic_set* bs = b.get();
    if (!all_named || isl_basic_set_dim(bs, isl_dim_div) > 0 || isl_basic_set_dim(bs, isl_dim_set) > 0) {
      piece.exact = false;
      p.pieces_.push_back(std::move(piece));
      return;
    }
    struct Acc {
      Piece* piece;
      const std::vector<int>* pos_of;
      size_t n;
    } acc{&piece, &pos_of, names.size()};
    isl_basic_set_foreach_constraint(
        bs,
        [](isl_constraint* c, void* user) -> isl_stat {
          auto* a = static_cast<Acc*>(user);
          Constraint k;
          k.coef.assign(a->n, 0);
          k.eq = isl_constraint_is_equality(c) == isl_bool_true;
          bool ok = wide_int(isl_constraint_get_constant_val(c), &k.constant);
          for (size_t i = 0; ok && i < a->pos_of->size(); i++) {
            int64_t v = 0;
            ok = small_int(isl_constraint_get_coefficient_val(c, isl_dim_param, (int)i), &v);
            if (ok) k.coef[(size_t)(*a->pos_of)[i]] = v;
          }
          if (!ok) a->piece->exact = false;
          else a->piece->cs.push_back(std::move(k));
          isl_constraint_free(c);
          return isl_stat_ok;
        },
        &acc);
    p.pieces_.push_back(std::move(piece));
  });
  return p;
}

bool ParamSet::contains(const int64_t* params) const {
  if (empty_) return false;
  if (universe_) return true;
  for (const Piece& pc : pieces_) {
    if (!pc.exact) return slow_contains(params);
    bool in = true;
    for (const Constraint& c : pc.cs) {
      __int128 sum = c.constant;
      bool ovf = false;
      for (size_t i = 0; i < c.coef.size() && !ovf; i++) {
        if (!c.coef[i]) continue;
        __int128 t = (__int128)c.coef[i] * (__int128)params[i];
        ovf = __builtin_add_overflow(sum, t, &sum);
      }
      if (ovf) return slow_contains(params);
      if (c.eq ? sum != 0 : sum < 0) {
        in = false;
        break;
      }
    }
    if (in) return true;
  }
  return false;
}

bool ParamSet::slow_contains(const int64_t* params) const {
  IslCtx ctx;
  isl::set s;
  try {
    s = isl::set(ctx.get(), text_);
  } catch (const isl::exception&) {
    return true;  // cannot tell: the caller treats membership as "a violation is possible"
  }
  isl_set* raw = s.release();
  isl_space* sp = isl_set_get_space(raw);
  int np = (int)isl_space_dim(sp, isl_dim_param);
  for (int i = 0; i < np && raw; i++) {
    const char* nm = isl_space_get_dim_name(sp, isl_dim_param, i);
    int k = -1;
    for (size_t j = 0; j < names_.size(); j++)
      if (nm && names_[j] == nm) k = (int)j;
    if (k < 0) {
      isl_space_free(sp);
      isl_set_free(raw);
      return true;
    }
    raw = isl_set_fix_val(raw, isl_dim_param, (unsigned)i, isl_val_int_from_si(isl_set_get_ctx(raw), (long)params[k]));
  }
  isl_space_free(sp);
  bool empty = isl_set_is_empty(raw) == isl_bool_true;
  isl_set_free(raw);
  return !empty;
}

}  // namespace stagepy::analysis
