#pragma once
// Which processes hold a GPU open, so that heavy probes (the NCCL runs, the fabric probe's
// bandwidth) never run next to a training job. Read from /proc/PID/fd under the host root
// (hostPID, or the host's /proc under --path.rootfs), bounded in processes and descriptors per
// process. This daemon and the children it starts (the NCCL probe's) never count, nor processes
// named in an ignore list (monitoring that holds GPUs open without using them).

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/value.h"

namespace fabricwatch::gpu {

struct GpuHolder {
  int64_t pid = 0;
  std::string comm;
  std::string device;  // "/dev/nvidia3"
};

struct GpuScan {
  std::vector<GpuHolder> holders;  // at most max_holders
  uint64_t processes_scanned = 0;
  // Processes whose descriptors could not be read (EACCES: without CAP_SYS_PTRACE and
  // CAP_DAC_READ_SEARCH only this container's own are readable, so the scan sees no job).
  uint64_t unreadable = 0;
  bool complete = true;  // false when a bound cut the scan short
};

struct GpuScanOptions {
  pid_t self = 0;                         // this process: never a holder, nor its children
  std::vector<std::string> ignore_comms;  // e.g. nvidia-persistenced, dcgm exporters
  size_t max_processes = 16384;
  size_t max_fds_per_process = 8192;
  size_t max_holders = 8;
};

// A GPU a CUDA context uses: /dev/nvidia<N> or /dev/nvidia-uvm. The control devices
// (/dev/nvidiactl, /dev/nvidia-caps/*, /dev/nvidia-uvm-tools) are opened by monitoring tools too.
bool isGpuDevice(std::string_view link_target);

GpuScan scanGpuHolders(const std::string& rootfs, const GpuScanOptions& opts);

// The processes that hold GPUs open without running a job on them: the default of every
// probes.*.ignore_processes (the driver's persistence daemon, DCGM's host engine and exporter,
// dcgmi, nvidia-smi).
const std::vector<std::string>& monitoringProcesses();
// Whether /proc/PID/comm `comm` is the process `name`: the kernel keeps 15 bytes of a name
// (TASK_COMM_LEN), so "nvidia-persistenced" shows as "nvidia-persiste".
bool commMatches(std::string_view comm, std::string_view name);
// An ignore list's entry: a process name as `comm` shows it, or longer (matched by its first
// 15 bytes). The problem, or nullopt.
std::optional<std::string> checkProcessName(const std::string& name);
// The parent's pid in the text of /proc/PID/stat ("pid (comm) state ppid ..."; comm may hold
// spaces and parentheses).
std::optional<int64_t> parentPid(std::string_view stat);
// This process as the /proc under `rootfs` names it: /proc/self there resolves in that procfs'
// own pid namespace (the host's, where the container has its own); getpid() where it does not
// resolve.
pid_t selfPid(const std::string& rootfs);

// The scan a probe makes before it disturbs a job: this process (selfPid) and its children
// excluded, and the processes `ignore` names.
GpuScan scanForJobs(const std::string& rootfs, const std::vector<std::string>& ignore);
// "the GPUs are in use: python (pid 4242) holds /dev/nvidia0" ("" without holders).
std::string busyReason(const GpuScan& scan);
core::Value holdersValue(const std::vector<GpuHolder>& holders);

// The latest scanForJobs for callers on several threads: one that may take the time (the fabric
// probe's round) scans anew when the last scan is older than max_age, one that must answer at
// once (the peer channel's thread) reads the last. A scan reads every process's descriptors:
// 4-8 ms for 100-200 processes, 66 ms of CPU for 1,000 of 64 descriptors each
// (bench/gpu_scan_bench.cc).
class JobWatch {
 public:
  using Clock = std::chrono::steady_clock;
  JobWatch(std::string rootfs, std::vector<std::string> ignore, std::chrono::milliseconds max_age)
      : rootfs_(std::move(rootfs)), ignore_(std::move(ignore)), max_age_(max_age) {}
  // The last scan, made anew first when older than max_age.
  std::shared_ptr<const GpuScan> current(Clock::time_point now = Clock::now());
  // The last scan without scanning: null when none is younger than twice max_age (nobody has
  // refreshed it: what it said is too old to act on).
  std::shared_ptr<const GpuScan> latest(Clock::time_point now = Clock::now());

 private:
  const std::string rootfs_;
  const std::vector<std::string> ignore_;
  const std::chrono::milliseconds max_age_;
  std::mutex mu_;
  std::shared_ptr<const GpuScan> latest_;
  Clock::time_point taken_{};
};

}  // namespace fabricwatch::gpu
