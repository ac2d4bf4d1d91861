// fabricwatch's TCP echo RTT on a path, for comparison with qperf's tcp_lat
// (bench/tcp_rtt_vs_qperf.sh). Two modes:
//   peer_echo_rtt serve ADDRESS SECRET_FILE [COUNT]   answer echoes on ADDRESS (COUNT listeners
//                                                      on consecutive ports) until killed
//   peer_echo_rtt probe ADDRESS SECRET_FILE SAMPLES   run SAMPLES echoes on one connection
//                                                      (the daemon's own client) and print stats
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <thread>
#include <vector>

#include "probes/peer/channel_server.h"
#include "probes/peer/echo_client.h"
#include "probes/peer/net_util.h"
#include "probes/peer/peer_setup.h"

using namespace fabricwatch::probes::peer;

int main(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: peer_echo_rtt serve|probe ADDRESS SECRET_FILE [N]\n";
    return 2;
  }
  std::string mode = argv[1], address = argv[2];
  auto secret = readSecretFile(argv[3]);
  if (!secret) {
    std::cerr << secret.error().message << "\n";
    return 2;
  }
  int n = argc > 4 ? std::atoi(argv[4]) : 1;
  if (mode == "serve") {
    auto hp = splitHostPort(address);
    if (!hp) return 2;
    std::vector<std::unique_ptr<ChannelServer>> servers;
    for (int i = 0; i < n; ++i) {
      ChannelServerOptions o;
      o.listen_address = joinHostPort(hp->host, hp->port + i);
      o.secret = *secret;
      o.node_name = "bench-" + std::to_string(i);
      o.max_connections = 1024;
      o.max_connections_per_address = 1024;
      servers.push_back(std::make_unique<ChannelServer>(o));
      if (auto st = servers.back()->start(); !st) {
        std::cerr << st.message() << "\n";
        return 1;
      }
    }
    std::cerr << "serving " << n << " listeners from " << address << "\n";
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    int sig;
    sigwait(&set, &sig);
    return 0;
  }
  EchoOptions o{*secret, "bench", n, std::chrono::milliseconds(1000),
                std::chrono::milliseconds(1000)};
  // Warm up (connection, caches), then measure on one connection like a probe does.
  runEcho(address, EchoOptions{*secret, "bench", 100, o.connect_timeout, o.echo_timeout});
  EchoResult r = runEcho(address, o);
  if (r.rtt_seconds.empty()) {
    std::cerr << "probe failed: " << r.error << "\n";
    return 1;
  }
  auto v = r.rtt_seconds;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  auto us = [](double s) { return s * 1e6; };
  std::printf("samples=%zu rtt_us min=%.1f p50=%.1f avg=%.1f p99=%.1f\n", v.size(), us(v.front()),
              us(v[v.size() / 2]), us(sum / v.size()), us(v[v.size() * 99 / 100]));
  return 0;
}
