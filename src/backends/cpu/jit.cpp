// See jit.h.
#include "backends/cpu/jit.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/ExecutionEngine/Orc/CompileUtils.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/JITLink/EHFrameSupport.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/Endian.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SHA256.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>

#include <llvm/Support/raw_ostream.h>
#include <llvm/Support/CommandLine.h>

#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <mutex>
#include <new>
#include <thread>

#include "backends/cpu/parallel_runtime.h"
#include "backends/optimize.h"
#include "support/debug.h"
#include "support/env.h"

namespace stagepy::backends::cpu {
namespace {

struct Host {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::unique_ptr<llvm::TargetMachine> tm;
  std::optional<llvm::orc::JITTargetMachineBuilder> jtmb;      // for the compile threads' machines
  std::vector<std::unique_ptr<llvm::TargetMachine>> part_tms;  // compile thread w >= 1 uses part_tms[w - 1]
  std::vector<std::unique_ptr<llvm::TargetMachine>> quick_tms;  // ... and quick_tms[w] for quick parts (tier-up)
  llvm::orc::JITDylib* upgrades = nullptr;  // the fully compiled versions of tier-ups' kernels
  std::string error;
  std::string description;
  std::string features;
  struct Loaded {
    std::weak_ptr<void> code;
    std::shared_ptr<const TierUp> tier_up;  // its background compile, if it has one
  };
  std::map<std::string, Loaded> loaded;  // cache key -> the kernel, while in use
  std::map<std::string, const void*> runtime;      // runtime symbols to define
  std::map<std::string, const void*> defined;      // ... and those defined
};

// Kernels whose last handle went: their code is removed under the JIT's lock, at its next
// use. (Never destroyed: handles may go during the process's exit.)
struct Dropped {
  std::mutex mutex;
  std::vector<llvm::orc::ResourceTrackerSP> trackers;
  size_t live = 0;
};
Dropped& dropped() {
  static Dropped* d = new Dropped();
  return *d;
}

Host& host() {
  static Host* h = [] {
    auto* h = new Host();  // lives for the process: kernels stay callable until exit
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!jtmb) {
      h->error = llvm::toString(jtmb.takeError());
      return h;
    }
    // Position-independent code, small code model (what LLJIT picks for JITLink): kernels
    // reach runtime symbols through their GOT, so object code does not depend on where
    // anything was loaded and can be cached.
    jtmb->setRelocationModel(llvm::Reloc::PIC_);
    jtmb->setCodeModel(llvm::CodeModel::Small);
    jtmb->setCodeGenOptLevel(
#if LLVM_VERSION_MAJOR >= 18
        llvm::CodeGenOptLevel::Aggressive
#else
        llvm::CodeGenOpt::Aggressive
#endif
    );
    auto tm = jtmb->createTargetMachine();
    if (!tm) {
      h->error = llvm::toString(tm.takeError());
      return h;
    }
    h->tm = std::move(*tm);
    h->jtmb = *jtmb;
    h->description = h->tm->getTargetTriple().str() + " " + h->tm->getTargetCPU().str();
    h->features = h->tm->getTargetFeatureString().str();
    // JITLink on every LLVM version: it places each object's sections in one block, so its
    // 32-bit PC-relative references (constant pools, jump tables) always reach. LLVM 16's
    // LLJIT default on ELF is RuntimeDyld, whose memory manager maps code and data apart and
    // truncates the offset without a word when they land more than 2 GiB away (as they do
    // once the CUDA driver has reserved its address space): the kernel then crashes.
    auto jit = llvm::orc::LLJITBuilder()
                   .setJITTargetMachineBuilder(std::move(*jtmb))
                   .setObjectLinkingLayerCreator(
                       [](llvm::orc::ExecutionSession& es,
                          const llvm::Triple&) -> llvm::Expected<std::unique_ptr<llvm::orc::ObjectLayer>> {
                         auto layer = std::make_unique<llvm::orc::ObjectLinkingLayer>(es);
                         // Unwind tables registered, as LLJIT does: debuggers and profilers
                         // walk the stack through kernels.
                         layer->addPlugin(std::make_unique<llvm::orc::EHFrameRegistrationPlugin>(
                             es, std::make_unique<llvm::jitlink::InProcessEHFrameRegistrar>()));
                         return layer;
                       })
                   .create();
    if (!jit) {
      h->error = llvm::toString(jit.takeError());
      return h;
    }
    h->jit = std::move(*jit);
    auto gen = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
        h->jit->getDataLayout().getGlobalPrefix());
    if (!gen) {
      h->error = llvm::toString(gen.takeError());
      h->jit.reset();
      return h;
    }
    h->jit->getMainJITDylib().addGenerator(std::move(*gen));
    return h;
  }();
  return *h;
}

