#pragma once
// What a parsed NCCL log means: the transport inter-node traffic used, whether GPUDirect RDMA
// was on, whether NVLS and CollNet/SHARP ran, and the problems the log shows, each with the lines
// that show it and what to do. Shared by `fabricwatch nccl-log`, the workloads' facts and the
// NCCL probe, so that all three judge a log the same way.

#include <string>
#include <string_view>
#include <vector>

#include "core/value.h"
#include "nccl/log_parse.h"

namespace fabricwatch::nccl {

struct Problem {
  std::string severity;  // critical | warning | info
  std::string code;      // what it is, stable for rules: ib_retry_exceeded, pytorch_watchdog ...
  std::string message;   // what is wrong and what to do
  std::string evidence;  // the log lines that show it ("line 7: ...; line 12: ...") or a count
  uint64_t line = 0;     // the first line cited (0: a summary, not a line)
};

struct Verdict {
  // ok (no critical or warning problem), problem, or unknown (nothing NCCL-related at all).
  std::string status;
  // ib | roce | efa | ofi | socket | collnet | other | none (one node: nothing crosses a
  // network) | unknown (the log does not say).
  std::string inter_node_transport;
  std::string gdr;      // on | off | partial | unknown
  std::string nvls;     // on | off | unknown: NVLink SHARP channels
  std::string collnet;  // on | unknown: CollNet (IB SHARP) channels
  // Critical first, then warning, then info; within each, what NCCL chose (socket_transport,
  // mixed_networks) first, then by line.
  std::vector<Problem> problems;
};

Verdict judge(const LogSummary& s);

// The verdict's values as metric labels: one of the values above, else "unknown", so that a
// label never carries any other text.
std::string transportLabel(std::string_view transport);
std::string gdrLabel(std::string_view gdr);

// The summary and verdict as one document (the JSON of `nccl-log --format json`). Keys are
// documented in docs/nccl.md.
core::Value summaryValue(const LogSummary& s, const Verdict& v);

// The compact form kept in the facts document (workloads[].nccl_log, probes.nccl.local.log):
// the verdict and the few values rules test. docs/facts.md lists its keys.
core::Value factsValue(const LogSummary& s, const Verdict& v);

// A human-readable report ending with the verdict (`nccl-log`).
std::string renderText(const LogSummary& s, const Verdict& v);

}  // namespace fabricwatch::nccl
