#pragma once
// The seam between the mesh and what it measures. A probe kind (tcp, dns, fabric, nccl) is one
// ProbeKind: the requests it serves on this node's channel, when it runs in a round, how it
// probes one peer, and how its results render as facts (probes.<kind>), metrics and its part of
// /api/v1/peers. The mesh (peer_prober.h) knows no kind by name: it selects peers, runs the
// kinds that are due, keeps their latest results and hands them back for rendering. A kind
// comes with everything else through its KindRegistration: its configuration table, flags,
// frame types, optional series, fact sources and docs. Adding a kind is its folder
// (probes/kinds/<kind>/), its line in probes/registry.cc and its docs page (docs/peers.md,
// "How to add a probe kind").

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "config/schema.h"
#include "core/metric_selection.h"
#include "core/metrics.h"
#include "core/result.h"
#include "core/value.h"
#include "probes/mesh/channel_server.h"
#include "probes/mesh/source_registration.h"

namespace fabricwatch::probes {

// When a kind runs, and how long one peer may take.
struct ProbeSchedule {
  // Runs in the rounds where round % every_rounds == phase. The phase is 0, or with `jitter`
  // drawn per node at start, so that a heavy kind does not run on the whole fleet at once.
  uint64_t every_rounds = 1;
  bool jitter = false;
  // Concurrent kinds probe a peer one after the other, in registration order, with several
  // peers at once on the round's workers. An exclusive kind runs after them, alone and one
  // peer at a time (bandwidth, NCCL), and only while the round's interval has room for its
  // timeout; the peers it had no time for wait for its next run.
  bool exclusive = false;
  std::chrono::milliseconds timeout{1000};  // per peer: PeerContext::deadline
  // At most this many peers per run (0: every selected peer the round has room for).
  size_t max_peers = 0;
  // Exclusive kinds whose timeout is longer than the round interval (an NCCL run: minutes, in
  // 10-second rounds) would never find room: with `overrun` the first peer of a run starts
  // anyway. That round then ends late, and the rounds it covered are skipped (tcp and dns keep
  // their last results meanwhile).
  bool overrun = false;
};

// Who a peer is, as the mesh knows it when (and after) a kind probes it.
struct PeerInfo {
  std::string address;    // as listed: HOST:PORT of its channel
  std::string node;       // its node name ("" until it answered)
  std::string group;      // its topology group
  uint64_t instance = 0;  // its daemon's instance ID, new at each restart (0: unknown)
  uint64_t round = 0;
  std::chrono::system_clock::time_point at{};  // when the round probed it
};

struct PeerContext {
  PeerInfo peer;
  std::string channel_address;  // numeric IP:PORT of its channel; "" if it did not resolve
  std::string resolve_error;    // why not
  std::chrono::steady_clock::time_point deadline;  // probe() returns by then
  const std::atomic<bool>* stopping = nullptr;     // set at shutdown: give up early
};

struct PeerIdentity {
  std::string node;
  std::string group;
  uint64_t instance = 0;
};

// One kind's result for one peer: immutable once probe() returns it. A kind derives its own
// result type and fills in the two fields the mesh reads.
struct ProbeResult {
  virtual ~ProbeResult() = default;
  // Kinds that talk to the peer's daemon say whether it answered. A peer is reachable when a
  // kind reached it; one that some kind found silent (and none reached) is probed again in
  // the next round, so its recovery is seen at once.
  std::optional<bool> answered;
  // Who answered, when the kind learns it (the echo does): the peer's node, group and
  // instance for the kinds after it in this round, and for later rounds.
  std::optional<PeerIdentity> identity;
};

// A kind's running totals (counters, histograms) as an immutable value, for its metrics.
struct ProbeTotals {
  virtual ~ProbeTotals() = default;
};

struct PeerProbe {
  PeerInfo peer;
  std::shared_ptr<const ProbeResult> result;
};

class ProbeKind;

// What a kind renders: its latest result per peer (from its last two runs, members still
// listed, sorted by address) and its totals. Immutable; shared by every renderer of a view.
struct KindView {
  std::shared_ptr<const ProbeKind> kind;
  std::vector<PeerProbe> results;
  std::shared_ptr<const ProbeTotals> totals;  // null when the kind keeps none
  // What the kind served other nodes (ProbeKind::serverState), taken with the view.
  std::shared_ptr<const ProbeTotals> server;
};

class ProbeKind {
 public:
  virtual ~ProbeKind() = default;

  // The kind's name: probes.<name> in the facts and in the configuration ([probes.<name>],
  // flag --probe.<name>.enabled). Lower case, [a-z0-9_].
  virtual std::string_view name() const = 0;
  virtual ProbeSchedule schedule() const = 0;

