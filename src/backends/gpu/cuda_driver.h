// The CUDA Driver API, loaded at run time: in, nothing (libcuda.so.1 is looked up with
// dlopen the first time a GPU is asked for); out, the entry points stagepy uses and the
// device it runs on (device 0, its primary context), or the reason there is none.
//
// No CUDA header is needed to build stagepy: the few types and constants the driver API
// uses are declared here with the ABI values of cuda.h. A machine without a GPU or
// without the driver is never an error: available() says why not, and every nest runs on
// the CPU.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace stagepy::backends::gpu {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUevent_st;
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUstream = CUstream_st*;
using CUevent = CUevent_st*;

struct Driver {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGetCount)(int*);
  CUresult (*cuDeviceGet)(CUdevice*, int);
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice);
  CUresult (*cuDeviceGetName)(char*, int, CUdevice);
  CUresult (*cuDeviceTotalMem)(size_t*, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuModuleLoadDataEx)(CUmodule*, const void*, unsigned, int*, void**);
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*);
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t);
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, size_t);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             CUstream, void**, void**);
  CUresult (*cuGetErrorString)(CUresult, const char**);
  // For copies staged through pinned buffers (gpu_runtime.cpp); null where the driver
  // lacks one (then copies take the driver's own pageable path).
  CUresult (*cuMemAllocHost)(void**, size_t) = nullptr;
  CUresult (*cuMemFreeHost)(void*) = nullptr;
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void*, size_t, CUstream) = nullptr;
  CUresult (*cuMemcpyDtoHAsync)(void*, CUdeviceptr, size_t, CUstream) = nullptr;
  CUresult (*cuStreamCreate)(CUstream*, unsigned) = nullptr;
  CUresult (*cuStreamSynchronize)(CUstream) = nullptr;
  CUresult (*cuEventCreate)(CUevent*, unsigned) = nullptr;
  CUresult (*cuEventRecord)(CUevent, CUstream) = nullptr;
  CUresult (*cuEventSynchronize)(CUevent) = nullptr;
  bool can_stage() const {
    return cuMemAllocHost && cuMemFreeHost && cuMemcpyHtoDAsync && cuMemcpyDtoHAsync && cuStreamCreate &&
           cuStreamSynchronize && cuEventCreate && cuEventRecord && cuEventSynchronize;
  }
};

struct Device {
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  int cc_major = 0, cc_minor = 0;  // compute capability
  int sms = 0;                     // multiprocessors
  size_t memory = 0;               // bytes
  std::string name;
};

// The driver and device 0 with its primary context, or nullptr with `why` set. Thread
// safe; the first call does the loading.
const Driver* driver(const Device** device = nullptr, std::string* why = nullptr);
bool available(std::string* why = nullptr);

// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)"-style text for an error code.
std::string error_text(CUresult r);

// Makes the primary context current on the calling thread (cheap when it already is); the
// first call in the process retains it. False, with *why, where there is none.
bool make_current(std::string* why = nullptr);

}  // namespace stagepy::backends::gpu
