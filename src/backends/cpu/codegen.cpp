// See codegen.h.
#include "backends/cpu/codegen.h"

#include "analysis/append_targets.h"
#include "backends/cpu/append_buffer.h"
#include "backends/cpu/complex_functions.h"
#include "backends/cpu/exits_removed.h"
#include "backends/cpu/jit.h"
#include "backends/cpu/made_lists.h"
#include "backends/cpu/pairwise_sum.h"
#include "backends/cpu/parallel_runtime.h"
#include "backends/cpu/int_functions.h"
#include "backends/cpu/random_draws.h"
#include "backends/cpu/vector_norm.h"
#include "backends/cpu/scratch.h"
#include "backends/cpu/undo_log.h"
#include "backends/cpu/warn_functions.h"
#include "backends/gpu/gpu_runtime.h"
#include "backends/gpu/ptx.h"
#include "ir/mutate.h"
#include "specialize/plan_interleave.h"
#include "support/debug.h"

#include <algorithm>
#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <cfloat>
#include <climits>
#include <cmath>
#include <functional>
#include <array>
#include <map>
#include <optional>
#include <set>

namespace stagepy::backends::cpu {
namespace {

using specialize::FactKind;

using ir::Expr;
using ir::ExprNode;
using ir::Stmt;
using ir::StmtNode;
using llvm::BasicBlock;
using llvm::Value;

struct CodegenError {
  std::string reason;
};

bool is_np(const TypeRef& t) { return t->kind == Type::Kind::NpScalar; }
bool is_pyint(const TypeRef& t) { return t->kind == Type::Kind::PyInt; }
bool is_pybool(const TypeRef& t) { return t->kind == Type::Kind::PyBool; }
bool is_pyfloat(const TypeRef& t) { return t->kind == Type::Kind::PyFloat; }
bool is_float_t(const TypeRef& t) { return is_pyfloat(t) || (is_np(t) && dtype_is_float(t->dtype)); }
bool is_int_t(const TypeRef& t) { return is_pyint(t) || (is_np(t) && dtype_is_int(t->dtype)); }
bool is_bool_t(const TypeRef& t) { return is_pybool(t) || (is_np(t) && t->dtype == DType::Bool); }
bool is_unsigned(const TypeRef& t) { return is_np(t) && dtype_is_int(t->dtype) && !dtype_is_signed(t->dtype); }

// Members of a (uniform) union, or the type itself.
std::vector<TypeRef> members(const TypeRef& t) {
  if (t->kind == Type::Kind::Union) {
    std::vector<TypeRef> out;
    for (auto& e : t->elems)
      if (e->kind != Type::Kind::Unbound) out.push_back(e);
    return out;
  }
  return {t};
}
TypeRef rep(const TypeRef& t) { return members(t)[0]; }
// A union whose members need different machine code: held as 64 bits and a tag, and
// every operation on it dispatches on the tag.
bool hetero(const TypeRef& t) { return t->kind == Type::Kind::Union && !types::uniform(t); }
bool any_np(const TypeRef& t) {
  for (auto& m : members(t))
    if (is_np(m)) return true;
  return false;
}
bool any_py(const TypeRef& t) {
  for (auto& m : members(t))
    if (!is_np(m)) return true;
  return false;
}

// A value during code generation.
struct V {
  TypeRef t;
  Value* v = nullptr;                 // scalar value; array data pointer
  Value* tag = nullptr;               // union member tag (i8)
  Value* header = nullptr;            // a list Type::made: its MadeList's address (i64)
  std::vector<Value*> shape, strides; // array
  Value* offsets = nullptr;           // a ragged list (Type::ragged): where each row starts
                                      // (int64s, in items); shape[1] is then 0
  std::vector<V> elems;               // tuple
};

class Gen {
 public:
  Gen(const specialize::TypedNest& tn, const std::vector<TypeRef>& entry, const specialize::Oracle& oracle,
      const specialize::FactSet& facts, const CodegenOptions& options, llvm::LLVMContext& ctx, const std::string& name)
      : C(ctx), B(ctx), tn_(tn), nest_(tn.nest), entry_(entry), oracle_(oracle), facts_(facts), options_(options),
        name_(name) {}

  Codegen run() {
    Codegen out;
    auto mod = std::make_unique<llvm::Module>(name_, C);
    M = mod.get();
    try {
      build();
      std::string err;
      llvm::raw_string_ostream os(err);
      if (llvm::verifyModule(*M, &os)) {
        os.flush();
        throw CodegenError{"internal error: invalid kernel: " + err.substr(0, 400)};
      }
      out.ok = true;
      out.parallel_loops.assign(parallel_ran_.begin(), parallel_ran_.end());
      out.refused_loops = parallel_refused_;
      out.interleaved_loops = interleaved_;
      out.interchanged_loops.assign(interchanged_.begin(), interchanged_.end());
      out.module = std::move(mod);
      out.function = name_;
      out.layout = layout_;
      if (!gpu_loops_.empty()) {
        out.gpu_module = std::move(gpu_module_);
        out.gpu_info = gpu_info_;
        out.gpu_loops = gpu_loops_;
      }
      out.gpu_refused = gpu_refused_;
    } catch (const CodegenError& e) {
      out.ok = false;
      out.reason = e.reason;
    }
    return out;
  }

 private:
  llvm::LLVMContext& C;
  llvm::Module* M = nullptr;
  llvm::IRBuilder<> B;
  llvm::MDNode* tbaa_data_ = nullptr;    // alias_class's tags, made on first use
  llvm::MDNode* tbaa_header_ = nullptr;
  llvm::Function* F = nullptr;
  const specialize::TypedNest& tn_;
  const ir::Nest& nest_;
  const std::vector<TypeRef>& entry_;
  const specialize::Oracle& oracle_;
  const specialize::FactSet& facts_;  // what the run-time values prove (bounds, overflow, ...)
  const CodegenOptions& options_;
  struct WarnSlots;
  std::vector<WarnSlots> warn_flags_;          // per warning site (FpMode::Deferred)
  llvm::AllocaInst* warn_counter_ = nullptr;   // warnings (kinds per site) seen so far
  std::string name_;
  int op_origin_ = -1;                // bytecode offset of the operation being generated
  llvm::AllocaInst* par_iter_ = nullptr;  // in a parallel loop's body: the iteration running
  int par_bodies_ = 0;
  std::set<int> parallel_ran_;
  std::map<int, std::string> parallel_refused_;  // loop -> why its parallel version was dropped
  std::vector<std::pair<int, llvm::AllocaInst*>> par_counters_;  // (loop, times it ran on threads)
  std::vector<std::vector<uint8_t>> array_overlap_;  // live-in arrays (by id) that share memory  // loops outlined / refused (the body could stop)
  int cur_line_ = 0;                  // line of the statement being generated
  KernelLayout layout_;

  Value* state_ = nullptr;
  std::vector<llvm::AllocaInst*> bits_, tags_;
  struct LoopSlots {
    llvm::AllocaInst *cur = nullptr, *stop = nullptr, *step = nullptr, *trip = nullptr, *start = nullptr;
  };
  std::vector<LoopSlots> loops_;
  BasicBlock* exit_ = nullptr;
  llvm::PHINode* exit_status_ = nullptr;
  int resume_ = -1;
  llvm::AllocaInst* bad_slot_ = nullptr;  // deferred checks of the current statement
  bool deferred_ = false;
  // A nest that draws from the `random` module's generator: its RandomDraws (random_draws.h)
  // in the kernel's function `rng_fn_`. Each statement of its own commits the draws before it
  // (those statements completed); one more of the statements an inlined helper made for one
  // statement does not (they share its resume point: the one before it in its block, or the
  // one it is inside, has it; a while loop of an inlined call's is inside its statement,
  // LoopInfo::statement): `prev_sibling_resume_` and `enclosing_resumes_` tell.
  // One per generator the nest draws from (RandomSource: the random module's, NumPy's).
  std::array<llvm::AllocaInst*, 2> rngs_ = {nullptr, nullptr};
  llvm::Function* rng_fn_ = nullptr;  // null where the nest draws from none
  bool draws_gauss_ = false;  // random.gauss(), np.random.randn(): the twin commits with the draws
  int prev_sibling_resume_ = -1;
  std::vector<int> enclosing_resumes_;
  llvm::Function* main_fn_ = nullptr;  // the kernel's own function (not a loop body outlined)
  // While seg() evaluates a statement's values: the draws made, by the call's bytecode
  // offset. The lifter's copies of one call (the index of `c[randint(1, 6)] += 1`) read the
  // first's (type_infer's draws_once: none under a condition, so the first dominates them).
  std::map<int, V> draw_memo_;
  bool draw_memo_on_ = false;
  struct Targets {
    int loop;
    BasicBlock* cont;
    BasicBlock* brk;
  };
  std::vector<Targets> targets_;
  struct Arr {
    Value* data;
    std::vector<Value*> shape, strides;
    TypeRef t;
    Value* offsets = nullptr;  // V::offsets
  };
  std::vector<Arr> arrays_;
  std::vector<int> array_id_;  // var -> live-in array id, or -1
  // Variables that may hold a list the nest makes (Type::made), and the type of those lists
  // (one per variable).
  std::map<int, TypeRef> made_type_;
  std::map<int, V> tuples_;    // live-in tuples of scalars (read-only in a nest)

  [[noreturn]] void fail(const std::string& why) { throw CodegenError{why}; }

  // ------------------------------------------------------------ LLVM types
  llvm::Type* i1() { return B.getInt1Ty(); }
  llvm::Type* i8() { return B.getInt8Ty(); }
  llvm::Type* i64() { return B.getInt64Ty(); }
  llvm::Type* f64() { return B.getDoubleTy(); }
  llvm::Type* ptr() { return llvm::PointerType::get(C, 0); }
  llvm::Constant* c64(int64_t v) { return llvm::ConstantInt::get(i64(), (uint64_t)v, true); }
  llvm::Constant* c8(int v) { return llvm::ConstantInt::get(i8(), (uint64_t)v); }

  llvm::Type* repr_ty(Repr r) {
    switch (r) {
      case Repr::I1: return i1();
      case Repr::I8: return i8();
      case Repr::I16: return B.getInt16Ty();
      case Repr::I32: return B.getInt32Ty();
      case Repr::I64: return i64();
      case Repr::F32: return B.getFloatTy();
      case Repr::F64: return f64();
      case Repr::None: break;
    }
    fail("internal error: no machine type");
  }
  llvm::Type* ty(const TypeRef& t) { return repr_ty(repr_of(*t)); }
  llvm::Type* mem_ty(DType d) {
    switch (d) {
      case DType::Bool: case DType::Int8: case DType::UInt8: return i8();
      case DType::Int16: case DType::UInt16: return B.getInt16Ty();
      case DType::Int32: case DType::UInt32: return B.getInt32Ty();
      case DType::Int64: case DType::UInt64: return i64();
      case DType::Float32: return B.getFloatTy();
      case DType::Float64: return f64();
      case DType::Complex64: case DType::Complex128: break;  // read and written by part
    }
    fail("internal error: a complex element as one value");
  }

  int tag_of(const TypeRef& t) {
    int k = tn_.tag_of(t);
    if (k < 0) fail("internal error: no tag for " + t->str());
    return k;
  }

  // ------------------------------------------------------------ slots
  Value* to_bits(const V& x) {
    if (x.t->kind == Type::Kind::Array) fail("internal error: array bits");
    Value* v = x.v;
    llvm::Type* t = v->getType();
    if (t->isDoubleTy()) return B.CreateBitCast(v, i64());
    if (t->isFloatTy()) return B.CreateZExt(B.CreateBitCast(v, B.getInt32Ty()), i64());
    if (t->getIntegerBitWidth() == 64) return v;
    return B.CreateZExt(v, i64());
  }
  // A scalar as a state slot holds it: its value bits and its type tag (i8).
  struct Tagged {
    Value* bits;
    Value* tag;
  };
  Tagged tagged(const V& x) {
    return {hetero(x.t) ? x.v : to_bits(x), x.tag ? x.tag : c8(tag_of(x.t))};
  }
  Value* from_bits(Value* bits, const TypeRef& t) {
    llvm::Type* target = ty(t);
    if (target->isDoubleTy()) return B.CreateBitCast(bits, f64());
    if (target->isFloatTy()) return B.CreateBitCast(B.CreateTrunc(bits, B.getInt32Ty()), target);
    if (target->getIntegerBitWidth() == 64) return bits;
    return B.CreateTrunc(bits, target);
  }

  // ------------------------------------------------------------ bailing out
  // Every way out of the kernel goes through one block that writes the state back and
  // returns the status (0: done; k: CPython resumes at resume point k - 1).
  void exit_with(Value* status) {
    exit_status_->addIncoming(status, B.GetInsertBlock());
    B.CreateBr(exit_);
  }
  // Continues only where `ok` holds; elsewhere CPython takes over at the current statement.
  // `what`: what the check is for, where checking_ does not say (deferred checks).
  void bail_unless(Value* ok, const std::string& what = "") {
    if (resume_ < 0) fail("internal error: a check outside any statement");
    if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(ok)) {
      if (c->isOne()) return;
    }
    count_bail(what);
    BasicBlock* cont = BasicBlock::Create(C, "ok", F);
    exit_status_->addIncoming(B.getInt32(resume_ + 1), B.GetInsertBlock());
    auto* br = B.CreateCondBr(ok, cont, exit_);
    // Checks fail rarely: tell the optimizer.
    llvm::MDBuilder md(C);
    br->setMetadata(llvm::LLVMContext::MD_prof, md.createBranchWeights(1u << 20, 1));
    B.SetInsertPoint(cont);
  }
  // A check of a value that NumPy refuses (a Python int that does not fit the NumPy type it
  // meets), whose failure leaves nothing unsafe behind: in a chunk's fast pass it only marks
  // the chunk (mark_fast_bad), whose exact re-run then stops for CPython at the iteration
  // where it fails, so that the fast pass has no way out (a loop-invariant `a` in
  // `y[k] + a * x[k]` over int32 or float32 kept the loop out of chunks); elsewhere a bail.
  void value_check(Value* ok) {
    if (warn_gen_ == WarnGen::Fast) {
      if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(ok); c && c->isOne()) return;
      mark_fast_bad(B.CreateNot(ok));
      return;
    }
    bail_unless(ok);
  }
  // A check whose failure does not make the code that follows unsafe (a float that came
  // out infinite, an integer that wrapped): folded into the statement's single check,
  // made before any of its effects.
  void defer(Value* ok) {
    if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(ok)) {
      if (c->isOne()) return;
    }
    if (spec_bad_) {
      // A speculative body (parallel_loop): the failure only voids the threads' run, so
      // it is one flag for the whole run, tested where it ends, without a branch here.
      B.CreateStore(B.CreateOr(B.CreateLoad(i1(), spec_bad_), B.CreateNot(ok)), spec_bad_);
      soft_checks_++;
      return;
    }
    Value* bad = B.CreateLoad(i1(), bad_slot_);
    B.CreateStore(B.CreateOr(bad, B.CreateNot(ok)), bad_slot_);
    deferred_ = true;
    if (checking_) deferred_whats_.insert(checking_);
  }
  void flush_deferred() {
    if (!deferred_) return;
    deferred_ = false;
    std::string whats;
    for (auto& w : deferred_whats_) whats += (whats.empty() ? "" : ", or ") + w;
    deferred_whats_.clear();
    Value* bad = B.CreateLoad(i1(), bad_slot_);
    B.CreateStore(B.getFalse(), bad_slot_);
    bail_unless(B.CreateNot(bad), whats);
  }
  // ------------------------------------------------------------ NumPy warnings
  // How the operation being generated treats NumPy's warnings (see FpMode):
  //   Normal:   per options_.fp; in Deferred mode a non-finite result branches to a cold
  //             block that works out exactly which warnings the operation raised;
  //   Fast:     the fast pass of a speculative chunk (chunked_loop): only whether anything
  //             may have warned, as one flag, without branches;
  //   Classify: the re-run of a chunk whose fast pass set that flag: exact flags, as in
  //             Normal, in loops LLVM is told not to vectorize or unroll (they rarely
  //             run, and would otherwise cost compile time at every copy).
  enum class WarnGen : uint8_t { Normal, Fast, Classify };
  WarnGen warn_gen_ = WarnGen::Normal;
  llvm::AllocaInst* fast_bad_ = nullptr;   // Fast: anything non-finite or wrapped
  bool vector_int_checks_ = false;         // wrapping_op: checks the vectorizer takes
  // Per bail site generated so far: its statement's resume point and what the check is for
  // (the report's words for a loop a remaining check keeps sequential).
  std::vector<std::pair<int, std::string>> bail_notes_;
  const char* checking_ = nullptr;         // what the checks being generated are for
  std::set<std::string> deferred_whats_;   // what the statement's deferred checks are for
  struct Checking {  // sets checking_ for a scope
    Checking(Gen* g, const char* what) : g(g), old(g->checking_) { g->checking_ = what; }
    ~Checking() { g->checking_ = old; }
    Gen* g;
    const char* old;
  };
  int bails_emitted() const { return (int)bail_notes_.size(); }
  void count_bail(const std::string& what = "") {
    bail_notes_.emplace_back(resume_, what.empty() && checking_ ? std::string(checking_) : what);
  }
  void reset_bails(int n) { bail_notes_.resize((size_t)n); }
  // Where the checks behind `statuses` (a parallel body's remaining ways out: resume + 1)
  // are, in a user's words: "line 11 (an index may be out of range)".
  std::string checks_at(const std::set<int>& statuses, int from) const {
    std::string out;
    for (int st : statuses) {
      const int r = st - 1;
      if (r < 0 || (size_t)r >= nest_.resumes.size()) continue;
      std::set<std::string> whats;
      for (size_t k = (size_t)from; k < bail_notes_.size(); k++)
        if (bail_notes_[k].first == r && !bail_notes_[k].second.empty()) whats.insert(bail_notes_[k].second);
      std::string w;
      for (auto& x : whats) w += (w.empty() ? "" : ", or ") + x;
      const std::string here = "line " + std::to_string(nest_.resumes[(size_t)r].line) + (w.empty() ? "" : " (" + w + ")");
      if (out.find(here) == std::string::npos) out += (out.empty() ? "" : "; ") + here;
    }
    return out;
  }
  std::array<TypeRef, 2> warn_operands_;   // of the NumPy operation being generated
  // Variables known to be non-zero in the code being generated (a parallel body whose
  // loop checked its invariant divisors first), and whether the current operation's
  // divisor is one of them.
  std::set<int> nonzero_vars_;
  // Python ints a parallel body's loop checked to fit these NumPy types before it ran on
  // threads (LoopPlan::invariant_operands), and whether the current operation's operands are
  // such variables: numpy_operand needs no check for them.
  std::set<std::pair<int, DType>> fitting_vars_;
  std::array<bool, 2> operands_fit_{};
  std::set<const ir::ExprNode*> reassoc_ops_;  // float reduction updates in a parallel body
  // Checked integer sums' updates in a speculative parallel body (Reduction::checked): an
  // overflow there stops for CPython (making the threads' run void) rather than warning.
  std::set<const ir::ExprNode*> exact_ops_;
  // Python int counter updates in a parallel body (Reduction::counter): the loop runs there
  // only where they cannot leave 64 bits, so they are plain adds.
  std::set<const ir::ExprNode*> counter_ops_;
  bool counter_now_ = false;
  // Updates of a checked NumPy integer sum (sign_tracked) in a parallel body, and the slot
  // where the part notes the signs of what they added: 1, a negative amount; 2, a positive one.
  std::map<const ir::ExprNode*, std::pair<llvm::AllocaInst*, int>> sign_ops_;  // (slot, variable)
  bool exact_now_ = false;  // generating one of them, or the combination of checked parts
  bool elementwise_ = false;  // generating the elements of an operation on arrays (elements_of)
  int next_slot_ = 0;         // scratch buffers (scratch.h): one per site that computes arrays
  std::map<const ExprNode*, V> elem_vals_;  // there: the operands' values for one element
  int par_loop_ = -1;                           // the loop a parallel body runs
  bool divisor_nonzero_ = false;
  bool in_domain_ = false;  // the call being generated cannot fail its domain check (prove_domains.h)

  // A warning site: which warnings it raised so far (bits), and for each kind the place
  // of its first occurrence among all the kernel's warnings (so they are emitted in the
  // order CPython would have raised them).
  struct WarnSlots {
    llvm::AllocaInst* bits;
    llvm::AllocaInst* first[3];
  };
  WarnSlots new_warn_site(const char* op, DType d) {
    llvm::IRBuilder<> entry(&F->getEntryBlock(), F->getEntryBlock().begin());
    WarnSlots w{entry.CreateAlloca(i8(), nullptr, std::string("warn.") + op), {}};
    entry.CreateStore(c8(0), w.bits);
    // In a parallel loop's body: the first iteration of the loop it occurred in.
    for (auto& f : w.first) {
      f = entry.CreateAlloca(i64(), nullptr, "warn.first");
      entry.CreateStore(c64(par_iter_ ? INT64_MAX : 0), f);
    }
    if (!warn_counter_) {
      warn_counter_ = entry.CreateAlloca(i64(), nullptr, "warn.count");
      entry.CreateStore(c64(0), warn_counter_);
    }
    warn_flags_.push_back(w);
    WarnSite ws;
    ws.op = op;
    ws.dtype = d;
    ws.lhs = warn_operands_[0] ? warn_operands_[0]->str() : "";
    ws.rhs = warn_operands_[1] ? warn_operands_[1]->str() : "";
    ws.line = options_.line_of ? options_.line_of(op_origin_) : 0;
    if (ws.line <= 0) ws.line = cur_line_;
    layout_.warn_sites.push_back(ws);
    return w;
  }
  // Whether no check deferred so far in this statement failed. One that did (a division
  // by zero of Python floats, say) hands the statement to CPython, which raises there: an
  // operation after it in the statement never ran in CPython, so it must not warn.
  Value* statement_goes_on() {
    if (!deferred_) return B.getTrue();
    return B.CreateNot(B.CreateLoad(i1(), bad_slot_));
  }
  // Records at site `w` the kinds that occurred (each an i1, or null for a kind the
  // operation cannot raise): out of line (warn_functions.h), behind a branch taken only
  // when one did.
  void or_flags(const WarnSlots& w, Value* divide, Value* overflow, Value* invalid) {
    Value* kinds = c8(0);
    Value* kv[3] = {divide, overflow, invalid};  // NumPy reports them in this order
    for (int k = 0; k < 3; k++)
      if (kv[k]) kinds = B.CreateOr(kinds, B.CreateShl(B.CreateZExt(kv[k], i8()), k));
    BasicBlock* rec = BasicBlock::Create(C, "warn.record", F);
    BasicBlock* cont = BasicBlock::Create(C, "warn.cont", F);
    cold_branch(B.CreateAnd(B.CreateICmpNE(kinds, c8(0)), statement_goes_on()), rec, cont);
    B.SetInsertPoint(rec);
    B.CreateCall(warn_record_function(*F->getParent()),
                 {kinds, w.bits, w.first[0], w.first[1], w.first[2], warn_counter_, warn_place()});
    B.CreateBr(cont);
    B.SetInsertPoint(cont);
  }
  // Where a new warning goes among the kernel's: by count; in a parallel body a key,
  // iteration * warn_key_stride(sites) + count, whose count (this call's warnings so far,
  // fewer than the stride) orders warnings first seen in the same iteration, as those
  // always come from one thread (warn_functions.h); in a GPU body spreading an inner loop
  // over lanes, the iteration is the outer one's times 2^28 plus the inner one's (at most
  // 2^28 - 1: a bound the launch checks the outer range against).
  Value* warn_place() {
    if (!par_iter_) return c64(kWarnPlaceCount);
    return B.CreateMul(B.CreateLoad(i64(), gpu_warn_iter_ ? gpu_warn_iter_ : par_iter_), warn_stride_);
  }
  static constexpr int64_t kLaneKeyBits = 28;
  static int64_t warn_key_stride(size_t sites) { return 3 * (int64_t)sites + 1; }
  llvm::AllocaInst* gpu_warn_iter_ = nullptr;  // GPU body with lanes: the iteration part of the key
  llvm::Instruction* warn_stride_ = nullptr;  // parallel body: 3 * its warning sites + 1 (patched at its end)
  // A branch to `cold` when `cond` holds, which it almost never does.
  void cold_branch(Value* cond, BasicBlock* cold, BasicBlock* cont) {
    auto* br = B.CreateCondBr(cond, cold, cont);
    llvm::MDBuilder md(C);
    br->setMetadata(llvm::LLVMContext::MD_prof, md.createBranchWeights(1, 1u << 20));
  }
  void mark_fast_bad(Value* bad) {
    B.CreateStore(B.CreateOr(B.CreateLoad(i1(), fast_bad_), bad), fast_bad_);
    if (held_) {  // (chunked_loop: a chunk whose stores wait for the iteration's flag)
      if (held_->stores) held_->marked_after_store = true;
      B.CreateStore(B.CreateOr(B.CreateLoad(i1(), held_->iter_bad), bad), held_->iter_bad);
    }
  }

  // How the current operation treats NumPy's warnings. An operation of an inlined helper
  // never defers them: the warning belongs to the helper's line, so the statement that
  // called the helper goes back to CPython, which calls the helper and warns there.
  FpMode fp_mode() const {
    if (exact_now_) return FpMode::Exact;
    // The elements of an operation on arrays: NumPy's array operations warn as its scalars
    // do, but with their own messages, once per operation: where one may warn, the
    // statement goes to CPython (nothing is stored before every element is computed).
    if (elementwise_) return options_.fp == FpMode::Ignore ? FpMode::Ignore : FpMode::Exact;
    // An inlined helper's operation warns at the helper's line: deferred only where that
    // line is known (an operation numbered for the analysis, whose line dispatch.cpp gives).
    if (options_.fp == FpMode::Deferred && ir::is_inlined_origin(op_origin_) &&
        (op_origin_ == ir::kInlinedOrigin || !options_.line_of || options_.line_of(op_origin_) <= 0))
      return FpMode::Exact;
    return options_.fp;
  }

  // A NumPy operation that overflowed (`overflow`: an integer one that wrapped, a cast to
  // float32 that made a finite number infinite) makes NumPy warn.
  void np_overflow_warning(const char* op, DType d, Value* overflow) {
    if (warn_gen_ == WarnGen::Fast) return mark_fast_bad(overflow);
    switch (fp_mode()) {
      case FpMode::Ignore: return;
      case FpMode::Exact: defer(B.CreateNot(overflow)); return;
      case FpMode::Deferred: or_flags(new_warn_site(op, d), nullptr, overflow, nullptr); return;
    }
  }

  // The warnings of a NumPy float operation x op y = r: NumPy reports the IEEE flags the
  // operation raised, which these formulas reproduce from the values. Every one of them
  // needs a non-finite result, so that is the (cheap) test before the exact one.
  void np_float_warning(const char* op, Value* x, Value* y, Value* r, DType d) {
    if (warn_gen_ == WarnGen::Fast) {
      if (!absorbed_.count(cur_node_)) mark_fast_bad(B.CreateNot(isfinite(r)));
      return;
    }
    if (fp_mode() == FpMode::Exact) return defer(isfinite(r));
    if (fp_mode() == FpMode::Ignore) return;
    // Every warning needs a non-finite result: that is the test; the classification is
    // out of line (warn_functions.h).
    WarnSlots slot = new_warn_site(op, d);
    BasicBlock* cold = BasicBlock::Create(C, "warn.classify", F);
    BasicBlock* cont = BasicBlock::Create(C, "warn.cont", F);
    cold_branch(B.CreateAnd(B.CreateNot(isfinite(r)), statement_goes_on()), cold, cont);
    B.SetInsertPoint(cold);
    auto wide = [&](Value* v) { return v->getType()->isDoubleTy() ? v : B.CreateFPExt(v, B.getDoubleTy()); };
    B.CreateCall(fp_warn_function(*F->getParent()),
                 {wide(x), wide(y), wide(r),
                  c8(std::string(op) == "divide" ? kFpWarnDivide : std::string(op) == "power" ? kFpWarnPower : kFpWarnOther),
                  slot.bits, slot.first[0],
                  slot.first[1], slot.first[2], warn_counter_, warn_place()});
    B.CreateBr(cont);
    B.SetInsertPoint(cont);
  }

  // The warnings of a NumPy complex + - * / (ComplexWarn, recorded after its statement:
  // lower_complex.h). Every one needs a part of the result that is not finite; which ones
  // arose is worked out out of line from the operands (warn_functions.h).
  void complex_warnings(const Expr& e) {
    if (warn_gen_ == WarnGen::Fast && (e->binop == ir::BinOp::Add || e->binop == ir::BinOp::Sub) &&
        e->args[0]->kind == ExprNode::Kind::Load && fast_sums_.count(e->args[0]->var) &&
        e->args[1]->kind == ExprNode::Kind::Load && fast_sums_.count(e->args[1]->var))
      return;  // a complex sum's parts, tested where the chunk's fast pass ends
    std::vector<Value*> x;
    for (auto& a : e->args) x.push_back(as_double(gen(a)));
    Value* finite = B.CreateAnd(isfinite(x[0]), isfinite(x[1]));
    if (x.size() > 6) finite = B.CreateAnd(finite, isfinite(x[6]));  // a division's scaled divisor
    if (warn_gen_ == WarnGen::Fast) return mark_fast_bad(B.CreateNot(finite));
    op_origin_ = e->origin;
    switch (fp_mode()) {
      case FpMode::Ignore: return;
      case FpMode::Exact: fail("internal error: a complex operation's exact warnings after its statement");
      case FpMode::Deferred: break;
    }
    const bool add = e->binop == ir::BinOp::Add, sub = e->binop == ir::BinOp::Sub, div = e->binop == ir::BinOp::TrueDiv;
    const bool single = e->name == "complex64";
    warn_operands_ = {};
    WarnSlots slot = new_warn_site(add ? "add" : sub ? "subtract" : div ? "divide" : "multiply",
                                   single ? DType::Complex64 : DType::Complex128);
    layout_.warn_sites.back().lhs = e->kwnames.at(0);
    layout_.warn_sites.back().rhs = e->kwnames.at(1);
    BasicBlock* cold = BasicBlock::Create(C, "warn.classify", F);
    BasicBlock* cont = BasicBlock::Create(C, "warn.cont", F);
    cold_branch(B.CreateAnd(B.CreateNot(finite), statement_goes_on()), cold, cont);
    B.SetInsertPoint(cold);
    const int op = add ? kComplexWarnAdd : sub ? kComplexWarnSubtract : div ? kComplexWarnDivide : kComplexWarnMultiply;
    B.CreateCall(complex_warn_function(*F->getParent()),
                 {c8(op), c8(single ? 1 : 0), x[2], x[3], x[4], x[5], slot.bits, slot.first[0], slot.first[1],
                  slot.first[2], warn_counter_, warn_place()});
    B.CreateBr(cont);
    B.SetInsertPoint(cont);
  }

  // Fast mode: the NumPy float operations whose results feed another such operation
  // (other than as a divisor) need no test of their own: +, -, * and a dividend carry an
  // infinity or a NaN on to the result, so testing the outermost result is enough.
  std::set<const ExprNode*> absorbed_;
  const ExprNode* cur_node_ = nullptr;
  static bool np_float_arith(const Expr& e) {
    if (!e || !e->type || e->type->kind != Type::Kind::NpScalar || !dtype_is_float(e->type->dtype)) return false;
    if (e->kind != ExprNode::Kind::Binary) return false;
    using O = ir::BinOp;
    return e->binop == O::Add || e->binop == O::Sub || e->binop == O::Mul || e->binop == O::TrueDiv;
  }
  // Fast mode, across iterations: the float variables a body only ever updates as sums
  // (`v = v + e`, `v = e + v`, `v = v - e`; a NumPy float, or a part of a complex one).
  // An infinity or a NaN in a sum stays (inf + x is inf or NaN, NaN + x is NaN), so "some
  // iteration's v was not finite" is "v is not finite where the chunk's fast pass ends":
  // tested there once (chunked_loop) instead of in every iteration, which kept the
  // vectorizer from splitting a parallel body's sum (reassoc_ops_; the only ones taken).
  // Their updates are absorbed.
  // Also a part of a NumPy complex64 sum, `v = round32(v + e)` (lower_complex) where e is a
  // float32 number held in a double (float32_exact): that is float32's addition of v and e.
  //
  // A sum of float32 numbers (np.float32, or such a complex64 part) also has a float
  // variable of its own during the fast pass (fast32_): its slot holds i64 bits, and LLVM
  // does not turn a loop-carried i64 into a float through a truncation, so without it the
  // additions stayed one serial chain the vectorizer could not split (an np.float32 dot
  // product on two threads ran at 0.6x numba's prange). Loaded from the slot where the
  // chunk starts (fast_init_), stored to both at each update.
  std::map<int, TypeRef> fast_sums_;  // variable -> its type (its slot holds that float's bits)
  std::map<int, llvm::AllocaInst*> fast32_;
  BasicBlock* fast_init_ = nullptr;
  // Whether `e`'s value is a float32 number (held in a double where its type is a Python
  // float): a float32 rounding, a part of a complex64 value, an np.float32, or a variable
  // of lower_complex's (a Temp) whose every assignment is one of those.
  bool float32_exact(const Expr& e, int depth = 0) const {
    if (!e || !e->type || depth > 6) return false;
    if (e->type->kind == Type::Kind::NpScalar && e->type->dtype == DType::Float32) return true;
    if (ir::is_round32(e)) return true;
    if (e->kind == ExprNode::Kind::Attr && (e->name == "real" || e->name == "imag") && e->args[0]->type &&
        e->args[0]->type->kind == Type::Kind::NpScalar && e->args[0]->type->dtype == DType::Complex64)
      return true;
    if (e->kind == ExprNode::Kind::Const && e->value.kind == ir::ConstValue::Kind::Float) {
      const double f = e->value.f;
      return f != f || std::isinf(f) || (std::fabs(f) <= FLT_MAX && (double)(float)f == f);
    }
    // (A Temp is assigned in its statement before it is read: no value from outside.)
    if (e->kind != ExprNode::Kind::Load || nest_.vars[(size_t)e->var].storage != ir::Var::Storage::Temp) return false;
    bool all = true, any = false;
    ir::for_each_stmt(nest_.root, [&](const Stmt& x) {
      for (auto& f : x->effects)
        if (f.kind == ir::Effect::Kind::Assign && f.var == e->var) {
          any = true;
          all = all && float32_exact(f.value, depth + 1);
        }
    });
    return any && all;
  }
  // The sums of `body` (their updates, `v + e`); `rounded`: those of the round32 form.
  std::map<int, std::vector<const ExprNode*>> carried_sums(const Stmt& body, std::set<int>* rounded = nullptr) const {
    std::map<int, std::vector<const ExprNode*>> sums;
    std::set<int> other, round;
    ir::for_each_stmt(body, [&](const Stmt& x) {
      for (auto& f : x->effects) {
        if (f.kind != ir::Effect::Kind::Assign) continue;
        const Expr* ep = &f.value;
        const bool r32 = ir::is_round32(f.value) && nest_.vars[(size_t)f.var].storage == ir::Var::Storage::Part;
        if (r32) ep = &f.value->args[1];
        const Expr& e = *ep;
        auto self = [&](size_t k) { return e->args[k]->kind == ExprNode::Kind::Load && e->args[k]->var == f.var; };
        const bool fl = e->type && ((e->type->kind == Type::Kind::NpScalar &&
                                     (e->type->dtype == DType::Float64 || e->type->dtype == DType::Float32)) ||
                                    e->type->kind == Type::Kind::PyFloat);
        bool sum = fl && e->kind == ExprNode::Kind::Binary &&
                   ((e->binop == ir::BinOp::Add && (self(0) || self(1))) || (e->binop == ir::BinOp::Sub && self(0)));
        if (sum && r32) sum = e->type->kind == Type::Kind::PyFloat && float32_exact(e->args[self(0) ? 1 : 0]);
        // (One type throughout, the variable's own: its slot holds that float's bits.)
        const Expr& load = sum ? e->args[self(0) ? 0 : 1] : e;
        if (sum && types::same(load->type, e->type) && (sums[f.var].empty() || types::same(sums[f.var][0]->type, e->type))) {
          sums[f.var].push_back(r32 ? f.value.get() : e.get());  // (as plan_parallel's Reduction::updates)
          if (r32) round.insert(f.var);
        } else {
          other.insert(f.var);
        }
      }
    });
    for (int v : other) sums.erase(v);
    // A variable is a float32 sum throughout or not at all.
    for (int v : round)
      if (sums.count(v))
        ir::for_each_stmt(body, [&](const Stmt& x) {
          for (auto& f : x->effects)
            if (f.kind == ir::Effect::Kind::Assign && f.var == v && f.value->kind != ExprNode::Kind::Call) sums.erase(v);
        });
    if (rounded)
      for (int v : round)
        if (sums.count(v)) rounded->insert(v);
    return sums;
  }
  // round32(v + e), round32(e + v) or round32(v - e) of a float32 sum v in the fast pass
  // (fast32_), e a float32 number held in a double: float32's own operation on v and e,
  // which is what rounding the double's result gives (with 53 >= 2 * 24 + 2 bits, rounding
  // twice is rounding once for + and -; overflow, infinities and NaNs alike); nullptr for
  // anything else.
  Value* fast32_update(const Expr& round32) {
    const Expr& x = round32->args[1];
    if (warn_gen_ != WarnGen::Fast || fast32_.empty() || x->kind != ExprNode::Kind::Binary ||
        (x->binop != ir::BinOp::Add && x->binop != ir::BinOp::Sub))
      return nullptr;
    const int self = x->args[0]->kind == ExprNode::Kind::Load && fast32_.count(x->args[0]->var) ? 0
                     : x->binop == ir::BinOp::Add && x->args[1]->kind == ExprNode::Kind::Load &&
                               fast32_.count(x->args[1]->var)
                         ? 1
                         : -1;
    if (self < 0 || !float32_exact(x->args[(size_t)(1 - self)])) return nullptr;
    Value* v = B.CreateLoad(B.getFloatTy(), fast32_.at(x->args[(size_t)self]->var));
    Value* e = B.CreateFPTrunc(as_double(gen(x->args[(size_t)(1 - self)])), B.getFloatTy());
    llvm::IRBuilderBase::FastMathFlagGuard fmf(B);
    if (reassoc_ops_.count(round32.get())) {
      llvm::FastMathFlags fl = B.getFastMathFlags();
      fl.setAllowReassoc();
      B.setFastMathFlags(fl);
    }
    if (x->binop == ir::BinOp::Sub) return B.CreateFSub(v, e);
    return self == 0 ? B.CreateFAdd(v, e) : B.CreateFAdd(e, v);
  }
  // A variable's float32 value in the fast pass (fast32_), as a double where it is a Python float.
  V fast32_load(int var, const TypeRef& t) {
    Value* f = B.CreateLoad(B.getFloatTy(), fast32_.at(var));
    return scalar(t, t->kind == Type::Kind::PyFloat ? B.CreateFPExt(f, f64()) : f);
  }

  // Whether operand k of e passes an infinity or a NaN on to e's value (as an infinity or
  // a NaN): both operands of +, - and *, and a dividend.
  static bool passes_nonfinite(const Expr& e, size_t k) {
    using O = ir::BinOp;
    if (e->kind != ExprNode::Kind::Binary) return false;
    return e->binop == O::Add || e->binop == O::Sub || e->binop == O::Mul || (e->binop == O::TrueDiv && k == 0);
  }
  void note_absorbed(const Expr& e) {
    if (!e) return;
    if (np_float_arith(e))
      for (size_t k = 0; k < e->args.size(); k++)
        if (passes_nonfinite(e, k) && np_float_arith(e->args[k])) absorbed_.insert(e->args[k].get());
    for (auto& a : e->args) note_absorbed(a);
  }

  void bail_now(const std::string& what = "") {
    if (resume_ < 0) fail("internal error: a bail outside any statement");
    count_bail(what);
    exit_with(B.getInt32(resume_ + 1));
    B.SetInsertPoint(BasicBlock::Create(C, "dead", F));
  }

  void write_state() {
    for (size_t v = 0; v < nest_.vars.size(); v++) {
      int slot = layout_.var_slot[v];
      if (slot < 0) continue;
      B.CreateStore(B.CreateLoad(i64(), bits_[v]), B.CreateConstGEP1_64(i64(), state_, slot));
      B.CreateStore(B.CreateZExt(B.CreateLoad(i8(), tags_[v]), i64()), B.CreateConstGEP1_64(i64(), state_, slot + 1));
    }
    for (size_t l = 0; l < loops_.size(); l++) {
      int slot = layout_.loop_slot[l];
      if (slot < 0) continue;
      B.CreateStore(B.CreateLoad(i64(), loops_[l].cur), B.CreateConstGEP1_64(i64(), state_, slot));
      B.CreateStore(B.CreateLoad(i64(), loops_[l].stop), B.CreateConstGEP1_64(i64(), state_, slot + 1));
      B.CreateStore(B.CreateLoad(i64(), loops_[l].step), B.CreateConstGEP1_64(i64(), state_, slot + 2));
    }
  }

  // ------------------------------------------------------------ setup
  static bool has_value(const TypeRef& t) {
    if (!t || t->is_complex()) return false;  // complex values enter as their parts
    switch (t->kind) {
      case Type::Kind::PyBool: case Type::Kind::PyInt: case Type::Kind::PyFloat: case Type::Kind::NpScalar:
      case Type::Kind::Array: case Type::Kind::Appended:
        return true;
      default:
        return false;
    }
  }

  void build() {
    const size_t nv = nest_.vars.size();
    // The loops outlined to run in parallel: those planned parallel that no other such loop
    // encloses (with a GPU, plan_parallel also plans the loop inside one, for the 2-D grid;
    // the host copies of the outer loop keep that one sequential).
    if (options_.plan) {
      std::function<void(const Stmt&, bool)> outer = [&](const Stmt& x, bool inside) {
        if (x->kind == StmtNode::Kind::For && !inside && options_.plan->loops[(size_t)x->loop].parallel) {
          outer_parallel_.insert(x->loop);
          inside = true;
        }
        for (auto& b : x->body) outer(b, inside);
      };
      outer(nest_.root, false);
    }
    if (options_.gpu) {
      gpu_candidates_ = outer_parallel_;
      gpu_mode_ = !gpu_candidates_.empty();
    }
    // Parameters.
    std::vector<llvm::Type*> params = {ptr()};
    array_id_.assign(nv, -1);
    for (size_t v = 0; v < nv; v++) {
      const TypeRef& t = v < entry_.size() ? entry_[v] : nullptr;
      if (!nest_.vars[v].read || !t) continue;
      if (t->kind == Type::Kind::Tuple) {
        for (size_t k = 0; k < t->elems.size(); k++) {
          if (!t->elems[k]->is_scalar()) fail("`" + nest_.vars[v].name + "` holds a tuple of " + t->elems[k]->str());
          Repr r = repr_of(*t->elems[k]);
          layout_.params.push_back({KernelParam::Kind::TupleItem, (int)v, r, (int)k});
          params.push_back(r == Repr::I1 ? i8() : repr_ty(r));
        }
        continue;
      }
      if (!has_value(t)) continue;
      if (t->kind == Type::Kind::Array) {
        array_id_[v] = (int)layout_.arrays.size();
        layout_.arrays.push_back((int)v);
        layout_.params.push_back({KernelParam::Kind::Data, (int)v, Repr::None, 0});
        params.push_back(ptr());
        for (int d = 0; d < t->ndim; d++) {
          layout_.params.push_back({KernelParam::Kind::Shape, (int)v, Repr::I64, d});
          params.push_back(i64());
        }
        for (int d = 0; d < t->ndim; d++) {
          layout_.params.push_back({KernelParam::Kind::Stride, (int)v, Repr::I64, d});
          params.push_back(i64());
        }
        if (t->ragged) {
          layout_.params.push_back({KernelParam::Kind::RowOffsets, (int)v, Repr::None, 0});
          params.push_back(ptr());
        }
      } else {
        Repr r = repr_of(*t);
        // Booleans cross the boundary as bytes.
        layout_.params.push_back({KernelParam::Kind::Scalar, (int)v, r, 0});
        params.push_back(r == Repr::I1 ? i8() : repr_ty(r));
      }
    }
    {
      auto& m = array_overlap_;
      m.assign(layout_.arrays.size(), std::vector<uint8_t>(layout_.arrays.size(), 0));
      for (auto& [a, b] : options_.overlapping_vars)
        if (array_id_[(size_t)a] >= 0 && array_id_[(size_t)b] >= 0) {
          m[(size_t)array_id_[(size_t)a]][(size_t)array_id_[(size_t)b]] = 1;
          m[(size_t)array_id_[(size_t)b]][(size_t)array_id_[(size_t)a]] = 1;
        }
    }
    auto* fty = llvm::FunctionType::get(B.getInt32Ty(), params, false);
    F = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, name_, M);
    F->addFnAttr(llvm::Attribute::NoUnwind);
    BasicBlock* entry_bb = BasicBlock::Create(C, "entry", F);
    B.SetInsertPoint(entry_bb);
    auto arg = F->arg_begin();
    state_ = &*arg++;
    // State layout.
    layout_.var_slot.assign(nv, -1);
    int slot = 0;
    for (size_t v = 0; v < nv; v++)
      if (nest_.vars[v].assigned) {
        layout_.var_slot[v] = slot;
        slot += 2;
      }
    layout_.loop_slot.assign(nest_.loops.size(), -1);
    for (size_t l = 0; l < nest_.loops.size(); l++)
      if (nest_.loops[l].is_for) {
        layout_.loop_slot[l] = slot;
        slot += 3;
      }
    layout_.slots = slot;
    // Variable slots.
    bits_.resize(nv);
    tags_.resize(nv);
    for (size_t v = 0; v < nv; v++) {
      bits_[v] = B.CreateAlloca(i64(), nullptr, nest_.vars[v].name);
      tags_[v] = B.CreateAlloca(i8(), nullptr, nest_.vars[v].name + ".tag");
      B.CreateStore(c64(0), bits_[v]);
      B.CreateStore(c8(0), tags_[v]);
    }
    // Variables that may hold a list the nest makes (their values: MadeList addresses).
    {
      for (size_t v = 0; v < nv; v++)
        if (v < entry_.size() && entry_[v] && entry_[v]->made) made_type_[(int)v] = entry_[v];
      ir::for_each_stmt(nest_.root, [&](const Stmt& x) {
        for (auto& f : x->effects)
          if (f.kind == ir::Effect::Kind::Assign && f.value && f.value->type && f.value->type->made)
            made_type_[f.var] = f.value->type;
      });
    }
    bad_slot_ = B.CreateAlloca(i1(), nullptr, "bad");
    B.CreateStore(B.getFalse(), bad_slot_);
    loops_.resize(nest_.loops.size());
    for (size_t l = 0; l < nest_.loops.size(); l++) {
      auto& s = loops_[l];
      s.cur = B.CreateAlloca(i64(), nullptr, "L" + std::to_string(l) + ".cur");
      s.stop = B.CreateAlloca(i64(), nullptr, "L" + std::to_string(l) + ".stop");
      s.step = B.CreateAlloca(i64(), nullptr, "L" + std::to_string(l) + ".step");
      s.trip = B.CreateAlloca(i64(), nullptr, "L" + std::to_string(l) + ".trip");
      s.start = B.CreateAlloca(i64(), nullptr, "L" + std::to_string(l) + ".start");
      for (auto* a : {s.cur, s.stop, s.step, s.trip, s.start}) B.CreateStore(c64(0), a);
    }
    // Live-in values.
    size_t p = 0;
    while (p < layout_.params.size()) {
      const KernelParam& kp = layout_.params[p];
      int v = kp.var;
      const TypeRef& t = entry_[v];
      if (kp.kind == KernelParam::Kind::TupleItem) {
        V tv;
        tv.t = t;
        for (size_t k = 0; k < t->elems.size(); k++, p++) {
          Value* x = &*arg++;
          if (layout_.params[p].repr == Repr::I1) x = B.CreateICmpNE(x, c8(0));
          tv.elems.push_back(scalar(t->elems[k], x));
        }
        tuples_[v] = tv;
        continue;
      }
      if (kp.kind == KernelParam::Kind::Data) {
        Arr a;
        a.t = t;
        a.data = &*arg++;
        p++;
        for (int d = 0; d < t->ndim; d++, p++) a.shape.push_back(&*arg++);
        for (int d = 0; d < t->ndim; d++, p++) a.strides.push_back(&*arg++);
        if (t->ragged) {
          ragged_layout(a, &*arg++);
          p++;
        }
        fix_strides(a);
        B.CreateStore(c64(array_id_[v]), bits_[v]);
        if (t->made) {  // held by a header, as the lists the nest makes are (made_lists.h)
          auto* fty = llvm::FunctionType::get(ptr(), {ptr(), i64(), i64(), i64()}, false);
          const int64_t kind = (int64_t)t->dtype | (t->tagged ? 256 : 0);
          Value* h = B.CreateCall(fty, runtime_address("stagepy_list_wrap", reinterpret_cast<void*>(&stagepy_list_wrap)),
                                  {a.data, a.shape[0], c64(array_id_[v]), c64(kind)});
          B.CreateStore(B.CreatePtrToInt(h, i64()), bits_[v]);
        }
        arrays_.push_back(a);
      } else {
        Value* x = &*arg++;
        p++;
        if (kp.repr == Repr::I1) x = B.CreateICmpNE(x, c8(0));
        V val;
        val.t = t;
        val.v = x;
        B.CreateStore(to_bits(val), bits_[v]);
      }
      int tg = tn_.tag_of(t);
      B.CreateStore(c8(tg < 0 ? 0 : tg), tags_[v]);
    }
    // None at entry is passed as nothing: its tag says so (`best is None` of a variable
    // that may hold None or a float reads it).
    for (size_t v = 0; v < nv && v < entry_.size(); v++)
      if (entry_[v] && entry_[v]->kind == Type::Kind::None)
        if (const int tg = tn_.tag_of(entry_[v]); tg > 0) B.CreateStore(c8(tg), tags_[v]);
    // A complex value at entry lives in its part variables (lower_complex); the variable
    // keeps its type tag.
    for (size_t v = 0; v < nv && v < entry_.size(); v++)
      if (entry_[v] && entry_[v]->is_complex() && nest_.vars[v].assigned) {
        int tg = tn_.tag_of(entry_[v]);
        B.CreateStore(c8(tg < 0 ? 0 : tg), tags_[v]);
      }
    // The exit block.
    exit_ = BasicBlock::Create(C, "exit", F);
    B.SetInsertPoint(exit_);
    exit_status_ = B.CreatePHI(B.getInt32Ty(), 4, "status");
    write_state();
    B.CreateRet(exit_status_);
    // Body.
    B.SetInsertPoint(entry_bb);
    if (ir::draws_random(nest_.root)) begin_draws(ir::draws_gauss(nest_.root), ir::random_sources(nest_.root));
    main_fn_ = F;
    if (std::any_of(nest_.resumes.begin(), nest_.resumes.end(), [](const ir::ResumePoint& r) { return r.logged; }))
      begin_statement_log();
    BasicBlock* body = BasicBlock::Create(C, "body", F);
    B.CreateBr(body);
    B.SetInsertPoint(body);
    stmt(nest_.root);
    if (!B.GetInsertBlock()->getTerminator()) exit_with(B.getInt32(0));
    if (stmt_log_) {  // every way out: the stores of a statement CPython runs again are undone
      B.SetInsertPoint(exit_->getTerminator());
      B.CreateStore(B.CreatePtrToInt(B.CreateLoad(ptr(), stmt_log_->cur), i64()), stmt_log_->slots);
      auto* fty = llvm::FunctionType::get(B.getVoidTy(), {ptr(), B.getInt32Ty()}, false);
      B.CreateCall(fty, runtime_address("stagepy_undo_statement", reinterpret_cast<void*>(&stagepy_undo_statement)),
                   {stmt_log_->slots, exit_status_});
    }
    for (llvm::AllocaInst* r : rngs_)  // every way out: the draws of a statement CPython runs again are undone
      if (r) {
        B.SetInsertPoint(exit_->getTerminator());
        auto* fty = llvm::FunctionType::get(B.getVoidTy(), {ptr(), B.getInt32Ty()}, false);
        B.CreateCall(fty, runtime_address("stagepy_random_end", reinterpret_cast<void*>(&stagepy_random_end)),
                     {r, exit_status_});
      }
    // The warning sites' flags go to the state on every way out.
    if (!warn_flags_.empty()) {
      layout_.warn_slot = layout_.slots;
      layout_.slots += 3 * (int)warn_flags_.size();
      B.SetInsertPoint(exit_->getTerminator());
      for (size_t k = 0; k < warn_flags_.size(); k++)
        for (int j = 0; j < 3; j++)
          B.CreateStore(B.CreateLoad(i64(), warn_flags_[k].first[j]),
                        B.CreateConstGEP1_64(i64(), state_, layout_.warn_slot + 3 * (int64_t)k + j));
    }
    // How many times each parallel loop ran on threads.
    if (!par_counters_.empty()) {
      B.SetInsertPoint(exit_->getTerminator());
      for (auto& [loop, counter] : par_counters_) {
        layout_.parallel_runs.push_back({loop, layout_.slots});
        B.CreateStore(B.CreateLoad(i64(), counter), B.CreateConstGEP1_64(i64(), state_, layout_.slots++));
      }
    }
    // Unreachable leftovers.
    for (auto& bb : *F)
      if (!bb.getTerminator()) {
        B.SetInsertPoint(&bb);
        B.CreateUnreachable();
      }
  }

  // A ragged list (Type::ragged): its rows one after another, row i from item offsets[i] to
  // offsets[i + 1]; no one row length (shape[1] is 0: only ragged_row reads a row).
  void ragged_layout(Arr& a, Value* offsets) {
    a.offsets = offsets;
    a.shape[1] = c64(0);
    a.strides = {c64(0), c64(item_bytes(*a.t))};
  }

  // A contiguous layout (part of the guard key) fixes the strides: the element size along
  // the fastest dimension, products of extents beyond. (Extent-1 dimensions may carry any
  // stride in NumPy, but only index 0 is valid there.) Constant unit strides are what lets
  // the vectorizer see consecutive elements.
  void fix_strides(Arr& a) {
    if (a.t->layout == Type::CContig || a.t->layout == Type::FContig)
      a.strides = contiguous_strides(a, a.t->layout == Type::FContig);
  }
  // The strides of a contiguous array of a's extents and dtype: C order, or Fortran order.
  std::vector<Value*> contiguous_strides(const Arr& a, bool fortran) {
    const int n = a.t->ndim;
    std::vector<Value*> st((size_t)n);
    Value* item = c64(item_bytes(*a.t));
    if (fortran) {
      for (int d = 0; d < n; d++) st[(size_t)d] = d == 0 ? item : B.CreateNSWMul(st[(size_t)d - 1], a.shape[(size_t)d - 1]);
    } else {
      for (int d = n - 1; d >= 0; d--)
        st[(size_t)d] = d == n - 1 ? item : B.CreateNSWMul(st[(size_t)d + 1], a.shape[(size_t)d + 1]);
    }
    return st;
  }

  // ------------------------------------------------------------ conversions
  V scalar(const TypeRef& t, Value* v, Value* tag = nullptr) {
    V x;
    x.t = t;
    x.v = v;
    x.tag = tag;
    return x;
  }

  Value* as_i64_int(const V& x) {  // integer-valued scalar -> i64 (value preserved or bail)
    if (hetero(x.t)) return per_member(x, [&](const V& y) { return as_i64_int(y); });
    TypeRef m = rep(x.t);
    if (is_pyint(m)) return x.v;
    if (is_bool_t(m)) return B.CreateZExt(x.v, i64());
    if (is_np(m) && dtype_is_int(m->dtype)) {
      if (dtype_size(m->dtype) == 8) {
        if (!dtype_is_signed(m->dtype)) bail_unless(B.CreateICmpSGE(x.v, c64(0)));
        return x.v;
      }
      return dtype_is_signed(m->dtype) ? B.CreateSExt(x.v, i64()) : B.CreateZExt(x.v, i64());
    }
    fail("internal error: not an integer: " + x.t->str());
  }

  Value* as_double(const V& x) {  // real scalar -> double, as float() would
    if (hetero(x.t)) return per_member(x, [&](const V& y) { return as_double(y); });
    TypeRef m = rep(x.t);
    if (is_pyfloat(m) || (is_np(m) && m->dtype == DType::Float64)) return x.v;
    if (is_np(m) && m->dtype == DType::Float32) return B.CreateFPExt(x.v, f64());
    if (is_bool_t(m)) return B.CreateUIToFP(x.v, f64());
    if (is_unsigned(m)) return B.CreateUIToFP(x.v, f64());
    if (is_int_t(m)) return B.CreateSIToFP(x.v, f64());
    fail("internal error: not a real: " + x.t->str());
  }

  Value* isfinite(Value* f) {
    Value* a = B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, f);
    return B.CreateFCmpOLT(a, llvm::ConstantFP::getInfinity(f->getType()));
  }
  Value* isnan(Value* f) { return B.CreateFCmpUNO(f, f); }

  // Integer range of a NumPy integer dtype as i64 bounds (uint64's upper bound is not
  // representable: callers handle it).
  std::pair<int64_t, int64_t> int_range(DType d) {
    switch (d) {
      case DType::Int8: return {-128, 127};
      case DType::Int16: return {-32768, 32767};
      case DType::Int32: return {INT32_MIN, INT32_MAX};
      case DType::Int64: return {INT64_MIN, INT64_MAX};
      case DType::UInt8: return {0, 255};
      case DType::UInt16: return {0, 65535};
      case DType::UInt32: return {0, 4294967295LL};
      case DType::UInt64: return {0, INT64_MAX};
      default: return {0, 1};
    }
  }

  // Whether the integer `v` (i64: a Python int, or any integer widened) fits integer dtype
  // `d` (NumPy raises where not), or is within 2**24 of zero (float32: beyond, the result of
  // a Python int may depend on the rounding path).
  Value* int_fits(Value* v, DType d) {
    auto [lo, hi] = int_range(d);
    if (lo == INT64_MIN && hi == INT64_MAX) return B.getTrue();
    if (d == DType::UInt64) return B.CreateICmpSGE(v, c64(0));
    return B.CreateAnd(B.CreateICmpSGE(v, c64(lo)), B.CreateICmpSLE(v, c64(hi)));
  }
  Value* int_fits_float32(Value* v) {
    return B.CreateNot(B.CreateOr(B.CreateICmpSGT(v, c64(1 << 24)), B.CreateICmpSLT(v, c64(-(1 << 24)))));
  }
  Value* fits_numpy_type(Value* v, DType d) { return d == DType::Float32 ? int_fits_float32(v) : int_fits(v, d); }

  // Converts operand `x` to the NumPy scalar type `to` as NumPy does before computing:
  // Python scalars are "weak" (a Python int must fit the type), NumPy scalars are cast.
  Value* numpy_operand(const V& x, const TypeRef& to, bool fits = false) {
    Checking checking(this, "a Python number may not fit a NumPy type");
    if (hetero(x.t)) return per_member(x, [&](const V& y) { return numpy_operand(y, to, fits); });
    TypeRef m = rep(x.t);
    DType d = to->dtype;
    llvm::Type* t = ty(to);
    if (d == DType::Bool) {
      if (is_bool_t(m)) return x.v;
      fail("internal error: operand for a bool operation");
    }
    if (dtype_is_float(d)) {
      if (is_pyint(m)) {
        if (d == DType::Float32 && !fits) {  // only where the result cannot depend on the rounding path
          value_check(int_fits_float32(x.v));
        }
        return B.CreateSIToFP(x.v, t);
      }
      if (is_pyfloat(m) || (is_np(m) && dtype_is_float(m->dtype))) {
        Value* f = x.v;
        if (f->getType() == t) return f;
        if (t->isFloatTy()) return cast_to_float32(f);
        return B.CreateFPExt(f, t);
      }
      if (is_bool_t(m) || is_unsigned(m)) return B.CreateUIToFP(x.v, t);
      if (is_int_t(m)) return B.CreateSIToFP(x.v, t);
    } else {  // integer dtype
      if (is_pyint(m) && !fits) value_check(int_fits(x.v, d));
      if (is_pyint(m)) {
        return B.CreateTrunc(x.v, t);
      }
      if (is_bool_t(m)) return B.CreateZExt(x.v, t);
      if (is_np(m) && dtype_is_int(m->dtype)) {
        unsigned from = x.v->getType()->getIntegerBitWidth(), to_w = t->getIntegerBitWidth();
        if (from == to_w) return x.v;
        if (from > to_w) return B.CreateTrunc(x.v, t);  // promotion never narrows
        return dtype_is_signed(m->dtype) ? B.CreateSExt(x.v, t) : B.CreateZExt(x.v, t);
      }
    }
    fail("internal error: operand " + x.t->str() + " for " + to->str());
  }

  // ------------------------------------------------------------ union tags
  // Every combination of the members of the operands' (possibly union) types, first
  // operand outermost.
  static std::vector<std::vector<TypeRef>> member_combos(const std::vector<V>& ops) {
    std::vector<std::vector<TypeRef>> combos = {{}};
    for (auto& o : ops) {
      std::vector<std::vector<TypeRef>> next;
      for (auto& c : combos)
        for (auto& m : members(o.t)) {
          auto d = c;
          d.push_back(m);
          next.push_back(std::move(d));
        }
      combos = std::move(next);
    }
    return combos;
  }

  // The result tag of an operation on (possibly union) operands, given the result type
  // of each combination of members.
  Value* result_tag(const std::vector<V>& ops, const TypeRef& result,
                    const std::function<TypeRef(const std::vector<TypeRef>&)>& f) {
    if (result->kind != Type::Kind::Union) return nullptr;
    const std::vector<std::vector<TypeRef>> combos = member_combos(ops);
    Value* tag = c8(tag_of(f(combos[0])));
    for (size_t k = 1; k < combos.size(); k++) {
      Value* match = B.getTrue();
      for (size_t i = 0; i < ops.size(); i++) {
        Value* ot = operand_tag(ops[i]);
        match = B.CreateAnd(match, B.CreateICmpEQ(ot, c8(tag_of(combos[k][i]))));
      }
      tag = B.CreateSelect(match, c8(tag_of(f(combos[k]))), tag);
    }
    return tag;
  }
  Value* operand_tag(const V& x) {
    if (x.tag) return x.tag;
    int t = tn_.tag_of(x.t);
    return c8(t < 0 ? 0 : t);
  }

  // ------------------------------------------------------------ tagged unions
  // `x` as the value of union type `to` (bits and tag for a mixed union; value and tag for
  // float | np.float64 or bool | np.bool_).
  V coerce_to(const V& x, const TypeRef& to) {
    if (to->kind != Type::Kind::Union) return x;
    if (hetero(to)) {
      if (hetero(x.t)) {
        V y = x;
        y.t = to;
        return y;
      }
      V y;
      y.t = to;
      const Tagged tb = tagged(x);
      y.v = tb.bits;
      y.tag = tb.tag;
      return y;
    }
    return coerce_union(x, to);
  }

  // Runs `f` once per combination of the members of the mixed-union values among `args`
  // (each as a plain value of that member's type) and merges the results as type `rt`.
  // Where `rt` is itself a mixed union, a uniform union among `args` is split too: its
  // members share a machine value but may give results that do not (float | np.float64
  // plus an np.float32 is an np.float32 or an np.float64).
  V dispatch(const std::vector<V>& args, const TypeRef& rt, const std::function<V(const std::vector<V>&)>& f) {
    auto split = [&](const V& a) { return hetero(a.t) || (a.t->kind == Type::Kind::Union && hetero(rt)); };
    bool any = false;
    for (auto& a : args) any = any || split(a);
    if (!any) return f(args);
    std::vector<std::vector<V>> combos = {{}};
    for (auto& a : args) {
      std::vector<std::vector<V>> next;
      for (auto& c : combos) {
        if (!split(a)) {
          auto d = c;
          d.push_back(a);
          next.push_back(d);
          continue;
        }
        for (auto& m : members(a.t)) {
          auto d = c;
          V x;
          x.t = m;
          x.v = a.v;       // bits (mixed union) or the shared value; converted in the combination's block
          x.tag = a.tag;   // the union's tag, to test against
          d.push_back(x);
          next.push_back(d);
        }
      }
      combos = next;
    }
    BasicBlock* merge = BasicBlock::Create(C, "union.merge", F);
    std::vector<std::pair<BasicBlock*, V>> results;
    for (size_t k = 0; k < combos.size(); k++) {
      BasicBlock* body = BasicBlock::Create(C, "union.case", F);
      BasicBlock* next = k + 1 < combos.size() ? BasicBlock::Create(C, "union.test", F) : nullptr;
      if (next) {
        Value* match = B.getTrue();
        for (size_t i = 0; i < args.size(); i++)
          if (split(args[i]))
            match = B.CreateAnd(match, B.CreateICmpEQ(operand_tag(args[i]), c8(tag_of(combos[k][i].t))));
        B.CreateCondBr(match, body, next);
      } else {
        B.CreateBr(body);
      }
      B.SetInsertPoint(body);
      std::vector<V> concrete;
      for (size_t i = 0; i < args.size(); i++) {
        if (!split(args[i])) {
          concrete.push_back(args[i]);
        } else if (combos[k][i].t->kind == Type::Kind::None) {  // (no value: None is None)
          V none;
          none.t = combos[k][i].t;
          concrete.push_back(none);
        } else if (hetero(args[i].t)) {
          concrete.push_back(scalar(combos[k][i].t, from_bits(args[i].v, combos[k][i].t)));
        } else {
          concrete.push_back(scalar(combos[k][i].t, args[i].v));
        }
      }
      V r = coerce_to(f(concrete), rt);
      results.push_back({B.GetInsertBlock(), r});
      B.CreateBr(merge);
      if (next) B.SetInsertPoint(next);
    }
    B.SetInsertPoint(merge);
    V out;
    out.t = rt;
    if (results[0].second.v) {
      auto* phi = B.CreatePHI(results[0].second.v->getType(), (unsigned)results.size());
      for (auto& [bb, r] : results) phi->addIncoming(r.v, bb);
      out.v = phi;
    }
    if (results[0].second.tag) {
      auto* phi = B.CreatePHI(i8(), (unsigned)results.size());
      for (auto& [bb, r] : results) phi->addIncoming(r.tag ? r.tag : c8(tag_of(r.t)), bb);
      out.tag = phi;
    }
    return out;
  }

  // The result type of `f` over the members of its (possibly union) operands.
  TypeRef over_members(const std::vector<V>& args, const std::function<TypeRef(const std::vector<TypeRef>&)>& f) {
    const std::vector<std::vector<TypeRef>> combos = member_combos(args);
    std::vector<TypeRef> rs;
    for (auto& c : combos) {
      TypeRef r = f(c);
      if (!r) fail("internal error: no result type for a union operand");
      rs.push_back(r);
    }
    return types::join(rs);
  }

  // One value per member of a mixed-union `x` (scalar results of one LLVM type).
  Value* per_member(const V& x, const std::function<Value*(const V&)>& f) {
    if (!hetero(x.t)) return f(x);
    V r = dispatch({x}, types::py_int(), [&](const std::vector<V>& a) {
      V y;
      y.t = types::py_int();  // any non-union type: only .v is merged
      y.v = f(a[0]);
      return y;
    });
    return r.v;
  }

  // ------------------------------------------------------------ expressions
  // Appends an item to the list whose buffer is at address `buf` (append_buffer.h): a
  // number (its tag and bits), a tuple of numbers, or a list the nest appends to or makes
  // (kListItem and its buffer's address).
  void append_item(Value* buf_addr, const V& item) {
    Value* buf = B.CreateIntToPtr(buf_addr, ptr());
    if (item.t->kind == Type::Kind::Tuple) {
      const size_t n = item.elems.size();
      llvm::IRBuilder<> entry(&F->getEntryBlock(), F->getEntryBlock().begin());
      Value* pairs = entry.CreateAlloca(i64(), c64((int64_t)(2 * std::max<size_t>(n, 1))), "tuple.items");
      for (size_t k = 0; k < n; k++) {
        const Tagged tb = tagged(item.elems[k]);
        B.CreateStore(B.CreateZExt(tb.tag, i64()), B.CreateConstGEP1_64(i64(), pairs, 2 * k));
        B.CreateStore(tb.bits, B.CreateConstGEP1_64(i64(), pairs, 2 * k + 1));
      }
      auto* fty = llvm::FunctionType::get(B.getVoidTy(), {ptr(), i64(), ptr()}, false);
      B.CreateCall(fty, runtime_address("stagepy_list_append_tuple", reinterpret_cast<void*>(&stagepy_list_append_tuple)),
                   {buf, c64((int64_t)n), pairs});
      return;
    }
    Value* tag;
    Value* bits;
    if (item.t->kind == Type::Kind::Appended) {
      tag = c64((int64_t)AppendBuffer::kListItem);
      bits = item.v;
    } else if (item.t->kind == Type::Kind::Array && item.t->made) {
      // A list made and read: the list appended to holds it now, whatever the variables do.
      if (!item.header) fail("internal error: a list without its header");
      alias_class(B.CreateStore(c64(1), B.CreateConstGEP1_64(i8(), B.CreateIntToPtr(item.header, ptr()), offsetof(MadeList, pinned))), true);
      tag = c64((int64_t)AppendBuffer::kMadeItem);
      bits = item.header;
    } else {
      const Tagged tb = tagged(item);
      tag = B.CreateZExt(tb.tag, i64());
      bits = tb.bits;
    }
    auto* fty = llvm::FunctionType::get(B.getVoidTy(), {ptr(), i64(), i64()}, false);
    B.CreateCall(fty, runtime_address("stagepy_list_append", reinterpret_cast<void*>(&stagepy_list_append)), {buf, tag, bits});
  }

  // What an array or list of type `lt` holds for the value `x` given to it (a store, an
  // append): its bits as the dtype's, and for a tagged list the item's tag in *tag. A list
  // keeps the objects it is given: a value of another type than its items' would make it one
  // kernels cannot hold, so CPython takes the statement (type inference lets through only
  // such values that may not come: a check where `x` may be one, else a bail and nullptr).
  // `exact_column`: a column of a table whose elements share x's type (Type::columns), whose
  // tag is a constant.
  Value* stored_item(V x, const Type& lt, Value** tag, bool exact_column = false) {
    if (lt.tagged) {
      if (gpu_body_ && !exact_column) gpu_refuse("it stores into a list whose elements' types vary (ints, floats, NumPy floats)");
      *tag = element_tag(x, lt);
      if (lt.tags & kTagsBits) return hetero(x.t) ? x.v : to_bits(x);  // an int's, a bool's or a double's bits, as the tag says
      return hetero(x.t) ? from_bits(x.v, types::py_float()) : as_double(x);
    }
    if (const TypeRef item = lt.pylist ? types::list_elem(lt) : nullptr; item && !types::same(x.t, item)) {
      bool member = false;
      for (auto& m : members(x.t)) member = member || types::same(m, item);
      if (!member) {
        bail_unless(B.getFalse());
        return nullptr;
      }
      Checking checking(this, "a list may get an element of another type");
      bail_unless(B.CreateICmpEQ(operand_tag(x), c8(tag_of(item))));
      x = scalar(item, hetero(x.t) ? from_bits(x.v, item) : x.v);
    }
    return to_dtype(x, lt.dtype);
  }

  // L.append(x) / L.pop() of a list held by a header (Type::made; type_infer's resize), alone
  // in its statement: the value is computed here, with the statement's other values (a pop
  // of an empty list goes to CPython); the list changes with the statement's effects
  // (change_length), after every check that may hand the statement to CPython.
  struct PendingResize {
    Value* header = nullptr;  // ptr
    Value* new_len = nullptr;  // a pop: the length after it
    Value* gap = nullptr;      // pop(k): k, whose item goes (the items after it move down)
    Value* data = nullptr;
    Value* stored = nullptr;   // an append: the item as the list holds it, and its tag
    Value* tag = nullptr;
    DType d = DType::Int64;
    int64_t item_bytes = 8;
  };
  std::optional<PendingResize> pending_resize_;
  V resize_list(const Expr& e, Builtin f) {
    if (gpu_body_) gpu_refuse("it changes the length of a list");
    V list = gen(e->args[1]);
    if (list.t->kind == Type::Kind::Unbound) return undef_of(types::unbound());
    if (!list.header) fail("internal error: a list without its header");
    const Type& lt = *list.t;
    const DType d = lt.dtype;
    Value* h = B.CreateIntToPtr(list.header, ptr());
    if (f == Builtin::ListPop) {
      Value* n = list.shape[0];
      Value* last = B.CreateSub(n, c64(1));
      Value* at = last;
      if (e->args.size() == 3) {  // L.pop(k): k counts from the end where negative
        V k = gen(e->args[2]);
        if (k.t->kind == Type::Kind::Unbound) return undef_of(types::unbound());
        at = as_i64_int(k);
        at = B.CreateSelect(B.CreateICmpSLT(at, c64(0)), B.CreateAdd(at, n), at);
      }
      {
        Checking checking(this, "a list may be empty, or the index out of range");
        bail_unless(B.CreateAnd(B.CreateICmpSGE(at, c64(0)), B.CreateICmpSLT(at, n)));
      }
      V item = subscript(list, scalar(types::py_int(), at), e->type, e->origin, true);
      PendingResize r;
      r.header = h;
      r.new_len = last;
      if (e->args.size() == 3) {
        r.gap = at;
        r.data = list.v;
        r.item_bytes = item_bytes(lt);
      }
      pending_resize_ = r;
      return item;
    }
    V x = gen(e->args[2]);
    if (x.t->kind == Type::Kind::Unbound) return undef_of(types::unbound());
    Value* tag = nullptr;
    Value* stored = stored_item(x, lt, &tag);
    if (!stored) return undef_of(types::unbound());
    PendingResize r;
    r.header = h;
    r.stored = stored;
    r.tag = tag;
    r.d = d;
    r.item_bytes = item_bytes(lt);
    pending_resize_ = r;
    return undef_of(types::none());
  }
  // The change of length resize_list computed, with the statement's effects: an append gets
  // its item's place from the runtime (stagepy_list_grow, made_lists.h), which moves the
  // items where they do not fit; memory that cannot be had hands the statement to CPython
  // (the list unchanged).
  void change_length() {
    if (!pending_resize_) return;
    const PendingResize r = *pending_resize_;
    pending_resize_.reset();
    if (r.new_len) {
      if (r.gap) {
        Value* to = B.CreateGEP(i8(), r.data, B.CreateMul(r.gap, c64(r.item_bytes)));
        Value* from = B.CreateGEP(i8(), to, c64(r.item_bytes));
        Value* bytes = B.CreateMul(B.CreateSub(r.new_len, r.gap), c64(r.item_bytes));
        B.CreateMemMove(to, llvm::MaybeAlign(1), from, llvm::MaybeAlign(1), bytes);
      }
      alias_class(B.CreateStore(r.new_len, B.CreateConstGEP1_64(i8(), r.header, offsetof(MadeList, len))), true);
      return;
    }
    // Where the item fits (`bytes` counts the room its memory has), in place; else the call.
    auto field = [&](size_t offset) { return B.CreateConstGEP1_64(i8(), r.header, (int64_t)offset); };
    Value* len = alias_class(B.CreateLoad(i64(), field(offsetof(MadeList, len))), true);
    Value* room = alias_class(B.CreateLoad(i64(), field(offsetof(MadeList, bytes))), true);
    Value* fits = B.CreateICmpSLE(B.CreateMul(B.CreateAdd(len, c64(1)), c64(r.item_bytes)), room);
    BasicBlock* in_place = BasicBlock::Create(C, "grow.fits", F);
    BasicBlock* call = BasicBlock::Create(C, "grow.call", F);
    BasicBlock* done = BasicBlock::Create(C, "grow.done", F);
    B.CreateCondBr(fits, in_place, call, llvm::MDBuilder(C).createBranchWeights(1000, 1));
    B.SetInsertPoint(in_place);
    Value* data = alias_class(B.CreateLoad(ptr(), field(offsetof(MadeList, data))), true);
    Value* here = B.CreateGEP(i8(), data, B.CreateMul(len, c64(r.item_bytes)));
    alias_class(B.CreateStore(B.CreateAdd(len, c64(1)), field(offsetof(MadeList, len))), true);
    B.CreateBr(done);
    BasicBlock* in_place_end = B.GetInsertBlock();
    B.SetInsertPoint(call);
    auto* fty = llvm::FunctionType::get(ptr(), {ptr(), i64()}, false);
    Value* moved = B.CreateCall(fty, runtime_address("stagepy_list_grow", reinterpret_cast<void*>(&stagepy_list_grow)),
                                {r.header, c64(r.item_bytes)});
    {
      Checking checking(this, "a list may not fit in memory");
      bail_unless(B.CreateICmpNE(moved, llvm::ConstantPointerNull::get(llvm::PointerType::get(C, 0))));
    }
    B.CreateBr(done);
    BasicBlock* call_end = B.GetInsertBlock();
    B.SetInsertPoint(done);
    llvm::PHINode* slot = B.CreatePHI(ptr(), 2, "grow.slot");
    slot->addIncoming(here, in_place_end);
    slot->addIncoming(moved, call_end);
    store_item(r.d, r.stored, slot);
    if (r.tag) store_data(r.tag, B.CreateConstGEP1_64(i8(), slot, 8), 8);
  }

  // The list whose MadeList header is at `header` (an i64): its items, contiguous.
  V made_list_value(const TypeRef& t, Value* header) {
    if (gpu_body_) gpu_refuse("it reads or writes a list it makes");
    Value* h = B.CreateIntToPtr(header, ptr());
    V x;
    x.t = t;
    x.header = header;
    x.v = alias_class(B.CreateLoad(ptr(), B.CreateConstGEP1_64(i8(), h, offsetof(MadeList, data))), true);
    x.shape = {alias_class(B.CreateLoad(i64(), B.CreateConstGEP1_64(i8(), h, offsetof(MadeList, len))), true)};
    x.strides = {c64(item_bytes(*t))};
    return x;
  }

  // A list the nest makes (type_infer's made_list: "repeat", "copy" or a display): memory
  // from the call's MadeLists (made_lists.h), which reuses that of a list no variable that
  // may hold one holds now; then its items. Without the memory the statement goes to CPython.
  V make_list(const Expr& e) {
    if (gpu_body_) gpu_refuse("it makes a list");
    Checking checking(this, "a new list may not fit in memory");
    const DType d = e->type->dtype;
    const int ib = item_bytes(*e->type);
    V item, src;
    std::vector<V> items;
    Value *n = nullptr, *start = nullptr, *step = nullptr;
    if (e->name == "repeat") {
      item = gen(e->args[0]);
      V count = gen(e->args[1]);
      if (item.t->kind == Type::Kind::Unbound || count.t->kind == Type::Kind::Unbound) return undef_of(types::unbound());
      n = as_i64_int(count);
      n = B.CreateSelect(B.CreateICmpSLT(n, c64(0)), c64(0), n);  // [x] * -1 == []
    } else if (e->name == "copy") {
      src = gen(e->args[0]);
      V sl = gen(e->args[1]);
      if (src.t->kind == Type::Kind::Unbound || sl.t->kind == Type::Kind::Unbound) return undef_of(types::unbound());
      std::tie(start, n, step) = slice_indices(sl, src.shape[0]);
    } else {
      for (const Expr& a : e->args) {
        items.push_back(gen(a));
        if (items.back().t->kind == Type::Kind::Unbound) return undef_of(types::unbound());
      }
      n = c64((int64_t)items.size());
    }
    const int64_t k = (int64_t)made_type_.size();
    llvm::IRBuilder<> entry(&F->getEntryBlock(), F->getEntryBlock().begin());
    Value* live = entry.CreateAlloca(i64(), c64(std::max<int64_t>(k, 1)), "made.live");
    int64_t j = 0;
    for (auto& [v, t] : made_type_)
      B.CreateStore(B.CreateLoad(i64(), bits_[(size_t)v]), B.CreateGEP(i64(), live, c64(j++)));
    auto* fty = llvm::FunctionType::get(ptr(), {i64(), i64(), i64(), ptr(), i64()}, false);
    const int64_t kind = (int64_t)d | (e->type->tagged ? 256 : 0);
    Value* h = B.CreateCall(fty, runtime_address("stagepy_list_make", reinterpret_cast<void*>(&stagepy_list_make)),
                            {n, c64(ib), c64(kind), live, c64(k)});
    bail_unless(B.CreateICmpNE(h, llvm::ConstantPointerNull::get(llvm::PointerType::get(C, 0))));
    V x = made_list_value(e->type, B.CreatePtrToInt(h, i64()));
    // Item k: its value (a tagged list's: then its tag, a float's unless copied).
    const bool tagged = e->type->tagged;
    auto put = [&](Value* k, Value* value, Value* tag) {
      Value* at = B.CreateGEP(i8(), x.v, B.CreateMul(k, c64(ib)));
      store_item(d, value, at);
      if (tagged) B.CreateStore(tag ? tag : c64(kTagFloat), B.CreateConstGEP1_64(i8(), at, 8));
    };
    if (e->name == "repeat") {
      Value* v = to_dtype(item, d);
      section_loops({n}, [&](const std::vector<Value*>&, Value* lin) { put(lin, v, nullptr); });
    } else if (e->name == "copy") {
      Value* sstride = B.CreateMul(step, src.strides[0]);
      Value* first = B.CreateGEP(i8(), src.v, B.CreateMul(start, src.strides[0]));
      section_loops({n}, [&](const std::vector<Value*>&, Value* lin) {
        Value* from = B.CreateGEP(i8(), first, B.CreateMul(lin, sstride));
        Value* tag = src.t->tagged ? B.CreateLoad(i64(), B.CreateConstGEP1_64(i8(), from, 8)) : nullptr;
        put(lin, load_item(d, from), tag);
      });
    } else {
      for (size_t j = 0; j < items.size(); j++) put(c64((int64_t)j), to_dtype(items[j], d), nullptr);
    }
    return x;
  }

  // `[a, b]`: a new buffer (the dispatcher makes the list of it), then its items.
  V new_list(const Expr& e) {
    if (e->type->made) return make_list(e);
    if (gpu_body_) gpu_refuse("it makes a list");
    std::vector<V> items;
    for (const Expr& a : e->args) items.push_back(gen(a));
    auto* fty = llvm::FunctionType::get(ptr(), {}, false);
    V x;
    x.t = e->type;
    x.v = B.CreatePtrToInt(B.CreateCall(fty, runtime_address("stagepy_list_new", reinterpret_cast<void*>(&stagepy_list_new)), {}), i64());
    for (const V& item : items) append_item(x.v, item);
    return x;
  }

  V gen(const Expr& e) {
    using K = ExprNode::Kind;
    if (e->type->kind == Type::Kind::Unbound) {
      bail_now();
      V x;
      x.t = e->type;
      return x;
    }
    if (!elem_vals_.empty()) {  // an operand of an elementwise operation (elements_of)
      auto it = elem_vals_.find(e.get());
      if (it != elem_vals_.end()) return it->second;
    }
    if (e->type->temp) fail("internal error: an operation on arrays outside a store");
    switch (e->kind) {
      case K::Slice: {
        V x;
        x.t = e->type;
        for (auto& a : e->args) x.elems.push_back(gen(a));
        return x;
      }
      case K::NewList: return new_list(e);
      case K::Const: return constant(e);
      case K::Load: return load(e->var, e->type, e->check_bound);
      case K::Attr: {
        if (e->pseudo >= 0 && entry_[e->args[0]->var] &&
            (entry_[e->args[0]->var]->kind == Type::Kind::Module || entry_[e->args[0]->var]->kind == Type::Kind::Object))
          return load(e->pseudo, e->type, false);
        if ((e->name == "real" || e->name == "imag") && e->args[0]->kind == K::Subscript &&
            e->args[0]->type->is_complex())
          return complex_part(e->args[0], e->name == "imag");
        V obj = gen(e->args[0]);
        if (e->loop_sequence && (e->name == "flat" || e->name == "ravel()") && obj.t->kind == Type::Kind::Array) {
          // `A.flat`, `A.ravel()` a loop iterates: A's C-contiguous memory as one dimension
          // (type_infer's flat_view). The GPU would need A copied there under another name.
          if (gpu_body_) gpu_refuse("it loops over a flat view of an array");
          V x;
          x.t = e->type;
          x.v = obj.v;
          Value* n = c64(1);
          for (Value* d : obj.shape) n = B.CreateMul(n, d);
          x.shape = {n};
          x.strides = {c64(dtype_size(obj.t->dtype))};
          return x;
        }
        if ((e->name == "real" || e->name == "imag") && obj.t->is_scalar() && !obj.t->is_complex()) {
          // A real number's: itself and a zero of its type (a Python bool's are ints).
          bool imag = e->name == "imag";
          return dispatch({obj}, e->type, [&](const std::vector<V>& a) {
            if (a[0].t->kind == Type::Kind::Union) {  // uniform: float | np.float64, bool | np.bool_
              V x = a[0];
              x.t = e->type;
              if (hetero(e->type)) {  // bool | np.bool_ -> int | np.bool_: same bits, new tags
                x.v = imag ? c64(0) : to_bits(a[0]);
                for (auto& m : members(a[0].t))
                  x.tag = B.CreateSelect(B.CreateICmpEQ(a[0].tag, c8(tag_of(m))), c8(tag_of(types::real_part(m))), x.tag);
              } else if (imag) {
                x.v = llvm::Constant::getNullValue(x.v->getType());
              }
              return x;
            }
            TypeRef r = types::real_part(a[0].t);
            if (imag) return scalar(r, llvm::Constant::getNullValue(ty(r)));
            return scalar(r, is_pybool(a[0].t) ? B.CreateZExt(a[0].v, i64()) : a[0].v);
          });
        }
        if (obj.t->kind == Type::Kind::Array) {
          if (e->name == "shape") {
            V t;
            t.t = e->type;
            for (auto* s : obj.shape) t.elems.push_back(scalar(types::py_int(), s));
            return t;
          }
          if (e->name == "ndim") return scalar(types::py_int(), c64(obj.t->ndim));
          if (e->name == "size") {
            Value* n = c64(1);
            for (auto* s : obj.shape) n = B.CreateMul(n, s);
            return scalar(types::py_int(), n);
          }
        }
        fail("internal error: attribute " + e->name);
      }
      case K::Subscript: {
        V base = gen(e->args[0]);
        V index = gen(e->args[1]);
        // `a, b = row`: a row (or list) of another length raises ValueError in CPython.
        if (e->unpack > 0 && base.t->kind == Type::Kind::Array) {
          Checking checking(this, "an unpacked row may have another length");
          bail_unless(B.CreateICmpEQ(base.shape[0], c64(e->unpack)));
        }
        return subscript(base, index, e->type, e->origin, e->in_domain);
      }
      case K::Tuple: {
        V t;
        t.t = e->type;
        for (auto& a : e->args) t.elems.push_back(gen(a));
        return t;
      }
      case K::Binary: {
        if (e->binop == ir::BinOp::MatMul && e->type && e->type->kind == Type::Kind::NpScalar)
          return np_dot(e, e->args[0], e->args[1], true);
        V a = gen(e->args[0]), b = gen(e->args[1]);
        ir::BinOp op = e->binop;
        op_origin_ = e->origin;
        cur_node_ = e.get();
        divisor_nonzero_ = e->in_domain || (e->args[1]->kind == K::Load && nonzero_vars_.count(e->args[1]->var)) ||
                           facts_.has(FactKind::NonZeroDivisor, e->origin);
        for (int k = 0; k < 2; k++)
          operands_fit_[(size_t)k] = e->type && e->type->kind == Type::Kind::NpScalar && e->args[(size_t)k]->kind == K::Load &&
                                     fitting_vars_.count({e->args[(size_t)k]->var, e->type->dtype});
        const bool exact_before = exact_now_, counter_before = counter_now_;
        if (exact_ops_.count(e.get())) exact_now_ = true;
        counter_now_ = counter_ops_.count(e.get()) > 0;
        llvm::IRBuilderBase::FastMathFlagGuard fmf(B);
        if (reassoc_ops_.count(e.get())) {
          llvm::FastMathFlags f = B.getFastMathFlags();
          f.setAllowReassoc();
          B.setFastMathFlags(f);
        }
        V out = dispatch({a, b}, e->type, [&](const std::vector<V>& x) {
          TypeRef rt = over_members(x, [&](const std::vector<TypeRef>& m) { return oracle_.binary(op, m[0], m[1]); });
          return binary(op, x[0], x[1], rt);
        });
        divisor_nonzero_ = false;
        operands_fit_ = {};
        exact_now_ = exact_before;
        counter_now_ = counter_before;
        if (auto sg = sign_ops_.find(e.get()); sg != sign_ops_.end()) note_sign(e, a, b, sg->second.first, sg->second.second);
        return out;
      }
      case K::Unary: {
        V a = gen(e->args[0]);
        ir::UnOp op = e->unop;
        op_origin_ = e->origin;
        return dispatch({a}, e->type, [&](const std::vector<V>& x) {
          if (op == ir::UnOp::Not) return unary(op, x[0], types::py_bool());
          TypeRef rt = over_members(x, [&](const std::vector<TypeRef>& m) { return oracle_.unary(op, m[0]); });
          return unary(op, x[0], rt);
        });
      }
      case K::Compare: {
        if (Value* r = hypot_compare(e)) return scalar(e->type, r);
        V a = gen(e->args[0]), b = gen(e->args[1]);
        ir::CmpOp op = e->cmpop;
        if (e->nan_bails && a.t->is_scalar()) {
          // `x in S`: CPython may find a NaN x by identity; it decides. An item that is a number
          // can only be that very object where it is a NaN too (no float item: in no position).
          auto any_float = [&](const TypeRef& t) {
            bool found = false;
            for (auto& m : members(t)) found = found || is_float_t(m);
            return found;
          };
          const bool item = b.t->is_scalar();
          if (any_float(a.t) && (!item || any_float(b.t))) {
            Checking checking(this, item ? "a NaN may be looked up with `in` among NaNs" : "a NaN may be looked up with `in`");
            Value* d = as_double(a);
            Value* ok = B.CreateFCmpORD(d, d);
            if (item) {
              Value* q = as_double(b);
              ok = B.CreateOr(ok, B.CreateFCmpORD(q, q));
            }
            bail_unless(ok);
          }
        }
        if ((a.t->pystr && b.t->kind == Type::Kind::PyChar) || (b.t->pystr && a.t->kind == Type::Kind::PyChar)) {
          // A str and a character: equal when the str has one character, that one.
          const V& s = a.t->pystr ? a : b;
          const V& c = a.t->pystr ? b : a;
          Value* one = B.CreateICmpEQ(s.shape[0], c64(1));
          BasicBlock* from = B.GetInsertBlock();
          BasicBlock* single = BasicBlock::Create(C, "str.single", F);
          BasicBlock* join = BasicBlock::Create(C, "str.compared", F);
          B.CreateCondBr(one, single, join);
          B.SetInsertPoint(single);
          V first = subscript(s, scalar(types::py_int(), c64(0)), types::py_char(), e->origin);
          Value* same = B.CreateICmpEQ(first.v, c.v);
          BasicBlock* single_end = B.GetInsertBlock();
          B.CreateBr(join);
          B.SetInsertPoint(join);
          llvm::PHINode* eq = B.CreatePHI(B.getInt1Ty(), 2);
          eq->addIncoming(B.getFalse(), from);
          eq->addIncoming(same, single_end);
          return scalar(e->type, op == ir::CmpOp::EQ ? static_cast<Value*>(eq) : B.CreateNot(eq));
        }
        if (a.t->kind == Type::Kind::PyChar && b.t->kind == Type::Kind::PyChar) {
          // One-character strs compare as their code points (unsigned i32s, below 0x110000).
          static const std::map<ir::CmpOp, llvm::CmpInst::Predicate> preds = {
              {ir::CmpOp::LT, llvm::CmpInst::ICMP_ULT}, {ir::CmpOp::LE, llvm::CmpInst::ICMP_ULE},
              {ir::CmpOp::EQ, llvm::CmpInst::ICMP_EQ},  {ir::CmpOp::NE, llvm::CmpInst::ICMP_NE},
              {ir::CmpOp::GT, llvm::CmpInst::ICMP_UGT}, {ir::CmpOp::GE, llvm::CmpInst::ICMP_UGE}};
          auto p = preds.find(op);
          if (p == preds.end()) fail("internal error: a comparison of characters");
          return scalar(e->type, B.CreateICmp(p->second, a.v, b.v));
        }
        return dispatch({a, b}, e->type, [&](const std::vector<V>& x) {
          TypeRef rt = (op == ir::CmpOp::Is || op == ir::CmpOp::IsNot)
                           ? types::py_bool()
                           : over_members(x, [&](const std::vector<TypeRef>& m) { return oracle_.compare(m[0], m[1]); });
          return compare(op, x[0], x[1], rt);
        });
      }
      case K::Truth: return scalar(types::py_bool(), truth(gen(e->args[0])));
      case K::Call: return call(e);
      case K::Cond: return cond(e);
      case K::Seq: {
        V last;
        for (auto& a : e->args) last = gen(a);
        return last;
      }
      case K::LoopNonEmpty: {
        Value* trip = B.CreateLoad(i64(), loops_[e->var].trip);
        return scalar(types::py_bool(), B.CreateICmpSGT(trip, c64(0)));
      }
      case K::Guard: {
        defer(truth(gen(e->args[0])));
        return gen(e->args[1]);
      }
      case K::ComplexWarn: {
        complex_warnings(e);
        V none;
        none.t = types::none();
        return none;
      }
      case K::AsType: {
        V x = gen(e->args[0]);
        if (hetero(x.t) || ty(x.t) != ty(e->type)) fail("internal error: as " + e->type->str() + " of " + x.t->str());
        x.t = e->type;
        x.tag = nullptr;
        return x;
      }
    }
    fail("internal error: expression");
  }

  // The address of element `sub` of a complex array, and of its imaginary part.
  Value* complex_element(const Expr& base_e, const Expr& index_e, int origin, bool imag) {
    V base = gen(base_e);
    V idx = gen(index_e);
    if (base.t->kind != Type::Kind::Array || !dtype_is_complex(base.t->dtype))
      fail("internal error: a part of an element of " + base.t->str());
    Value* at = index_array(base, index_list(idx), origin).v;
    return imag ? B.CreateConstGEP1_64(i8(), at, dtype_size(base.t->dtype) / 2) : at;
  }
  // A part of a complex element, as a double (a complex64's float32 part, widened: exact).
  V complex_part(const Expr& sub, bool imag) {
    Value* at = complex_element(sub->args[0], sub->args[1], sub->origin, imag);
    if (sub->args[0]->type->dtype == DType::Complex64)
      return scalar(types::py_float(), B.CreateFPExt(B.CreateAlignedLoad(B.getFloatTy(), at, llvm::Align(4)), f64()));
    return scalar(types::py_float(), B.CreateAlignedLoad(f64(), at, llvm::Align(8)));
  }

  V constant(const Expr& e) {
    switch (e->value.kind) {
      case ir::ConstValue::Kind::None: {
        V x;
        x.t = types::none();
        return x;
      }
      case ir::ConstValue::Kind::Bool: return scalar(types::py_bool(), B.getInt1(e->value.b));
      case ir::ConstValue::Kind::Int: return scalar(types::py_int(), c64(e->value.i));
      case ir::ConstValue::Kind::Float: return scalar(types::py_float(), llvm::ConstantFP::get(f64(), e->value.f));
      case ir::ConstValue::Kind::Char: return scalar(types::py_char(), B.getInt32((uint32_t)e->value.i));
      case ir::ConstValue::Kind::Complex:
        // lower_complex's marker: a complex variable's own slot keeps only its type tag.
        if (e->type->is_complex()) return scalar(e->type, c64(0));
        break;
    }
    fail("internal error: constant");
  }

  V load(int var, const TypeRef& t, bool check_bound) {
    Checking checking(this, "a variable may be unassigned");
    if (check_bound) bail_unless(B.CreateICmpNE(B.CreateLoad(i8(), tags_[var]), c8(0)));
    if (t->kind == Type::Kind::None || t->kind == Type::Kind::Module || t->kind == Type::Kind::Callable ||
        t->kind == Type::Kind::Object || t->kind == Type::Kind::Function) {
      V x;
      x.t = t;
      return x;
    }
    if (t->kind == Type::Kind::Array) return array_value(var, t);
    if (t->kind == Type::Kind::View || t->kind == Type::Kind::Appended) {  // the row's index; the buffer's address
      V x;
      x.t = t;
      x.v = B.CreateLoad(i64(), bits_[var]);
      return x;
    }
    if (t->kind == Type::Kind::PyChar) return scalar(t, B.CreateTrunc(B.CreateLoad(i64(), bits_[var]), B.getInt32Ty()));
    if (t->kind == Type::Kind::Tuple) {
      auto it = tuples_.find(var);
      if (it == tuples_.end()) fail("internal error: tuple `" + nest_.vars[var].name + "`");
      return it->second;
    }
    if (!t->is_scalar()) fail("internal error: load of " + t->str());
    if (warn_gen_ == WarnGen::Fast && fast32_.count(var) &&
        (t->kind == Type::Kind::PyFloat || (is_np(t) && t->dtype == DType::Float32)))
      return fast32_load(var, t);
    Value* bits = B.CreateLoad(i64(), bits_[var]);
    if (hetero(t)) return scalar(t, bits, B.CreateLoad(i8(), tags_[var]));
    V x = scalar(t, from_bits(bits, rep(t)));
    if (t->kind == Type::Kind::Union) x.tag = B.CreateLoad(i8(), tags_[var]);
    return x;
  }

  // The array an array-typed variable refers to: one of the live-in arrays of its type; or
  // the array it keeps (kernel_abi.h: a pointer to its extents, then its items, C order).
  V array_value(int var, const TypeRef& t) {
    if (t->made) return made_list_value(t, B.CreateLoad(i64(), bits_[var]));
    if (t->local) {
      if (gpu_body_) gpu_refuse("it keeps an operation on arrays in a variable");
      Value* header = B.CreateIntToPtr(B.CreateLoad(i64(), bits_[var]), ptr());
      V x;
      x.t = t;
      x.v = B.CreateGEP(i8(), header, c64(kLocalArrayHeader));
      x.shape.resize((size_t)t->ndim);
      x.strides.resize((size_t)t->ndim);
      for (int d = 0; d < t->ndim; d++) x.shape[(size_t)d] = B.CreateLoad(i64(), B.CreateGEP(i64(), header, c64(d)));
      Value* stride = c64(dtype_size(t->dtype));
      for (int d = t->ndim - 1; d >= 0; d--) {
        x.strides[(size_t)d] = stride;
        stride = B.CreateMul(stride, x.shape[(size_t)d]);
      }
      return x;
    }
    std::vector<int> cands;
    for (size_t k = 0; k < arrays_.size(); k++)
      if (types::same(arrays_[k].t, t)) cands.push_back((int)k);
    if (cands.empty()) fail("internal error: no array for `" + nest_.vars[var].name + "`");
    V x;
    x.t = t;
    const Arr& first = arrays_[cands[0]];
    x.v = first.data;
    x.shape = first.shape;
    x.strides = first.strides;
    x.offsets = first.offsets;
    if (cands.size() > 1 && nest_.vars[var].assigned) {
      Value* id = B.CreateLoad(i64(), bits_[var]);
      for (size_t k = 1; k < cands.size(); k++) {
        const Arr& a = arrays_[cands[k]];
        Value* is = B.CreateICmpEQ(id, c64(cands[k]));
        x.v = B.CreateSelect(is, a.data, x.v);
        for (int d = 0; d < t->ndim; d++) {
          x.shape[d] = B.CreateSelect(is, a.shape[d], x.shape[d]);
          x.strides[d] = B.CreateSelect(is, a.strides[d], x.strides[d]);
        }
        if (x.offsets) x.offsets = B.CreateSelect(is, a.offsets, x.offsets);
      }
    } else if (array_id_[var] >= 0) {
      const Arr& a = arrays_[array_id_[var]];
      x.v = a.data;
      x.shape = a.shape;
      x.strides = a.strides;
      x.offsets = a.offsets;
    }
    return x;
  }

  // Element or sub-array address for indices `idx` (each checked and wrapped like Python)
  // of the subscript operation at bytecode offset `origin`. Where the run-time values
  // prove an index in bounds for the whole nest, or of one sign, the check or the
  // wrap-around goes.
  V index_array(const V& base, const std::vector<V>& idx, int origin) {
    Checking checking(this, "an index may be out of range");
    if (base.offsets) return ragged_row(base, idx, origin);
    Value* off = c64(0);
    std::vector<Value*> sliced_shape, sliced_strides;
    for (size_t k = 0; k < idx.size(); k++) {
      if (idx[k].t->kind == Type::Kind::Slice) {
        auto [start, len, step] = slice_indices(idx[k], base.shape[k]);
        off = B.CreateAdd(off, B.CreateMul(start, base.strides[k]));
        sliced_shape.push_back(len);
        sliced_strides.push_back(B.CreateMul(step, base.strides[k]));
        continue;
      }
      bool inb = false;
      Value* wrapped = checked_index(idx[k], base.shape[k], origin, (int)k, &inb);
      off = B.CreateAdd(off, B.CreateMul(wrapped, base.strides[k], "", false, inb), "", false, inb);
    }
    V out;
    out.v = B.CreateGEP(i8(), base.v, off);
    out.shape = sliced_shape;
    out.strides = sliced_strides;
    for (size_t k = idx.size(); k < base.shape.size(); k++) {
      out.shape.push_back(base.shape[k]);
      out.strides.push_back(base.strides[k]);
    }
    return out;
  }

  // Index `x` (position `pos` of the subscript at `origin`) along an extent `n`, wrapped
  // where negative, as a bail where out of range; `inb`: whether the facts put it in range.
  Value* checked_index(const V& x, Value* n, int origin, int pos, bool* inb = nullptr) {
    Value* i = as_i64_int(x);
    const bool all_types_int = is_pyint(rep(x.t)) && x.t->kind != Type::Kind::Union;
    const bool in = all_types_int && facts_.has(FactKind::InBounds, origin, pos);
    if (inb) *inb = in;
    Value* wrapped;
    if (all_types_int && facts_.has(FactKind::NonNeg, origin, pos)) wrapped = i;
    else if (all_types_int && facts_.has(FactKind::Negative, origin, pos)) wrapped = B.CreateAdd(i, n, "", false, in);
    else wrapped = B.CreateSelect(B.CreateICmpSLT(i, c64(0)), B.CreateAdd(i, n), i);
    if (!in) bail_unless(B.CreateICmpULT(wrapped, n));  // 0 <= i < n, as unsigned
    return wrapped;
  }

  // Row idx[0] of a ragged list (Type::ragged; type inference takes its rows by one int
  // index at a time): a list of its own length, its items where offsets[i] says.
  V ragged_row(const V& base, const std::vector<V>& idx, int origin) {
    if (gpu_body_) gpu_refuse("it reads a list of lists of different lengths");
    if (idx.size() != 1 || idx[0].t->kind == Type::Kind::Slice) fail("internal error: a ragged list taken whole");
    Value* i = checked_index(idx[0], base.shape[0], origin, 0);
    Value* start = B.CreateLoad(i64(), B.CreateGEP(i64(), base.offsets, i));
    Value* end = B.CreateLoad(i64(), B.CreateGEP(i64(), base.offsets, B.CreateAdd(i, c64(1))));
    V row;
    row.v = B.CreateGEP(i8(), base.v, B.CreateMul(start, base.strides[1]));
    row.shape = {B.CreateSub(end, start)};
    row.strides = {base.strides[1]};
    return row;
  }

  // A slice's first index, length and step along an extent `n`, as CPython's
  // PySlice_Unpack and PySlice_AdjustIndices compute them (which NumPy uses); a zero step
  // (a ValueError) goes to CPython.
  std::tuple<Value*, Value*, Value*> slice_indices(const V& sl, Value* n) {
    Checking checking(this, "a slice step may be zero");
    auto given = [&](const V& x) { return x.t->kind != Type::Kind::None; };
    Value* step = given(sl.elems[2]) ? as_i64_int(sl.elems[2]) : c64(1);
    if (given(sl.elems[2])) bail_unless(B.CreateICmpNE(step, c64(0)));
    Value* neg = B.CreateICmpSLT(step, c64(0));
    Value* start = given(sl.elems[0]) ? as_i64_int(sl.elems[0]) : B.CreateSelect(neg, c64(INT64_MAX), c64(0));
    Value* stop = given(sl.elems[1]) ? as_i64_int(sl.elems[1]) : B.CreateSelect(neg, c64(INT64_MIN), c64(INT64_MAX));
    auto adjust = [&](Value* x) {
      Value* wrapped = B.CreateAdd(x, n);
      Value* below = B.CreateSelect(B.CreateICmpSLT(wrapped, c64(0)), B.CreateSelect(neg, c64(-1), c64(0)), wrapped);
      Value* above = B.CreateSelect(neg, B.CreateSub(n, c64(1)), n);
      return B.CreateSelect(B.CreateICmpSLT(x, c64(0)), below, B.CreateSelect(B.CreateICmpSGE(x, n), above, x));
    };
    start = adjust(start);
    stop = adjust(stop);
    // step > 0: start < stop ? (stop - start - 1) / step + 1 : 0; step < 0 mirrored.
    Value* up = B.CreateSelect(B.CreateICmpSLT(start, stop),
                               B.CreateAdd(B.CreateSDiv(B.CreateSub(B.CreateSub(stop, start), c64(1)), step), c64(1)), c64(0));
    Value* nstep = B.CreateSelect(neg, B.CreateNeg(step), c64(1));
    Value* down = B.CreateSelect(B.CreateICmpSLT(stop, start),
                                 B.CreateAdd(B.CreateSDiv(B.CreateSub(B.CreateSub(start, stop), c64(1)), nstep), c64(1)), c64(0));
    return {start, B.CreateSelect(neg, down, up), step};
  }

  std::vector<V> index_list(const V& index) {
    if (index.t->kind == Type::Kind::Tuple) return index.elems;
    return {index};
  }

  // `in_range`: a tuple's index is known to be in range (ExprNode::in_domain).
  V subscript(const V& base, const V& index, const TypeRef& t, int origin, bool in_range = false) {
    Checking checking(this, "an index may be out of range");
    if (base.t->kind == Type::Kind::Array) {
      V at = index_array(base, index_list(index), origin);
      if (t->kind == Type::Kind::Array) {
        at.t = t;
        return at;
      }
      DType d = base.t->dtype;
      if (base.t->pystr && gpu_body_) gpu_refuse("it reads the characters of a str");
      if (base.t->tagged) return tagged_element(at.v, t);
      Value* v = load_item(d, at.v);
      if (base.t->pystr) return scalar(t, d == DType::UInt32 ? v : B.CreateZExt(v, B.getInt32Ty()));  // a code point
      if (d == DType::Bool) v = B.CreateICmpNE(v, c8(0));
      // Items of lists and buffers read as Python ints and floats: widened.
      else if (base.t->py_items() && dtype_is_int(d) && dtype_size(d) < 8)
        v = dtype_is_signed(d) ? B.CreateSExt(v, i64()) : B.CreateZExt(v, i64());
      else if (base.t->py_items() && d == DType::Float32)
        v = B.CreateFPExt(v, f64());
      return scalar(t, v);
    }
    if (base.t->kind == Type::Kind::Tuple) {
      size_t n = base.elems.size();
      if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(index.v)) {
        int64_t i = c->getSExtValue();
        if (i < 0) i += (int64_t)n;
        return base.elems[(size_t)i];
      }
      Value* i = as_i64_int(index);
      Value* w = in_range ? i : B.CreateSelect(B.CreateICmpSLT(i, c64(0)), B.CreateAdd(i, c64((int64_t)n)), i);
      if (!in_range) bail_unless(B.CreateICmpULT(w, c64((int64_t)n)));
      V out = base.elems[0];
      for (size_t k = 1; k < n; k++) out.v = B.CreateSelect(B.CreateICmpEQ(w, c64((int64_t)k)), base.elems[k].v, out.v);
      out.t = t;
      return out;
    }
    fail("internal error: subscript of " + base.t->str());
  }

  Value* truth(const V& x) {
    if (x.t->kind == Type::Kind::Unbound) return B.getFalse();  // unreachable: it bailed
    if (x.t->kind == Type::Kind::Array && x.t->pylist) return B.CreateICmpNE(x.shape[0], c64(0));  // not empty
    if (hetero(x.t)) return per_member(x, [&](const V& y) { return truth(y); });
    TypeRef m = rep(x.t);
    if (x.t->kind == Type::Kind::None) return B.getFalse();
    if (is_bool_t(m)) return x.v;
    if (is_int_t(m)) return B.CreateICmpNE(x.v, llvm::ConstantInt::get(x.v->getType(), 0));
    if (is_float_t(m)) return B.CreateFCmpUNE(x.v, llvm::ConstantFP::get(x.v->getType(), 0.0));
    fail("internal error: truth of " + x.t->str());
  }

  V cond(const Expr& e) {
    Value* c = truth(gen(e->args[0]));
    BasicBlock* tb = BasicBlock::Create(C, "cond.t", F);
    BasicBlock* fb = BasicBlock::Create(C, "cond.f", F);
    BasicBlock* mb = BasicBlock::Create(C, "cond.m", F);
    B.CreateCondBr(c, tb, fb);
    B.SetInsertPoint(tb);
    V a = gen(e->args[1]);
    if (a.t->kind == Type::Kind::Unbound) a = undef_of(e->type);
    V ac = coerce_to(a, e->type);
    BasicBlock* ta = B.GetInsertBlock();
    B.CreateBr(mb);
    B.SetInsertPoint(fb);
    V b = gen(e->args[2]);
    if (b.t->kind == Type::Kind::Unbound) b = undef_of(e->type);
    V bc = coerce_to(b, e->type);
    BasicBlock* fa = B.GetInsertBlock();
    B.CreateBr(mb);
    B.SetInsertPoint(mb);
    if (!e->type->is_scalar() && e->type->kind != Type::Kind::PyChar) {  // (a character: its code point)
      if (e->type->kind == Type::Kind::None) return a;
      fail("a conditional expression of " + e->type->str());
    }
    auto* phi = B.CreatePHI(ac.v->getType(), 2);
    phi->addIncoming(ac.v, ta);
    phi->addIncoming(bc.v, fa);
    V out = scalar(e->type, phi);
    if (e->type->kind == Type::Kind::Union) {
      auto* tphi = B.CreatePHI(i8(), 2);
      tphi->addIncoming(ac.tag, ta);
      tphi->addIncoming(bc.tag, fa);
      out.tag = tphi;
    }
    return out;
  }

  V undef_of(const TypeRef& t) {
    V x;
    x.t = t;
    if (t->is_scalar()) x.v = llvm::UndefValue::get(hetero(t) ? i64() : ty(t));
    if (t->kind == Type::Kind::Union) x.tag = c8(0);
    return x;
  }

  // A value of a member type, seen as the (uniform) union `to`: same bits, explicit tag.
  V coerce_union(const V& x, const TypeRef& to) {
    if (to->kind != Type::Kind::Union) return x;
    V y = x;
    y.t = to;
    if (!y.tag) y.tag = c8(tag_of(x.t));
    return y;
  }

  // ------------------------------------------------------------ arithmetic
  Value* overflow_op(llvm::Intrinsic::ID id, Value* a, Value* b) {
    if (counter_now_ && (id == llvm::Intrinsic::sadd_with_overflow || id == llvm::Intrinsic::ssub_with_overflow))
      return id == llvm::Intrinsic::sadd_with_overflow ? B.CreateNSWAdd(a, b) : B.CreateNSWSub(a, b);
    Checking checking(this, "an int may leave 64 bits");
    Value* r = B.CreateBinaryIntrinsic(id, a, b);
    defer(B.CreateNot(B.CreateExtractValue(r, 1)));
    return B.CreateExtractValue(r, 0);
  }

  // Python's floor division and modulo on signed integers (operands already checked).
  Value* floordiv_signed(Value* a, Value* b) {
    Value* q = B.CreateSDiv(a, b);
    Value* r = B.CreateSRem(a, b);
    Value* zero = llvm::ConstantInt::get(a->getType(), 0);
    Value* adjust = B.CreateAnd(B.CreateICmpNE(r, zero), B.CreateXor(B.CreateICmpSLT(r, zero), B.CreateICmpSLT(b, zero)));
    return B.CreateSub(q, B.CreateZExt(adjust, a->getType()));
  }
  Value* mod_signed(Value* a, Value* b) {
    Value* r = B.CreateSRem(a, b);
    Value* zero = llvm::ConstantInt::get(a->getType(), 0);
    Value* adjust = B.CreateAnd(B.CreateICmpNE(r, zero), B.CreateXor(B.CreateICmpSLT(r, zero), B.CreateICmpSLT(b, zero)));
    return B.CreateSelect(adjust, B.CreateAdd(r, b), r);
  }

  // CPython's float_divmod (NumPy's npy_divmod is the same algorithm). b != 0.
  std::pair<Value*, Value*> float_divmod(Value* a, Value* b) {
    llvm::Type* t = a->getType();
    Value* zero = llvm::ConstantFP::get(t, 0.0);
    Value* mod = fmod_call(a, b);
    Value* div = B.CreateFDiv(B.CreateFSub(a, mod), b);
    Value* mod_nz = B.CreateFCmpUNE(mod, zero);
    Value* signs_differ = B.CreateXor(B.CreateFCmpOLT(b, zero), B.CreateFCmpOLT(mod, zero));
    Value* fix = B.CreateAnd(mod_nz, signs_differ);
    Value* mod1 = B.CreateSelect(fix, B.CreateFAdd(mod, b), mod);
    Value* div1 = B.CreateSelect(fix, B.CreateFSub(div, llvm::ConstantFP::get(t, 1.0)), div);
    Value* zmod = B.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, zero, b);
    Value* mod2 = B.CreateSelect(mod_nz, mod1, zmod);
    Value* div_nz = B.CreateFCmpUNE(div1, zero);
    Value* fl = B.CreateUnaryIntrinsic(llvm::Intrinsic::floor, div1);
    Value* up = B.CreateFCmpOGT(B.CreateFSub(div1, fl), llvm::ConstantFP::get(t, 0.5));
    Value* fl1 = B.CreateSelect(up, B.CreateFAdd(fl, llvm::ConstantFP::get(t, 1.0)), fl);
    Value* zdiv = B.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, zero, B.CreateFDiv(a, b));
    Value* floordiv = B.CreateSelect(div_nz, fl1, zdiv);
    return {floordiv, mod2};
  }

  Value* libm1(const char* name, Value* x) {
    if (gpu_body_) {
      // The GPU's sqrt rounds correctly, as the CPU's; its other functions may differ in the last bit.
      if (std::string(name) == "sqrt") return B.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x);
      gpu_refuse(std::string("it calls ") + name + ", which the GPU may round differently from the CPU's libm");
    }
    llvm::Type* t = x->getType();
    std::string n = name;
    if (t->isFloatTy()) n += "f";
    auto fn = M->getOrInsertFunction(n, llvm::FunctionType::get(t, {t}, false));
    return libm_call(B.CreateCall(fn, {x}), name);
  }
  // A call of libm's function `name`, as CPython and NumPy make it. LLVM knows these as
  // library functions and rewrites some (pow(x, 2.0) as x * x, pow(x, -1.0) as 1 / x,
  // pow(2.0, x) as exp2(x)): exact only if libm's result is correctly rounded, and glibc's
  // pow is not always (pow(t, 2.0) != t * t for t = 104 / 1999 - 0.5). Those calls are
  // marked `nobuiltin`, so that they stay calls. The correctly rounded ones (sqrt, the
  // roundings, fabs, copysign) may become instructions.
  Value* libm_call(llvm::CallInst* call, const char* name) {
    static const std::set<std::string> exact = {"sqrt", "fabs", "floor", "ceil", "trunc", "rint", "copysign"};
    if (!exact.count(name)) call->addFnAttr(llvm::Attribute::NoBuiltin);
    return call;
  }
  Value* libm2(const char* name, Value* x, Value* y) {
    if (gpu_body_) {
      if (std::string(name) == "copysign") return B.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, x, y);
      gpu_refuse(std::string("it calls ") + name + ", which the GPU may round differently from the CPU's libm");
    }
    llvm::Type* t = x->getType();
    std::string n = name;
    if (t->isFloatTy()) n += "f";
    auto fn = M->getOrInsertFunction(n, llvm::FunctionType::get(t, {t, t}, false));
    return libm_call(B.CreateCall(fn, {x, y}), name);
  }
  Value* fmod_call(Value* a, Value* b) { return libm2("fmod", a, b); }

  // Integer power by squaring with overflow checks (exponent >= 0 checked by the caller).
  Value* int_pow(Value* base, Value* exp, bool is_signed) {
    llvm::Type* t = base->getType();
    auto id_mul = is_signed ? llvm::Intrinsic::smul_with_overflow : llvm::Intrinsic::umul_with_overflow;
    BasicBlock* pre = B.GetInsertBlock();
    BasicBlock* head = BasicBlock::Create(C, "pow.head", F);
    BasicBlock* body = BasicBlock::Create(C, "pow.body", F);
    BasicBlock* done = BasicBlock::Create(C, "pow.done", F);
    B.CreateBr(head);
    B.SetInsertPoint(head);
    auto* r = B.CreatePHI(t, 2);
    auto* b = B.CreatePHI(t, 2);
    auto* e = B.CreatePHI(t, 2);
    auto* ovf = B.CreatePHI(i1(), 2);
    r->addIncoming(llvm::ConstantInt::get(t, 1), pre);
    b->addIncoming(base, pre);
    e->addIncoming(exp, pre);
    ovf->addIncoming(B.getFalse(), pre);
    B.CreateCondBr(B.CreateICmpNE(e, llvm::ConstantInt::get(t, 0)), body, done);
    B.SetInsertPoint(body);
    Value* odd = B.CreateICmpNE(B.CreateAnd(e, llvm::ConstantInt::get(t, 1)), llvm::ConstantInt::get(t, 0));
    Value* rm = B.CreateBinaryIntrinsic(id_mul, r, b);
    Value* r2 = B.CreateSelect(odd, B.CreateExtractValue(rm, 0), r);
    Value* o1 = B.CreateAnd(odd, B.CreateExtractValue(rm, 1));
    Value* e2 = B.CreateLShr(e, llvm::ConstantInt::get(t, 1));
    Value* bm = B.CreateBinaryIntrinsic(id_mul, b, b);
    // Squaring overflow matters only if the exponent still has bits left.
    Value* o2 = B.CreateAnd(B.CreateICmpNE(e2, llvm::ConstantInt::get(t, 0)), B.CreateExtractValue(bm, 1));
    Value* ovf2 = B.CreateOr(ovf, B.CreateOr(o1, o2));
    BasicBlock* body_end = B.GetInsertBlock();
    r->addIncoming(r2, body_end);
    b->addIncoming(B.CreateExtractValue(bm, 0), body_end);
    e->addIncoming(e2, body_end);
    ovf->addIncoming(ovf2, body_end);
    B.CreateBr(head);
    B.SetInsertPoint(done);
    defer(B.CreateNot(ovf));
    return r;
  }

  V binary(ir::BinOp op, const V& a, const V& b, const TypeRef& rt) {
    if (a.t->kind == Type::Kind::Unbound || b.t->kind == Type::Kind::Unbound) return undef_of(rt);
    TypeRef r = rep(rt);
    Value* out;
    if (!any_np(a.t) && !any_np(b.t) && !any_np(rt)) out = python_binary(op, a, b, r, false);
    else if (!any_py(rt) || is_np(r)) out = numpy_binary(op, a, b, r, any_py(rt));
    else out = python_binary(op, a, b, r, true);
    V x = scalar(rt, out);
    x.tag = result_tag({a, b}, rt, [&](const std::vector<TypeRef>& m) { return oracle_.binary(op, m[0], m[1]); });
    return x;
  }

  // Python scalars. `numpy_checks`: the result may also be a NumPy float (a union), so
  // NumPy's warning conditions must hand control to CPython too.
  Value* python_binary(ir::BinOp op, const V& a, const V& b, const TypeRef& r, bool numpy_checks) {
    Checking checking(this, "an int power or shift may raise");  // (the other checks say below)
    using O = ir::BinOp;
    if (is_pybool(r)) {
      switch (op) {
        case O::And: return B.CreateAnd(a.v, b.v);
        case O::Or: return B.CreateOr(a.v, b.v);
        case O::Xor: return B.CreateXor(a.v, b.v);
        default: break;
      }
      fail("internal error: bool operation");
    }
    if (is_pyint(r)) {
      Value* x = as_i64_int(a);
      Value* y = as_i64_int(b);
      // An affine operation the run-time values keep within 64 bits needs no check.
      const bool safe = facts_.has(FactKind::NoOverflow, op_origin_);
      switch (op) {
        case O::Add: return safe ? B.CreateNSWAdd(x, y) : overflow_op(llvm::Intrinsic::sadd_with_overflow, x, y);
        case O::Sub: return safe ? B.CreateNSWSub(x, y) : overflow_op(llvm::Intrinsic::ssub_with_overflow, x, y);
        case O::Mul: return safe ? B.CreateNSWMul(x, y) : overflow_op(llvm::Intrinsic::smul_with_overflow, x, y);
        case O::FloorDiv:
        case O::Mod: {
          if (!divisor_nonzero_) bail_unless(B.CreateICmpNE(y, c64(0)), "a divisor may be zero");
          // INT64_MIN // -1 leaves 64 bits: not where the dividend is known small.
          if (!facts_.has(FactKind::ExactOperand, op_origin_, 0))
            bail_unless(B.CreateNot(B.CreateAnd(B.CreateICmpEQ(x, c64(INT64_MIN)), B.CreateICmpEQ(y, c64(-1)))),
                        "an int may leave 64 bits");
          return op == O::FloorDiv ? floordiv_signed(x, y) : mod_signed(x, y);
        }
        case O::Pow: {
          bail_unless(B.CreateICmpSGE(y, c64(0)));  // a negative exponent gives a float
          return int_pow(x, y, true);
        }
        case O::LShift: {
          bail_unless(B.CreateICmpSGE(y, c64(0)));
          bail_unless(B.CreateICmpSLT(y, c64(64)));
          Value* s = B.CreateShl(x, y);
          bail_unless(B.CreateICmpEQ(B.CreateAShr(s, y), x));  // no bits lost
          return s;
        }
        case O::RShift: {
          bail_unless(B.CreateICmpSGE(y, c64(0)));
          Value* s = B.CreateSelect(B.CreateICmpSGT(y, c64(63)), c64(63), y);
          return B.CreateAShr(x, s);
        }
        case O::And: return B.CreateAnd(x, y);
        case O::Or: return B.CreateOr(x, y);
        case O::Xor: return B.CreateXor(x, y);
        default: break;
      }
      fail("internal error: int operation");
    }
    // Python float result.
    bool ints = is_int_t(rep(a.t)) || is_bool_t(rep(a.t));
    ints = ints && (is_int_t(rep(b.t)) || is_bool_t(rep(b.t)));
    Value* x = as_double(a);
    Value* y = as_double(b);
    Value* zero = llvm::ConstantFP::get(f64(), 0.0);
    auto np_guard = [&](Value* res) {
      Checking warn(this, "a NumPy operation may warn");
      if (numpy_checks) defer(isfinite(res));  // see numpy_binary's guard
    };
    switch (op) {
      case O::Add: { Value* r2 = B.CreateFAdd(x, y); np_guard(r2); return r2; }
      case O::Sub: { Value* r2 = B.CreateFSub(x, y); np_guard(r2); return r2; }
      case O::Mul: { Value* r2 = B.CreateFMul(x, y); np_guard(r2); return r2; }
      case O::TrueDiv: {
        if (ints) {  // int / int is correctly rounded by CPython: exact when both fit 53 bits
          Value* ia = as_i64_int(a);
          Value* ib = as_i64_int(b);
          auto small = [&](Value* i, int pos) -> Value* {
            if (facts_.has(FactKind::ExactOperand, op_origin_, pos)) return B.getTrue();
            return B.CreateAnd(B.CreateICmpSLE(i, c64(1LL << 53)), B.CreateICmpSGE(i, c64(-(1LL << 53))));
          };
          Checking exact(this, "an int may be too big for an exact division");
          defer(B.CreateAnd(small(ia, 0), small(ib, 1)));
        }
        Checking zero_div(this, "a divisor may be zero");
        if (!divisor_nonzero_) defer(B.CreateFCmpUNE(y, zero));  // ZeroDivisionError
        Value* r2 = B.CreateFDiv(x, y);
        np_guard(r2);
        return r2;
      }
      case O::FloorDiv:
      case O::Mod: {
        Checking zero_div(this, "a divisor may be zero");
        if (!divisor_nonzero_) defer(B.CreateFCmpUNE(y, zero));
        auto [q, m] = float_divmod(x, y);
        Value* r2 = op == O::FloorDiv ? q : m;
        np_guard(r2);
        return r2;
      }
      case O::Pow: {
        // float.__pow__: 0 ** negative raises; negative ** fraction is complex; overflow raises.
        Value* bad0 = B.CreateAnd(B.CreateFCmpOEQ(x, zero), B.CreateFCmpOLT(y, zero));
        Value* fracy = B.CreateFCmpUNE(B.CreateUnaryIntrinsic(llvm::Intrinsic::floor, y), y);
        Value* badneg = B.CreateAnd(B.CreateFCmpOLT(x, zero), B.CreateAnd(fracy, isfinite(y)));
        defer(B.CreateNot(B.CreateOr(bad0, badneg)));
        Value* r2 = libm2("pow", x, y);
        defer(B.CreateOr(isfinite(r2), B.CreateNot(B.CreateAnd(isfinite(x), isfinite(y)))));
        np_guard(r2);
        return r2;
      }
      default: break;
    }
    fail(std::string("`") + ir::binop_name(op) + "` on floats");
  }

  // x op y (+, -, *) of fixed-width integers as NumPy computes it (wrapping), and whether
  // it wrapped. LLVM's *.with.overflow intrinsics are the best scalar code, but the loop
  // vectorizer does not take them: in a fast pass that may vectorize (vector_int_checks_)
  // the same answers come from plain arithmetic and compares: the operands' and result's
  // signs for + and -; for *, a signed product in twice the width, an unsigned one
  // compared in floating point (exact below the limit, and rounding cannot carry a larger
  // product under it; a wide integer compare is what InstCombine turns back into the
  // intrinsic). 64-bit products keep the intrinsic (no wider vector multiply).
  std::pair<Value*, Value*> wrapping_op(ir::BinOp op, bool is_signed, Value* x, Value* y) {
    using O = ir::BinOp;
    llvm::Type* t = x->getType();
    const unsigned bits = t->getIntegerBitWidth();
    auto intrinsic = [&](llvm::Intrinsic::ID sid, llvm::Intrinsic::ID uid) -> std::pair<Value*, Value*> {
      Value* r = B.CreateBinaryIntrinsic(is_signed ? sid : uid, x, y);
      return {B.CreateExtractValue(r, 0), B.CreateExtractValue(r, 1)};
    };
    Value* zero = llvm::ConstantInt::get(t, 0);
    switch (op) {
      case O::Add: {
        if (!vector_int_checks_)
          return intrinsic(llvm::Intrinsic::sadd_with_overflow, llvm::Intrinsic::uadd_with_overflow);
        Value* r = B.CreateAdd(x, y);
        if (!is_signed) return {r, B.CreateICmpULT(r, x)};
        // Both operands' signs differ from the result's.
        return {r, B.CreateICmpSLT(B.CreateAnd(B.CreateXor(x, r), B.CreateXor(y, r)), zero)};
      }
      case O::Sub: {
        if (!vector_int_checks_)
          return intrinsic(llvm::Intrinsic::ssub_with_overflow, llvm::Intrinsic::usub_with_overflow);
        Value* r = B.CreateSub(x, y);
        if (!is_signed) return {r, B.CreateICmpULT(x, y)};
        // The operands' signs differ and the result's differs from x's.
        return {r, B.CreateICmpSLT(B.CreateAnd(B.CreateXor(x, y), B.CreateXor(x, r)), zero)};
      }
      case O::Mul: {
        if (!vector_int_checks_ || bits >= 64)
          return intrinsic(llvm::Intrinsic::smul_with_overflow, llvm::Intrinsic::umul_with_overflow);
        Value* r = B.CreateMul(x, y);
        if (is_signed) {
          llvm::Type* wide = B.getIntNTy(bits < 16 ? 32 : 2 * bits);
          Value* p = B.CreateMul(B.CreateSExt(x, wide), B.CreateSExt(y, wide));
          return {r, B.CreateICmpNE(B.CreateSExt(r, wide), p)};
        }
        llvm::Type* ft = bits <= 16 ? B.getFloatTy() : B.getDoubleTy();
        Value* p = B.CreateFMul(B.CreateUIToFP(x, ft), B.CreateUIToFP(y, ft));
        const double limit = bits == 8 ? 255.0 : bits == 16 ? 65535.0 : 4294967295.0;
        return {r, B.CreateFCmpOGT(p, llvm::ConstantFP::get(ft, limit))};
      }
      default: fail("internal error: wrapping_op");
    }
  }

  Value* numpy_binary(ir::BinOp op, const V& a, const V& b, const TypeRef& r, bool python_checks) {
    Checking checking(this, "a NumPy operation may warn or raise");
    using O = ir::BinOp;
    warn_operands_ = {a.t, b.t};
    DType d = r->dtype;
    Value* x = numpy_operand(a, r, operands_fit_[0]);
    Value* y = numpy_operand(b, r, operands_fit_[1]);
    llvm::Type* t = x->getType();
    if (d == DType::Bool) {
      switch (op) {
        case O::And: case O::Mul: return B.CreateAnd(x, y);
        case O::Or: case O::Add: return B.CreateOr(x, y);
        case O::Xor: return B.CreateXor(x, y);
        default: fail(std::string("`") + ir::binop_name(op) + "` on numpy.bool");
      }
    }
    if (dtype_is_int(d)) {
      bool s = dtype_is_signed(d);
      Value* zero = llvm::ConstantInt::get(t, 0);
      auto wrap = [&](O o, const char* name) {  // NumPy wraps, and warns
        auto [r, overflowed] = wrapping_op(o, s, x, y);
        np_overflow_warning(name, d, overflowed);
        return r;
      };
      switch (op) {
        case O::Add: return wrap(op, "add");
        case O::Sub: return wrap(op, "subtract");
        case O::Mul: return wrap(op, "multiply");
        case O::FloorDiv:
        case O::Mod: {
          if (!divisor_nonzero_) bail_unless(B.CreateICmpNE(y, zero));
          if (s) {
            Value* minv = llvm::ConstantInt::get(t, llvm::APInt::getSignedMinValue(t->getIntegerBitWidth()));
            Value* m1 = llvm::ConstantInt::get(t, (uint64_t)-1, true);
            Value* edge = B.CreateAnd(B.CreateICmpEQ(x, minv), B.CreateICmpEQ(y, m1));
            if (op == O::FloorDiv) {
              bail_unless(B.CreateNot(edge));
              return floordiv_signed(x, y);
            }
            Value* safe_y = B.CreateSelect(edge, llvm::ConstantInt::get(t, 1), y);
            return B.CreateSelect(edge, zero, mod_signed(x, safe_y));
          }
          return op == O::FloorDiv ? B.CreateUDiv(x, y) : B.CreateURem(x, y);
        }
        case O::Pow: {
          if (s) bail_unless(B.CreateICmpSGE(y, zero));
          return int_pow(x, y, s);
        }
        case O::LShift:
        case O::RShift: {
          unsigned w = t->getIntegerBitWidth();
          bail_unless(B.CreateICmpULT(y, llvm::ConstantInt::get(t, w)));  // negative shifts too
          if (op == O::LShift) return B.CreateShl(x, y);
          return s ? B.CreateAShr(x, y) : B.CreateLShr(x, y);
        }
        case O::And: return B.CreateAnd(x, y);
        case O::Or: return B.CreateOr(x, y);
        case O::Xor: return B.CreateXor(x, y);
        case O::TrueDiv: break;
        default: break;
      }
      fail(std::string("`") + ir::binop_name(op) + "` on " + r->str());
    }
    // NumPy floats: NumPy warns (divide, overflow, invalid) whenever an operation turns
    // finite inputs into an infinity or a NaN. Any non-finite result hands the statement
    // to CPython (conservative for data that already holds infinities or NaNs: CPython
    // then computes those statements, with the same results).
    Value* zero = llvm::ConstantFP::get(t, 0.0);
    auto guard = [&](Value* res) { defer(isfinite(res)); };
    switch (op) {
      case O::Add: { Value* v = B.CreateFAdd(x, y); np_float_warning("add", x, y, v, d); return v; }
      case O::Sub: { Value* v = B.CreateFSub(x, y); np_float_warning("subtract", x, y, v, d); return v; }
      case O::Mul: { Value* v = B.CreateFMul(x, y); np_float_warning("multiply", x, y, v, d); return v; }
      case O::TrueDiv: {
        if (fp_mode() == FpMode::Exact && warn_gen_ == WarnGen::Normal) defer(B.CreateFCmpUNE(y, zero));
        if (warn_gen_ == WarnGen::Fast) mark_fast_bad(B.CreateNot(isfinite(y)));  // x / inf hides an inf
        Value* v = B.CreateFDiv(x, y);
        np_float_warning("divide", x, y, v, d);
        return v;
      }
      case O::FloorDiv:
      case O::Mod: {
        defer(B.CreateFCmpUNE(y, zero));
        auto [q, m] = float_divmod(x, y);
        Value* v = op == O::FloorDiv ? q : m;
        guard(v);
        return v;
      }
      case O::Pow: {
        // Warnings as for the others (warn_functions.h classifies pow's: IEEE 754's pow
        // raises nothing for an infinite or NaN operand, pow(0, -inf) included).
        Value* v = libm2("pow", x, y);
        if (warn_gen_ == WarnGen::Normal && fp_mode() != FpMode::Exact) np_float_warning("power", x, y, v, d);
        else guard(v);
        (void)python_checks;
        return v;
      }
      default: break;
    }
    fail(std::string("`") + ir::binop_name(op) + "` on " + r->str());
  }

  V unary(ir::UnOp op, const V& a, const TypeRef& rt) {
    Checking checking(this, "an int may leave 64 bits");
    TypeRef m = rep(a.t), r = rep(rt);
    if (op == ir::UnOp::Not) return scalar(types::py_bool(), B.CreateNot(truth(a)));
    Value* out = nullptr;
    if (is_pyint(r) && (is_pyint(m) || is_pybool(m))) {
      Value* x = as_i64_int(a);
      switch (op) {
        case ir::UnOp::Neg:
          out = facts_.has(FactKind::NoOverflow, op_origin_) ? B.CreateNSWNeg(x)
                                                             : overflow_op(llvm::Intrinsic::ssub_with_overflow, c64(0), x);
          break;
        case ir::UnOp::Pos: out = x; break;
        case ir::UnOp::Invert: out = B.CreateXor(x, c64(-1)); break;
        default: break;
      }
    } else if (is_float_t(m)) {
      if (op == ir::UnOp::Neg) out = B.CreateFNeg(a.v);
      else if (op == ir::UnOp::Pos) out = a.v;
    } else if (is_np(m) && dtype_is_int(m->dtype)) {
      llvm::Type* t = a.v->getType();
      bool s = dtype_is_signed(m->dtype);
      switch (op) {
        case ir::UnOp::Neg:
          if (s) {
            Value* minv = llvm::ConstantInt::get(t, llvm::APInt::getSignedMinValue(t->getIntegerBitWidth()));
            bail_unless(B.CreateICmpNE(a.v, minv));
          } else {
            bail_unless(B.CreateICmpEQ(a.v, llvm::ConstantInt::get(t, 0)));
          }
          out = B.CreateNeg(a.v);
          break;
        case ir::UnOp::Pos: out = a.v; break;
        case ir::UnOp::Invert: out = B.CreateNot(a.v); break;
        default: break;
      }
    } else if (is_np(m) && m->dtype == DType::Bool) {
      if (op == ir::UnOp::Invert) out = B.CreateNot(a.v);
      else if (op == ir::UnOp::Pos) out = a.v;
    }
    if (!out) fail(std::string("`") + ir::unop_name(op) + "` on " + a.t->str());
    V x = scalar(rt, out);
    x.tag = result_tag({a}, rt, [&](const std::vector<TypeRef>& ms) { return oracle_.unary(op, ms[0]); });
    return x;
  }

  // Order comparisons with CPython's rules: exact between Python ints and floats; NumPy
  // converts both operands to their common type.
  Value* compare_values(ir::CmpOp op, const V& a, const V& b) {
    TypeRef ma = rep(a.t), mb = rep(b.t);
    auto fcmp = [&](Value* x, Value* y) -> Value* {
      switch (op) {
        case ir::CmpOp::LT: return B.CreateFCmpOLT(x, y);
        case ir::CmpOp::LE: return B.CreateFCmpOLE(x, y);
        case ir::CmpOp::EQ: return B.CreateFCmpOEQ(x, y);
        case ir::CmpOp::NE: return B.CreateFCmpUNE(x, y);
        case ir::CmpOp::GT: return B.CreateFCmpOGT(x, y);
        case ir::CmpOp::GE: return B.CreateFCmpOGE(x, y);
        default: break;
      }
      fail("internal error: comparison");
    };
    auto icmp = [&](Value* x, Value* y, bool s) -> Value* {
      switch (op) {
        case ir::CmpOp::LT: return s ? B.CreateICmpSLT(x, y) : B.CreateICmpULT(x, y);
        case ir::CmpOp::LE: return s ? B.CreateICmpSLE(x, y) : B.CreateICmpULE(x, y);
        case ir::CmpOp::EQ: return B.CreateICmpEQ(x, y);
        case ir::CmpOp::NE: return B.CreateICmpNE(x, y);
        case ir::CmpOp::GT: return s ? B.CreateICmpSGT(x, y) : B.CreateICmpUGT(x, y);
        case ir::CmpOp::GE: return s ? B.CreateICmpSGE(x, y) : B.CreateICmpUGE(x, y);
        default: break;
      }
      fail("internal error: comparison");
    };
    // Floats held as doubles compare as IEEE doubles whoever holds them (float, np.float64).
    if (is_float_t(ma) && is_float_t(mb) && a.v->getType() == b.v->getType() && a.v->getType()->isDoubleTy())
      return fcmp(a.v, b.v);
    if (!any_np(a.t) && !any_np(b.t)) {
      bool fa = is_pyfloat(ma), fb = is_pyfloat(mb);
      if (!fa && !fb) return icmp(as_i64_int(a), as_i64_int(b), true);
      if (fa && fb) return fcmp(a.v, b.v);
      // int vs float: exactly, as CPython compares them (never by rounding the int).
      return int_float_compare(op, as_i64_int(fa ? b : a), fa ? a.v : b.v, fa);
    }
    TypeRef common = oracle_.binary(ir::BinOp::Add, ma, mb);
    if (!common || !is_np(common)) {
      // bool + bool promotes to int in Python but stays numpy.bool: compare as integers.
      if (is_bool_t(ma) && is_bool_t(mb)) return icmp(B.CreateZExt(a.v, i64()), B.CreateZExt(b.v, i64()), true);
      fail("a comparison of " + ma->str() + " and " + mb->str());
    }
    Value* x = numpy_operand(a, common);
    Value* y = numpy_operand(b, common);
    if (dtype_is_float(common->dtype)) return fcmp(x, y);
    return icmp(x, y, common->dtype == DType::Bool ? false : dtype_is_signed(common->dtype));
  }

  // `i OP d` for an int64 `i` and a double `d` (`d OP i` with `flipped`), exactly: the sign of
  // i - d from d's integer part t (i != t decides) and then its fraction, which is exact; d
  // beyond the int64 range is greater or less than every i; NaN is unordered.
  Value* int_float_compare(ir::CmpOp op, Value* i, Value* d, bool flipped) {
    const double two63 = 9223372036854775808.0;
    Value* above = B.CreateFCmpOGE(d, llvm::ConstantFP::get(f64(), two63));
    Value* below = B.CreateFCmpOLT(d, llvm::ConstantFP::get(f64(), -two63));
    Value* nan = B.CreateFCmpUNO(d, d);
    Value* inside = B.CreateNot(B.CreateOr(B.CreateOr(above, below), nan));
    Value* dc = B.CreateSelect(inside, d, llvm::ConstantFP::get(f64(), 0.0));
    Value* t = B.CreateFPToSI(dc, i64());
    Value* frac = B.CreateFSub(dc, B.CreateSIToFP(t, f64()));
    // s: -1, 0, 1 as i is less than, equal to or greater than d (NaN: anything; `nan` decides).
    Value* by_frac = B.CreateSelect(B.CreateFCmpOGT(frac, llvm::ConstantFP::get(f64(), 0.0)), c64(-1),
                                    B.CreateSelect(B.CreateFCmpOLT(frac, llvm::ConstantFP::get(f64(), 0.0)), c64(1), c64(0)));
    Value* s = B.CreateSelect(B.CreateICmpSLT(i, t), c64(-1), B.CreateSelect(B.CreateICmpSGT(i, t), c64(1), by_frac));
    s = B.CreateSelect(above, c64(-1), B.CreateSelect(below, c64(1), s));
    if (flipped) s = B.CreateNeg(s);
    Value* r = nullptr;
    switch (op) {
      case ir::CmpOp::LT: r = B.CreateICmpSLT(s, c64(0)); break;
      case ir::CmpOp::LE: r = B.CreateICmpSLE(s, c64(0)); break;
      case ir::CmpOp::EQ: r = B.CreateICmpEQ(s, c64(0)); break;
      case ir::CmpOp::NE: return B.CreateOr(nan, B.CreateICmpNE(s, c64(0)));
      case ir::CmpOp::GT: r = B.CreateICmpSGT(s, c64(0)); break;
      case ir::CmpOp::GE: r = B.CreateICmpSGE(s, c64(0)); break;
      default: fail("internal error: comparison");
    }
    return B.CreateAnd(B.CreateNot(nan), r);
  }

  V compare(ir::CmpOp op, const V& a, const V& b, const TypeRef& rt) {
    if (op == ir::CmpOp::Is || op == ir::CmpOp::IsNot) {
      // (Of members: dispatch splits a union, `best is None` of a None | float, by its tag.)
      if (a.t->kind == Type::Kind::Union || b.t->kind == Type::Kind::Union) fail("internal error: `is` of a union");
      bool an = a.t->kind == Type::Kind::None, bn = b.t->kind == Type::Kind::None;
      bool same = an && bn;
      return scalar(types::py_bool(), B.getInt1(op == ir::CmpOp::Is ? same : !same));
    }
    return scalar(rt, compare_values(op, a, b));
  }

  // `abs(z) <= 2.0` (a complex number's |z|: CHypot of its parts) against a number C, from
  // 1e-100 to 1e100: s = x*x + y*y decides the comparison without calling hypot wherever
  // it is farther than 2^-40 (relative) from C*C. s is within 2.01 * 2^-53 of x^2 + y^2 and
  // hypot within an ulp of its root, so there hypot is on the same side of C, never
  // equal to it (underflow errors are below 2^-1074, far under C*C * 2^-40; an
  // infinite or NaN s goes to hypot). Elsewhere hypot is called and compared as before,
  // its overflow check included. The Mandelbrot test `while abs(z) <= 2.0` called hypot in
  // every iteration: half of its time.
  Value* hypot_compare(const Expr& e) {
    using CO = ir::CmpOp;
    CO op = e->cmpop;
    if (op != CO::LT && op != CO::LE && op != CO::GT && op != CO::GE && op != CO::EQ && op != CO::NE) return nullptr;
    if (gpu_body_ || hetero(e->type) || !e->type->is_scalar()) return nullptr;
    auto is_hypot = [&](const Expr& x) {
      return x->kind == ExprNode::Kind::Call && x->args.size() == 3 && x->args[0]->type &&
             x->args[0]->type->builtin == Builtin::CHypot && !(is_np(x->type) && x->type->dtype == DType::Float32);
    };
    auto number = [](const Expr& x, double* c) {
      if (x->kind != ExprNode::Kind::Const) return false;
      if (x->value.kind == ir::ConstValue::Kind::Float) *c = x->value.f;
      else if (x->value.kind == ir::ConstValue::Kind::Int && std::abs(x->value.i) <= (int64_t(1) << 53)) *c = (double)x->value.i;
      else return false;
      return *c >= 1e-100 && *c <= 1e100;
    };
    double c = 0;
    const bool left = is_hypot(e->args[0]) && number(e->args[1], &c);
    if (!left && !(is_hypot(e->args[1]) && number(e->args[0], &c))) return nullptr;
    if (!left) {  // C op |z| is |z| op' C
      op = op == CO::LT ? CO::GT : op == CO::LE ? CO::GE : op == CO::GT ? CO::LT : op == CO::GE ? CO::LE : op;
    }
    const Expr& h = e->args[left ? 0 : 1];
    Value* x = as_double(gen(h->args[1]));
    Value* y = as_double(gen(h->args[2]));
    Value* sq = B.CreateFAdd(B.CreateFMul(x, x), B.CreateFMul(y, y));
    const double margin = std::ldexp(1.0, -40);
    Value* below = B.CreateFCmpOLE(sq, llvm::ConstantFP::get(f64(), c * c * (1 - margin)));
    Value* above = B.CreateAnd(B.CreateFCmpOGE(sq, llvm::ConstantFP::get(f64(), c * c * (1 + margin))),
                               B.CreateFCmpOLT(sq, llvm::ConstantFP::getInfinity(f64())));
    const bool if_below = op == CO::LT || op == CO::LE || op == CO::NE;
    const bool if_above = op == CO::GT || op == CO::GE || op == CO::NE;
    Value* decided = B.CreateSelect(below, B.getInt1(if_below), B.getInt1(if_above));
    BasicBlock* from = B.GetInsertBlock();
    BasicBlock* exact = BasicBlock::Create(C, "hypot.exact", F);
    BasicBlock* done = BasicBlock::Create(C, "hypot.done", F);
    cold_branch(B.CreateNot(B.CreateOr(below, above)), exact, done);
    B.SetInsertPoint(exact);
    Value* r = libm2("hypot", x, y);
    defer(isfinite(r));  // as call() does
    V rv = scalar(h->type, r), cv = scalar(types::py_float(), llvm::ConstantFP::get(f64(), c));
    Value* exact_result = compare_values(op, rv, cv);
    BasicBlock* exact_end = B.GetInsertBlock();
    B.CreateBr(done);
    B.SetInsertPoint(done);
    auto* phi = B.CreatePHI(i1(), 2, "hypot.cmp");
    phi->addIncoming(decided, from);
    phi->addIncoming(exact_result, exact_end);
    return phi;
  }

  // ------------------------------------------------------------ calls
  // math.gcd (inline), lcm, isqrt, factorial, comb, perm of Python ints (int_functions.h): -1 where CPython
  // computes the result (beyond 64 bits, or its ValueError).
  V int_function(Builtin f, const std::vector<V>& args, const TypeRef& rt) {
    if (gpu_body_) gpu_refuse(std::string("it calls ") + builtin_name(f));
    Checking checking(this, f == Builtin::MathGcd ? "math.gcd may leave 64 bits"
                            : f == Builtin::MathLcm ? "math.lcm may leave 64 bits"
                            : f == Builtin::MathIsqrt ? "math.isqrt may raise"
                            : f == Builtin::MathComb ? "math.comb may raise or leave 64 bits"
                            : f == Builtin::MathPerm ? "math.perm may raise or leave 64 bits"
                                                      : "math.factorial may raise or leave 64 bits");
    Value* r;
    if (f == Builtin::MathGcd) {
      // Euclid's loop inline, folded over the arguments' magnitudes (unsigned: |-2**63| is
      // 2**63); gcd() is 0.
      auto magnitude = [&](Value* x) { return B.CreateSelect(B.CreateICmpSLT(x, c64(0)), B.CreateSub(c64(0), x), x); };
      r = c64(0);
      for (const V& x : args) {
        Value* b0 = magnitude(as_i64_int(x));
        BasicBlock* pre = B.GetInsertBlock();
        BasicBlock* head = BasicBlock::Create(C, "gcd.head", F);
        BasicBlock* step = BasicBlock::Create(C, "gcd.step", F);
        BasicBlock* done = BasicBlock::Create(C, "gcd.done", F);
        B.CreateBr(head);
        B.SetInsertPoint(head);
        llvm::PHINode* a = B.CreatePHI(i64(), 2, "gcd.a");
        llvm::PHINode* b = B.CreatePHI(i64(), 2, "gcd.b");
        a->addIncoming(r, pre);
        b->addIncoming(b0, pre);
        B.CreateCondBr(B.CreateICmpEQ(b, c64(0)), done, step);
        B.SetInsertPoint(step);
        Value* rem = B.CreateURem(a, b);
        a->addIncoming(b, step);
        b->addIncoming(rem, step);
        B.CreateBr(head);
        B.SetInsertPoint(done);
        r = a;
      }
      // (2**63, negative here, only for gcd(-2**63) and the like: CPython's.)
    } else if (f == Builtin::MathLcm) {
      llvm::IRBuilder<> entry(&F->getEntryBlock(), F->getEntryBlock().begin());
      Value* xs = entry.CreateAlloca(i64(), c64((int64_t)std::max<size_t>(args.size(), 1)), "int.args");
      for (size_t k = 0; k < args.size(); k++) B.CreateStore(as_i64_int(args[k]), B.CreateConstGEP1_64(i64(), xs, k));
      auto* fty = llvm::FunctionType::get(i64(), {i64(), ptr()}, false);
      r = B.CreateCall(fty, runtime_address("stagepy_lcm", reinterpret_cast<void*>(&stagepy_lcm)),
                       {c64((int64_t)args.size()), xs});
    } else if (f == Builtin::MathComb || f == Builtin::MathPerm) {
      auto* fty = llvm::FunctionType::get(i64(), {i64(), i64()}, false);
      const bool comb = f == Builtin::MathComb;
      Value* n = as_i64_int(args[0]);
      r = B.CreateCall(fty, runtime_address(comb ? "stagepy_comb" : "stagepy_perm",
                                            comb ? reinterpret_cast<void*>(&stagepy_comb) : reinterpret_cast<void*>(&stagepy_perm)),
                       {n, args.size() > 1 ? as_i64_int(args[1]) : n});
    } else {
      auto* fty = llvm::FunctionType::get(i64(), {i64()}, false);
      const bool isqrt = f == Builtin::MathIsqrt;
      r = B.CreateCall(fty, runtime_address(isqrt ? "stagepy_isqrt" : "stagepy_factorial",
                                            isqrt ? reinterpret_cast<void*>(&stagepy_isqrt) : reinterpret_cast<void*>(&stagepy_factorial)),
                       {as_i64_int(args[0])});
    }
    bail_unless(B.CreateICmpSGE(r, c64(0)));
    return scalar(rt, r);
  }

  // c.isdigit() ... c.upper() of a character (its code point, an i32): Python's answers for
  // ASCII; any other character goes to CPython, which looks it up in its Unicode database.
  V char_method(Builtin f, const V& c, const TypeRef& rt) {
    if (gpu_body_) gpu_refuse("it calls a method of a character of a str");
    {
      Checking checking(this, "a str method of a character beyond ASCII");
      bail_unless(B.CreateICmpULT(c.v, B.getInt32(128)));
    }
    auto in = [&](char lo, char hi) {
      return B.CreateAnd(B.CreateICmpUGE(c.v, B.getInt32(lo)), B.CreateICmpULE(c.v, B.getInt32(hi)));
    };
    Value* upper = in('A', 'Z');
    Value* lower = in('a', 'z');
    Value* digit = in('0', '9');
    switch (f) {
      case Builtin::CharIsDigit: case Builtin::CharIsDecimal: case Builtin::CharIsNumeric: return scalar(rt, digit);
      case Builtin::CharIsAlpha: return scalar(rt, B.CreateOr(upper, lower));
      case Builtin::CharIsAlnum: return scalar(rt, B.CreateOr(B.CreateOr(upper, lower), digit));
      case Builtin::CharIsSpace:  // \t \n \v \f \r, \x1c-\x1f and the space
        return scalar(rt, B.CreateOr(B.CreateOr(in('\t', '\r'), in('\x1c', '\x1f')), B.CreateICmpEQ(c.v, B.getInt32(' '))));
      case Builtin::CharIsUpper: return scalar(rt, upper);
      case Builtin::CharIsLower: return scalar(rt, lower);
      case Builtin::CharLower: return scalar(rt, B.CreateSelect(upper, B.CreateAdd(c.v, B.getInt32(32)), c.v));
      case Builtin::CharUpper: return scalar(rt, B.CreateSelect(lower, B.CreateSub(c.v, B.getInt32(32)), c.v));
      default: fail("internal error: a character method");
    }
  }

  V call(const Expr& e) {
    Builtin f = e->args[0]->type->builtin;
    if (f == Builtin::ListAppend || f == Builtin::ListPop) return resize_list(e, f);
    if (f == Builtin::NpSum || f == Builtin::NpMax || f == Builtin::NpMin || f == Builtin::NpMean) return np_reduce(e);
    if (f == Builtin::NpDot) return np_dot(e, e->args[1], e->args[2], false);
    if (f == Builtin::CFunc) return complex_function(e);
    if (f == Builtin::NpCLoop) return numpy_complex_loop(e);
    if (f == Builtin::Round32) {  // lowered complex64 arithmetic: a double rounded to float32
      if (Value* r = fast32_update(e)) return scalar(e->type, is_np(e->type) ? r : B.CreateFPExt(r, f64()));
      Value* r = B.CreateFPTrunc(as_double(gen(e->args[1])), B.getFloatTy());
      if (is_np(e->type) && e->type->dtype == DType::Float32) return scalar(e->type, r);
      return scalar(e->type, B.CreateFPExt(r, f64()));
    }
    if (f == Builtin::Cast32) {  // a Python number's part cast to float32 (lower_complex)
      Value* x = as_double(gen(e->args[1]));
      op_origin_ = e->origin;  // the operation's, whose line the warning has
      return scalar(e->type, B.CreateFPExt(cast_to_float32(x), f64()));
    }
    if (f == Builtin::CHypot) {  // |z| of a lowered complex number: the C library's hypot
      Value* x = as_double(gen(e->args[1]));
      Value* y = as_double(gen(e->args[2]));
      if (is_np(e->type) && e->type->dtype == DType::Float32) {  // of a complex64: hypotf (exact parts)
        x = B.CreateFPTrunc(x, B.getFloatTy());
        y = B.CreateFPTrunc(y, B.getFloatTy());
      }
      Value* r = libm2("hypot", x, y);
      defer(isfinite(r));  // CPython raises OverflowError, NumPy warns: CPython redoes it
      return scalar(e->type, r);
    }
    std::vector<V> args;
    for (size_t i = 1; i < e->args.size(); i++) args.push_back(gen(e->args[i]));
    if (f == Builtin::Min || f == Builtin::Max || f == Builtin::Len) return call_values(f, args, e->type);
    if (f == Builtin::NpWhere || f == Builtin::NpClip) return numpy_call(f, args, e->type);  // (no oracle entries)
    if (f == Builtin::Pow) return call_values(f, args, e->type);  // (Python ints and bools: as_i64_int)
    if (f == Builtin::Ord) return scalar(e->type, B.CreateZExt(args[0].v, i64()));  // a code point
    if (ir::is_draw_builtin(f)) {
      const bool memo = draw_memo_on_ && e->origin >= 0;
      if (auto it = draw_memo_.find(e->origin); memo && it != draw_memo_.end()) return it->second;
      V r = random_draw(f, args, e->type);
      if (memo) draw_memo_[e->origin] = r;
      return r;
    }
    if (f == Builtin::MathGcd || f == Builtin::MathLcm || f == Builtin::MathIsqrt || f == Builtin::MathFactorial ||
        f == Builtin::MathComb || f == Builtin::MathPerm)
      return int_function(f, args, e->type);
    if (f >= Builtin::CharIsDigit && f <= Builtin::CharUpper) return char_method(f, args[0], e->type);
    in_domain_ = e->in_domain;
    V out = dispatch(args, e->type, [&](const std::vector<V>& x) {
      TypeRef rt = over_members(x, [&](const std::vector<TypeRef>& m) { return oracle_.call(f, m); });
      return call_values(f, x, rt);
    });
    in_domain_ = false;
    return out;
  }

  // CFunc(fn, part, ar, ai, br, bi): a part of stagepy_cfunc's result. lower_complex asks
  // for both parts of one result in one statement (seg), whose values are all computed
  // from the state at its start: the second part reuses the call made for the first, for
  // the same operand expressions in the same block. Where the call says the result is not
  // CPython's, the statement goes to CPython.
  struct CFuncCall {
    BasicBlock* block;
    int64_t fn;
    std::array<const ir::ExprNode*, 4> operands;
    llvm::AllocaInst* out;
  };
  std::vector<CFuncCall> cfunc_calls_;  // made while seg() evaluates a statement's values
  bool cfunc_memo_ = false;
  // The result of such a call made before in this block, or null.
  llvm::AllocaInst* earlier_call(int64_t fn, const std::array<const ir::ExprNode*, 4>& operands) {
    for (auto& c : cfunc_calls_)
      if (c.block == B.GetInsertBlock() && c.fn == fn && c.operands == operands) return c.out;
    return nullptr;
  }
  void remember_call(int64_t fn, const std::array<const ir::ExprNode*, 4>& operands, llvm::AllocaInst* out) {
    if (cfunc_memo_) cfunc_calls_.push_back({B.GetInsertBlock(), fn, operands, out});
  }
  V complex_function(const Expr& e) {
    const int64_t fn = e->args[1]->value.i, part = e->args[2]->value.i;
    const std::array<const ir::ExprNode*, 4> operands = {e->args[3].get(), e->args[4].get(), e->args[5].get(),
                                                         e->args[6].get()};
    if (llvm::AllocaInst* out = earlier_call(fn, operands)) return cfunc_part(e, out, part);
    std::array<Value*, 4> x;
    for (size_t i = 0; i < 4; i++) x[i] = as_double(gen(e->args[3 + i]));
    llvm::IRBuilder<> entry(&F->getEntryBlock(), F->getEntryBlock().begin());
    llvm::AllocaInst* out = entry.CreateAlloca(llvm::ArrayType::get(f64(), 2), nullptr, "cfunc.out");
    auto* fty = llvm::FunctionType::get(B.getInt32Ty(), {B.getInt32Ty(), f64(), f64(), f64(), f64(), ptr()}, false);
    Value* ok = B.CreateCall(fty, runtime_address("stagepy_cfunc", reinterpret_cast<void*>(&stagepy_cfunc)),
                             {B.getInt32((uint32_t)fn), x[0], x[1], x[2], x[3], out});
    defer(B.CreateICmpNE(ok, B.getInt32(0)));
    remember_call(fn, operands, out);
    return cfunc_part(e, out, part);
  }
  V cfunc_part(const Expr& e, llvm::AllocaInst* out, int64_t part) {
    Value* p = B.CreateConstInBoundsGEP2_32(llvm::ArrayType::get(f64(), 2), out, 0, (unsigned)part);
    return scalar(e->type, B.CreateLoad(f64(), p));
  }

  // NpCLoop(f, dtype, part, re, im): a part of NumPy's loop of ufunc f for complex dtype
  // `dtype` (the oracle's, verified) on the number (re, im), called once for both parts as
  // CFunc is; a result that is not finite goes to CPython.
  V numpy_complex_loop(const Expr& e) {
    const auto f = static_cast<Builtin>(e->args[1]->value.i);
    const auto d = static_cast<DType>(e->args[2]->value.i);
    const int64_t part = e->args[3]->value.i;
    const int64_t key_fn = -1 - (e->args[1]->value.i * 64 + e->args[2]->value.i);  // (CFunc's are >= 0)
    const std::array<const ir::ExprNode*, 4> operands = {e->args[4].get(), e->args[5].get(), nullptr, nullptr};
    if (llvm::AllocaInst* out = earlier_call(key_fn, operands)) return cfunc_part(e, out, part);
    const auto* loop = oracle_.ufunc_loop(f, d);
    if (!loop) fail(std::string("internal error: no loop of ") + builtin_name(f) + " for " + dtype_name(d));
    const bool single = d == DType::Complex64;
    llvm::Type* pt = single ? B.getFloatTy() : f64();
    llvm::Type* pair = llvm::ArrayType::get(pt, 2);
    llvm::Type* doubles = llvm::ArrayType::get(f64(), 2);
    Value* re = as_double(gen(e->args[4]));
    Value* im = as_double(gen(e->args[5]));
    llvm::IRBuilder<> entry(&F->getEntryBlock(), F->getEntryBlock().begin());
    auto* in = entry.CreateAlloca(pair, nullptr, "cloop.in");
    auto* res = entry.CreateAlloca(pair, nullptr, "cloop.out");
    B.CreateStore(single ? B.CreateFPTrunc(re, pt) : re, B.CreateConstInBoundsGEP2_32(pair, in, 0, 0));
    B.CreateStore(single ? B.CreateFPTrunc(im, pt) : im, B.CreateConstInBoundsGEP2_32(pair, in, 0, 1));
    call_ufunc_loop(*loop, f, d, {in, res});
    // The parts as doubles (a complex64's widened: exact), in the array cfunc_part reads.
    auto* out = entry.CreateAlloca(doubles, nullptr, "cloop.parts");
    Value* ok = B.getTrue();
    for (unsigned k = 0; k < 2; k++) {
      Value* v = B.CreateLoad(pt, B.CreateConstInBoundsGEP2_32(pair, res, 0, k));
      ok = B.CreateAnd(ok, isfinite(v));
      B.CreateStore(single ? B.CreateFPExt(v, f64()) : v, B.CreateConstInBoundsGEP2_32(doubles, out, 0, k));
    }
    defer(ok);
    remember_call(key_fn, operands, out);
    return cfunc_part(e, out, part);
  }

  V call_values(Builtin f, const std::vector<V>& args, const TypeRef& rt) {
    Checking checking(this, "a builtin may raise");
    TypeRef r = rep(rt);
    auto tag_for = [&](V x) {
      x.tag = result_tag(args, rt, [&](const std::vector<TypeRef>& m) { return oracle_.call(f, m); });
      return x;
    };
    switch (f) {
      case Builtin::Len: {
        const V& a = args[0];
        if (a.t->kind == Type::Kind::Array) return scalar(types::py_int(), a.shape[0]);
        if (a.t->kind == Type::Kind::Appended) {
          auto* fty = llvm::FunctionType::get(i64(), {ptr()}, false);
          Value* n = B.CreateCall(fty, runtime_address("stagepy_list_len", reinterpret_cast<void*>(&stagepy_list_len)),
                                  {B.CreateIntToPtr(a.v, ptr())});
          return scalar(types::py_int(), n);
        }
        return scalar(types::py_int(), c64((int64_t)a.elems.size()));
      }
      case Builtin::Min:
      case Builtin::Max: {
        // Python keeps the first extreme: min(a, b) is b only if b < a.
        V best = coerce_to(args[0], rt);
        V best_typed = args[0];
        for (size_t i = 1; i < args.size(); i++) {
          V cand = coerce_to(args[i], rt);
          ir::CmpOp op = f == Builtin::Min ? ir::CmpOp::LT : ir::CmpOp::GT;
          V take = dispatch({args[i], best_typed}, types::py_bool(), [&](const std::vector<V>& x) {
            return scalar(types::py_bool(), compare_values(op, x[0], x[1]));
          });
          best.v = B.CreateSelect(take.v, cand.v, best.v);
          if (best.tag) best.tag = B.CreateSelect(take.v, cand.tag, best.tag);
          best.t = rt;
          best_typed = best;
        }
        return best;
      }
      case Builtin::Abs: {
        const V& a = args[0];
        TypeRef m = rep(a.t);
        if (is_pyint(m) || is_pybool(m)) {
          Value* x = as_i64_int(a);
          bail_unless(B.CreateICmpNE(x, c64(INT64_MIN)));
          return scalar(rt, B.CreateSelect(B.CreateICmpSLT(x, c64(0)), B.CreateNeg(x), x));
        }
        if (is_float_t(m)) return tag_for(scalar(rt, B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, a.v)));
        if (is_np(m) && dtype_is_int(m->dtype)) {
          if (!dtype_is_signed(m->dtype)) return scalar(rt, a.v);
          llvm::Type* t = a.v->getType();
          Value* minv = llvm::ConstantInt::get(t, llvm::APInt::getSignedMinValue(t->getIntegerBitWidth()));
          bail_unless(B.CreateICmpNE(a.v, minv));
          return scalar(rt, B.CreateSelect(B.CreateICmpSLT(a.v, llvm::ConstantInt::get(t, 0)), B.CreateNeg(a.v), a.v));
        }
        if (is_np(m) && m->dtype == DType::Bool) return scalar(rt, a.v);
        break;
      }
      case Builtin::Int: {
        const V& a = args[0];
        TypeRef m = rep(a.t);
        if (is_float_t(m)) return scalar(rt, float_to_int(as_double(a), false));
        return scalar(rt, as_i64_int(a));
      }
      case Builtin::Pow: {
        // pow(a, b, m) of Python ints (type_infer: a ** b otherwise); CPython computes the
        // cases the runtime leaves to it (m == 0, b < 0).
        if (args.size() != 3) break;
        if (gpu_body_) gpu_refuse("it calls pow() with a modulus");
        Checking checking(this, "pow() with a modulus may raise");
        llvm::IRBuilder<> entry(&F->getEntryBlock(), F->getEntryBlock().begin());
        llvm::AllocaInst* out = entry.CreateAlloca(i64(), nullptr, "powmod.out");
        auto* fty = llvm::FunctionType::get(B.getInt32Ty(), {i64(), i64(), i64(), ptr()}, false);
        Value* ok = B.CreateCall(fty, runtime_address("stagepy_powmod", reinterpret_cast<void*>(&stagepy_powmod)),
                                 {as_i64_int(args[0]), as_i64_int(args[1]), as_i64_int(args[2]), out});
        bail_unless(B.CreateICmpNE(ok, B.getInt32(0)));
        return scalar(rt, B.CreateLoad(i64(), out));
      }
      case Builtin::Float: return scalar(rt, as_double(args[0]));
      case Builtin::Bool: return scalar(rt, truth(args[0]));
      case Builtin::Round: {
        const V& a = args[0];
        TypeRef m = rep(a.t);
        if (is_float_t(m)) return scalar(rt, float_to_int(as_double(a), true));
        if (is_int_t(r)) return scalar(rt, as_i64_int(a));
        break;
      }
      default: break;
    }
    if (auto d = specialize::numpy_type_dtype(f)) {
      // np.float32(x)...: the conversion NumPy makes when it stores x into an element of
      // that dtype (the same rules: a Python int must fit, a float is truncated, a value
      // out of range goes to CPython, which raises or warns).
      if (*d == DType::Bool) return scalar(rt, truth(args[0]));
      return scalar(rt, to_dtype(args[0], *d));
    }
    if (specialize::is_math_builtin(f)) return math_call(f, args, rt);
    if (specialize::is_numpy_builtin(f)) return numpy_call(f, args, rt);
    fail(std::string("calls ") + builtin_name(f) + "()");
  }

  // int(x) (truncation) or round(x) (half to even) of a double, as a Python int.
  Value* float_to_int(Value* x, bool round_even) {
    Checking checking(this, "a float may not convert to an int");
    Value* y = round_even ? B.CreateUnaryIntrinsic(llvm::Intrinsic::rint, x) : x;
    // Finite and within int64 (2**63 is the first double out of range).
    Value* lo = llvm::ConstantFP::get(f64(), -9223372036854775808.0);
    Value* hi = llvm::ConstantFP::get(f64(), 9223372036854775808.0);
    bail_unless(B.CreateAnd(B.CreateFCmpOGE(y, lo), B.CreateFCmpOLT(y, hi)));
    return B.CreateFPToSI(y, i64());
  }

  V math_call(Builtin f, const std::vector<V>& args, const TypeRef& rt) {
    Checking checking(this, "a math function may raise");
    Value* x = as_double(args[0]);
    Value* y = args.size() > 1 ? as_double(args[1]) : nullptr;
    // math_1's rule: a NaN from a non-NaN argument is a domain error, an infinity from a
    // finite one an overflow (or domain) error.
    auto checked = [&](Value* res) {
      defer(isfinite(res));  // conservative: CPython recomputes any non-finite result
      return scalar(rt, res);
    };
    // A call prove_domains showed in its domain: for sqrt and the logarithms, a
    // non-finite result then comes from a non-finite argument, which CPython returns too.
    auto in_domain = [&](Value* res) { return in_domain_ ? scalar(rt, res) : checked(res); };
    switch (f) {
      case Builtin::MathSqrt: {
        // sqrt's only error: an argument below zero (math domain error). sqrt(-0.0),
        // sqrt(inf) and sqrt(nan) return what they compute.
        if (!in_domain_) defer(B.CreateFCmpUGE(x, llvm::ConstantFP::get(f64(), 0.0)));
        return scalar(rt, libm1("sqrt", x));
      }
      case Builtin::MathExp: return checked(libm1("exp", x));
      case Builtin::MathLog: return in_domain(libm1("log", x));
      case Builtin::MathLog2: return in_domain(libm1("log2", x));
      case Builtin::MathLog10: return in_domain(libm1("log10", x));
      case Builtin::MathSin: return checked(libm1("sin", x));
      case Builtin::MathCos: return checked(libm1("cos", x));
      case Builtin::MathTan: return checked(libm1("tan", x));
      case Builtin::MathAsin: return checked(libm1("asin", x));
      case Builtin::MathAcos: return checked(libm1("acos", x));
      case Builtin::MathAtan: return checked(libm1("atan", x));
      case Builtin::MathSinh: return checked(libm1("sinh", x));
      case Builtin::MathCosh: return checked(libm1("cosh", x));
      case Builtin::MathTanh: return checked(libm1("tanh", x));
      case Builtin::MathExpm1: return checked(libm1("expm1", x));
      case Builtin::MathLog1p: return in_domain(libm1("log1p", x));
      // (CPython's math module calls libm for these too: the same results, bit for bit)
      case Builtin::MathErf: return checked(libm1("erf", x));
      case Builtin::MathErfc: return checked(libm1("erfc", x));
      case Builtin::MathAsinh: return checked(libm1("asinh", x));
      case Builtin::MathAcosh: return checked(libm1("acosh", x));
      case Builtin::MathAtanh: return checked(libm1("atanh", x));
      case Builtin::MathCbrt: return checked(libm1("cbrt", x));
      case Builtin::MathExp2: return checked(libm1("exp2", x));
      // x * (180 / pi) and x * (pi / 180), CPython's constants; no error (an overflow is inf)
      case Builtin::MathDegrees: return scalar(rt, B.CreateFMul(x, llvm::ConstantFP::get(f64(), 180.0 / M_PI)));
      case Builtin::MathRadians: return scalar(rt, B.CreateFMul(x, llvm::ConstantFP::get(f64(), M_PI / 180.0)));
      case Builtin::MathFabs: return scalar(rt, B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x));
      case Builtin::MathFloor: return scalar(rt, float_to_int(B.CreateUnaryIntrinsic(llvm::Intrinsic::floor, x), false));
      case Builtin::MathCeil: return scalar(rt, float_to_int(B.CreateUnaryIntrinsic(llvm::Intrinsic::ceil, x), false));
      case Builtin::MathTrunc: return scalar(rt, float_to_int(x, false));
      case Builtin::MathIsnan: return scalar(rt, isnan(x));
      case Builtin::MathIsinf: return scalar(rt, B.CreateAnd(B.CreateNot(isfinite(x)), B.CreateNot(isnan(x))));
      case Builtin::MathIsfinite: return scalar(rt, isfinite(x));
      case Builtin::MathAtan2: return scalar(rt, libm2("atan2", x, y));
      case Builtin::MathCopysign: return scalar(rt, libm2("copysign", x, y));
      case Builtin::MathPow: {
        // math.pow: 0 ** negative and negative ** fraction are domain errors.
        Value* zero = llvm::ConstantFP::get(f64(), 0.0);
        Value* bad0 = B.CreateAnd(B.CreateFCmpOEQ(x, zero), B.CreateFCmpOLT(y, zero));
        bail_unless(B.CreateNot(bad0));
        return checked(libm2("pow", x, y));
      }
      case Builtin::MathFmod: return checked(libm2("fmod", x, y));
      case Builtin::MathHypot: {  // CPython's own vector_norm (never raises)
        if (gpu_body_) gpu_refuse("it calls math.hypot, CPython's own code, which runs on the host");
        auto* fty = llvm::FunctionType::get(f64(), {f64(), f64()}, false);
        return scalar(rt, B.CreateCall(fty, runtime_address("stagepy_math_hypot", reinterpret_cast<void*>(&stagepy_math_hypot)), {x, y}));
      }
      default: break;
    }
    fail(std::string("calls ") + builtin_name(f) + "()");
  }

  V numpy_call(Builtin f, const std::vector<V>& args, const TypeRef& rt) {
    Checking checking(this, "a NumPy function may warn");
    TypeRef r = rep(rt);
    if (f == Builtin::NpWhere) {
      // where(c, x, y): c's truth picks x or y, each as the result's type.
      Value* c = truth(args[0]);
      return scalar(rt, B.CreateSelect(c, numpy_operand(args[1], r), numpy_operand(args[2], r)));
    }
    if (f == Builtin::NpClip) {
      // NumPy's clip loop: m = x >= lo ? x : lo (a NaN x stays), then m <= hi ? m : hi (a
      // NaN m stays); a NaN bound comes through. Which zero it keeps follows from that.
      Value* x = numpy_operand(args[0], r);
      Value* lo = numpy_operand(args[1], r);
      Value* hi = numpy_operand(args[2], r);
      if (dtype_is_float(r->dtype)) {
        Value* m = B.CreateSelect(B.CreateOr(isnan(x), B.CreateFCmpOGE(x, lo)), x, lo);
        return scalar(rt, B.CreateSelect(B.CreateOr(isnan(m), B.CreateFCmpOLE(m, hi)), m, hi));
      }
      const bool s = r->dtype != DType::Bool && dtype_is_signed(r->dtype);
      Value* m = B.CreateSelect(s ? B.CreateICmpSGE(x, lo) : B.CreateICmpUGE(x, lo), x, lo);
      return scalar(rt, B.CreateSelect(s ? B.CreateICmpSLE(m, hi) : B.CreateICmpULE(m, hi), m, hi));
    }
    if (f == Builtin::NpIsnan || f == Builtin::NpIsinf || f == Builtin::NpIsfinite) {
      TypeRef m = rep(args[0].t);
      if (!is_float_t(m)) return scalar(rt, B.getInt1(f == Builtin::NpIsfinite));
      Value* x = args[0].v;
      if (f == Builtin::NpIsnan) return scalar(rt, isnan(x));
      if (f == Builtin::NpIsfinite) return scalar(rt, isfinite(x));
      return scalar(rt, B.CreateAnd(B.CreateNot(isfinite(x)), B.CreateNot(isnan(x))));
    }
    if (!is_np(r)) fail(std::string("calls ") + builtin_name(f) + "()");
    Value* x = numpy_operand(args[0], r);
    Value* y = args.size() > 1 ? numpy_operand(args[1], r) : nullptr;
    bool fl = dtype_is_float(r->dtype);
    auto guard = [&](Value* res) {
      defer(isfinite(res));
      return res;
    };
    switch (f) {
      case Builtin::NpSqrt:
        if (fl) return scalar(rt, guard(B.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x)));
        break;
      case Builtin::NpAbs:
      case Builtin::NpFabs:
        if (fl) return scalar(rt, B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x));
        if (dtype_is_int(r->dtype)) {
          if (!dtype_is_signed(r->dtype)) return scalar(rt, x);
          llvm::Type* t = x->getType();
          Value* minv = llvm::ConstantInt::get(t, llvm::APInt::getSignedMinValue(t->getIntegerBitWidth()));
          bail_unless(B.CreateICmpNE(x, minv));
          return scalar(rt, B.CreateSelect(B.CreateICmpSLT(x, llvm::ConstantInt::get(t, 0)), B.CreateNeg(x), x));
        }
        break;
      case Builtin::NpFloor:
      case Builtin::NpCeil:
      case Builtin::NpTrunc:
      case Builtin::NpRint: {
        if (!fl) {  // NumPy 2's integer and bool loops return their operand
          if (dtype_is_int(r->dtype) || r->dtype == DType::Bool) return scalar(rt, x);
          break;
        }
        auto id = f == Builtin::NpFloor ? llvm::Intrinsic::floor
                  : f == Builtin::NpCeil ? llvm::Intrinsic::ceil
                  : f == Builtin::NpTrunc ? llvm::Intrinsic::trunc
                                          : llvm::Intrinsic::roundeven;  // rint: halves to even
        return scalar(rt, B.CreateUnaryIntrinsic(id, x));
      }
      case Builtin::NpSign: {
        llvm::Type* t = x->getType();
        if (fl) {  // NaN stays NaN, both zeros give +0.0
          Value* v = B.CreateSelect(B.CreateFCmpOGT(x, llvm::ConstantFP::get(t, 0.0)), llvm::ConstantFP::get(t, 1.0),
                                    B.CreateSelect(B.CreateFCmpOLT(x, llvm::ConstantFP::get(t, 0.0)),
                                                   llvm::ConstantFP::get(t, -1.0), llvm::ConstantFP::get(t, 0.0)));
          return scalar(rt, B.CreateSelect(isnan(x), x, v));
        }
        if (!dtype_is_int(r->dtype)) break;
        Value* zero = llvm::ConstantInt::get(t, 0);
        Value* pos = B.CreateZExt(B.CreateICmpNE(x, zero), t);
        if (!dtype_is_signed(r->dtype)) return scalar(rt, pos);
        return scalar(rt, B.CreateSelect(B.CreateICmpSLT(x, zero), llvm::ConstantInt::getSigned(t, -1), pos));
      }
      case Builtin::NpSquare:
        if (fl) return scalar(rt, guard(B.CreateFMul(x, x)));
        if (dtype_is_int(r->dtype)) return scalar(rt, B.CreateMul(x, x));  // wraps, as NumPy's loop does
        break;
      case Builtin::NpCopysign:
        if (fl) return scalar(rt, B.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, x, y));
        break;
      case Builtin::NpMinimum:
      case Builtin::NpMaximum: {
        bool mx = f == Builtin::NpMaximum;
        if (fl) {  // NaN propagates
          // NumPy 2 keeps the first operand only where it is strictly larger (smaller), so a
          // tie of -0.0 and +0.0 gives the second, in its scalar and array loops alike
          // (np.maximum(-0.0, 0.0) is 0.0, np.maximum(0.0, -0.0) is -0.0). With NumPy 1.x,
          // whose operations stagepy verifies less, the first (not checked against it).
          const bool strict = oracle_.numpy_weak_scalars;
          Value* pick = mx ? (strict ? B.CreateFCmpOGT(x, y) : B.CreateFCmpOGE(x, y))
                           : (strict ? B.CreateFCmpOLT(x, y) : B.CreateFCmpOLE(x, y));
          Value* v = B.CreateSelect(pick, x, y);
          v = B.CreateSelect(isnan(x), x, v);
          return scalar(rt, v);
        }
        bool s = r->dtype != DType::Bool && dtype_is_signed(r->dtype);
        Value* pick = mx ? (s ? B.CreateICmpSGE(x, y) : B.CreateICmpUGE(x, y))
                         : (s ? B.CreateICmpSLE(x, y) : B.CreateICmpULE(x, y));
        return scalar(rt, B.CreateSelect(pick, x, y));
      }
      default: break;
    }
    if (fl) {
      if (const auto* loop = oracle_.ufunc_loop(f, r->dtype)) {
        if (elementwise_ && !loop->arrays)
          fail(std::string("calls ") + builtin_name(f) + "() on arrays of " + dtype_name(r->dtype) +
               " (NumPy's loop for it did not give the ufunc's values for arrays in stagepy's self-test)");
        return scalar(rt, guard(ufunc_call(*loop, f, r->dtype, x, y)));
      }
    }
    fail(std::string("calls ") + builtin_name(f) + "() for " + r->str() + " (no verified NumPy loop for it)");
  }

  // Calls NumPy's inner loop for one element of real numbers x (and y).
  Value* ufunc_call(const specialize::Oracle::UfuncLoop& loop, Builtin f, DType d, Value* x, Value* y) {
    llvm::Type* t = x->getType();
    llvm::IRBuilder<> entry(&F->getEntryBlock(), F->getEntryBlock().begin());
    std::vector<Value*> slots;
    for (int k = 0; k < (y ? 3 : 2); k++) slots.push_back(entry.CreateAlloca(t));
    B.CreateStore(x, slots[0]);
    if (y) B.CreateStore(y, slots[1]);
    call_ufunc_loop(loop, f, d, slots);
    return B.CreateLoad(t, slots.back());
  }
  // loop(args, dimensions, steps, data) for one element: `slots` hold the operands and
  // receive the result (the last).
  void call_ufunc_loop(const specialize::Oracle::UfuncLoop& loop, Builtin f, DType d, const std::vector<Value*>& slots) {
    if (gpu_body_) gpu_refuse("it calls one of NumPy's ufunc loops, which run on the host");
    llvm::IRBuilder<> entry(&F->getEntryBlock(), F->getEntryBlock().begin());
    const unsigned nargs = (unsigned)slots.size();
    auto* args = entry.CreateAlloca(llvm::ArrayType::get(ptr(), nargs));
    auto* steps = entry.CreateAlloca(llvm::ArrayType::get(i64(), nargs));
    auto* dims = entry.CreateAlloca(i64());
    for (unsigned k = 0; k < nargs; k++) {
      B.CreateStore(slots[k], B.CreateConstGEP2_32(args->getAllocatedType(), args, 0, k));
      B.CreateStore(c64(0), B.CreateConstGEP2_32(steps->getAllocatedType(), steps, 0, k));
    }
    B.CreateStore(c64(1), dims);
    auto* fty = llvm::FunctionType::get(B.getVoidTy(), {ptr(), ptr(), ptr(), ptr()}, false);
    // Named for what it computes: the loop NumPy has for (f, d) in this process.
    const std::string loop_name = std::string("stagepy.ufunc.") + builtin_name(f) + "." + dtype_name(d);
    Value* fn = runtime_address(loop_name + ".fn", loop.fn);
    Value* data = runtime_address(loop_name + ".data", loop.data);
    B.CreateCall(fty, fn, {args, dims, steps, data});
  }

  // ------------------------------------------------------------ stores
  // A double `f` narrowed to float32 `r`: where that overflows NumPy warns "overflow
  // encountered in cast" (CPython redoes the statement), unless np.errstate ignores it.
  void cast_overflow_check(Value* r, Value* f) {
    if (options_.fp == FpMode::Ignore) return;
    defer(B.CreateNot(cast_overflowed(f, r)));
  }
  // Whether narrowing the double `f` to float32 `r` made a finite number infinite.
  Value* cast_overflowed(Value* f, Value* r) { return B.CreateAnd(isfinite(f), B.CreateNot(isfinite(r))); }
  // A number NumPy casts to float32 before an operation (a Python float operand of a
  // float32 or complex64 one): where a finite value becomes infinite NumPy warns "overflow
  // encountered in cast" and computes on with the infinity, which is what this records
  // (a warning site of its own, before the operation's: NumPy casts first).
  Value* cast_to_float32(Value* f) {
    Checking checking(this, "a number cast to float32 may overflow");
    Value* r = B.CreateFPTrunc(f, B.getFloatTy());
    np_overflow_warning("cast", DType::Float32, cast_overflowed(f, r));
    return r;
  }
  // The value NumPy stores into an element of dtype `d` (checked as NumPy would raise or
  // warn); computed before any effect of the statement.
  Value* to_dtype(const V& x, DType d) {
    Checking checking(this, "a value may not fit the array's dtype");
    if (hetero(x.t)) return per_member(x, [&](const V& y) { return to_dtype(y, d); });
    TypeRef m = rep(x.t);
    llvm::Type* mt = mem_ty(d);
    if (d == DType::Bool) return B.CreateZExt(truth(x), i8());
    if (dtype_is_float(d)) {
      if (is_bool_t(m)) return B.CreateUIToFP(x.v, mt);
      if (is_pyint(m)) {
        if (d == DType::Float32) bail_unless(int_fits_float32(x.v));
        return B.CreateSIToFP(x.v, mt);
      }
      if (is_int_t(m)) return is_unsigned(m) ? B.CreateUIToFP(x.v, mt) : B.CreateSIToFP(x.v, mt);
      Value* f = x.v;
      if (f->getType() == mt) return f;
      if (mt->isFloatTy()) {
        Value* r = B.CreateFPTrunc(f, mt);
        cast_overflow_check(r, f);
        return r;
      }
      return B.CreateFPExt(f, mt);
    }
    // Integer element.
    auto [lo, hi] = int_range(d);
    bool u64 = d == DType::UInt64;
    if (is_bool_t(m)) return B.CreateZExt(x.v, mt);
    if (is_float_t(m)) {
      Value* f = as_double(x);
      // In range (and finite); otherwise NumPy raises or warns.
      double flo = (double)lo;
      double fhi = u64 ? 18446744073709551616.0 : (double)hi + 1.0;
      bail_unless(B.CreateAnd(B.CreateFCmpOGT(f, llvm::ConstantFP::get(f64(), flo - 1.0)),
                              B.CreateFCmpOLT(f, llvm::ConstantFP::get(f64(), fhi))));
      Value* t = B.CreateUnaryIntrinsic(llvm::Intrinsic::trunc, f);
      Value* i = u64 ? B.CreateFPToUI(t, i64()) : B.CreateFPToSI(t, i64());
      return B.CreateTrunc(i, mt);
    }
    if (is_int_t(m)) {
      // A NumPy integer whose dtype's values all fit (int32 into int32, uint8 into int16)
      // needs no check: its representation holds nothing else.
      if (is_np(m) && dtype_size(m->dtype) < 8) {
        auto [mlo, mhi] = int_range(m->dtype);
        if (mlo >= lo && mhi <= hi) return B.CreateTrunc(as_i64_int(x), mt);
      }
      Value* v;
      if (is_np(m) && m->dtype == DType::UInt64) {
        if (!u64) bail_unless(B.CreateICmpSGE(x.v, c64(0)));  // above int64 max: out of range
        v = x.v;
      } else {
        v = as_i64_int(x);
      }
      if (!(u64 && is_np(m) && m->dtype == DType::UInt64)) bail_unless(int_fits(v, d));
      return B.CreateTrunc(v, mt);
    }
    fail("stores a " + x.t->str() + " into a " + std::string(dtype_name(d)) + " array");
  }

  // ------------------------------------------------------------ statements
  // STAGEPY_DEBUG_BAIL: count down at every statement; stop there at zero (testing only).
  // ------------------------------------------------------------ random draws
  // The kernel's RandomDraws, in its entry block (its generator null until begun: a way out
  // before that undoes nothing), begun here.
  void begin_draws(bool gauss, unsigned sources) {
    draws_gauss_ = gauss;
    rng_fn_ = F;
    llvm::IRBuilder<> entry(&F->getEntryBlock(), F->getEntryBlock().begin());
    for (int k = 0; k < 2; k++) {
      if (!(sources & (1u << k))) continue;
      llvm::AllocaInst* r = entry.CreateAlloca(i8(), c64((int64_t)sizeof(RandomDraws)), k ? "np.random.draws" : "random.draws");
      r->setAlignment(llvm::Align(8));
      entry.CreateStore(llvm::ConstantPointerNull::get(llvm::PointerType::get(C, 0)), r);
      auto* fty = llvm::FunctionType::get(B.getVoidTy(), {ptr()}, false);
      if (k == 0)
        B.CreateCall(fty, runtime_address("stagepy_random_begin", reinterpret_cast<void*>(&stagepy_random_begin)), {r});
      else
        B.CreateCall(fty, runtime_address("stagepy_np_random_begin", reinterpret_cast<void*>(&stagepy_np_random_begin)), {r});
      rngs_[(size_t)k] = r;
    }
  }
  // The statement log's record, empty, and its cursors, in the entry block.
  void begin_statement_log() {
    llvm::IRBuilder<> entry(&F->getEntryBlock(), F->getEntryBlock().begin());
    llvm::AllocaInst* slots = entry.CreateAlloca(i64(), c64(kUndoSlots), "stmt.log");
    for (int k = 0; k < kUndoSlots; k++) entry.CreateStore(c64(0), entry.CreateConstGEP1_64(i64(), slots, k));
    llvm::AllocaInst* cur = entry.CreateAlloca(ptr(), nullptr, "stmt.log.cur");
    llvm::AllocaInst* end = entry.CreateAlloca(ptr(), nullptr, "stmt.log.end");
    entry.CreateStore(llvm::ConstantPointerNull::get(llvm::PointerType::get(C, 0)), cur);
    entry.CreateStore(llvm::ConstantPointerNull::get(llvm::PointerType::get(C, 0)), end);
    stmt_log_ = StoreLog{cur, end, slots, true};
  }
  // Where statement `r` starts (in the kernel's own function), unless it continues the one
  // before (`after`, the resume point of the statement before it in its block) or the one it
  // is inside (an inlined call's loop): the statement before completed, and what it drew and
  // logged stays (the draws are committed, the log starts over).
  void commit_before(int r, int after) {
    if (r < 0 || F != main_fn_ || (!rng_fn_ && !stmt_log_)) return;
    if (after == r || (!enclosing_resumes_.empty() && enclosing_resumes_.back() == r)) return;
    if (F == rng_fn_) commit_draws();
    if (stmt_log_)
      B.CreateStore(B.CreateIntToPtr(B.CreateLoad(i64(), B.CreateConstGEP1_64(i64(), stmt_log_->slots, 2)), ptr()),
                    stmt_log_->cur);
  }
  // The draws so far stay: the statements that made them completed (stagepy_random_commit).
  void commit_draws() {
    static_assert(offsetof(RandomDraws, index) == 8 && offsetof(RandomDraws, index0) == 16 &&
                  offsetof(RandomDraws, refilled) == 20, "RandomDraws layout");
    for (llvm::AllocaInst* r : rngs_) {
      if (!r) continue;
      Value* index = B.CreateLoad(ptr(), B.CreateConstGEP1_64(i8(), r, 8));
      B.CreateStore(B.CreateLoad(B.getInt32Ty(), index), B.CreateConstGEP1_64(i8(), r, 16));
      B.CreateStore(B.getInt32(0), B.CreateConstGEP1_64(i8(), r, 20));
      if (draws_gauss_)  // the twin as it is now stays too
        B.CreateMemCpy(B.CreateConstGEP1_64(i8(), r, offsetof(RandomDraws, gauss0)), llvm::Align(8),
                       B.CreateConstGEP1_64(i8(), r, offsetof(RandomDraws, gauss)), llvm::Align(8),
                       sizeof(stagepy::backends::cpu::GaussNext));
    }
  }
  // A draw: the random module's random(), gauss()/normalvariate()'s z, expovariate()'s
  // -log(1 - u), Random._randbelow(n) (n <= 0: random.randrange's ValueError, from CPython);
  // np.random's through numpy_draw.
  V random_draw(Builtin f, const std::vector<V>& args, const TypeRef& rt) {
    if (gpu_body_) gpu_refuse("it draws random numbers (the random module), in CPython's order");
    const bool np_source = ir::random_source(f) == 1;
    llvm::AllocaInst* rng = rngs_[np_source ? 1 : 0];
    if (!rng || F != rng_fn_) fail("internal error: a random draw outside the kernel's own function");
    auto* fty = llvm::FunctionType::get(f64(), {ptr()}, false);
    if (np_source) return numpy_draw(f, args, rt, rng);
    switch (f) {
      case Builtin::RandomRandom:
        return scalar(rt, B.CreateCall(fty, runtime_address("stagepy_random_random", reinterpret_cast<void*>(&stagepy_random_random)),
                                       {rng}));
      case Builtin::RandomNormalZ:
        return scalar(rt, B.CreateCall(fty, runtime_address("stagepy_random_normal", reinterpret_cast<void*>(&stagepy_random_normal)),
                                       {rng}));
      case Builtin::RandomExpoZ:
        return scalar(rt, B.CreateCall(fty, runtime_address("stagepy_random_expo", reinterpret_cast<void*>(&stagepy_random_expo)),
                                       {rng}));
      case Builtin::RandomGaussZ: {
        Value* z = B.CreateCall(fty, runtime_address("stagepy_random_gauss", reinterpret_cast<void*>(&stagepy_random_gauss)), {rng});
        Checking checking(this, "random.gauss() finds the generator's gauss_next neither None nor a float");
        bail_unless(B.CreateFCmpORD(z, z));
        return scalar(rt, z);
      }
      default: break;
    }
    Value* n = as_i64_int(args[0]);
    {
      Checking checking(this, "random.randrange() or randint() may be given an empty range");
      bail_unless(B.CreateICmpSGT(n, c64(0)));
    }
    auto* bty = llvm::FunctionType::get(i64(), {ptr(), i64()}, false);
    return scalar(rt, B.CreateCall(bty, runtime_address("stagepy_random_below", reinterpret_cast<void*>(&stagepy_random_below)),
                                   {rng, n}));
  }

  // np.random's functions of NumPy's global RandomState (legacy: RandomState's own
  // algorithms). Each checks what NumPy checks before it draws (an error: the statement goes
  // to CPython, which raises it): randint's low < high, uniform's finite high - low, a
  // scale's sign (-0.0 is negative to NumPy; NaN passes).
  V numpy_draw(Builtin f, const std::vector<V>& args, const TypeRef& rt, llvm::AllocaInst* rng) {
    auto* fty = llvm::FunctionType::get(f64(), {ptr()}, false);
    auto call0 = [&](const char* name, void* fn) { return B.CreateCall(fty, runtime_address(name, fn), {rng}); };
    auto scale_ok = [&](Value* scale, const char* why) {
      Checking checking(this, why);
      Value* bits = B.CreateBitCast(scale, i64());
      bail_unless(B.CreateOr(B.CreateICmpSGE(bits, c64(0)), B.CreateFCmpUNO(scale, scale)));
    };
    switch (f) {
      case Builtin::NpRandomRandom:
        return scalar(rt, call0("stagepy_random_random", reinterpret_cast<void*>(&stagepy_random_random)));
      case Builtin::NpRandomUniform: {
        Value* lo = as_double(args[0]);
        Value* range = B.CreateFSub(as_double(args[1]), lo);
        {
          Checking checking(this, "np.random.uniform() may be given a range that is not finite");
          bail_unless(B.CreateFCmpOLT(B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, range), llvm::ConstantFP::getInfinity(f64())));
        }
        Value* u = call0("stagepy_random_random", reinterpret_cast<void*>(&stagepy_random_random));
        return scalar(rt, B.CreateFAdd(lo, B.CreateFMul(range, u)));
      }
      case Builtin::NpRandomStandardNormal: case Builtin::NpRandomNormal: {
        Value* loc = nullptr;
        Value* scale = nullptr;
        if (f == Builtin::NpRandomNormal) {
          loc = as_double(args[0]);
          scale = as_double(args[1]);
          scale_ok(scale, "np.random.normal() may be given a negative scale");
        }
        Value* z = call0("stagepy_np_gauss", reinterpret_cast<void*>(&stagepy_np_gauss));
        {
          Checking checking(this, "np.random's generator state could not be read");
          bail_unless(B.CreateFCmpORD(z, z));
        }
        return scalar(rt, loc ? B.CreateFAdd(loc, B.CreateFMul(scale, z)) : z);
      }
      case Builtin::NpRandomExponential: {
        Value* scale = as_double(args[0]);
        scale_ok(scale, "np.random.exponential() may be given a negative scale");
        Value* e = call0("stagepy_random_expo", reinterpret_cast<void*>(&stagepy_random_expo));
        return scalar(rt, B.CreateFMul(scale, e));
      }
      case Builtin::NpRandomRandint: {
        Value* lo = args.size() == 2 ? as_i64_int(args[0]) : c64(0);
        Value* hi = as_i64_int(args.back());
        {
          Checking checking(this, "np.random.randint() may be given low >= high");
          bail_unless(B.CreateICmpSLT(lo, hi));
        }
        auto* ity = llvm::FunctionType::get(i64(), {ptr(), i64(), i64()}, false);
        return scalar(rt, B.CreateCall(ity, runtime_address("stagepy_np_randint", reinterpret_cast<void*>(&stagepy_np_randint)),
                                       {rng, lo, hi}));
      }
      default: fail(std::string("internal error: a draw of ") + builtin_name(f));
    }
  }

  void forced_bail(int resume) {
    if (debug_bail_period() <= 0 || resume < 0) return;
    resume_ = resume;
    Value* addr = runtime_address("stagepy.debug_bail_counter", debug_bail_counter());
    Value* c = B.CreateSub(B.CreateLoad(i64(), addr), c64(1));
    B.CreateStore(c, addr);
    bail_unless(B.CreateICmpNE(c, c64(0)));
  }

  // The resume point of the first statement `s` runs, or -1.
  static int first_resume(const Stmt& s) {
    using K = StmtNode::Kind;
    if (s->kind == K::Block) return s->body.empty() ? -1 : first_resume(s->body[0]);
    if (s->kind == K::Seg || s->kind == K::Range || s->kind == K::If) return s->resume;
    return -1;
  }
  // At the top of a loop body: a pending signal hands the body's first statement to
  // CPython, which runs the Python signal handler (KeyboardInterrupt) in the loop. Not in
  // bodies run on threads, which never hand over, except speculative ones (spec_bad_):
  // their threads stop, and the sequential version that runs instead hands over.
  //
  // spec_bad_, set in a body that may run speculatively: whether a deferred check failed so
  // far in this run (defer); soft_checks_: how many such checks there are. Tested before
  // each loop (a for's range, a while's test), so values gone wrong never drive a loop on,
  // and where the run ends.
  llvm::AllocaInst* spec_bad_ = nullptr;
  int soft_checks_ = 0;
  void soft_checkpoint() {
    if (!spec_bad_ || resume_ < 0) return;
    bail_unless(B.CreateNot(B.CreateLoad(i1(), spec_bad_)));
  }
  void poll_interrupts(const Stmt& body) {
    Checking checking(this, "a signal may arrive");
    const volatile int* flag = interrupt_flag();
    int r = first_resume(body);
    if (!flag || (par_iter_ && !spec_bad_ && !log_) || r < 0) return;
    // The statement before (the loop's header, or the last of the previous iteration)
    // completed: what it drew or logged stays, whether or not CPython takes over here.
    commit_before(r, -1);
    resume_ = r;
    Value* addr = runtime_address("stagepy.interrupt_flag", const_cast<int*>(flag));
    auto* ld = B.CreateAlignedLoad(B.getInt32Ty(), addr, llvm::Align(4), /*isVolatile=*/true);
    bail_unless(B.CreateICmpEQ(ld, B.getInt32(0)));
  }

  void stmt(const Stmt& s) {
    if (s->line > 0) cur_line_ = s->line;
    if (B.GetInsertBlock()->getTerminator()) B.SetInsertPoint(BasicBlock::Create(C, "dead", F));
    if (gpu_mode_ && !par_iter_ && !host_flushed_) {
      // Host code about to touch array elements: the GPU's copies come back first (before a
      // statement with GPU loops inside, only for its own expressions). Inside a statement
      // with no GPU loop nothing goes to the device again, so once is enough.
      const bool gpu_inside = contains_gpu_loop(s);
      if (reads_or_writes_elements(s, gpu_inside)) gpu_flush();
      if (!gpu_inside) {
        host_flushed_ = true;
        stmt_body(s);
        host_flushed_ = false;
        return;
      }
    }
    stmt_body(s);
  }
  bool host_flushed_ = false;  // generating inside a statement that flushed the GPU's copies

  // The resume point of the statement that runs last in s where s is a block without one of
  // its own (blocks in blocks flattened; `before` where there is none in it), or an inlined
  // call's while loop (its statement's), else s's.
  int last_resume(const Stmt& s, int before) const {
    if (const int r = ir::inlined_while_statement(nest_, s); r >= 0) return r;
    if (s->kind != StmtNode::Kind::Block || s->resume >= 0) return s->resume;
    for (auto& x : s->body) before = last_resume(x, before);
    return before;
  }

  void stmt_body(const Stmt& s) {
    using K = StmtNode::Kind;
    const int after = prev_sibling_resume_;
    prev_sibling_resume_ = -1;
    commit_before(s->resume, after);
    if (s->kind == K::Seg || s->kind == K::Range || (s->kind == K::If && s->resume >= 0)) forced_bail(s->resume);
    struct Enclosing {  // (s's resume point while its statements are generated)
      std::vector<int>* stack;
      bool pushed;
      ~Enclosing() {
        if (pushed) stack->pop_back();
      }
    } enclosing{&enclosing_resumes_, s->resume >= 0 || ir::inlined_while_statement(nest_, s) >= 0};
    // (A while loop of an inlined call's has no resume point: its statements are inside its
    // calling statement, as a for loop's are inside the statement of its range.)
    if (s->resume >= 0) enclosing_resumes_.push_back(s->resume);
    else if (const int r = ir::inlined_while_statement(nest_, s); r >= 0) enclosing_resumes_.push_back(r);
    switch (s->kind) {
      case K::Block: {
        // A block without a resume point of its own is transparent: its first statement
        // follows the statement before the block, and the statement after it follows its last
        // (inline_helpers nests the statements an inlined call makes in blocks of their own).
        int prev = s->resume >= 0 ? -1 : after;
        for (auto& x : s->body) {
          prev_sibling_resume_ = prev;
          stmt(x);
          prev = last_resume(x, prev);
        }
        break;
      }
      case K::Seg: seg(s); break;
      case K::If: {
        resume_ = s->resume;
        Value* c;
        if (s->cond->kind == ExprNode::Kind::LoopNonEmpty) {
          c = gen(s->cond).v;
        } else {
          resume_ = s->resume;
          c = truth(gen(s->cond));
          flush_deferred();
        }
        BasicBlock* tb = BasicBlock::Create(C, "then", F);
        BasicBlock* eb = BasicBlock::Create(C, "else", F);
        BasicBlock* mb = BasicBlock::Create(C, "endif", F);
        B.CreateCondBr(c, tb, eb);
        B.SetInsertPoint(tb);
        stmt(s->body[0]);
        if (!B.GetInsertBlock()->getTerminator()) B.CreateBr(mb);
        B.SetInsertPoint(eb);
        stmt(s->body[1]);
        if (!B.GetInsertBlock()->getTerminator()) B.CreateBr(mb);
        B.SetInsertPoint(mb);
        break;
      }
      case K::Range: range(s); break;
      case K::For: for_loop(s); break;
      case K::While: while_loop(s); break;
      case K::Exit:
        resume_ = s->resume;
        bail_now("a return or raise");
        break;
      case K::Break:
      case K::Continue: {
        for (auto it = targets_.rbegin(); it != targets_.rend(); ++it) {
          if (it->loop == s->loop) {
            B.CreateBr(s->kind == K::Break ? it->brk : it->cont);
            B.SetInsertPoint(BasicBlock::Create(C, "dead", F));
            return;
          }
        }
        fail("internal error: jump to an unknown loop");
      }
    }
  }

  void seg(const Stmt& s) {
    resume_ = s->resume;
    // A logged statement's stores (in the kernel's own function: loops holding one are
    // sequential) append to the statement log.
    struct Logging {
      std::optional<StoreLog>* log;
      std::optional<StoreLog> saved;
      ~Logging() { *log = saved; }
    } logging{&log_, log_};
    if (stmt_log_ && F == main_fn_ && s->resume >= 0 && nest_.resumes[(size_t)s->resume].logged) log_ = stmt_log_;
    cfunc_calls_.clear();
    cfunc_memo_ = true;
    draw_memo_.clear();
    draw_memo_on_ = true;
    // Evaluate everything first (any failure leaves the statement untouched) ...
    struct Pending {
      const ir::Effect* e;
      V value;
      Value* addr = nullptr;
      Value* stored = nullptr;
      Value* tag = nullptr;  // a tagged list's element: its tag, stored after the value
      V section;             // a store into a row or slice: its elements ...
      Value* buf = nullptr;  // ... get these (an array value, of shape `shape`), or `stored`,
      V view;                // ... or, where the value is a view of the target's dtype, its
      std::vector<Value*> view_strides;  // elements, read as NumPy assigns them (assign_view)
      std::vector<Value*> shape;
      llvm::AllocaInst* flip = nullptr;  // an array kept in a variable: which of its site's two buffers is next
    };
    std::vector<Pending> ps;
    for (auto& f : s->effects) {
      Pending p;
      p.e = &f;
      switch (f.kind) {
        case ir::Effect::Kind::Assign:
          p.value = f.value->type->temp ? keep_array(f.value, &p.flip) : gen(f.value);
          break;
        case ir::Effect::Kind::Store: {
          if (ir::stores_section(f)) {
            V base = gen(f.base);
            V idx = gen(f.index);
            if (base.t->kind == Type::Kind::Unbound || idx.t->kind == Type::Kind::Unbound) break;
            p.section = index_array(base, index_list(idx), f.origin);
            const DType d = f.base->type->dtype;
            if (f.value->type->kind == Type::Kind::Array && !f.value->type->temp) {
              // A view (no operation on it): NumPy's assignment reads it where it may
              // overlap the target in its own way (assign_view).
              p.view = gen(f.value);
              if (p.view.t->kind == Type::Kind::Unbound) break;
              p.view_strides = broadcast_view(p.view, p.section);
              if (p.view.t->dtype != d) {
                // A cast: through a buffer, as NumPy copies the view first where it
                // overlaps the target, except a 1-d target it assigns in place (whose
                // cast loop's order is NumPy's own): CPython takes that statement.
                Value* overlap = bounds_overlap(p.section, d, p.view, p.view.t->dtype);
                bail_unless(B.CreateNot(assigns_in_place(p.section, p.view, overlap)));
                p.buf = elements_of(f.value, &p.section, d, c64(next_slot_++), &p.shape);
                if (!p.buf) break;
                p.view = V{};
              }
            } else if (f.value->type->kind == Type::Kind::Array) {
              p.buf = elements_of(f.value, &p.section, d, c64(next_slot_++), &p.shape);
              if (!p.buf) break;
            } else if (f.value->type->kind == Type::Kind::Tuple) {
              // A tuple of numbers (`traj[i] = (x, y, z)`): NumPy makes it an array and
              // assigns that, broadcast to the section (type inference allows the tuples
              // whose conversion casts each item as a store of it would): its items, cast,
              // in a buffer of the kernel's own, then assigned as a view.
              V tup = gen(f.value);
              if (tup.t->kind == Type::Kind::Unbound) break;
              const int64_t n = (int64_t)tup.elems.size(), size = dtype_size(d);
              llvm::IRBuilder<> entry(&F->getEntryBlock(), F->getEntryBlock().begin());
              llvm::AllocaInst* items = entry.CreateAlloca(i8(), c64(std::max<int64_t>(n, 1) * size), "tuple.items");
              items->setAlignment(llvm::Align(8));
              for (int64_t k = 0; k < n; k++)
                B.CreateStore(to_dtype(tup.elems[(size_t)k], d), B.CreateConstGEP1_64(i8(), items, k * size));
              p.view.t = types::array(d, 1, Type::CContig, true);
              p.view.v = items;
              p.view.shape = {c64(n)};
              p.view.strides = {c64(size)};
              p.view_strides = broadcast_view(p.view, p.section);
            } else {
              p.value = gen(f.value);
              if (p.value.t->kind == Type::Kind::Unbound) break;
              p.stored = to_dtype(p.value, d);
            }
            p.addr = p.section.v;
            break;
          }
          if (f.part >= 0) {  // a part of a complex element (lower_complex)
            p.addr = complex_element(f.base, f.index, f.origin, f.part == 1);
            p.value = gen(f.value);
            if (p.value.t->kind == Type::Kind::Unbound) {
              p.addr = nullptr;
            } else {
              p.stored = as_double(p.value);
              if (is_np(p.value.t) && p.value.t->dtype == DType::Float32 && f.base->type->dtype == DType::Complex64) {
                p.stored = B.CreateFPTrunc(p.stored, B.getFloatTy());  // a float32 already: exact
              } else if (f.base->type->dtype == DType::Complex64) {  // NumPy's cast, part by part
                Value* r = B.CreateFPTrunc(p.stored, B.getFloatTy());
                cast_overflow_check(r, p.stored);
                p.stored = r;
              }
            }
            break;
          }
          V base = gen(f.base);
          V idx = gen(f.index);
          p.value = gen(f.value);
          if (base.t->kind == Type::Kind::Unbound || idx.t->kind == Type::Kind::Unbound ||
              p.value.t->kind == Type::Kind::Unbound)
            break;
          bool exact_column = false;
          if (!base.t->columns.empty() && base.t->ndim == 1) {
            // (Type inference gives a column of one type only values of that type.)
            auto* c = llvm::dyn_cast<llvm::ConstantInt>(idx.v);
            const TypeRef col = c ? types::column_elem(*base.t, c->getSExtValue()) : nullptr;
            if (!col || (col->kind != Type::Kind::Union && !types::same(col, p.value.t)))
              fail("internal error: a store of a " + p.value.t->str() + " into a column of " + base.t->str());
            exact_column = col->kind != Type::Kind::Union;
          }
          p.stored = stored_item(p.value, *base.t, &p.tag, exact_column);
          if (!p.stored) break;
          p.addr = index_array(base, index_list(idx), f.origin).v;
          break;
        }
        case ir::Effect::Kind::Eval:
        case ir::Effect::Kind::Append:  // the item now, the append with the other effects
          p.value = gen(f.value);
          break;
      }
      ps.push_back(std::move(p));
    }
    flush_deferred();
    cfunc_memo_ = false;
    cfunc_calls_.clear();
    draw_memo_on_ = false;
    draw_memo_.clear();
    change_length();  // (a statement that changes a list's length has no other effect)
    // ... then apply the effects in order (the statement's stores' order: apply_order).
    std::vector<size_t> order(ps.size());
    for (size_t k = 0; k < order.size(); k++) order[k] = k;
    if (s->apply_order.size() == ps.size() && ps.size() == s->effects.size()) {
      std::vector<size_t> given(s->apply_order.begin(), s->apply_order.end());
      std::vector<size_t> sorted = given;
      std::sort(sorted.begin(), sorted.end());
      if (sorted == order) order = given;
    }
    for (size_t at : order) {
      auto& p = ps[at];
      const ir::Effect& f = *p.e;
      if (f.kind == ir::Effect::Kind::Append) {
        if (p.value.t->kind == Type::Kind::Unbound) continue;  // unreachable: it bailed
        if (gpu_body_) gpu_refuse("it appends to a list");
        append_item(B.CreateLoad(i64(), bits_[(size_t)analysis::appended_list_var(f.base)]), p.value);
      } else if (f.kind == ir::Effect::Kind::Assign) {
        if (p.value.t->kind == Type::Kind::Unbound) continue;  // unreachable: it bailed
        assign(f.var, p.value);
        if (p.flip) B.CreateStore(B.CreateXor(B.CreateLoad(i64(), p.flip), c64(1)), p.flip);
      } else if (f.kind == ir::Effect::Kind::Store && p.addr && p.view.t) {
        assign_view(p.section, p.view, p.view_strides, f.base->type->dtype);
      } else if (f.kind == ir::Effect::Kind::Store && p.addr && !p.section.shape.empty()) {
        store_section(p.section, f.base->type->dtype, p.buf, p.shape, p.stored);
      } else if (f.kind == ir::Effect::Kind::Store && p.addr) {
        DType d = f.base->type->dtype;
        const int nb = f.part >= 0 ? dtype_size(d) / 2 : dtype_size(d);
        put_element(p.addr, p.stored, nb);
        if (p.tag) put_element(B.CreateConstGEP1_64(i8(), p.addr, 8), p.tag, 8);
      }
    }
  }

  // Stores `stored` (`nb` bytes) at `addr`, an array's element (or its part: a complex number's
  // half, a tagged list element's tag), kept for undoing where the pass needs that.
  void put_element(Value* addr, Value* stored, int nb) {
    if (held_ && warn_gen_ == WarnGen::Fast) {
      // Fast pass of a chunk without a log: the element keeps its value where this
      // iteration may have warned, and the iteration is marked to run again exactly.
      held_->stores++;
      Value* old = load_data(stored->getType(), addr, nb);
      Value* bad = B.CreateLoad(i1(), held_->iter_bad);
      B.CreateStore(B.CreateZExt(bad, i8()), B.CreateGEP(i8(), held_->held, held_->kk));
      log_store(addr, nb);
      store_data(B.CreateSelect(bad, old, stored), addr, nb);
      return;
    }
    if (undo_ && undo_->next < undo_->ptr.size()) {  // fast pass of a chunk: keep the old value
      size_t st = undo_->next++;
      undo_->bytes[st] = nb;
      Value* old = load_data(B.getIntNTy((unsigned)nb * 8), addr, nb);
      B.CreateStore(addr, B.CreateGEP(ptr(), undo_->ptr[st], undo_->kk));
      B.CreateStore(B.CreateZExt(old, i64()), B.CreateGEP(i64(), undo_->old[st], undo_->kk));
    }
    log_store(addr, nb);
    store_data(stored, addr, nb);
  }

  // ------------------------------------------------------------ rows and slices
  // Loops over the elements of an array section `shape` (C order), calling
  // body(indices, linear index) in the innermost one.
  void section_loops(const std::vector<Value*>& shape, const std::function<void(const std::vector<Value*>&, Value*)>& body) {
    std::vector<Value*> at;
    std::function<void(size_t, Value*)> level = [&](size_t d, Value* lin) {
      if (d == shape.size()) {
        body(at, lin);
        return;
      }
      BasicBlock* exit = BasicBlock::Create(C, "sec.done", F);
      counted_loop("sec", c64(0), shape[d], false, exit, [&](Value* k, BasicBlock*) {
        at.push_back(k);
        level(d + 1, B.CreateAdd(B.CreateMul(lin, shape[d]), k));
        at.pop_back();
      }, nullptr);
      B.SetInsertPoint(exit);
    };
    level(0, c64(0));
  }
  Value* element_address(const V& a, const std::vector<Value*>& at, const std::vector<Value*>& strides) {
    Value* off = c64(0);
    for (size_t d = 0; d < at.size(); d++) off = B.CreateAdd(off, B.CreateMul(at[d], strides[d]));
    return B.CreateGEP(i8(), a.v, off);
  }
  // Type-based alias classes (LLVM's TBAA) for two kinds of memory that never overlap: the
  // items of arrays and lists (`data`), and the fields of MadeList headers (`header`). With
  // them the optimizer knows that a store to a list's item leaves every header as it was, so
  // a loop over made lists reads their `data` and `len` once, not after each store. Memory
  // accessed without a tag may alias either (the runtime's structures, the undo logs).
  llvm::Instruction* alias_class(llvm::Instruction* access, bool header) {
    if (!tbaa_data_) {
      llvm::MDBuilder md(C);
      llvm::MDNode* root = md.createTBAARoot("stagepy memory");
      llvm::MDNode* data = md.createTBAAScalarTypeNode("stagepy items", root);
      llvm::MDNode* head = md.createTBAAScalarTypeNode("stagepy list headers", root);
      tbaa_data_ = md.createTBAAStructTagNode(data, data, 0);
      tbaa_header_ = md.createTBAAStructTagNode(head, head, 0);
    }
    access->setMetadata(llvm::LLVMContext::MD_tbaa, header ? tbaa_header_ : tbaa_data_);
    return access;
  }
  Value* load_data(llvm::Type* ty, Value* addr, int align) {
    return alias_class(B.CreateAlignedLoad(ty, addr, llvm::Align(align)), false);
  }
  void store_data(Value* x, Value* addr, int align) { alias_class(B.CreateAlignedStore(x, addr, llvm::Align(align)), false); }
  // An array item of dtype `d` at `addr`, as memory holds it (aligned to its size).
  Value* load_item(DType d, Value* addr) { return load_data(mem_ty(d), addr, dtype_size(d)); }
  void store_item(DType d, Value* x, Value* addr) {
    log_store(addr, dtype_size(d));
    store_data(x, addr, dtype_size(d));
  }
  // Where the body logs its stores (outline_body's `logging`): the `nb` bytes at `addr`,
  // before a store overwrites them, as an entry of the thread's undo log (undo_log.h). A
  // full log grows; one that may not grow more ends the thread's run (status 1).
  struct StoreLog {
    llvm::AllocaInst* cur;  // the next entry
    llvm::AllocaInst* end;  // the end of the buffer
    Value* slots;           // the record's log slots
    bool statement = false;  // a logged statement's (full: CPython runs the statement)
  };
  std::optional<StoreLog> log_;
  // A nest with logged statements (ir::ResumePoint::logged): the log's record (undo_log.h:
  // next entry, end, start) and its cursors, in main_fn_. A logged statement's stores append
  // to it; every statement's start empties it (as it commits the draws: the statement before
  // completed); every way out but completion undoes it (stagepy_undo_statement).
  std::optional<StoreLog> stmt_log_;
  void log_store(Value* addr, int nb) {
    if (!log_) return;
    if (nb == 16) {  // complex128: its two halves
      log_store(addr, 8);
      log_store(B.CreateConstGEP1_64(i8(), addr, 8), 8);
      return;
    }
    Value* old = B.CreateZExt(B.CreateAlignedLoad(B.getIntNTy((unsigned)nb * 8), addr, llvm::Align(nb)), i64());
    BasicBlock* grow = BasicBlock::Create(C, "log.grow", F);
    BasicBlock* grown = BasicBlock::Create(C, "log.grown", F);
    BasicBlock* full = BasicBlock::Create(C, "log.full", F);
    BasicBlock* put = BasicBlock::Create(C, "log.put", F);
    Value* cur = B.CreateLoad(ptr(), log_->cur);
    cold_branch(B.CreateICmpUGT(B.CreateConstGEP1_64(i8(), cur, 16), B.CreateLoad(ptr(), log_->end)), grow, put);
    B.SetInsertPoint(grow);
    B.CreateStore(B.CreatePtrToInt(cur, i64()), log_->slots);
    auto* gty = llvm::FunctionType::get(B.getInt32Ty(), {ptr()}, false);
    Value* ok = B.CreateCall(gty, runtime_address("stagepy_undo_grow", reinterpret_cast<void*>(&stagepy_undo_grow)),
                             {log_->slots});
    cold_branch(B.CreateICmpEQ(ok, B.getInt32(0)), full, grown);
    B.SetInsertPoint(full);
    if (log_->statement) {
      count_bail("a logged statement's stores may not fit in memory");
      exit_with(B.getInt32(resume_ + 1));
    } else {
      exit_with(B.getInt32(1));
    }
    B.SetInsertPoint(grown);
    B.CreateStore(B.CreateIntToPtr(B.CreateLoad(i64(), log_->slots), ptr()), log_->cur);
    B.CreateStore(B.CreateIntToPtr(B.CreateLoad(i64(), B.CreateConstGEP1_64(i64(), log_->slots, 1)), ptr()), log_->end);
    B.CreateBr(put);
    B.SetInsertPoint(put);
    cur = B.CreateLoad(ptr(), log_->cur);
    const int64_t width = nb == 1 ? 0 : nb == 2 ? 1 : nb == 4 ? 2 : 3;
    B.CreateStore(B.CreateOr(B.CreatePtrToInt(addr, i64()), c64(width << kUndoSizeShift)), cur);
    B.CreateStore(old, B.CreateConstGEP1_64(i64(), cur, 1));
    B.CreateStore(B.CreateConstGEP1_64(i8(), cur, 16), log_->cur);
  }

  // The new elements an operation on arrays `e` (or an array) gives a store into section
  // `target` of an array of dtype `d`: computed, cast to `d`, into scratch buffer `slot`
  // (C order, of the value's own `shape`), before any effect of the statement. Without a
  // target: the array NumPy computes for `e` (np.sum's argument), of e's dtype `d`. The operands are evaluated first, in
  // CPython's order: arrays as views, numbers once. Each array operand broadcasts to the
  // target's shape (its extents, aligned at the end, are 1 or the target's; otherwise
  // CPython raises, and the statement goes there). Returns the buffer; with `header`, the
  // buffer has that many bytes more in front of the elements (a kept array's extents).
  Value* elements_of(const Expr& e, const V* target, DType d, Value* slot, std::vector<Value*>* shape,
                     int64_t header = 0) {
    struct Operand {
      Expr hole;   // what the element expression reads
      V value;     // an array, or a number
    };
    std::vector<Operand> ops;
    // The operand being taken is one of np.exp(...)'s (a function NumPy computes with its
    // own loop): as a view, NumPy passes it to that loop as it is, and for a negative
    // stride the loop may round differently from the element-by-element calls kernels
    // make (NumPy 2.4's float64 exp does): CPython takes the statement then.
    bool looped_operand = false;
    std::function<Expr(const Expr&)> element_expr = [&](const Expr& x) -> Expr {
      if (x->type->temp) {
        auto c = std::make_shared<ExprNode>(*x);
        // (Also power and arctan2 of floats: NumPy's SIMD loop and its loop for a negative
        // stride, libm's, differ in the last bit.)
        const bool callable = x->kind == ExprNode::Kind::Call && x->args[0]->type->kind == Type::Kind::Callable;
        const bool looped =
            (callable && (specialize::looped_unary(x->args[0]->type->builtin) ||
                          x->args[0]->type->builtin == Builtin::NpArctan2 || x->args[0]->type->builtin == Builtin::NpPower)) ||
            (x->kind == ExprNode::Kind::Binary && x->binop == ir::BinOp::Pow && dtype_is_float(x->type->dtype));
        for (size_t k = x->kind == ExprNode::Kind::Call ? 1 : 0; k < c->args.size(); k++) {
          looped_operand = looped;
          c->args[k] = element_expr(x->args[k]);
        }
        looped_operand = false;
        c->type = types::np_scalar(x->type->dtype);
        c->inplace = false;
        return c;
      }
      V v = gen(x);
      if (v.t->kind == Type::Kind::Array && looped_operand) {
        // NumPy's loop may take another path for a negative stride (see elements_of).
        for (size_t k = 0; k < v.shape.size(); k++)
          bail_unless(B.CreateOr(B.CreateICmpSGT(v.strides[k], c64(0)), B.CreateICmpSLE(v.shape[k], c64(1))));
      }
      auto hole = std::make_shared<ExprNode>(*x);
      hole->args.clear();
      hole->type = v.t->kind == Type::Kind::Array ? types::np_scalar(v.t->dtype) : v.t;
      ops.push_back({hole, v});
      return hole;
    };
    Expr elem = element_expr(e);
    for (auto& o : ops)
      if (o.value.t->kind == Type::Kind::Unbound) return nullptr;
    // The shape NumPy computes the value at: its array operands broadcast together (each
    // extent, aligned at the end, is the common one or 1; a missing leading one counts as
    // 1), then stored into the target, which it must broadcast to. Where a common extent is
    // 0 but some operand's is 1, NumPy computes that operand's elements (which may warn)
    // and this loop would not: CPython takes the statement.
    const size_t rv = (size_t)e->type->ndim, R = target ? target->shape.size() : rv;
    if (rv > R) fail("internal error: a value of more dimensions than its target");
    std::vector<Value*> E(rv, c64(1));
    std::vector<Value*> some_one(rv, B.getFalse());
    for (auto& o : ops) {
      if (o.value.t->kind != Type::Kind::Array) continue;
      const size_t r = o.value.shape.size();
      if (r > rv) fail("internal error: an array operand of more dimensions than its value");
      for (size_t j = 0; j < r; j++) {
        Value* ext = o.value.shape[j];
        E[rv - r + j] = B.CreateSelect(B.CreateICmpEQ(ext, c64(1)), E[rv - r + j], ext);
      }
    }
    std::vector<std::vector<Value*>> strides;
    for (auto& o : ops) {
      if (o.value.t->kind != Type::Kind::Array) {
        strides.emplace_back();
        continue;
      }
      const size_t r = o.value.shape.size();
      std::vector<Value*> st(rv, c64(0));
      for (size_t d = 0; d < rv - r; d++) some_one[d] = B.getTrue();
      for (size_t j = 0; j < r; j++) {
        const size_t d = rv - r + j;
        Value* ext = o.value.shape[j];
        Value* one = B.CreateICmpEQ(ext, c64(1));
        bail_unless(B.CreateOr(B.CreateICmpEQ(ext, E[d]), one));
        some_one[d] = B.CreateOr(some_one[d], one);
        st[d] = B.CreateSelect(one, c64(0), o.value.strides[j]);
      }
      strides.push_back(std::move(st));
    }
    for (size_t d = 0; d < rv; d++) {
      bail_unless(B.CreateNot(B.CreateAnd(B.CreateICmpEQ(E[d], c64(0)), some_one[d])));
      if (!target) continue;
      Value* te = target->shape[R - rv + d];
      bail_unless(B.CreateOr(B.CreateICmpEQ(E[d], te), B.CreateICmpEQ(E[d], c64(1))));
    }
    *shape = E;
    Value* count = c64(1);
    for (auto* n : E) count = B.CreateMul(count, n);
    // NumPy converts a Python int operand to the operation's dtype even for no elements
    // (`A[3:3] % 2**40` of int8 raises OverflowError): the element loop checks it per
    // element, so an empty value with one goes to CPython.
    if (std::any_of(ops.begin(), ops.end(), [](const Operand& o) { return o.value.t->kind == Type::Kind::PyInt; }))
      bail_unless(B.CreateICmpNE(count, c64(0)));
    Value* buf = scratch_buffer(slot, B.CreateAdd(B.CreateMul(count, c64(dtype_size(d))), c64(header)));
    if (header) buf = B.CreateGEP(i8(), buf, c64(header));
    const bool was = elementwise_;
    elementwise_ = true;
    section_loops(E, [&](const std::vector<Value*>& at, Value* lin) {
      for (size_t k = 0; k < ops.size(); k++) {
        const V& v = ops[k].value;
        if (v.t->kind != Type::Kind::Array) {
          elem_vals_[ops[k].hole.get()] = v;
          continue;
        }
        DType od = v.t->dtype;
        Value* x = load_item(od, element_address(v, at, strides[k]));
        if (od == DType::Bool) x = B.CreateICmpNE(x, c8(0));
        elem_vals_[ops[k].hole.get()] = scalar(types::np_scalar(od), x);
      }
      V r = gen(elem);
      Value* stored = to_dtype(r, d);
      store_item(d, stored, B.CreateGEP(mem_ty(d), buf, lin));
      elem_vals_.clear();
    });
    elementwise_ = was;
    return buf;
  }

  // `v = <operation on arrays>` (type_infer.cpp): the new elements, computed as NumPy does
  // (elements_of), into one of two scratch buffers of this site, behind the extents; the
  // value is the address of those. The other buffer keeps the value `v` had, which stays
  // valid should the statement stop for CPython; *flip says which is next (switched when
  // the assignment is done).
  V keep_array(const Expr& e, llvm::AllocaInst** flip) {
    Checking checking(this, "an array operation may not broadcast");
    if (gpu_body_) gpu_refuse("it keeps an operation on arrays in a variable");
    const DType d = e->type->dtype;
    const int ndim = e->type->ndim;
    if (ndim < 1 || ndim * 8 > kLocalArrayHeader) fail("keeps an array of " + std::to_string(ndim) + " dimensions in a variable");
    llvm::IRBuilder<> entry(&F->getEntryBlock(), F->getEntryBlock().begin());
    *flip = entry.CreateAlloca(i64(), nullptr, "kept.next");
    entry.CreateStore(c64(0), *flip);
    const int base = next_slot_;
    next_slot_ += 2;
    std::vector<Value*> shape;
    Value* data = elements_of(e, nullptr, d, B.CreateAdd(c64(base), B.CreateLoad(i64(), *flip)), &shape, kLocalArrayHeader);
    if (!data) {
      *flip = nullptr;
      return undef_of(types::unbound());
    }
    Value* header = B.CreateGEP(i8(), data, c64(-kLocalArrayHeader));
    for (int k = 0; k < ndim; k++) B.CreateStore(shape[(size_t)k], B.CreateGEP(i64(), header, c64(k)));
    V x;
    x.t = types::array_local(d, ndim);
    x.v = B.CreatePtrToInt(header, i64());
    return x;
  }

  // np.sum(x), np.mean(x), np.max(x), np.min(x) of a one-dimensional array x (a view, or
  // an operation on arrays computed first, as NumPy does; type_infer.cpp). Sums: floats by
  // NumPy's pairwise summation plus its identity +0.0 (a mean: over the count as float64),
  // a result that is not finite going to CPython (NumPy may warn); integers (and bools)
  // added as int64/uint64, wrapping, as NumPy does silently. max/min: np_max_min.
  V np_reduce(const Expr& e) {
    Checking checking(this, "a NumPy reduction may warn");
    const Expr& x = e->args[1];
    const DType d = x->type->dtype;
    V arr;
    if (x->type->temp) {
      std::vector<Value*> shape;
      Value* buf = elements_of(x, nullptr, d, c64(next_slot_++), &shape);
      if (!buf) return undef_of(e->type);
      arr.t = x->type;
      arr.v = buf;
      arr.shape = shape;
      arr.strides = {c64(dtype_size(d))};
    } else {
      arr = gen(x);
      if (arr.t->kind == Type::Kind::Unbound) return undef_of(e->type);
    }
    Value* n = arr.shape[0];
    Value* stride = arr.strides[0];
    if (gpu_body_) gpu_refuse("it calls np.sum, np.max, np.min or np.mean");
    const Builtin f = e->args[0]->type->builtin;
    if (f == Builtin::NpMax || f == Builtin::NpMin) return np_max_min(arr, d, f == Builtin::NpMax, e->type);
    if (dtype_is_float(d)) {
      Value* pw = B.CreateCall(cpu::pairwise_sum_function(*M, d == DType::Float32), {arr.v, n, stride});
      Value* r = B.CreateFAdd(llvm::ConstantFP::get(pw->getType(), 0.0), pw);
      if (f == Builtin::NpMean) {
        bail_unless(B.CreateICmpSGT(n, c64(0)));  // NumPy warns "Mean of empty slice"
        // NumPy divides by the count as a float64 (exact), then casts to float32: for more
        // than 2^24 items that differs from a float32 division.
        Value* q = B.CreateFDiv(B.CreateFPExt(r, f64()), B.CreateSIToFP(n, f64()));
        r = r->getType()->isFloatTy() ? B.CreateFPTrunc(q, r->getType()) : q;
      }
      defer(isfinite(r));
      return scalar(e->type, r);
    }
    llvm::IRBuilder<> entry(&F->getEntryBlock(), F->getEntryBlock().begin());
    auto* acc = entry.CreateAlloca(i64(), nullptr, "npsum");
    B.CreateStore(c64(0), acc);
    BasicBlock* done = BasicBlock::Create(C, "npsum.done", F);
    counted_loop("npsum", c64(0), n, false, done, [&](Value* k, BasicBlock*) {
      Value* item = load_item(d, element_address(arr, {k}, {stride}));
      Value* wide = d != DType::Bool && dtype_is_signed(d) ? B.CreateSExt(item, i64()) : B.CreateZExt(item, i64());
      if (d == DType::Bool) wide = B.CreateZExt(B.CreateICmpNE(item, c8(0)), i64());
      B.CreateStore(B.CreateAdd(B.CreateLoad(i64(), acc), wide), acc);
    }, nullptr);
    B.SetInsertPoint(done);
    return scalar(e->type, B.CreateLoad(i64(), acc));
  }

  // x @ y (`matmul`) or np.dot(x, y) of 1-d float arrays (type_infer.h): NumPy's dot
  // function for the dtype called as both call it for such arrays, on the arrays' own
  // memory and strides (with BLAS where the strides allow, else a loop in order). Handed to
  // CPython: lengths that differ (NumPy raises); for np.dot, an array with a stride that is
  // not positive (np.dot copies it first, and BLAS on the copy may sum otherwise); an array
  // not aligned to its items (NumPy may buffer it); and a result that is not finite (np.dot
  // is silent, `@` may warn: CPython decides).
  V np_dot(const Expr& e, const Expr& x, const Expr& y, bool matmul) {
    Checking checking(this, "the shapes of a product may not match");
    V a = gen(x), b = gen(y);
    if (a.t->kind == Type::Kind::Unbound || b.t->kind == Type::Kind::Unbound) return undef_of(e->type);
    if (gpu_body_) gpu_refuse("it calls NumPy's dot function, which runs on the host");
    const DType d = e->type->dtype;
    const int64_t size = dtype_size(d);
    Value* n = a.shape[0];
    bail_unless(B.CreateICmpEQ(n, b.shape[0]));
    Value* ok = B.getTrue();
    for (const V* v : {&a, &b}) {
      Value* s = v->strides[0];
      Value* misaligned = B.CreateOr(B.CreateSRem(B.CreatePtrToInt(v->v, i64()), c64(size)), B.CreateSRem(s, c64(size)));
      ok = B.CreateAnd(ok, B.CreateICmpEQ(misaligned, c64(0)));
      if (!matmul) ok = B.CreateAnd(ok, B.CreateOr(B.CreateICmpSGT(s, c64(0)), B.CreateICmpSLE(n, c64(1))));
    }
    bail_unless(ok);
    llvm::Type* ft = mem_ty(d);
    llvm::IRBuilder<> entry(&F->getEntryBlock(), F->getEntryBlock().begin());
    auto* out = entry.CreateAlloca(ft, nullptr, "dot.out");
    // void dotfunc(char* ip1, npy_intp is1, char* ip2, npy_intp is2, char* op, npy_intp n, void*)
    auto* fty = llvm::FunctionType::get(B.getVoidTy(), {ptr(), i64(), ptr(), i64(), ptr(), i64(), ptr()}, false);
    Value* fn = runtime_address(std::string("stagepy.numpy.dot.") + dtype_name(d),
                                oracle_.dot_fn[d == DType::Float64 ? 0 : 1]);
    B.CreateCall(fty, fn, {a.v, a.strides[0], b.v, b.strides[0], out, n, llvm::ConstantPointerNull::get(llvm::PointerType::get(C, 0))});
    Value* r = B.CreateLoad(ft, out);
    defer(isfinite(r));
    return scalar(e->type, r);
  }

  // np.max/np.min of a 1-d array view `arr` of dtype `d`: NumPy's value, exactly: a NaN if
  // any item is one (NumPy propagates them, without a warning). NumPy's SIMD reduction
  // picks either zero where +0.0 and -0.0 tie for the answer: that, and an empty array
  // (a ValueError), go to CPython.
  V np_max_min(const V& arr, DType d, bool mx, const TypeRef& rt) {
    Checking checking(this, "an array may be empty");
    Value* n = arr.shape[0];
    Value* stride = arr.strides[0];
    bail_unless(B.CreateICmpSGT(n, c64(0)));
    llvm::Type* mt = mem_ty(d);
    auto item = [&](Value* k) { return load_item(d, element_address(arr, {k}, {stride})); };
    llvm::IRBuilder<> entry(&F->getEntryBlock(), F->getEntryBlock().begin());
    auto* acc = entry.CreateAlloca(mt, nullptr, "npmax");
    auto* zeros = entry.CreateAlloca(i8(), nullptr, "npmax.zeros");  // bit 0: +0.0 seen, bit 1: -0.0
    B.CreateStore(item(c64(0)), acc);
    B.CreateStore(c8(0), zeros);
    const bool fl = dtype_is_float(d);
    const bool sgn = d != DType::Bool && dtype_is_signed(d);
    BasicBlock* done = BasicBlock::Create(C, "npmax.done", F);
    counted_loop("npmax", c64(0), n, false, done, [&](Value* k, BasicBlock*) {
      Value* x = item(k);
      Value* a = B.CreateLoad(mt, acc);
      Value* take;
      if (fl) {
        // NaN sticks; otherwise the strictly greater (smaller) item.
        Value* beyond = mx ? B.CreateFCmpOGT(x, a) : B.CreateFCmpOLT(x, a);
        take = B.CreateAnd(B.CreateNot(isnan(a)), B.CreateOr(beyond, isnan(x)));
        Value* zero = B.CreateFCmpOEQ(x, llvm::ConstantFP::get(mt, 0.0));
        Value* neg = B.CreateICmpSLT(B.CreateBitCast(x, B.getIntNTy(mt->getPrimitiveSizeInBits())),
                                     llvm::ConstantInt::get(B.getIntNTy(mt->getPrimitiveSizeInBits()), 0));
        Value* bit = B.CreateSelect(zero, B.CreateSelect(neg, c8(2), c8(1)), c8(0));
        B.CreateStore(B.CreateOr(B.CreateLoad(i8(), zeros), bit), zeros);
      } else {
        take = mx ? (sgn ? B.CreateICmpSGT(x, a) : B.CreateICmpUGT(x, a)) : (sgn ? B.CreateICmpSLT(x, a) : B.CreateICmpULT(x, a));
      }
      B.CreateStore(B.CreateSelect(take, x, a), acc);
    }, nullptr);
    B.SetInsertPoint(done);
    Value* r = B.CreateLoad(mt, acc);
    if (fl) {
      Value* tie = B.CreateAnd(B.CreateFCmpOEQ(r, llvm::ConstantFP::get(mt, 0.0)),
                               B.CreateICmpEQ(B.CreateLoad(i8(), zeros), c8(3)));
      defer(B.CreateNot(tie));
    }
    if (d == DType::Bool) r = B.CreateICmpNE(r, c8(0));
    return scalar(rt, r);
  }

  // Applies a store into a section: its elements get buffer `buf`'s (C order, of shape
  // `shape`, broadcast to the section's), or `value`.
  void store_section(const V& section, DType d, Value* buf, const std::vector<Value*>& shape, Value* value) {
    const size_t R = section.shape.size(), rv = shape.size();
    std::vector<Value*> bstride(rv);
    Value* n = c64(1);
    for (size_t k = rv; k-- > 0;) {
      bstride[k] = B.CreateSelect(B.CreateICmpEQ(shape[k], c64(1)), c64(0), n);
      n = B.CreateMul(n, shape[k]);
    }
    section_loops(section.shape, [&](const std::vector<Value*>& at, Value*) {
      Value* x = value;
      if (buf) {
        Value* lin = c64(0);
        for (size_t k = 0; k < rv; k++) lin = B.CreateAdd(lin, B.CreateMul(at[R - rv + k], bstride[k]));
        x = load_item(d, B.CreateGEP(mem_ty(d), buf, lin));
      }
      store_item(d, x, element_address(section, at, section.strides));
    });
  }

  // Scratch buffer `slot` of this kernel (scratch.h), at least `bytes` long; without the
  // memory for it the statement, which has made no effect yet, goes to CPython.
  Value* scratch_buffer(Value* slot, Value* bytes) {
    llvm::FunctionType* sty = llvm::FunctionType::get(ptr(), {i64(), i64()}, false);
    Value* buf = B.CreateCall(sty, runtime_address("stagepy_scratch", reinterpret_cast<void*>(&stagepy_scratch)),
                              {slot, bytes});
    bail_unless(B.CreateICmpNE(buf, llvm::ConstantPointerNull::get(llvm::PointerType::get(C, 0))));
    return buf;
  }

  // A view stored into a section `target` (`target = view`, NumPy's PyArray_AssignArray):
  // the view's strides broadcast to the target's shape (0 along an extent of 1, or one it
  // lacks); an extent neither 1 nor the target's makes NumPy raise: CPython takes the
  // statement.
  std::vector<Value*> broadcast_view(const V& view, const V& target) {
    const size_t R = target.shape.size(), r = view.shape.size();
    if (r > R) fail("internal error: a value of more dimensions than its target");
    std::vector<Value*> st(R, c64(0));
    for (size_t j = 0; j < r; j++) {
      Value* ext = view.shape[j];
      Value* one = B.CreateICmpEQ(ext, c64(1));
      bail_unless(B.CreateOr(B.CreateICmpEQ(ext, target.shape[R - r + j]), one));
      st[R - r + j] = B.CreateSelect(one, c64(0), view.strides[j]);
    }
    return st;
  }
  // Whether arrays `a` and `b` may share memory as NumPy's arrays_overlap decides it: by
  // the bounds of their bytes (an empty array shares none).
  Value* bounds_overlap(const V& a, DType ad, const V& b, DType bd) {
    return bytes_overlap(a, dtype_size(ad), b, dtype_size(bd));
  }
  // The same, for items of `abytes` and `bbytes` bytes (a tagged list's are 16).
  Value* bytes_overlap(const V& a, int64_t abytes, const V& b, int64_t bbytes) {
    auto extent = [&](const V& x, int64_t item, Value*& lo, Value*& hi) {
      Value* base = B.CreatePtrToInt(x.v, i64());
      lo = base;
      hi = B.CreateAdd(base, c64(item));
      Value* empty = B.getFalse();
      for (size_t k = 0; k < x.shape.size(); k++) {
        empty = B.CreateOr(empty, B.CreateICmpSLE(x.shape[k], c64(0)));
        Value* span = B.CreateMul(B.CreateSub(x.shape[k], c64(1)), x.strides[k]);
        Value* neg = B.CreateICmpSLT(span, c64(0));
        lo = B.CreateAdd(lo, B.CreateSelect(neg, span, c64(0)));
        hi = B.CreateAdd(hi, B.CreateSelect(neg, c64(0), span));
      }
      return empty;
    };
    Value *alo, *ahi, *blo, *bhi;
    Value* empty = B.CreateOr(extent(a, abytes, alo, ahi), extent(b, bbytes, blo, bhi));
    Value* apart = B.CreateOr(B.CreateICmpULE(ahi, blo), B.CreateICmpULE(bhi, alo));
    return B.CreateNot(B.CreateOr(empty, apart));
  }
  // Whether NumPy assigns `view` to `target` element by element without copying it first
  // although they overlap (`overlap`, bounds_overlap's): a 1-d target and strides of one
  // sign (PyArray_AssignArray leaves such a copy to its inner loop).
  Value* assigns_in_place(const V& target, const V& view, Value* overlap) {
    if (target.shape.size() != 1 || view.shape.empty()) return B.getFalse();
    Value* same_sign = B.CreateICmpSGE(B.CreateMul(target.strides[0], view.strides.back()), c64(0));
    return B.CreateAnd(same_sign, overlap);
  }
  // Applies `target = view` (same dtype; `strides`: the view's, broadcast by broadcast_view)
  // in NumPy's order, which shows where they overlap:
  //  - apart: element by element;
  //  - overlapping, a 1-d target with strides of one sign: element by element, forward or
  //    backward as raw_array_assign_array goes (it turns a negative target stride around,
  //    then goes backward where the view starts below the target and reaches past its start);
  //  - overlapping otherwise: the view is copied first.
  void assign_view(const V& target, const V& view, const std::vector<Value*>& strides, DType d) {
    Value* overlap = bounds_overlap(target, d, view, d);
    Value* in_place = assigns_in_place(target, view, overlap);
    Value* copy = B.CreateAnd(overlap, B.CreateNot(in_place));
    BasicBlock* copying = BasicBlock::Create(C, "assign.copy", F);
    BasicBlock* direct = BasicBlock::Create(C, "assign.direct", F);
    BasicBlock* done = BasicBlock::Create(C, "assign.done", F);
    B.CreateCondBr(copy, copying, direct);

    B.SetInsertPoint(copying);
    Value* count = c64(1);
    for (auto* n : target.shape) count = B.CreateMul(count, n);
    Value* buf = scratch_buffer(c64(next_slot_++), B.CreateMul(count, c64(dtype_size(d))));
    section_loops(target.shape, [&](const std::vector<Value*>& at, Value* lin) {
      Value* x = load_item(d, element_address(view, at, strides));
      B.CreateAlignedStore(x, B.CreateGEP(mem_ty(d), buf, lin), llvm::Align(dtype_size(d)));
    });
    store_section(target, d, buf, target.shape, nullptr);
    B.CreateBr(done);

    B.SetInsertPoint(direct);
    Value* reverse = B.getFalse();
    if (target.shape.size() == 1) {
      Value* n = target.shape[0];
      Value* sd = target.strides[0];
      Value* ss = strides[0];
      Value* flip = B.CreateICmpSLT(sd, c64(0));
      Value* last = B.CreateSub(n, c64(1));
      Value* dst = B.CreatePtrToInt(target.v, i64());
      Value* src = B.CreatePtrToInt(view.v, i64());
      dst = B.CreateSelect(flip, B.CreateAdd(dst, B.CreateMul(last, sd)), dst);
      src = B.CreateSelect(flip, B.CreateAdd(src, B.CreateMul(last, ss)), src);
      ss = B.CreateSelect(flip, B.CreateNeg(ss), ss);
      Value* backward = B.CreateAnd(B.CreateICmpULT(src, dst), B.CreateICmpUGT(B.CreateAdd(src, B.CreateMul(n, ss)), dst));
      reverse = B.CreateAnd(in_place, B.CreateXor(flip, backward));
    }
    section_loops(target.shape, [&](const std::vector<Value*>& at0, Value*) {
      std::vector<Value*> at = at0;
      if (at.size() == 1) at[0] = B.CreateSelect(reverse, B.CreateSub(B.CreateSub(target.shape[0], c64(1)), at[0]), at[0]);
      store_item(d, load_item(d, element_address(view, at, strides)), element_address(target, at, target.strides));
    });
    B.CreateBr(done);
    B.SetInsertPoint(done);
  }

  // An element of a tagged list (Type::tagged) at `at`: its value, as the union `t` of float
  // and what the list's tags allow (np.float64, int) whose tag is the element's. Of
  // float | np.float64, the double (a uniform union); with ints, the bits (a mixed union).
  // An element of a column whose elements share one tag (Type::columns) reads as that type,
  // `t`: its value, the tag not read.
  V tagged_element(Value* at, const TypeRef& t) {
    if (t->kind != Type::Kind::Union) {
      if (t->kind == Type::Kind::PyBool) return scalar(t, B.CreateICmpNE(load_item(DType::Int64, at), c64(0)));
      if (t->kind == Type::Kind::PyInt) return scalar(t, load_item(DType::Int64, at));
      if (is_pyfloat(t) || (is_np(t) && t->dtype == DType::Float64)) return scalar(t, load_item(DType::Float64, at));
      fail("internal error: an element of a tagged list as a " + t->str());
    }
    if (gpu_body_) gpu_refuse("it reads a list whose elements' types vary (ints, floats, NumPy floats)");
    Value* mem = load_data(i64(), B.CreateConstGEP1_64(i8(), at, 8), 8);
    Value* tag = c8(tag_of(types::py_float()));
    for (auto& m : members(t)) {
      if (is_np(m) && m->dtype == DType::Float64)
        tag = B.CreateSelect(B.CreateICmpEQ(mem, c64(kTagNpFloat64)), c8(tag_of(m)), tag);
      else if (m->kind == Type::Kind::PyInt)
        tag = B.CreateSelect(B.CreateICmpEQ(mem, c64(kTagInt)), c8(tag_of(m)), tag);
      else if (m->kind == Type::Kind::PyBool)
        tag = B.CreateSelect(B.CreateICmpEQ(mem, c64(kTagBool)), c8(tag_of(m)), tag);
    }
    return scalar(t, load_item(hetero(t) ? DType::Int64 : DType::Float64, at), tag);
  }
  // The tag (Type::tagged) a tagged list's element gets for the value `x`: a float, an
  // np.float64, an int or a bool, as the list's `tags` allow; another (a member the list
  // does not hold) goes to CPython, which stores it.
  Value* element_tag(const V& x, const Type& lt) {
    auto mem_tag = [&](const TypeRef& m) -> int64_t {
      if (is_pyfloat(m)) return kTagFloat;
      if (is_np(m) && m->dtype == DType::Float64 && (lt.tags & kTagsNp)) return kTagNpFloat64;
      if (m->kind == Type::Kind::PyInt && (lt.tags & kTagsInts)) return kTagInt;
      if (m->kind == Type::Kind::PyBool && (lt.tags & kTagsBools)) return kTagBool;
      return -1;
    };
    if (x.t->kind != Type::Kind::Union) {
      if (mem_tag(x.t) < 0) {
        Checking checking(this, "a list may get an element of another type");
        bail_unless(B.getFalse());
        return c64(kTagFloat);
      }
      return c64(mem_tag(x.t));
    }
    Value* ok = B.getFalse();
    Value* tag = c64(kTagFloat);
    bool all = true;
    for (auto& m : members(x.t)) {
      const int64_t k = mem_tag(m);
      all = all && k >= 0;
      if (k < 0) continue;
      Value* is = B.CreateICmpEQ(operand_tag(x), c8(tag_of(m)));
      ok = B.CreateOr(ok, is);
      if (k != kTagFloat) tag = B.CreateSelect(is, c64(k), tag);
    }
    if (!all) {
      Checking checking(this, "a list may get an element of another type");
      bail_unless(ok);
    }
    return tag;
  }

  void assign(int var, const V& x) {
    if (x.t->kind == Type::Kind::Array && x.t->made) {  // its header's address
      if (!x.header) fail("internal error: a list without its header");
      B.CreateStore(x.header, bits_[var]);
      B.CreateStore(c8(tag_of(x.t)), tags_[var]);
      return;
    }
    if (x.t->kind == Type::Kind::Array && x.t->local) {  // the address of its memory
      B.CreateStore(x.v, bits_[var]);
      B.CreateStore(c8(tag_of(x.t)), tags_[var]);
      return;
    }
    if (x.t->kind == Type::Kind::Array) {
      // Which live-in array it is: the value's own id.
      Value* id = nullptr;
      std::vector<int> cands;
      for (size_t k = 0; k < arrays_.size(); k++)
        if (types::same(arrays_[k].t, x.t)) cands.push_back((int)k);
      id = c64(cands.empty() ? 0 : cands[0]);
      for (size_t k = 1; k < cands.size(); k++)
        id = B.CreateSelect(B.CreateICmpEQ(x.v, arrays_[cands[k]].data), c64(cands[k]), id);
      B.CreateStore(id, bits_[var]);
      B.CreateStore(c8(tag_of(x.t)), tags_[var]);
      return;
    }
    if (x.t->kind == Type::Kind::View || x.t->kind == Type::Kind::Appended) {  // the row's index; the buffer's address
      B.CreateStore(x.v, bits_[var]);
      B.CreateStore(c8(tag_of(x.t)), tags_[var]);
      return;
    }
    if (x.t->kind == Type::Kind::PyChar) {  // its code point
      B.CreateStore(B.CreateZExt(x.v, i64()), bits_[var]);
      B.CreateStore(c8(tag_of(x.t)), tags_[var]);
      return;
    }
    if (!x.t->is_scalar()) fail("internal error: assignment of " + x.t->str());
    const Tagged tb = tagged(x);
    B.CreateStore(tb.bits, bits_[var]);
    B.CreateStore(tb.tag, tags_[var]);
    if (auto it = fast32_.find(var); warn_gen_ == WarnGen::Fast && it != fast32_.end() && x.v)  // a float32 sum in the fast pass
      B.CreateStore(x.v->getType()->isFloatTy() ? x.v : B.CreateFPTrunc(x.v, B.getFloatTy()), it->second);
  }

  void range(const Stmt& s) {
    Checking checking(this, "a range() step may be zero");
    resume_ = s->resume;
    soft_checkpoint();
    std::vector<Value*> a;
    for (auto& e : s->args) {
      V x = gen(e);
      if (x.t->kind == Type::Kind::Unbound) return;
      a.push_back(as_i64_int(x));
    }
    flush_deferred();
    Value *start = c64(0), *stop, *step = c64(1);
    if (a.size() == 1) stop = a[0];
    else {
      start = a[0];
      stop = a[1];
      if (a.size() == 3) step = a[2];
    }
    bail_unless(B.CreateICmpNE(step, c64(0)));  // ValueError: range() arg 3 must not be zero
    Value* trip = iterations(start, stop, step);
    auto& L = loops_[s->loop];
    B.CreateStore(start, L.start);
    B.CreateStore(stop, L.stop);
    B.CreateStore(step, L.step);
    B.CreateStore(trip, L.trip);
  }

  // The number of items of range(start, stop, step), without overflow: differences as
  // unsigned. (A zero step, which range() refuses, counts as a step of one in magnitude.)
  Value* iterations(Value* start, Value* stop, Value* step) {
    Value* pos = B.CreateICmpSGT(step, c64(0));
    Value* span_up = B.CreateSub(stop, start);    // stop - start, valid as unsigned when stop > start
    Value* span_dn = B.CreateSub(start, stop);
    Value* astep = B.CreateSelect(pos, step, B.CreateSub(c64(0), step));  // |step| as unsigned
    astep = B.CreateSelect(B.CreateICmpEQ(step, c64(0)), c64(1), astep);
    Value* nonempty = B.CreateSelect(pos, B.CreateICmpSGT(stop, start), B.CreateICmpSGT(start, stop));
    Value* span = B.CreateSelect(pos, span_up, span_dn);
    Value* trip = B.CreateAdd(B.CreateUDiv(B.CreateSub(span, c64(1)), astep), c64(1));
    return B.CreateSelect(nonempty, trip, c64(0));
  }

  // Sets the loop variable to iteration k's value.
  void enter_iteration(const Stmt& s, Value* k) {
    auto& L = loops_[s->loop];
    Value* i = B.CreateAdd(B.CreateLoad(i64(), L.start), B.CreateMul(k, B.CreateLoad(i64(), L.step)));
    B.CreateStore(i, L.cur);
    B.CreateStore(i, bits_[s->var]);
    B.CreateStore(c8(tag_of(types::py_int())), tags_[s->var]);
    if (par_iter_ && s->loop == par_loop_) B.CreateStore(k, par_iter_);
    if (par_iter_ && gpu_body_ && s->loop == gpu_collapse_loop_) {
      if (!gpu_warn_iter_) {
        llvm::IRBuilder<> eb(&F->getEntryBlock(), F->getEntryBlock().begin());
        gpu_warn_iter_ = eb.CreateAlloca(i64(), nullptr, "warn.iter");
      }
      Value* inner = B.CreateBinaryIntrinsic(llvm::Intrinsic::umin, k, c64((int64_t(1) << kLaneKeyBits) - 1));
      B.CreateStore(B.CreateAdd(B.CreateShl(B.CreateLoad(i64(), par_iter_), kLaneKeyBits), inner), gpu_warn_iter_);
    }
  }

  void for_loop(const Stmt& s) {
    auto& L = loops_[s->loop];
    BasicBlock* exit = BasicBlock::Create(C, "for.exit", F);
    Value* trip = B.CreateLoad(i64(), L.trip);
    if (gpu_body_ && s->loop == gpu_collapse_loop_) {
      gpu_lanes_loop(s, trip, exit);
      B.SetInsertPoint(exit);
      return;
    }
    Value* k0 = c64(0);
    if (s->peeled) {
      // The first iteration, typed on its own; trip >= 1 is known here.
      BasicBlock* first_next = BasicBlock::Create(C, "for.first.next", F);
      enter_iteration(s, c64(0));
      targets_.push_back({s->loop, first_next, exit});
      stmt(s->body[1]);
      targets_.pop_back();
      if (!B.GetInsertBlock()->getTerminator()) B.CreateBr(first_next);
      B.SetInsertPoint(first_next);
      k0 = c64(1);
    }
    const specialize::LoopPlan* lp = options_.plan && !par_iter_ ? &options_.plan->loops[(size_t)s->loop] : nullptr;
    // With one thread, a loop that would be parallel runs its parallel body on this thread
    // where that body goes panel by panel (panel_rows): the sequential loop's warnings are
    // recorded in the order they occur, which panels change; the parallel body's by row.
    const bool one = lp && lp->one_thread && !options_.gpu && !gpu_mode_ && panel_shape(s);
    if (!(lp && ((lp->parallel && outer_parallel_.count(s->loop)) || one) && parallel_loop(s, *lp, k0, trip, exit))) {
      if (one) parallel_refused_.erase(s->loop);  // (the report says "one thread")
      for_iterations(s, k0, trip, exit);
    }
    B.SetInsertPoint(exit);
  }

  // ---- how much a loop body does, for the parallel decision (parallel_loop)
  static constexpr int64_t kWorkCap = int64_t(1) << 30;  // estimates saturate here: products fit

  // An int the body's range() arguments compute, known before the loop whose body this is
  // runs: numbers, variables the loop never assigns (and that are bound), len() of those,
  // and + - * of them. nullptr for anything else. Only an estimate: no checks, wrapping.
  Value* invariant_int(const Expr& e, const std::set<int>& varying) {
    using K = ExprNode::Kind;
    const TypeRef m = rep(e->type);
    const bool int_t = is_pyint(m) || (is_np(m) && m->dtype == DType::Int64);
    switch (e->kind) {
      case K::Const:
        return e->value.kind == ir::ConstValue::Kind::Int ? c64(e->value.i) : nullptr;
      case K::Load:
        if (!int_t || e->check_bound || varying.count(e->var) || hetero(e->type)) return nullptr;
        return B.CreateFreeze(gen(e).v);
      case K::Binary: {
        if (e->binop != ir::BinOp::Add && e->binop != ir::BinOp::Sub && e->binop != ir::BinOp::Mul) return nullptr;
        Value* a = invariant_int(e->args[0], varying);
        Value* b = a ? invariant_int(e->args[1], varying) : nullptr;
        if (!b) return nullptr;
        return e->binop == ir::BinOp::Add ? B.CreateAdd(a, b) : e->binop == ir::BinOp::Sub ? B.CreateSub(a, b) : B.CreateMul(a, b);
      }
      case K::Call: {
        const Expr& f = e->args[0];
        if (e->args.size() != 2 || !f->type || f->type->kind != Type::Kind::Callable || f->type->builtin != Builtin::Len)
          return nullptr;
        const Expr& a = e->args[1];
        if (a->kind != K::Load || a->check_bound || varying.count(a->var) || a->type->kind != Type::Kind::Array) return nullptr;
        return gen(e).v;
      }
      case K::Subscript: {  // A.shape[k] of an array the loop does not reassign
        const Expr& t = e->args[0];
        const Expr& k = e->args[1];
        if (!int_t || e->unpack != 0 || t->kind != K::Attr || t->name != "shape" || k->kind != K::Const ||
            k->value.kind != ir::ConstValue::Kind::Int)
          return nullptr;
        const Expr& a = t->args[0];
        if (a->kind != K::Load || a->check_bound || varying.count(a->var) || !a->type ||
            a->type->kind != Type::Kind::Array)
          return nullptr;
        return gen(e).v;
      }
      default: return nullptr;
    }
  }

  // The iterations of the loops in `body` (each counting one, its statements one each;
  // the larger side of a branch), for one iteration of the loop around it: nullptr where a
  // loop's bounds are not invariant_int.
  // `weighted`: each statement counts its cost units (statement_cost) instead of 1.
  Value* work_estimate(const Stmt& body, const std::set<int>& varying, bool weighted = false) {
    std::map<int, Value*> trips;
    return work_of(body, varying, trips, weighted);
  }
  // What one run of a statement costs, roughly in simple operations: a call (a math
  // function, NumPy's) 16, a division or power 8, anything else 1 (parallel_runtime.h,
  // min_parallel_cost_address).
  static int64_t statement_cost(const Stmt& s) {
    int64_t c = 0;
    own_exprs(s, [&](const Expr& e) {
      switch (e->kind) {
        case ExprNode::Kind::Call: c += 16; break;
        case ExprNode::Kind::Binary:
          c += (e->binop == ir::BinOp::TrueDiv || e->binop == ir::BinOp::FloorDiv || e->binop == ir::BinOp::Mod ||
                e->binop == ir::BinOp::Pow)
                   ? 8
                   : 1;
          break;
        case ExprNode::Kind::Unary:
        case ExprNode::Kind::Compare:
        case ExprNode::Kind::Subscript: c += 1; break;
        default: break;
      }
    });
    for (auto& f : s->effects) c += f.kind == ir::Effect::Kind::Store ? 1 : 0;
    return std::max<int64_t>(c, 1);
  }
  Value* work_of(const Stmt& st, const std::set<int>& varying, std::map<int, Value*>& trips, bool weighted = false) {
    auto cap = [&](Value* x) { return B.CreateBinaryIntrinsic(llvm::Intrinsic::umin, x, c64(kWorkCap)); };
    switch (st->kind) {
      case StmtNode::Kind::Block: {
        Value* sum = c64(0);
        for (auto& x : st->body) {
          Value* w = work_of(x, varying, trips, weighted);
          if (!w) return nullptr;
          sum = cap(B.CreateAdd(sum, w));
        }
        return sum;
      }
      case StmtNode::Kind::Range: {
        std::vector<Value*> a;
        for (auto& e : st->args) {
          a.push_back(invariant_int(e, varying));
          if (!a.back()) return nullptr;
        }
        if (a.empty() || a.size() > 3) return nullptr;
        Value *start = a.size() == 1 ? c64(0) : a[0], *stop = a.size() == 1 ? a[0] : a[1];
        trips[st->loop] = cap(iterations(start, stop, a.size() == 3 ? a[2] : c64(1)));
        return c64(0);
      }
      case StmtNode::Kind::For: {
        auto it = trips.find(st->loop);
        if (it == trips.end()) return nullptr;
        Value* inner = work_of(st->body[0], varying, trips, weighted);
        if (!inner) return nullptr;
        return cap(B.CreateMul(it->second, B.CreateBinaryIntrinsic(llvm::Intrinsic::umax, inner, c64(1))));
      }
      case StmtNode::Kind::If: {
        Value* a = work_of(st->body[0], varying, trips, weighted);
        Value* b = a ? work_of(st->body[1], varying, trips, weighted) : nullptr;
        return b ? B.CreateBinaryIntrinsic(llvm::Intrinsic::umax, a, b) : nullptr;
      }
      case StmtNode::Kind::While: return nullptr;
      default: return c64(weighted ? statement_cost(st) : 1);
    }
  }

  // Iterations [k0, trip) of For loop `s`, then a branch to `exit`.
  void for_iterations(const Stmt& s, Value* k0, Value* trip, BasicBlock* exit) {
    if (versioned_for_operands(s, k0, trip, exit)) return;
    // A parallel body's rows panel by panel where that keeps an inner loop's memory in cache.
    if (options_.plan && par_iter_ && s->loop == par_loop_ && !gpu_body_ && !gpu_mode_ && !no_interleave_ &&
        warn_gen_ == WarnGen::Normal && panel_rows(s, k0, trip, exit))
      return;
    // (Not in host code that shares arrays with GPU loops: each statement there may need
    // the GPU's copies back first.)
    // Interchanged where it can be (then CPython's order, generated below, is what runs
    // where it cannot).
    if (options_.plan && !gpu_body_ && !gpu_mode_ && !spec_bad_ && warn_gen_ == WarnGen::Normal &&
        options_.fp != FpMode::Exact && options_.plan->loops[(size_t)s->loop].interchange)
      interchanged_loop(s, options_.plan->loops[(size_t)s->loop], k0, trip, exit);
    if (options_.plan && !gpu_body_ && !(gpu_mode_ && !par_iter_) && !no_interleave_ && warn_gen_ == WarnGen::Normal &&
        options_.plan->loops[(size_t)s->loop].interleave.lanes > 0 &&
        interleaved_loop(s, options_.plan->loops[(size_t)s->loop], k0, trip, exit))
      return;
    // Chunks whose stores would be logged are not for GPU bodies: a thread runs one
    // iteration of the parallel loop, and the log (kChunk entries per store, in local
    // memory) only costs there (docs/gpu.md, "Kernels"). Nor for bodies that append: the
    // exact re-run would append the chunk's items a second time (nothing takes back the
    // fast pass's appends); nor for bodies that draw random numbers (it would draw them twice).
    if (options_.fp == FpMode::Deferred && warn_gen_ == WarnGen::Normal &&
        !(gpu_body_ && ir::stores_anything(s->body[0])) && !appends(s->body[0]) && !ir::draws_random(s->body[0]) &&
        (straight_line(s->body[0], s->loop) || branches_storing_nothing(s->body[0], s->loop)) &&
        has_np_arith(s->body[0]) && !ir::stores_sections(s->body[0]) && chunked_loop(s, k0, trip, exit))
      return;
    plain_loop(s, s->body[0], k0, trip, exit);
  }

  // A loop whose operations meet Python ints it does not assign with NumPy integers or
  // float32 (`y[k] + a * x[k]` over int32, LoopPlan::invariant_operands): two versions,
  // chosen where it starts. Where those values fit their types, one without the checks
  // (the fast pass of its speculative chunks then has no iteration to mark, and an update
  // in place can hold its stores); else the loop as it was, which stops for CPython at the
  // first iteration, as NumPy raises there. (Not in GPU code, which has no way out.)
  bool unversioned_ = false;  // generating such an other version (and the loops in it)
  bool versioned_for_operands(const Stmt& s, Value* k0, Value* trip, BasicBlock* exit) {
    if (gpu_body_ || gpu_mode_ || warn_gen_ != WarnGen::Normal || unversioned_) return false;
    std::vector<std::pair<int, DType>> ops;
    for (auto& vd : specialize::invariant_operands(s))
      if (!fitting_vars_.count(vd)) ops.push_back(vd);
    if (ops.empty()) return false;
    Value* ok = B.getTrue();
    for (auto& [v, d] : ops) ok = B.CreateAnd(ok, fits_numpy_type(load(v, types::py_int(), false).v, d));
    BasicBlock* fit = BasicBlock::Create(C, "operands.fit", F);
    BasicBlock* other = BasicBlock::Create(C, "operands.other", F);
    B.CreateCondBr(ok, fit, other);
    B.SetInsertPoint(fit);
    const std::set<std::pair<int, DType>> before = fitting_vars_;
    fitting_vars_.insert(ops.begin(), ops.end());
    for_iterations(s, k0, trip, exit);
    fitting_vars_ = before;
    B.SetInsertPoint(other);
    unversioned_ = true;
    for_iterations(s, k0, trip, exit);
    unversioned_ = false;
    return true;
  }

  // The skeleton of a counted loop, k from k0 while k < end (compared unsigned or signed),
  // then a branch to `exit`: `body(k, latch)` emits one iteration (it may end anywhere
  // that falls through), `at_latch(k)` what runs before k advances.
  void counted_loop(const char* prefix, Value* k0, Value* end, bool signed_compare, BasicBlock* exit,
                    const std::function<void(Value*, BasicBlock*)>& body,
                    const std::function<void(Value*)>& at_latch, Value* step = nullptr) {
    const std::string p = prefix;
    BasicBlock* pre = B.GetInsertBlock();
    BasicBlock* head = BasicBlock::Create(C, p + ".head", F);
    BasicBlock* bodyb = BasicBlock::Create(C, p + ".body", F);
    BasicBlock* latch = BasicBlock::Create(C, p + ".latch", F);
    B.CreateBr(head);
    B.SetInsertPoint(head);
    auto* k = B.CreatePHI(i64(), 2, "k");
    k->addIncoming(k0, pre);
    B.CreateCondBr(signed_compare ? B.CreateICmpSLT(k, end) : B.CreateICmpULT(k, end), bodyb, exit);
    B.SetInsertPoint(bodyb);
    body(k, latch);
    if (!B.GetInsertBlock()->getTerminator()) B.CreateBr(latch);
    B.SetInsertPoint(latch);
    if (at_latch) at_latch(k);
    k->addIncoming(B.CreateAdd(k, step ? step : c64(1)), latch);
    auto* back = B.CreateBr(head);
    if (warn_gen_ == WarnGen::Classify) rarely_run_loop(back);
  }

  // Tells LLVM that the loop whose back edge is `back` rarely runs: not worth vectorizing
  // or unrolling.
  void rarely_run_loop(llvm::Instruction* back) {
    auto* tmp = llvm::MDNode::getTemporary(C, {}).release();
    llvm::Metadata* off[] = {llvm::MDString::get(C, "llvm.loop.vectorize.enable"),
                             llvm::ConstantAsMetadata::get(B.getFalse())};
    llvm::Metadata* ops[] = {tmp, llvm::MDNode::get(C, off),
                             llvm::MDNode::get(C, {llvm::MDString::get(C, "llvm.loop.unroll.disable")})};
    llvm::MDNode* loop = llvm::MDNode::getDistinct(C, ops);
    loop->replaceOperandWith(0, loop);
    llvm::MDNode::deleteTemporary(tmp);
    back->setMetadata(llvm::LLVMContext::MD_loop, loop);
  }

  void plain_loop(const Stmt& s, const Stmt& body_s, Value* k0, Value* trip, BasicBlock* exit) {
    counted_loop("for", k0, trip, false, exit, [&](Value* k, BasicBlock* latch) {
      enter_iteration(s, k);
      if (ir::contains_loop(body_s)) poll_interrupts(body_s);
      targets_.push_back({s->loop, latch, exit});
      stmt(body_s);
      targets_.pop_back();
    }, nullptr);
  }

  // ------------------------------------------------------------ parallel loops
  // Everything generation keeps per LLVM function, saved while a loop body is outlined.
  struct FnState {
    llvm::Function* F;
    BasicBlock* insert;
    Value* state;
    std::vector<llvm::AllocaInst*> bits, tags;
    std::vector<LoopSlots> loops;
    BasicBlock* exit;
    llvm::PHINode* exit_status;
    int resume;
    llvm::AllocaInst* bad_slot;
    bool deferred;
    std::vector<Targets> targets;
    std::vector<Arr> arrays;
    std::map<int, V> tuples;
    std::vector<WarnSlots> warn_flags;
    llvm::AllocaInst* warn_counter;
    llvm::AllocaInst* fast_bad;
    llvm::AllocaInst* par_iter;
  };
  FnState save_fn() {
    FnState st{F, B.GetInsertBlock(), state_, bits_, tags_, loops_, exit_, exit_status_, resume_, bad_slot_, deferred_,
               targets_, arrays_, tuples_, warn_flags_, warn_counter_, fast_bad_, par_iter_};
    warn_flags_.clear();
    warn_counter_ = nullptr;
    fast_bad_ = nullptr;
    return st;
  }
  void restore_fn(FnState&& st) {
    F = st.F;
    B.SetInsertPoint(st.insert);
    state_ = st.state;
    bits_ = std::move(st.bits);
    tags_ = std::move(st.tags);
    loops_ = std::move(st.loops);
    exit_ = st.exit;
    exit_status_ = st.exit_status;
    resume_ = st.resume;
    bad_slot_ = st.bad_slot;
    deferred_ = st.deferred;
    targets_ = std::move(st.targets);
    arrays_ = std::move(st.arrays);
    tuples_ = std::move(st.tuples);
    warn_flags_ = std::move(st.warn_flags);
    warn_counter_ = st.warn_counter;
    fast_bad_ = st.fast_bad;
    par_iter_ = st.par_iter;
  }

  // The per-thread record of a parallel loop (i64 slots): reduction partials; for each
  // private variable the last iteration that assigned it and that value (bits, tag); for
  // each warning site of the body and kind, the first iteration it occurred in.
  struct ParRecord {
    // Offsets in a record: the reductions' bits, their tags (float | np.float64), their
    // companions' bits and tags (comp[r]: reduction r's first), the privates' last values,
    // the warnings; the record's size. A body that logs its stores (undo_log.h) has its log
    // first: log = 0, else -1.
    int log = -1, red = 0, tag = 0, sign = 0, last = 0, warn = 0, size = 0;
    std::vector<int> comp;
  };

  // A runtime address that is the same for the whole process (a runtime function, a flag),
  // by name: the JIT defines the name, so the kernel's IR and object code do not depend on
  // where things were loaded, and the kernel can be cached on disk (jit.h).
  Value* runtime_address(const std::string& name, const void* address) {
    // A null address (a ufunc loop's data may be) stays a constant: a symbol at 0 is unresolved.
    if (!address) return llvm::ConstantPointerNull::get(llvm::PointerType::get(C, 0));
    if (gpu_body_) gpu_refuse("it needs the host's " + name);
    cpu::define_runtime_symbol(name, address);
    return M->getOrInsertGlobal(name, i8());
  }
  // A pointer to something of this kernel's own (a GPU launch's description): written into
  // the code, so the module is never cached on disk.
  Value* process_pointer(const void* p) {
    if (!M->getModuleFlag(cpu::kNoCacheFlag)) M->addModuleFlag(llvm::Module::Warning, cpu::kNoCacheFlag, 1);
    return B.CreateIntToPtr(c64((int64_t)(uintptr_t)p), ptr());
  }

  Value* slot_ptr(Value* base, Value* index) { return B.CreateGEP(i64(), base, index); }

  // The context array an outlined body reads (i64 slots): bits[nv], tags[nv], the live-in
  // arrays (data, shapes, strides), tuple items, start, step, the records' address.
  struct CtxLayout {
    int bits = 0, tags = 0, arrays = 0, tuples = 0, start = 0, step = 0, results = 0, size = 0;
    int copies = -1;  // the threads' copies of each array reduction's array (parallel_loop)
    std::vector<int> array_slot;  // per live-in array: its data slot
  };
  CtxLayout ctx_layout() {
    const int nv = (int)nest_.vars.size();
    CtxLayout cx;
    cx.tags = nv;
    cx.arrays = 2 * nv;
    int at = cx.arrays;
    for (auto& a : arrays_) {
      cx.array_slot.push_back(at);
      at += 1 + 2 * a.t->ndim + (a.offsets ? 1 : 0);
    }
    cx.tuples = at;
    for (auto& [v, tv] : tuples_) at += (int)tv.elems.size();
    cx.start = at++;
    cx.step = at++;
    cx.results = at++;
    cx.size = at;
    return cx;
  }

  struct Outlined {
    llvm::Function* fn = nullptr;
    ParRecord pr;
    size_t sites = 0;      // warning sites of the body
    bool gave_up = false;  // the body could stop for CPython
  };

  // Generates, into the current module, `int32 body(ctx, lo, hi, tid)` running iterations
  // [lo, hi) of loop `s` with thread `tid`'s record (results + tid * size). The GPU version
  // (gpu_body_) uses record 0 for every thread: only tid 0 records the privates, and
  // warnings go in with atomic min. Leaves the generator's state as it found it, the
  // body's warning sites appended to layout_.warn_sites.
  //
  // `logging`: the body appends every array store to its record's undo log (undo_log.h), so
  // that a run in which a thread stopped for CPython can be undone (parallel_loop).
  Outlined outline_body(const Stmt& s, const specialize::LoopPlan& lp, const CtxLayout& cx, const std::string& fname,
                        bool logging = false) {
    const size_t nv = nest_.vars.size();
    const std::vector<int>& last_vars = lp.privates;
    Outlined out;
    const size_t sites0 = layout_.warn_sites.size();
    const int bails0 = bails_emitted();
    const std::vector<Arr> parent_arrays = arrays_;
    const std::map<int, V> parent_tuples = tuples_;
    std::vector<LoopSlots> parent_loops = loops_;
    const std::set<int> parent_nonzero = nonzero_vars_;
    const std::set<std::pair<int, DType>> parent_fitting = fitting_vars_;
    const int parent_par_loop = par_loop_;
    llvm::AllocaInst* const parent_spec_bad = spec_bad_;
    const int parent_soft_checks = soft_checks_;
    FnState parent = save_fn();
    const std::optional<StoreLog> parent_log = log_;
    log_.reset();
    auto* bty = llvm::FunctionType::get(B.getInt32Ty(), {ptr(), i64(), i64(), i64()}, false);
    llvm::Function* body = llvm::Function::Create(bty, llvm::Function::InternalLinkage, fname, M);
    body->addFnAttr(llvm::Attribute::NoUnwind);
    auto restore = [&] {
      restore_fn(std::move(parent));
      log_ = parent_log;
      loops_ = parent_loops;
      nonzero_vars_ = parent_nonzero;
      fitting_vars_ = parent_fitting;
      par_loop_ = parent_par_loop;
      spec_bad_ = parent_spec_bad;
      soft_checks_ = parent_soft_checks;
      reassoc_ops_.clear();
      exact_ops_.clear();
      counter_ops_.clear();
      sign_ops_.clear();
      warn_stride_ = nullptr;
      gpu_warn_iter_ = nullptr;
    };
    try {
      F = body;
      auto arg = body->arg_begin();
      Value* ctx = &*arg++;
      Value* lo = &*arg++;
      Value* hi = &*arg++;
      Value* tid = &*arg++;
      BasicBlock* entry_bb = BasicBlock::Create(C, "entry", F);
      B.SetInsertPoint(entry_bb);
      auto ctx_i64 = [&](int k) { return B.CreateLoad(i64(), B.CreateConstGEP1_64(i64(), ctx, k)); };
      bits_.assign(nv, nullptr);
      tags_.assign(nv, nullptr);
      for (size_t v = 0; v < nv; v++) {
        bits_[v] = B.CreateAlloca(i64(), nullptr, nest_.vars[v].name);
        tags_[v] = B.CreateAlloca(i8(), nullptr, nest_.vars[v].name + ".tag");
        B.CreateStore(ctx_i64(cx.bits + (int)v), bits_[v]);
        B.CreateStore(B.CreateTrunc(ctx_i64(cx.tags + (int)v), i8()), tags_[v]);
      }
      bad_slot_ = B.CreateAlloca(i1(), nullptr, "bad");
      B.CreateStore(B.getFalse(), bad_slot_);
      deferred_ = false;
      loops_.assign(nest_.loops.size(), LoopSlots{});
      for (size_t l = 0; l < nest_.loops.size(); l++) {
        auto& ls = loops_[l];
        for (auto** a : {&ls.cur, &ls.stop, &ls.step, &ls.trip, &ls.start}) {
          *a = B.CreateAlloca(i64(), nullptr, "L" + std::to_string(l));
          B.CreateStore(c64(0), *a);
        }
      }
      B.CreateStore(ctx_i64(cx.start), loops_[(size_t)s->loop].start);
      // A step range() was given as a constant (or not at all) is that constant here too:
      // the vectorizer needs to see unit steps (an interchanged loop's inner loop is this one).
      const std::optional<int64_t> cstep = constant_step(s->loop);
      B.CreateStore(cstep ? (Value*)c64(*cstep) : (Value*)ctx_i64(cx.step), loops_[(size_t)s->loop].step);
      arrays_.clear();
      for (size_t x = 0; x < parent_arrays.size(); x++) {
        int k = cx.array_slot[x];
        Arr a;
        a.t = parent_arrays[x].t;
        a.data = B.CreateIntToPtr(ctx_i64(k++), ptr());
        for (int d = 0; d < a.t->ndim; d++) a.shape.push_back(ctx_i64(k++));
        for (int d = 0; d < a.t->ndim; d++) a.strides.push_back(ctx_i64(k++));
        if (parent_arrays[x].offsets) ragged_layout(a, B.CreateIntToPtr(ctx_i64(k++), ptr()));
        fix_strides(a);
        arrays_.push_back(a);
      }
      {
        int k = cx.tuples;
        tuples_.clear();
        for (auto& [v, tv] : parent_tuples) {
          V t = tv;
          for (auto& e : t.elems) e.v = from_bits(ctx_i64(k++), e.t);
          tuples_[v] = t;
        }
      }
      // An array the loop sums into (ArrayReduction) is this thread's copy of it here.
      for (size_t j = 0; j < lp.array_reductions.size(); j++) {
        Arr& a = arrays_[(size_t)array_id_[(size_t)lp.array_reductions[j].var]];
        a.strides = copy_strides(a);
        a.data = B.CreateGEP(i8(), B.CreateIntToPtr(ctx_i64(cx.copies + (int)j), ptr()), B.CreateMul(tid, copy_bytes(a)));
      }
      Value* results = B.CreateIntToPtr(ctx_i64(cx.results), ptr());
      // This thread's record (its size is known once the body is generated: patched below).
      llvm::Instruction* rec_size = B.Insert(llvm::BinaryOperator::CreateAdd(c64(0), c64(0)), "rec.size");
      // On the GPU a loop with reductions keeps a record per thread (tid), the others share
      // record 0.
      const bool gpu_red = gpu_body_ && !lp.reductions.empty();
      Value* rec = gpu_body_ && !gpu_red ? results : B.CreateGEP(i64(), results, B.CreateMul(tid, rec_size));
      ParRecord& pr = out.pr;
      const int64_t nred = (int64_t)lp.reductions.size();
      if (logging) {
        pr.log = 0;
        log_ = StoreLog{B.CreateAlloca(ptr(), nullptr, "log.cur"), B.CreateAlloca(ptr(), nullptr, "log.end"), rec};
        B.CreateStore(B.CreateIntToPtr(B.CreateLoad(i64(), rec), ptr()), log_->cur);
        B.CreateStore(B.CreateIntToPtr(B.CreateLoad(i64(), B.CreateConstGEP1_64(i64(), rec, 1)), ptr()), log_->end);
      }
      pr.red = logging ? kUndoSlots : 0;
      pr.tag = pr.red + (int)nred;
      pr.sign = pr.tag + (int)nred;
      int at = pr.sign + (int)nred;
      for (auto& r : lp.reductions) {
        pr.comp.push_back(at);
        at += 2 * (int)r.companions.size();
      }
      pr.last = at;
      pr.warn = pr.last + 3 * (int)last_vars.size();
      for (int64_t r = 0; r < nred; r++) {
        const int var = lp.reductions[(size_t)r].var;
        B.CreateStore(B.CreateLoad(i64(), B.CreateConstGEP1_64(i64(), rec, pr.red + r)), bits_[(size_t)var]);
        B.CreateStore(B.CreateTrunc(B.CreateLoad(i64(), B.CreateConstGEP1_64(i64(), rec, pr.tag + r)), i8()),
                      tags_[(size_t)var]);
      }
      std::vector<llvm::AllocaInst*> last_it, last_bits, last_tag;
      for (size_t p = 0; p < last_vars.size(); p++) {
        last_it.push_back(B.CreateAlloca(i64(), nullptr, "last.it"));
        last_bits.push_back(B.CreateAlloca(i64(), nullptr, "last.bits"));
        last_tag.push_back(B.CreateAlloca(i64(), nullptr, "last.tag"));
        for (int j = 0; j < 3; j++) {
          llvm::AllocaInst* dst = j == 0 ? last_it.back() : j == 1 ? last_bits.back() : last_tag.back();
          B.CreateStore(B.CreateLoad(i64(), B.CreateConstGEP1_64(i64(), rec, pr.last + 3 * (int64_t)p + j)), dst);
        }
      }
      par_iter_ = B.CreateAlloca(i64(), nullptr, "par.iter");
      warn_stride_ = B.Insert(llvm::BinaryOperator::CreateAdd(c64(0), c64(0)), "warn.stride");
      for (auto& [v, t] : lp.invariant_divisors) nonzero_vars_.insert(v);
      for (auto& vd : lp.invariant_operands) fitting_vars_.insert(vd);
      par_loop_ = s->loop;
      // A body that writes nothing may run speculatively (parallel_loop): it may then stop
      // for a signal, as the sequential loop does. (Not where loops may run on a GPU,
      // which cannot stop: speculative loops have no GPU version.)
      soft_checks_ = 0;
      spec_bad_ = nullptr;
      if (lp.store_free && !gpu_body_ && !options_.gpu && options_.plan->threads >= 2) {
        spec_bad_ = B.CreateAlloca(i1(), nullptr, "spec.bad");
        B.CreateStore(B.getFalse(), spec_bad_);
      }
      for (auto& r : lp.reductions)
        if (r.kind == specialize::Reduction::Kind::Arith && r.type && is_float_t(rep(r.type)))
          reassoc_ops_.insert(r.updates.begin(), r.updates.end());
      std::vector<llvm::AllocaInst*> signs(lp.reductions.size(), nullptr);
      for (size_t r = 0; r < lp.reductions.size(); r++) {
        const specialize::Reduction& red = lp.reductions[r];
        if (red.checked) exact_ops_.insert(red.updates.begin(), red.updates.end());
        if (red.counter) counter_ops_.insert(red.updates.begin(), red.updates.end());
        if (sign_tracked(red)) {
          signs[r] = B.CreateAlloca(i64(), nullptr, "part.signs");
          B.CreateStore(c64(0), signs[r]);
          for (const ExprNode* u : red.updates) sign_ops_[u] = {signs[r], red.var};
        }
      }
      for (auto& ar : lp.array_reductions)
        if (ar.checked) exact_ops_.insert(ar.updates.begin(), ar.updates.end());
      exit_ = BasicBlock::Create(C, "exit", F);
      {
        llvm::IRBuilder<> eb(exit_);
        exit_status_ = eb.CreatePHI(B.getInt32Ty(), 2, "status");
        // However the run ends, the log's entries so far are the record's.
        if (log_) eb.CreateStore(eb.CreatePtrToInt(eb.CreateLoad(ptr(), log_->cur), i64()), log_->slots);
        eb.CreateRet(exit_status_);
      }
      // The iterations: with nothing to track per iteration, the ordinary loop (speculative
      // chunks included); else one that records which iteration assigned each lastprivate.
      BasicBlock* done = BasicBlock::Create(C, "par.done", F);
      targets_.clear();
      // A GPU thread of a loop with reductions runs every lanes-th iteration from lo + its lane.
      Value* start = lo;
      Value* stride = nullptr;
      if (gpu_red) {
        start = B.CreateAdd(lo, gpu_lane());
        stride = gpu_lanes();
      }
      // Privates a run of iterations assigned (tag set) count as assigned by `iteration`.
      auto record_last = [&](Value* iteration) {
        for (size_t p = 0; p < last_vars.size(); p++) {
          int v = last_vars[p];
          Value* tag = B.CreateLoad(i8(), tags_[(size_t)v]);
          Value* set = B.CreateICmpNE(tag, c8(0));
          B.CreateStore(B.CreateSelect(set, iteration, B.CreateLoad(i64(), last_it[p])), last_it[p]);
          B.CreateStore(B.CreateSelect(set, B.CreateLoad(i64(), bits_[(size_t)v]), B.CreateLoad(i64(), last_bits[p])),
                        last_bits[p]);
          B.CreateStore(B.CreateSelect(set, B.CreateZExt(tag, i64()), B.CreateLoad(i64(), last_tag[p])), last_tag[p]);
        }
      };
      if (last_vars.empty() && !gpu_red) {
        for_iterations(s, lo, hi, done);
      } else if (!gpu_body_ && !gpu_red) {
        // On the CPU, the run [lo, hi) goes in order (or interleaved, plan_interleave.h, or
        // interchanged, plan_interchange.h, which end on the same iteration; or in
        // speculative chunks): a private assigned anywhere in it counts as assigned by its
        // last iteration, hi - 1. The value is the last one assigned, and as runs are
        // contiguous and disjoint, hi - 1 orders the records as that iteration would. (A
        // run that stopped is never combined: its results are dropped, or its window
        // undone.) So for_iterations may chunk it, which a loop that records the iteration
        // of each assignment could not.
        for (int v : last_vars) B.CreateStore(c8(0), tags_[(size_t)v]);
        BasicBlock* ran = BasicBlock::Create(C, "par.ran", F);
        for_iterations(s, lo, hi, ran);
        B.SetInsertPoint(ran);
        record_last(B.CreateSub(hi, c64(1)));
        B.CreateBr(done);
      } else {
        counted_loop("par", start, hi, true, done, [&](Value* k, BasicBlock* latch) {
          for (int v : last_vars) B.CreateStore(c8(0), tags_[(size_t)v]);  // "not assigned in this iteration"
          enter_iteration(s, k);
          if (ir::contains_loop(s->body[0])) poll_interrupts(s->body[0]);
          targets_.push_back({s->loop, latch, nullptr});
          stmt(s->body[0]);
          targets_.pop_back();
        }, record_last, stride);
      }
      B.SetInsertPoint(done);
      if (soft_checks_ > 0) {
        // A deferred check failed somewhere in the run: it is void (status 1).
        BasicBlock* failed = BasicBlock::Create(C, "spec.failed", F);
        BasicBlock* fine = BasicBlock::Create(C, "spec.fine", F);
        cold_branch(B.CreateLoad(i1(), spec_bad_), failed, fine);
        B.SetInsertPoint(failed);
        count_bail();
        exit_with(B.getInt32(1));
        B.SetInsertPoint(fine);
      }
      out.gave_up = bails_emitted() != bails0;
      out.sites = layout_.warn_sites.size() - sites0;
      pr.size = pr.warn + 3 * (int)out.sites;
      pr.size = (pr.size + 7) / 8 * 8;  // records on their own cache lines
      for (int64_t r = 0; r < nred; r++) {
        const specialize::Reduction& red = lp.reductions[(size_t)r];
        B.CreateStore(B.CreateLoad(i64(), bits_[(size_t)red.var]), B.CreateConstGEP1_64(i64(), rec, pr.red + r));
        B.CreateStore(B.CreateZExt(B.CreateLoad(i8(), tags_[(size_t)red.var]), i64()),
                      B.CreateConstGEP1_64(i64(), rec, pr.tag + r));
        if (signs[(size_t)r])
          B.CreateStore(B.CreateLoad(i64(), signs[(size_t)r]), B.CreateConstGEP1_64(i64(), rec, pr.sign + r));
        // Companions as this part left them (read only where its value is taken).
        for (size_t k = 0; k < red.companions.size(); k++) {
          const size_t c = (size_t)red.companions[k];
          const int64_t at = pr.comp[(size_t)r] + 2 * (int64_t)k;
          B.CreateStore(B.CreateLoad(i64(), bits_[c]), B.CreateConstGEP1_64(i64(), rec, at));
          B.CreateStore(B.CreateZExt(B.CreateLoad(i8(), tags_[c]), i64()), B.CreateConstGEP1_64(i64(), rec, at + 1));
        }
      }
      if (!last_vars.empty()) {
        BasicBlock* store_last = BasicBlock::Create(C, "par.store.last", F);
        BasicBlock* after_last = BasicBlock::Create(C, "par.after.last", F);
        Value* record = B.getTrue();
        if (gpu_body_) {
          record = B.CreateICmpEQ(tid, c64(0));
          if (gpu_last_lane_) record = B.CreateAnd(record, B.CreateLoad(i1(), gpu_last_lane_));
        }
        B.CreateCondBr(record, store_last, after_last);
        B.SetInsertPoint(store_last);
        for (size_t p = 0; p < last_vars.size(); p++)
          for (int j = 0; j < 3; j++) {
            llvm::AllocaInst* src = j == 0 ? last_it[p] : j == 1 ? last_bits[p] : last_tag[p];
            B.CreateStore(B.CreateLoad(i64(), src), B.CreateConstGEP1_64(i64(), rec, pr.last + 3 * (int64_t)p + j));
          }
        B.CreateBr(after_last);
        B.SetInsertPoint(after_last);
      }
      for (size_t w = 0; w < out.sites; w++)
        for (int j = 0; j < 3; j++) {
          Value* at_rec = B.CreateConstGEP1_64(i64(), rec, pr.warn + 3 * (int64_t)w + j);
          Value* mine = B.CreateLoad(i64(), warn_flags_[w].first[j]);
          if (gpu_body_ && !gpu_red) {
            // Threads that saw it (rare) fold their first iteration in atomically.
            BasicBlock* saw = BasicBlock::Create(C, "warn.saw", F);
            BasicBlock* next = BasicBlock::Create(C, "warn.next", F);
            B.CreateCondBr(B.CreateICmpNE(mine, c64(INT64_MAX)), saw, next);
            B.SetInsertPoint(saw);
            B.CreateAtomicRMW(llvm::AtomicRMWInst::Min, at_rec, mine, llvm::MaybeAlign(8),
                              llvm::AtomicOrdering::Monotonic);
            B.CreateBr(next);
            B.SetInsertPoint(next);
          } else {
            Value* theirs = B.CreateLoad(i64(), at_rec);
            B.CreateStore(B.CreateBinaryIntrinsic(llvm::Intrinsic::smin, mine, theirs), at_rec);
          }
        }
      exit_status_->addIncoming(B.getInt32(0), B.GetInsertBlock());
      B.CreateBr(exit_);
      rec_size->replaceAllUsesWith(c64(pr.size));
      rec_size->eraseFromParent();
      warn_stride_->replaceAllUsesWith(c64(warn_key_stride(out.sites)));
      warn_stride_->eraseFromParent();
      for (auto& bb : *F)
        if (!bb.getTerminator()) {
          B.SetInsertPoint(&bb);
          B.CreateUnreachable();
        }
    } catch (...) {
      gpu_last_lane_ = nullptr;
      restore();
      body->eraseFromParent();
      layout_.warn_sites.resize(sites0);
      reset_bails(bails0);
      throw;
    }
    gpu_last_lane_ = nullptr;
    restore();
    out.fn = body;
    return out;
  }

  // ------------------------------------------------------------ GPU versions
  // A parallel loop without reductions also gets a GPU version when the kernel is built
  // for a machine with a GPU (options_.gpu): the same body, generated into an NVPTX module
  // with a kernel entry running one iteration per GPU thread. Anything the GPU cannot do
  // exactly as the CPU does (a libm function other than sqrt, a NumPy ufunc loop called on
  // the host) refuses the GPU version, with the reason, and the loop stays on the threads.
  struct GpuRefusal {
    std::string why;
  };
  bool gpu_body_ = false;        // generating a body into the GPU module
  bool gpu_mode_ = false;        // some loop may run on the GPU: host code flushes the mirrors first
  bool no_interleave_ = false;   // a parallel body generated again for its GPU version (parallel_loop)
  std::set<int> gpu_candidates_;
  std::set<int> outer_parallel_;  // planned parallel, inside no other such loop
  std::unique_ptr<llvm::Module> gpu_module_;
  gpu::GpuModule* gpu_info_ = nullptr;
  std::vector<gpu::GpuLoop*> gpu_loops_;
  std::map<int, std::string> gpu_refused_;

  [[noreturn]] void gpu_refuse(std::string why) { throw GpuRefusal{std::move(why)}; }

  void gpu_flush() {
    auto* fty = llvm::FunctionType::get(B.getVoidTy(), {}, false);
    B.CreateCall(fty, runtime_address("stagepy_gpu_flush", reinterpret_cast<void*>(&stagepy_gpu_flush)), {});
  }

  static bool is_array_t(const TypeRef& t) { return t && t->kind == Type::Kind::Array; }

  static void walk(const Expr& e, const std::function<void(const Expr&)>& f) {
    if (!e) return;
    f(e);
    for (auto& a : e->args) walk(a, f);
  }
  // The expressions statement `s` evaluates itself (not those of the statements in it).
  static void own_exprs(const Stmt& s, const std::function<void(const Expr&)>& f) {
    for (auto& e : s->effects) {
      walk(e.base, f);
      walk(e.index, f);
      walk(e.value, f);
    }
    walk(s->cond, f);
    for (auto& a : s->args) walk(a, f);
  }
  static bool reads_or_writes_elements(const Stmt& s, bool own_only) {
    bool any = false;
    auto f = [&](const Expr& e) {
      if (e->kind == ExprNode::Kind::Subscript && is_array_t(e->args[0]->type)) any = true;
    };
    auto g = [&](const Stmt& x) {
      own_exprs(x, f);
      for (auto& e : x->effects)
        if (e.kind == ir::Effect::Kind::Store && e.base && is_array_t(e.base->type)) any = true;
    };
    if (own_only) g(s);
    else ir::for_each_stmt(s, g);
    return any;
  }
  bool contains_gpu_loop(const Stmt& s) {
    bool any = false;
    ir::for_each_stmt(s, [&](const Stmt& x) {
      any = any || (x->kind == StmtNode::Kind::For && gpu_candidates_.count(x->loop));
    });
    return any;
  }

  // The live-in arrays (ids) an array expression may refer to: all those of its type where
  // the variable is reassigned in the nest, every one where the expression is not a variable.
  std::vector<int> arrays_of(const Expr& base) {
    const ExprNode* e = base.get();
    while (e->kind == ExprNode::Kind::Subscript) e = e->args[0].get();
    int var = -1;
    if (e->kind == ExprNode::Kind::Load) var = e->var;
    else if (e->kind == ExprNode::Kind::Attr && e->pseudo >= 0) var = e->pseudo;
    if (var >= 0 && !nest_.vars[(size_t)var].assigned && array_id_[(size_t)var] >= 0) return {array_id_[(size_t)var]};
    std::vector<int> ids;
    for (size_t k = 0; k < arrays_.size(); k++)
      if (var < 0 || !is_array_t(e->type) || types::same(arrays_[k].t, e->type)) ids.push_back((int)k);
    return ids;
  }

  // A rough count of the operations of one iteration of `s`'s body (the cost model):
  // inner loops count 16 iterations.
  static double ops_estimate(const Stmt& s) {
    double n = 0;
    own_exprs(s, [&](const Expr&) { n += 1; });
    for (auto& e : s->effects) n += e.kind == ir::Effect::Kind::Store ? 2 : 0;
    double inner = 0;
    for (auto& b : s->body) inner += ops_estimate(b);
    if (s->kind == StmtNode::Kind::For || s->kind == StmtNode::Kind::While) inner *= 16;
    return n + inner + 1;
  }

  // The statements of `body` at its top level: blocks flattened, and the `if nonempty(L)`
  // that typing wraps around a peeled loop L seen through.
  static std::vector<Stmt> top_level(const Stmt& body) {
    std::vector<Stmt> xs;
    std::function<void(const Stmt&)> flat = [&](const Stmt& x) {
      if (x->kind == StmtNode::Kind::Block) {
        for (auto& b : x->body) flat(b);
      } else if (x->kind == StmtNode::Kind::If && x->cond->kind == ExprNode::Kind::LoopNonEmpty &&
                 x->body[1]->kind == StmtNode::Kind::Block && x->body[1]->body.empty()) {
        flat(x->body[0]);
      } else {
        xs.push_back(x);
      }
    };
    flat(body);
    return xs;
  }

  // A parallel loop whose body is exactly one parallel loop without reductions (a perfect
  // nest, `for i: for j: ...`): on the GPU the inner loop's iterations are spread over the
  // threads of a block row (consecutive threads, consecutive j: coalesced accesses), the
  // outer loop's over the block rows. Returns the inner loop's id, or -1.
  int gpu_collapsible(const Stmt& s) const {
    const std::vector<Stmt> xs = top_level(s->body[0]);
    const StmtNode* inner = nullptr;
    for (auto& x : xs)
      if (x->kind == StmtNode::Kind::For) {
        if (inner) return -1;
        inner = x.get();
      } else if (!(x->kind == StmtNode::Kind::Range || (x->kind == StmtNode::Kind::Continue && x->loop == s->loop))) {
        return -1;
      }
    if (!inner || !options_.plan) return -1;
    for (auto& x : xs)
      if (x->kind == StmtNode::Kind::Range && x->loop != inner->loop) return -1;
    const auto& lp = options_.plan->loops[(size_t)inner->loop];
    if (!lp.parallel || !lp.reductions.empty() || !lp.array_reductions.empty()) return -1;
    // The lane that runs the inner loop's last iteration records the outer iteration's
    // privates: each of them must be assigned by every inner iteration (or be the variable
    // of an inner loop whose range is the same for all of them), so that what that lane
    // saw is what the last iteration of the nest left.
    std::set<int> must = assigned_every_time(inner->body[0], inner->loop);
    if (inner->peeled) {
      std::set<int> first = assigned_every_time(inner->body[1], inner->loop), both;
      for (int v : must)
        if (first.count(v)) both.insert(v);
      must = both;
    }
    for (int v : options_.plan->loops[(size_t)s->loop].privates)
      if (v != inner->var && !must.count(v) && !nest_.vars[(size_t)v].scratch) return -1;  // (scratch: dead after its statement)
    return inner->loop;
  }
  // Variables every run of `body` assigns: assignments at its top level before any
  // continue, and the variables of top-level loops whose range is fixed for the nest.
  std::set<int> assigned_every_time(const Stmt& body, int loop) const {
    const std::vector<Stmt> xs = top_level(body);
    auto fixed = [&](const std::vector<Expr>& args) {
      bool ok = true;
      for (auto& a : args)
        walk(a, [&](const Expr& e) {
          if (e->kind == ExprNode::Kind::Load) ok = ok && !nest_.vars[(size_t)e->var].assigned;
          else if (e->kind != ExprNode::Kind::Const && e->kind != ExprNode::Kind::Binary) ok = false;
        });
      return ok;
    };
    // A `continue` inside an `if` may skip the assignments after it: then nothing counts.
    std::set<const StmtNode*> top;
    for (auto& x : xs) top.insert(x.get());
    bool early_exit = false;
    ir::for_each_stmt(body, [&](const Stmt& x) {
      if ((x->kind == StmtNode::Kind::Continue || x->kind == StmtNode::Kind::Break) && x->loop == loop &&
          !top.count(x.get()))
        early_exit = true;
      if (x->kind == StmtNode::Kind::Exit) early_exit = true;
    });
    std::map<int, const StmtNode*> ranges;
    std::set<int> out;
    if (early_exit) return out;
    for (auto& x : xs) {
      if (x->kind == StmtNode::Kind::Continue || x->kind == StmtNode::Kind::Break || x->kind == StmtNode::Kind::Exit) break;
      if (x->kind == StmtNode::Kind::Range) ranges[x->loop] = x.get();
      if (x->kind == StmtNode::Kind::Seg)
        for (auto& e : x->effects)
          if (e.kind == ir::Effect::Kind::Assign) out.insert(e.var);
      if (x->kind == StmtNode::Kind::For) {
        auto r = ranges.find(x->loop);
        if (fixed(x->args) && (r == ranges.end() || fixed(r->second->args))) out.insert(x->var);
      }
    }
    return out;
  }
  int gpu_collapse_loop_ = -1;  // generating a GPU body: the inner loop spread over the lanes
  llvm::AllocaInst* gpu_last_lane_ = nullptr;  // this lane ran the collapsed loop's last iteration

  Value* gpu_sreg(llvm::Intrinsic::ID id) {
    return B.CreateZExt(B.CreateCall(llvm::Intrinsic::getDeclaration(M, id)), i64());
  }
  // This thread's place among the grid's threads along x, and how many there are.
  Value* gpu_lane() {
    return B.CreateAdd(B.CreateMul(gpu_sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x),
                                   gpu_sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x)),
                       gpu_sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x));
  }
  Value* gpu_lanes() {
    return B.CreateMul(gpu_sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x),
                       gpu_sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x));
  }
  // Iterations [0, trip) of the collapsed inner loop: this thread's lane, then every
  // `lanes` (all of them when a single thread runs the body).
  void gpu_lanes_loop(const Stmt& s, Value* trip, BasicBlock* exit) {
    Value* lane = gpu_lane();
    // The lane that runs the inner loop's last iteration (lane 0 when it runs none) is the
    // one whose privates are the outer iteration's: their tags start each inner iteration
    // cleared, so that they say what that iteration assigned (a private of the outer loop
    // that the inner body reads is assigned earlier in the same inner iteration, or the
    // inner loop would carry a dependence and not be parallel).
    if (!gpu_last_lane_) {
      llvm::IRBuilder<> eb(&F->getEntryBlock(), F->getEntryBlock().begin());
      gpu_last_lane_ = eb.CreateAlloca(i1(), nullptr, "last.lane");
      eb.CreateStore(B.getFalse(), gpu_last_lane_);
    }
    B.CreateStore(B.CreateICmpEQ(lane, c64(0)), gpu_last_lane_);
    std::vector<int> outer_privates;
    if (par_loop_ >= 0)
      for (int v : options_.plan->loops[(size_t)par_loop_].privates)
        if (v != s->var) outer_privates.push_back(v);
    counted_loop("lanes", lane, trip, true, exit, [&](Value* k, BasicBlock* latch) {
      B.CreateStore(B.CreateICmpEQ(k, B.CreateSub(trip, c64(1))), gpu_last_lane_);
      for (int v : outer_privates) B.CreateStore(c8(0), tags_[(size_t)v]);
      enter_iteration(s, k);
      targets_.push_back({s->loop, latch, exit});
      if (s->peeled) {
        // The first iteration has its own typed body: whichever lane runs it. The others
        // run the steady body, which reads no variable before assigning it (the loop's
        // scalars are all private), so the lane's state before it does not matter.
        BasicBlock* first = BasicBlock::Create(C, "lanes.first", F);
        BasicBlock* rest = BasicBlock::Create(C, "lanes.rest", F);
        B.CreateCondBr(B.CreateICmpEQ(k, c64(0)), first, rest);
        B.SetInsertPoint(first);
        stmt(s->body[1]);
        if (!B.GetInsertBlock()->getTerminator()) B.CreateBr(latch);
        B.SetInsertPoint(rest);
      }
      stmt(s->body[0]);
      targets_.pop_back();
    }, nullptr, gpu_lanes());
  }

  static constexpr const char* kRecordsDiffer = "internal error: the GPU body's records differ from the CPU body's";

  gpu::GpuLoop* gpu_version(const Stmt& s, const specialize::LoopPlan& lp, const CtxLayout& cx, const ParRecord& pr,
                            size_t body_sites) {
    if (!options_.gpu) return nullptr;
    if (!gpu_candidates_.count(s->loop)) return nullptr;
    if (lp.ordered) {
      // GPU threads stride over the iterations: their parts are not runs in order.
      gpu_refused_[s->loop] = "a float min/max (or one with companions, an argmax) combines exactly only in iteration order";
      return nullptr;
    }
    if (!gpu_module_) {
      gpu_module_ = std::make_unique<llvm::Module>(name_ + "_gpu", C);
      gpu_module_->setTargetTriple(gpu::nvptx_triple());
      gpu_module_->setDataLayout(gpu::nvptx_data_layout());
      gpu_info_ = gpu::new_module();
    }
    const size_t sites_before = layout_.warn_sites.size();
    const int bails_before = bails_emitted();
    const std::string n = std::to_string(gpu_loops_.size());
    llvm::Module* host_module = M;
    M = gpu_module_.get();
    gpu_body_ = true;
    gpu_collapse_loop_ = lp.reductions.empty() ? gpu_collapsible(s) : -1;
    const bool collapsed = gpu_collapse_loop_ >= 0;
    Outlined g;
    std::string why;
    try {
      g = outline_body(s, lp, cx, name_ + "_gpubody" + n);
    } catch (const GpuRefusal& r) {
      why = r.why;
    } catch (const CodegenError& e) {
      why = e.reason;
    }
    M = host_module;
    gpu_body_ = false;
    gpu_collapse_loop_ = -1;
    layout_.warn_sites.resize(sites_before);
    reset_bails(bails_before);
    if (why.empty() && (g.sites != body_sites || g.pr.size != pr.size))
      why = kRecordsDiffer;
    if (!why.empty()) {
      if (g.fn) g.fn->eraseFromParent();
      gpu_refused_[s->loop] = why;
      return nullptr;
    }
    // The entry: iteration lo + (ctaid.x * ntid.x + tid.x), when below hi; for a collapsed
    // nest, iterations lo + ctaid.y, lo + ctaid.y + nctaid.y, ... below hi.
    const std::string entry_name = name_ + "_gpu" + n;
    auto* kty = llvm::FunctionType::get(B.getVoidTy(), {ptr(), i64(), i64(), i64()}, false);
    llvm::Function* kern = llvm::Function::Create(kty, llvm::Function::ExternalLinkage, entry_name, gpu_module_.get());
    {
      llvm::Function* host_f = F;
      llvm::Module* host_m = M;
      auto host_ip = B.saveIP();
      F = kern;
      M = gpu_module_.get();
      B.SetInsertPoint(BasicBlock::Create(C, "entry", kern));
      auto arg = kern->arg_begin();
      Value* ctx = &*arg++;
      Value* lo = &*arg++;
      Value* hi = &*arg++;
      Value* tid = &*arg++;
      auto run_iteration = [&](Value* k) { B.CreateCall(g.fn, {ctx, k, B.CreateAdd(k, c64(1)), tid}); };
      BasicBlock* done = BasicBlock::Create(C, "done", kern);
      if (collapsed) {
        Value* first_row = B.CreateAdd(lo, gpu_sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y));
        Value* rows = gpu_sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_y);
        counted_loop("rows", first_row, hi, true, done, [&](Value* k, BasicBlock*) { run_iteration(k); }, nullptr,
                     rows);
      } else if (!lp.reductions.empty()) {
        // The body strides over [lo, hi) itself; each thread has its own record.
        B.CreateCall(g.fn, {ctx, lo, hi, B.CreateAdd(tid, gpu_lane())});
        B.CreateBr(done);
      } else {
        Value* k = B.CreateAdd(lo, gpu_lane());
        BasicBlock* run = BasicBlock::Create(C, "run", kern);
        B.CreateCondBr(B.CreateICmpSLT(k, hi), run, done);
        B.SetInsertPoint(run);
        run_iteration(k);
        B.CreateBr(done);
      }
      B.SetInsertPoint(done);
      B.CreateRetVoid();
      F = host_f;
      M = host_m;
      B.restoreIP(host_ip);
    }
    llvm::Metadata* md[] = {llvm::ValueAsMetadata::get(kern), llvm::MDString::get(C, "kernel"),
                            llvm::ValueAsMetadata::get(B.getInt32(1))};
    gpu_module_->getOrInsertNamedMetadata("nvvm.annotations")->addOperand(llvm::MDNode::get(C, md));

    gpu::GpuLoop* gl = gpu::new_loop();
    gl->module = gpu_info_;
    gl->entry = entry_name;
    gl->collapsed = collapsed;
    gl->loop = s->loop;
    gl->line = s->line;
    gl->ctx_size = cx.size;
    gl->results_slot = cx.results;
    gl->arrays.resize(arrays_.size());
    for (size_t x = 0; x < arrays_.size(); x++) {
      gl->arrays[x].slot = cx.array_slot[x];
      gl->arrays[x].ndim = arrays_[x].t->ndim;
      gl->arrays[x].itemsize = item_bytes(*arrays_[x].t);
    }
    ir::for_each_stmt(s->body[0], [&](const Stmt& x) {
      own_exprs(x, [&](const Expr& e) {
        if (e->kind == ExprNode::Kind::Subscript && is_array_t(e->args[0]->type))
          for (int id : arrays_of(e->args[0])) gl->arrays[(size_t)id].touched = true;
      });
      for (auto& e : x->effects)
        if (e.kind == ir::Effect::Kind::Store && e.base && is_array_t(e.base->type))
          for (int id : arrays_of(e.base)) gl->arrays[(size_t)id].touched = gl->arrays[(size_t)id].written = true;
    });
    gl->record_size = pr.size;
    gl->reductions = (int)lp.reductions.size();
    gl->last = pr.last;
    gl->privates = (int)lp.privates.size();
    gl->warn = pr.warn;
    gl->warn_slots = 3 * (int)body_sites;
    gl->ops_per_iter = ops_estimate(s->body[0]);
    find_fresh_arrays(s, gl);
    gpu_loops_.push_back(gl);
    return gl;
  }

  // ------------------------------------------------------------ arrays a GPU loop overwrites
  // An array the GPU loop `s` stores into at [i0, i1, ...], one index per loop from `s`
  // down to the store, each that loop's variable, in order; where every iteration reaches
  // the store (no `if` around it but a loop's `nonempty` wrapper, no `while`, no break or
  // continue of a for loop, no exit) and nothing in the nest reads the array (its shape
  // aside). Where at run time each of those loops runs range(0, the extent of its
  // dimension) (gpu_fresh_mask), the loop writes every element before any is read: the
  // array is not copied to the device (GpuArray::fresh; an output such as Mandelbrot's).
  // Not where the last-iteration protocol may hand the rest to the host (status 2: a
  // private left unassigned), which a 2-D grid's nest never does with elements to write.
  struct FreshArray {
    int array = -1;
    std::vector<const ir::StmtNode*> loops;  // loops[d]: the For whose variable indexes dimension d
  };
  std::map<const gpu::GpuLoop*, std::vector<FreshArray>> gpu_fresh_;
  std::map<const ir::StmtNode*, std::vector<Expr>> fresh_range_args_;  // such a For's range() arguments

  // A range() argument the host can compute before the loop: an int constant, an int
  // variable the nest never assigns, `A.shape[c]` of an array variable it never assigns.
  bool host_range_arg(const Expr& e) const {
    using K = ExprNode::Kind;
    if (!e || !e->type || e->type->kind != Type::Kind::PyInt) return false;
    if (e->kind == K::Const) return true;
    if (e->kind == K::Load) return !nest_.vars[(size_t)e->var].assigned && !e->check_bound;
    if (e->kind == K::Subscript && e->args[1]->kind == K::Const && e->args[0]->kind == K::Attr &&
        e->args[0]->name == "shape" && !e->args[0]->args.empty()) {
      const Expr& b = e->args[0]->args[0];
      return b->kind == K::Load && !nest_.vars[(size_t)b->var].assigned && !b->check_bound && is_array_t(b->type) &&
             e->args[1]->value.kind == ir::ConstValue::Kind::Int && e->args[1]->value.i >= 0 &&
             e->args[1]->value.i < b->type->ndim;
    }
    return false;
  }

  void find_fresh_arrays(const Stmt& s, gpu::GpuLoop* gl) {
    using K = ExprNode::Kind;
    using SK = StmtNode::Kind;
    if (gl->privates > 0 && !gl->collapsed) return;
    bool spoiled = false;  // an exit, or a break or continue of a for loop (but the
                           // continue that ends its body: the lifter's back edge)
    std::set<int> loop_vars;
    std::set<const ir::StmtNode*> back_edges;
    std::map<int, std::vector<Expr>> range_args;  // (typed IR: a For's range() is its Range statement's)
    ir::for_each_stmt(s, [&](const Stmt& x) {
      if (x->kind == SK::Range) range_args[x->loop] = x->args;
      if (x->kind != SK::For) return;
      loop_vars.insert(x->var);
      for (auto& b : x->body) {
        const std::vector<Stmt> top = b ? ir::flatten_blocks(b) : std::vector<Stmt>{};
        if (!top.empty() && top.back()->kind == SK::Continue && top.back()->loop == x->loop)
          back_edges.insert(top.back().get());
      }
    });
    ir::for_each_stmt(s, [&](const Stmt& x) {
      if (x->kind == SK::Exit) spoiled = true;
      if ((x->kind == SK::Break || x->kind == SK::Continue) && x->loop >= 0 &&
          nest_.loops[(size_t)x->loop].is_for && !back_edges.count(x.get()))
        spoiled = true;
    });
    if (spoiled) return;
    ir::for_each_stmt(s->body[0], [&](const Stmt& x) {
      for (auto& f : x->effects)
        if (f.kind == ir::Effect::Kind::Assign && loop_vars.count(f.var)) spoiled = true;
    });
    if (spoiled) return;
    std::map<int, bool> ok;
    std::map<int, std::vector<const ir::StmtNode*>> dims;
    std::vector<const ir::StmtNode*> path{s.get()};
    auto index_is_path = [&](const Expr& index) {
      std::vector<Expr> at;
      if (index->kind == K::Tuple) at = index->args;
      else at = {index};
      if (at.size() != path.size()) return false;
      for (size_t d = 0; d < at.size(); d++)
        if (at[d]->kind != K::Load || at[d]->var != path[d]->var) return false;
      return true;
    };
    // `certain`: every iteration of the loops on `path` reaches here; `wrapped`: the id of
    // the loop whose `if nonempty` wrapper this is under and whose body it is not in yet
    // (the wrapper's statements outside that loop run only where it has iterations).
    std::function<void(const Stmt&, bool, int)> visit = [&](const Stmt& x, bool certain, int wrapped) {
      switch (x->kind) {
        case SK::Block:
          for (auto& b : x->body) visit(b, certain, wrapped);
          return;
        case SK::Seg:
          for (auto& f : x->effects) {
            if (f.kind != ir::Effect::Kind::Store || !f.base || !is_array_t(f.base->type)) continue;
            const std::vector<int> ids = arrays_of(f.base);
            const bool good = certain && wrapped < 0 && ids.size() == 1 && f.base->kind == K::Load && f.part < 0 && f.index &&
                              index_is_path(f.index) && (int)path.size() == arrays_[(size_t)ids[0]].t->ndim;
            for (int id : ids) {
              if (!good) ok[id] = false;
              else if (!ok.count(id)) ok[id] = true, dims[id] = path;
            }
          }
          return;
        case SK::If: {
          const bool wrapper = x->cond && x->cond->kind == K::LoopNonEmpty &&
                               (x->body.size() < 2 || !x->body[1] || ir::flatten_blocks(x->body[1]).empty());
          for (size_t k = 0; k < x->body.size(); k++)
            if (x->body[k]) visit(x->body[k], certain && wrapper && k == 0, wrapper ? x->cond->var : wrapped);
          return;
        }
        case SK::For: {
          const std::vector<Expr>& args = x->args.empty() ? range_args[x->loop] : x->args;
          bool fine = certain && x->iter == StmtNode::Iter::Range && !x->reversed_callee && !args.empty() &&
                      args.size() <= 3;
          for (auto& a : args) fine = fine && host_range_arg(a);
          if (fine) fresh_range_args_[x.get()] = args;
          path.push_back(x.get());
          for (auto& b : x->body)
            if (b) visit(b, fine, wrapped == x->loop ? -1 : wrapped);
          path.pop_back();
          return;
        }
        case SK::While:
          for (auto& b : x->body)
            if (b) visit(b, false, wrapped);
          return;
        default:
          return;
      }
    };
    visit(s->body[0], true, -1);
    if (s->peeled && s->body.size() > 1) return;  // (its first iteration runs on the host)
    // Nothing in the nest may read the array's elements.
    for (auto& [id, good] : ok) {
      if (!good) continue;
      int var = -1;
      for (size_t v = 0; v < array_id_.size(); v++)
        if (array_id_[v] == id) var = (int)v;
      if (var < 0 || nest_.vars[(size_t)var].assigned) continue;
      std::function<bool(const Expr&)> mentions = [&](const Expr& e) {
        if (!e) return false;
        if (e->kind == K::Attr && e->name == "shape" && !e->args.empty() && e->args[0]->kind == K::Load &&
            e->args[0]->var == var)
          return false;
        if (e->kind == K::Load && e->var == var) return true;
        if (e->kind == K::Attr && e->pseudo == var) return true;
        for (auto& a : e->args)
          if (mentions(a)) return true;
        return false;
      };
      bool read = false;
      ir::for_each_stmt(nest_.root, [&](const Stmt& x) {
        for (auto& f : x->effects) {
          const bool own_base = f.kind == ir::Effect::Kind::Store && f.base && f.base->kind == K::Load && f.base->var == var;
          read = read || (!own_base && mentions(f.base)) || mentions(f.index) || mentions(f.value);
        }
        read = read || mentions(x->cond);
        for (auto& a : x->args) read = read || mentions(a);
        for (auto& a : x->over) read = read || mentions(a);
      });
      if (read) continue;
      gl->arrays[(size_t)id].fresh = true;
      gpu_fresh_[gl].push_back({id, dims[id]});
    }
  }

  // Bit k: array k (GpuArray::fresh) is overwritten whole by iterations [k0, trip) of the
  // GPU loop `s`: each loop indexing it runs range(0, its extent) (contiguity the
  // runtime checks).
  Value* gpu_fresh_mask(const Stmt& s, const gpu::GpuLoop* gl, Value* k0, Value* trip) {
    Value* mask = c64(0);
    auto it = gpu_fresh_.find(gl);
    if (it == gpu_fresh_.end()) return mask;
    auto& L = loops_[(size_t)s->loop];
    for (auto& fa : it->second) {
      const Arr& a = arrays_[(size_t)fa.array];
      Value* ok = B.CreateAnd(B.CreateICmpEQ(k0, c64(0)), B.CreateICmpEQ(B.CreateLoad(i64(), L.start), c64(0)));
      ok = B.CreateAnd(ok, B.CreateICmpEQ(B.CreateLoad(i64(), L.step), c64(1)));
      ok = B.CreateAnd(ok, B.CreateICmpEQ(trip, a.shape[0]));
      for (size_t d = 1; d < fa.loops.size(); d++) {
        std::vector<Value*> v;
        for (auto& e : fresh_range_args_.at(fa.loops[d])) {
          V x = gen(e);
          if (!x.v || !x.v->getType()->isIntegerTy(64)) return c64(0);
          v.push_back(x.v);
        }
        Value* start = v.size() >= 2 ? v[0] : c64(0);
        Value* stop = v.size() >= 2 ? v[1] : v[0];
        Value* step = v.size() == 3 ? v[2] : c64(1);
        ok = B.CreateAnd(ok, B.CreateAnd(B.CreateICmpEQ(start, c64(0)), B.CreateICmpEQ(step, c64(1))));
        ok = B.CreateAnd(ok, B.CreateICmpEQ(stop, a.shape[d]));
      }
      mask = B.CreateOr(mask, B.CreateSelect(ok, c64(int64_t(1) << fa.array), c64(0)));
    }
    return mask;
  }

  // Whether `body` does enough per store for its stores to be logged (undo_log.h): it holds
  // a loop, a power, or a call of a function costlier than a few instructions (math.exp,
  // math.sqrt, cmath.*, abs() of a complex). A body of plain arithmetic and conversions
  // (`out[i] = int(A[i])`, `C[j] = A[j] * B[j] + A[j]` of complex numbers where NumPy's
  // warnings are not deferred) is bound by memory, which the log's traffic would take: on
  // threads it was no faster than in order.
  static bool worth_logging(const Stmt& body) {
    using BI = Builtin;
    static const std::set<BI> cheap = {
        BI::Range, BI::Len, BI::Abs, BI::Min, BI::Max, BI::Int, BI::Float, BI::Bool, BI::Round,
        BI::MathFabs, BI::MathFloor, BI::MathCeil, BI::MathTrunc, BI::MathCopysign, BI::MathIsnan,
        BI::MathIsinf, BI::MathIsfinite, BI::NpAbs, BI::NpFloor, BI::NpCeil, BI::NpMinimum, BI::NpMaximum,
        BI::NpFabs, BI::NpIsnan, BI::NpIsinf, BI::NpIsfinite, BI::NpSign, BI::NpSquare, BI::NpTrunc,
        BI::NpRint, BI::NpCopysign, BI::NpFmin, BI::NpFmax, BI::NpDeg2rad, BI::NpRad2deg, BI::NpRadians,
        BI::NpDegrees, BI::Complex, BI::Conjugate, BI::NpFloat64Type, BI::NpFloat32Type, BI::NpInt64Type,
        BI::NpInt32Type, BI::NpInt16Type, BI::NpInt8Type, BI::NpUInt8Type, BI::NpUInt16Type, BI::NpUInt32Type,
        BI::NpUInt64Type, BI::NpBoolType, BI::Round32, BI::Cast32,
        BI::CmathIsnan, BI::CmathIsinf, BI::CmathIsfinite, BI::Divmod};
    if (ir::contains_loop(body)) return true;
    bool costly = false;
    ir::for_each_expr(body, [&](const Expr& e) {
      if (e->kind == ExprNode::Kind::Binary && e->binop == ir::BinOp::Pow) costly = true;
      if (e->kind == ExprNode::Kind::Call && !e->args.empty() && e->args[0]->type &&
          e->args[0]->type->kind == Type::Kind::Callable && !cheap.count(e->args[0]->type->builtin))
        costly = true;
    });
    return costly;
  }

  // Whether `body` appends to a list anywhere.
  static bool appends_in(const Stmt& body) {
    bool any = false;
    ir::for_each_stmt(body, [&](const Stmt& x) {
      if (x->kind == StmtNode::Kind::Seg)
        for (auto& f : x->effects) any = any || ir::changes_lists(f);
    });
    return any;
  }

  // Outlines the steady iterations [k0, trip) of loop `s` into a function run on several
  // threads (parallel_runtime.h) or, where this kernel has GPU versions, on the GPU
  // (gpu_runtime.h), with a sequential version for when the conditions checked here (at
  // least two iterations, arrays that share no memory) fail. A body that could need to
  // stop for CPython (a check the facts do not remove) runs speculatively: if it writes
  // nothing but scalars (LoopPlan::store_free), should a thread need CPython, or a checked
  // sum's parts overflow where they combine, the threads' results are dropped and the
  // sequential version runs; if it writes elements, its stores are logged and undone
  // (undo_log.h, windows below). Returns false, having generated nothing, where neither
  // applies (a checked sum or an ordered reduction beside stores): the loop stays sequential.
  bool parallel_loop(const Stmt& s, const specialize::LoopPlan& lp, Value* k0, Value* trip, BasicBlock* exit) {
    const size_t nv = nest_.vars.size();
    const int threads = options_.plan->threads;
    const std::vector<int>& last_vars = lp.privates;
    if (std::string why = array_reductions_refused(lp); !why.empty()) {
      parallel_refused_[s->loop] = why;
      return false;
    }
    CtxLayout cx = ctx_layout();
    if (!lp.array_reductions.empty()) {
      cx.copies = cx.size;
      cx.size += (int)lp.array_reductions.size();
    }
    const size_t sites0 = layout_.warn_sites.size();
    const int bails0 = bails_emitted();
    Outlined ob = outline_body(s, lp, cx, name_ + ".par" + std::to_string(par_bodies_++));
    // Checks the facts did not remove may still be dead (a counter under `while k < n`
    // cannot overflow): LLVM's simplifications may prove that no way out is taken.
    std::set<int> statuses;
    if (ob.gave_up && exits_removed(*ob.fn, &statuses)) ob.gave_up = false;
    bool checked = false;
    for (auto& r : lp.reductions) checked = checked || r.checked;
    auto discard = [&] {  // the outlined body, and the sites and checks it recorded
      ob.fn->eraseFromParent();
      layout_.warn_sites.resize(sites0);
      reset_bails(bails0);
    };
    // A body that writes array elements and may stop for CPython: generated again with its
    // stores logged, so that a run in which a thread stopped can be undone (undo_log.h).
    // Not for reductions that combine only in order or an interchanged loop (whose runs
    // are in order: the window loop below would reorder them), nor where it appends.
    // Only where the body computes enough per element to pay for the log (worth_logging).
    // A loop that sums into arrays (ArrayReduction) may need undoing even where its body
    // never stops: the combination of the copies may find a window's run void.
    const bool summing = !lp.array_reductions.empty();
    const bool loggable = (ob.gave_up || summing) && !lp.store_free && !checked && threads >= 2 && !lp.ordered &&
                          !lp.interchange && !appends_in(s->body[0]);
    const bool logged = loggable && worth_logging(s->body[0]);
    if (logged) {
      discard();
      ob = outline_body(s, lp, cx, name_ + ".par" + std::to_string(par_bodies_++), /*logging=*/true);
    }
    // (Array reductions always: their combination may find the run void.)
    const bool speculative = (((ob.gave_up || checked || summing) && lp.store_free) || logged) && threads >= 2;
    if (speculative) reset_bails(bails0);  // the body's ways out end the threads' run, not the kernel
    if (summing && !speculative) {
      discard();
      parallel_refused_[s->loop] =
          "it sums into arrays in a copy per thread and stores other elements too, " +
          std::string(loggable ? "computing too little per element for a run on threads to pay for undoing it"
                               : "which stagepy could not undo (an ordered reduction, an interchanged loop, appends)");
      return false;
    }
    if ((ob.gave_up || checked) && !speculative) {
      std::string where = ob.gave_up ? checks_at(statuses, bails0) : "";
      discard();
      parallel_refused_[s->loop] =
          ob.gave_up ? "its body may need to stop for CPython" + (where.empty() ? "" : " at " + where) +
                           " (a check the run-time values do not remove)" +
                           (loggable ? ", and computes too little per element it writes for a run on threads "
                                       "to pay for undoing it"
                                     : "")
                     : "a reduction in it may need to stop for CPython (a check the run-time values do not remove)";
      return false;
    }
    gpu::GpuLoop* gl = speculative ? nullptr : gpu_version(s, lp, cx, ob.pr, ob.sites);
    if (!gl && !speculative && gpu_refused_.count(s->loop) && gpu_refused_[s->loop] == kRecordsDiffer &&
        interleaved_in(s)) {
      // Interleaved inner loops copy the rest of their iterations (plan_interleave.h), and
      // with them its warning sites, which the GPU body (never interleaved) has once: the
      // CPU body again without interleaving, so that both keep one record layout.
      discard();
      ir::for_each_stmt(s->body[0], [&](const Stmt& x) {
        if (x->kind == StmtNode::Kind::For) interleaved_.erase(x->loop);
      });
      no_interleave_ = true;
      ob = outline_body(s, lp, cx, name_ + ".par" + std::to_string(par_bodies_++));
      no_interleave_ = false;
      gpu_refused_.erase(s->loop);
      if (ob.gave_up && exits_removed(*ob.fn, &statuses)) ob.gave_up = false;
      if (!ob.gave_up) gl = gpu_version(s, lp, cx, ob.pr, ob.sites);
      if (ob.gave_up) {  // it did not before: kept sequential, as a body that needs CPython is
        discard();
        parallel_refused_[s->loop] = "its body may need to stop for CPython (a check the run-time values do not remove)";
        return false;
      }
    }
    llvm::Function* body = ob.fn;
    const ParRecord pr = ob.pr;
    const size_t body_sites = ob.sites;
    // The parent's slots for the body's warning sites.
    const size_t parent_sites0 = warn_flags_.size();
    for (size_t w = 0; w < body_sites; w++) {
      llvm::IRBuilder<> entry(&F->getEntryBlock(), F->getEntryBlock().begin());
      WarnSlots ws{entry.CreateAlloca(i8(), nullptr, "warn.par"), {}};
      entry.CreateStore(c8(0), ws.bits);
      for (auto& f : ws.first) {
        f = entry.CreateAlloca(i64(), nullptr, "warn.first");
        entry.CreateStore(c64(0), f);
      }
      if (!warn_counter_) {
        warn_counter_ = entry.CreateAlloca(i64(), nullptr, "warn.count");
        entry.CreateStore(c64(0), warn_counter_);
      }
      warn_flags_.push_back(ws);
    }

    // ---- the parent: run in parallel when it is safe and worth it.
    BasicBlock* fill = BasicBlock::Create(C, "par.ctx", F);
    BasicBlock* par = BasicBlock::Create(C, "par.run", F);
    BasicBlock* seq = BasicBlock::Create(C, "par.seq", F);
    // Worth the threads: a loop with loops inside needs two iterations; an innermost one
    // enough of them to outweigh waking the threads (a few microseconds).
    const bool has_inner = ir::contains_loop(s->body[0]);
    // A GPU loop without reductions only needs two iterations (the cost model decides); an
    // innermost reduction stays as exact as CPython's below analysis::min_parallel_trip(), as on threads.
    Value* ok = B.CreateICmpSGE(B.CreateSub(trip, k0),
                                c64(has_inner || (gl && lp.reductions.empty()) ? 2 : analysis::min_parallel_trip()));
    // A loop with loops inside: the threads pay where the iterations of all of them come to
    // analysis::min_parallel_trip(), estimated from the bounds of the inner loops known before the loop
    // runs (`for di in (-1, 0, 1): for dj in (-1, 0, 1)` inside sequential loops would wake
    // the threads for nine iterations at every entry). Inner bounds that only the iterations
    // know leave the two-iteration rule.
    Value* inner = nullptr;
    if (!gl) {
      std::set<int> varying;
      ir::collect_assigned(s->body[0], &varying);
      varying.insert(s->var);
      Value* its = B.CreateBinaryIntrinsic(llvm::Intrinsic::umin, B.CreateSub(trip, k0), c64(kWorkCap));
      if (has_inner && (inner = work_estimate(s->body[0], varying)))
        ok = B.CreateAnd(ok, B.CreateICmpSGE(B.CreateMul(its, inner), c64(analysis::min_parallel_trip())));
      // The work the region holds, in cost units (statement_cost): threads only where it
      // repays waking and joining them (min_parallel_cost_address, read at every region,
      // for two threads; more cost more to wake and join: 1.7 us for two, 7 for sixteen on
      // the GPU machine's host, so the minimum grows with them, threads / 2 times). Not for
      // GPU loops, whose cost model decides; not where a while loop leaves it unknown.
      if (Value* per = work_estimate(s->body[0], varying, /*weighted=*/true)) {
        Value* least = B.CreateLoad(
            i64(), runtime_address("stagepy.min_parallel_cost", reinterpret_cast<void*>(min_parallel_cost_address())));
        if (threads > 2) least = B.CreateMul(least, c64(threads / 2));
        ok = B.CreateAnd(ok, B.CreateICmpSGE(B.CreateMul(its, per), least));
      }
    }
    ok = B.CreateAnd(ok, arrays_disjoint(lp));
    if (summing) ok = B.CreateAnd(ok, copies_pay(lp, k0, trip, inner));
    for (auto& [v, t] : lp.invariant_divisors) ok = B.CreateAnd(ok, truth(load(v, t, false)));
    for (auto& [v, d] : lp.invariant_operands) ok = B.CreateAnd(ok, fits_numpy_type(load(v, types::py_int(), false).v, d));
    // Counters (Reduction::counter): |v| + iterations * (bound + |bound_vars|) within 64
    // bits, in 128 (each term below 2^64, their sum below 2^70: no wrap).
    for (auto& r : lp.reductions) {
      if (!r.counter) continue;
      llvm::Type* i128 = B.getInt128Ty();
      auto magnitude = [&](Value* x) {
        Value* w = B.CreateSExt(x, i128);
        return B.CreateSelect(B.CreateICmpSLT(w, llvm::ConstantInt::get(i128, 0)), B.CreateNeg(w), w);
      };
      Value* step = llvm::ConstantInt::get(i128, (uint64_t)r.bound);
      for (int v : r.bound_vars) step = B.CreateAdd(step, magnitude(load(v, types::py_int(), false).v));
      Value* its = B.CreateZExt(B.CreateSub(trip, k0), i128);
      Value* high = B.CreateICmpUGT(step, llvm::ConstantInt::get(i128, (uint64_t)INT64_MAX));
      Value* most = B.CreateAdd(magnitude(load(r.var, r.type, false).v), B.CreateMul(its, step));
      ok = B.CreateAnd(ok, B.CreateAnd(B.CreateNot(high),
                                       B.CreateICmpSLE(most, llvm::ConstantInt::get(i128, (uint64_t)INT64_MAX))));
    }
    // The warnings' keys (iteration * stride + count, warn_place) must fit in an i64.
    if (body_sites) {
      int64_t most = (INT64_MAX - 1) / warn_key_stride(body_sites);
      if (gl && gl->collapsed) most >>= kLaneKeyBits;
      ok = B.CreateAnd(ok, B.CreateICmpSLE(trip, c64(most)));
    }
    BasicBlock* decide = B.GetInsertBlock();
    B.CreateCondBr(ok, fill, seq);
    B.SetInsertPoint(seq);
    // A logged run stopped in a later window (below) goes on in order from that window's
    // first iteration; any other way here starts at k0.
    llvm::PHINode* seq_from = nullptr;
    if (logged) {
      seq_from = B.CreatePHI(i64(), 3, "seq.from");
      seq_from->addIncoming(k0, decide);
    }
    // Where running the outlined body on this thread is the sequential loop (no reductions,
    // which it would start from their identities and reassociate; no invariant divisor,
    // which it takes to be non-zero, nor operand it takes to fit; no GPU version), that is
    // the sequential version: one copy of the body less to optimize and compile. (Its
    // warnings' keys overflow after (2^63 - 1) / their stride iterations: more than this
    // thread runs in years.)
    const bool body_is_sequential = !gl && lp.reductions.empty() && lp.invariant_divisors.empty() &&
                                    lp.invariant_operands.empty() && !speculative;
    // With a GPU version, one host copy of the loop serves both the sequential fallback
    // (iterations [k0, trip), then `exit`) and the GPU's answer 2 (iterations [k0, trip - 1),
    // then the last iteration's privates): a phi says which.
    BasicBlock* host = nullptr;
    llvm::PHINode *host_end = nullptr, *host_from_gpu = nullptr;
    if (gl) {
      gpu_flush();
      host = BasicBlock::Create(C, "par.host", F);
      B.CreateBr(host);
      B.SetInsertPoint(host);
      host_end = B.CreatePHI(i64(), 2, "host.end");
      host_from_gpu = B.CreatePHI(i1(), 2, "host.from.gpu");
      host_end->addIncoming(trip, seq);
      host_from_gpu->addIncoming(B.getFalse(), seq);
      BasicBlock* host_done = BasicBlock::Create(C, "par.host.done", F);
      for_iterations(s, k0, host_end, host_done);
      B.SetInsertPoint(host_done);
    } else if (body_is_sequential) {
      B.CreateBr(fill);
    } else {
      if (gpu_mode_) gpu_flush();
      for_iterations(s, seq_from ? (Value*)seq_from : k0, trip, exit);
    }
    BasicBlock* host_done_bb = host ? B.GetInsertBlock() : nullptr;
    BasicBlock* finish_bb = nullptr;
    llvm::PHINode* finish_records = nullptr;
    B.SetInsertPoint(fill);
    llvm::PHINode* on_threads = nullptr;
    if (body_is_sequential) {
      on_threads = B.CreatePHI(i1(), 2, "on.threads");
      on_threads->addIncoming(B.getTrue(), decide);
      on_threads->addIncoming(B.getFalse(), seq);
    }
    llvm::IRBuilder<> entry(&F->getEntryBlock(), F->getEntryBlock().begin());
    auto* ctxa = entry.CreateAlloca(i64(), c64(cx.size), "par.ctx");
    auto* resa = entry.CreateAlloca(i64(), c64((int64_t)pr.size * threads), "par.results");
    resa->setAlignment(llvm::Align(64));
    auto put = [&](int k2, Value* v) { B.CreateStore(v, B.CreateConstGEP1_64(i64(), ctxa, k2)); };
    for (size_t v = 0; v < nv; v++) {
      put(cx.bits + (int)v, B.CreateLoad(i64(), bits_[v]));
      put(cx.tags + (int)v, B.CreateZExt(B.CreateLoad(i8(), tags_[v]), i64()));
    }
    {
      for (size_t x = 0; x < arrays_.size(); x++) {
        const Arr& a = arrays_[x];
        int k2 = cx.array_slot[x];
        put(k2++, B.CreatePtrToInt(a.data, i64()));
        for (auto* d : a.shape) put(k2++, d);
        for (auto* d : a.strides) put(k2++, d);
        if (a.offsets) put(k2++, B.CreatePtrToInt(a.offsets, i64()));
      }
      int k2 = cx.tuples;
      for (auto& [v, tv] : tuples_)
        for (auto& e : tv.elems) put(k2++, to_bits(e));
    }
    auto& L = loops_[(size_t)s->loop];
    put(cx.start, B.CreateLoad(i64(), L.start));
    put(cx.step, B.CreateLoad(i64(), L.step));
    put(cx.results, B.CreatePtrToInt(resa, i64()));
    // The threads' copies of the arrays summed into (none where memory ran out: in order).
    std::vector<Value*> copies;
    for (size_t j = 0; j < lp.array_reductions.size(); j++) {
      const specialize::ArrayReduction& ar = lp.array_reductions[j];
      const Arr& a = arrays_[(size_t)array_id_[(size_t)ar.var]];
      const DType d = a.t->dtype;
      auto* aty = llvm::FunctionType::get(ptr(), {i64(), B.getInt32Ty()}, false);
      Value* af = runtime_address("stagepy_private_copies", reinterpret_cast<void*>(&stagepy_private_copies));
      Value* p = B.CreateCall(aty, af, {B.CreateMul(copy_bytes(a), c64(threads)),
                                        copy_fill(d)});
      BasicBlock* got = BasicBlock::Create(C, "par.copies", F);
      BasicBlock* none = BasicBlock::Create(C, "par.copies.none", F);
      cold_branch(B.CreateIsNull(p), none, got);
      B.SetInsertPoint(none);
      free_copies(copies);
      if (seq_from) seq_from->addIncoming(k0, none);
      B.CreateBr(seq);
      B.SetInsertPoint(got);
      copies.push_back(p);
      put(cx.copies + (int)j, B.CreatePtrToInt(p, i64()));
    }
    // Per-thread records: reduction identities, no last iteration, no warning yet. (A loop
    // over the records, and below over their parts: the kernel's size does not grow with
    // the number of threads.)
    if (pr.size > 0) {
      BasicBlock* inited = BasicBlock::Create(C, "par.records.done", F);
      counted_loop("par.records", c64(0), c64(threads), true, inited, [&](Value* t, BasicBlock*) {
        Value* rec0 = B.CreateGEP(i64(), resa, B.CreateMul(t, c64(pr.size)));
        if (pr.log >= 0)  // an empty log
          for (int k = 0; k < kUndoSlots; k++) B.CreateStore(c64(0), B.CreateConstGEP1_64(i64(), rec0, pr.log + k));
        for (size_t r = 0; r < lp.reductions.size(); r++) {
          // The identity, with the variable's tag now (the part keeps it unless assigned).
          const int var = lp.reductions[r].var;
          // (A Python-to-NumPy sum's part starts untagged: "assigned nothing".)
          B.CreateStore(identity_bits(lp.reductions[r]), B.CreateConstGEP1_64(i64(), rec0, pr.red + (int64_t)r));
          Value* tag0 = lp.reductions[r].np_type ? c64(0) : B.CreateZExt(B.CreateLoad(i8(), tags_[(size_t)var]), i64());
          B.CreateStore(tag0, B.CreateConstGEP1_64(i64(), rec0, pr.tag + (int64_t)r));
          B.CreateStore(c64(0), B.CreateConstGEP1_64(i64(), rec0, pr.sign + (int64_t)r));
        }
        for (size_t p = 0; p < last_vars.size(); p++)
          B.CreateStore(c64(-1), B.CreateConstGEP1_64(i64(), rec0, pr.last + 3 * (int64_t)p));
        for (size_t w = 0; w < 3 * body_sites; w++)
          B.CreateStore(c64(INT64_MAX), B.CreateConstGEP1_64(i64(), rec0, pr.warn + (int64_t)w));
      }, nullptr);
      B.SetInsertPoint(inited);
    }
    // After the iterations ran, from `records` records at `base` (or, for the GPU's
    // records of a loop with reductions, `count` of them, the last iteration's first): the
    // reductions, the privates, the loop variable, the warnings; then on to `exit`.
    // `whole` false: only the records' reductions, privates and warnings (windows of a
    // logged run that stopped later), staying in the current block.
    // (A speculative run that sums into arrays: where the run turns out void, the block that
    // frees the copies and runs the loop in order; set before `finish` is generated.)
    BasicBlock* void_run = nullptr;
    auto finish = [&](Value* base, Value* records, Value* count, bool timed_cpu_run, bool whole = true) {
      if (timed_cpu_run) {
        auto* dty = llvm::FunctionType::get(B.getVoidTy(), {ptr()}, false);
        B.CreateCall(dty, runtime_address("stagepy_gpu_cpu_done", reinterpret_cast<void*>(&stagepy_gpu_cpu_done)),
                     {process_pointer(gl)});
      }
      auto part_of = [&](const specialize::Reduction& red, size_t r, Value* t) {
        Value* rec_at = B.CreateMul(t, c64(pr.size));
        Value* at = B.CreateAdd(rec_at, c64(pr.red + (int64_t)r));
        V part = scalar(red.type, from_bits(B.CreateLoad(i64(), B.CreateGEP(i64(), base, at)), rep(red.type)));
        if (red.type->kind == Type::Kind::Union) {
          Value* tag_at = B.CreateAdd(rec_at, c64(pr.tag + (int64_t)r));
          part.tag = B.CreateTrunc(B.CreateLoad(i64(), B.CreateGEP(i64(), base, tag_at)), i8());
        }
        return part;
      };
      auto fold = [&](const specialize::Reduction& red, size_t r, Value* t) {
        V acc = load(red.var, red.type, false);
        V part = part_of(red, r, t);
        if (!red.companions.empty()) {
          // A part whose value replaces the combined one brings its companions.
          Value* take = takes(red, acc, part);
          Value* rec_at = B.CreateMul(t, c64(pr.size));
          for (size_t k = 0; k < red.companions.size(); k++) {
            const size_t c = (size_t)red.companions[k];
            Value* at = B.CreateGEP(i64(), base, B.CreateAdd(rec_at, c64(pr.comp[r] + 2 * (int64_t)k)));
            Value* bits = B.CreateLoad(i64(), at);
            Value* tag = B.CreateTrunc(B.CreateLoad(i64(), B.CreateConstGEP1_64(i64(), at, 1)), i8());
            B.CreateStore(B.CreateSelect(take, bits, B.CreateLoad(i64(), bits_[c])), bits_[c]);
            B.CreateStore(B.CreateSelect(take, tag, B.CreateLoad(i8(), tags_[c])), tags_[c]);
          }
        }
        if (!red.updates.empty()) op_origin_ = red.updates[0]->origin;  // where its warnings go
        assign(red.var, combine(red, acc, part));
      };
      // Reductions: the parts in thread order (the GPU's threads' records, then the last
      // iteration's, record 0); checked ones first, each combination checked (exact_now_):
      // an overflow restores the variables and runs the loop in order, before anything else
      // (a warning) is recorded. Checked: sums whose overflow matters (Reduction::checked,
      // CPU threads only), and, in a loop that writes nothing, NumPy float (and complex-part)
      // sums: a combination that comes out infinite or NaN (-inf + a part that overflowed)
      // would warn at another place than the sum in order, so the loop runs in order instead
      // — on the CPU's threads and after the GPU alike. (Elsewhere such a warning goes to the
      // first update's line.)
      auto exact_combine = [&](const specialize::Reduction& r) {
        if (r.checked) return true;
        if (!lp.store_free || r.kind != specialize::Reduction::Kind::Arith) return false;
        const TypeRef t = r.np_part ? r.np_part : r.np_type ? r.np_type : rep(r.type);
        return t && t->kind == Type::Kind::NpScalar && dtype_is_float(t->dtype);
      };
      for (bool pass_checked : {true, false}) {
        std::vector<size_t> these;
        for (size_t r = 0; r < lp.reductions.size(); r++)
          if (exact_combine(lp.reductions[r]) == pass_checked) these.push_back(r);
        if (these.empty()) continue;
        std::vector<std::pair<Value*, Value*>> saved;
        Value* bad_before = nullptr;
        const bool deferred_before = deferred_;
        if (pass_checked) {
          for (size_t r : these) {
            const size_t var = (size_t)lp.reductions[r].var;
            saved.push_back({B.CreateLoad(i64(), bits_[var]), B.CreateLoad(i8(), tags_[var])});
          }
          bad_before = B.CreateLoad(i1(), bad_slot_);
          B.CreateStore(B.getFalse(), bad_slot_);
          exact_now_ = true;
        }
        BasicBlock* folded = BasicBlock::Create(C, "par.folded", F);
        counted_loop("par.fold", c64(count ? 1 : 0), count ? count : records, true, folded, [&](Value* t, BasicBlock*) {
          for (size_t r : these) fold(lp.reductions[r], r, t);
        }, nullptr);
        B.SetInsertPoint(folded);
        if (count)
          for (size_t r : these) fold(lp.reductions[r], r, c64(0));
        if (pass_checked) {
          exact_now_ = false;
          Value* overflowed = B.CreateLoad(i1(), bad_slot_);
          if (!count) overflowed = B.CreateOr(overflowed, mixed_signs(lp, pr, base, records));
          B.CreateStore(bad_before, bad_slot_);
          deferred_ = deferred_before;
          BasicBlock* undo = BasicBlock::Create(C, "par.spec.undo", F);
          BasicBlock* kept = BasicBlock::Create(C, "par.spec.kept", F);
          cold_branch(overflowed, undo, kept);
          B.SetInsertPoint(undo);
          for (size_t k = 0; k < these.size(); k++) {
            const size_t var = (size_t)lp.reductions[these[k]].var;
            B.CreateStore(saved[k].first, bits_[var]);
            B.CreateStore(saved[k].second, tags_[var]);
          }
          B.CreateBr(void_run ? void_run : seq);
          B.SetInsertPoint(kept);
        }
      }
      // The arrays summed into get their totals once nothing can void the run any more.
      // (Logged windows store theirs after each window.)
      if (!copies.empty() && whole && !count && !logged) {
        store_copies(lp, copies);
        free_copies(copies);
      }
      // Private variables: the value of the last iteration that assigned them (the variable
      // keeps its value if none did).
      if (!last_vars.empty()) {
        llvm::IRBuilder<> eb(&F->getEntryBlock(), F->getEntryBlock().begin());
        std::vector<llvm::AllocaInst*> best;
        for (size_t p = 0; p < last_vars.size(); p++) {
          best.push_back(eb.CreateAlloca(i64(), nullptr, "last.best"));
          B.CreateStore(c64(-1), best.back());
        }
        BasicBlock* chosen = BasicBlock::Create(C, "par.last.done", F);
        counted_loop("par.last", c64(0), count ? c64(1) : records, true, chosen, [&](Value* t, BasicBlock*) {
          Value* rec_at = B.CreateMul(t, c64(pr.size));
          for (size_t p = 0; p < last_vars.size(); p++) {
            const size_t v = (size_t)last_vars[p];
            Value* at = B.CreateGEP(i64(), base, B.CreateAdd(rec_at, c64(pr.last + 3 * (int64_t)p)));
            Value* it = B.CreateLoad(i64(), at);
            Value* later = B.CreateICmpSGT(it, B.CreateLoad(i64(), best[p]));
            B.CreateStore(B.CreateSelect(later, it, B.CreateLoad(i64(), best[p])), best[p]);
            Value* bb = B.CreateLoad(i64(), B.CreateConstGEP1_64(i64(), at, 1));
            B.CreateStore(B.CreateSelect(later, bb, B.CreateLoad(i64(), bits_[v])), bits_[v]);
            Value* bt = B.CreateTrunc(B.CreateLoad(i64(), B.CreateConstGEP1_64(i64(), at, 2)), i8());
            B.CreateStore(B.CreateSelect(later, bt, B.CreateLoad(i8(), tags_[v])), tags_[v]);
          }
        }, nullptr);
        B.SetInsertPoint(chosen);
      }
      // The loop variable ends on the last iteration.
      if (whole) enter_iteration(s, B.CreateSub(trip, c64(1)));
      // Warnings: ordered by the iteration they first occurred in.
      if (body_sites) {
        llvm::IRBuilder<> eb(&F->getEntryBlock(), F->getEntryBlock().begin());
        auto* rank = eb.CreateAlloca(i64(), c64(3 * (int64_t)body_sites), "warn.rank");
        auto* rty = llvm::FunctionType::get(B.getVoidTy(), {ptr(), i64(), i64(), i64(), i64(), ptr()}, false);
        Value* rf = runtime_address("stagepy_rank_parallel_warnings", reinterpret_cast<void*>(&stagepy_rank_parallel_warnings));
        B.CreateCall(rty, rf, {base, count ? count : records, c64(pr.size), c64(pr.warn),
                               c64(3 * (int64_t)body_sites), rank});
        Value* wcount = B.CreateLoad(i64(), warn_counter_);
        Value* seen = c64(0);
        for (size_t w = 0; w < body_sites; w++)
          for (int j = 0; j < 3; j++) {
            Value* rk = B.CreateLoad(i64(), B.CreateConstGEP1_64(i64(), rank, 3 * (int64_t)w + j));
            // An earlier run of this loop in the same call (an outer loop around it) may
            // have raised it first: that place stands.
            auto& slot = warn_flags_[parent_sites0 + w].first[j];
            Value* old = B.CreateLoad(i64(), slot);
            Value* fresh = B.CreateAnd(B.CreateICmpSGT(rk, c64(0)), B.CreateICmpEQ(old, c64(0)));
            B.CreateStore(B.CreateSelect(fresh, B.CreateAdd(wcount, rk), old), slot);
            seen = B.CreateAdd(seen, B.CreateZExt(B.CreateICmpSGT(rk, c64(0)), i64()));
          }
        B.CreateStore(B.CreateAdd(wcount, seen), warn_counter_);
      }
      if (whole) B.CreateBr(exit);
    };
    if (gl) {
      // The GPU first; it answers 1 (run on the CPU), 2 (only the last iteration ran:
      // the host runs the others, then the last iteration's privates apply) or 0.
      BasicBlock* gpu_done = BasicBlock::Create(C, "gpu.done", F);
      BasicBlock* gpu_rest = BasicBlock::Create(C, "gpu.rest", F);
      auto* gty = llvm::FunctionType::get(B.getInt32Ty(), {ptr(), ptr(), ptr(), ptr(), i64(), i64(), i64(), i64()}, false);
      Value* gf = runtime_address("stagepy_gpu_for", reinterpret_cast<void*>(&stagepy_gpu_for));
      Value* desc = process_pointer(gl);
      Value* st = B.CreateCall(gty, gf, {desc, body, ctxa, resa, k0, trip, c64(threads), gpu_fresh_mask(s, gl, k0, trip)});
      auto* sw = B.CreateSwitch(st, par, 2);
      sw->addCase(B.getInt32(0), gpu_done);
      sw->addCase(B.getInt32(2), gpu_rest);
      B.SetInsertPoint(gpu_rest);
      BasicBlock* rest_done = lp.reductions.empty() ? gpu_done : BasicBlock::Create(C, "gpu.rest.done", F);
      host_end->addIncoming(B.CreateSub(trip, c64(1)), gpu_rest);
      host_from_gpu->addIncoming(B.getTrue(), gpu_rest);
      B.CreateBr(host);
      B.SetInsertPoint(host_done_bb);
      B.CreateCondBr(host_from_gpu, rest_done, exit);
      if (rest_done != gpu_done) {
        // The last iteration's record is in resa (the runtime copied it there): the host's
        // loop may have run other GPU loops since, so not the runtime's records.
        B.SetInsertPoint(rest_done);
        finish(resa, c64(1), nullptr, false);
      }
      B.SetInsertPoint(gpu_done);
      if (lp.reductions.empty()) {
        finish(resa, c64(1), nullptr, false);
      } else {
        // The threads' records, where the runtime copied them back.
        auto* cnt = entry.CreateAlloca(i64(), nullptr, "gpu.records");
        auto* rty = llvm::FunctionType::get(ptr(), {ptr(), ptr()}, false);
        Value* rf = runtime_address("stagepy_gpu_records", reinterpret_cast<void*>(&stagepy_gpu_records));
        Value* recs = B.CreateCall(rty, rf, {desc, cnt});
        finish(recs, c64(1), B.CreateLoad(i64(), cnt), false);
      }
    } else if (on_threads) {
      // The sequential version: the body over all the iterations, here, with one record.
      BasicBlock* here = BasicBlock::Create(C, "par.here", F);
      BasicBlock* some = BasicBlock::Create(C, "par.here.some", F);
      B.CreateCondBr(on_threads, par, here);
      B.SetInsertPoint(here);
      B.CreateCondBr(B.CreateICmpSGT(trip, k0), some, exit);  // none: nothing changes
      B.SetInsertPoint(some);
      if (gpu_mode_) gpu_flush();
      auto* bfty = llvm::FunctionType::get(B.getInt32Ty(), {ptr(), i64(), i64(), i64()}, false);
      B.CreateCall(bfty, body, {ctxa, k0, trip, c64(0)});
      // One copy of what follows the iterations, for this record and the threads' ones.
      BasicBlock* from_here = B.GetInsertBlock();
      finish_bb = BasicBlock::Create(C, "par.finish", F);
      B.CreateBr(finish_bb);
      B.SetInsertPoint(finish_bb);
      finish_records = B.CreatePHI(i64(), 2, "par.records");
      finish_records->addIncoming(c64(1), from_here);
      finish(resa, finish_records, nullptr, false);
    } else {
      B.CreateBr(par);
    }
    B.SetInsertPoint(par);
    if (threads < 2) {
      // Planned for the GPU only (one CPU thread), or a one-thread plan: the sequential
      // loop (the parallel body on this thread, where it is the sequential version).
      B.CreateBr(seq);
      if (lp.parallel) parallel_ran_.insert(s->loop);
      return true;
    }
    if (gl && !has_inner) {
      // Sent back by the GPU: threads only where they pay.
      BasicBlock* threads_bb = BasicBlock::Create(C, "par.threads", F);
      B.CreateCondBr(B.CreateICmpSGE(B.CreateSub(trip, k0), c64(analysis::min_parallel_trip())), threads_bb, seq);
      B.SetInsertPoint(threads_bb);
    }
    if (gpu_mode_) gpu_flush();
    auto* pfty = llvm::FunctionType::get(B.getInt32Ty(), {ptr(), ptr(), i64(), i64(), i64()}, false);
    Value* pf = runtime_address("stagepy_parallel_for", reinterpret_cast<void*>(&stagepy_parallel_for));
    // Reductions that combine exactly only in iteration order ask for contiguous runs, and so
    // does an interchanged loop (each run sweeps every row of the inner loop once) and one
    // whose iterations do the same work (LoopPlan::blocks).
    if (logged) {
      // Windows of iterations, each on the threads, its stores logged: a window that ran
      // to the end is committed (its logs emptied, the records backed up); one in which a
      // thread stopped is undone, and the loop goes on in order from its first iteration,
      // after the earlier windows' reductions, privates and warnings are applied. A window
      // is sized so that its logs stay near kUndoWindowEntries per thread, from the store
      // sites and the inner loops' iterations where they are known; the first windows of
      // each run are smaller (a sixteenth, doubling), so that a run stopping near its start
      // (a loop restarted after each exception it raises) wastes little work on threads.
      auto* resb = entry.CreateAlloca(i64(), c64((int64_t)pr.size * threads), "par.backup");
      auto* uty = llvm::FunctionType::get(B.getVoidTy(), {ptr(), ptr(), i64(), i64()}, false);
      Value* commit_fn = runtime_address("stagepy_undo_commit", reinterpret_cast<void*>(&stagepy_undo_commit));
      Value* abort_fn = runtime_address("stagepy_undo_abort", reinterpret_cast<void*>(&stagepy_undo_abort));
      auto* fty = llvm::FunctionType::get(B.getVoidTy(), {ptr(), i64(), i64()}, false);
      Value* free_fn = runtime_address("stagepy_undo_free", reinterpret_cast<void*>(&stagepy_undo_free));
      const std::vector<Value*> recs = {resa, resb, c64(threads), c64(pr.size)};
      B.CreateCall(uty, commit_fn, recs);
      int64_t sites = 0;
      ir::for_each_stmt(s->body[0], [&](const Stmt& x) {
        if (x->kind == StmtNode::Kind::Seg)
          for (auto& f : x->effects) sites += f.kind == ir::Effect::Kind::Store ? 2 : 0;  // complex: two entries
      });
      std::set<int> varying;
      ir::collect_assigned(s->body[0], &varying);
      varying.insert(s->var);
      Value* per_it = c64(std::max<int64_t>(sites, 1));
      if (Value* inner = work_estimate(s->body[0], varying))
        per_it = B.CreateMul(per_it, B.CreateBinaryIntrinsic(llvm::Intrinsic::umax, inner, c64(1)));
      Value* window = B.CreateBinaryIntrinsic(
          llvm::Intrinsic::smax, B.CreateSDiv(c64(kUndoWindowEntries * threads), per_it), c64(2 * threads));
      Value* first_window = B.CreateBinaryIntrinsic(llvm::Intrinsic::smax, B.CreateSDiv(window, c64(16)), c64(2 * threads));
      BasicBlock* before = B.GetInsertBlock();
      BasicBlock* wloop = BasicBlock::Create(C, "par.window", F);
      BasicBlock* wok = BasicBlock::Create(C, "par.window.ok", F);
      BasicBlock* wfail = BasicBlock::Create(C, "par.window.failed", F);
      BasicBlock* wsettle = BasicBlock::Create(C, "par.window.settle", F);
      BasicBlock* wdone = BasicBlock::Create(C, "par.windows.done", F);
      B.CreateBr(wloop);
      B.SetInsertPoint(wloop);
      llvm::PHINode* wlo = B.CreatePHI(i64(), 2, "window.lo");
      llvm::PHINode* wsize = B.CreatePHI(i64(), 2, "window.size");
      wlo->addIncoming(k0, before);
      wsize->addIncoming(first_window, before);
      Value* whi = B.CreateSelect(B.CreateICmpSLT(B.CreateSub(trip, wlo), wsize), trip, B.CreateAdd(wlo, wsize));
      Value* wst = B.CreateCall(pfty, pf, {body, ctxa, wlo, whi, c64(lp.blocks ? -(int64_t)threads : threads)});
      cold_branch(B.CreateICmpNE(wst, B.getInt32(0)), wfail, wok);
      B.SetInsertPoint(wok);
      if (!copies.empty()) {
        // The window's sums into the arrays, then fresh copies for the next one; a total
        // that is not the sum in order fails the window.
        check_copies(lp, copies, threads, wfail);
        store_copies(lp, copies);
        reset_copies(lp, copies);
      }
      B.CreateCall(uty, commit_fn, recs);
      wlo->addIncoming(whi, B.GetInsertBlock());
      wsize->addIncoming(B.CreateBinaryIntrinsic(llvm::Intrinsic::smin, B.CreateShl(wsize, c64(1)), window), B.GetInsertBlock());
      B.CreateCondBr(B.CreateICmpSLT(whi, trip), wloop, wdone);
      B.SetInsertPoint(wfail);
      B.CreateCall(uty, abort_fn, recs);
      free_copies(copies);
      seq_from->addIncoming(k0, wfail);
      B.CreateCondBr(B.CreateICmpEQ(wlo, k0), seq, wsettle);
      B.SetInsertPoint(wsettle);
      finish(resa, c64(threads), nullptr, false, /*whole=*/false);
      seq_from->addIncoming(wlo, B.GetInsertBlock());
      B.CreateBr(seq);
      B.SetInsertPoint(wdone);
      B.CreateCall(fty, free_fn, {resa, c64(threads), c64(pr.size)});
      free_copies(copies);
    }
    Value* par_status = logged ? nullptr
                               : B.CreateCall(pfty, pf, {body, ctxa, k0, trip, c64(lp.ordered || lp.interchange || lp.blocks ? -(int64_t)threads : threads)});
    if (speculative && !logged) {
      // A thread that needed CPython: nothing but the records (and the threads' copies of
      // the arrays summed into) changed; run sequentially.
      BasicBlock* ran = BasicBlock::Create(C, "par.spec.ran", F);
      void_run = seq;
      if (!copies.empty()) {
        void_run = BasicBlock::Create(C, "par.void", F);
        BasicBlock* here = B.GetInsertBlock();
        B.SetInsertPoint(void_run);
        free_copies(copies);
        B.CreateBr(seq);
        B.SetInsertPoint(here);
      }
      cold_branch(B.CreateICmpNE(par_status, B.getInt32(0)), void_run, ran);
      B.SetInsertPoint(ran);
      if (!copies.empty()) check_copies(lp, copies, threads, void_run);  // (stored by finish)
    }
    {
      auto* counter = entry.CreateAlloca(i64(), nullptr, "par.runs");
      entry.CreateStore(c64(0), counter);
      B.CreateStore(B.CreateAdd(B.CreateLoad(i64(), counter), c64(1)), counter);
      par_counters_.push_back({s->loop, counter});
    }
    if (finish_bb) {
      finish_records->addIncoming(c64(threads), B.GetInsertBlock());
      B.CreateBr(finish_bb);
    } else {
      finish(resa, c64(threads), nullptr, gl != nullptr);
    }
    parallel_ran_.insert(s->loop);
    return true;
  }

  // Whether array variables a and b refer, now, to arrays that share memory. Each holds
  // the id of a live-in array (its parameter position); which ids overlap is known from
  // the guard key (array_overlap_).
  Value* may_share(int a, int b) {
    if (made_type_.count(a) || made_type_.count(b)) return spans_meet(a, b);
    Value* ida = B.CreateLoad(i64(), bits_[(size_t)a]);
    Value* idb = B.CreateLoad(i64(), bits_[(size_t)b]);
    Value* any = B.getFalse();
    for (size_t x = 0; x < arrays_.size(); x++)
      for (size_t y = 0; y < arrays_.size(); y++) {
        bool overlap = x == y || (x < array_overlap_.size() && y < array_overlap_[x].size() && array_overlap_[x][y]);
        if (overlap) any = B.CreateOr(any, B.CreateAnd(B.CreateICmpEQ(ida, c64((int64_t)x)), B.CreateICmpEQ(idb, c64((int64_t)y))));
      }
    return any;
  }

  // Whether the memory of what array variables a and b hold now, one of them a list the
  // nest may make (its header says where its items are), may overlap.
  Value* spans_meet(int a, int b) {
    auto type_of = [&](int v) -> TypeRef {
      if (auto it = made_type_.find(v); it != made_type_.end()) return it->second;
      TypeRef t = v < (int)entry_.size() ? entry_[(size_t)v] : nullptr;
      return t && t->kind == Type::Kind::Array ? t : nullptr;
    };
    const TypeRef ta = type_of(a), tb = type_of(b);
    if (!ta || !tb) return B.getTrue();  // (an array variable with no value at entry: in order)
    // (A variable holding no list yet has no header to read: in order.)
    Value* bound = B.getTrue();
    for (int v : {a, b})
      if (made_type_.count(v))
        bound = B.CreateAnd(bound, B.CreateICmpNE(B.CreateLoad(i8(), tags_[(size_t)v]), c8(0)));
    BasicBlock* from = B.GetInsertBlock();
    BasicBlock* check = BasicBlock::Create(C, "spans", F);
    BasicBlock* join = BasicBlock::Create(C, "spans.done", F);
    B.CreateCondBr(bound, check, join);
    B.SetInsertPoint(check);
    Value* meet = bytes_overlap(array_value(a, ta), item_bytes(*ta), array_value(b, tb), item_bytes(*tb));
    BasicBlock* checked = B.GetInsertBlock();
    B.CreateBr(join);
    B.SetInsertPoint(join);
    llvm::PHINode* phi = B.CreatePHI(i1(), 2);
    phi->addIncoming(B.getTrue(), from);
    phi->addIncoming(meet, checked);
    return phi;
  }

  // Whether the arrays the plan needs disjoint for loop `lp` share no memory, now.
  Value* arrays_disjoint(const specialize::LoopPlan& lp) {
    Value* ok = B.getTrue();
    for (auto& [a, b] : lp.alias_pairs) ok = B.CreateAnd(ok, B.CreateNot(may_share(a, b)));
    return ok;
  }

  // ------------------------------------------------------------ array reductions
  // Why loop `lp`'s array reductions (plan_parallel.h) do not run on threads here; "".
  // Their combination may find the run void, so the loop must be able to run again in
  // order (speculatively, or in logged windows: parallel_loop refuses it otherwise).
  std::string array_reductions_refused(const specialize::LoopPlan& lp) const {
    if (lp.array_reductions.empty()) return "";
    std::string names;
    for (auto& ar : lp.array_reductions)
      names += (names.empty() ? "`" : ", `") + nest_.vars[(size_t)ar.var].name + "`";
    if (gpu_body_ || options_.plan->threads < 2) return "it sums into " + names + ", which only CPU threads do";
    for (auto& ar : lp.array_reductions)
      if (array_id_[(size_t)ar.var] < 0)
        return "it sums into `" + nest_.vars[(size_t)ar.var].name + "`, which is not an array the nest was given";
    return "";
  }
  // The strides of a thread's copy of array `a`: contiguous, in a's order where it has one.
  std::vector<Value*> copy_strides(const Arr& a) { return contiguous_strides(a, a.t->layout == Type::FContig); }
  Value* copy_elements(const Arr& a) {
    Value* n = c64(1);
    for (Value* d : a.shape) n = B.CreateMul(n, d);
    return n;
  }
  // The bytes of one thread's copy, in whole 4 KiB pages (at least one): no two threads'
  // copies, and no other data, share a page with it. (On the 16-core host, kmeans' 8x2
  // centres in 128-byte blocks ran 2.1x slower on 16 threads than in pages, 0.163 vs 0.076
  // ms, and slower on 2 threads than on one: the copies' neighbours on the heap.)
  Value* copy_bytes(const Arr& a) {
    Value* b = B.CreateMul(copy_elements(a), c64(item_bytes(*a.t)));
    return B.CreateAnd(B.CreateAdd(B.CreateBinaryIntrinsic(llvm::Intrinsic::smax, b, c64(1)), c64(4095)), c64(~int64_t(4095)));
  }
  // The identity a copy starts from (stagepy_private_copies' fill): -0.0 for floats.
  Value* copy_fill(DType d) { return B.getInt32(d == DType::Float64 ? 1 : d == DType::Float32 ? 2 : 0); }
  void reset_copies(const specialize::LoopPlan& lp, const std::vector<Value*>& copies) {
    auto* fty = llvm::FunctionType::get(B.getVoidTy(), {ptr(), i64(), B.getInt32Ty()}, false);
    Value* ff = runtime_address("stagepy_private_reset", reinterpret_cast<void*>(&stagepy_private_reset));
    for (size_t j = 0; j < copies.size(); j++) {
      const Arr& a = arrays_[(size_t)array_id_[(size_t)lp.array_reductions[j].var]];
      const DType d = a.t->dtype;
      B.CreateCall(fty, ff, {copies[j], B.CreateMul(copy_bytes(a), c64(options_.plan->threads)),
                             copy_fill(d)});
    }
  }
  void free_copies(const std::vector<Value*>& copies) {
    auto* fty = llvm::FunctionType::get(B.getVoidTy(), {ptr()}, false);
    Value* ff = runtime_address("stagepy_private_free", reinterpret_cast<void*>(&stagepy_private_free));
    for (Value* p : copies) B.CreateCall(fty, ff, {p});
  }
  // Whether the copies pay for themselves in this run: filling and adding `threads` copies
  // of the arrays costs less than half the iterations' work (`inner`: the body's
  // work_estimate, null where it has no loop or the estimate is unknown), and they take at most kMaxCopyBytes (memory the system may have
  // promised but cannot give: the fill would touch it all); and each summed variable
  // still holds its own array.
  static constexpr int64_t kMaxCopyBytes = int64_t(256) << 20;
  Value* copies_pay(const specialize::LoopPlan& lp, Value* k0, Value* trip, Value* inner) {
    Value* ok = B.getTrue();
    Value* elems = c64(0);
    Value* bytes = c64(0);
    for (auto& ar : lp.array_reductions) {
      const int x = array_id_[(size_t)ar.var];
      ok = B.CreateAnd(ok, B.CreateICmpEQ(B.CreateLoad(i64(), bits_[(size_t)ar.var]), c64(x)));
      elems = B.CreateAdd(elems, B.CreateBinaryIntrinsic(llvm::Intrinsic::umin, copy_elements(arrays_[(size_t)x]), c64(kWorkCap)));
      bytes = B.CreateAdd(bytes, B.CreateBinaryIntrinsic(llvm::Intrinsic::umin, copy_bytes(arrays_[(size_t)x]), c64(kMaxCopyBytes)));
    }
    ok = B.CreateAnd(ok, B.CreateICmpULE(B.CreateMul(bytes, c64(options_.plan->threads)), c64(kMaxCopyBytes)));
    Value* work = B.CreateBinaryIntrinsic(llvm::Intrinsic::umin, B.CreateSub(trip, k0), c64(kWorkCap));
    if (inner) work = B.CreateMul(work, B.CreateBinaryIntrinsic(llvm::Intrinsic::umax, inner, c64(1)));
    return B.CreateAnd(ok, B.CreateICmpULE(B.CreateMul(elems, c64(2 * (int64_t)options_.plan->threads)), work));
  }
  // Calls f with the indices of each element of `a`, in C order.
  void each_element(const Arr& a, const char* name, const std::function<void(const std::vector<Value*>&)>& f) {
    BasicBlock* done = BasicBlock::Create(C, std::string(name) + ".done", F);
    counted_loop(name, c64(0), copy_elements(a), true, done, [&](Value* k, BasicBlock*) {
      std::vector<Value*> at(a.shape.size());
      Value* rest = k;
      for (size_t d = a.shape.size(); d-- > 0;) {
        at[d] = B.CreateURem(rest, a.shape[d]);
        rest = B.CreateUDiv(rest, a.shape[d]);
      }
      f(at);
    }, nullptr);
    B.SetInsertPoint(done);
  }
  // Adding the threads' copies to the arrays, in two steps: check_copies puts each
  // element's total (the array's element, then the copies in thread order) into copy 0, or
  // goes to `void_run` where a total is not what the sum in order gives (ArrayReduction),
  // the arrays unchanged; store_copies then stores the totals into the arrays. (In
  // between, a checked scalar sum's combination may still find the run void.)
  void check_copies(const specialize::LoopPlan& lp, const std::vector<Value*>& copies, int threads, BasicBlock* void_run) {
    llvm::IRBuilder<> eb(&F->getEntryBlock(), F->getEntryBlock().begin());
    auto* bad = eb.CreateAlloca(i1(), nullptr, "copies.bad");
    B.CreateStore(B.getFalse(), bad);
    for (size_t j = 0; j < lp.array_reductions.size(); j++) {
      const specialize::ArrayReduction& ar = lp.array_reductions[j];
      const Arr& a = arrays_[(size_t)array_id_[(size_t)ar.var]];
      const DType d = a.t->dtype;
      const std::vector<Value*> cst = copy_strides(a);
      Value* bytes = copy_bytes(a);
      const bool fl = dtype_is_float(d), sgn = dtype_is_signed(d);
      each_element(a, "copies.add", [&](const std::vector<Value*>& at) {
        Value* total = load_item(d, element_address(scalar(nullptr, a.data), at, a.strides));
        Value* part0 = element_address(scalar(nullptr, copies[j]), at, cst);
        Value* over = B.getFalse();
        for (int t = 0; t < threads; t++) {
          Value* part = load_item(d, B.CreateGEP(i8(), part0, B.CreateMul(bytes, c64(t))));
          if (fl) {
            total = B.CreateFAdd(total, part);
          } else if (ar.checked) {
            Value* r = B.CreateBinaryIntrinsic(sgn ? llvm::Intrinsic::sadd_with_overflow : llvm::Intrinsic::uadd_with_overflow,
                                               total, part);
            total = B.CreateExtractValue(r, 0);
            over = B.CreateOr(over, B.CreateExtractValue(r, 1));
          } else {
            total = B.CreateAdd(total, part);
          }
        }
        if (fl) over = B.CreateNot(isfinite(total));
        B.CreateStore(B.CreateOr(B.CreateLoad(i1(), bad), over), bad);
        B.CreateAlignedStore(total, part0, llvm::Align(dtype_size(d)));
      });
    }
    BasicBlock* fine = BasicBlock::Create(C, "copies.fine", F);
    cold_branch(B.CreateLoad(i1(), bad), void_run, fine);
    B.SetInsertPoint(fine);
  }
  void store_copies(const specialize::LoopPlan& lp, const std::vector<Value*>& copies) {
    for (size_t j = 0; j < lp.array_reductions.size(); j++) {
      const Arr& a = arrays_[(size_t)array_id_[(size_t)lp.array_reductions[j].var]];
      const DType d = a.t->dtype;
      const std::vector<Value*> cst = copy_strides(a);
      each_element(a, "copies.store", [&](const std::vector<Value*>& at) {
        Value* total = load_item(d, element_address(scalar(nullptr, copies[j]), at, cst));
        store_item(d, total, element_address(scalar(nullptr, a.data), at, a.strides));
      });
    }
  }

  // A checked NumPy integer sum (Reduction::checked): its parts are checked for overflow, and
  // so is their combination, but that alone does not show that the sum in iteration order
  // never wrapped (NumPy warns each time it does): `s = MAX - 10; s += 20; s += -20` wraps
  // twice where the part that holds both updates is 0. Where every amount added has one
  // sign, the sum in order moves one way from where it started to where it ends, so it
  // wrapped exactly where the end is out of range, which the checks see. So the parts note
  // the signs of their amounts (note_sign), and a run that added both is void (the loop
  // runs again in order). (Python ints need none of this: their sum is exact in any order.)
  static bool sign_tracked(const specialize::Reduction& r) {
    if (!r.checked || r.kind != specialize::Reduction::Kind::Arith) return false;
    const TypeRef t = r.np_type ? r.np_type : r.type;
    return t && t->kind == Type::Kind::NpScalar && dtype_is_int(t->dtype);
  }
  // Notes in `slot` the sign of the amount update `e` (v + x, x + v, v - x) of variable
  // `var` adds: 1 negative, 2 positive, both where the amount is not a plain integer.
  void note_sign(const Expr& e, const V& a, const V& b, llvm::AllocaInst* slot, int var) {
    auto is_self = [&](const Expr& o) { return o->kind == ExprNode::Kind::Load && o->var == var; };
    const bool first = is_self(e->args[0]), second = !first && is_self(e->args[1]);
    const V& x = first ? b : a;
    const TypeRef t = (first || second) && x.t ? rep(x.t) : nullptr;
    Value* bits = c64(3);
    const bool is_int = t && (t->kind == Type::Kind::PyInt || t->kind == Type::Kind::PyBool ||
                              (t->kind == Type::Kind::NpScalar && (dtype_is_int(t->dtype) || t->dtype == DType::Bool)));
    if (is_int && x.v && x.v->getType()->isIntegerTy()) {
      const bool sgn = t->kind == Type::Kind::PyInt || (t->kind == Type::Kind::NpScalar && dtype_is_signed(t->dtype));
      Value* zero = llvm::ConstantInt::get(x.v->getType(), 0);
      Value* neg = sgn ? B.CreateICmpSLT(x.v, zero) : (Value*)B.getFalse();
      Value* pos = sgn ? B.CreateICmpSGT(x.v, zero) : B.CreateICmpNE(x.v, zero);
      if (e->binop == ir::BinOp::Sub) std::swap(neg, pos);
      bits = B.CreateOr(B.CreateZExt(neg, i64()), B.CreateShl(B.CreateZExt(pos, i64()), c64(1)));
    }
    B.CreateStore(B.CreateOr(B.CreateLoad(i64(), slot), bits), slot);
  }
  // Whether some sign-tracked reduction of loop `lp` added amounts of both signs in the
  // `records` records at `base`.
  Value* mixed_signs(const specialize::LoopPlan& lp, const ParRecord& pr, Value* base, Value* records) {
    std::vector<size_t> tracked;
    for (size_t r = 0; r < lp.reductions.size(); r++)
      if (sign_tracked(lp.reductions[r])) tracked.push_back(r);
    if (tracked.empty()) return B.getFalse();
    llvm::IRBuilder<> eb(&F->getEntryBlock(), F->getEntryBlock().begin());
    auto* mixed = eb.CreateAlloca(i1(), nullptr, "signs.mixed");
    B.CreateStore(B.getFalse(), mixed);
    for (size_t r : tracked) {
      auto* seen = eb.CreateAlloca(i64(), nullptr, "signs.seen");
      B.CreateStore(c64(0), seen);
      BasicBlock* done = BasicBlock::Create(C, "signs.done", F);
      counted_loop("signs", c64(0), records, true, done, [&](Value* t, BasicBlock*) {
        Value* at = B.CreateAdd(B.CreateMul(t, c64(pr.size)), c64(pr.sign + (int64_t)r));
        B.CreateStore(B.CreateOr(B.CreateLoad(i64(), seen), B.CreateLoad(i64(), B.CreateGEP(i64(), base, at))), seen);
      }, nullptr);
      B.SetInsertPoint(done);
      Value* both = B.CreateICmpEQ(B.CreateLoad(i64(), seen), c64(3));
      B.CreateStore(B.CreateOr(B.CreateLoad(i1(), mixed), both), mixed);
    }
    return B.CreateLoad(i1(), mixed);
  }

  Value* identity_bits(const specialize::Reduction& r) {
    const TypeRef t = rep(r.type);
    bool fl = t->kind == Type::Kind::PyFloat || (t->kind == Type::Kind::NpScalar && dtype_is_float(t->dtype));
    using K = specialize::Reduction::Kind;
    V x;
    x.t = t;
    if (fl) {
      llvm::Type* ft = ty(t);
      if (r.kind != K::Arith) {
        // Strict self-first min/max (plan_parallel): nothing replaces v unless strictly
        // below +inf / above -inf, so a part that saw no such value leaves v as it was.
        x.v = llvm::ConstantFP::getInfinity(ft, /*Negative=*/r.kind == K::Max);
        return to_bits(x);
      }
      double id = r.op == ir::BinOp::Mul ? 1.0 : -0.0;  // -0.0 + x == x for every x, -0.0 too
      x.v = llvm::ConstantFP::get(ft, id);
      return to_bits(x);
    }
    llvm::Type* it = ty(t);
    unsigned w = it->getIntegerBitWidth();
    bool sgn = t->kind == Type::Kind::PyInt || dtype_is_signed(t->dtype);
    llvm::APInt v(w, 0);
    if (r.kind == K::Min) v = sgn ? llvm::APInt::getSignedMaxValue(w) : llvm::APInt::getMaxValue(w);
    else if (r.kind == K::Max) v = sgn ? llvm::APInt::getSignedMinValue(w) : llvm::APInt::getMinValue(w);
    else v = llvm::APInt(w, r.op == ir::BinOp::Mul ? 1 : 0);
    x.v = llvm::ConstantInt::get(it, v);
    return to_bits(x);
  }

  // A sum's parts combine by addition; where every update subtracts (`t = t - e`), as
  // acc - (-part), which is the same number and warns as NumPy's subtraction (NumPy names
  // the operation in its message). (Negating a float is exact; for ints the sum stays.)
  V add_parts(const specialize::Reduction& r, const V& acc, const V& part, const TypeRef& t) {
    bool subtracts = !r.updates.empty() && is_float_t(rep(t));
    for (const ExprNode* u : r.updates) {
      if (u->kind == ExprNode::Kind::Call && u->args.size() == 2) u = u->args[1].get();  // round32(v - e)
      subtracts = subtracts && u->kind == ExprNode::Kind::Binary && u->binop == ir::BinOp::Sub;
    }
    if (!subtracts) return binary(ir::BinOp::Add, acc, part, t);
    V neg = part;
    neg.v = B.CreateFNeg(part.v);
    return binary(ir::BinOp::Sub, acc, neg, t);
  }

  V combine(const specialize::Reduction& r, const V& acc, const V& part) {
    using K = specialize::Reduction::Kind;
    if (r.kind == K::Arith && r.np_type) {
      // float | np.float64 (int | np.int64), every update of the NumPy type: a part that
      // assigned (tagged) combines as a NumPy operation and leaves its type; an untagged
      // part (its identity) leaves the variable as it was. (Both members share the bits.)
      V sum = r.op == ir::BinOp::Mul ? binary(ir::BinOp::Mul, scalar(r.np_type, acc.v), scalar(r.np_type, part.v), r.np_type)
                                     : add_parts(r, scalar(r.np_type, acc.v), scalar(r.np_type, part.v), r.np_type);
      Value* assigned = B.CreateICmpNE(part.tag, c8(0));
      V out;
      out.t = r.type;
      out.v = B.CreateSelect(assigned, sum.v, acc.v);
      out.tag = B.CreateSelect(assigned, part.tag, acc.tag);
      return out;
    }
    if (r.kind == K::Arith && r.np_part) {
      // A part of a NumPy complex sum: NumPy's float addition of the parts, which warns as
      // the complex one does ("overflow encountered in scalar add").
      // (complex64: the parts, doubles, hold float32 values.)
      const bool single = r.np_part->dtype == DType::Float32;
      auto narrow = [&](Value* x) { return single ? B.CreateFPTrunc(x, B.getFloatTy()) : x; };
      V sum = add_parts(r, scalar(r.np_part, narrow(acc.v)), scalar(r.np_part, narrow(part.v)), r.np_part);
      return scalar(r.type, single ? B.CreateFPExt(sum.v, f64()) : sum.v);
    }
    if (r.kind == K::Arith)
      return r.op == ir::BinOp::Mul ? binary(ir::BinOp::Mul, acc, part, r.type) : add_parts(r, acc, part, r.type);
    Value* take = takes(r, acc, part);
    V out = scalar(r.type, B.CreateSelect(take, part.v, acc.v));
    if (part.tag && acc.tag) out.tag = B.CreateSelect(take, part.tag, acc.tag);  // float | np.float64
    return out;
  }

  // Whether a min/max's part replaces the combined value: only when strictly smaller or
  // greater (a NaN v stays, a NaN part never replaces, of two equal values the earlier
  // stays). For floats (and companions) the parts come in iteration order
  // (LoopPlan::ordered), so this is the sequential loop's value.
  Value* takes(const specialize::Reduction& r, const V& acc, const V& part) {
    using K = specialize::Reduction::Kind;
    if (part.v->getType()->isFloatingPointTy())
      return r.kind == K::Min ? B.CreateFCmpOLT(part.v, acc.v) : B.CreateFCmpOGT(part.v, acc.v);
    const TypeRef t = rep(r.type);
    bool sgn = t->kind == Type::Kind::PyInt || (t->kind == Type::Kind::NpScalar && dtype_is_signed(t->dtype));
    return r.kind == K::Min ? (sgn ? B.CreateICmpSLT(part.v, acc.v) : B.CreateICmpULT(part.v, acc.v))
                            : (sgn ? B.CreateICmpSGT(part.v, acc.v) : B.CreateICmpUGT(part.v, acc.v));
  }

  // ------------------------------------------------------------ speculative code
  // What code generated from here on can be taken back by (rollback): code whose fast path
  // turned out to need a hand-over to CPython.
  struct GenMark {
    std::set<BasicBlock*> before;
    BasicBlock* pre = nullptr;
    size_t flags = 0, sites = 0;
    int bails = 0;
  };
  GenMark gen_mark() {
    GenMark m;
    for (auto& bb : *F) m.before.insert(&bb);
    m.pre = B.GetInsertBlock();
    m.flags = warn_flags_.size();
    m.sites = layout_.warn_sites.size();
    m.bails = bails_emitted();
    return m;
  }
  // Erases the blocks made since `m` and the branch that led to them: generation goes on
  // where it was then.
  void rollback(const GenMark& m) {
    std::vector<BasicBlock*> fresh;
    for (auto& bb : *F)
      if (!m.before.count(&bb)) fresh.push_back(&bb);
    for (auto* bb : fresh)
      for (int idx; (idx = exit_status_->getBasicBlockIndex(bb)) >= 0;) exit_status_->removeIncomingValue((unsigned)idx, false);
    for (auto* bb : fresh) bb->dropAllReferences();
    for (auto* bb : fresh) bb->eraseFromParent();
    if (auto* t = m.pre->getTerminator()) t->eraseFromParent();
    B.SetInsertPoint(m.pre);
    warn_flags_.resize(m.flags);
    layout_.warn_sites.resize(m.sites);
    reset_bails(m.bails);
  }

  // ------------------------------------------------------------ speculative chunks
  // A loop body of statements only (no branch, loop or break; a `continue` at its end).
  static bool straight_line(const Stmt& s, int loop, bool last = true) {
    if (s->kind == StmtNode::Kind::Seg) return true;
    if (s->kind == StmtNode::Kind::Continue) return last && s->loop == loop;
    if (s->kind != StmtNode::Kind::Block) return false;
    for (size_t k = 0; k < s->body.size(); k++)
      if (!straight_line(s->body[k], loop, last && k + 1 == s->body.size())) return false;
    return true;
  }
  // A loop body of statements and ifs (`if d > m: m = d`, `if x > 0: s += x`; a `continue`
  // anywhere) that stores no element: chunked too. A store in a branch would leave its
  // undo-log entry unwritten in the iterations that skip it, so bodies with stores must be
  // straight-line; without stores there is no log.
  static bool branches_storing_nothing(const Stmt& s, int loop) {
    switch (s->kind) {
      case StmtNode::Kind::Seg:
        for (auto& f : s->effects)
          if (f.kind == ir::Effect::Kind::Store || ir::changes_lists(f)) return false;
        return true;
      case StmtNode::Kind::Continue: return s->loop == loop;
      case StmtNode::Kind::Block:
      case StmtNode::Kind::If:
        for (auto& b : s->body)
          if (!branches_storing_nothing(b, loop)) return false;
        return true;
      default: return false;
    }
  }
  static bool appends(const Stmt& s) {
    bool any = false;
    ir::for_each_stmt(s, [&](const Stmt& x) {
      for (auto& f : x->effects) any = any || ir::changes_lists(f);
    });
    return any;
  }
  static bool has_np_arith(const Stmt& s) {
    bool found = false;
    ir::for_each_expr(s, [&](const Expr& e) {
      if (e->kind == ExprNode::Kind::Binary && e->type && e->type->kind == Type::Kind::NpScalar &&
          e->type->dtype != DType::Bool)
        found = true;
      if (e->kind == ExprNode::Kind::ComplexWarn) found = true;
    });
    return found;
  }

  // Deferred NumPy warnings in an innermost loop without branches: the iterations run in
  // chunks. The fast pass of a chunk computes and stores with no test but one flag, "a
  // NumPy operation may have warned" (so the vectorizer can take it); only when that flag
  // is set (rare: an infinity, a NaN or a wrapped integer appeared) are the chunk's stores
  // undone and its variables reset, and the chunk runs again working out exactly which
  // warnings arose. Returns false (having generated nothing) when the fast pass would
  // need to stop for CPython somewhere: then a plain loop is better.
  struct Undo {
    std::vector<llvm::AllocaInst*> ptr, old;  // per store site: [kChunk] addresses, old bits
    std::vector<int> bytes;
    Value* kk = nullptr;                      // iteration within the chunk
    size_t next = 0;                          // store sites seen in this pass
  };
  std::optional<Undo> undo_;
  static constexpr int64_t kChunk = 256;

  // An undo log for a chunk of `body`'s iterations: kChunk entries per store site, and the
  // "may have warned" flag the fast pass sets.
  Undo new_undo(const Stmt& body) {
    llvm::IRBuilder<> entry(&F->getEntryBlock(), F->getEntryBlock().begin());
    if (!fast_bad_) fast_bad_ = entry.CreateAlloca(i1(), nullptr, "fast.bad");
    Undo u;
    ir::for_each_stmt(body, [&](const Stmt& x) {
      for (auto& e : x->effects) {
        if (e.kind != ir::Effect::Kind::Store) continue;
        // (A tagged list's element is two stores: its value and its tag.)
        for (int k = e.base->type && e.base->type->tagged ? 2 : 1; k-- > 0;) {
          u.ptr.push_back(entry.CreateAlloca(ptr(), c64(kChunk), "undo.ptr"));
          u.old.push_back(entry.CreateAlloca(i64(), c64(kChunk), "undo.old"));
          u.bytes.push_back(0);
        }
      }
    });
    return u;
  }
  // One iteration of `body` (of loop `loop`, whose next iteration is `latch`) in the fast
  // pass: no test but the flag, each store logged in `u` at entry u.kk.
  void fast_pass(const Stmt& body, int loop, BasicBlock* latch, Undo& u) {
    u.next = 0;
    undo_ = std::move(u);
    absorbed_.clear();
    ir::for_each_expr(body, [&](const Expr& e) { note_absorbed(e); });
    fast_sums_.clear();
    fast32_.clear();
    std::set<int> rounded;
    for (auto& [v, updates] : carried_sums(body, &rounded)) {
      // Only the sums a parallel body may reassociate: elsewhere the vectorizer cannot
      // split them anyway, and the tests in each iteration vectorize with the others (SLP).
      // (A float32 sum gets its float variable either way: in order, its chain is then
      // one float addition per iteration, not an addition and two conversions.)
      bool split = true;
      for (auto* u : updates) split = split && reassoc_ops_.count(u);
      if (split) {
        fast_sums_[v] = updates[0]->type;
        for (auto* u : updates) absorbed_.insert(u);
      }
      const bool single = updates[0]->type->kind == Type::Kind::NpScalar && updates[0]->type->dtype == DType::Float32;
      if ((single || rounded.count(v)) && fast_init_) {
        llvm::IRBuilder<> eb(&F->getEntryBlock(), F->getEntryBlock().begin());
        llvm::AllocaInst* a = eb.CreateAlloca(B.getFloatTy(), nullptr, "fast32." + nest_.vars[(size_t)v].name);
        llvm::IRBuilder<> ib(fast_init_->getTerminator());
        Value* bits = ib.CreateLoad(i64(), bits_[(size_t)v]);
        Value* f = single ? ib.CreateBitCast(ib.CreateTrunc(bits, ib.getInt32Ty()), ib.getFloatTy())
                          : ib.CreateFPTrunc(ib.CreateBitCast(bits, f64()), ib.getFloatTy());
        ib.CreateStore(f, a);
        fast32_[v] = a;
      }
    }
    warn_gen_ = WarnGen::Fast;
    targets_.push_back({loop, latch, nullptr});
    stmt(body);
    targets_.pop_back();
    warn_gen_ = WarnGen::Normal;
    u = std::move(*undo_);
    undo_.reset();
  }
  // Restores what the first `n` iterations of a chunk stored (`u`), last first.
  void undo_stores(const Undo& u, Value* n) {
    BasicBlock* from = B.GetInsertBlock();
    BasicBlock* uhead = BasicBlock::Create(C, "undo.head", F);
    BasicBlock* ubody = BasicBlock::Create(C, "undo.body", F);
    BasicBlock* udone = BasicBlock::Create(C, "undo.done", F);
    B.CreateBr(uhead);
    B.SetInsertPoint(uhead);
    auto* j = B.CreatePHI(i64(), 2, "uj");
    j->addIncoming(n, from);
    B.CreateCondBr(B.CreateICmpUGT(j, c64(0)), ubody, udone);
    B.SetInsertPoint(ubody);
    Value* jj = B.CreateSub(j, c64(1));
    for (size_t st = u.ptr.size(); st-- > 0;) {
      if (!u.bytes[st]) continue;
      llvm::Type* it = B.getIntNTy((unsigned)u.bytes[st] * 8);
      Value* p = B.CreateLoad(ptr(), B.CreateGEP(ptr(), u.ptr[st], jj));
      Value* o = B.CreateLoad(i64(), B.CreateGEP(i64(), u.old[st], jj));
      B.CreateAlignedStore(B.CreateTrunc(o, it), p, llvm::Align(u.bytes[st]));
    }
    j->addIncoming(jj, ubody);
    rarely_run_loop(B.CreateBr(uhead));
    B.SetInsertPoint(udone);
  }

  // Where a chunk's exact re-run needs no undo log: the arrays `body` stores into are not
  // arrays it reads, so the re-run reads what the fast pass read and stores the same values
  // over the fast pass's (it never hands over: a body that may is not chunked). Each array
  // must be a variable holding an array at entry (not a row, nor memory the kernel made);
  // then the pairs (stored, read) that must share no memory, checked where the loop
  // starts. nullopt: the log stays.
  std::optional<std::vector<std::pair<int, int>>> log_free_pairs(const Stmt& body) {
    std::set<int> unsure = ir::subscript_assigned(nest_.root);
    for (int v : ir::computed_assigned(nest_.root)) unsure.insert(v);
    std::set<int> stored, read;
    bool ok = true;
    auto array_var = [&](const Expr& e) {
      if (e && e->kind == ExprNode::Kind::Load && e->type && e->type->kind == Type::Kind::Array && !unsure.count(e->var))
        return e->var;
      return -1;
    };
    auto reads = [&](const Expr& e) {
      ir::walk_expr(e, [&](const Expr& x) {
        if (x->kind != ExprNode::Kind::Load || !x->type) return;
        if (x->type->kind == Type::Kind::View || x->type->kind == Type::Kind::Union) ok = false;
        if (x->type->kind != Type::Kind::Array) return;
        const int v = array_var(x);
        if (v < 0) ok = false;
        read.insert(v);
      });
    };
    std::set<int> assigned;  // an array variable the body reassigns holds another array later
    ir::collect_assigned(body, &assigned);
    ir::for_each_stmt(body, [&](const Stmt& x) {
      if (x->kind != StmtNode::Kind::Seg && x->kind != StmtNode::Kind::Block && x->kind != StmtNode::Kind::Continue) {
        ok = false;
        return;
      }
      for (auto& f : x->effects) {
        if (f.kind == ir::Effect::Kind::Store) {
          const int v = array_var(f.base);
          if (v < 0) ok = false;
          stored.insert(v);
        } else {
          reads(f.base);
        }
        reads(f.index);
        reads(f.value);
      }
    });
    for (int v : stored) ok = ok && !assigned.count(v);
    for (int v : read) ok = ok && !assigned.count(v);
    if (!ok) return std::nullopt;
    std::vector<std::pair<int, int>> pairs;
    for (int w : stored) {
      if (read.count(w)) return std::nullopt;
      for (int r : read) pairs.push_back({w, r});
    }
    return pairs;
  }

  // Where a chunk's stores can wait for their iteration's flag instead of being logged
  // (Held): each iteration of `s` stores one array element, in its last statement (after
  // which nothing reads memory), and otherwise only assigns variables it assigns before
  // reading them; its iterations are independent (plan_parallel: none reads or writes an
  // element another one writes, given the loop's alias pairs disjoint, checked where the
  // loop starts). Then an iteration whose flag is set may simply leave its element as it
  // was and run again exactly after the fast pass, on the same values: the other
  // iterations neither read that element nor changed what it reads.
  bool holds_stores(const Stmt& s) const {
    if (!options_.plan || !options_.plan->loops[(size_t)s->loop].independent) return false;
    const std::vector<Stmt> segs = ir::body_statements(s);
    int stores = 0, last = -1;
    for (size_t k = 0; k < segs.size(); k++) {
      if (segs[k]->kind != StmtNode::Kind::Seg) return false;
      for (auto& f : segs[k]->effects) {
        if (ir::changes_lists(f)) return false;
        if (f.kind == ir::Effect::Kind::Store) {
          stores++;
          last = (int)k;
        }
      }
    }
    return stores == 1 && last + 1 == (int)segs.size() && ir::assigned_before_read(segs);
  }
  // Whether loop `s`'s fast pass may vectorize with NumPy integers' overflow checks in it
  // (wrapping_op): no variable carried from one iteration to the next (a running sum's
  // checks stay scalar) and no 64-bit product (its check is the intrinsic, which keeps
  // the loop scalar). Where it may not, the intrinsics make the better scalar code.
  static bool may_vectorize_int_checks(const Stmt& s) {
    bool wide_product = false;
    ir::for_each_expr(s->body[0], [&](const Expr& e) {
      if (e->kind == ExprNode::Kind::Binary && e->binop == ir::BinOp::Mul && e->type &&
          e->type->kind == Type::Kind::NpScalar && dtype_is_int(e->type->dtype) && dtype_size(e->type->dtype) == 8)
        wide_product = true;
    });
    return !wide_product && ir::assigned_before_read(ir::body_statements(s));
  }
  // The variables and loop `loop`'s current iteration as they are now, to put back later.
  struct VarSnapshot {
    std::vector<Value*> bits, tags;
    Value* cur = nullptr;
    int loop = -1;
  };
  VarSnapshot snapshot_vars(int loop) {
    VarSnapshot v;
    for (size_t x = 0; x < bits_.size(); x++) {
      v.bits.push_back(B.CreateLoad(i64(), bits_[x]));
      v.tags.push_back(B.CreateLoad(i8(), tags_[x]));
    }
    v.cur = B.CreateLoad(i64(), loops_[(size_t)loop].cur);
    v.loop = loop;
    return v;
  }
  void restore_vars(const VarSnapshot& v) {
    for (size_t x = 0; x < bits_.size(); x++) {
      B.CreateStore(v.bits[x], bits_[x]);
      B.CreateStore(v.tags[x], tags_[x]);
    }
    B.CreateStore(v.cur, loops_[(size_t)v.loop].cur);
  }

  struct Held {
    llvm::AllocaInst* held = nullptr;      // [kChunk] i8: the iteration's store waited
    llvm::AllocaInst* iter_bad = nullptr;  // the current iteration may have warned
    Value* kk = nullptr;                   // iteration within the chunk
    int stores = 0;                        // element stores generated
    bool marked_after_store = false;       // a flag set after the store (then no Held)
  };
  std::optional<Held> held_;

  bool chunked_loop(const Stmt& s, Value* k0, Value* trip, BasicBlock* exit, bool log_free_ok = true,
                    bool held_ok = true) {
    // What to discard if the fast pass cannot do without a hand-over.
    const GenMark mark = gen_mark();
    BasicBlock* pre = B.GetInsertBlock();
    Undo u = new_undo(s->body[0]);
    // Without a log where the re-run needs none; where the arrays then share memory (a
    // call with the same array twice), every chunk runs exactly, as a re-run would. (Not
    // where the re-run may hand over to CPython, below: the fast pass's later stores
    // would stay.)
    Value* shares = nullptr;
    auto pairs = log_free_ok ? log_free_pairs(s->body[0]) : std::nullopt;
    // Or without a log where the stores can wait for their iteration's flag (holds_stores;
    // the same exact chunks where the loop's alias pairs share memory).
    const bool held = !pairs && held_ok && holds_stores(s);
    if (pairs || held) {
      u.ptr.clear();
      u.old.clear();
      u.bytes.clear();
      shares = B.getFalse();
    }
    if (pairs)
      for (auto& [w, r] : *pairs) shares = B.CreateOr(shares, may_share(w, r));
    Held h;
    if (held) {
      shares = B.CreateNot(arrays_disjoint(options_.plan->loops[(size_t)s->loop]));
      llvm::IRBuilder<> entry(&F->getEntryBlock(), F->getEntryBlock().begin());
      h.held = entry.CreateAlloca(i8(), c64(kChunk), "held");
      h.iter_bad = entry.CreateAlloca(i1(), nullptr, "iter.bad");
    }

    BasicBlock* chead = BasicBlock::Create(C, "chunk.head", F);
    BasicBlock* cbody = BasicBlock::Create(C, "chunk.body", F);
    BasicBlock* fhead = BasicBlock::Create(C, "fast.head", F);
    BasicBlock* fbody = BasicBlock::Create(C, "fast.body", F);
    BasicBlock* flatch = BasicBlock::Create(C, "fast.latch", F);
    BasicBlock* fdone = BasicBlock::Create(C, "fast.done", F);
    BasicBlock* redo = BasicBlock::Create(C, "chunk.redo", F);
    BasicBlock* cnext = BasicBlock::Create(C, "chunk.next", F);
    B.CreateBr(chead);
    B.SetInsertPoint(chead);
    auto* kc = B.CreatePHI(i64(), 2, "kc");
    kc->addIncoming(k0, pre);
    B.CreateCondBr(B.CreateICmpULT(kc, trip), cbody, exit);
    B.SetInsertPoint(cbody);
    Value* kend = B.CreateBinaryIntrinsic(llvm::Intrinsic::umin, B.CreateAdd(kc, c64(kChunk)), trip);
    // The variables at the start of the chunk, to start it again from.
    const VarSnapshot saved = snapshot_vars(s->loop);
    B.CreateStore(B.getFalse(), fast_bad_);
    if (shares) cold_branch(shares, redo, fhead);
    else B.CreateBr(fhead);
    // Fast pass.
    B.SetInsertPoint(fhead);
    auto* k = B.CreatePHI(i64(), 2, "kf");
    k->addIncoming(kc, cbody);
    B.CreateCondBr(B.CreateICmpULT(k, kend), fbody, fdone);
    B.SetInsertPoint(fbody);
    enter_iteration(s, k);
    u.kk = B.CreateSub(k, kc);
    fast_init_ = cbody;
    if (held) {
      B.CreateStore(B.getFalse(), h.iter_bad);
      h.kk = u.kk;
      held_ = h;
    }
    vector_int_checks_ = may_vectorize_int_checks(s);
    fast_pass(s->body[0], s->loop, flatch, u);
    vector_int_checks_ = false;
    fast_init_ = nullptr;
    const bool held_broken = held && (held_->stores != 1 || held_->marked_after_store);
    held_.reset();
    if (bails_emitted() != mark.bails) {
      // Discard everything generated here and let the caller make a plain loop (which
      // must not read the fast pass's float32 sums).
      fast_sums_.clear();
      fast32_.clear();
      rollback(mark);
      return false;
    }
    if (held_broken) {  // (not one element store that the iteration's flag can hold)
      fast_sums_.clear();
      fast32_.clear();
      rollback(mark);
      return chunked_loop(s, k0, trip, exit, log_free_ok, /*held_ok=*/false);
    }
    if (!B.GetInsertBlock()->getTerminator()) B.CreateBr(flatch);
    B.SetInsertPoint(flatch);
    k->addIncoming(B.CreateAdd(k, c64(1)), flatch);
    B.CreateBr(fhead);
    B.SetInsertPoint(fdone);
    for (auto& [v, t] : fast_sums_) {  // (carried_sums: each a float, its bits in the slot)
      Value* bits = B.CreateLoad(i64(), bits_[(size_t)v]);
      mark_fast_bad(B.CreateNot(isfinite(from_bits(bits, rep(t)))));
    }
    fast_sums_.clear();
    fast32_.clear();
    if (held) {
      // Something may have warned: the iterations whose stores waited run again exactly,
      // in order, and the variables then hold what the fast pass's last iteration left
      // them. Where the arrays share memory (`redo`), every iteration of the chunk runs
      // exactly instead, in the same loop (one exact copy of the body: a GPU version of
      // the enclosing loop must make the same warning records).
      BasicBlock* from_fast = B.GetInsertBlock();
      BasicBlock* hredo = BasicBlock::Create(C, "held.redo", F);
      BasicBlock* hdone = BasicBlock::Create(C, "held.done", F);
      BasicBlock* hkeep = BasicBlock::Create(C, "held.keep", F);
      cold_branch(B.CreateLoad(i1(), fast_bad_), hredo, cnext);
      B.SetInsertPoint(redo);
      B.CreateBr(hredo);
      B.SetInsertPoint(hredo);
      auto* all = B.CreatePHI(i1(), 2, "held.all");
      all->addIncoming(B.getFalse(), from_fast);
      all->addIncoming(B.getTrue(), redo);
      const VarSnapshot post = snapshot_vars(s->loop);
      Value* post_par = par_iter_ && s->loop == par_loop_ ? B.CreateLoad(i64(), par_iter_) : nullptr;
      warn_gen_ = WarnGen::Classify;
      const int bails_before_held = bails_emitted();
      counted_loop("held", kc, kend, false, hdone, [&](Value* kk, BasicBlock* latch) {
        BasicBlock* one = BasicBlock::Create(C, "held.one", F);
        BasicBlock* test = BasicBlock::Create(C, "held.test", F);
        B.CreateCondBr(all, one, test);
        B.SetInsertPoint(test);
        Value* waited = B.CreateLoad(i8(), B.CreateGEP(i8(), h.held, B.CreateSub(kk, kc)));
        B.CreateCondBr(B.CreateICmpNE(waited, c8(0)), one, latch);
        B.SetInsertPoint(one);
        enter_iteration(s, kk);
        targets_.push_back({s->loop, latch, nullptr});
        stmt(s->body[0]);
        targets_.pop_back();
      }, nullptr);
      warn_gen_ = WarnGen::Normal;
      if (bails_emitted() != bails_before_held) {
        rollback(mark);
        return chunked_loop(s, k0, trip, exit, log_free_ok, /*held_ok=*/false);
      }
      B.SetInsertPoint(hdone);
      B.CreateCondBr(all, cnext, hkeep);
      B.SetInsertPoint(hkeep);
      restore_vars(post);
      if (post_par) B.CreateStore(post_par, par_iter_);
      B.CreateBr(cnext);
    } else {
      cold_branch(B.CreateLoad(i1(), fast_bad_), redo, cnext);
      // Something may have warned: undo the chunk's stores (last first), restore the
      // variables, and run the chunk again with exact warning flags.
      B.SetInsertPoint(redo);
      if (!shares) undo_stores(u, B.CreateSub(kend, kc));
      restore_vars(saved);
      warn_gen_ = WarnGen::Classify;
      const int bails_before_redo = bails_emitted();
      plain_loop(s, s->body[0], kc, kend, cnext);
      warn_gen_ = WarnGen::Normal;
      if (shares && bails_emitted() != bails_before_redo) {
        rollback(mark);
        return chunked_loop(s, k0, trip, exit, /*log_free_ok=*/false, /*held_ok=*/false);
      }
    }
    B.SetInsertPoint(cnext);
    kc->addIncoming(kend, cnext);
    B.CreateBr(chead);
    return true;
  }

  // ------------------------------------------------------------ loop interchange
  // Iterations [k0, trip) of loop J = `s` with its inner loop I outside (plan_interchange.h).
  // Where they run that way (J has iterations, I has iterations, the arrays plan_parallel
  // pairs share no memory), I's range() is evaluated once, in J's first iteration as
  // CPython does, and then, for each iteration of I, J's iterations run in blocks of kChunk:
  // a fast pass that tests only "may a NumPy operation have warned" and keeps an undo log.
  // Should a block's flag be set (rare), its stores are undone and every iteration not yet
  // run goes in CPython's order (J outside), with exact warnings: the iterations already
  // run are those of earlier I iterations and, in this I iteration, of earlier blocks; J's
  // iterations being independent, running the others after them in CPython's order gives
  // CPython's values, and CPython's warnings (the ones run raised none). Otherwise the loop
  // runs in CPython's order: the insertion point is left where the caller generates that.
  // Nothing is interchanged where a statement of I's body could need to stop for CPython
  // (CPython could not take over in the middle of the other order).
  std::set<int> interchanged_;  // loops generated with their inner loop outside

  void interchanged_loop(const Stmt& s, const specialize::LoopPlan& lp, Value* k0, Value* trip, BasicBlock* exit) {
    const std::vector<Stmt> jb = ir::flatten_blocks(s->body[0]);
    const Stmt& range_i = jb[0];
    const Stmt& I = jb[1];
    const Stmt& ibody = I->body[0];
    BasicBlock* plain = BasicBlock::Create(C, "ix.plain", F);
    BasicBlock* start = BasicBlock::Create(C, "ix.start", F);
    B.CreateCondBr(B.CreateAnd(B.CreateICmpSLT(k0, trip), arrays_disjoint(lp)), start, plain);
    B.SetInsertPoint(start);
    // J's first iteration evaluates I's range(): here, once (it reads nothing J's body
    // assigns); a failure there hands over exactly where CPython fails.
    enter_iteration(s, k0);
    stmt(range_i);
    auto& LI = loops_[(size_t)I->loop];
    Value* trip_i = B.CreateLoad(i64(), LI.trip);
    BasicBlock* go = BasicBlock::Create(C, "ix.go", F);
    B.CreateCondBr(B.CreateICmpSGT(trip_i, c64(0)), go, plain);
    B.SetInsertPoint(go);
    const GenMark mark = gen_mark();

    llvm::IRBuilder<> entry(&F->getEntryBlock(), F->getEntryBlock().begin());
    auto* bad_i = entry.CreateAlloca(i64(), nullptr, "ix.bad.i");
    auto* bad_k = entry.CreateAlloca(i64(), nullptr, "ix.bad.k");
    Undo u = new_undo(ibody);
    BasicBlock* rest = BasicBlock::Create(C, "ix.rest", F);
    BasicBlock* done = BasicBlock::Create(C, "ix.done", F);
    counted_loop("ix.i", c64(0), trip_i, true, done, [&](Value* ki, BasicBlock*) {
      BasicBlock* iter_done = BasicBlock::Create(C, "ix.blocks.done", F);
      counted_loop("ix.block", k0, trip, true, iter_done, [&](Value* kc, BasicBlock* next_block) {
        Value* kend = B.CreateBinaryIntrinsic(llvm::Intrinsic::smin, B.CreateAdd(kc, c64(kChunk)), trip);
        B.CreateStore(B.getFalse(), fast_bad_);
        BasicBlock* block_done = BasicBlock::Create(C, "ix.fast.done", F);
        counted_loop("ix.fast", kc, kend, true, block_done, [&](Value* kj, BasicBlock* latch) {
          enter_iteration(s, kj);
          enter_iteration(I, ki);
          u.kk = B.CreateSub(kj, kc);
          fast_pass(ibody, I->loop, latch, u);
        }, nullptr);
        B.SetInsertPoint(block_done);
        BasicBlock* redo = BasicBlock::Create(C, "ix.redo", F);
        cold_branch(B.CreateLoad(i1(), fast_bad_), redo, next_block);
        // Undo the block's stores; the rest runs in CPython's order.
        B.SetInsertPoint(redo);
        undo_stores(u, B.CreateSub(kend, kc));
        B.CreateStore(ki, bad_i);
        B.CreateStore(kc, bad_k);
        B.CreateBr(rest);
      }, nullptr, c64(kChunk));
      B.SetInsertPoint(iter_done);
    }, nullptr);
    // The rest in CPython's order: J's iteration kj runs I's iterations from bad_i (from the
    // one after it where kj's block ran before the flag was seen).
    B.SetInsertPoint(rest);
    Value* bi = B.CreateLoad(i64(), bad_i);
    Value* bk = B.CreateLoad(i64(), bad_k);
    counted_loop("ix.rest.j", k0, trip, true, done, [&](Value* kj, BasicBlock* jlatch) {
      enter_iteration(s, kj);
      Value* from = B.CreateSelect(B.CreateICmpSLT(kj, bk), B.CreateAdd(bi, c64(1)), bi);
      counted_loop("ix.rest.i", from, trip_i, true, jlatch, [&](Value* ki, BasicBlock* ilatch) {
        enter_iteration(I, ki);
        targets_.push_back({I->loop, ilatch, nullptr});
        stmt(ibody);
        targets_.pop_back();
      }, nullptr);
    }, nullptr);
    if (bails_emitted() != mark.bails) {
      // (A way out in the fast pass or the rest.) Erase from `go` on (the range() evaluation before it stays), and run in order.
      rollback(mark);
      B.CreateBr(plain);
    } else {
      // Both loops end on their last iteration (the same one in both orders).
      B.SetInsertPoint(done);
      enter_iteration(I, B.CreateSub(trip_i, c64(1)));
      enter_iteration(s, B.CreateSub(trip, c64(1)));
      B.CreateBr(exit);
      interchanged_.insert(s->loop);
    }
    B.SetInsertPoint(plain);
  }
  // The step of loop `loop`'s range() where it is a constant (1 where range() has no step).
  std::optional<int64_t> constant_step(int loop) const {
    std::optional<int64_t> out;
    ir::for_each_stmt(nest_.root, [&](const Stmt& x) {
      if (x->kind != StmtNode::Kind::Range || x->loop != loop) return;
      if (x->args.size() < 3) out = 1;
      else if (x->args[2]->kind == ExprNode::Kind::Const && x->args[2]->value.kind == ir::ConstValue::Kind::Int &&
               x->args[2]->value.i != 0)
        out = x->args[2]->value.i;
    });
    return out;
  }

  // ------------------------------------------------------------ row panels
  // The iterations [k0, trip) of a parallel body's loop `s` (its rows) whose body is one
  // loop J (and J's range()), J interleaved over an inner range() loop K — gemm's `for j:
  // acc = 0.0; for k: acc += A[i, k] * B[k, j]` — run panel by panel: J's iterations
  // [pb, pb + width) of every row, then the next panel. Each block of J's lanes walks K's
  // range through memory a row of B apart (a strip of B's columns); in row order the next
  // row walks that strip again only after the rest of B, which a long K has pushed out of
  // the cache by then. With panels sized so that their strips take about kPanelBytes (8
  // bytes per column and K iteration), the strip is read from the cache by the other rows.
  // The same results as rows in order: the rows are the parallel loop's iterations and J's
  // are independent (interleaving needs it), each row's J iterations still run in order (the
  // panels in turn), and a parallel body hands nothing over (a speculative one voids the
  // whole run, a logged one undoes its window). Warnings: each (row, panel) records afresh
  // under the key row * panels + panel (par_iter_, which warn_place scales by the sites'
  // stride), and warn_record keeps a kind's earliest place, so the kinds are ranked by the
  // row, the panel and the order within it where CPython first meets them. Each row
  // evaluates J's range() before each panel as CPython does before the loop: its
  // arguments, and K's, read nothing the rows assign, so every row has the same; both are
  // evaluated once more before the panels to size them (not where that could warn or
  // stop). Both loops end on their last iteration, as in order. Returns false (having
  // generated nothing) where the body is not of that form.
  static constexpr int64_t kPanelBytes = 512 * 1024;

  struct PanelShape {
    Stmt range_j, J, range_k;
  };
  // Whether loop `s`'s body has the form panel_rows takes, and its parts.
  std::optional<PanelShape> panel_shape(const Stmt& s) const {
    if (!options_.plan) return std::nullopt;
    const std::vector<Stmt> xs = ir::body_statements(s);
    if (xs.size() != 2 || xs[0]->kind != StmtNode::Kind::Range || xs[1]->kind != StmtNode::Kind::For ||
        xs[1]->peeled || xs[0]->loop != xs[1]->loop)
      return std::nullopt;
    PanelShape p{xs[0], xs[1], nullptr};
    const specialize::LoopPlan& jp = options_.plan->loops[(size_t)p.J->loop];
    if (jp.interleave.lanes == 0 || !jp.independent) return std::nullopt;
    for (auto& x : jp.interleave.fast_body)
      ir::for_each_stmt(x, [&](const Stmt& y) {
        if (!p.range_k && y->kind == StmtNode::Kind::Range) p.range_k = y;
      });
    if (!p.range_k) return std::nullopt;
    std::set<int> assigned;
    ir::collect_assigned(s->body[0], &assigned);
    assigned.insert(s->var);
    for (const Stmt* r : {&p.range_j, &p.range_k})
      for (auto& a : (*r)->args)
        for (int v : assigned)
          if (ir::reads_var(a, v)) return std::nullopt;
    return p;
  }

  bool panel_rows(const Stmt& s, Value* k0, Value* trip, BasicBlock* exit) {
    const std::optional<PanelShape> shape = panel_shape(s);
    if (!shape) return false;
    const Stmt& range_j = shape->range_j;
    const Stmt& J = shape->J;
    const Stmt& range_k = shape->range_k;

    const GenMark mark = gen_mark();
    BasicBlock* go = BasicBlock::Create(C, "panel.go", F);
    BasicBlock* done = BasicBlock::Create(C, "panel.done", F);
    B.CreateCondBr(B.CreateICmpSLT(k0, trip), go, exit);
    B.SetInsertPoint(go);
    stmt(range_j);
    stmt(range_k);
    if (layout_.warn_sites.size() != mark.sites || bails_emitted() != mark.bails) {
      // (Evaluated here they may warn or stop: a GPU version of the loop, which has no
      // panels, would not make the same records; CPython evaluates them later.)
      rollback(mark);
      return false;
    }
    auto& LJ = loops_[(size_t)J->loop];
    Value* tj0 = B.CreateBinaryIntrinsic(llvm::Intrinsic::smax, B.CreateLoad(i64(), LJ.trip), c64(1));
    Value* trip_k = B.CreateBinaryIntrinsic(llvm::Intrinsic::smax, B.CreateLoad(i64(), loops_[(size_t)range_k->loop].trip), c64(1));
    Value* width = B.CreateAnd(B.CreateSDiv(c64(kPanelBytes / 8), trip_k), c64(~int64_t(31)));
    width = B.CreateBinaryIntrinsic(llvm::Intrinsic::smax, width, c64(32));
    // The warnings' keys are (row, panel): row * panels + panel. One panel where that
    // could come near overflowing (warn_place multiplies it by the sites' stride).
    Value* panels = B.CreateUDiv(B.CreateAdd(tj0, B.CreateSub(width, c64(1))), width);
    Value* huge = B.CreateICmpUGT(B.CreateMul(trip, panels), c64(int64_t(1) << 40));
    width = B.CreateSelect(huge, tj0, width);
    panels = B.CreateSelect(huge, c64(1), panels);
    // do { the rows' J iterations [pb, pb + width) } while (pb + width < J's trip count)
    BasicBlock* pre = B.GetInsertBlock();
    BasicBlock* head = BasicBlock::Create(C, "panel.head", F);
    BasicBlock* rows_done = BasicBlock::Create(C, "panel.rows.done", F);
    B.CreateBr(head);
    B.SetInsertPoint(head);
    auto* pb = B.CreatePHI(i64(), 2, "pb");
    auto* pi = B.CreatePHI(i64(), 2, "pi");
    pb->addIncoming(c64(0), pre);
    pi->addIncoming(c64(0), pre);
    // Each (row, panel) records its warnings afresh (the sites' seen kinds and the count
    // cleared: filled in below, once the sites exist), under its own key, and warn_record
    // keeps each kind's earliest place.
    llvm::Instruction* reset = nullptr;  // where a segment starts
    counted_loop("panel.row", k0, trip, true, rows_done, [&](Value* k, BasicBlock* latch) {
      enter_iteration(s, k);
      B.CreateStore(B.CreateAdd(B.CreateMul(k, panels), pi), par_iter_);
      reset = B.CreateBr(BasicBlock::Create(C, "panel.segment", F));
      B.SetInsertPoint(reset->getSuccessor(0));
      if (ir::contains_loop(s->body[0])) poll_interrupts(s->body[0]);
      stmt(range_j);
      Value* tj = B.CreateLoad(i64(), LJ.trip);
      Value* lo = B.CreateBinaryIntrinsic(llvm::Intrinsic::smin, pb, tj);
      Value* hi = B.CreateBinaryIntrinsic(llvm::Intrinsic::smin, B.CreateAdd(pb, width), tj);
      for_iterations(J, lo, hi, latch);
    }, nullptr);
    B.SetInsertPoint(rows_done);
    Value* next = B.CreateAdd(pb, width);
    pb->addIncoming(next, rows_done);
    pi->addIncoming(B.CreateAdd(pi, c64(1)), rows_done);
    B.CreateCondBr(B.CreateICmpSLT(next, B.CreateLoad(i64(), LJ.trip)), head, done);
    if (bails_emitted() != mark.bails) {  // (a way out in the rows: in the order they are written)
      rollback(mark);
      return false;
    }
    {
      llvm::IRBuilder<> rb(reset);
      for (size_t w = mark.flags; w < warn_flags_.size(); w++) rb.CreateStore(c8(0), warn_flags_[w].bits);
      if (warn_counter_ && warn_flags_.size() > mark.flags) rb.CreateStore(c64(0), warn_counter_);
    }
    B.SetInsertPoint(done);
    B.CreateBr(exit);
    return true;
  }

  // ------------------------------------------------------------ interleaved iterations
  // Iterations [k0, trip) of loop `s` as plan_interleave.h describes: blocks of `lanes`
  // iterations whose leading part F runs for all lanes together (each lane's variables in
  // slots of their own), speculatively; then the rest of each iteration, lane by lane, on
  // that lane's values. If F may have warned, the block's iterations run again one by one,
  // exactly (F changed nothing outside the lane slots but its loops' variables, which every
  // iteration sets again). The iterations after the last whole block, and all of them when
  // arrays the plan needs disjoint share memory, run as a plain loop. Returns false (having
  // generated nothing) when F would need to stop for CPython somewhere.
  struct LaneSlots {
    std::vector<llvm::AllocaInst*> bits, tags;  // per lane
  };
  std::map<int, LaneSlots> lane_slots_;  // generating F: variable -> its lane copies
  std::map<int, int> interleaved_;       // loops generated interleaved: their lanes
  bool interleaved_in(const Stmt& s) const {
    bool any = false;
    ir::for_each_stmt(s->body[0], [&](const Stmt& x) {
      if (x->kind == StmtNode::Kind::For && interleaved_.count(x->loop)) any = true;
    });
    return any;
  }

  // Generates `f` with lane `l`'s copies standing for the variables.
  void as_lane(int l, const std::function<void()>& f) {
    std::vector<std::pair<int, std::pair<llvm::AllocaInst*, llvm::AllocaInst*>>> saved;
    for (auto& [v, ls] : lane_slots_) {
      saved.push_back({v, {bits_[(size_t)v], tags_[(size_t)v]}});
      bits_[(size_t)v] = ls.bits[(size_t)l];
      tags_[(size_t)v] = ls.tags[(size_t)l];
    }
    f();
    for (auto& [v, bt] : saved) {
      bits_[(size_t)v] = bt.first;
      tags_[(size_t)v] = bt.second;
    }
  }

  // One statement of F for all `lanes` lanes.
  void interleaved_stmt(const Stmt& x, int lanes) {
    using K = StmtNode::Kind;
    switch (x->kind) {
      case K::Block:
        for (auto& b : x->body) interleaved_stmt(b, lanes);
        return;
      case K::Range:  // reads nothing the lanes differ in
        stmt(x);
        return;
      case K::If:
        if (x->cond->kind == ExprNode::Kind::LoopNonEmpty) {
          BasicBlock* tb = BasicBlock::Create(C, "lanes.then", F);
          BasicBlock* eb = BasicBlock::Create(C, "lanes.else", F);
          BasicBlock* mb = BasicBlock::Create(C, "lanes.endif", F);
          B.CreateCondBr(gen(x->cond).v, tb, eb);
          B.SetInsertPoint(tb);
          interleaved_stmt(x->body[0], lanes);
          if (!B.GetInsertBlock()->getTerminator()) B.CreateBr(mb);
          B.SetInsertPoint(eb);
          interleaved_stmt(x->body[1], lanes);
          if (!B.GetInsertBlock()->getTerminator()) B.CreateBr(mb);
          B.SetInsertPoint(mb);
          return;
        }
        break;
      case K::For: {
        // One loop for all lanes: each iteration runs the body for lane 0, 1, ...
        BasicBlock* exit = BasicBlock::Create(C, "lanes.for.exit", F);
        auto lanes_body = [&](const Stmt& body) {
          if (ir::contains_loop(body)) {
            // Around loops of its own (plan_interleave.cpp, FastPart::loop): each statement
            // for all lanes in turn; the last one is the continue to the next iteration.
            const std::vector<Stmt> xs = ir::flatten_blocks(body);
            for (size_t k = 0; k < xs.size(); k++)
              if (!(xs[k]->kind == K::Continue && xs[k]->loop == x->loop && k + 1 == xs.size()))
                interleaved_stmt(xs[k], lanes);
            return;
          }
          for (int l = 0; l < lanes; l++) {
            BasicBlock* next = BasicBlock::Create(C, "lane.next", F);
            targets_.push_back({x->loop, next, nullptr});
            as_lane(l, [&] { stmt(body); });
            targets_.pop_back();
            if (!B.GetInsertBlock()->getTerminator()) B.CreateBr(next);
            B.SetInsertPoint(next);
          }
        };
        const std::vector<int> sticky = sticky_updates(x);
        Value* k0 = c64(0);
        if (x->peeled) {
          enter_iteration(x, c64(0));
          lanes_body(x->body[1]);
          k0 = c64(1);
        }
        counted_loop("lanes.for", k0, B.CreateLoad(i64(), loops_[(size_t)x->loop].trip), false, exit,
                     [&](Value* k, BasicBlock*) {
                       enter_iteration(x, k);
                       lanes_body(x->body[0]);
                     }, nullptr);
        B.SetInsertPoint(exit);
        for (int v : sticky)
          for (int l = 0; l < lanes; l++)
            as_lane(l, [&] { mark_fast_bad(B.CreateNot(isfinite(B.CreateBitCast(B.CreateLoad(i64(), bits_[(size_t)v]), f64())))); });
        return;
      }
      default:
        break;
    }
    for (int l = 0; l < lanes; l++) as_lane(l, [&] { stmt(x); });
  }

  // The lane variables of F's loop x (generating F, WarnGen::Fast) whose every assignment
  // in x is a float operation with the variable among its operands through +, -, * or a
  // dividend (`acc += A[i, k] * B[k, j]`), held in a double. An infinity or a NaN makes
  // +, -, * and a dividend infinite or NaN, so once one of those operations gives a value
  // that is not finite the variable stays so to the loop's end: their tests in every
  // iteration are absorbed, and one test of each lane's value after the loop stands for
  // them (it may also find a value that was not finite before the loop: F then runs
  // again one by one, which is always exact).
  std::vector<int> sticky_updates(const Stmt& x) {
    if (warn_gen_ != WarnGen::Fast) return {};
    auto is_double = [](const TypeRef& t) { return t && (is_pyfloat(t) || (is_np(t) && t->dtype == DType::Float64)); };
    std::function<bool(const Expr&, int)> carries = [&](const Expr& e, int v) {
      if (e->kind == ExprNode::Kind::Load) return e->var == v;
      if (!is_double(e->type)) return false;
      for (size_t k = 0; k < e->args.size(); k++)
        if (passes_nonfinite(e, k) && carries(e->args[k], v)) return true;
      return false;
    };
    std::map<int, std::vector<const ExprNode*>> updates;
    std::set<int> bad;
    for (auto& b : x->body)
      ir::for_each_stmt(b, [&](const Stmt& y) {
        for (auto& f : y->effects) {
          if (f.kind != ir::Effect::Kind::Assign || !lane_slots_.count(f.var)) continue;
          if (is_double(f.value->type) && carries(f.value, f.var)) updates[f.var].push_back(f.value.get());
          else bad.insert(f.var);
        }
      });
    std::vector<int> out;
    for (auto& [v, us] : updates) {
      if (bad.count(v)) continue;
      for (auto* u : us) absorbed_.insert(u);
      out.push_back(v);
    }
    return out;
  }

  bool interleaved_loop(const Stmt& s, const specialize::LoopPlan& lp, Value* k0, Value* trip, BasicBlock* exit) {
    const specialize::Interleave& il = lp.interleave;
    // Blocks of `lanes` iterations, then (where the plan says) blocks of fewer, then the
    // iterations left one by one.
    std::vector<int> widths = {il.lanes};
    if (il.then_lanes > 0 && il.then_lanes < il.lanes) widths.push_back(il.then_lanes);
    const int W = il.lanes;
    const std::vector<Stmt> xs = ir::flatten_blocks(s->body[0]);
    if (il.fast == 0 || il.fast > xs.size()) return false;
    // F as the plan has it (promoted elements as variables); each lane's rest stores them
    // back first.
    const Stmt fast = ir::make_block(il.fast_body);
    std::vector<Stmt> rest_stmts = il.writeback;
    rest_stmts.insert(rest_stmts.end(), xs.begin() + (long)il.fast, xs.end());
    const Stmt rest = ir::make_block(rest_stmts);
    const GenMark mark = gen_mark();
    auto& L = loops_[(size_t)s->loop];

    // Lane copies: the variables F assigns and the loop variable.
    llvm::IRBuilder<> entry(&F->getEntryBlock(), F->getEntryBlock().begin());
    if (!fast_bad_) fast_bad_ = entry.CreateAlloca(i1(), nullptr, "fast.bad");
    std::vector<int> vars = il.lane_vars;
    vars.push_back(s->var);
    std::map<int, LaneSlots> slots;
    std::map<int, std::pair<llvm::AllocaInst*, llvm::AllocaInst*>> lane_arrays;  // indexed by lane
    for (int v : vars) {
      LaneSlots& ls = slots[v];
      for (int l = 0; l < W; l++) {
        ls.bits.push_back(entry.CreateAlloca(i64(), nullptr, nest_.vars[(size_t)v].name + ".lane"));
        ls.tags.push_back(entry.CreateAlloca(i8(), nullptr, nest_.vars[(size_t)v].name + ".lane.tag"));
      }
      if (v != s->var)
        lane_arrays[v] = {entry.CreateAlloca(i64(), c64(W), nest_.vars[(size_t)v].name + ".lanes"),
                          entry.CreateAlloca(i8(), c64(W), nest_.vars[(size_t)v].name + ".lanes.tag")};
    }

    // Whole blocks, none where arrays that must be disjoint share memory.
    Value* ok = arrays_disjoint(lp);
    // The iterations that do not run interleaved (a block whose F may have warned, those
    // after the last whole block) share one plain loop over [tail_lo, tail_hi), which then
    // goes on with the blocks it came from (`heads`, by number, at tail_hi) or leaves (0).
    BasicBlock* tail = BasicBlock::Create(C, "lanes.tail", F);
    struct Redo {
      BasicBlock* from;
      Value *lo, *hi;
      int back;
    };
    std::vector<Redo> redos;
    std::vector<llvm::PHINode*> heads;  // each width's block counter
    // Each width's blocks run over [bounds[wi], bounds[wi + 1]) (computed here: the tail
    // may go back to any of them).
    std::vector<Value*> bounds = {k0};
    for (int w : widths) {
      Value* at = bounds.back();
      Value* n = B.CreateSelect(B.CreateICmpUGT(trip, at), B.CreateSub(trip, at), c64(0));
      Value* whole = B.CreateMul(B.CreateUDiv(n, c64(w)), c64(w));
      bounds.push_back(B.CreateAdd(at, B.CreateSelect(ok, whole, c64(0))));
    }
    Value* kend = bounds.back();
    BasicBlock* last_exit = nullptr;  // where the last blocks' loop leaves from
    for (size_t wi = 0; wi < widths.size(); wi++) {
      const int w = widths[wi];
      Value* kfrom = bounds[wi];
      Value* kto = bounds[wi + 1];
      BasicBlock* done = BasicBlock::Create(C, "lanes.done", F);
      bool gave_up = false;
      counted_loop("lanes", kfrom, kto, false, done, [&](Value* kb, BasicBlock* latch) {
        heads.push_back(llvm::cast<llvm::PHINode>(kb));
        enter_iteration(s, kb);
        poll_interrupts(s->body[0]);
        // F, speculatively.
        Value* start = B.CreateLoad(i64(), L.start);
        Value* step = B.CreateLoad(i64(), L.step);
        for (int l = 0; l < w; l++) {
          B.CreateStore(B.CreateAdd(start, B.CreateMul(B.CreateAdd(kb, c64(l)), step)), slots[s->var].bits[(size_t)l]);
          B.CreateStore(c8(tag_of(types::py_int())), slots[s->var].tags[(size_t)l]);
        }
        for (int v : il.seeded)
          for (int l = 0; l < w; l++) {
            B.CreateStore(B.CreateLoad(i64(), bits_[(size_t)v]), slots[v].bits[(size_t)l]);
            B.CreateStore(B.CreateLoad(i8(), tags_[(size_t)v]), slots[v].tags[(size_t)l]);
          }
        B.CreateStore(B.getFalse(), fast_bad_);
        const int bails0 = bails_emitted();
        absorbed_.clear();
        ir::for_each_expr(fast, [&](const Expr& e) { note_absorbed(e); });
        warn_gen_ = options_.fp == FpMode::Deferred ? WarnGen::Fast : WarnGen::Normal;
        lane_slots_ = slots;
        interleaved_stmt(fast, w);
        lane_slots_.clear();
        warn_gen_ = WarnGen::Normal;
        if (bails_emitted() != bails0) {
          if (debug_level() > 0)
            debug_dump("codegen: loop at line " + std::to_string(s->line) + " not interleaved",
                       "F needs a check at resume point " + std::to_string(bail_notes_[(size_t)bails0].first) + " (" +
                           bail_notes_[(size_t)bails0].second + ")");
          gave_up = true;
          return;
        }
        // Something may have warned: the block's iterations again, one by one (the tail loop).
        BasicBlock* each = BasicBlock::Create(C, "lanes.each", F);
        redos.push_back({B.GetInsertBlock(), kb, B.CreateAdd(kb, c64(w)), (int)heads.size()});
        cold_branch(B.CreateLoad(i1(), fast_bad_), tail, each);
        // The rest of each iteration, in order, on its lane's values.
        B.SetInsertPoint(each);
        for (auto& [v, arr] : lane_arrays)
          for (int l = 0; l < w; l++) {
            B.CreateStore(B.CreateLoad(i64(), slots[v].bits[(size_t)l]), B.CreateConstGEP1_64(i64(), arr.first, l));
            B.CreateStore(B.CreateLoad(i8(), slots[v].tags[(size_t)l]), B.CreateConstGEP1_64(i8(), arr.second, l));
          }
        counted_loop("lane", c64(0), c64(w), false, latch, [&](Value* l, BasicBlock* lane_latch) {
          for (auto& [v, arr] : lane_arrays) {
            B.CreateStore(B.CreateLoad(i64(), B.CreateGEP(i64(), arr.first, l)), bits_[(size_t)v]);
            B.CreateStore(B.CreateLoad(i8(), B.CreateGEP(i8(), arr.second, l)), tags_[(size_t)v]);
          }
          enter_iteration(s, B.CreateAdd(kb, l));
          targets_.push_back({s->loop, lane_latch, exit});
          stmt(rest);
          targets_.pop_back();
        }, nullptr);
        B.SetInsertPoint(BasicBlock::Create(C, "dead", F));
      }, nullptr, c64(w));
      if (gave_up) {
        rollback(mark);
        return false;
      }
      B.SetInsertPoint(done);
      last_exit = done;
    }
    B.CreateBr(tail);
    B.SetInsertPoint(tail);
    auto* lo = B.CreatePHI(i64(), 2, "tail.lo");
    auto* hi = B.CreatePHI(i64(), 2, "tail.hi");
    auto* back = B.CreatePHI(B.getInt32Ty(), 2, "tail.back");
    for (BasicBlock* pred : llvm::predecessors(tail)) {
      if (pred == last_exit) {
        lo->addIncoming(kend, pred);
        hi->addIncoming(trip, pred);
        back->addIncoming(B.getInt32(0), pred);
        continue;
      }
      for (const Redo& r : redos)
        if (r.from == pred) {
          lo->addIncoming(r.lo, pred);
          hi->addIncoming(r.hi, pred);
          back->addIncoming(B.getInt32(r.back), pred);
        }
    }
    BasicBlock* tail_done = BasicBlock::Create(C, "lanes.tail.done", F);
    // Few iterations run there (fewer than `lanes` per run of the loop, unless something
    // warned): compact code, not vectorized.
    warn_gen_ = WarnGen::Classify;
    plain_loop(s, s->body[0], lo, hi, tail_done);
    warn_gen_ = WarnGen::Normal;
    B.SetInsertPoint(tail_done);
    llvm::SwitchInst* sw = B.CreateSwitch(back, exit, (unsigned)heads.size());
    for (size_t i = 0; i < heads.size(); i++) {
      sw->addCase(B.getInt32((uint32_t)(i + 1)), heads[i]->getParent());
      heads[i]->addIncoming(hi, tail_done);
    }
    interleaved_[s->loop] = W;
    return true;
  }

  void while_loop(const Stmt& s) {
    BasicBlock* exit = BasicBlock::Create(C, "while.exit", F);
    BasicBlock* head = BasicBlock::Create(C, "while.head", F);
    if (s->peeled) {
      targets_.push_back({s->loop, head, exit});
      stmt(s->body[1]);
      targets_.pop_back();
      if (!B.GetInsertBlock()->getTerminator()) B.CreateBr(head);
    } else {
      B.CreateBr(head);
    }
    B.SetInsertPoint(head);
    targets_.push_back({s->loop, head, exit});
    poll_interrupts(s->body[0]);
    if (spec_bad_) {
      resume_ = first_resume(s->body[0]);
      soft_checkpoint();
    }
    stmt(s->body[0]);
    targets_.pop_back();
    if (!B.GetInsertBlock()->getTerminator()) B.CreateBr(head);
    B.SetInsertPoint(exit);
  }
};

}  // namespace

Codegen codegen(const specialize::TypedNest& typed, const std::vector<TypeRef>& entry,
                const specialize::Oracle& oracle, const specialize::FactSet& facts, const CodegenOptions& options,
                llvm::LLVMContext& ctx, const std::string& name) {
  return Gen(typed, entry, oracle, facts, options, ctx, name).run();
}

}  // namespace stagepy::backends::cpu
