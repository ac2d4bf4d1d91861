// The fabric kind's registration: its configuration table, frames and docs, and how its
// settings become the options of one FabricKind (the provider chosen for the resource group, the
// source address from the peer listener, bandwidth rounds from the probe interval).
#include <algorithm>

#include "probes/kinds/fabric/fabric_config.h"
#include "probes/kinds/fabric/fabric_kind.h"
#include "probes/kinds/fabric/fabric_wire.h"
#include "probes/kinds/fabric/hmem.h"
#include "probes/kinds/fabric/providers.h"
#include "probes/kinds/fabric/queue_sizes.h"
#include "probes/mesh/net_util.h"

namespace fabricwatch::probes::fabric {
namespace {

// "127.0.0.1:19737" -> "127.0.0.1"; "" for a wildcard (":19737", "0.0.0.0:..", "[::]:..").
std::string sourceAddress(const std::string& listen) {
  auto hp = splitHostPort(listen);
  if (!hp || hp->host.empty() || hp->host == "0.0.0.0" || hp->host == "::") return "";
  return hp->host;
}

}  // namespace

KindRegistration fabricKindRegistration() {
  KindRegistration r;
  r.name = "fabric";
  r.enabled_by_default = false;
  r.make = [](const KindSetup& s) -> core::Result<std::shared_ptr<ProbeKind>> {
    const auto& f = fabricConfig(s.config);
    std::vector<GroupProvider> table;
    for (const auto& row : f.group_providers) {
      std::string why;
      if (auto g = parseGroupProvider(row, &why)) table.push_back(*g);
    }
    auto choice = fabric::chooseProvider(
        f.provider, f.provider_origin == FabricConfig::Origin::kFlag, table, s.resource_group);
    FabricKindOptions o;
    o.secret = s.secret;
    o.node_name = s.node_name;
    o.endpoint.provider = choice.provider;
    o.endpoint.domain = f.domain;
    // The group's rails list where rails_by_group has one, else probes.fabric.rails.
    bool by_group = false;
    o.rails = railsOfGroup(f, s.resource_group, &by_group);
    if (by_group) o.rails_group = s.resource_group;
    o.rails_per_round = static_cast<uint32_t>(f.rails_per_round);
    o.rail_peers = static_cast<uint32_t>(std::max(1, s.config.probe.peers_per_round));
    o.endpoint.source_address = sourceAddress(s.config.peer.listen_address);
    o.endpoint.register_buffers = f.register_buffers;
    o.provider_origin = choice.origin;
    if (choice.origin == "group") o.resource_group = s.resource_group;
    o.latency_size = static_cast<uint32_t>(f.latency_size);
    o.warmup = static_cast<uint32_t>(f.warmup);
    o.iterations = static_cast<uint32_t>(f.iterations);
    o.bandwidth_size = static_cast<uint32_t>(f.bandwidth_size);
    o.bandwidth_window = static_cast<uint32_t>(f.bandwidth_window);
    o.bandwidth_bytes = f.bandwidth_bytes;
    o.bandwidth_round_bytes = f.bandwidth_round_bytes;
    auto interval = std::max<int64_t>(s.interval.count(), 1);
    o.bandwidth_every_rounds =
        f.bandwidth_interval.count() == 0
            ? 0
            : static_cast<uint64_t>(std::max<int64_t>(1, f.bandwidth_interval.count() / interval));
    o.endpoint.max_message =
        o.bandwidth_every_rounds ? std::max(o.latency_size, o.bandwidth_size) : o.latency_size;
    o.endpoint.queue_depth = fabric::probeQueueDepth(o.bandwidth_window);
    o.timeout = std::min(f.timeout, std::max(s.interval / 2, config::Duration(10)));
    o.serve_setup_timeout = f.serve_setup_timeout;
    o.serve_backoff = f.serve_backoff;
    o.hmem = f.hmem;
    o.cudart = fabric::cudartNames(f.cudart_library);
    o.bandwidth_when_gpus_held = f.bandwidth_when_gpus_held;
    o.rootfs = s.config.host.rootfs;
    // A domain's PCI address (its rail's order) from the host's sysfs, as every fact is read.
    o.sysfs_root = s.config.host.rootfs;
    o.ignore_processes = f.ignore_processes;
    return makeFabricKind(std::move(o));
  };
  r.config = fabricConfigTable();
  r.frames = kFabricFrames;
  r.docs = "docs/configuration.md";
  return r;
}

}  // namespace fabricwatch::probes::fabric
