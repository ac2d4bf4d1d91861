#pragma once
// The fabric probe kind: latency and bandwidth to each probed peer through a libfabric
// provider (efa, verbs;ofi_rxm, tcp, udp;ofi_rxd, shm ...), as fi_pingpong and fabtests
// measure them once by hand (docs/peers.md, "The fabric probe").
//
// Each node keeps two RDM endpoints per rail (rails.h: one per NIC), opened once: a responder
// (probes/kinds/fabric/responder.h) that serves one session at a time for the peers probing it,
// and a prober (initiator.h) for its own probes. NIC i is probed against rail i's NIC on each
// peer, rails_per_round rails of a peer per round (rotating), one after the other within the
// peer's timeout; a peer without the rail says so (rail_missing: not a failure). A prober learns a
// peer's endpoint name over the authenticated peer channel (hello, kFabricHello*) and caches it
// while the peer's instance and endpoint epoch stay the same; each measurement is a session the
// peer accepts over the channel first (or declines, busy with another) and that both sides end by
// their deadlines. The kind runs exclusively (alone, one peer at a time) every round for latency;
// bandwidth runs every bandwidth_interval, at a phase drawn per node, within a byte budget per
// round, and yields to training: while a job holds the node's GPUs (gpu::JobWatch) this node
// skips its bandwidth sessions and declines its peers' (kGpusHeld), unless
// bandwidth_when_gpus_held; latency goes on.
//
// Facts probes.fabric, metrics fabricwatch_probe_fabric_*, `fabric` in /api/v1/peers results.

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpu/gpu_holders.h"
#include "probes/kinds/fabric/endpoint.h"
#include "probes/kinds/fabric/fabric_config.h"
#include "probes/kinds/fabric/hmem.h"
#include "probes/kinds/fabric/rails.h"
#include "probes/kinds/fabric/responder.h"
#include "probes/mesh/histogram.h"
#include "probes/mesh/probe_kind.h"

