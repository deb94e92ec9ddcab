// Runtime state of one loop nest and the dispatch that runs it: in, a call from the
// rewritten bytecode (the frame is the caller's); out, None (declined: the original
// loop runs), 0 (the nest ran natively; its variables were written back) or k (native
// code stopped before resume point k-1; _resume_iters() hands over the iterators).
#pragma once
#include <Python.h>

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "analysis/bytecode.h"
#include "analysis/derive_conditions.h"
#include "analysis/lift.h"
#include "hook/list_buffer.h"
#include "backends/cpu/jit.h"
#include "hook/py_ref.h"
#include "support/cost_probe.h"

namespace stagepy::backends::gpu {
struct GpuLoop;
}  // namespace stagepy::backends::gpu

namespace stagepy::runtime {

struct Specialization;  // a compiled kernel for one guard key (dispatch.cpp)
struct HelperEntry;     // a Python function the nest calls, lifted for inlining (dispatch.cpp)

// A nest's attribute columns (ir::Nest::columns), interned, and per variable holding a list
// of objects, its columns (dispatch.cpp's object_columns(); the names borrowed from `names`).
struct ObjectTables {
  std::vector<PyRef> names;
  std::map<size_t, ObjectColumns> of;
};

struct NestState {
  NestState();
  ~NestState();  // defined where Specialization is complete
  std::shared_ptr<analysis::CodeInfo> code;
  analysis::LiftResult lift;
  std::string filename, function;
  int line = -1;
  bool user = true;
  const void* owner = nullptr;  // identity of the code object that calls this nest (never dereferenced)
  int owner_nlocalsplus = -1;
  uint64_t seq = 0;  // creation order (register_nest)

  // Counters for the report.
  unsigned long long calls = 0, native_calls = 0, bailouts = 0, declined = 0;
  unsigned long long exits = 0;   // native runs that ended at a return or raise inside the loops
  unsigned long long bailouts_checked = 0;  // bailouts at the last probe checkpoint (dispatch.cpp)
  double compile_s = 0, native_s = 0, dispatch_s = 0;
  double convert_s = 0;            // of native_s: reading Python lists and writing them back
  unsigned long long lists_read = 0;  // list objects read into buffers (also by calls that then declined)
  std::string status_reason;       // why the last call stayed interpreted
  std::string last_target = "interpreted";

  double infer_s = 0, codegen_s = 0, optimize_s = 0, jit_s = 0;  // compile_s split by phase
  int cached = 0;  // specializations whose object code came from the kernel cache
  // Background compiles of parallel bodies (tier-up, backends/cpu/jit.h), for the report.
  std::vector<std::shared_ptr<const backends::cpu::TierUp>> tier_ups;
  double ptx_s = 0;                // of compile_s: the GPU versions' PTX
  // Too little work per call: the call costs more than the loop (see dispatch.cpp); found
  // from the native time alone, or by the probe that times CPython against the kernel.
  bool too_small = false;
  CostProbe probe;
  unsigned long long skipped_small = 0;
  static constexpr unsigned long long kFirstSmallRetry = 4096;
  unsigned long long small_retry = kFirstSmallRetry;  // calls left to CPython before measuring again (dispatch.cpp)
  // Since the last measuring began: native calls that finished there, their time, and
  // of it reading and writing back lists (the totals above are the report's).
  unsigned long long win_native_calls = 0;
  unsigned long long win_bailed_calls = 0;  // native calls that handed a statement to CPython
  double win_native_s = 0, win_convert_s = 0;
  // Calls in a row whose values gave a specialization that could not be compiled, and how
  // many calls to leave to CPython without looking (reading the values, lists above all,
  // costs on every call; see dispatch.cpp).
  unsigned failed_in_a_row = 0;
  unsigned long long skip_failing = 0;
  // A function the nest calls reads a global named like one of the nest's names (module
  // code): 1 where they were made one variable (the frame's names were its globals), 0 where
  // two (separate locals), -1 where no such name; later frames must agree (dispatch.cpp).
  int names_mode = -1;
  int unreadable_list = -1;  // the variable whose list a call last could not read (read first)
  // The last call declined for the type of one variable alone (`d` is a dict): which, and
  // that type (a static type, never freed). A call whose variable has the same type declines
  // at once, without reading and describing the others (a hot function with a `while d:`
  // paid microseconds per call for the same answer); or for the function it holds, one that
  // cannot be inlined (`declined_code`: a recursive function's loop at every level).
  int declined_var = -1;
  PyTypeObject* declined_type = nullptr;
  const void* declined_code = nullptr;  // with a function: its code (compared, never read)
  // Per variable: whether the nest may give it a row (`row = A[i]`) or an array it computes
  // (`d = X[i] - X[j]`), or surely gives it a list it makes before reading it (`cur = [0] *
  // m` opening the loop's body): a list or array it holds at entry then counts as no value
  // (it is neither read nor compared with the others for sharing memory). Filled on first use.
  std::vector<uint8_t> fresh;
  bool fresh_known = false;
  // Per variable: whether the nest stores into what it holds (the root of a store's
  // subscript chain); `stores_unknown`: some store's root is a variable the nest assigns
  // (`r = M[i]; r[j] = 0`), so any list may be written. Lists that are only read may share
  // inner lists (ListBuffer::read). Filled with `fresh`.
  std::vector<uint8_t> stored;
  bool stores_unknown = false;
  // Per variable: its list of floats is read tagged (ListBuffer), floats and np.float64s
  // each with its type, since a specialization found the nest stores NumPy floats into it.
  std::vector<uint8_t> tag_lists;
  // Per variable whose list grows (Var::resized): the item type (DType + 1; 0: ints) an
  // empty list it holds at entry is typed with, once a specialization found the nest
  // appends items of that type to it.
  std::vector<uint8_t> empty_dtypes;
  // This call's such variables holding an empty list typed as ints for want of better
  // (specialize::KernelRequest::empty_lists).
  std::vector<int> empty_now;

