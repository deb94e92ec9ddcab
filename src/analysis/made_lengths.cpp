// See made_lengths.h.
#include "analysis/made_lengths.h"

#include <map>

#include "ir/mutate.h"

namespace stagepy::analysis {
namespace {

using ir::Expr;
using K = ir::ExprNode::Kind;

class Lengths {
 public:
  Lengths(const ir::Nest& n, const std::set<int>& made) : n_(n), made_(made) {}

  std::vector<MadeListClass> run() {
    // Classes: the made variables joined by their moves.
    const std::vector<std::pair<int, int>> moves = ir::variable_moves(n_.root);
    for (int v : made_) class_[v] = -1;
    for (int v : made_) {
      if (class_[v] >= 0) continue;
      std::set<int> members{v};
      ir::add_moved_with(&members, moves);
      MadeListClass c;
      c.known = true;
      for (int m : members)
        if (made_.count(m)) class_[m] = (int)out_.size(), c.vars.push_back(m);
      out_.push_back(std::move(c));
    }
    for (auto& c : out_)
      for (int v : c.vars)
        if (!ir::assigned_before_read(n_.root, v)) {
          MadeLengthSource s;
          s.kind = MadeLengthSource::Kind::Entry;
          s.var = v;
          c.sources.push_back(s);
        }
    ir::for_each_stmt(n_.root, [&](const ir::Stmt& s) { stmt(s); });
    return std::move(out_);
  }

 private:
  const ir::Nest& n_;
  const std::set<int>& made_;
  std::map<int, int> class_;
  std::vector<MadeListClass> out_;

  int class_of(int v) const {
    auto it = class_.find(v);
    return it == class_.end() ? -1 : it->second;
  }
  void unknown(int c, const std::string& why) {
    if (c < 0 || !out_[(size_t)c].known) return;
    out_[(size_t)c].known = false;
    out_[(size_t)c].why = why;
  }
  bool is_len(const Expr& callee) const {
    return callee && callee->kind == K::Load && callee->var >= 0 && n_.vars[(size_t)callee->var].name == "len";
  }
  // A list or array the nest neither assigns nor appends to: its length stays as at entry.
  bool fixed(const Expr& e) const {
    if (!e || e->kind != K::Load || e->var < 0 || made_.count(e->var)) return false;
    const ir::Var& v = n_.vars[(size_t)e->var];
    return !v.assigned && !v.appended;
  }

  void stmt(const ir::Stmt& s) {
    if (s->kind == ir::StmtNode::Kind::For) {
      if (class_of(s->var) >= 0) unknown(class_of(s->var), "it is a loop's variable");
      for (auto& a : s->args) uses(a);
      for (auto& o : s->over)  // looping over a list reads it
        if (!(o && o->kind == K::Load && class_of(o->var) >= 0)) uses(o);
    }
    if (s->kind == ir::StmtNode::Kind::If) uses(s->cond);
    if (s->kind == ir::StmtNode::Kind::While) uses(s->cond);
    for (auto& f : s->effects) effect(f);
  }

  void effect(const ir::Effect& f) {
    switch (f.kind) {
      case ir::Effect::Kind::Assign: {
        const int c = class_of(f.var);
        if (c >= 0) assigned(c, f.value);
        else uses(f.value);
        return;
      }
      case ir::Effect::Kind::Store:
        if (f.base && f.base->kind == K::Load && class_of(f.base->var) >= 0) {
          if (f.index && f.index->kind == K::Slice) unknown(class_of(f.base->var), "a slice of it is assigned");
        } else {
          uses(f.base);
        }
        uses(f.index);
        uses(f.value);
        return;
      case ir::Effect::Kind::Append:
        if (f.base && f.base->kind == K::Load && class_of(f.base->var) >= 0)
          unknown(class_of(f.base->var), "it is appended to");
        else uses(f.base);
        // (Appended as an item, a list keeps its length: the one that grows is the other.)
        if (f.value && f.value->kind == K::Load && class_of(f.value->var) >= 0) return;
        uses(f.value);
        return;
      case ir::Effect::Kind::Eval:
        uses(f.value);
        return;
    }
  }

