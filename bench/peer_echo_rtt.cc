// fabricwatch's TCP echo RTT on a path, for comparison with qperf's tcp_lat
// (bench/tcp_rtt_vs_qperf.sh). Two modes:
//   peer_echo_rtt serve ADDRESS SECRET_FILE [COUNT]   answer echoes on ADDRESS (COUNT listeners
//                                                      on consecutive ports) until killed
//   peer_echo_rtt probe ADDRESS SECRET_FILE SAMPLES   run SAMPLES echoes on one connection
//                                                      (the daemon's own client) and print stats
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <vector>

#include "bench/listeners.h"
#include "probes/mesh/echo_client.h"
#include "probes/peer_setup.h"

using namespace fabricwatch::probes;

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
  if (!fabricwatch::bench::loadOpenSsl()) return 1;
  if (mode == "serve") {
    auto servers = fabricwatch::bench::startListeners(address, *secret, n);
    if (servers.empty()) return 1;
    std::cerr << "serving " << n << " listeners from " << address << "\n";
    fabricwatch::bench::waitForTermination();
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
