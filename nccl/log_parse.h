#pragma once
// NCCL's own log (NCCL_DEBUG=INFO) turned into what a person needs to know about a run: which
// NCCL, CUDA driver and network it used, which NICs, whether GPUDirect RDMA was on, which
// transport each channel took, and the warnings and errors that explain a fallback.
//
// The parser is pure and incremental: feed() it text in chunks of any size (a file read in
// pieces, or the last part of a running job's log), then finish(). It is bounded whatever the
// input: lines longer than LogLimits::max_line_bytes are cut, parsing stops after max_lines,
// and every list it keeps is capped, so a huge or hostile file costs bounded memory and time.
// It understands the formats of NCCL 2.18 to 2.29 and aws-ofi-nccl 1.7 to 1.21, the
// `host:pid:tid [cudaDev]` prefix with or without NCCL's timestamps, and lines of many ranks
// interleaved, behind launcher prefixes such as mpirun's `[1,3]<stdout>:`.

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/value.h"

namespace fabricwatch::nccl {

struct LogLimits {
  size_t max_line_bytes = 4096;  // a longer line is cut (and counted)
  uint64_t max_lines = 4000000;  // parsing stops here (truncated = true)
  size_t max_items = 64;         // NICs, hosts, env settings, transports kept
  size_t max_findings = 32;      // warnings and errors kept (each with its count)
  size_t max_text_bytes = 400;   // of each finding's text
};

// A warning or an error seen in the log. Identical findings of many ranks are kept once.
struct Finding {
  std::string severity;  // critical | warning
  std::string kind;      // ibv_call, symbol_version, ofi_init, nccl_error, cuda, nccl_warn ...
  std::string text;      // the message (valid UTF-8, cut to max_text_bytes)
  uint64_t line = 0;     // first line it appeared on (1-based)
  uint64_t count = 0;    // how many lines said the same
};

struct Nic {
  std::string net;      // IB | Socket
  std::string device;   // mlx5_0 | eth0
  int port = 0;         // IB port (0 for sockets)
  std::string link;     // IB | RoCE (IB); empty for sockets
  std::string address;  // the socket's address
};

struct LogSummary {
  // Input accounting.
  uint64_t lines = 0;
  uint64_t nccl_lines = 0;     // lines with an NCCL INFO/WARN prefix
  uint64_t long_lines = 0;     // cut to max_line_bytes
  uint64_t garbled_lines = 0;  // two ranks' writes mixed into one line: skipped
  bool truncated = false;      // stopped at max_lines

  std::string nccl_version;         // "2.21.5"
  std::string nccl_cuda_version;    // the CUDA NCCL was built for: "12.4"
  std::string cuda_driver_version;  // "12.4" (cudaDriverVersion 12040)
  std::set<std::string> hosts;
  std::set<std::string> processes;           // host:pid
  int64_t ranks = 0;                         // largest nranks seen
  int64_t nodes = 0;                         // largest nNodes seen (2.19+)
  std::map<std::string, uint64_t> networks;  // "Using network X" -> processes saying so
  std::string net_plugin_state;              // loaded | not_found | "" (not logged)
  std::string net_plugin;                    // loaded plugin's name, or what was not found
  std::vector<Nic> nics;
  std::string oob;           // bootstrap interface "eth0:10.0.0.1"
  std::string ofi_provider;  // "efa" (aws-ofi-nccl)
  std::string ofi_fabric;
  int64_t ofi_nics = -1;
  std::string ofi_plugin_version;      // "aws-ofi-nccl 1.9.1-aws"
  std::string libfabric_version;       // "1.22"
  std::set<std::string> gdr_disabled;  // "HCA 0 'mlx5_0'" / "GPU 0 / HCA ..." lines
  uint64_t gdr_enabled_lines = 0;
  std::map<std::string, uint64_t> transports;  // "NET/IB", "P2P/IPC", "SHM" -> channel lines
  uint64_t net_channels = 0;                   // channel connections over NET/COLLNET
  uint64_t net_channels_gdr = 0;               // ... of which with /GDRDMA
  int64_t channels = 0;                        // rings: "Channel 00/04 :" -> 4
  int64_t tree_channels = 0;                   // "Trees [0] ... [1] ..." -> 2
  bool connected_rings = false;
  bool connected_trees = false;
  uint64_t init_complete = 0;  // "Init COMPLETE" lines
  // "AllReduce: 1048576 Bytes -> Algo 1 proto 2" (NCCL_DEBUG_SUBSYS=TUNING, rank 0):
  // size -> "Ring/Simple".
  std::map<uint64_t, std::string> allreduce_algorithms;
  std::map<std::string, std::string> env;  // "NCCL_IB_HCA set by environment to mlx5"
  std::vector<Finding> findings;
  uint64_t findings_dropped = 0;

  bool empty() const { return nccl_lines == 0 && findings.empty(); }
};

class LogParser {
 public:
  explicit LogParser(LogLimits limits = {}) : limits_(limits) {}
  void feed(std::string_view chunk);
  // Parses a pending last line without a newline and returns the summary.
  LogSummary finish();

 private:
  void line(std::string_view l);
  void ncclMessage(std::string_view level, std::string_view prefix, std::string_view msg);
  void otherLine(std::string_view l);
  void add(std::string severity, std::string kind, std::string_view text);
  void addNic(Nic n);

  LogLimits limits_;
  LogSummary s_;
  std::string pending_;        // an incomplete line carried between chunks (at most max_line_bytes)
  bool pending_long_ = false;  // the pending line has been cut
  std::map<std::pair<std::string, std::string>, size_t> finding_index_;
  std::set<std::string> traced_;  // processes whose first error-trace line is kept
};

// Parses a whole text at once.
LogSummary parseNcclLog(std::string_view text, LogLimits limits = {});

}  // namespace fabricwatch::nccl
