#pragma once
// Topology facts (topology.*): where the node and each of its NICs sit. The operator's labels
// (rack, pod, leaf, the cloud's network layers: [topology.labels] and FABRICWATCH_TOPOLOGY_<NAME>
// variables), the switch and switch port at the other end of each Ethernet or RoCE NIC as the
// host's lldpd heard them (lldp_client.h; no lldpd: no neighbours, not an error), and each
// InfiniBand port's subnet prefix (GID 0's upper 64 bits), LID and SM LID from sysfs. Rendered as
// info series that PromQL joins on: fabricwatch_topology_info for the node, and
// fabricwatch_topology_nic_info for each NIC where something is known (never for a NIC
// with nothing to say, such as an EFA device: docs/metrics.md, "Series budget").

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/source.h"

namespace fabricwatch::facts {

struct TopologyOptions {
  std::map<std::string, std::string, std::less<>> labels;  // [topology.labels]
  std::vector<std::string> environment;                    // "NAME=value", as environ holds
  std::string labels_file;  // on this machine (a downwardAPI volume), not in the host root
  std::vector<std::string> file_label_prefixes = config::Config::Topology{}.file_label_prefixes;
  std::string lldpd_socket = "/run/lldpd.socket";  // in the host root; "" = never ask
  std::chrono::milliseconds lldp_timeout{2000};

  // The configuration's [topology], with this process's environment.
  static TopologyOptions from(const config::Config::Topology& t);
};

// Whether the source could find anything on the host at `rootfs`: a label is set, lldpd's
// socket exists, or an RDMA port is InfiniBand or Ethernet (what LLDP and the subnet manager
// describe). An EFA-only node without labels or lldpd has nothing to report, and serve leaves
// the source out there rather than pay four health series per node for it (docs/topology.md).
bool topologyCanFindAnything(const TopologyOptions& options, const std::string& rootfs);

class TopologySource : public core::Source {
 public:
  TopologySource() : TopologySource(TopologyOptions::from({})) {}
  explicit TopologySource(TopologyOptions options) : options_(std::move(options)) {}
  std::string_view name() const override { return "topology"; }
  core::Collection collect(const core::CollectContext& ctx) override;
  void renderMetrics(const core::Snapshot& snapshot, core::MetricFamilies& out) const override;

 private:
  TopologyOptions options_;
};

}  // namespace fabricwatch::facts
