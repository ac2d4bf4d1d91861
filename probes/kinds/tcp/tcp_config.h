#pragma once
// [probes.tcp]: the tcp kind's keys. Its timeouts are also the knocks' (one echo each).

#include "config/config.h"
#include "config/schema.h"

namespace fabricwatch::probes::tcp {

struct TcpConfig {
  int samples = 5;
  config::Duration connect_timeout{1000};
  config::Duration echo_timeout{1000};
  bool operator==(const TcpConfig&) const = default;
};

inline constexpr const char* kTcpTable = "probes.tcp";
inline const TcpConfig& tcpConfig(const config::Config& c) {
  return c.tables.get<TcpConfig>(kTcpTable);
}
config::TableDef tcpConfigTable();

}  // namespace fabricwatch::probes::tcp