namespace fabricwatch::probes::fabric {

struct FabricKindOptions {
  std::string secret;
  std::string node_name;
  fabric::EndpointOptions endpoint;  // provider ("auto" or a name), domain, source address
  std::vector<std::string> rails;    // probes.fabric.rails (empty: the default, rails.h)
  std::string rails_group;           // the resource group whose rails_by_group list `rails` is
  uint32_t rails_per_round = 8;
  uint32_t rail_peers = 8;       // peers with per-(peer, rail) series: probe.peers_per_round
  std::string sysfs_root = "/";  // where PCI addresses of domains are looked up
  std::string provider_origin = "auto";  // flag | config | group | auto
  std::string resource_group;            // the group that chose it (origin group)
  uint32_t latency_size = 64;
  uint32_t warmup = 10;
  uint32_t iterations = 200;
  uint32_t bandwidth_size = 1 << 20;
  uint32_t bandwidth_window = 16;
  uint64_t bandwidth_bytes = uint64_t{32} << 20;
  uint64_t bandwidth_round_bytes = uint64_t{64} << 20;
  uint64_t bandwidth_every_rounds = 30;  // 0: never
  std::chrono::milliseconds timeout{2000};
  // The responder: a session's first message within serve_setup_timeout, and a member whose
  // session was never driven declined for serve_backoff (fabric::ResponderLimits).
  std::chrono::milliseconds serve_setup_timeout{1000};
  std::chrono::milliseconds serve_backoff{30000};
  bool hmem = false;
  std::vector<std::string> cudart;  // libraries tried for the CUDA runtime
  // Bandwidth next to a job: the host root whose /proc the GPU-holder scan reads, and the
  // processes it ignores (probes.fabric.bandwidth_when_gpus_held, ignore_processes).
  bool bandwidth_when_gpus_held = false;
  std::string rootfs = "/";
  std::vector<std::string> ignore_processes = gpu::monitoringProcesses();
};

// One-way latency (RTT/2) of one peer's ping-pongs.
struct LatencyStats {
  size_t samples = 0;
  double min = 0, p50 = 0, p99 = 0, max = 0;
  double mean = 0;  // the timed loop's wall time / (2 x iterations): what fi_pingpong prints
};

// One measurement of a peer: of one rail, or of the peer over the rails its probe covered.
struct FabricMeasurement {
  bool fetched_name = false;  // asked the peer for its endpoint name (else cached)
  std::optional<LatencyStats> latency;
  std::vector<double> one_way;  // the samples (seconds), for the histogram
  std::optional<double> bandwidth_bytes_per_second;
  uint64_t bandwidth_bytes = 0;
  // Why the probe failed: timeout, provider, declined, busy, channel, mismatch ("": it did not).
  std::string failure;
  std::string phase;     // hello, latency or bandwidth: where it failed
  std::string error;     // fi_strerror's text, or the reason (bounded, sanitised)
  std::string detail;    // the provider's own words or the peer's reason (facts only)
  std::string error_op;  // the libfabric call that failed (provider failures)
  uint32_t busy_retries = 0;
  uint64_t wire_bytes = 0;  // payload bytes sent and received on the fabric
  // Why a bandwidth session due was not run: gpus_held (a job holds this node's GPUs),
  // peer_gpus_held (the peer declined: a job holds its GPUs); "": it was not skipped.
  std::string bandwidth_skipped;
};

struct RailResult : FabricMeasurement {
  uint32_t rail = 0;
  std::string domain;       // this node's
  std::string peer_domain;  // the peer's, from its hello
  bool missing = false;     // the peer has no such rail (not a failure)
};

// A peer's result: its rails one by one, and over them (latency: the worst rail's by median;
// bandwidth: the lowest; failure: the first rail's that failed, or the peer's own: channel).
struct FabricResult : ProbeResult, FabricMeasurement {
  std::string peer_provider;
  std::vector<RailResult> rails;
};

// One rail's endpoints.
struct RailState {
  uint32_t rail = 0;
  std::string domain;
  std::string pci;  // "" where sysfs has none
  bool available = false;
  std::string unavailable;
  uint64_t reopened = 0;
  fabric::ResponderStats responder;
  std::string address;  // the address a "subnet:" entry matched
};

// What the endpoints are, as the facts and the _info metric show them (the first rail's; the
// counters over every rail).
struct FabricState {
  bool available = false;
  std::string unavailable;         // why not (the last open's error)
  std::string unavailable_reason;  // bounded: "fi_getinfo: No data available"
  fabric::ProviderFacts facts;
  std::string origin, resource_group;
  std::string rails_group;  // the group whose rails_by_group list chose the rails
  fabric::HmemStatus hmem;
  uint64_t reopened = 0;  // the prober's endpoint, after failed sessions
  fabric::ResponderStats responder;
  std::vector<RailState> rails;
};

// Peers per rail of the latest bandwidth round with a per-(peer, rail) bandwidth series (the
// default byte budget's 2): the rest stay in the facts and /api/v1/peers.
inline constexpr uint32_t kBandwidthPairPeers = 2;

// A peer's bandwidth in the latest round that measured any (kept until the next such round:
// bandwidth runs every bandwidth_interval, and its byte budget bounds the peers of one round).
struct BandwidthSample {
  PeerInfo peer;
  uint32_t rail = 0;
  double bytes_per_second = 0;
  uint64_t bytes = 0;
};

// A rail's counters. Failures by class: timeout, provider, busy, other (declined, channel,
// mismatch); peers that lack the rail are not failures.
struct RailTotals {
  uint64_t latency_ok = 0, latency_failed = 0, bandwidth_ok = 0, bandwidth_failed = 0;
  uint64_t timeout = 0, provider = 0, busy = 0, other = 0;
  uint64_t missing = 0;
};

// The latest round's GPU-holder scan (the facts' gpu_scan), which that round's bandwidth and the
// responder's sessions yield to.
struct GpuScanState {
  uint64_t round = 0;
  std::shared_ptr<const gpu::GpuScan> scan;
};

struct FabricTotals : ProbeTotals {
  std::map<uint32_t, RailTotals> rails;
  // Bandwidth sessions (one peer, one rail) skipped, by reason (FabricMeasurement's).
  std::map<std::string, uint64_t> bandwidth_skipped;
  GpuScanState gpu_scan;
  uint32_t rail_peers = 8;  // the latest run's peers with per-(peer, rail) series
  FabricState state;
  std::vector<BandwidthSample> bandwidth;
  uint64_t bandwidth_round = 0;
  uint64_t latency_ok = 0, latency_failed = 0, bandwidth_ok = 0, bandwidth_failed = 0;
  uint64_t name_fetches = 0, busy_retries = 0, wire_bytes = 0;
  std::map<std::string, uint64_t> failures;                        // by reason
  std::map<std::pair<std::string, std::string>, uint64_t> errors;  // (op, fi_strerror text)
  Histogram latency{fabricLatencyBuckets()};

  static const std::vector<double>& fabricLatencyBuckets();
};

std::shared_ptr<ProbeKind> makeFabricKind(FabricKindOptions opts);
// From [probes.fabric] (and the flag); off by default.
KindRegistration fabricKindRegistration();

// The renderings (fabric_render.cc).
core::Value fabricFacts(const KindView& view);
void fabricMetrics(const KindView& view, core::MetricFamilies& out);
core::Value fabricPeerValue(const PeerProbe& p);

}  // namespace fabricwatch::probes::fabric
