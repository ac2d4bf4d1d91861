#include "probes/kinds/fabric/hmem.h"

#include <rdma/fi_domain.h>

#include "gpu/cuda_api.h"

namespace fabricwatch::probes::fabric {

const char* hmemStateName(HmemStatus::State s) {
  switch (s) {
    case HmemStatus::State::kOff:
      return "off";
    case HmemStatus::State::kUnavailable:
      return "unavailable";
    case HmemStatus::State::kAvailable:
      return "available";
  }
  return "off";
}

std::vector<std::string> cudartNames(const std::string& configured) {
  if (!configured.empty()) return {configured};
  return {"libcudart.so", "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0"};
}

HmemStatus checkHmem(const std::vector<std::string>& cudart, EndpointOptions opts) {
  HmemStatus st;
  st.state = HmemStatus::State::kUnavailable;
  gpu::CudaApi cuda;
  std::string why;
  if (!gpu::loadCuda(cudart, cuda, why)) {
    st.reason = "CUDA runtime: " + why;
    return st;
  }
  int version = 0;
  if (cuda.runtimeGetVersion(&version) == gpu::kCudaSuccess)
    st.cuda_runtime = gpu::cudaVersionString(version);
  int count = 0;
  if (int rc = cuda.getDeviceCount(&count); rc != gpu::kCudaSuccess) {
    st.reason = "cudaGetDeviceCount: " + cuda.error(rc);
    return st;
  }
  st.devices = count;
  if (count == 0) {
    st.reason = "cudaGetDeviceCount: no GPU";
    return st;
  }
  opts.hmem = true;
  ProviderFacts facts;
  std::optional<FabricError> err;
  auto ep = Endpoint::open(opts, facts, err);
  if (!ep) {
    st.reason = "provider " + (facts.provider.empty() ? opts.provider : facts.provider) +
                " with FI_HMEM: " + err->message();
    return st;
  }
  void* gpu = nullptr;
  if (int rc = cuda.setDevice(0); rc != gpu::kCudaSuccess) {
    st.reason = "cudaSetDevice: " + cuda.error(rc);
    return st;
  }
  if (int rc = cuda.malloc(&gpu, 1 << 20); rc != gpu::kCudaSuccess) {
    st.reason = "cudaMalloc: " + cuda.error(rc);
    return st;
  }
  auto reg = ep->registerDevice(gpu, 1 << 20, FI_HMEM_CUDA, 0);
  cuda.free(gpu);
  if (reg) {
    st.reason = reg->message();
    return st;
  }
  st.state = HmemStatus::State::kAvailable;
  return st;
}

}  // namespace fabricwatch::probes::fabric
