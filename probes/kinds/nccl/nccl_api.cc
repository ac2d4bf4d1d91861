#include "probes/kinds/nccl/nccl_api.h"

#include <dlfcn.h>

namespace fabricwatch::probes::nccl {
namespace {

template <typename F>
bool resolve(void* lib, const char* name, F& fn, std::string& why, bool optional = false) {
  fn = reinterpret_cast<F>(::dlsym(lib, name));
  if (!fn && !optional) {
    const char* e = ::dlerror();
    why = std::string("symbol ") + name + " not found" + (e ? std::string(": ") + e : "");
    return false;
  }
  return true;
}

}  // namespace

std::string NcclApi::error(int code) const {
  const char* s = getErrorString ? getErrorString(code) : nullptr;
  std::string out =
      (s ? std::string(s) : "NCCL error") + " (ncclResult " + std::to_string(code) + ")";
  const char* last = getLastError ? getLastError(nullptr) : nullptr;
  if (last && *last) out += ": " + std::string(last);
  return out;
}

bool loadNccl(const std::string& name, NcclApi& api, std::string& why) {
  void* lib = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* e = ::dlerror();
    why = e ? e : name + ": not found";
    return false;
  }
  return resolve(lib, "ncclGetVersion", api.getVersion, why) &&
         resolve(lib, "ncclGetErrorString", api.getErrorString, why) &&
         resolve(lib, "ncclGetLastError", api.getLastError, why, /*optional=*/true) &&
         resolve(lib, "ncclGetUniqueId", api.getUniqueId, why) &&
         resolve(lib, "ncclCommInitAll", api.commInitAll, why) &&
         resolve(lib, "ncclCommInitRank", api.commInitRank, why) &&
         resolve(lib, "ncclCommDestroy", api.commDestroy, why) &&
         resolve(lib, "ncclCommGetAsyncError", api.commGetAsyncError, why) &&
         resolve(lib, "ncclAllReduce", api.allReduce, why) &&
         resolve(lib, "ncclSend", api.send, why, /*optional=*/true) &&
         resolve(lib, "ncclRecv", api.recv, why, /*optional=*/true) &&
         resolve(lib, "ncclGroupStart", api.groupStart, why) &&
         resolve(lib, "ncclGroupEnd", api.groupEnd, why);
}

std::string ncclVersionString(int code) {
  if (code >= 10000)
    return std::to_string(code / 10000) + "." + std::to_string(code % 10000 / 100) + "." +
           std::to_string(code % 100);
  // Before 2.9: 1000 * major + 100 * minor + patch.
  return std::to_string(code / 1000) + "." + std::to_string(code % 1000 / 100) + "." +
         std::to_string(code % 100);
}

}  // namespace fabricwatch::probes::nccl