std::mutex jit_mutex;

// Removes the code of kernels whose last handle went, and what named them: their entries in
// `loaded` and, in the JIT's pool of symbol names, the names nothing refers to any more
// (ORC keeps those until asked). Without that, each kernel ever made left about half a KiB.
// Called with jit_mutex held.
void free_dropped(Host& h) {
  std::vector<llvm::orc::ResourceTrackerSP> trackers;
  {
    std::lock_guard<std::mutex> lock(dropped().mutex);
    trackers.swap(dropped().trackers);
  }
  if (trackers.empty()) return;
  for (auto& t : trackers)
    if (auto err = t->remove()) {
      if (debug_level() > 0) debug_dump("jit", "freeing a kernel failed: " + llvm::toString(std::move(err)));
      else llvm::consumeError(std::move(err));
    }
  trackers.clear();
  for (auto it = h.loaded.begin(); it != h.loaded.end();) it = it->second.code.expired() ? h.loaded.erase(it) : std::next(it);
  h.jit->getExecutionSession().getSymbolStringPool()->clearDeadEntries();
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

std::string describe_host() { return host().description; }

std::string cache_dir() {
  if (!env_flag("STAGEPY_CACHE", true)) return "";
  if (const char* d = std::getenv("STAGEPY_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/stagepy";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/stagepy";
  return "";
}

void define_runtime_symbol(const std::string& name, const void* address) {
  std::lock_guard<std::mutex> lock(jit_mutex);
  host().runtime[name] = address;
}

namespace {

// Defines the runtime symbols named since the last call (each once; an address never changes).
bool define_pending_symbols(Host& h, std::string* error) {
  llvm::orc::SymbolMap symbols;
  for (auto& [name, addr] : h.runtime) {
    auto it = h.defined.find(name);
    if (it != h.defined.end()) {
      if (it->second != addr) {
        *error = "runtime symbol " + name + " changed its address";
        return false;
      }
      continue;
    }
#if LLVM_VERSION_MAJOR >= 17
    symbols[h.jit->mangleAndIntern(name)] = {llvm::orc::ExecutorAddr::fromPtr(addr), llvm::JITSymbolFlags::Exported};
#else
    symbols[h.jit->mangleAndIntern(name)] = {llvm::pointerToJITTargetAddress(addr), llvm::JITSymbolFlags::Exported};
#endif
    h.defined[name] = addr;
  }
  if (symbols.empty()) return true;
  if (auto err = h.jit->getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(symbols)))) {
    *error = llvm::toString(std::move(err));
    return false;
  }
  return true;
}

// This build of stagepy: the shared object holding this code, its size and modification time.
const std::string& build_identity() {
  static const std::string id = [] {
    Dl_info info;
    std::string s = "unknown build";
    if (dladdr(reinterpret_cast<void*>(&build_identity), &info) && info.dli_fname) {
      struct stat st;
      s = info.dli_fname;
      if (stat(info.dli_fname, &st) == 0)
        s += " " + std::to_string((long long)st.st_size) + " " + std::to_string((long long)st.st_mtim.tv_sec) + "." +
             std::to_string((long long)st.st_mtim.tv_nsec);
    }
    return s;
  }();
  return id;
}


std::unique_ptr<llvm::MemoryBuffer> read_cached(const std::string& path) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buf) return nullptr;
  return std::move(*buf);
}

