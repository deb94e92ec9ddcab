// See printer.h.
#include "ir/printer.h"

#include <cstdio>
#include <sstream>

namespace stagepy::ir {
namespace {

std::string var_name(const Nest& n, int v) {
  if (v < 0 || v >= (int)n.vars.size()) return "<var" + std::to_string(v) + ">";
  return n.vars[v].name;
}

std::string const_str(const ConstValue& c) {
  switch (c.kind) {
    case ConstValue::Kind::None: return "None";
    case ConstValue::Kind::Bool: return c.b ? "True" : "False";
    case ConstValue::Kind::Int: return std::to_string(c.i);
    case ConstValue::Kind::Float: {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.17g", c.f);
      std::string s = buf;
      if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
      return s;
    }
    case ConstValue::Kind::Complex: {
      char buf[96];
      std::snprintf(buf, sizeof buf, "complex(%.17g, %.17g)", c.f, c.f2);
      return buf;
    }
    case ConstValue::Kind::Char: {
      if (c.i >= 0x20 && c.i < 0x7f && c.i != '\'' && c.i != '\\') return std::string("'") + (char)c.i + "'";
      char buf[32];
      std::snprintf(buf, sizeof buf, "chr(%lld)", (long long)c.i);
      return buf;
    }
  }
  return "?";
}

std::string typed(const Expr& e, std::string s) {
  if (e->type && e->type->kind != Type::Kind::Unknown) return s + ":" + e->type->str();
  return s;
}

}  // namespace

std::string to_string(const Expr& e, const Nest& n) {
  using K = ExprNode::Kind;
  auto a = [&](int i) { return to_string(e->args[i], n); };
  switch (e->kind) {
    case K::Const: return typed(e, const_str(e->value));
    case K::Load: return typed(e, var_name(n, e->var));
    case K::Attr: return typed(e, a(0) + "." + e->name);
    case K::Subscript:
      if (!e->name.empty()) return typed(e, a(0) + "." + e->name);  // an attribute column
      return typed(e, a(0) + "[" + a(1) + "]");
    case K::Tuple: {
      std::string s = "(";
      for (size_t i = 0; i < e->args.size(); i++) s += (i ? ", " : "") + a((int)i);
      return typed(e, s + (e->args.size() == 1 ? ",)" : ")"));
    }
    case K::NewList: {
      // (A list the nest makes, typed: type_infer's made_list forms.)
      if (e->name == "repeat") return typed(e, "([" + a(0) + "] * " + a(1) + ")");
      if (e->name == "copy") return typed(e, "copy(" + a(0) + "[" + a(1) + "])");
      std::string s = "[";
      for (size_t i = 0; i < e->args.size(); i++) s += (i ? ", " : "") + a((int)i);
      return typed(e, s + "]");
    }
    case K::Binary:
      return typed(e, "(" + a(0) + " " + binop_name(e->binop) + (e->inplace ? "= " : " ") + a(1) + ")" +
                          (e->in_domain ? "{in domain}" : ""));
    case K::Unary: return typed(e, std::string("(") + unop_name(e->unop) + a(0) + ")");
    case K::Compare: return typed(e, "(" + a(0) + " " + cmpop_name(e->cmpop) + " " + a(1) + ")");
    case K::Truth: return typed(e, "bool(" + a(0) + ")");
    case K::Call: {
      std::string s = a(0) + (e->name.empty() ? "" : "." + e->name) + "(";  // sum.total(...): a lifter's step
      size_t npos = e->args.size() - 1 - e->kwnames.size();
      for (size_t i = 1; i < e->args.size(); i++) {
        s += (i > 1 ? ", " : "");
        if (i - 1 >= npos) s += e->kwnames[i - 1 - npos] + "=";
        s += a((int)i);
      }
      return typed(e, s + ")" + (e->in_domain ? "{in domain}" : ""));
    }
    case K::Cond: return typed(e, "(" + a(1) + " if " + a(0) + " else " + a(2) + ")");
    case K::Seq: {
      std::string s = "seq(";
      for (size_t i = 0; i < e->args.size(); i++) s += (i ? ", " : "") + a((int)i);
      return typed(e, s + ")");
    }
    case K::Slice: {
      auto part = [&](int k) { return e->args[k]->kind == K::Const && e->args[k]->value.kind == ConstValue::Kind::None ? std::string() : a(k); };
      return typed(e, part(0) + ":" + part(1) + (part(2).empty() ? "" : ":" + part(2)));
    }
    case K::LoopNonEmpty: return "nonempty(L" + std::to_string(e->var) + ")";
    case K::Guard: return typed(e, "guard(" + a(0) + ", " + a(1) + ")");
    case K::AsType: return typed(e, "as(" + a(0) + ")");
    case K::ComplexWarn: {
      std::string s = std::string("numpy_warnings(") + binop_name(e->binop) + " " + e->name;
      for (size_t i = 0; i < e->args.size(); i++) s += ", " + a((int)i);
      return s + ")";
    }
  }
  return "?";
}

std::string to_string(const Stmt& s, const Nest& n, int indent) {
  using K = StmtNode::Kind;
  std::string pad(indent * 2, ' ');
  std::ostringstream o;
  auto resume = [&](int r) {
    if (r < 0) return std::string();
    return "  @" + std::string(n.resumes[r].reenter ? "reenter " : "") + std::string(n.resumes[r].logged ? "logged " : "") +
           std::to_string(n.resumes[r].offset);
  };
  switch (s->kind) {
    case K::Block:
      for (auto& b : s->body) o << to_string(b, n, indent);
      if (s->body.empty()) o << pad << "pass\n";
      break;
    case K::Seg: {
      o << pad;
      for (size_t i = 0; i < s->effects.size(); i++) {
        auto& f = s->effects[i];
        if (i) o << "; ";
        if (f.kind == Effect::Kind::Eval) {
          o << "eval " << to_string(f.value, n);
          continue;
        }
        if (f.kind == Effect::Kind::Append) {
          o << to_string(f.base, n) << ".append(" << to_string(f.value, n) << ")";
          continue;
        }
        if (f.kind == Effect::Kind::Assign) o << var_name(n, f.var);
        else if (!f.attr.empty()) o << to_string(f.base, n) << "." << f.attr;
        else o << to_string(f.base, n) << "[" << to_string(f.index, n) << "]" << (f.part == 0 ? ".real" : f.part == 1 ? ".imag" : "");
        o << " = " << to_string(f.value, n);
      }
      o << resume(s->resume) << "  # line " << s->line << "\n";
      break;
    }
    case K::If:
      o << pad << "if " << to_string(s->cond, n) << ":" << resume(s->resume) << "\n"
        << to_string(s->body[0], n, indent + 1);
      if (!(s->body[1]->kind == K::Block && s->body[1]->body.empty()))
        o << pad << "else:\n" << to_string(s->body[1], n, indent + 1);
      break;
    case K::For: {
      o << pad << "for" << (s->peeled ? "[peeled]" : "") << " L" << s->loop << " " << var_name(n, s->var)
        << " in range(";
      for (size_t i = 0; i < s->args.size(); i++) o << (i ? ", " : "") << to_string(s->args[i], n);
      o << "):" << resume(s->resume) << "  # line " << s->line;
      if (s->iter != ir::StmtNode::Iter::Range) {
        static const char* form[] = {"range", "", "enumerate", "zip"};
        o << ", from a for over " << form[(int)s->iter] << (s->iter == ir::StmtNode::Iter::Seq ? "" : "(");
        for (size_t i = 0; i < s->over.size(); i++) o << (i ? ", " : "") << to_string(s->over[i], n);
        if (s->iter == ir::StmtNode::Iter::Enumerate && s->start) o << ", " << s->start;
        o << (s->iter == ir::StmtNode::Iter::Seq ? "" : ")");
      }
      o << "\n";
      if (s->peeled && s->body.size() > 1) {
        o << pad << "  first iteration:\n" << to_string(s->body[1], n, indent + 2);
        o << pad << "  then:\n" << to_string(s->body[0], n, indent + 2);
      } else {
        o << to_string(s->body[0], n, indent + 1);
      }
      break;
    }
    case K::While:
      o << pad << "while" << (s->peeled ? "[peeled]" : "") << " True: L" << s->loop;
      if (s->loop >= 0 && (size_t)s->loop < n.loops.size() && n.loops[(size_t)s->loop].statement >= 0)
        o << resume(n.loops[(size_t)s->loop].statement);  // (an inlined call's, part of that statement)
      o << "  # line " << s->line << "\n";
      if (s->peeled && s->body.size() > 1) {
        o << pad << "  first iteration:\n" << to_string(s->body[1], n, indent + 2);
        o << pad << "  then:\n" << to_string(s->body[0], n, indent + 2);
      } else {
        o << to_string(s->body[0], n, indent + 1);
      }
      break;
    case K::Break: o << pad << "break L" << s->loop << "\n"; break;
    case K::Range: {
      o << pad << "L" << s->loop << " = range(";
      for (size_t i = 0; i < s->args.size(); i++) o << (i ? ", " : "") << to_string(s->args[i], n);
      o << ")" << resume(s->resume) << "\n";
      break;
    }
    case K::Continue: o << pad << "continue L" << s->loop << "\n"; break;
    case K::Exit: o << pad << "exit to CPython" << resume(s->resume) << "  # line " << s->line << "\n"; break;
  }
  return o.str();
}

std::string to_string(const Nest& n) {
  std::ostringstream o;
  o << "nest at line " << n.line << " (bytecode " << n.entry_offset << ".." << n.exit_offset << ")\n";
  o << "vars:";
  static const char* st[] = {"fast", "cell", "name", "global", "attr", "part", "temp", "builtin", "table", "method"};
  for (size_t i = 0; i < n.vars.size(); i++) {
    auto& v = n.vars[i];
    o << " " << v.name << "[" << st[(int)v.storage] << (v.assigned ? ",w" : "") << (v.read ? ",r" : "") << "]";
  }
  o << "\n" << to_string(n.root, n, 0);
  return o.str();
}

}  // namespace stagepy::ir
