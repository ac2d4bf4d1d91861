#pragma once
// The tcp probe kind: connect time, then authenticated echo round trips on that connection.
// It serves no request of its own: the echo is the channel's hello, which every node answers.
// Facts probes.tcp, metrics fabricwatch_probe_tcp_*, and the top level of each /api/v1/peers
// result (where these fields were before kinds existed).

#include <chrono>
#include <memory>
#include <string>

#include "probes/kinds/tcp/tcp_config.h"
#include "probes/mesh/echo_client.h"
#include "probes/mesh/probe_kind.h"

namespace fabricwatch::probes::tcp {

struct TcpKindOptions {
  std::string secret;
  std::string node_name;
  int samples = 5;
  std::chrono::milliseconds connect_timeout{1000};
  std::chrono::milliseconds echo_timeout{1000};
};

struct TcpResult : ProbeResult {
  EchoResult echo;
};

std::shared_ptr<ProbeKind> makeTcpKind(TcpKindOptions opts);
// From [probes.tcp]: samples, connect_timeout, echo_timeout.
KindRegistration tcpKindRegistration();

}  // namespace fabricwatch::probes::tcp
