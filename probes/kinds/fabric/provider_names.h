#pragma once
// The libfabric provider names a configuration may give ([probes.fabric] provider and
// group_providers, --probe.fabric.provider), checked when the file loads: a typo is a positioned
// error, not a probe that never runs. Whether the provider is present on the node is the
// probe's question (probes/kinds/fabric/).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabricwatch::probes::fabric {

// "auto", a core provider libfabric ships (efa, verbs, tcp, udp, shm, sockets, psm2, psm3, opx,
// cxi, ucx, usnic ...), or one layered under a utility provider ("verbs;ofi_rxm",
// "tcp;ofi_rxm", "udp;ofi_rxd"). nullopt when good, else why not (with the names it knows).
std::optional<std::string> checkProviderName(std::string_view name);

// One row of probes.fabric.group_providers: "GLOB=PROVIDER" (fnmatch glob over the resource
// group, e.g. "efa-*=efa").
struct GroupProvider {
  std::string glob;
  std::string provider;
};
// nullopt with `why` when malformed or the provider is unknown.
std::optional<GroupProvider> parseGroupProvider(std::string_view text, std::string* why);

}  // namespace fabricwatch::probes::fabric
