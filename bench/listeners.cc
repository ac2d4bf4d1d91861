#include "bench/listeners.h"

#include <csignal>
#include <iostream>

#include "core/openssl.h"
#include "probes/mesh/net_util.h"

namespace fabricwatch::bench {

using probes::ChannelServer;

std::vector<std::unique_ptr<ChannelServer>> startListeners(
    const std::string& address, const std::string& secret, int count,
    const std::function<std::vector<probes::RequestHandler>(int)>& handlers) {
  std::vector<std::unique_ptr<ChannelServer>> servers;
  auto hp = probes::splitHostPort(address);
  if (!hp) {
    std::cerr << "bad address " << address << "\n";
    return {};
  }
  for (int i = 0; i < count; ++i) {
    probes::ChannelServerOptions o;
    o.listen_address = probes::joinHostPort(hp->host, hp->port + i);
    o.secret = secret;
    o.node_name = "bench-" + std::to_string(i);
    o.max_connections = 1024;
    o.max_connections_per_address = 1024;
    if (handlers) o.handlers = handlers(i);
    servers.push_back(std::make_unique<ChannelServer>(o));
    if (auto st = servers.back()->start(); !st) {
      std::cerr << st.message() << "\n";
      return {};
    }
  }
  return servers;
}

bool loadOpenSsl() {
  auto st = core::openssl::require("the peer channel");
  if (!st) std::cerr << st.message() << "\n";
  return static_cast<bool>(st);
}

void waitForTermination() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  int sig;
  sigwait(&set, &sig);
}

}  // namespace fabricwatch::bench
