// See linear_form.h.
#include "analysis/linear_form.h"

#include <cctype>

namespace stagepy::analysis {
namespace {

constexpr __int128 kLimit = (__int128)1 << 100;

bool in_limit(__int128 v) { return v < kLimit && v > -kLimit; }

// Recursive descent over: expr := term (('+' | '-') term)*; term := unary ('*' unary)*
// (at most one factor not a constant); unary := '-' unary | number | name | '(' expr ')'.
class Parser {
 public:
  explicit Parser(const std::string& s) : s_(s) {}

  std::optional<LinearForm> whole() {
    auto f = expr();
    skip();
    if (!f || p_ != s_.size()) return std::nullopt;
    return f;
  }

 private:
  const std::string& s_;
  size_t p_ = 0;

  void skip() {
    while (p_ < s_.size() && s_[p_] == ' ') p_++;
  }
  bool eat(char c) {
    skip();
    if (p_ < s_.size() && s_[p_] == c) {
      p_++;
      return true;
    }
    return false;
  }

  std::optional<LinearForm> expr() {
    auto f = term();
    while (f) {
      skip();
      if (p_ >= s_.size() || (s_[p_] != '+' && s_[p_] != '-')) break;
      const bool minus = s_[p_++] == '-';
      auto g = term();
      if (!g || !f->add(*g, minus ? -1 : 1)) return std::nullopt;
    }
    return f;
  }

  std::optional<LinearForm> term() {
    auto f = unary();
    while (f && eat('*')) {
      auto g = unary();
      if (!g) return std::nullopt;
      // One side must be a constant.
      const bool fc = f->coef.empty(), gc = g->coef.empty();
      if (!fc && !gc) return std::nullopt;
      LinearForm out;
      const __int128 k = fc ? f->constant : g->constant;
      if (!in_limit(k) || !out.add(fc ? *g : *f, k)) return std::nullopt;
      f = std::move(out);
    }
    return f;
  }

  std::optional<LinearForm> unary() {
    skip();
    if (p_ >= s_.size()) return std::nullopt;
    const char c = s_[p_];
    if (c == '-') {
      p_++;
      auto f = unary();
      if (!f) return std::nullopt;
      LinearForm out;
      if (!out.add(*f, -1)) return std::nullopt;
      return out;
    }
    if (c == '(') {
      p_++;
      auto f = expr();
      if (!f || !eat(')')) return std::nullopt;
      return f;
    }
    if (std::isdigit((unsigned char)c)) {
      __int128 v = 0;
      while (p_ < s_.size() && std::isdigit((unsigned char)s_[p_])) {
        v = v * 10 + (s_[p_++] - '0');
        if (!in_limit(v)) return std::nullopt;
      }
      LinearForm f;
      f.constant = v;
      return f;
    }
    if (std::isalpha((unsigned char)c) || c == '_') {
      size_t q = p_;
      while (q < s_.size() && (std::isalnum((unsigned char)s_[q]) || s_[q] == '_')) q++;
      std::string name = s_.substr(p_, q - p_);
      p_ = q;
      skip();
      // floor(...), min(...), max(...), `x mod d`: not linear in this syntax.
      if ((p_ < s_.size() && s_[p_] == '(') || name == "mod" || name == "and" || name == "or" || name == "exists" ||
          name == "floor" || name == "min" || name == "max")
        return std::nullopt;
      LinearForm f;
      f.coef[name] = 1;
      return f;
    }
    return std::nullopt;
  }
};

}  // namespace

bool LinearForm::add(const LinearForm& o, __int128 k) {
  for (auto& [name, c] : o.coef) {
    const __int128 v = of(name) + c * k;
    if (!in_limit(v)) return false;
    if (v == 0) coef.erase(name);
    else coef[name] = v;
  }
  const __int128 v = constant + o.constant * k;
  if (!in_limit(v)) return false;
  constant = v;
  return true;
}

std::optional<LinearForm> parse_linear(const std::string& text) { return Parser(text).whole(); }

std::optional<std::vector<LinearForm>> parse_constraints(const std::string& text) {
  std::vector<LinearForm> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(" and ", start);
    std::string part = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    start = end == std::string::npos ? text.size() + 1 : end + 5;
    // lhs OP rhs, OP one of >=, <=, >, <, =.
    size_t op = part.find_first_of("<>=");
    if (op == std::string::npos) return std::nullopt;
    size_t op_end = op + 1;
    if (op_end < part.size() && part[op_end] == '=') op_end++;
    const std::string o = part.substr(op, op_end - op);
    if (part.find_first_of("<>=", op_end) != std::string::npos) return std::nullopt;  // a chain: a <= x < b
    auto l = parse_linear(part.substr(0, op));
    auto r = parse_linear(part.substr(op_end));
    if (!l || !r) return std::nullopt;
    LinearForm f = *l;  // lhs - rhs
    if (!f.add(*r, -1)) return std::nullopt;
    LinearForm g;  // rhs - lhs
    if (!g.add(f, -1)) return std::nullopt;
    if (o == ">=") out.push_back(f);
    else if (o == "<=") out.push_back(g);
    else if (o == ">") {
      f.constant -= 1;
      out.push_back(f);
    } else if (o == "<") {
      g.constant -= 1;
      out.push_back(g);
    } else if (o == "=" || o == "==") {
      out.push_back(f);
      out.push_back(g);
    } else {
      return std::nullopt;
    }
  }
  return out;
}

}  // namespace stagepy::analysis
