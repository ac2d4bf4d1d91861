#pragma once
// What each thing an NCCL log can show means and what to do about it (internal to nccl/):
// log_verdict.cc decides which apply to a log, these functions word them.

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "nccl/log_parse.h"
#include "nccl/log_verdict.h"

namespace fabricwatch::nccl {

// Facts about the whole log that the advice depends on.
struct AdviceContext {
  const LogSummary& s;
  bool single_node = false;  // nothing in the log crosses a network
  std::string transport;     // the verdict's inter_node_transport
  // The NCCL release, from its version line or, without one, the era its wording shows.
  std::optional<std::pair<int, int>> era;
  bool eraBefore(int major, int minor) const {
    return era && (era->first < major || (era->first == major && era->second < minor));
  }
};

// The network most processes chose ("Using network X"); empty when none said.
std::string mainNetwork(const LogSummary& s);

// "line 7: text", "line 7 (3 lines): text".
std::string evidenceAt(uint64_t line, uint64_t count, std::string_view text);

// ibv_wc_status names (IBV_WC_RETRY_EXC_ERR for 12).
std::string ibStatusName(int status);

Problem completionProblem(const Completion& c, const AdviceContext& ctx, bool others);
Problem findingProblem(const Finding& f, const AdviceContext& ctx);
Problem watchdogProblem(const Watchdog& w);
Problem frameworkProblem(const FrameworkError& e);
Problem gdrProblem(const AdviceContext& ctx, const std::string& gdr);

// How a problem ranks for the verdict: a consequence is reported as info when a cause is there.
enum class Tier { kCause, kPeerCause, kConsequence };
Tier tierOf(const std::string& code);

}  // namespace fabricwatch::nccl