  // Server side: the request types it answers on this node's channel, inside the frame range
  // its registration declares.
  virtual std::vector<RequestHandler> handlers() { return {}; }
  // The node names the mesh's members at a source IP answered with (their echo replies to this
  // node); empty when no member listed there has answered. The channel authenticates frames,
  // not names: every member holds the secret, so a name a request claims is checked against
  // this. Given once by the prober, before its channel starts.
  using MemberNames = std::function<std::vector<std::string>(const std::string& ip)>;
  virtual void setMemberNames(MemberNames) {}
  // Ends server-side work (sessions, children) at shutdown; the channel has stopped already.
  virtual void stop() {}

  // Client side: probes one peer and returns by ctx.deadline; null when there is nothing to
  // probe on it (no result, no series). Runs on the round's workers: a concurrent kind for
  // several peers at once. Per-peer state a kind caches (a peer's endpoint name) is valid while
  // ctx.peer.instance stays the same.
  virtual std::shared_ptr<const ProbeResult> probe(const PeerContext& ctx) = 0;
  // Folds one run's results into the kind's totals and returns them. Called on the round's
  // thread after each run, and once before the first with no results.
  virtual std::shared_ptr<const ProbeTotals> account(const std::vector<PeerProbe>& run) {
    return nullptr;
  }

  // What the kind's handlers did for other nodes (sessions served, by result), as an immutable
  // value: read whenever a view is taken, like the channel's counters, so that the side a node
  // serves shows within a scrape and not only after its own next run. Never blocks.
  virtual std::shared_ptr<const ProbeTotals> serverState() const { return nullptr; }

  // Rendering, from the view alone (called on scrapes: never probe, never block).
  virtual core::Value facts(const KindView& view) const = 0;  // probes.<name>
  virtual void metrics(const KindView& view, core::MetricFamilies& out) const = 0;
  // The kind's part of a peer's entry in /api/v1/peers `results`.
  virtual void peerStatus(const PeerProbe& probe, core::Value& entry) const = 0;
};

// The kind's own result and totals types behind the erased pointers (a kind only ever sees
// the results it produced).
template <typename T>
const T& resultAs(const PeerProbe& p) {
  return static_cast<const T&>(*p.result);
}
template <typename T>
const T& totalsAs(const KindView& v) {
  static const T kNone{};
  return v.totals ? static_cast<const T&>(*v.totals) : kNone;
}

// What a kind's factory gets: the configuration (its own keys) and this node's identity.
struct KindSetup {
  const config::Config& config;
  std::string node_name;
  std::string secret;
  std::chrono::milliseconds interval{10000};  // the round interval: keep timeouts under half
  // The node's resource group when one is set (flag, FABRICWATCH_RESOURCE_GROUP, configuration,
  // label file); "" when the policy stage will derive it from the facts, which the mesh starts
  // before. A kind may choose by it (the fabric kind's provider).
  std::string resource_group;
  // The optional series the configuration turns on (null: none): a kind renders a family its
  // registration declares optional only when wants() says so.
  std::shared_ptr<const core::MetricSelection> metrics;
  bool wants(std::string_view family) const { return metrics && metrics->family(family); }
};

// The frame types a kind's requests and replies use on the peer channel: [first, first + count).
// Declared by the kind (they are its wire protocol, stable across versions); the registry
// checks that no two kinds, and neither the channel's own types (1-15) nor the private range
// (240-255), overlap (probes/registry.h, checkFrameRanges).
struct FrameRange {
  uint8_t first = 0;
  uint8_t count = 0;
  bool contains(FrameType t) const {
    auto v = static_cast<unsigned>(t);
    return v >= first && v < unsigned{first} + count;
  }
};

struct KindRegistration {
  std::string name;
  bool enabled_by_default = true;  // else [probes.<name>] enabled = true, --probe.<name>.enabled
  std::function<core::Result<std::shared_ptr<ProbeKind>>(const KindSetup&)> make;
  // Its table [probes.<name>] (config::TableKeys over a struct of its own, kept in
  // Config::tables); its keys' flags come from there. Empty name: the kind has no keys.
  config::TableDef config;
  FrameRange frames;  // empty: it serves no request of its own
  // Series it renders only when [probes.<name>] extra_metrics asks (docs/metrics.md).
  std::vector<core::OptionalMetric> optional_metrics;
  // Fact sources that come with it (the nccl kind's local run), run by the scheduler.
  std::vector<SourceRegistration> sources;
  // The page that documents its keys (a table row each: a test checks); the built-in kinds
  // share docs/configuration.md, a new kind may bring a page of its own.
  std::string docs;
};

}  // namespace fabricwatch::probes
