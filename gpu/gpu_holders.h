#pragma once
// Which processes hold a GPU open, so that the NCCL probe never runs next to a training job.
// Read from /proc/PID/fd under the host root (hostPID in the DaemonSet), bounded in processes
// and descriptors per process.

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fabricwatch::gpu {

struct GpuHolder {
  int64_t pid = 0;
  std::string comm;
  std::string device;  // "/dev/nvidia3"
};

struct GpuScan {
  std::vector<GpuHolder> holders;  // at most max_holders
  uint64_t processes_scanned = 0;
  bool complete = true;  // false when a bound cut the scan short
};

struct GpuScanOptions {
  pid_t self = 0;                         // this process: never a holder
  std::vector<std::string> ignore_comms;  // e.g. nvidia-persistenced, dcgm exporters
  size_t max_processes = 16384;
  size_t max_fds_per_process = 8192;
  size_t max_holders = 8;
};

// A GPU a CUDA context uses: /dev/nvidia<N> or /dev/nvidia-uvm. The control devices
// (/dev/nvidiactl, /dev/nvidia-caps/*, /dev/nvidia-uvm-tools) are opened by monitoring tools too.
bool isGpuDevice(std::string_view link_target);

GpuScan scanGpuHolders(const std::string& rootfs, const GpuScanOptions& opts);

}  // namespace fabricwatch::gpu
