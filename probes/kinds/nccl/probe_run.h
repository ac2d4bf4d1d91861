#pragma once
// One run of the NCCL probe child, shared by the local probe (nccl_probe_source.h) and the peer
// kind (probes/kinds/nccl/nccl_kind.h): `fabricwatch __nccl-probe` started through /proc/self/exe
// with the node's recommended NCCL environment and NCCL_DEBUG=INFO written to a file in a fresh
// temporary directory, bounded by a hard timeout (and a cancel flag), then NCCL's log of the run
// parsed, so the outcome says what NCCL really chose. Also the GPU-holder check that every run
// makes first.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/value.h"
#include "gpu/gpu_holders.h"
#include "nccl/log_parse.h"
#include "nccl/log_verdict.h"
#include "probes/kinds/nccl/nccl_config.h"
#include "probes/kinds/nccl/probe_protocol.h"

namespace fabricwatch::probes::nccl {

// What a run reads of NCCL's log (nccl/: the parser and verdict every NCCL log gets) and of the
// GPUs' holders (gpu/).
using fabricwatch::gpu::busyReason;  // "the GPUs are in use: python (pid 4242) holds ..."
using fabricwatch::gpu::GpuHolder;
using fabricwatch::gpu::GpuScan;
using fabricwatch::gpu::holdersValue;
using fabricwatch::nccl::LogSummary;
using fabricwatch::nccl::Verdict;

// What every run of a node shares ([probes.nccl], docs/configuration.md).
struct RunSettings {
  std::string exe = "/proc/self/exe";  // fabricwatch itself
  std::chrono::milliseconds timeout{180000};
  std::vector<uint64_t> sizes = {uint64_t{1} << 20, uint64_t{256} << 20};
  int warmup = 5;
  int iterations = 20;
  std::string nccl_library = "libnccl.so.2";
  std::string cudart_library;              // "" = the usual sonames
  std::map<std::string, std::string> env;  // NCCL_* for the child, over the daemon's own
  std::string log_dir;                     // "" = $TMPDIR or /tmp
  bool skip_when_busy = true;
  std::vector<std::string> ignore_processes;
};

struct RunHooks {
  // A rank 0 run's unique id (256 hex digits), as soon as the child reports it, while the
  // child waits for the other ranks. Called on the thread that runs the child.
  std::function<void(const std::string& unique_id)> on_unique_id;
  const std::atomic<bool>* cancel = nullptr;  // set: the child is killed, state "cancelled"
  std::chrono::milliseconds timeout{0};       // 0: the settings' timeout
};

struct RunOutcome {
  // ok | unavailable | failed (by the child's report) | timeout | crashed | cancelled
  std::string state;
  std::string reason;
  ChildResult child;  // what the child reported: versions, GPUs, device, unique id, results
  bool has_log = false;
  LogSummary log;  // NCCL's log of the run
  Verdict verdict;
  std::chrono::system_clock::time_point started;
  double seconds = 0;  // child included
};

// The settings of [probes.nccl].
RunSettings runSettings(const NcclConfig& c);

// A request with the settings' sizes, iterations and libraries, and this process as parent.
ChildRequest baseRequest(const RunSettings& s);

// The child's environment: the daemon's, less NCCL's log settings (the probe's own, writing to
// `log`), the variables the config sets and the daemon's own (core/own_environment.h), plus
// the config's.
std::vector<std::string> childEnvironment(const RunSettings& s, const std::string& log);

// Runs the child for `req` (bounded by the timeout) and reads NCCL's log of the run.
RunOutcome runProbe(const RunSettings& s, const ChildRequest& req, const RunHooks& hooks = {});

// The facts of a run (the keys of probes.nccl.local, docs/nccl.md): last_run,
// last_run_timestamp_seconds, state, reason, duration_seconds, nccl_version,
// cuda_runtime_version, cuda_driver_version, gpus, ranks, device, results (size_bytes, time_us,
// algbw_gbps, busbw_gbps, algorithm), log and env.
core::Value runFacts(const RunOutcome& o, const std::map<std::string, std::string>& env);

// The processes holding a GPU, when the settings say to look (skip_when_busy); empty when none
// or when not looking. `rootfs` is the host root (hostPID: /proc of the host). The scan the
// fabric probe's bandwidth yields to as well (gpu::scanForJobs).
GpuScan scanForBusyGpus(const RunSettings& s, const std::string& rootfs);

// A short, stable fingerprint of a unique id (FNV-1a, 16 hex digits), so that both sides'
// facts show which run they were part of without publishing NCCL's bootstrap handle.
std::string uniqueIdFingerprint(const std::string& unique_id);

}  // namespace fabricwatch::probes::nccl