// Writes the object atomically (a reader sees the old file, none, or the whole new one) and
// keeps the folder to a bounded number of kernels, dropping the least recently used.
void write_cached(const std::string& dir, const std::string& path, llvm::StringRef bytes) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return;
  std::string tmp = path + ".tmp" + std::to_string((long long)getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(bytes.data(), (std::streamsize)bytes.size());
    if (!out) {
      fs::remove(tmp, ec);
      return;
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) fs::remove(tmp, ec);
  constexpr size_t kKeep = 2000;
  std::vector<std::pair<fs::file_time_type, fs::path>> objects;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec))
    if (it->path().extension() == ".o") objects.emplace_back(it->last_write_time(ec), it->path());
  if (objects.size() <= kKeep) return;
  std::sort(objects.begin(), objects.end());
  for (size_t k = 0; k + kKeep / 2 < objects.size(); k++) fs::remove(objects[k].second, ec);
}

}  // namespace

namespace {

// One part of a kernel's module: the function it defines, and what compiling it gave.
struct Part {
  std::string defines;
  size_t instructions = 0;  // the size of the work, roughly
  std::unique_ptr<llvm::MemoryBuffer> object;
  std::string error;
  double optimize_s = 0, codegen_s = 0;
};

// Compiles one part in a context of its own (so that parts compile on several threads at
// once): `bitcode` is the whole module; definitions of other parts become declarations
// (they are linked by name when the objects load), internal helpers stay in every part
// that uses them.
void compile_part(llvm::StringRef bitcode, const std::map<std::string, std::string>& renames, llvm::TargetMachine* tm,
                  const std::string& title, Part* part) {
  auto t0 = std::chrono::steady_clock::now();
  llvm::LLVMContext ctx;
  auto parsed = llvm::parseBitcodeFile(llvm::MemoryBufferRef(bitcode, "stagepy.kernel"), ctx);
  if (!parsed) {
    part->error = llvm::toString(parsed.takeError());
    return;
  }
  std::unique_ptr<llvm::Module> m = std::move(*parsed);
  for (auto& [from, to] : renames)
    if (llvm::Function* f = m->getFunction(from)) {
      f->setName(to);
      f->setLinkage(llvm::GlobalValue::ExternalLinkage);
    }
  // Another part's function is reached through this part's GOT, not a 32-bit offset: parts
  // are separate objects and may be loaded far apart.
  for (llvm::Function& f : *m)
    if (!f.isDeclaration() && !f.hasLocalLinkage() && f.getName() != part->defines) {
      f.deleteBody();
      f.setDSOLocal(false);
    }
  optimize_o3(*m, tm, title);
  auto t1 = std::chrono::steady_clock::now();
  llvm::orc::SimpleCompiler compile(*tm);
  auto obj = compile(*m);
  if (!obj) {
    part->error = llvm::toString(obj.takeError());
    return;
  }
  part->object = std::move(*obj);
  part->optimize_s = std::chrono::duration<double>(t1 - t0).count();
  part->codegen_s = seconds_since(t1);
}

// The disk cache holds a kernel's objects in one file: a header line, the number of objects,
// then each object's size and bytes (numbers as 8 bytes, little-endian).
constexpr llvm::StringLiteral kObjectsHeader = "stagepy objects 1\n";

void put_u64(std::string& s, uint64_t n) {
  char b[8];
  llvm::support::endian::write64le(b, n);
  s.append(b, 8);
}

bool take_u64(llvm::StringRef& rest, uint64_t* n) {
  if (rest.size() < 8) return false;
  *n = llvm::support::endian::read64le(rest.data());
  rest = rest.drop_front(8);
  return true;
}

std::string pack_objects(const std::vector<Part>& parts) {
  std::string s(kObjectsHeader);
  put_u64(s, parts.size());
  for (auto& p : parts) {
    put_u64(s, p.object->getBufferSize());
    s += p.object->getBuffer().str();
  }
  return s;
}

// The objects in a cache file; none if it is not a whole one (cut short, another format).
std::vector<std::unique_ptr<llvm::MemoryBuffer>> unpack_objects(const llvm::MemoryBuffer& file) {
  std::vector<std::unique_ptr<llvm::MemoryBuffer>> out;
  llvm::StringRef rest = file.getBuffer();
  uint64_t count = 0;
  if (!rest.consume_front(kObjectsHeader) || !take_u64(rest, &count)) return {};
  for (uint64_t k = 0; k < count; k++) {
    uint64_t n = 0;
    if (!take_u64(rest, &n) || n > rest.size()) return {};
    out.push_back(llvm::MemoryBuffer::getMemBufferCopy(rest.take_front(n), "stagepy.kernel"));
    rest = rest.drop_front(n);
  }
  if (!rest.empty()) return {};
  return out;
}


// ------------------------------------------------------------------ tier-up (jit.h)

bool tier_up_enabled() {
  static const bool on = env_flag("STAGEPY_TIER_UP", true);
  return on;
}

// The quick code generation: CodeGenOptLevel::None (fast instruction selection, no
// scheduling) with the optimizing register allocator, which LLVM leaves to -O1 and up. With
// the fast allocator nbody's quick kernel ran 5x slower than the full one (28 vs 5.5 ms), with
// this one 1.3x (6.8 ms), for 17 ms of code generation instead of 8 (40 fully). An LLVM
// option of the process (it only changes what CodeGenOptLevel::None does); kept as it is
// where this LLVM has no such option.
void optimize_quick_register_allocation() {
  static const bool done = [] {
    auto& options = llvm::cl::getRegisteredOptions();
    auto it = options.find("optimize-regalloc");
    if (it != options.end() && it->second->getNumOccurrences() == 0)
      (void)it->second->addOccurrence(0, "optimize-regalloc", "true");
    return true;
  }();
  (void)done;
}

llvm::Expected<std::unique_ptr<llvm::TargetMachine>> quick_machine(const Host& h) {
  optimize_quick_register_allocation();
  llvm::orc::JITTargetMachineBuilder b = *h.jtmb;
#if LLVM_VERSION_MAJOR >= 18
  b.setCodeGenOptLevel(llvm::CodeGenOptLevel::None);
#else
  b.setCodeGenOptLevel(llvm::CodeGenOpt::None);
#endif
  return b.createTargetMachine();
}

// What a tiered kernel and its background compile share.
struct Upgrade {
  std::mutex mutex;
  bool alive = true;                         // the kernel's code is still loaded
  std::vector<ParallelBody> quick;           // its quick parallel bodies, in `names` order
  std::vector<std::string> names;            // their symbols (the full ones' too)
  std::string main_name;                     // the kernel function's symbol
  llvm::orc::ResourceTrackerSP full;         // the full version's code, once loaded
  std::shared_ptr<TierUp> status = std::make_shared<TierUp>();
};

// The background compile of one kernel's full version.
struct TierUpJob {
  std::shared_ptr<Upgrade> up;
  std::string bitcode;                          // the whole module (as compile_part takes it)
  std::map<std::string, std::string> renames;
  std::string cache_dir, cache_path;            // empty: not cached on disk
  std::string title;
  std::chrono::steady_clock::time_point queued;
};

// One thread compiles the jobs in order, and a thread waiting for them (finish_compiles, the
// exit) takes the queued ones itself. fork() waits until no job is being compiled (the child
// has no worker thread: it starts one again when it needs it, and runs the jobs left).
struct Worker {
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::shared_ptr<TierUpJob>> jobs;
  int in_flight = 0;  // jobs being compiled, by the worker or a waiting thread
  bool stop = false, running = false;
  std::thread thread;
  pid_t tid = 0;  // the worker thread's, for setpriority
};
Worker& worker() {
  static Worker* w = new Worker();  // never destroyed: see stop_worker
  return *w;
}

void run_job(TierUpJob& job, llvm::TargetMachine* tm);

// Runs the job at the front of the queue on this thread with `tm` (made on first use).
// Called with `lock` held; returns with it held.
void take_job(Worker& w, std::unique_lock<std::mutex>& lock, std::unique_ptr<llvm::TargetMachine>& tm) {
  std::shared_ptr<TierUpJob> job = w.jobs.front();
  w.jobs.pop_front();
  w.in_flight++;
  lock.unlock();
  if (!tm) {
    auto made = host().jtmb->createTargetMachine();
    if (made) tm = std::move(*made);
    else llvm::consumeError(made.takeError());
  }
  if (tm) {
    run_job(*job, tm.get());
  } else {
    job->up->status->error = "no target machine for the background compile";
    job->up->status->state = TierUp::Failed;
  }
  job.reset();
  lock.lock();
  w.in_flight--;
  w.changed.notify_all();
}

// The worker compiles only on a core nothing else wants: a kernel's threads wake up and run
// at once, which the kernels of a 16-core machine needed (at nice 10 the compile still took a
// thread's turn now and then, and a 0.2 ms parallel call waited milliseconds for it).
void idle_priority() {
  sched_param param{};
  if (pthread_setschedparam(pthread_self(), SCHED_IDLE, &param) != 0)
    setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
}
// A thread waits for the job under way (finish_compiles, the exit): on a busy machine the idle
// worker would get no core for as long as the machine stays busy, so the job finishes at the
// ordinary priority (the worker goes back to idle before its next job). Called with w.mutex
// held. Best effort: where the priority cannot be raised the wait is as long as it was.
void hurry_worker(Worker& w) {
  if (w.in_flight == 0 || !w.thread.joinable()) return;
  sched_param param{};
  if (pthread_setschedparam(w.thread.native_handle(), SCHED_OTHER, &param) == 0 && w.tid > 0)
    setpriority(PRIO_PROCESS, (id_t)w.tid, 0);
}

void worker_main() {
  Worker& w = worker();
  std::unique_ptr<llvm::TargetMachine> tm;
  std::unique_lock<std::mutex> lock(w.mutex);
  w.tid = (pid_t)syscall(SYS_gettid);
  for (;;) {
    w.changed.wait(lock, [&] { return w.stop || !w.jobs.empty(); });
    if (w.stop) break;
    idle_priority();
    take_job(w, lock, tm);
  }
}

// At exit (C's, after Python's, which waits for the jobs: wait_tier_ups(.., at_exit)): the job
// under way finishes, the others are dropped.
void stop_worker() {
  Worker& w = worker();
  std::thread t;
  {
    std::lock_guard<std::mutex> lock(w.mutex);
    w.stop = true;
    w.changed.notify_all();
    t = std::move(w.thread);
  }
  if (t.joinable()) t.join();
}

void before_fork() {
  Worker& w = worker();
  std::unique_lock<std::mutex> lock(w.mutex);
  w.changed.wait(lock, [&] { return w.in_flight == 0; });
  lock.release();  // held across fork(); the handlers after it unlock it
}
void after_fork_parent() { worker().mutex.unlock(); }
void after_fork_child() {
  Worker& w = worker();
  w.running = false;
  w.tid = 0;
  // Forget the parent's thread and its wait on the condition (the child has neither).
  new (&w.thread) std::thread();
  new (&w.changed) std::condition_variable();
  w.mutex.unlock();
}

// Called with w.mutex held.
void start_worker(Worker& w) {
  if (w.running || w.stop) return;
  static bool hooks = [] {
    pthread_atfork(before_fork, after_fork_parent, after_fork_child);
    std::atexit(stop_worker);
    return true;
  }();
  (void)hooks;
  w.running = true;
  w.thread = std::thread(worker_main);
}

void enqueue(std::shared_ptr<TierUpJob> job) {
  Worker& w = worker();
  std::lock_guard<std::mutex> lock(w.mutex);
  start_worker(w);
  w.jobs.push_back(std::move(job));
  w.changed.notify_all();
}

void run_job(TierUpJob& job, llvm::TargetMachine* tm) {
  Upgrade& up = *job.up;
  auto fail = [&](const std::string& why) {
    up.status->error = why;
    up.status->state = TierUp::Failed;
  };
  {
    std::lock_guard<std::mutex> lock(up.mutex);
    if (!up.alive) {
      up.status->state = TierUp::Dropped;
      return;
    }
  }
  // The kernel function first, then its parallel bodies.
  std::vector<Part> parts(up.names.size() + 1);
  for (size_t k = 0; k < parts.size(); k++) {
    parts[k].defines = k == 0 ? up.main_name : up.names[k - 1];
    compile_part(job.bitcode, job.renames, tm, job.title, &parts[k]);
    if (!parts[k].error.empty()) return fail(parts[k].error);
  }
  std::string packed;
  {
    std::lock_guard<std::mutex> jit_lock(jit_mutex);
    Host& h = host();
    free_dropped(h);
    std::lock_guard<std::mutex> lock(up.mutex);
    if (!up.alive) {
      up.status->state = TierUp::Dropped;
      return;
    }
    if (!h.upgrades) {
      // The full bodies have the quick ones' names: a library of their own, which finds
      // everything else (runtime symbols, the process's) in the main one.
      auto jd = h.jit->createJITDylib("stagepy.tier_up");
      if (!jd) return fail(llvm::toString(jd.takeError()));
      jd->addToLinkOrder(h.jit->getMainJITDylib());
      h.upgrades = &*jd;
    }
    if (!job.cache_path.empty()) packed = pack_objects(parts);
    auto tracker = h.upgrades->createResourceTracker();
    std::vector<ParallelBody> full;
    std::string why;
    for (auto& p : parts)
      if (auto err = h.jit->addObjectFile(tracker, std::move(p.object))) {
        why = llvm::toString(std::move(err));
        break;
      }
    void* kernel = nullptr;
    if (why.empty()) {
      auto sym = h.jit->lookup(*h.upgrades, up.main_name);
      if (!sym) why = llvm::toString(sym.takeError());
      else kernel = sym->toPtr<void*>();
    }
    for (size_t k = 0; why.empty() && k < up.names.size(); k++) {
      auto sym = h.jit->lookup(*h.upgrades, up.names[k]);
      if (!sym) why = llvm::toString(sym.takeError());
      else full.push_back(sym->toPtr<ParallelBody>());
    }
    if (!why.empty()) {
      if (auto removed = tracker->remove()) why += "; " + llvm::toString(std::move(removed));
      return fail(why);
    }
    for (size_t k = 0; k < full.size(); k++) set_parallel_body_upgrade(up.quick[k], full[k]);
    up.full = tracker;
    up.status->kernel = kernel;
    up.status->seconds = seconds_since(job.queued);
    up.status->state = TierUp::Done;
  }
  if (!packed.empty()) write_cached(job.cache_dir, job.cache_path, packed);
}

}  // namespace

