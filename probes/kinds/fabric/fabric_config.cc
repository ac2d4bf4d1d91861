#include "probes/kinds/fabric/fabric_config.h"

#include <algorithm>

#include "core/utf8.h"
#include "probes/kinds/fabric/provider_names.h"
#include "probes/kinds/fabric/rails.h"

namespace fabricwatch::probes::fabric {
namespace {

// The table at its defaults, documented: what `fabricwatch config default` prints for it (a
// test checks it loads to the struct's defaults).
constexpr const char* kDefaults = R"toml([probes.fabric]
# Latency and bandwidth between peers through a libfabric provider (docs/peers.md, "The
# fabric probe"): one RDM endpoint each way, kept; endpoint names exchanged on the peer
# channel. Off: it needs the provider's device in the pod (EFA: a vpc.amazonaws.com/efa
# device; verbs: /dev/infiniband) or uses the tcp provider.
enabled = false
# A provider (efa, verbs;ofi_rxm, tcp, tcp;ofi_rxm, udp;ofi_rxd, shm ...) or "auto": the
# resource group's row below, else the best present (efa, verbs;ofi_rxm, tcp;ofi_rxm, tcp,
# udp;ofi_rxd, sockets). Flag --probe.fabric.provider.
provider = "auto"
# GLOB=PROVIDER: the provider of nodes whose resource group matches (first row wins), so that
# an EFA node whose EFA is missing reports it instead of falling back to TCP.
group_providers = ["efa*=efa", "ib-*=verbs;ofi_rxm", "infiniband=verbs;ofi_rxm",
                   "roce=verbs;ofi_rxm", "lingjun-*=verbs;ofi_rxm", "general-*=verbs;ofi_rxm",
                   "erdma=verbs;ofi_rxm"]
domain = ""            # libfabric domain (mlx5_0, rdmap16s27-rdm, lo); "": the provider's first
# Rails (docs/peers.md, "Rails"): NIC i of this node is probed against rail i's NIC on its
# peers. [] : every domain the provider lists (RDMA devices), in PCI order; the socket
# providers (tcp, udp) one rail, `domain` or the peer channel's interface. Else the domains (with
# tcp: interfaces) per rail, "NAME" or "NAME|NAME" (the first this node has), e.g.
# ["mlx5_0", "mlx5_1"] or ["eth1", "eth2|ens2"]; a node without any of a rail's names lacks it.
# A name "subnet:CIDR" is the NIC with an address in that network (RoCE: the RDMA device's
# netdev; tcp: the interface), e.g. ["subnet:10.1.0.0/24", "mlx5_1|subnet:10.1.1.0/24"].
rails = []
# Per resource group (exact names; the node's group when one is set: flag, env, configuration
# or label file), the rails list of its nodes instead of `rails`: GROUP = [entries],
# e.g. rails_by_group = { roce-a = ["subnet:10.1.0.0/24", "subnet:10.1.1.0/24"] }.
rails_by_group = {}
# Rails of each peer one round probes, rotating through the rest in the next rounds.
rails_per_round = 8
# Latency: warm-up, then ping-pongs of latency_size bytes; min, median and p99 of RTT/2.
latency_size = "64B"
warmup = 10
iterations = 200
# Bandwidth: windows of bandwidth_window messages of bandwidth_size bytes, bandwidth_bytes per
# peer (the first window warms up), at most bandwidth_round_bytes per round, every
# bandwidth_interval ("0s": never).
bandwidth_size = "1MiB"
bandwidth_window = 16
bandwidth_bytes = "32MiB"
bandwidth_round_bytes = "64MiB"
bandwidth_interval = "5m"
# Bandwidth yields to training: while a job holds this node's GPUs (a process other than
# fabricwatch and those in ignore_processes has /dev/nvidia<N> or /dev/nvidia-uvm open, under
# the host root's /proc: docs/peers.md, "What a probe costs a job"), this node's bandwidth
# sessions are skipped and those its peers ask for are declined, each counted in
# fabricwatch_probe_fabric_bandwidth_skipped_total. Latency pings go on (26,880 bytes per peer
# and rail a round). true: bandwidth runs next to jobs too.
bandwidth_when_gpus_held = false
# Processes (their /proc/PID/comm name) whose GPU handles are no job: monitoring.
ignore_processes = ["nvidia-persistenced", "nv-hostengine", "dcgm-exporter", "dcgmi", "nvidia-smi"]
# One peer's probe, and the peer's part of it, end within this (capped at probe.interval/2).
timeout = "2s"
# Sessions this node serves: the prober's first message must come within serve_setup_timeout,
# and a member (source address) whose session was never driven is declined for serve_backoff,
# so that no member holds the responder with sessions it never drives.
serve_setup_timeout = "1s"
serve_backoff = "30s"
# Register the probe's buffers with the provider even where it does not require it (efa and
# verbs do): exercises memory registration on tcp.
register_buffers = false
# Also measure from GPU memory (FI_HMEM) where the CUDA runtime finds a GPU and the provider
# supports it. Off: it creates a CUDA context in the daemon.
hmem = false
cudart_library = ""   # "": libcudart.so, .so.13, .so.12, .so.11.0
)toml";

constexpr size_t kMaxIgnoredProcesses = 64;

void validate(const FabricConfig& f, const config::Config&, const config::ReportProblem& report) {
  uint64_t window_bytes = f.bandwidth_size * static_cast<uint64_t>(f.bandwidth_window);
  if (f.bandwidth_bytes < 2 * window_bytes)
    report({"probes.fabric.bandwidth_bytes", "probes.fabric.bandwidth_size",
            "probes.fabric.bandwidth_window"},
           "probes.fabric.bandwidth_bytes (" + std::to_string(f.bandwidth_bytes) +
               ") must hold at least two windows of bandwidth_window x bandwidth_size (" +
               std::to_string(window_bytes) + " bytes each): one to warm up, one to time");
  if (f.bandwidth_round_bytes < f.bandwidth_bytes)
    report({"probes.fabric.bandwidth_round_bytes", "probes.fabric.bandwidth_bytes"},
           "probes.fabric.bandwidth_round_bytes must not be less than "
           "probes.fabric.bandwidth_bytes");
  // Each list on its own: a node uses one of them.
  auto checkList = [&](const std::string& key, const std::vector<std::string>& rails) {
    if (!rails.empty() && !f.domain.empty())
      report({key, "probes.fabric.domain"},
             key + " and probes.fabric.domain exclude each other: name the domain in rails");
    if (rails.size() > kMaxRails)
      return report({key}, key + " lists " + std::to_string(rails.size()) + " rails: at most " +
                               std::to_string(kMaxRails));
    for (const auto& p : railsListProblems(rails)) report({key}, key + " " + p);
  };
  checkList("probes.fabric.rails", f.rails);
  for (const auto& [group, rails] : f.rails_by_group)
    checkList("probes.fabric.rails_by_group." + group, rails);
  if (f.ignore_processes.size() > kMaxIgnoredProcesses)
    report({"probes.fabric.ignore_processes"},
           "probes.fabric.ignore_processes lists " + std::to_string(f.ignore_processes.size()) +
               " processes: at most " + std::to_string(kMaxIgnoredProcesses));
}

// A group name as a key of [probes.fabric.rails_by_group]: what a resource group may be
// (policy.resource_group: no spaces or quotes), kept to printable ASCII for the messages.
std::optional<std::string> checkGroupName(const std::string& g) {
  bool ok = !g.empty() && g.size() <= 128 && std::all_of(g.begin(), g.end(), [](char c) {
    return c > ' ' && c < 127 && c != '"' && c != '\'';
  });
  if (!ok)
    return "resource group " + core::quoteForDisplay(g, 64) +
           " in probes.fabric.rails_by_group must be 1-128 printable characters without "
           "spaces or quotes";
  return std::nullopt;
}

}  // namespace

