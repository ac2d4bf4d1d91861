#pragma once
// The NCCL log parser's working state, shared by its line tables (internal to nccl/):
// log_parse.cc splits lines and finds who wrote them, log_info_patterns.cc reads NCCL's INFO
// messages, log_warn_patterns.cc its WARN messages, log_other_lines.cc the lines of the
// frameworks, launchers and libraries around them. Everything kept is bounded by LogLimits.

#include <map>
#include <string>
#include <string_view>

#include "nccl/log_parse.h"

namespace fabricwatch::nccl {

// Who wrote the line being parsed.
struct LineOrigin {
  bool known = false;
  std::string host, pid, process;  // process = host:pid
  std::string launcher_rank;       // "rank3" of torchrun's "[rank3]:" prefix
};

// What the parser remembers per process (host:pid) between its lines.
struct ProcessState {
  uint64_t warn_line = 0;        // its first WARN
  uint64_t last_warn_line = 0;   // its latest WARN
  uint64_t trace_line = 0;       // its first NCCLCHECK trace after its latest WARN
  uint64_t trace_warn_line = 0;  // the WARN that trace follows (0: none)
  std::string trace_text;
  bool benign_next = false;  // a trace of a harmless probe is expected next
  int net_dev = -1;          // of its last NET channel line
  uint64_t net_line = 0;
};

class ParseState {
 public:
  explicit ParseState(const LogLimits& limits) : limits(limits) {}

  const LogLimits limits;
  LogSummary s;
  LineOrigin origin;  // of the current line (s.lines is its number)

  // Adds a finding, or counts one more line of an identical one; returns it (nullptr when the
  // list is full). The process of the current line is recorded with it.
  Finding* add(std::string severity, std::string kind, std::string_view text);
  void addNic(Nic n);
  void setEnv(std::string_view name, std::string_view value);
  // The state of the current line's process (a shared slot when too many are known).
  ProcessState& process();
  void noteAbort() {
    if (s.abort_line == 0) s.abort_line = s.lines;
  }
  // A "Last error:" announced NCCL's last WARN text on the next line.
  bool expect_last_error = false;
  // Resolves what needs the whole log: traces that go with a failure become findings.
  void finish();

 private:
  std::map<std::pair<std::string, std::string>, size_t> finding_index_;
  std::map<std::string, ProcessState> procs_;
};

// The line tables: each returns after handling the message it is given.
void handleInfo(ParseState& st, std::string_view msg);
void handleWarn(ParseState& st, std::string_view msg);
void handleOtherLine(ParseState& st, std::string_view line);
// NCCL's error trace "transport/net.cc:1298 -> 6 [Progress Thread]": true when msg is one.
bool isTrace(std::string_view msg);

}  // namespace fabricwatch::nccl
