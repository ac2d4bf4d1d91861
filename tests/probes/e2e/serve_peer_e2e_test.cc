// `fabricwatch serve` with and without the mesh: it refuses to run unauthenticated, a lone
// node reports an empty membership, and SIGHUP restarts the mesh with the new configuration.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/support/daemon.h"
#include "tests/support/paths.h"
#include "tests/support/tcp_client.h"
#include "tests/support/temp_dir.h"

namespace fabricwatch::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

TEST(ServePeerTest, RefusesAMeshWithoutASecret) {
  RunResult r = runCommand(
      {binaryPath(), "serve", "--web.listen-address=127.0.0.1:0", "--peers=127.0.0.1:1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("peer.secret_file is not set"), std::string::npos) << r.err;

  TempDir dir;
  std::string weak = dir.write("weak", "short\n");
  r = runCommand({binaryPath(), "serve", "--web.listen-address=127.0.0.1:0", "--peers=127.0.0.1:1",
                  "--peer.secret-file=" + weak});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("at least 16"), std::string::npos) << r.err;
}

TEST(ServePeerTest, ALoneNodeReportsAnEmptyMembership) {
  RunningDaemon d = startDaemon({"--node.name=lonely"});
  ASSERT_NE(d.port, 0) << d.process->stderrText();
  // /api/v1/peers answers from the snapshot, as /api/v1/facts does: once one is published.
  ASSERT_TRUE(d.waitForStatus("/api/v1/peers", 200));
  auto r = d.get("/api/v1/peers");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  json doc = json::parse(r->body);
  EXPECT_EQ(doc["enabled"], false);
  EXPECT_EQ(doc["node"], "lonely");
  EXPECT_TRUE(doc["members"].empty());
  ASSERT_TRUE(d.waitForStatus("/readyz", 200));
  json facts = json::parse(d.get("/api/v1/facts")->body);
  EXPECT_EQ(facts["facts"]["node"]["name"], "lonely");
  EXPECT_EQ(facts["facts"]["probes"]["mesh"]["members"], 0);
}

TEST(ServePeerTest, ReloadRestartsTheMesh) {
  TempDir dir;
  std::string secret = dir.write("secret", "reload-test-secret-0123456789\n");
  // Peer B: a second daemon on loopback; A lists it only after the reload.
  // Ports the kernel just handed out (a pid-derived range collided under ctest -j).
  std::string a_addr = "127.0.0.1:" + std::to_string(freePort());
  std::string b_addr = "127.0.0.1:" + std::to_string(freePort());
  RunningDaemon b =
      startDaemon({"--node.name=b", "--peer.listen-address=" + b_addr,
                   "--peer.secret-file=" + secret, "--peers=" + a_addr, "--probe.interval=500ms"});
  ASSERT_NE(b.port, 0) << b.process->stderrText();
  std::string head = "[peer]\nsecret_file = \"" + secret + "\"\nlisten_address = \"" + a_addr +
                     "\"\n[probes.dns]\nenabled = false\n[probe]\ninterval = \"500ms\"\n";
  std::string cfg = dir.write("fw.toml", head + "peers = [\"" + a_addr + "\"]\n");
  RunningDaemon a = startDaemon({"--config.file=" + cfg, "--node.name=a"});
  ASSERT_NE(a.port, 0) << a.process->stderrText();
  dir.write("fw.toml", head + "peers = [\"" + a_addr + "\", \"" + b_addr + "\"]\n");
  a.process->signal(SIGHUP);
  ASSERT_TRUE(a.process->waitForStderr("configuration reloaded", 5s));
  auto end = std::chrono::steady_clock::now() + 10s;
  bool seen = false;
  while (!seen && std::chrono::steady_clock::now() < end) {
    auto r = a.get("/api/v1/peers");
    if (r && r->status == 200) {
      json doc = json::parse(r->body);
      for (const auto& res : doc["results"])
        seen = seen || (res["address"] == b_addr && res["reachable"] == true);
    }
    if (!seen) std::this_thread::sleep_for(50ms);
  }
  EXPECT_TRUE(seen) << a.get("/api/v1/peers")->body;
}

// Issue 13: a peer started with --node.name $'bad\xff\xfename' broke the scrape of every node
// that probed it (the peer_node label: "invalid UTF-8 label value"), and /api/v1/facts emitted
// invalid JSON. The node that probes it must still pass promtool, and every JSON answer parse.
TEST(ServePeerTest, APeerNamedWithInvalidUtf8BreaksNoScrapeAndNoJson) {
  TempDir dir;
  std::string secret = dir.write("secret", "utf8-test-secret-0123456789\n");
  // Ports the kernel just handed out (a pid-derived range collided under ctest -j).
  std::string bad_addr = "127.0.0.1:" + std::to_string(freePort());
  std::string good_addr = "127.0.0.1:" + std::to_string(freePort());
  RunningDaemon bad = startDaemon(
      {"--node.name=bad\xff\xfename", "--peer.listen-address=" + bad_addr,
       "--peer.secret-file=" + secret, "--peers=" + good_addr, "--probe.interval=500ms"});
  ASSERT_NE(bad.port, 0) << bad.process->stderrText();
  RunningDaemon good = startDaemon({"--node.name=good", "--peer.listen-address=" + good_addr,
                                    "--peer.secret-file=" + secret, "--peers=" + bad_addr,
                                    "--probe.interval=500ms"});
  ASSERT_NE(good.port, 0) << good.process->stderrText();
  // The good node has probed the bad one and captured its name in the peer metrics.
  std::string metrics;
  auto end = std::chrono::steady_clock::now() + 20s;
  while (std::chrono::steady_clock::now() < end) {
    auto m = good.get("/metrics");
    if (m && m->body.find("peer_node=\"bad") != std::string::npos) {
      metrics = m->body;
      break;
    }
    std::this_thread::sleep_for(100ms);
  }
  ASSERT_FALSE(metrics.empty()) << "the good node never named its peer in its metrics";
  EXPECT_NE(metrics.find("peer_node=\"bad\xef\xbf\xbd\xef\xbf\xbdname\""), std::string::npos);
  EXPECT_NE(metrics.find("fabricwatch_source_sanitized_strings_total{source=\"peer\"}"),
            std::string::npos);
  if (std::filesystem::exists("/usr/bin/promtool")) {
    for (const auto* d : {&good, &bad}) {
      auto m = d->get("/metrics");
      ASSERT_TRUE(m);
      std::string file = dir.write("metrics.txt", m->body);
      auto r = runCommand({"/bin/sh", "-c", "/usr/bin/promtool check metrics < " + file});
      EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
      EXPECT_EQ(r.err.find("UTF-8"), std::string::npos) << r.err;
    }
  }
  for (const auto* d : {&good, &bad}) {
    for (const char* path : {"/api/v1/facts", "/api/v1/peers", "/api/v1/violations"}) {
      auto r = d->get(path);
      ASSERT_TRUE(r);
      EXPECT_TRUE(json::accept(r->body)) << path;
    }
  }
  json facts = json::parse(bad.get("/api/v1/facts")->body);
  EXPECT_EQ(facts["facts"]["node"]["name"], "bad\xef\xbf\xbd\xef\xbf\xbdname");
}

}  // namespace
}  // namespace fabricwatch::testing