config::TableDef fabricConfigTable() {
  using std::chrono::hours;
  using std::chrono::milliseconds;
  using C = FabricConfig;
  using config::KeyContext;
  using config::KeyOrigin;
  using config::KeyType;
  using config::KeyValue;
  return config::TableKeys<C>(kFabricTable)
      .custom("provider", KeyType::kString,
              [](C& f, const KeyValue& v, const KeyContext& ctx) -> std::optional<std::string> {
                if (auto err = checkProviderName(v.text)) return err;
                f.provider = v.text;
                // "auto" chooses nothing: whoever wrote it, the group table and the ranking do.
                if (v.text == "auto")
                  f.provider_origin = C::Origin::kDefault;
                else
                  f.provider_origin =
                      ctx.origin == KeyOrigin::kFlag ? C::Origin::kFlag : C::Origin::kConfig;
                return std::nullopt;
              })
      .flag(
          "The fabric probe's libfabric provider (efa, verbs;ofi_rxm, tcp, udp;ofi_rxd, shm "
          "...) or auto; also overrides the resource group's row.")
      .stringList("group_providers", &C::group_providers,
                  [](const std::string& v) -> std::optional<std::string> {
                    std::string why;
                    if (!parseGroupProvider(v, &why)) return why;
                    return std::nullopt;
                  })
      .string("domain", &C::domain)
      .stringList(
          "rails", &C::rails,
          [](const std::string& v) -> std::optional<std::string> { return checkRailEntry(v); })
      .custom("rails_by_group.*", KeyType::kStringList,
              [](C& f, const KeyValue& v, const KeyContext& ctx) -> std::optional<std::string> {
                if (auto err = checkGroupName(ctx.wild)) return err;
                for (const auto& item : v.list)
                  if (auto err = checkRailEntry(item)) return err;
                f.rails_by_group[ctx.wild] = v.list;
                return std::nullopt;
              })
      .integer("rails_per_round", 1, static_cast<int>(kMaxRails), &C::rails_per_round)
      .byteSize("latency_size", 16, uint64_t{64} << 20, &C::latency_size)
      .integer("warmup", 0, 10000, &C::warmup)
      .integer("iterations", 1, 90000, &C::iterations)
      .byteSize("bandwidth_size", 16, uint64_t{64} << 20, &C::bandwidth_size)
      .integer("bandwidth_window", 1, 256, &C::bandwidth_window)
      .byteSize("bandwidth_bytes", 16, uint64_t{4} << 30, &C::bandwidth_bytes)
      .byteSize("bandwidth_round_bytes", 16, uint64_t{64} << 30, &C::bandwidth_round_bytes)
      .duration("bandwidth_interval", milliseconds(0), hours(24 * 7), &C::bandwidth_interval)
      .boolean("bandwidth_when_gpus_held", &C::bandwidth_when_gpus_held)
      .stringList("ignore_processes", &C::ignore_processes, gpu::checkProcessName)
      .duration("timeout", milliseconds(10), milliseconds(60000), &C::timeout)
      .duration("serve_setup_timeout", milliseconds(10), milliseconds(60000),
                &C::serve_setup_timeout)
      .duration("serve_backoff", milliseconds(0), hours(1), &C::serve_backoff)
      .boolean("register_buffers", &C::register_buffers)
      .boolean("hmem", &C::hmem)
      .string("cudart_library", &C::cudart_library)
      .validate(validate)
      .defaults(kDefaults)
      .build();
}

const std::vector<std::string>& railsOfGroup(const FabricConfig& f, const std::string& group,
                                             bool* by_group) {
  auto it = group.empty() ? f.rails_by_group.end() : f.rails_by_group.find(group);
  if (by_group) *by_group = it != f.rails_by_group.end();
  return it != f.rails_by_group.end() ? it->second : f.rails;
}

}  // namespace fabricwatch::probes::fabric
