// Scratch buffers for kernels: in, a slot number and a size; out, memory of at least that
// size that stays the calling thread's until it asks for the same slot again. A statement
// that stores an operation on arrays into a slice (`A[i, :] = A[i, :] * 2 + B[i, :]`)
// computes the new elements into a slot first, as NumPy computes a temporary array: the
// stores come only after every element is known good, so that a statement handed to
// CPython half way never left some elements written.
#pragma once
#include <cstdint>

namespace stagepy::backends::cpu {

// Frees the calling thread's buffers larger than `keep_bytes` (after a kernel ran: a
// huge slice once does not hold its memory for the rest of the process).
void release_scratch(int64_t keep_bytes);
// Bytes the calling thread's buffers hold now.
int64_t scratch_bytes();

}  // namespace stagepy::backends::cpu

extern "C" {
// Called by kernels: the calling thread's buffer `slot`, at least `bytes` long, 64-byte
// aligned; nullptr when that much memory cannot be had (the kernel then hands the
// statement to CPython).
void* stagepy_scratch(int64_t slot, int64_t bytes);
}