  // `f.var = value` for a variable of class c: a source of its lengths.
  void assigned(int c, const Expr& value) {
    if (!value) return unknown(c, "it is assigned something else");
    if (value->kind == K::Load && class_of(value->var) == c) return;  // a move
    if (value->kind == K::NewList) {
      for (auto& a : value->args) uses(a);
      MadeLengthSource s;
      s.constant = (int64_t)value->args.size();
      out_[(size_t)c].sources.push_back(s);
      return;
    }
    if (value->kind == K::Binary && value->binop == ir::BinOp::Mul && !value->inplace) {
      const bool left = value->args[0]->kind == K::NewList;
      const Expr& list = value->args[left ? 0 : 1];
      const Expr& count = value->args[left ? 1 : 0];
      if (list->kind != K::NewList) return unknown(c, "it is assigned something else");
      for (auto& a : list->args) uses(a);
      uses(count);
      MadeLengthSource s;
      // `[x] * len(row)` of a made list: that list's class's length.
      if (list->args.size() == 1 && count->kind == K::Call && count->args.size() == 2 && count->kwnames.empty() &&
          is_len(count->args[0]) && count->args[1]->kind == K::Load && class_of(count->args[1]->var) >= 0) {
        if (class_of(count->args[1]->var) == c) return;
        s.kind = MadeLengthSource::Kind::Class;
        s.var = class_of(count->args[1]->var);
        out_[(size_t)c].sources.push_back(s);
        return;
      }
      if (!linear(count, (int64_t)list->args.size(), &s, c)) return unknown(c, "the count of a `[x] * n` is not a sum of fixed ints");
      out_[(size_t)c].sources.push_back(s);
      return;
    }
    // A whole copy: `L[:]`, `L.copy()`.
    Expr of;
    if (value->kind == K::Subscript && value->args[1]->kind == K::Slice) {
      for (auto& a : value->args[1]->args)
        if (!(a->kind == K::Const && a->value.kind == ir::ConstValue::Kind::None)) {
          uses(value->args[0]);
          uses(value->args[1]);
          return unknown(c, "it is assigned a part of a list");
        }
      of = value->args[0];
    } else if (value->kind == K::Call && value->args.size() == 1 && value->kwnames.empty() &&
               value->args[0]->kind == K::Attr && value->args[0]->name == "copy") {
      of = value->args[0]->args[0];
    }
    if (!of) {
      uses(value);
      return unknown(c, "it is assigned something else");
    }
    MadeLengthSource s;
    if (of->kind == K::Load && class_of(of->var) >= 0) {
      if (class_of(of->var) == c) return;  // a copy of the class's own list
      s.kind = MadeLengthSource::Kind::Class;
      s.var = class_of(of->var);
    } else if (fixed(of)) {
      s.terms.push_back({1, of->var, true});
    } else {
      uses(of);
      return unknown(c, "it is assigned a copy of a list whose length may change");
    }
    out_[(size_t)c].sources.push_back(s);
  }

  // e * scale as a sum of fixed ints and lengths, added to s.
  bool linear(const Expr& e, int64_t scale, MadeLengthSource* s, int c) {
    if (scale > (int64_t(1) << 31) || scale < -(int64_t(1) << 31)) return false;
    switch (e->kind) {
      case K::Const:
        if (e->value.kind != ir::ConstValue::Kind::Int || e->value.i > (int64_t(1) << 31) ||
            e->value.i < -(int64_t(1) << 31))
          return false;
        s->constant += scale * e->value.i;
        return true;
      case K::Load: {
        if (e->var < 0) return false;
        const ir::Var& v = n_.vars[(size_t)e->var];
        if (v.assigned || made_.count(e->var) ||
            (v.storage != ir::Var::Storage::Fast && v.storage != ir::Var::Storage::Global &&
             v.storage != ir::Var::Storage::Name && v.storage != ir::Var::Storage::Cell))
          return false;
        s->terms.push_back({scale, e->var, false});
        return true;
      }
      case K::Call:
        if (e->args.size() == 2 && e->kwnames.empty() && is_len(e->args[0]) && fixed(e->args[1])) {
          s->terms.push_back({scale, e->args[1]->var, true});
          out_[(size_t)c].len_callees.push_back(e->args[0]->var);
          return true;
        }
        return false;
      case K::Unary:
        return e->unop == ir::UnOp::Neg && linear(e->args[0], -scale, s, c);
      case K::Binary:
        if (e->binop == ir::BinOp::Add || e->binop == ir::BinOp::Sub)
          return linear(e->args[0], scale, s, c) &&
                 linear(e->args[1], e->binop == ir::BinOp::Add ? scale : -scale, s, c);
        if (e->binop == ir::BinOp::Mul) {
          for (int k = 0; k < 2; k++) {
            const Expr& f = e->args[(size_t)k];
            if (f->kind == K::Const && f->value.kind == ir::ConstValue::Kind::Int && f->value.i >= -(1 << 20) &&
                f->value.i <= (1 << 20))
              return linear(e->args[(size_t)(1 - k)], scale * f->value.i, s, c);
          }
        }
        return false;
      default:
        return false;
    }
  }

  // What `e` does with the made lists it names: subscripts with an index, len(), whole or
  // partial copies (a copy leaves its list as it was) keep their lengths; anything else
  // (a method, a call, a comparison) may change them or let another name do it.
  void uses(const Expr& e) {
    if (!e) return;
    switch (e->kind) {
      case K::Load:
        if (class_of(e->var) >= 0) unknown(class_of(e->var), "it is used other than by index");
        return;
      case K::Subscript:
        if (e->args[0]->kind == K::Load && class_of(e->args[0]->var) >= 0) {
          uses(e->args[1]);
          return;
        }
        break;
      case K::Call:
        if (e->args.size() == 2 && e->kwnames.empty() && is_len(e->args[0]) && e->args[1]->kind == K::Load &&
            class_of(e->args[1]->var) >= 0) {
          out_[(size_t)class_of(e->args[1]->var)].len_callees.push_back(e->args[0]->var);
          return;
        }
        if (e->args.size() == 1 && e->kwnames.empty() && e->args[0]->kind == K::Attr && e->args[0]->name == "copy" &&
            e->args[0]->args[0]->kind == K::Load && class_of(e->args[0]->args[0]->var) >= 0)
          return;
        break;
      default:
        break;
    }
    for (auto& a : e->args) uses(a);
  }
};

}  // namespace

std::vector<MadeListClass> made_list_lengths(const ir::Nest& nest, const std::set<int>& made) {
  return Lengths(nest, made).run();
}

int made_class_of(const std::vector<MadeListClass>& classes, int var) {
  for (size_t c = 0; c < classes.size(); c++)
    for (int v : classes[c].vars)
      if (v == var) return (int)c;
  return -1;
}

}  // namespace stagepy::analysis
