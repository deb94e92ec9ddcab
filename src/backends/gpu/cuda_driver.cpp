// See cuda_driver.h.
#include "backends/gpu/cuda_driver.h"

#include <dlfcn.h>
#include <pthread.h>

#include <cstdlib>
#include <mutex>

namespace stagepy::backends::gpu {
namespace {

// cuda.h's values.
constexpr int kAttrMultiprocessorCount = 16;
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;

struct Loaded {
  Driver d{};
  Device dev;
  bool ok = false;
  std::string why;
  // The primary context is retained by the first make_current (about 130 ms on an H100):
  // the module preloader's thread asks first, while LLVM compiles the first kernel.
  std::once_flag ctx_once;
  CUresult ctx_error = 0;
};

std::string text_of(const Driver& d, CUresult r) {
  const char* s = nullptr;
  if (d.cuGetErrorString && d.cuGetErrorString(r, &s) == 0 && s) return std::string(s) + " (" + std::to_string(r) + ")";
  return "CUDA error " + std::to_string(r);
}

template <class F>
bool bind(void* lib, const char* name, F*& slot, std::string& why) {
  slot = reinterpret_cast<F*>(dlsym(lib, name));
  if (!slot) why = std::string("libcuda.so.1 has no ") + name;
  return slot != nullptr;
}

Loaded* g_forkable = nullptr;  // the driver as loaded, for the fork handler

Loaded* load() {
  auto* L = new Loaded();  // lives for the process: kernels keep the module handles
  const char* forced = std::getenv("STAGEPY_NO_GPU");
  if (forced && *forced && std::string(forced) != "0") {
    L->why = "STAGEPY_NO_GPU is set";
    return L;
  }
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    L->why = "no CUDA driver (libcuda.so.1 not found)";
    return L;
  }
  Driver& d = L->d;
  std::string& w = L->why;
  bool ok = bind(lib, "cuInit", d.cuInit, w) && bind(lib, "cuDeviceGetCount", d.cuDeviceGetCount, w) &&
            bind(lib, "cuDeviceGet", d.cuDeviceGet, w) && bind(lib, "cuDeviceGetAttribute", d.cuDeviceGetAttribute, w) &&
            bind(lib, "cuDeviceGetName", d.cuDeviceGetName, w) &&
            bind(lib, "cuDeviceTotalMem_v2", d.cuDeviceTotalMem, w) &&
            bind(lib, "cuDevicePrimaryCtxRetain", d.cuDevicePrimaryCtxRetain, w) &&
            bind(lib, "cuCtxSetCurrent", d.cuCtxSetCurrent, w) && bind(lib, "cuCtxSynchronize", d.cuCtxSynchronize, w) &&
            bind(lib, "cuModuleLoadDataEx", d.cuModuleLoadDataEx, w) &&
            bind(lib, "cuModuleGetFunction", d.cuModuleGetFunction, w) && bind(lib, "cuMemAlloc_v2", d.cuMemAlloc, w) &&
            bind(lib, "cuMemFree_v2", d.cuMemFree, w) && bind(lib, "cuMemcpyHtoD_v2", d.cuMemcpyHtoD, w) &&
            bind(lib, "cuMemcpyDtoH_v2", d.cuMemcpyDtoH, w) && bind(lib, "cuLaunchKernel", d.cuLaunchKernel, w) &&
            bind(lib, "cuGetErrorString", d.cuGetErrorString, w);
  if (!ok) return L;
  std::string optional;  // (a missing one only turns staged copies off)
  bind(lib, "cuMemAllocHost_v2", d.cuMemAllocHost, optional) && bind(lib, "cuMemFreeHost", d.cuMemFreeHost, optional) &&
      bind(lib, "cuMemcpyHtoDAsync_v2", d.cuMemcpyHtoDAsync, optional) &&
      bind(lib, "cuMemcpyDtoHAsync_v2", d.cuMemcpyDtoHAsync, optional) &&
      bind(lib, "cuStreamCreate", d.cuStreamCreate, optional) &&
      bind(lib, "cuStreamSynchronize", d.cuStreamSynchronize, optional) &&
      bind(lib, "cuEventCreate", d.cuEventCreate, optional) && bind(lib, "cuEventRecord", d.cuEventRecord, optional) &&
      bind(lib, "cuEventSynchronize", d.cuEventSynchronize, optional);
  CUresult r = d.cuInit(0);
  if (r != 0) {
    L->why = "cuInit failed: " + text_of(d, r);
    return L;
  }
  int count = 0;
  if (d.cuDeviceGetCount(&count) != 0 || count < 1) {
    L->why = "the CUDA driver sees no device";
    return L;
  }
  Device& dev = L->dev;
  if ((r = d.cuDeviceGet(&dev.dev, 0)) != 0) {
    L->why = "no device 0: " + text_of(d, r);
    return L;
  }
  d.cuDeviceGetAttribute(&dev.cc_major, kAttrComputeCapabilityMajor, dev.dev);
  d.cuDeviceGetAttribute(&dev.cc_minor, kAttrComputeCapabilityMinor, dev.dev);
  d.cuDeviceGetAttribute(&dev.sms, kAttrMultiprocessorCount, dev.dev);
  d.cuDeviceTotalMem(&dev.memory, dev.dev);
  char name[256] = {0};
  d.cuDeviceGetName(name, sizeof name - 1, dev.dev);
  dev.name = name;
  L->ok = true;
  // CUDA does not survive fork(): a child forked now runs everything on its CPU.
  g_forkable = L;
  pthread_atfork(nullptr, nullptr, [] {
    g_forkable->ok = false;
    g_forkable->why = "forked from a process that used the GPU (CUDA does not survive fork())";
  });
  return L;
}

Loaded& loaded() {
  static Loaded* L = load();
  return *L;
}

}  // namespace

const Driver* driver(const Device** device, std::string* why) {
  Loaded& L = loaded();
  if (!L.ok) {
    if (why) *why = L.why;
    return nullptr;
  }
  if (device) *device = &L.dev;
  return &L.d;
}

bool available(std::string* why) { return driver(nullptr, why) != nullptr; }

std::string error_text(CUresult r) { return text_of(loaded().d, r); }

bool make_current(std::string* why) {
  Loaded& L = loaded();
  if (!L.ok) {
    if (why) *why = L.why;
    return false;
  }
  std::call_once(L.ctx_once, [&L] { L.ctx_error = L.d.cuDevicePrimaryCtxRetain(&L.dev.ctx, L.dev.dev); });
  if (L.ctx_error != 0) {
    if (why) *why = "no context on device 0: " + text_of(L.d, L.ctx_error);
    return false;
  }
  thread_local CUcontext current = nullptr;
  if (current == L.dev.ctx) return true;
  if (L.d.cuCtxSetCurrent(L.dev.ctx) != 0) return false;
  current = L.dev.ctx;
  return true;
}

}  // namespace stagepy::backends::gpu
