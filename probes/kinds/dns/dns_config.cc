#include "probes/kinds/dns/dns_config.h"

namespace fabricwatch::probes::dns {
namespace {

// The table at its defaults, documented: what `fabricwatch config default` prints for it (a
// test checks it loads to the struct's defaults).
constexpr const char* kDefaults = R"toml([probes.dns]
# Resolution of each probed peer's node name (an instance ID resolves as a host name). The
# timeout also bounds the mesh's own resolutions (probe.dns_name, listed host names).
enabled = true
timeout = "2s"
)toml";

}  // namespace

config::TableDef dnsConfigTable() {
  using std::chrono::milliseconds;
  return config::TableKeys<DnsConfig>(kDnsTable)
      .duration("timeout", milliseconds(10), milliseconds(60000), &DnsConfig::timeout)
      .defaults(kDefaults)
      .build();
}

}  // namespace fabricwatch::probes::dns
