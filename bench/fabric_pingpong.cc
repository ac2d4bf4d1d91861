// fabricwatch's fabric probe on its own, for comparison with libfabric's fi_pingpong
// (bench/fabric_vs_fi_pingpong.sh) and for the daemon's cost with many fabric peers
// (bench/fabric_daemon_cost.sh). It runs the fabric kind itself
// (probes/kinds/fabric/fabric_kind.h): the same endpoints, channel exchange and ping-pong loop as
// `fabricwatch serve`.
//   fabric_pingpong serve ADDRESS SECRET_FILE [--count=N] [--provider=P]
//       N peer-channel listeners on consecutive ports from ADDRESS, each with its own fabric
//       endpoints, answering echoes and fabric sessions until SIGTERM
//   fabric_pingpong probe ADDRESS SECRET_FILE [--provider=P] [--size=BYTES]
//       [--iterations=N] [--warmup=N] [--runs=R]
//       R probes of the listener at ADDRESS, each N timed ping-pongs of BYTES after N warm-up
//       ones, with one line per run: the mean one-way latency of the timed loop (its wall time
//       over 2N, fi_pingpong's usec/xfer) and the per-sample min, median and p99 of RTT/2
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench/listeners.h"
#include "config/config.h"
#include "probes/kinds/fabric/fabric_kind.h"
#include "probes/mesh/net_util.h"
#include "probes/peer_setup.h"

using namespace fabricwatch::probes;
using namespace fabricwatch::probes::fabric;

namespace {

std::map<std::string, std::string> flags(int argc, char** argv, int first) {
  std::map<std::string, std::string> out;
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--", 0) != 0) continue;
    auto eq = a.find('=');
    out[a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2)] =
        eq == std::string::npos ? "true" : a.substr(eq + 1);
  }
  return out;
}

FabricKindOptions options(const std::string& secret, const std::string& host,
                          std::map<std::string, std::string>& f) {
  FabricKindOptions o;
  o.secret = secret;
  o.node_name = "bench";
  o.endpoint.provider = f.count("provider") ? f["provider"] : "tcp";
  o.endpoint.source_address = host;
  o.latency_size = static_cast<uint32_t>(std::stoul(f.count("size") ? f["size"] : "64"));
  o.endpoint.max_message = o.latency_size;
  o.iterations =
      static_cast<uint32_t>(std::stoul(f.count("iterations") ? f["iterations"] : "10000"));
  o.warmup = static_cast<uint32_t>(std::stoul(f.count("warmup") ? f["warmup"] : "0"));
  o.bandwidth_every_rounds = 0;
  o.timeout = std::chrono::seconds(30);  // long runs: the responder's session limit too
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: fabric_pingpong serve|probe ADDRESS SECRET_FILE [--flags]\n";
    return 2;
  }
  std::string mode = argv[1], address = argv[2];
  auto secret = readSecretFile(argv[3]);
  auto hp = splitHostPort(address);
  if (!secret || !hp) {
    std::cerr << (secret ? "bad address " + address : secret.error().message) << "\n";
    return 2;
  }
  auto f = flags(argc, argv, 4);
  if (!fabricwatch::bench::loadOpenSsl()) return 1;
  if (mode == "serve") {
    int n = f.count("count") ? std::stoi(f["count"]) : 1;
    std::vector<std::shared_ptr<ProbeKind>> kinds;
    auto servers = fabricwatch::bench::startListeners(address, *secret, n, [&](int) {
      kinds.push_back(makeFabricKind(options(*secret, hp->host, f)));
      return kinds.back()->handlers();
    });
    if (servers.empty()) return 1;
    std::cerr << "serving " << n << " fabric listeners from " << address << "\n";
    fabricwatch::bench::waitForTermination();
    for (auto& s : servers) s->stop();
    for (auto& k : kinds) k->stop();
    return 0;
  }

  auto kind = makeFabricKind(options(*secret, "127.0.0.1", f));
  int runs = f.count("runs") ? std::stoi(f["runs"]) : 5;
  std::vector<double> means, medians;
  auto us = [](double s) { return s * 1e6; };
  for (int i = 1; i <= runs; ++i) {
    PeerContext ctx;
    ctx.peer.address = address;
    ctx.peer.instance = 1;  // one peer instance: its endpoint name is fetched once
    ctx.peer.round = static_cast<uint64_t>(i);
    ctx.channel_address = address;
    ctx.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    auto r = kind->probe(ctx);
    if (!r) {
      std::cerr << "no fabric endpoint (provider unavailable)\n";
      return 1;
    }
    const auto& fr = static_cast<const FabricResult&>(*r);
    if (!fr.latency) {
      std::cerr << "run " << i << " failed: " << fr.failure << " " << fr.error << " " << fr.detail
                << "\n";
      return 1;
    }
    const auto& l = *fr.latency;
    std::printf("run %d: mean %.3f us median %.3f us min %.3f us p99 %.3f us samples %zu\n", i,
                us(l.mean), us(l.p50), us(l.min), us(l.p99), l.samples);
    means.push_back(l.mean);
    medians.push_back(l.p50);
  }
  std::sort(means.begin(), means.end());
  std::sort(medians.begin(), medians.end());
  std::printf("median of run means: %.3f us; median of run medians: %.3f us\n",
              us(means[means.size() / 2]), us(medians[medians.size() / 2]));
  kind->stop();
  return 0;
}
