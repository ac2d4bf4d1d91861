#pragma once
// The entry points of libnccl.so.2 and the CUDA runtime that the NCCL probe calls, loaded with
// dlopen() at run time. fabricwatch is never linked against NCCL or CUDA and its build needs
// neither's headers: the few types and functions below are declared from their documented,
// stable C ABI (nccl.h and cuda_runtime_api.h). A node without them, or without a GPU, is a
// state the probe reports with the library's own reason, never an error.

#include <cstddef>
#include <string>
#include <vector>

namespace fabricwatch::probes::nccl {

// nccl.h: typedef struct { char internal[NCCL_UNIQUE_ID_BYTES]; } ncclUniqueId; (128 bytes)
struct NcclUniqueId {
  char internal[128];
};
using NcclComm = void*;    // ncclComm_t: an opaque pointer
using CudaStream = void*;  // cudaStream_t: an opaque pointer
// ncclResult_t, ncclDataType_t, ncclRedOp_t and cudaError_t are C enums (int).
inline constexpr int kNcclSuccess = 0;
inline constexpr int kNcclInProgress = 7;
inline constexpr int kNcclFloat32 = 7;  // ncclFloat32 == ncclFloat
inline constexpr int kNcclSum = 0;
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

struct NcclApi {
  int (*getVersion)(int*) = nullptr;
  const char* (*getErrorString)(int) = nullptr;
  const char* (*getLastError)(NcclComm) = nullptr;  // 2.13 and later; may be null
  int (*getUniqueId)(NcclUniqueId*) = nullptr;
  int (*commInitAll)(NcclComm*, int, const int*) = nullptr;
  int (*commInitRank)(NcclComm*, int, NcclUniqueId, int) = nullptr;
  int (*commDestroy)(NcclComm) = nullptr;
  int (*commGetAsyncError)(NcclComm, int*) = nullptr;
  int (*allReduce)(const void*, void*, size_t, int, int, NcclComm, CudaStream) = nullptr;
  // ncclSend/ncclRecv (2.7 and later; null before): buffer, count, type, peer, comm, stream.
  int (*send)(const void*, size_t, int, int, NcclComm, CudaStream) = nullptr;
  int (*recv)(void*, size_t, int, int, NcclComm, CudaStream) = nullptr;
  int (*groupStart)() = nullptr;
  int (*groupEnd)() = nullptr;
  std::string error(int code) const;  // ncclGetErrorString's text, and ncclGetLastError's
};

// Loads the CUDA runtime (the first of `names` that dlopen finds) and resolves its symbols.
// On failure returns false with the reason (dlerror's text) in `why`.
bool loadCuda(const std::vector<std::string>& names, CudaApi& api, std::string& why);
bool loadNccl(const std::string& name, NcclApi& api, std::string& why);

// 22105 -> "2.21.5" (NCCL_VERSION_CODE: 10000 * major + 100 * minor + patch since 2.9).
std::string ncclVersionString(int code);
// 12040 -> "12.4".
std::string cudaVersionString(int code);

}  // namespace fabricwatch::probes::nccl
