#pragma once
// Pure parsers for a training process's /proc entries: the fabric libraries in its maps, the
// environment variables that shape NCCL and libfabric (all others dropped), its Kubernetes
// pod/container identity from cgroup paths, and the glibc version string in its libc.

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

}  // namespace fabricwatch::facts
