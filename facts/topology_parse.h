#pragma once
// The topology source's pure parts: the operator's labels from the configuration and the
// environment, the subnet prefix in an InfiniBand GID, and the facts of one NIC.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/value.h"
#include "facts/lldp_client.h"

namespace fabricwatch::facts {

struct TopologyLabels {
  std::map<std::string, std::string, std::less<>> labels;
  std::vector<std::string> problems;  // variables refused, one message each
};

// `configured` ([topology.labels]) overridden by the variables of `environment` ("NAME=value"
// strings, as environ holds them) named FABRICWATCH_TOPOLOGY_<LABEL>: the label is <LABEL> in
// lower case; an empty value removes it. A variable whose name or value is refused
// (config/topology_labels.h), or one past the limit of labels, is left out and named in
// `problems`.
TopologyLabels resolveTopologyLabels(
    const std::map<std::string, std::string, std::less<>>& configured,
    const std::vector<std::string>& environment,
    const std::vector<std::pair<std::string, std::string>>& from_file = {});

// The labels of a node-label file in the downward API's format (`key="value"` lines) whose key
// starts with one of `prefixes`, named by the key's name part in lower case with '-' and '.'
// as '_' ("topology.k8s.aws/network-node-layer-1" -> "network_node_layer_1"). Other lines are
// skipped; a value with an escape is refused into `problems` (label values never hold one).
std::vector<std::pair<std::string, std::string>> topologyLabelsFromFile(
    std::string_view text, const std::vector<std::string>& prefixes,
    std::vector<std::string>* problems);

// "fe80:0000:0000:0000:946d:ae03:00a1:b2c0" (a GID as sysfs prints it) -> "fe80:0000:0000:0000",
// the subnet prefix (the upper 64 bits) in lower case; nullopt when the text is not a GID.
std::optional<std::string> subnetPrefixOfGid(std::string_view gid);

// One NIC of the node: an RDMA port (device, port) with the network interface it carries, if
// any, or an interface that only lldpd knows.
struct TopologyNic {
  std::string device;  // RDMA device; "" for an interface without one
  int64_t port = 0;
  std::string interface;
  std::string link_layer;  // "InfiniBand", "Ethernet" ... (RDMA ports)
  std::optional<std::string> subnet_prefix;
  std::optional<int64_t> lid, sm_lid;
  bool lldp_known = false;  // lldpd answered and lists this interface
  std::vector<LldpNeighbor> neighbors;
};

core::Value nicFacts(const TopologyNic& nic);

// The RDMA ports and lldpd's interfaces joined by interface name, in order: RDMA ports by
// device and port, then interfaces without an RDMA device by name. `lldp` is null when lldpd
// did not answer.
std::vector<TopologyNic> joinLldp(std::vector<TopologyNic> rdma_ports, const LldpAnswer* lldp);

}  // namespace fabricwatch::facts
