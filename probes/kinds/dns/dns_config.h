#pragma once
// [probes.dns]: the dns kind's keys. Its timeout also bounds the mesh's own resolutions
// (probe.dns_name, listed host names).

#include "config/config.h"
#include "config/schema.h"

namespace fabricwatch::probes::dns {

struct DnsConfig {
  config::Duration timeout{2000};
  bool operator==(const DnsConfig&) const = default;
};

inline constexpr const char* kDnsTable = "probes.dns";
inline const DnsConfig& dnsConfig(const config::Config& c) {
  return c.tables.get<DnsConfig>(kDnsTable);
}
config::TableDef dnsConfigTable();

}  // namespace fabricwatch::probes::dns
