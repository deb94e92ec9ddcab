// The threads behind parallel loops: in, a loop body outlined by codegen
// (`int32 body(ctx, lo, hi, tid)`, running iterations [lo, hi) as thread `tid`) and the
// loop's iteration range; out, every iteration run once, on up to `threads` OpenMP
// threads. Iterations go out in fixed chunks dealt round-robin (schedule(static, chunk)):
// balanced for triangular nests, and the same split on every run, so that reductions
// combine their per-thread parts in the same order each time. threads < 0 asks for the
// iterations in order instead: -threads contiguous blocks, block b run as `tid` b, so that
// record b holds the b-th run of iterations (a float min/max combines them in that order).
#pragma once
#include <cstdint>

namespace stagepy::backends::cpu {

using ParallelBody = int32_t (*)(void* ctx, int64_t lo, int64_t hi, int64_t tid);

// The threads parallel loops use: set_threads()'s choice, else STAGEPY_THREADS, else
// every core. Kernels are compiled for a thread count (it is part of their guard key).
int default_threads();
// n <= 0: back to the default.
void set_threads(int n);

// Tiered parallel bodies (jit.h, "tier-up"): from now on, chunks of parallel loops whose body
// is `quick` run `full` instead (the same loop body, compiled with code generation's
// optimizations). `full` null: forget `quick` (its code is about to go).
void set_parallel_body_upgrade(ParallelBody quick, ParallelBody full);

// The least work a region must hold to run on threads, in codegen's cost units
// (statement_cost: about a simple operation each, a math function call 16, a division 8):
// a region wakes the threads and joins them (a microsecond or two), which a few hundred
// simple iterations do not repay (a loop of 512 ran 9x slower on two threads than on one).
// STAGEPY_MIN_PARALLEL_COST, else 32768 (this VM's break-even on two threads: 8-16K simple
// iterations, 6K divisions, 1.5K calls of exp), for two threads: kernels for T > 2 threads
// ask T / 2 times as much (waking and joining sixteen cost 7 us where two cost 1.7). Kernels
// read it at every region.
int64_t* min_parallel_cost_address();

// Threads that start late: where other processes keep the cores busy, a parallel region
// waits for a thread the OS runs only a time slice later (milliseconds, for a loop of
// microseconds: a survey script ran 9 s where one thread took 0.2 ms). A region in which
// the last thread started more than 1 ms after the region (STAGEPY_LATE_THREADS_MS; 0:
// never), and after more than half of it, is late; the second late region in a row makes
// the next regions run on the calling thread (the same chunks, as the threads would have
// run them: the same records and results) for a while: 20 ms, doubling while regions keep
// finding late threads, up to 1 s; a region whose threads all start within 200 us ends the
// back-off. Only regions within 2 ms of the previous one count: threads idle for longer
// sleep, and may take milliseconds to wake on a machine with free cores.
struct Contention {
  uint64_t late_regions = 0;       // regions that found a thread late
  uint64_t on_caller_regions = 0;  // regions run on the calling thread because of them
};
Contention contention();
// Tests: regions run on the calling thread for the next `seconds` (0: from now on, not).
void force_contended(double seconds);

}  // namespace stagepy::backends::cpu

extern "C" {
// Called by kernels. Returns the non-zero status of the earliest chunk (in iteration order)
// that returned one, 0 normally.
int32_t stagepy_parallel_for(stagepy::backends::cpu::ParallelBody body, void* ctx, int64_t k0, int64_t trip,
                             int64_t threads);
// Orders the warnings a parallel loop's threads saw: `first` holds, per (site, kind) and
// thread, the first iteration it occurred in (INT64_MAX: never); writes to `rank` the place
// of each (site, kind) among those that occurred (1, 2, ... by iteration, then site), or 0.
void stagepy_rank_parallel_warnings(const int64_t* results, int64_t threads, int64_t record, int64_t offset,
                                    int64_t n, int64_t* rank);
// The threads' copies of an array a parallel loop sums into (plan_parallel.h's
// ArrayReduction): `bytes`, page aligned, every element the identity: fill 0 all bits
// zero, 1 doubles -0.0, 2 floats -0.0. Null where memory ran out. Freed with
// stagepy_private_free.
void* stagepy_private_copies(int64_t bytes, int32_t fill);
void stagepy_private_free(void* p);
// The copies at `p` (of stagepy_private_copies(bytes, fill)) back to the identity.
void stagepy_private_reset(void* p, int64_t bytes, int32_t fill);
}
