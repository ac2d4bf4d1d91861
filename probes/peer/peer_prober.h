#pragma once
// The probe round loop, on its own thread. Each round (every `interval`, at the same moment
// on all nodes give or take clock skew, plus a random start offset so a fleet does not probe in
// lock-step):
//   1. refresh the membership (static list, DNS name, peers file);
//   2. select this round's peers over all listed members (selection.h), plus peers that failed
//      last time (so recovery is seen at once);
//   3. knock once on the selected peers still pending (and a few other pending ones): those
//      that answer become active (or are recognised as this node itself by the name in their
//      reply) and are probed; the others are skipped without a failure, so nodes still
//      starting raise no alarms;
//   4. probe in random order on a few workers: TCP connect + echo samples, and resolution of
//      each peer's host name (its node name, an instance ID);
//   5. keep the results of this and the previous round only, so per-peer series expire.
// It also owns the peer channel listener that answers other nodes' probes. Facts, metrics and
// the /api/v1/peers document are copies of the latest results: reading them never probes.

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
#include "probes/peer/channel_server.h"
#include "probes/peer/dns_probe.h"
#include "probes/peer/echo_client.h"
#include "probes/peer/histogram.h"
#include "probes/peer/membership.h"

namespace fabricwatch::probes::peer {

struct ProberOptions {
  std::string node_name;
  std::string group;        // this node's topology group ("" = no groups)
  std::string group_label;  // what a group is ("rack", "rail"), for facts and the API
  std::string secret;
  ChannelServerOptions channel;  // listen address and limits (secret, name, group filled in)
  std::chrono::milliseconds interval{10000};
  int peers_per_round = 8;
  int samples = 5;
  std::chrono::milliseconds connect_timeout{1000};
  std::chrono::milliseconds echo_timeout{1000};
  std::chrono::milliseconds dns_timeout{2000};
  bool dns_probe = true;
  int workers = 8;
  int max_knocks_per_round = 32;  // knocks on pending members beyond the selected ones
  double start_jitter = 0.2;      // fraction of the interval
};

struct PeerResult {
  std::string address;
  std::string node;
  std::string group;
  uint64_t round = 0;
  std::chrono::system_clock::time_point at{};
  EchoResult echo;
  bool reachable = false;
  std::string dns_name;  // empty when there was nothing to resolve
  std::optional<DnsResult> dns;
};

class PeerProber {
 public:
  PeerProber(ProberOptions opts, std::unique_ptr<Membership> membership);
  ~PeerProber();
  PeerProber(const PeerProber&) = delete;
  PeerProber& operator=(const PeerProber&) = delete;

  // Starts the listener and the round thread; an error means nothing runs.
  core::Status start();
  // Stops the round thread (waiting for at most the probes in flight) and the listener.
  void stop();
  // Shutdown path: asks the round thread to finish and returns at once (the process exits).
  void requestStop();
  // Runs one round now, synchronously (tests; the thread calls it too).
  void runRound(uint64_t round);

  int port() const { return server_.port(); }
  const ProberOptions& options() const { return opts_; }

  // node.name and probes.{mesh,tcp,dns} from the latest results.
  core::Value facts() const;
  // The /api/v1/peers document: membership, the current round's peers and their results.
  core::Value status() const;
  void renderMetrics(core::MetricFamilies& out) const;

 private:
  void loop();
  // One echo to each pending address; returns those that answered (self excluded).
  std::set<std::string> knock(const std::vector<std::string>& pending);
  PeerResult probe(const std::string& address, const std::string& node, const std::string& group,
                   uint64_t round);
  // Numeric IP:PORT for a listed endpoint (resolving a host name when needed).
  std::optional<std::string> numericAddress(const std::string& address, std::string* err);
  void record(std::vector<PeerResult> results, uint64_t round, double seconds);
  template <typename Fn>
  void forEachParallel(const std::vector<std::string>& items, Fn fn);

  ProberOptions opts_;
  std::unique_ptr<Membership> membership_;
  ChannelServer server_;
  std::thread thread_;
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::atomic<bool> stop_requested_{false};  // checked between probes
  std::mt19937_64 rng_{std::random_device{}()};

  mutable std::mutex mu_;  // guards everything below
  uint64_t round_ = 0;
  uint64_t rounds_total_ = 0;
  double last_round_seconds_ = 0;
  std::vector<std::string> round_peers_;
  std::map<std::string, PeerResult> results_;  // this and the previous round
  std::vector<std::string> discovery_errors_;
  uint64_t discovery_errors_total_ = 0;
  uint64_t knocks_total_ = 0, knock_failures_total_ = 0;
  uint64_t tcp_probes_total_ = 0, tcp_samples_total_ = 0, tcp_samples_lost_total_ = 0;
  std::map<std::string, uint64_t> tcp_failures_total_;  // by EchoFailure name
  uint64_t dns_lookups_total_ = 0, dns_failures_total_ = 0, dns_timeouts_total_ = 0;
  Histogram connect_hist_, rtt_hist_, dns_hist_;
};

// Percentile (0..100) of an unsorted sample set by nearest rank; 0 for an empty set.
double percentile(std::vector<double> v, double p);

}  // namespace fabricwatch::probes::peer
