#pragma once
// Whether the fabric probe can use GPU memory (FI_HMEM): the CUDA runtime (dlopen()ed through
// the NCCL probe's CUDA ABI, probes/kinds/nccl/nccl_api.h; fabricwatch never links CUDA) must find
// a GPU, the provider must offer FI_HMEM, and a cudaMalloc()ed buffer must register with it
// (FI_HMEM_CUDA): what GPUDirect RDMA needs of the node. Each step that fails says why in its
// own library's words (dlerror, cudaGetErrorString, fi_strerror).

#include <string>
#include <vector>

#include "probes/kinds/fabric/endpoint.h"

namespace fabricwatch::probes::fabric {

struct HmemStatus {
  enum class State { kOff, kUnavailable, kAvailable } state = State::kOff;
  std::string reason;        // why unavailable
  int devices = 0;           // GPUs the CUDA runtime sees
  std::string cuda_runtime;  // "12.4"
};
const char* hmemStateName(HmemStatus::State s);

// The CUDA runtime libraries tried in order: `configured` alone when set, else libcudart.so,
// .so.13, .so.12, .so.11.0.
std::vector<std::string> cudartNames(const std::string& configured);

// Loads the CUDA runtime and counts GPUs; then opens an FI_HMEM endpoint like `opts` and
// registers one GPU buffer with it. The probe's latency and bandwidth stay in host memory.
HmemStatus checkHmem(const std::vector<std::string>& cudart, EndpointOptions opts);

}  // namespace fabricwatch::probes::fabric
