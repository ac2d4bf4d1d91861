#pragma once
// The serving side of an NCCL peer run: the handlers of the NCCL frame types (nccl_messages.h)
// on this node's channel. When a peer's daemon asks this node to join its run as rank 1 with
// its rank 0's unique id, the handler answers at once, on the channel's thread: it declines
// (NCCL peer runs are off here, a run is already being served, another NCCL run of this daemon
// holds the GPUs: the heavy gate) or accepts and starts a session on a thread of its own. The
// session checks that no other process holds a GPU (if one does, the session ends "declined"),
// then runs the probe child as rank 1, bounded by the prober's timeout and this node's own,
// and keeps its outcome, so that the prober's status requests learn it and this node's facts
// show what it served. One session at a time; a cancel from the prober (its own side failed)
// kills the child.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "probes/kinds/nccl/heavy_gate.h"
#include "probes/kinds/nccl/nccl_messages.h"
#include "probes/kinds/nccl/probe_run.h"
#include "probes/mesh/channel_server.h"
#include "probes/mesh/probe_kind.h"

namespace fabricwatch::probes::nccl {

struct NcclResponderOptions {
  nccl::RunSettings run;
  std::string rootfs = "/";  // host root, for the GPU-holder check
  std::string node_name;
  bool serve = true;  // probes.nccl.peers: false declines every request, saying so
  std::shared_ptr<nccl::HeavyGate> gate = nccl::HeavyGate::process();
  size_t history = 4;  // finished sessions kept for status requests and the facts
  // A member's runs are spaced at least this far apart (probes.nccl.serve_min_interval): a
  // request sooner after the same address's last accepted one is declined "busy". With the
  // bounds on what a run may ask (this node's own sizes, warmup and iterations, rank 1 of 2),
  // no member can keep this node's GPUs busy with runs back to back (issue 23, item 6).
  std::chrono::milliseconds serve_min_interval{60000};
  std::function<std::chrono::steady_clock::time_point()> now = [] {
    return std::chrono::steady_clock::now();
  };
};

// Why a peer's run request asks for more than this node would run itself, or nullopt: a size
// above this node's largest (probes.nccl.sizes), more sizes than it lists, more warm-up or
// timed iterations than it runs, or anything but rank 1 of 2.
std::optional<std::string> exceedsLocalBounds(const NcclRunRequest& r, const nccl::RunSettings& s);

// One session this node served (or is serving).
struct NcclServed {
  uint64_t session = 0;
  std::string prober;   // its node name, as it said
  std::string address;  // where the request came from
  std::chrono::system_clock::time_point started;
  bool done = false;
  NcclSide side;  // state "running" until done
};

// What the responder did for other nodes: the running session and the last finished ones
// (newest first), and counts by result (the handler's declines included).
struct NcclServedState : ProbeTotals {
  std::vector<NcclServed> recent;
  std::map<std::string, uint64_t> results;
};

// This side of a run, as a status reply carries it.
NcclSide sideOfRun(const nccl::RunOutcome& o);

class NcclResponder {
 public:
  explicit NcclResponder(NcclResponderOptions opts);
  ~NcclResponder();
  NcclResponder(const NcclResponder&) = delete;
  NcclResponder& operator=(const NcclResponder&) = delete;

  std::vector<RequestHandler> handlers();
  // Who the mesh knows at a source IP (ProbeKind::setMemberNames): a run request whose
  // `prober` is not among the names answered at its sender's address is declined. Set before
  // the channel starts.
  void setMemberNames(ProbeKind::MemberNames names) { member_names_ = std::move(names); }
  // Cancels a running session and waits for its child to be reaped.
  void stop();
  std::shared_ptr<const NcclServedState> state() const;

 private:
  struct Session;
  Answer onRun(std::string_view payload, const Sender& from);
  Answer onStatus(std::string_view payload, const Sender& from);
  Answer onCancel(std::string_view payload, const Sender& from);
  void serve(const std::shared_ptr<Session>& s);
  std::shared_ptr<Session> findLocked(uint64_t session, const std::string& address) const;
  void publishLocked();
  Answer declineLocked(const std::string& reason);

  NcclResponderOptions opts_;
  mutable std::mutex mu_;
  bool stopping_ = false;
  std::shared_ptr<Session> current_;           // running or last started
  std::deque<std::shared_ptr<Session>> done_;  // finished, newest first
  std::map<std::string, uint64_t> results_;
  // When each member (source address) last had a run accepted; entries older than
  // serve_min_interval are dropped as new ones come.
  std::map<std::string, std::chrono::steady_clock::time_point> last_accepted_;
  std::thread worker_;
  std::shared_ptr<const NcclServedState> published_;
  ProbeKind::MemberNames member_names_;
};

}  // namespace fabricwatch::probes::nccl
