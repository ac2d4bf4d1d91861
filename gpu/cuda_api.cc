#include "gpu/cuda_api.h"

#include <dlfcn.h>

namespace fabricwatch::gpu {
namespace {

template <typename F>
bool resolve(void* lib, const char* name, F& fn, std::string& why) {
  fn = reinterpret_cast<F>(::dlsym(lib, name));
  if (!fn) {
    const char* e = ::dlerror();
    why = std::string("symbol ") + name + " not found" + (e ? std::string(": ") + e : "");
    return false;
  }
  return true;
}

}  // namespace

std::string CudaApi::error(int code) const {
  const char* s = getErrorString ? getErrorString(code) : nullptr;
  return (s ? std::string(s) : "CUDA error") + " (cudaError " + std::to_string(code) + ")";
}

bool loadCuda(const std::vector<std::string>& names, CudaApi& api, std::string& why) {
  void* lib = nullptr;
  for (const auto& n : names) {
    lib = ::dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib) break;
    const char* e = ::dlerror();
    why += (why.empty() ? "" : "; ") + std::string(e ? e : n + ": not found");
  }
  if (!lib) return false;
  why.clear();
  return resolve(lib, "cudaGetDeviceCount", api.getDeviceCount, why) &&
         resolve(lib, "cudaGetErrorString", api.getErrorString, why) &&
         resolve(lib, "cudaDriverGetVersion", api.driverGetVersion, why) &&
         resolve(lib, "cudaRuntimeGetVersion", api.runtimeGetVersion, why) &&
         resolve(lib, "cudaSetDevice", api.setDevice, why) &&
         resolve(lib, "cudaMalloc", api.malloc, why) && resolve(lib, "cudaFree", api.free, why) &&
         resolve(lib, "cudaMemset", api.memset, why) &&
         resolve(lib, "cudaStreamCreate", api.streamCreate, why) &&
         resolve(lib, "cudaStreamSynchronize", api.streamSynchronize, why) &&
         resolve(lib, "cudaStreamDestroy", api.streamDestroy, why);
}

std::string cudaVersionString(int code) {
  return std::to_string(code / 1000) + "." + std::to_string(code % 1000 / 10);
}

}  // namespace fabricwatch::gpu
