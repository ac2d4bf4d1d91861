// The one list: the node's fact sources, the mesh's, and the probe kinds (each bringing its own
// sources, keys, frames and series). A new source or kind adds its line here.
#include "probes/registry.h"

#include <algorithm>
#include <mutex>
#include <set>

#include "facts/gpu_source.h"
#include "facts/kernel_source.h"
#include "facts/memory_source.h"
#include "facts/nccl_source.h"
#include "facts/net_source.h"
#include "facts/rdma_source.h"
#include "facts/software_source.h"
#include "facts/topology_source.h"
#include "facts/verbs_source.h"
#include "facts/workload_source.h"
#include "probes/kinds/dns/dns_kind.h"
#include "probes/kinds/fabric/fabric_kind.h"
#include "probes/kinds/nccl/nccl_kind.h"
#include "probes/kinds/tcp/tcp_kind.h"
#include "probes/mesh/peer_source.h"
#include "probes/peer_setup.h"

namespace fabricwatch::probes {
namespace {

// A node source: made fresh for every pipeline (and again for a run that is stuck), on the
// schedule of [collect.sources.<name>].
template <typename S>
SourceRegistration node(std::string name, std::vector<std::string> roots) {
  SourceRegistration r;
  r.name = std::move(name);
  r.fact_roots = std::move(roots);
  r.optional_metrics = S().optionalMetrics();
  r.make = [](const SourceSetup&) { return std::make_shared<S>(); };
  r.restartable = true;
  return r;
}

// The mesh's results in the facts: it only copies the prober's, so it runs as often as rounds
// do unless [collect.sources.peer] says otherwise.
SourceRegistration peerSource() {
  SourceRegistration r;
  r.name = "peer";
  r.fact_roots = {"node", "probes"};
  r.make = [](const SourceSetup& s) {
    return std::make_shared<PeerSource>(s.prober, resolveNodeName(s.config));
  };
  r.schedule = [](const config::Config& cfg) {
    core::Schedule sc{cfg.probe.interval, cfg.collect.timeout};
    if (auto it = cfg.collect.sources.find("peer"); it != cfg.collect.sources.end()) {
      if (it->second.interval.count()) sc.interval = it->second.interval;
      if (it->second.timeout.count()) sc.timeout = it->second.timeout;
    }
    sc.timeout = std::min(sc.timeout, sc.interval);
    return sc;
  };
  return r;
}

// Where the node sits: the operator's labels come with the configuration ([topology]). serve
// leaves it out on a node where it can find nothing (EFA only, no labels, no lldpd); a one-shot
// command always collects it.
SourceRegistration topologySource() {
  SourceRegistration r = node<facts::TopologySource>("topology", {"topology"});
  r.make = [](const SourceSetup& s) -> std::shared_ptr<core::Source> {
    auto options = facts::TopologyOptions::from(s.config.topology);
    if (s.daemon && !facts::topologyCanFindAnything(options, s.config.host.rootfs)) return nullptr;
    return std::make_shared<facts::TopologySource>(std::move(options));
  };
  return r;
}

std::vector<SourceRegistration> nodeAndMeshSources() {
  return {
      node<facts::KernelSource>("kernel", {"kernel"}),
      node<facts::RdmaSource>("rdma", {"rdma"}),
      node<facts::VerbsSource>("verbs", {"verbs"}),
      node<facts::NetSource>("net", {"net"}),
      node<facts::GpuSource>("gpu", {"gpu"}),
      node<facts::MemorySource>("memory", {"memory", "limits"}),
      node<facts::SoftwareSource>("software", {"software"}),
      node<facts::NcclSource>("nccl", {"nccl"}),
      node<facts::WorkloadSource>("workloads", {"workloads"}),
      topologySource(),
      peerSource(),
  };
}

struct Registry {
  std::mutex mu;
  std::vector<KindRegistration> kinds = {
      tcp::tcpKindRegistration(),
      dns::dnsKindRegistration(),
      fabric::fabricKindRegistration(),
      nccl::ncclKindRegistration(),
  };
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

void registerProbeKind(KindRegistration r) {
  auto& reg = registry();
  std::lock_guard lock(reg.mu);
  auto it = std::find_if(reg.kinds.begin(), reg.kinds.end(),
                         [&](const KindRegistration& k) { return k.name == r.name; });
  if (it != reg.kinds.end())
    *it = std::move(r);
  else
    reg.kinds.push_back(std::move(r));
}

std::vector<KindRegistration> probeKinds() {
  auto& reg = registry();
  std::lock_guard lock(reg.mu);
  return reg.kinds;
}

std::vector<std::string> probeKindNames() {
  std::vector<std::string> names;
  for (const auto& k : probeKinds()) names.push_back(k.name);
  return names;
}

std::vector<SourceRegistration> sources() {
  auto out = nodeAndMeshSources();
  for (const auto& k : probeKinds())
    for (const auto& s : k.sources) out.push_back(s);
  return out;
}

std::vector<std::string> sourceNames() {
  std::vector<std::string> names;
  for (const auto& s : sources()) names.push_back(s.name);
  return names;
}

std::vector<std::shared_ptr<core::Source>> makeNodeSources() {
  config::Config none;
  std::vector<std::shared_ptr<core::Source>> out;
  for (const auto& s : nodeAndMeshSources())
    if (s.restartable) out.push_back(s.make(SourceSetup{none, nullptr, false}));
  return out;
}

std::vector<std::string> factRoots() {
  std::vector<std::string> roots;
  for (const auto& s : sources())
    for (const auto& r : s.fact_roots)
      if (std::find(roots.begin(), roots.end(), r) == roots.end()) roots.push_back(r);
  return roots;
}

std::shared_ptr<const config::Schema> configSchema() {
  std::vector<config::TableDef> tables;
  for (const auto& k : probeKinds())
    if (!k.config.name.empty()) tables.push_back(k.config);
  return config::Schema::with(std::move(tables));
}

std::map<std::string, std::vector<core::OptionalMetric>, std::less<>> optionalMetricsByTable() {
  std::map<std::string, std::vector<core::OptionalMetric>, std::less<>> out;
  for (const auto& s : sources()) out["collect.sources." + s.name] = s.optional_metrics;
  for (const auto& k : probeKinds()) out["probes." + k.name] = k.optional_metrics;
  return out;
}

std::optional<std::string> checkFrameRanges(const std::vector<KindRegistration>& kinds) {
  // The channel's own types (echo, declined) and the range kept for tests and experiments.
  std::vector<std::pair<std::string, FrameRange>> taken = {{"the channel", {1, 15}},
                                                           {"the private range", {240, 16}}};
  for (const auto& k : kinds) {
    if (k.frames.count == 0) continue;
    unsigned end = unsigned{k.frames.first} + k.frames.count;
    if (end > 256) return "probe kind " + k.name + "'s frame range runs past type 255";
    for (const auto& [who, r] : taken) {
      unsigned r_end = unsigned{r.first} + r.count;
      if (k.frames.first < r_end && r.first < end)
        return "probe kind " + k.name + "'s frame types " + std::to_string(k.frames.first) + "-" +
               std::to_string(end - 1) + " overlap " + who + "'s (" + std::to_string(r.first) +
               "-" + std::to_string(r_end - 1) + ")";
    }
    taken.push_back({"probe kind " + k.name, k.frames});
  }
  return std::nullopt;
}

}  // namespace fabricwatch::probes
