// Python's `random` module in kernels: in, the module's generator (CPython's _random.Random:
// the Mersenne Twister's 624 words and its index, which the kernel reads and writes in place,
// holding the GIL); out, what random.random() and random.getrandbits(k) draw from it, the
// same numbers CPython draws (Modules/_randommodule.c's genrand_uint32 and random_random), and
// Random._randbelow(n) built on getrandbits as random.py builds it; and the draws of
// random.gauss(), normalvariate() and expovariate() as random.py makes them from random() and
// math's log, sqrt, cos and sin (the parts before `mu + z * sigma` and `/ lambd`, which the
// kernels compute as the IR's own operators).
//
// A statement that goes to CPython runs again there, so its draws must not have happened:
// a kernel keeps, beside the generator, the index at the start of the current statement and,
// once the words are refilled within it, the words from before (RandomDraws). Each statement
// that draws commits them when it completes; every way out of the kernel undoes the draws made
// since the last commit (stagepy_random_end).
#pragma once
#include <cstdint>

namespace stagepy::backends::cpu {

constexpr int kMtWords = 624;

// random.gauss()'s second number, the instance's `gauss_next` (None: has == 0).
struct GaussNext {
  int32_t has = 0;
  double value = 0;
};

// The generators kernels draw from: the `random` module's, and NumPy's legacy one behind
// np.random.rand() and the other functions of np.random (its global RandomState's MT19937).
enum class RandomSource : int32_t { Python = 0, Numpy = 1 };

struct RandomDraws {
  uint32_t* mt = nullptr;
  int32_t* index = nullptr;
  int32_t index0 = 0;    // *index at the last commit
  int32_t refilled = 0;  // the words were refilled since then; `before` holds them as they were
  // gauss_next, read from the instance at the kernel's first gauss() (gauss_read), as it is
  // now and as it was at the last commit.
  GaussNext gauss, gauss0;
  int32_t gauss_read = 0;
  RandomSource source = RandomSource::Python;
  uint32_t before[kMtWords];
};

// Where kernels take gauss_next from and give it back to (the instance's attribute, which
// only the hook reads and writes): `load` says false where it is neither None nor a float
// (then the statement goes to CPython); `store` takes the value the kernel leaves.
struct GaussNextAccess {
  bool (*load)(GaussNext* out) = nullptr;
  void (*store)(const GaussNext& value) = nullptr;
};

// The generator kernels draw from: the words and index inside the `random` module's
// instance (hook/random_generator.cpp found where, and checked the draws against CPython's),
// and its gauss_next.
void set_random_generator(uint32_t* mt, int32_t* index, GaussNextAccess gauss);
// NumPy's: the MT19937's key and pos (the same Mersenne Twister, the same words) and the
// RandomState's cached normal (has_gauss, gauss), which legacy_gauss keeps as gauss_next.
void set_numpy_generator(uint32_t* key, int32_t* pos, GaussNextAccess gauss);

// random.py's constants, as the module computed them (set with the generator).
struct RandomConstants {
  double twopi = 0, nv_magicconst = 0;
};
void set_random_constants(const RandomConstants& c);

// One draw of the generator at (mt, index), as genrand_uint32 makes it (refilling the words
// when the index reaches 624). For the self-test on a copy, and the kernels' draws.
uint32_t random_word(uint32_t* mt, int32_t* index);
// random.random(): 53 bits from two words.
double random_double(uint32_t* mt, int32_t* index);
// Random._randbelow(n) for 0 < n < 2**63: getrandbits(n.bit_length()) until below n.
int64_t random_below(uint32_t* mt, int32_t* index, int64_t n);
// random.gauss()'s z (before `mu + z * sigma`), with gauss_next in `next`.
double random_gauss(uint32_t* mt, int32_t* index, GaussNext* next);
// random.normalvariate()'s z (before `mu + z * sigma`).
double random_normal(uint32_t* mt, int32_t* index);
// random.expovariate()'s -log(1.0 - random()) (before `/ lambd`); NumPy's legacy
// standard_exponential computes the same from the same double (before `scale *`).
double random_expo(uint32_t* mt, int32_t* index);
// NumPy's legacy draws (numpy/random/src/legacy, distributions.c), for the self-test:
// RandomState.randint(lo, hi) for lo < hi (masked rejection: 32-bit words below 2**32, else
// 64-bit ones, the first word high); legacy_gauss (the polar method, its second number kept
// in `next`).
int64_t numpy_randint(uint32_t* mt, int32_t* index, int64_t lo, int64_t hi);
double numpy_gauss(uint32_t* mt, int32_t* index, GaussNext* next);

}  // namespace stagepy::backends::cpu

extern "C" {
// The kernel's draws start at the generator's state.
void stagepy_random_begin(stagepy::backends::cpu::RandomDraws* d);
double stagepy_random_random(stagepy::backends::cpu::RandomDraws* d);
int64_t stagepy_random_below(stagepy::backends::cpu::RandomDraws* d, int64_t n);
// NaN where gauss_next could not be read (GaussNextAccess::load): the statement goes to CPython.
double stagepy_random_gauss(stagepy::backends::cpu::RandomDraws* d);
// NumPy's generator (stagepy_random_random draws its np.random.random() too).
void stagepy_np_random_begin(stagepy::backends::cpu::RandomDraws* d);
int64_t stagepy_np_randint(stagepy::backends::cpu::RandomDraws* d, int64_t lo, int64_t hi);  // lo < hi
double stagepy_np_gauss(stagepy::backends::cpu::RandomDraws* d);  // NaN: as stagepy_random_gauss
double stagepy_random_normal(stagepy::backends::cpu::RandomDraws* d);
// -log(1.0 - random()): expovariate()'s, and NumPy's standard_exponential from its own generator.
double stagepy_random_expo(stagepy::backends::cpu::RandomDraws* d);
// The statement that drew completed: its draws stay.
void stagepy_random_commit(stagepy::backends::cpu::RandomDraws* d);
// The kernel returns `status` (kernel_abi.h: 0 done, else where CPython resumes): where
// CPython runs a statement again, the draws since the last commit are undone; gauss_next,
// where the kernel read it, goes back to the instance.
void stagepy_random_end(stagepy::backends::cpu::RandomDraws* d, int32_t status);
}
