#pragma once
// The dns probe kind: resolution time and result of each probed peer's node name (an instance
// ID resolves as a host name on the platforms we serve), else of the host part of a listed
// host name; plain IP endpoints without a name are not probed. Facts probes.dns, metrics
// fabricwatch_probe_dns_*, and `dns` in each /api/v1/peers result.

#include <chrono>
#include <memory>
#include <string>

#include "probes/kinds/dns/dns_config.h"
#include "probes/mesh/dns_probe.h"
#include "probes/mesh/probe_kind.h"

namespace fabricwatch::probes::dns {

struct DnsKindResult : ProbeResult {
  std::string name;  // what was resolved
  DnsResult dns;
};

std::shared_ptr<ProbeKind> makeDnsKind(std::chrono::milliseconds timeout);
// From [probes.dns]: timeout.
KindRegistration dnsKindRegistration();

}  // namespace fabricwatch::probes::dns