bool wait_tier_ups(double timeout_s, bool at_exit) {
  Worker& w = worker();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  std::unique_ptr<llvm::TargetMachine> tm;
  std::unique_lock<std::mutex> lock(w.mutex);
  // Drops the queued jobs `drop` picks (their kernels keep their quick code).
  auto drop = [&](auto&& pick) {
    for (auto it = w.jobs.begin(); it != w.jobs.end();)
      if (pick(**it)) {
        (*it)->up->status->state = TierUp::Dropped;
        it = w.jobs.erase(it);
      } else {
        ++it;
      }
  };
  // At exit a job is worth finishing only for the disk cache.
  if (at_exit) drop([](const TierUpJob& j) { return j.cache_path.empty(); });
  // The queued jobs on this thread, at its own priority (the worker's is the lowest).
  while (!w.jobs.empty() && !w.stop && std::chrono::steady_clock::now() < deadline) take_job(w, lock, tm);
  if (at_exit) {
    // Out of time: the rest are dropped; the one under way must still end before exit.
    drop([](const TierUpJob&) { return true; });
    deadline = std::max(deadline, std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s));
  }
  hurry_worker(w);
  return w.changed.wait_until(lock, deadline, [&] { return w.stop || (w.jobs.empty() && w.in_flight == 0); });
}

