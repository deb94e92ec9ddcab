// Undo logs for parallel loops that write array elements and may stop for CPython, and
// for logged statements (stagepy_undo_statement, at the end).
//
// In: the stores of a parallel loop body whose iterations touch no element another
// iteration writes (plan_parallel's proof), but any of which may need to stop for CPython
// (a math function's domain error, a Python int leaving 64 bits, `abs()` of a complex
// overflowing). Each thread's record starts with a log (kSlots i64 slots: the next free
// entry, the end of the buffer, its start); before every store the body appends the
// element's address and old bits. Out: after a run whose threads all finished, the logs
// are emptied (commit); after one where a thread stopped, every logged store is undone,
// last first, so the arrays hold what they held before the run, and the loop runs again
// in order, stopping where CPython does (codegen.cpp, parallel_loop).
//
// An entry is two i64: the address with log2 of the store's width (1, 2, 4 or 8 bytes) in
// bits 60-61 (user-space addresses are below 2^57), and the old bits, zero-extended.
// Undoing in reverse restores each element's value from before its first store; logs of
// different threads touch different elements, so their order does not matter.
#pragma once
#include <cstdint>

namespace stagepy::backends::cpu {

inline constexpr int kUndoSlots = 3;          // per record: next entry, end, start
inline constexpr int kUndoSizeShift = 60;     // where an entry keeps log2 of its width
// A log never grows past this; the body then stops (the run is undone and runs in order).
inline constexpr int64_t kUndoMaxBytes = int64_t(256) << 20;
// Log entries a window of a loop's iterations may add, per thread (codegen sizes windows
// from its estimate of stores per iteration).
inline constexpr int64_t kUndoWindowEntries = int64_t(1) << 18;

}  // namespace stagepy::backends::cpu

extern "C" {
// Called by a body whose log is full (or has no buffer yet): a buffer at least twice the
// size, the entries kept (buffers of earlier runs are reused). Returns 0 when the log would pass kUndoMaxBytes (or memory is short).
int32_t stagepy_undo_grow(int64_t* slots);
// After a window of iterations ran to the end on every thread: empties the logs of the
// `n` records (`size` i64 each, at `records`) and copies the records' other slots to
// `backup` (what a failed next window goes back to).
void stagepy_undo_commit(int64_t* records, int64_t* backup, int64_t n, int64_t size);
// After a window in which a thread stopped: undoes every logged store, frees the logs and
// puts the records' other slots back from `backup`.
void stagepy_undo_abort(int64_t* records, const int64_t* backup, int64_t n, int64_t size);
// After the last window: frees the logs (keeping some buffers for later runs).
void stagepy_undo_free(int64_t* records, int64_t n, int64_t size);
// A kernel with logged statements (ir::ResumePoint::logged) keeps one record for them, emptied
// at each statement's start. On the kernel's way out with `status`: where it hands a
// statement to CPython (status != 0), the entries (that statement's stores) are undone;
// the log is freed.
void stagepy_undo_statement(int64_t* slots, int32_t status);
}
