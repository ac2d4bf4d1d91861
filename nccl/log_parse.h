#pragma once
// NCCL's own log (NCCL_DEBUG=INFO) turned into what a person needs to know about a run: which
// NCCL, CUDA driver and network it used, which NICs, whether GPUDirect RDMA was on, which
// transport each channel took, and the warnings and errors that explain a fallback or a failure,
// with the lines the frameworks print around them (PyTorch's ProcessGroupNCCL watchdog and
// "NCCL error" reports, nccl-tests' failures, libfabric's own warnings).
//
// The parser is pure and incremental: feed() it text in chunks of any size (a file read in
// pieces, or the last part of a running job's log), then finish(). It is bounded whatever the
// input: lines longer than LogLimits::max_line_bytes are cut, parsing stops after max_lines or
// max_bytes, whichever comes first (stopped() tells a reader to stop reading: an endless input,
// /dev/zero or a pipe, ends there), and every list it keeps is capped, so a huge or hostile file
// costs bounded memory and time.
// It understands the wording of NCCL 2.4 to 2.29 and aws-ofi-nccl 1.x, the `host:pid:tid
// [cudaDev]` prefix with or without NCCL's timestamps, and lines of many ranks interleaved
// behind launcher and log-shipper prefixes (mpirun's `[1,3]<stdout>:`, pdsh's `host: `,
// torchrun's `[rank3]:`, CloudWatch's `| 2025-05-16T16:39:51.208-07:00` glued to the host).
// What each message means is in the pattern tables of log_info_patterns.cc (INFO lines),
// log_warn_patterns.cc (WARN lines) and log_other_lines.cc (everything else).

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace fabricwatch::nccl {

struct LogLimits {
  size_t max_line_bytes = 4096;            // a longer line is cut (and counted)
  uint64_t max_lines = 4000000;            // parsing stops here (truncated = true)
  uint64_t max_bytes = uint64_t{1} << 30;  // or here, 1 GiB, line or no line (truncated = true)
  size_t max_items = 64;                   // NICs, hosts, env settings, transports kept
  size_t max_findings = 32;                // warnings and errors kept (each with its count)
  size_t max_text_bytes = 400;             // of each finding's text
};

// A warning or an error seen in the log. Identical findings of many ranks are kept once.
struct Finding {
  std::string severity;  // critical | warning | info, as the line itself rates it
  std::string kind;      // what it is: ib_completion, ibv_call, ofi_init, socket_remote ... (the
                         // WARN and other-line tables list them all)
  std::string text;      // the message (valid UTF-8, cut to max_text_bytes)
  uint64_t line = 0;     // first line it appeared on (1-based)
  uint64_t count = 0;    // how many lines said the same
  std::string process;   // host:pid of its first line; empty without an NCCL prefix
  // The NET device of the process's last NET channel line before it ("via NET/IB/3" -> 3), and
  // that line: which NIC a failing connection was on.
  int net_dev = -1;
  uint64_t channel_line = 0;
  // The first error trace of the same process ("transport/p2p.cc:302 -> 3"): where it failed.
  std::string trace;
  uint64_t trace_line = 0;
};

// "NET/IB : Got completion [from peer P] with error|status=N ..." of every release, parsed.
struct Completion {
  int status = -1;                    // ibv_wc_status
  int64_t vendor_err = -1;            // the NIC vendor's syndrome (mlx5: 0x81 = 129 for retries)
  std::string peer;                   // "172.36.143.59<44206>" (2.10+)
  std::string hca;                    // "mlx5_3" (2.22+)
  std::string local_gid, remote_gid;  // RoCE only (2.18+)
  std::string direction;              // Send | Recv (2.18+)
  uint64_t line = 0, count = 0;
  std::string text;
  std::string process;
  bool after_progress = false;  // nccl-tests results or other progress were logged before it
};

// PyTorch's "[Rank N] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=..,
// OpType=.., Timeout(ms)=..) ran for N milliseconds": a collective that never completed.
struct Watchdog {
  uint64_t line = 0, count = 0;
  std::string text;
  std::set<int64_t> ranks;  // at most LogLimits::max_items
  std::set<std::string> ops;
  int64_t seq_min = -1, seq_max = -1;
  int64_t timeout_ms = -1;
  int64_t ran_ms = -1;  // the longest "ran for"
};

// A framework's report of an NCCL error: PyTorch's "NCCL error in: ..., unhandled system error
// ..., NCCL version X" and the "ncclSystemError: ..." line after it, nccl-tests' "Test NCCL
// failure common.cu:NNN 'internal error'".
struct FrameworkError {
  uint64_t line = 0, count = 0;
  std::string text;
  std::string nccl_error;  // ncclSystemError | ncclInternalError | ncclRemoteError | ...
  std::string reporter;    // the launcher's rank prefix ("rank3"), when there is one
  std::string last_error;  // NCCL's "Last error:" text
  uint64_t last_error_line = 0;
};

// "NET/IB: NCCL Dev 0 IbDev 0 Port 1 qpn 1047 mtu 5 ... GID 0 (80FE/1A8A41FEFF21A75E)": the GID
// NCCL connects with, printed as two byte-swapped 64-bit halves, so a link-local fe80:: GID
// shows as 80FE.
struct GidUse {
  int64_t index = -1;
  std::string prefix;  // "80FE", "0" (IPv4-mapped) ...
  uint64_t line = 0;
  std::string text;
};

struct Nic {
  std::string net;      // IB | Socket
  std::string device;   // mlx5_0 | eth0
  int port = 0;         // IB port (0 for sockets)
  std::string link;     // IB | RoCE (IB); empty for sockets
  std::string address;  // the socket's address
  int index = -1;       // NCCL's device number ("[3]mlx5_2:1/RoCE" -> 3): NET/IB/3
  bool sharp = false;   // "mlx5_0:1/IB/SHARP"
  uint64_t line = 0;    // where NCCL listed it first
};

struct LogSummary {
  // Input accounting.
  uint64_t lines = 0;
  uint64_t nccl_lines = 0;     // lines with an NCCL INFO/WARN prefix
  uint64_t long_lines = 0;     // cut to max_line_bytes
  uint64_t garbled_lines = 0;  // two ranks' writes mixed into one line: skipped
  uint64_t bytes = 0;          // read, up to max_bytes
  bool truncated = false;      // stopped at max_lines or max_bytes

  std::string nccl_version;         // "2.21.5"
  std::string nccl_cuda_version;    // the CUDA NCCL was built for: "12.4"
  std::string cuda_driver_version;  // "12.4" (cudaDriverVersion 12040)
  // The era the wording shows when no version line does: "2.4" ("Ring 00 : 7 -> 8" lines),
  // "2.7" ("Channel 00 : 1[1a000] -> 0[1a000]"), "2.12" ("Channel 00/0 :").
  std::string wording_era;
  std::set<std::string> hosts;
  std::set<std::string> processes;           // host:pid
  std::set<std::string> devices;             // host:cudaDev, the GPUs seen per host
  int64_t ranks = 0;                         // largest nranks seen
  int64_t nodes = 0;                         // largest nNodes seen (2.19+)
  int64_t local_ranks = 0;                   // largest localRanks seen (2.19+)
  std::map<std::string, uint64_t> networks;  // "Using network X" -> processes saying so
  uint64_t network_line = 0;                 // the first "Using network" line
  std::string net_plugin_state;              // loaded | not_found | "" (not logged)
  std::string net_plugin;                    // loaded plugin's name, or what was not found
  std::string collnet_plugin;                // "SHARP" (Loaded collnet plugin SHARP)
  std::vector<Nic> nics;
  std::string oob;         // bootstrap interface "eth0:10.0.0.1"
  bool oob_empty = false;  // "NET/IB : Using ...; OOB :" (no address on it)
  uint64_t oob_empty_line = 0;
  uint64_t socket_nic_line = 0;  // the first "NET/Socket : Using" line
  std::string ofi_provider;      // "efa" (aws-ofi-nccl)
  std::string ofi_fabric;
  int64_t ofi_nics = -1;
  std::string ofi_plugin_version;      // "aws-ofi-nccl 1.9.1-aws"
  std::string libfabric_version;       // "1.22"
  std::set<std::string> gdr_disabled;  // "HCA 0 'mlx5_0'" / "GPU 0 / HCA ..." lines (RDMA NICs)
  uint64_t gdr_disabled_line = 0;
  std::string gdr_disabled_reason;  // "distance 6 > 4" | "no module" | ""
  uint64_t gdr_enabled_lines = 0;
  bool dmabuf = false;                         // "DMA-BUF is available on GPU device N"
  std::map<std::string, uint64_t> transports;  // "NET/IB", "P2P/IPC", "SHM" -> channel lines
  uint64_t net_channels = 0;                   // channel connections over NET/COLLNET
  uint64_t net_channels_gdr = 0;               // ... of which with /GDRDMA
  uint64_t first_net_channel_line = 0;
  uint64_t first_plain_net_channel_line = 0;  // the first without /GDRDMA
  int64_t channels = 0;                       // rings: "Channel 00/04 :" -> 4
  int64_t tree_channels = 0;                  // "Trees [0] ... [1] ..." -> 2
  int64_t nvls_channels = -1;                 // "16 coll channels, ... 16 nvls channels"
  uint64_t nvls_lines = 0;                    // "NVLS comm", "Connected NVLS" lines
  uint64_t collnet_lines = 0;                 // "CollNet 05/0 : ... via COLLNET/...", SHARP
  bool connected_rings = false;
  bool connected_trees = false;
  uint64_t init_complete = 0;  // "Init COMPLETE" lines
  uint64_t progress_line = 0;  // the last nccl-tests result row or other sign of a running job
  // "AllReduce: 1048576 Bytes -> Algo 1 proto 2" (NCCL_DEBUG_SUBSYS=TUNING, rank 0):
  // size -> "Ring/Simple".
  std::map<uint64_t, std::string> allreduce_algorithms;
  std::map<std::string, std::string> env;     // "NCCL_IB_HCA set by environment to mlx5"
  std::map<std::string, uint64_t> env_lines;  // where each was set
  std::vector<Finding> findings;
  uint64_t findings_dropped = 0;
  std::vector<Completion> completions;           // one per (status, direction), at most 8
  Watchdog watchdog;                             // count 0: none
  std::vector<FrameworkError> framework_errors;  // at most 8
  std::vector<GidUse> gids;                      // distinct (index, prefix), at most 8
  uint64_t abort_line = 0;  // the first abort: a framework error, "Abort COMPLETE", a watchdog

  bool empty() const {
    return nccl_lines == 0 && findings.empty() && completions.empty() && watchdog.count == 0 &&
           framework_errors.empty();
  }
};

class ParseState;

class LogParser {
 public:
  explicit LogParser(LogLimits limits = {});
  ~LogParser();
  LogParser(LogParser&&) noexcept;
  LogParser& operator=(LogParser&&) noexcept;
  void feed(std::string_view chunk);
  // True once a bound is reached: whatever follows is ignored, so a reader can stop reading.
  bool stopped() const;
  // Parses a pending last line without a newline and returns the summary.
  LogSummary finish();

 private:
  void feedLines(std::string_view chunk);
  void line(std::string_view l);

  LogLimits limits_;
  std::unique_ptr<ParseState> state_;
  std::string pending_;        // an incomplete line carried between chunks (at most max_line_bytes)
  bool pending_long_ = false;  // the pending line has been cut
};

// Parses a whole text at once.
LogSummary parseNcclLog(std::string_view text, LogLimits limits = {});

}  // namespace fabricwatch::nccl