  // The static stage of the analysis (first dispatch), and the facts of the last call's
  // parameter values (most calls repeat them).
  std::unique_ptr<analysis::NestConditions> conds;
  // The static stage again for calls where variables hold ragged lists (Type::ragged), per
  // set of those variables (first_sight's `ragged`).
  using RaggedConds = std::map<std::vector<int>, std::unique_ptr<analysis::NestConditions>>;
  RaggedConds ragged_conds;
  // Per set of helpers the nest calls (their words of the guard key): the nest with them
  // inlined and the static stage of that nest, whose model sees their reads and
  // operations (dispatch.cpp). Made at the set's first call.
  struct Inlined {
    std::vector<uint64_t> key;
    size_t nvars = 0;  // the nest's variables when made (a later helper's globals add more)
    ir::Nest nest;
    std::unique_ptr<analysis::NestConditions> conds;
    RaggedConds ragged_conds;
    std::string reason;  // why the helpers could not be inlined ("" when they were)
    // The line in its helper of each numbered operation, where every helper is in the
    // caller's file (its NumPy warnings are then emitted after the kernel, from there).
    std::map<int, int> lines;
    ObjectTables tables;  // its lists of objects' columns (the helpers' attributes too)
    // As NestState's `stored` and `stores_unknown`, for this nest (its helpers may assign
    // attributes of objects: defer_attribute_stores.h). Filled on first use.
    std::vector<uint8_t> stored;
    bool stores_unknown = false, stored_known = false;
  };
  std::vector<std::unique_ptr<Inlined>> inlined;
  // The conditions last_bits are of (`conds`, or an Inlined's), and their nest.
  const analysis::NestConditions* last_conds = nullptr;
  const ir::Nest* last_nest = nullptr;
  std::vector<int64_t> last_params;
  std::vector<uint8_t> last_known, last_bits;
  bool last_assumptions = false;
  double analysis_s = 0;

  // Per loop (by id): what the last specialization planned, and how often it ran on threads.
  struct LoopRecord {
    bool parallel = false;      // planned parallel (and its body outlined)
    std::string why;            // why it stays sequential ("" when not looked at)
    unsigned long long parallel_runs = 0;
    int interleaved = 0;        // iterations run together (plan_interleave.h), 0 if not
    bool interchanged = false;  // runs with its inner loop outside it (plan_interchange.h)
    // How its iterations go to the threads: "blocks" (one contiguous block each: the same
    // work per iteration), "chunks" (dealt round-robin), "in order" (contiguous, combined in
    // order); "" when not parallel.
    const char* schedule = "";
    std::string summed;  // the arrays it sums into in a copy per thread ("hist, counts"), if parallel
    std::vector<backends::gpu::GpuLoop*> gpu;  // its GPU versions (one per specialization that has one)
    std::string gpu_why;                        // why the last specialization gave it none
  };
  std::vector<LoopRecord> loops;
  int threads = 1;

  std::vector<std::unique_ptr<Specialization>> specs;
  std::vector<std::unique_ptr<HelperEntry>> helpers;  // per code object of a called function
  std::vector<PyRef> attr_names;  // per attribute variable: its name, interned
  ObjectTables tables;  // the nest's lists of objects' columns (object_columns())
  int compiles = 0;                // specializations compiled (the recompile limit counts these)
  std::set<std::vector<uint64_t>> evicted;  // guard keys whose kernel was evicted (recompiled freely)
  bool gave_up = false;            // recompile limit reached
};

void register_nest(const std::shared_ptr<NestState>& s);
// The nest's code object went (its nest object is being deallocated): only its report
// record stays (the newest STAGEPY_MAX_RETIRED_RECORDS of them), its state and kernels go.
void retire_nest(const std::shared_ptr<NestState>& s);
unsigned long long retired_records_dropped();  // records of retired nests no longer kept
void for_each_nest(const std::function<void(NestState&)>& f);  // every nest whose code lives
PyObject* nest_record(const NestState& s);   // new dict (see docs/report.md)
PyObject* nest_vectorcall(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames);
PyObject* resume_iters(PyObject*, PyObject*); // the iterators of the last resume on this thread
PyObject* kernel_stats(PyObject*, PyObject*); // {"loaded", "evicted", "max"}: kernels in memory

}  // namespace stagepy::runtime
