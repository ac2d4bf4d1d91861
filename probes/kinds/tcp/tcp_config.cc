#include "probes/kinds/tcp/tcp_config.h"

namespace fabricwatch::probes::tcp {
namespace {

// The table at its defaults, documented: what `fabricwatch config default` prints for it (a
// test checks it loads to the struct's defaults).
constexpr const char* kDefaults = R"toml([probes.tcp]
# Connect time, then authenticated echo round trips on that connection. The mesh's knocks
# (one echo to a new member) use the same time limits.
enabled = true
samples = 5
connect_timeout = "1s"
echo_timeout = "1s"
)toml";

}  // namespace

config::TableDef tcpConfigTable() {
  using std::chrono::milliseconds;
  using C = TcpConfig;
  return config::TableKeys<C>(kTcpTable)
      .integer("samples", 1, 100, &C::samples)
      .duration("connect_timeout", milliseconds(10), milliseconds(60000), &C::connect_timeout)
      .duration("echo_timeout", milliseconds(10), milliseconds(60000), &C::echo_timeout)
      .defaults(kDefaults)
      .build();
}

}  // namespace fabricwatch::probes::tcp
