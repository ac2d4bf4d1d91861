#pragma once
// What the daemon and the probe child (`fabricwatch __nccl-probe`, started through
// /proc/self/exe) say to each other: a request on the child's standard input and a result on
// its descriptor 3, both as KEY=VALUE lines, parsed with bounds. NCCL's own settings travel in
// the child's environment, where NCCL reads them.
//
// A local run (mode=local) all-reduces across every GPU of the node in one process
// (ncclCommInitAll). A rank run (mode=rank) is one process of a multi-node communicator: it
// takes rank, nranks, device and the unique id (rank 0 creates the id when none is given and
// reports it first, as a `unique_id=` line, so that its caller can pass it to the peer while the
// child waits in ncclCommInitRank). The peer probe starts the same subcommand on both nodes.
// ncclGetUniqueId needs no GPU (it opens NCCL's bootstrap socket), so rank 0 reports a real id
// before it looks for a device: on a node without a GPU the exchange still runs for real.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabricwatch::probes::nccl {

inline constexpr std::string_view kProbeSubcommand = "__nccl-probe";
// Test-only: set in the child's environment to "hang" (sleep until killed), "crash" (abort),
// "flood" (write past the result limit) or "hang_in_init" (after the libraries loaded and the
// unique id was made or taken, sleep until killed: NCCL stuck in ncclCommInitRank waiting for
// a peer). Harmless: it only changes what the child does.
inline constexpr std::string_view kTestModeEnv = "FABRICWATCH_NCCL_PROBE_TEST_MODE";

struct ChildRequest {
  std::string mode = "local";                         // local | rank
  std::string operation = "all_reduce";               // all_reduce | send_recv (rank mode)
  std::vector<uint64_t> sizes = {1 << 20, 64 << 20};  // bytes per rank, as nccl-tests' -b/-e
  int warmup = 5;
  int iterations = 20;
  std::string nccl_library = "libnccl.so.2";
  std::vector<std::string> cudart_libraries = {"libcudart.so", "libcudart.so.13", "libcudart.so.12",
                                               "libcudart.so.11.0"};
  // mode=rank
  int rank = 0;
  int nranks = 1;
  int device = 0;
  bool rotate_device = false;  // use device % (GPUs of the node): the caller counts runs
  std::string unique_id;       // 256 hex digits; empty on rank 0: create one
  // The daemon's PID: the child asks the kernel to kill it when its parent dies, and exits at
  // once if the parent is already gone (0: not checked).
  int64_t parent = 0;
};

struct SizeResult {
  uint64_t bytes = 0;
  double time_us = 0;     // per iteration, averaged over `iterations`
  double algbw_gbps = 0;  // bytes / time, 1e9 bytes per second (nccl-tests' GB/s)
  double busbw_gbps = 0;  // algbw * 2(n-1)/n for all-reduce, algbw for send/recv
};

struct ChildResult {
  // ok | unavailable (no library, no GPU: the reason says which) | failed (NCCL or CUDA failed)
  std::string state;
  std::string reason;
  std::string nccl_version;          // "2.21.5" (ncclGetVersion)
  std::string cuda_driver_version;   // "12.4" (cudaDriverGetVersion)
  std::string cuda_runtime_version;  // "12.4"
  int64_t gpus = -1;                 // cudaGetDeviceCount
  int64_t ranks = 0;                 // ranks in the communicator
  int64_t device = -1;               // the GPU a rank run used
  std::string unique_id;             // a rank run's: made (rank 0) or joined (others)
  std::vector<SizeResult> results;
};

std::string encodeRequest(const ChildRequest& r);
// Unknown keys are ignored (a newer daemon may send more); bad values are errors.
std::optional<ChildRequest> parseRequest(std::string_view text, std::string& error);

std::string encodeResult(const ChildResult& r);
// What a (possibly crashed or hostile) child wrote: bounded, unknown keys ignored, bad lines
// skipped, text fields made valid UTF-8.
ChildResult parseResult(std::string_view text);

// All-reduce bus bandwidth as nccl-tests defines it: algbw * 2(n-1)/n.
double allReduceBusBw(double algbw, int ranks);
// Bus bandwidth of `operation` as nccl-tests defines it: all_reduce as above, send_recv algbw
// (each rank sends and receives its buffer once).
double busBw(std::string_view operation, double algbw, int ranks);
bool validOperation(std::string_view operation);

}  // namespace fabricwatch::probes::nccl
