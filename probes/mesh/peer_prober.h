#pragma once
// The probe round loop, on its own thread. Each round (every `interval`, at the same moment
// on all nodes give or take clock skew, plus a random start offset so a fleet does not probe in
// lock-step):
//   1. refresh the membership (static list, DNS name, peers file);
//   2. select this round's peers over all listed members (selection.h), plus peers that a
//      kind found silent last time (so recovery is seen at once);
//   3. knock once on the selected peers still pending (and a few other pending ones): those
//      that answer become active (or are recognised as this node itself by the name in their
//      reply) and are probed; the others are skipped without a failure, so nodes still
//      starting raise no alarms;
//   4. run the probe kinds due this round (probe_kind.h): the concurrent ones peer by peer, in
//      random peer order on a few workers, then the exclusive ones one peer at a time;
//   5. keep each kind's results of its last two runs only, so per-peer series expire.
// It also owns the peer channel listener, which answers other nodes' echoes and serves the
// kinds' requests. Facts, metrics and the /api/v1/peers document render a MeshView, a copy of
// the latest results: reading them never probes.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/metrics.h"
#include "core/result.h"
#include "core/value.h"
#include "probes/mesh/channel_server.h"
#include "probes/mesh/membership.h"
#include "probes/mesh/probe_kind.h"

namespace fabricwatch::probes {

struct ProberOptions {
  std::string node_name;
  std::string group;        // this node's topology group ("" = no groups)
  std::string group_label;  // what a group is ("rack", "rail"), for facts and the API
  std::string secret;
  ChannelServerOptions channel;  // listen address and limits (secret, name, group filled in)
  std::chrono::milliseconds interval{10000};
  int peers_per_round = 8;
  // Knocks (one echo) and resolving listed host names.
  std::chrono::milliseconds connect_timeout{1000};
  std::chrono::milliseconds echo_timeout{1000};
  std::chrono::milliseconds dns_timeout{2000};
  int workers = 8;
  int max_knocks_per_round = 32;  // knocks on pending members beyond the selected ones
  double start_jitter = 0.2;      // fraction of the interval
};

// A peer probed in the latest two rounds: who it is and whether a kind reached it.
struct PeerRecord {
  PeerInfo peer;
  std::optional<bool> answered;  // some kind reached it; false: kinds found it silent
};

// What the mesh's facts, metrics and /api/v1/peers render: one immutable value taken at one
// moment (the latest round's results and totals, the membership, the channel's counters).
struct MeshView {
  std::string node_name, group, group_label, listen_address;
  int port = 0;
  int peers_per_round = 0;
  std::chrono::milliseconds interval{0};
  std::vector<Member> members;
  ChannelStats channel;
  uint64_t round = 0, rounds_total = 0;
  double last_round_seconds = 0;
  std::vector<std::string> round_peers;  // sorted
  std::vector<std::string> discovery_errors;
  uint64_t discovery_errors_total = 0, knocks_total = 0, knock_failures_total = 0;
  std::vector<PeerRecord> peers;  // by address
  std::vector<KindView> kinds;    // the enabled kinds, in the order they run
};

class PeerProber {
 public:
  // `kinds`: the enabled probe kinds, in the order a round runs them.
  PeerProber(ProberOptions opts, std::unique_ptr<Membership> membership,
             std::vector<std::shared_ptr<ProbeKind>> kinds);
  ~PeerProber();
  PeerProber(const PeerProber&) = delete;
  PeerProber& operator=(const PeerProber&) = delete;

  // Starts the listener and the round thread (without it, only runRound() probes: tests); an
  // error means nothing runs.
  core::Status start(bool rounds = true);
  // Stops the round thread (waiting for at most the probes in flight), the listener and the
  // kinds' server-side work.
  void stop();
  // Shutdown path: asks the round thread to finish and returns at once (the process exits).
  void requestStop();
  // Runs one round now, synchronously (tests; the thread calls it too).
  void runRound(uint64_t round);

  int port() const { return server_.port(); }
  const ProberOptions& options() const { return opts_; }

  std::shared_ptr<const MeshView> view() const;
  // Renderings of view() (peer_report.cc): node.name and probes.{mesh,<kind>...}; the
  // /api/v1/peers document; the mesh's and every kind's metrics.
  core::Value facts() const;
  core::Value status() const;
  void renderMetrics(core::MetricFamilies& out) const;

 private:
  struct KindState {
    std::shared_ptr<ProbeKind> kind;
    ProbeSchedule schedule;
    uint64_t phase = 0;
    uint64_t last_run = 0, previous_run = 0;  // rounds of its last two runs
    std::map<std::string, PeerProbe> latest;  // by address
    std::shared_ptr<const ProbeTotals> totals;
  };
  // One round's probes: per kind, per peer (null: not probed).
  using RoundResults = std::vector<std::vector<std::shared_ptr<const ProbeResult>>>;

  void loop();
  // One echo to each pending address; returns those that answered (self excluded).
  std::set<std::string> knock(const std::vector<std::string>& pending);
  // The channel address of a peer, and who it is as far as known before probing it.
  PeerContext context(const PeerInfo& peer);
  std::shared_ptr<const ProbeResult> probeOne(KindState& k, PeerContext& ctx);
  // Numeric IP:PORT for a listed endpoint (resolving a host name when needed).
  std::optional<std::string> numericAddress(const std::string& address, std::string* err);
  // Keeps the round's results (`due`: the kinds that ran) and publishes them.
  void record(uint64_t round, const std::vector<size_t>& due, const std::vector<PeerContext>& peers,
              const RoundResults& results, double seconds);
  void publish();
  template <typename Fn>
  void forEachParallel(const std::vector<std::string>& items, Fn fn);

  ProberOptions opts_;
  std::unique_ptr<Membership> membership_;
  std::vector<KindState> kinds_;  // before server_: its handlers call into the kinds
  ChannelServer server_;
  std::thread thread_;
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::atomic<bool> stop_requested_{false};  // checked between probes
  std::mt19937_64 rng_{std::random_device{}()};

  // The round's own state: one round at a time (round_mu_), nothing else reads it.
  std::mutex round_mu_;
  uint64_t round_ = 0, rounds_total_ = 0;
  double last_round_seconds_ = 0;
  std::vector<std::string> round_peers_;
  std::map<std::string, PeerRecord> records_;  // this and the previous round's peers
  std::map<std::string, uint64_t> instances_;  // last instance ID each peer answered with
  std::vector<std::string> discovery_errors_;
  uint64_t discovery_errors_total_ = 0;
  uint64_t knocks_total_ = 0, knock_failures_total_ = 0;

  mutable std::mutex mu_;  // guards published_
  std::shared_ptr<const MeshView> published_;
};

// The renderings, pure functions of a view (peer_report.cc).
core::Value meshFacts(const MeshView& v);
core::Value meshStatus(const MeshView& v);
// The /api/v1/peers document while the mesh is off: this node's name, no members.
core::Value disabledMeshStatus(const std::string& node_name);
void renderMeshMetrics(const MeshView& v, core::MetricFamilies& out);

}  // namespace fabricwatch::probes