KernelCode jit_compile(std::unique_ptr<llvm::LLVMContext> ctx_in, std::unique_ptr<llvm::Module> module_in,
                  const std::string& function, std::string* error, JitTimes* times) {
  // The module goes before its context, whichever way this returns.
  std::unique_ptr<llvm::LLVMContext> ctx = std::move(ctx_in);
  std::unique_ptr<llvm::Module> module = std::move(module_in);
  std::lock_guard<std::mutex> lock(jit_mutex);
  Host& h = host();
  if (!h.jit) {
    *error = "LLVM JIT unavailable: " + h.error;
    return nullptr;
  }
  if (!define_pending_symbols(h, error)) return nullptr;
  auto t0 = std::chrono::steady_clock::now();
  if (!module->getFunction(function)) {
    *error = "no function " + function + " in the module";
    return nullptr;
  }
  // The key: the module's bitcode with the kernel's per-process name replaced by a fixed one.
  const std::string fixed = "stagepy.kernel";
  for (llvm::Function& f : *module)
    if (!f.isDeclaration() && f.getName().str().rfind(function, 0) == 0)
      f.setName(fixed + f.getName().substr(function.size()).str());
  module->setModuleIdentifier(fixed);
  module->setSourceFileName(fixed);
  module->setDataLayout(h.tm->createDataLayout());
  module->setTargetTriple(h.tm->getTargetTriple().str());
  llvm::SmallVector<char, 0> bitcode;
  {
    llvm::raw_svector_ostream os(bitcode);
    llvm::WriteBitcodeToFile(*module, os);
  }
  const llvm::StringRef bc(bitcode.data(), bitcode.size());
  llvm::SHA256 sha;
  sha.update(bc);
  sha.update("\n" + h.description + "\n" + h.features + "\nLLVM " + LLVM_VERSION_STRING + "\n" + build_identity());
  const std::string key = llvm::toHex(sha.final(), /*LowerCase=*/true);
  free_dropped(h);
  if (auto it = h.loaded.find(key); it != h.loaded.end()) {
    if (KernelCode code = it->second.code.lock()) {
      if (times) {
        times->cached = true;
        times->tier_up = it->second.tier_up;
      }
      return code;
    }
    h.loaded.erase(it);
  }
  const std::string symbol = "stagepy.k." + key;
  const bool cacheable = !module->getModuleFlag(kNoCacheFlag);
  const std::string dir = cacheable ? cache_dir() : "";
  const std::string path = dir.empty() ? "" : dir + "/" + key + ".o";

  // Loads the objects under a tracker of their own: if they do not link, whatever they
  // defined is removed again, so that compiling afresh can define the same symbols.
  // `up`: a tier-up's, whose quick bodies it records; the kernel's code then also takes the
  // full bodies with it when it goes.
  auto load = [&](std::vector<std::unique_ptr<llvm::MemoryBuffer>> objects, std::string* why,
                  std::shared_ptr<Upgrade> up = nullptr) -> KernelCode {
    auto tracker = h.jit->getMainJITDylib().createResourceTracker();
    auto fail = [&](llvm::Error err) -> KernelCode {
      *why = llvm::toString(std::move(err));
      if (auto removed = tracker->remove()) *why += "; " + llvm::toString(std::move(removed));
      return nullptr;
    };
    for (auto& obj : objects)
      if (auto err = h.jit->addObjectFile(tracker, std::move(obj))) return fail(std::move(err));
    auto sym = h.jit->lookup(symbol);
    if (!sym) return fail(sym.takeError());
    if (up)
      for (auto& name : up->names) {
        auto body = h.jit->lookup(name);
        if (!body) return fail(body.takeError());
        up->quick.push_back(body->toPtr<ParallelBody>());
      }
    {
      std::lock_guard<std::mutex> lock(dropped().mutex);
      dropped().live++;
    }
    KernelCode code(sym->toPtr<void*>(), [tracker, up](void*) {
      llvm::orc::ResourceTrackerSP full;
      if (up) {
        // No chunk may reach the quick bodies through the table once their code is gone.
        std::lock_guard<std::mutex> lock(up->mutex);
        up->alive = false;
        for (ParallelBody q : up->quick) set_parallel_body_upgrade(q, nullptr);
        full = std::move(up->full);
      }
      std::lock_guard<std::mutex> lock(dropped().mutex);
      dropped().trackers.push_back(tracker);
      if (full) dropped().trackers.push_back(full);
      dropped().live--;
    });
    h.loaded[key] = Host::Loaded{code, up ? up->status : nullptr};
    return code;
  };

  if (!path.empty()) {
    if (auto file = read_cached(path)) {
      // A file that does not load (cut short, from another machine) is compiled again.
      auto tc = std::chrono::steady_clock::now();
      std::string load_error = "not a kernel cache file";
      auto objects = unpack_objects(*file);
      if (KernelCode p = objects.empty() ? nullptr : load(std::move(objects), &load_error)) {
        ::utime(path.c_str(), nullptr);  // recently used
        if (times) {
          times->cached = true;
          times->codegen_s = seconds_since(tc);
        }
        return p;
      }
      if (debug_level() > 0) debug_dump("kernel cache", "compiling again: " + path + " did not load: " + load_error);
    }
  }
  // The parts: the kernel, and each loop body it runs on threads (outlined: `<kernel>.parN`),
  // which become external functions with names of this key.
  std::vector<Part> parts(1);
  std::map<std::string, std::string> renames{{fixed, symbol}};
  parts[0].defines = symbol;
  parts[0].instructions = module->getFunction(fixed)->getInstructionCount();
  for (llvm::Function& f : *module) {
    const std::string name = f.getName().str();
    if (f.isDeclaration() || name.rfind(fixed + ".par", 0) != 0) continue;
    const std::string to = symbol + name.substr(fixed.size());
    renames[name] = to;
    parts.emplace_back().defines = to;
    parts.back().instructions = f.getInstructionCount();
  }
  module.reset();
  ctx.reset();
  // The largest parts first, on this thread and as many more as parallel loops use (the
  // cores are otherwise idle while the interpreter waits for the kernel), each thread with
  // its own target machine.
  std::stable_sort(parts.begin(), parts.end(),
                   [](const Part& a, const Part& b) { return a.instructions > b.instructions; });
  const size_t workers = std::min(parts.size(), (size_t)default_threads());
  // Tier-up: a kernel with parallel bodies compiled quickly now, fully in the background.
  const bool tiered = parts.size() > 1 && tier_up_enabled();
  while (!tiered && h.part_tms.size() + 1 < workers) {
    auto tm = h.jtmb->createTargetMachine();
    if (!tm) {
      *error = llvm::toString(tm.takeError());
      return nullptr;
    }
    h.part_tms.push_back(std::move(*tm));
  }
  while (tiered && h.quick_tms.size() < workers) {
    auto tm = quick_machine(h);
    if (!tm) {
      *error = llvm::toString(tm.takeError());
      return nullptr;
    }
    h.quick_tms.push_back(std::move(*tm));
  }
  const std::string title = "optimized LLVM IR: " + function;
  {
    std::atomic<size_t> next{0};
    auto work = [&](size_t w) {
      for (size_t k; (k = next++) < parts.size();) {
        llvm::TargetMachine* tm = tiered ? h.quick_tms[w].get() : w == 0 ? h.tm.get() : h.part_tms[w - 1].get();
        compile_part(bc, renames, tm, title, &parts[k]);
      }
    };
    std::vector<std::thread> threads;
    for (size_t w = 1; w < workers; w++) threads.emplace_back(work, w);
    work(0);
    for (auto& t : threads) t.join();
  }
  if (debug_level() > 0) {
    std::string d;
    char line[160];
    for (auto& p : parts) {
      std::snprintf(line, sizeof line, "%s: optimize %.1f ms, code generation %.1f ms\n", p.defines.c_str(),
                    1e3 * p.optimize_s, 1e3 * p.codegen_s);
      d += line;
    }
    debug_dump("kernel parts, compiled on " + std::to_string(workers) + " threads", d);
  }
  double optimize_s = 0;
  for (auto& p : parts) {
    if (!p.error.empty()) {
      *error = p.error;
      return nullptr;
    }
    optimize_s = std::max(optimize_s, p.optimize_s);
  }
  // Optimization as long as the slowest part's took; the rest of the time until the
  // kernel is loaded counts as code generation.
  if (times) times->optimize_s = optimize_s;
  std::shared_ptr<Upgrade> up;
  std::shared_ptr<TierUpJob> job;
  if (tiered) {
    // The disk cache gets the kernel once its full bodies are there.
    up = std::make_shared<Upgrade>();
    job = std::make_shared<TierUpJob>();
    job->up = up;
    job->bitcode = bc.str();
    job->renames = renames;
    job->cache_dir = dir;
    job->cache_path = path;
    job->title = title;
    up->main_name = symbol;
    for (auto& p : parts)
      if (p.defines != symbol) up->names.push_back(p.defines);
  } else if (!path.empty()) {
    write_cached(dir, path, pack_objects(parts));
  }
  std::vector<std::unique_ptr<llvm::MemoryBuffer>> objects;
  for (auto& p : parts) objects.push_back(std::move(p.object));
  KernelCode p = load(std::move(objects), error, up);
  if (times) times->codegen_s = seconds_since(t0) - optimize_s;
  if (p && job) {
    if (times) times->tier_up = up->status;
    job->queued = std::chrono::steady_clock::now();
    enqueue(std::move(job));
  }
  return p;
}

size_t loaded_kernels() {
  std::lock_guard<std::mutex> lock(dropped().mutex);
  return dropped().live;
}

}  // namespace stagepy::backends::cpu
