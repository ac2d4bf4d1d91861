#pragma once
// Pure parsers for a training process's /proc entries: the fabric libraries in its maps, the
// environment variables that shape NCCL and libfabric (all others dropped), its Kubernetes
// pod/container identity from cgroup paths, the glibc version string in its libc, and the
// versions its NCCL, CUDA runtime and net plugin say of themselves.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fabricwatch::facts {

struct MappedLibraries {
  std::optional<std::string> nccl;             // /path/libnccl.so.2.21.5
  std::optional<std::string> libfabric;        // /path/libfabric.so.1
  std::optional<std::string> nccl_net_plugin;  // /path/libnccl-net.so (aws-ofi-nccl ...)
  std::optional<std::string> libc;             // /path/libc.so.6
  std::optional<std::string> cudart;           // /path/libcudart.so.12.4.127
};
// /proc/PID/maps -> the paths of the libraries that matter.
MappedLibraries parseMappedLibraries(std::string_view maps);

// Whether a variable is kept: NCCL_*, FI_*, UCX_*, and LD_LIBRARY_PATH, LD_PRELOAD, OPAL_PREFIX,
// NVIDIA_GDRCOPY, CUDA_VISIBLE_DEVICES, NVIDIA_VISIBLE_DEVICES. Everything else may hold
// secrets and is never exported.
bool isFabricVariable(std::string_view name);
// /proc/PID/environ (NUL-separated) -> the kept variables, in order.
std::vector<std::pair<std::string, std::string>> parseEnviron(std::string_view environ,
                                                              bool (*keep)(std::string_view));

struct CgroupIdentity {
  std::optional<std::string> pod_uid;       // "7c1e2d34-5b6a-4f8e-9d0c-1a2b3c4d5e6f"
  std::optional<std::string> container_id;  // 64 hex digits
};
// /proc/PID/cgroup with the systemd driver (kubepods-burstable-pod<uid_>.slice/
// cri-containerd-<id>.scope, docker-<id>.scope, crio-<id>.scope) or cgroupfs
// (/kubepods/burstable/pod<uid>/<id>).
CgroupIdentity parseCgroupIdentity(std::string_view cgroup);

// "GNU C Library (Ubuntu GLIBC 2.35-0ubuntu3.8) stable release version 2.35." -> "2.35".
std::optional<std::string> findGlibcVersion(std::string_view bytes);

// The banner NCCL compiles in "so that running strings on the lib can quickly reveal the version"
// (src/init.cc): "NCCL version 2.21.5+cuda12.4" -> {"2.21.5", "12.4"}; newer releases print
// "NCCL version 2.28.9 compiled with CUDA 13.0" as well. Only a banner whose end lies in the
// buffer counts: a chunk boundary may cut the number.
struct NcclBanner {
  std::string version;              // "2.21.5"
  std::optional<std::string> cuda;  // the CUDA it was built for, "12.4"
};
std::optional<NcclBanner> findNcclBanner(std::string_view bytes);

// aws-ofi-nccl logs "Initializing " PACKAGE_STRING (src/nccl_ofi_net.cpp), so its library holds
// "Initializing aws-ofi-nccl 1.13.2-aws" -> "1.13.2-aws". A build from an untagged tree says
// "git-<hash>", which is no version: nullopt.
std::optional<std::string> findOfiNcclVersion(std::string_view bytes);

// The version in a file name after `prefix` ("libcudart.so.", "libcudart.so.12.4.127") when it
// has at least major.minor: "libcudart.so.12" alone says only the major.
std::optional<std::string> libraryNameVersion(std::string_view prefix, std::string_view path);

// A pip-installed CUDA runtime's metadata directory in site-packages:
// "nvidia_cuda_runtime_cu12-12.4.127.dist-info" (CUDA 12) or
// "nvidia_cuda_runtime-13.0.96.dist-info" (CUDA 13) -> the version.
std::optional<std::string> cudaRuntimeFromDistInfo(std::string_view entry);

}  // namespace fabricwatch::facts
