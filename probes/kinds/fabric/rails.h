#pragma once
// Rails: which of the node's libfabric domains (RDMA devices; with the socket providers,
// network interfaces) the fabric kind probes, and which rail each one is. NIC i of this node is
// probed against the NIC of rail i on its peers, as rail-optimised clusters cable them (GPU i's
// NIC to leaf switch i). By default a rail is a domain's position among the provider's domains
// in PCI order (name order where sysfs has no PCI address); `probes.fabric.rails` names the
// domains per rail instead (or `rails_by_group`, per resource group), each entry "NAME" or
// "NAME|NAME..." (the first one this node has), where a NAME may also be "subnet:CIDR": the
// domain whose interface has an address in that network (RoCE: the RDMA device's netdev; socket
// providers: the interface itself), so that nodes whose NICs are named differently still agree
// on their rails. Pure functions, but for the readers at the end; endpoint.h lists the domains.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "probes/kinds/fabric/subnet.h"

namespace fabricwatch::probes::fabric {

inline constexpr size_t kMaxRails = 32;      // EFA on a p5: 32 devices
inline constexpr size_t kMaxRailNames = 16;  // alternatives in one entry

// One of this node's rails: its index (shared with the peers) and its libfabric domain.
struct Rail {
  uint32_t index = 0;
  std::string domain;   // "": the provider's first (one rail, no rails configured)
  std::string address;  // the address a "subnet:" entry matched ("" when a name did)
  bool operator==(const Rail&) const = default;
};

inline constexpr std::string_view kSubnetPrefix = "subnet:";

// Checks one `rails` entry ("mlx5_0", "eth1|ens1f1", "mlx5_0|subnet:10.1.0.0/24"): nullopt when
// good, else why not.
std::optional<std::string> checkRailEntry(std::string_view entry);
std::vector<std::string> railNames(std::string_view entry);  // "a|b" -> {"a", "b"}
// The network of a "subnet:CIDR" name; nullopt for a plain name (or a bad network).
std::optional<Subnet> railSubnet(std::string_view name);

// What is wrong with a whole rails list (entries checked one by one already): a name on two
// rails, or two rails whose subnets overlap (an address in both would make the rail ambiguous).
// Empty when nothing is.
std::vector<std::string> railsListProblems(const std::vector<std::string>& rails);

using AddressesOf = std::function<std::vector<IpAddress>(const std::string& domain)>;

// The rails of a node whose provider lists `domains`: with `configured` entries, rail i is the
// first name of entry i that matches a domain no earlier rail took (a "subnet:" name: the first
// such domain, in the order below, with an address from `addresses_of` in the network; none:
// the node lacks rail i); without, every listed domain in order (`pci_of` gives a domain's PCI
// address, "" when it has none: those after the others, in natural name order: mlx5_2 before
// mlx5_10).
std::vector<Rail> assignRails(const std::vector<std::string>& configured,
                              const std::vector<std::string>& domains,
                              const std::function<std::string(const std::string&)>& pci_of,
                              const AddressesOf& addresses_of = nullptr);

// The rails (positions in `present`, this node's rails) one round probes: `per_round` of them,
// rotating by `turn` (a count of the runs so far), so that every rail is measured within
// ceil(rails / per_round) runs.
std::vector<size_t> railsForRun(size_t present, size_t per_round, uint64_t turn);

// A domain's PCI address from sysfs under `root` ("/" on a host): the device of
// class/infiniband/<dev> or class/net/<dev>, where <dev> is the domain without the suffix
// libfabric adds ("rdmap16s27-rdm" -> "rdmap16s27"); "" when neither has one.
std::string pciAddressOf(const std::string& root, const std::string& domain);

// The first IPv4 address of network interface `name` ("" when it has none): what a socket
// provider's rail binds to. fi_getinfo's first entry for an interface's domain may be its IPv6
// link-local address, which a peer cannot reach without a scope.
std::string interfaceIpv4(const std::string& name);

// Every address of every network interface this process sees (its network namespace: the
// host's in the DaemonSet), by interface name.
using InterfaceAddresses = std::map<std::string, std::vector<IpAddress>>;
InterfaceAddresses interfaceAddresses();

// The network interfaces behind a domain: an RDMA device's netdevs under `root`'s
// /sys/class/infiniband/<dev> (ports/*/gid_attrs/ndevs/*, as RoCE's GIDs name them, and
// device/net/*); a domain that is no RDMA device is an interface itself (socket providers).
std::vector<std::string> domainInterfaces(const std::string& root, const std::string& domain);
// assignRails' addresses_of on this host: a domain's interfaces (domainInterfaces under `root`)
// and their addresses (interfaceAddresses(), listed once, when first asked).
AddressesOf hostAddressesOf(const std::string& root);

// Natural order: digit runs compare as numbers ("mlx5_2" < "mlx5_10").
bool naturalLess(std::string_view a, std::string_view b);

}  // namespace fabricwatch::probes::fabric
