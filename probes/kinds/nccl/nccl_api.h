#pragma once
// The entry points of libnccl.so.2 that the NCCL probe calls, loaded with dlopen() at run time
// (the CUDA runtime's are gpu/cuda_api.h). fabricwatch is never linked against NCCL and its
// build needs no NCCL header: the few types and functions below are declared from its
// documented, stable C ABI (nccl.h). A node without it is a state the probe reports with the
// library's own reason, never an error.

#include <cstddef>
#include <string>
#include <vector>

#include "gpu/cuda_api.h"

namespace fabricwatch::probes::nccl {

// nccl.h: typedef struct { char internal[NCCL_UNIQUE_ID_BYTES]; } ncclUniqueId; (128 bytes)
struct NcclUniqueId {
  char internal[128];
};
using NcclComm = void*;  // ncclComm_t: an opaque pointer
using gpu::CudaStream;
// ncclResult_t, ncclDataType_t and ncclRedOp_t are C enums (int).
inline constexpr int kNcclSuccess = 0;
inline constexpr int kNcclInProgress = 7;
inline constexpr int kNcclFloat32 = 7;  // ncclFloat32 == ncclFloat
inline constexpr int kNcclSum = 0;

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

// Loads libnccl and resolves its symbols; on failure returns false with the reason (dlerror's
// text) in `why`.
bool loadNccl(const std::string& name, NcclApi& api, std::string& why);

// 22105 -> "2.21.5" (NCCL_VERSION_CODE: 10000 * major + 100 * minor + patch since 2.9).
std::string ncclVersionString(int code);

}  // namespace fabricwatch::probes::nccl
