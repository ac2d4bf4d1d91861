#pragma once
// What fabricwatch knows about libfabric providers without asking libfabric: how `auto` ranks
// what fi_getinfo returns, how the resource group pins a provider, and the names of mode and
// memory-registration bits. Pure functions; endpoint.h asks libfabric. The names a
// configuration may give are config/fabric_providers.h's.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "probes/kinds/fabric/provider_names.h"

namespace fabricwatch::probes::fabric {

inline constexpr std::string_view kAuto = "auto";

// The order `auto` prefers among the RDM providers fi_getinfo lists: efa, verbs;ofi_rxm,
// tcp;ofi_rxm, tcp (native RDM in libfabric 1.18 and later), udp;ofi_rxd, sockets. A provider
// that is not in the list (shm: one node only; psm2 ...) is never chosen by `auto`. Lower is
// better; nullopt: not a candidate.
std::optional<int> autoRank(std::string_view prov_name);

// Index of the best candidate among fi_getinfo's provider names; nullopt when none ranks.
std::optional<size_t> pickAuto(const std::vector<std::string>& prov_names);

// True when fi_getinfo's prov_name answers a configured name: the same name, or a layered
// provider over it ("tcp" is answered by "tcp;ofi_rxm" in libfabric 1.17, where tcp has no
// RDM endpoint of its own).
bool providerMatches(std::string_view configured, std::string_view prov_name);

// Providers that bind to an IP address (their endpoint names are socket addresses): the probe
// binds them to the peer channel's address when that is a specific one.
bool isSocketProvider(std::string_view prov_name);

// The provider for a resource group: the first row whose glob matches; nullopt if none does.
std::optional<std::string> providerForGroup(const std::vector<GroupProvider>& table,
                                            std::string_view group);

// How the provider was chosen, first that applies: the flag --probe.fabric.provider, the
// configuration's provider when it is not "auto", the first group_providers row matching the
// node's resource group, else "auto" (fi_getinfo's best, endpoint.h).
struct ProviderChoice {
  std::string provider;  // a name, or "auto"
  std::string origin;    // flag | config | group | auto
};
ProviderChoice chooseProvider(const std::string& configured, bool from_flag,
                              const std::vector<GroupProvider>& table,
                              const std::string& resource_group);

// Names of the bits set in a mode word (FI_CONTEXT ...) and an mr_mode word (FI_MR_LOCAL ...),
// in bit order; unknown bits as hex.
std::vector<std::string> modeBitNames(uint64_t mode);
std::vector<std::string> mrModeBitNames(uint64_t mr_mode);

// libfabric's packed versions: FI_VERSION(1, 17) -> "1.17"; a provider's 117.0 -> "117.0".
std::string versionString(uint32_t version);

}  // namespace fabricwatch::probes::fabric
