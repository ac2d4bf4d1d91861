#pragma once
// The entry points of the CUDA runtime that fabricwatch calls, loaded with dlopen() at run time:
// the NCCL probe's child allocates its buffers with them, and the fabric probe asks whether a
// GPU's memory can be registered (FI_HMEM). fabricwatch is never linked against CUDA and its
// build needs no CUDA header: the few types and functions below are declared from the runtime's
// documented, stable C ABI (cuda_runtime_api.h). A node without the runtime, or without a GPU,
// is a state the callers report with the library's own reason, never an error.

#include <cstddef>
#include <string>
#include <vector>

namespace fabricwatch::gpu {

using CudaStream = void*;  // cudaStream_t: an opaque pointer
// cudaError_t is a C enum (int).
inline constexpr int kCudaSuccess = 0;

struct CudaApi {
  int (*getDeviceCount)(int*) = nullptr;
  const char* (*getErrorString)(int) = nullptr;
  int (*driverGetVersion)(int*) = nullptr;
  int (*runtimeGetVersion)(int*) = nullptr;
  int (*setDevice)(int) = nullptr;
  int (*malloc)(void**, size_t) = nullptr;
  int (*free)(void*) = nullptr;
  int (*memset)(void*, int, size_t) = nullptr;
  int (*streamCreate)(CudaStream*) = nullptr;
  int (*streamSynchronize)(CudaStream) = nullptr;
  int (*streamDestroy)(CudaStream) = nullptr;
  std::string error(int code) const;  // cudaGetErrorString's text
};

// Loads the CUDA runtime (the first of `names` that dlopen finds) and resolves its symbols.
// On failure returns false with the reason (dlerror's text) in `why`.
bool loadCuda(const std::vector<std::string>& names, CudaApi& api, std::string& why);

// 12040 -> "12.4".
std::string cudaVersionString(int code);

}  // namespace fabricwatch::gpu
