// NCCL peer runs between two real `fabricwatch serve` daemons, on loopback and across a pair
// of network namespaces, with the real libnccl and no GPU: rank 0's unique id crosses the
// authenticated channel into the peer's rank 1 (the same id fingerprint on both sides), both
// end "unavailable" with CUDA's reason, and the peer reports what it served. Then the cases
// that must end cleanly: a peer that declines (peer runs off there), a timeout on either side,
// a peer daemon killed mid-run (its child dies with it, the prober's run ends at once as
// "lost", nothing is left behind), while scrapes keep answering at once. The child's test
// mode, set through a daemon's [probes.nccl.env], stands in for NCCL waiting for its peer.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "tests/support/libraries.h"
#include "tests/support/netns.h"
#include "tests/support/paths.h"
#include "tests/support/proc_table.h"
#include "tests/support/process.h"
#include "tests/support/require.h"
#include "tests/support/tcp_client.h"
#include "tests/support/temp_dir.h"

namespace fabricwatch::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

std::vector<pid_t> probeChildren(pid_t parent) { return liveChildren(parent, "__nccl-probe"); }
int zombies(pid_t parent) { return zombieChildren(parent); }
bool alive(pid_t pid) { return running(pid); }

class NcclPeerE2ETest : public ::testing::Test {
 protected:
  struct Node {
    std::unique_ptr<Process> process;
    int web_port = 0;
  };

  void SetUp() override {
    if (!haveNccl()) FW_UNAVAILABLE("nccl") << "libnccl.so.2 or libcudart.so is not installed here";
    secret_ = dir_.write("secret", "nccl-peer-e2e-secret-0123456789abcdef\n");
  }

  // Two hosts: in their own network namespaces (netns) or on loopback. Peer ports must be known
  // before the daemons start (each lists both): fixed inside fresh namespaces, free ones on
  // loopback. Web ports are whatever the daemon bound (port 0), from its log.
  void lab(bool netns) {
    if (netns) {
      if (auto why = NetnsLab::unavailableReason())
        FW_UNAVAILABLE("netns") << "no namespaces: " << *why;
      lab_ = std::make_unique<NetnsLab>("10.78." + std::to_string(::getpid() % 200 + 20));
      for (int h = 1; h <= 2; ++h) ASSERT_NE(lab_->addNode(h), "") << lab_->lastError();
    }
    for (int h = 1; h <= 2; ++h) peer_port_[h] = lab_ ? 19600 + h : freePort();
  }

  std::string ip(int h) const { return lab_ ? lab_->address(h) : "127.0.0.1"; }
  std::string peerAddr(int h) const { return ip(h) + ":" + std::to_string(peer_port_.at(h)); }

  // Starts host h (node-h) with NCCL peer runs every other 500 ms round and `extra` config.
  // With `alone`, it lists only itself: it probes nobody, and serves whoever asks. Runs are not
  // spaced apart (serve_min_interval 0): with the default, a node serves its peer once a minute,
  // and the "declined" runs in between replace the one result a test waits for.
  void start(int h, const std::string& extra = "", const std::string& timeout = "20s",
             bool alone = false) {
    std::string cfg =
        dir_.write("node-" + std::to_string(h) + ".toml",
                   "[probe]\ninterval = \"500ms\"\n"
                   "[probes.dns]\nenabled = false\n"
                   "[collect.sources.kernel]\nenabled = false\n"
                   "[probes.nccl]\nenabled = true\nlocal = false\ninterval = \"1s\"\ntimeout = \"" +
                       timeout + "\"\nsizes = [\"1MiB\"]\nserve_min_interval = \"0s\"\n" + extra);
    std::vector<std::string> argv = {
        binaryPath(),
        "serve",
        "--config.file=" + cfg,
        "--log.level=info",
        "--web.listen-address=127.0.0.1:0",
        "--node.name=node-" + std::to_string(h),
        "--peer.listen-address=" + peerAddr(h),
        "--peer.secret-file=" + secret_,
        "--peers=" + (alone ? peerAddr(h) : peerAddr(1) + "," + peerAddr(2)),
    };
    if (lab_) argv = lab_->execArgv(h, argv);
    nodes_[h].process = std::make_unique<Process>(argv);
    auto line = nodes_[h].process->waitForStderr("msg=listening", 10s);
    ASSERT_TRUE(line) << nodes_[h].process->stderrText();
    nodes_[h].web_port = std::stoi(line->substr(line->find(" port=") + 6));
  }

  // The daemon's own PID (inside a namespace, `ip netns exec` execs it: the same process).
  pid_t pid(int h) { return nodes_[h].process->pid(); }

  std::optional<HttpResult> get(int h, const std::string& path) {
    nodes_[h].process->stderrText();  // keep its stderr pipe drained
    return lab_ ? lab_->httpGet(h, "127.0.0.1", nodes_[h].web_port, path)
                : httpGet("127.0.0.1", nodes_[h].web_port, path);
  }

  json facts(int h, const char* part) {
    auto r = get(h, "/api/v1/facts");
    if (!r || r->status != 200) return json();
    json doc = json::parse(r->body, nullptr, false);
    if (!doc.is_object() || !doc["facts"].contains("probes") ||
        !doc["facts"]["probes"].contains("nccl"))
      return json();
    json list = doc["facts"]["probes"]["nccl"][part];
    return list.is_array() && !list.empty() ? list[0] : json();
  }
  static std::string str(const json& j, const std::string& a, const std::string& b = "") {
    if (!j.is_object() || !j.contains(a)) return "";
    const json& x = b.empty() ? j[a] : (j[a].is_object() && j[a].contains(b) ? j[a][b] : json());
    return x.is_string() ? x.get<std::string>() : "";
  }

  // Polls host h's latest run (or served session) until its state is in `states`.
  json waitFor(int h, const char* part, std::set<std::string> states,
               std::chrono::milliseconds limit = 60s) {
    auto end = Clock::now() + limit;
    json last;
    while (Clock::now() < end) {
      last = facts(h, part);
      if (states.count(str(last, "state"))) return last;
      std::this_thread::sleep_for(100ms);
    }
    return last;
  }

  std::unique_ptr<NetnsLab> lab_;  // first: destroyed after the processes
  TempDir dir_;
  std::string secret_;
  std::map<int, int> peer_port_;
  std::map<int, Node> nodes_;
};

TEST_F(NcclPeerE2ETest, LoopbackPairExchangesARealUniqueIdAndBothSidesSayWhy) {
  lab(false);
  start(1);
  start(2);
  // (A run may be declined while the other node runs its own: those are skipped here.)
  json r = waitFor(1, "peers", {"unavailable", "ok", "failed", "timeout", "lost"});
  ASSERT_EQ(str(r, "state"), "unavailable") << r.dump(2);
  EXPECT_EQ(str(r, "self", "reason").rfind("cudaGetDeviceCount: ", 0), 0u) << r.dump(2);
  EXPECT_EQ(str(r, "peer", "reason").rfind("cudaGetDeviceCount: ", 0), 0u) << r.dump(2);
  EXPECT_NE(str(r, "reason").find("node-2: cudaGetDeviceCount"), std::string::npos);
  std::string id = str(r, "self", "id");
  ASSERT_EQ(id.size(), 16u) << r.dump(2);
  EXPECT_EQ(str(r, "peer", "id"), id) << "rank 1 joined with rank 0's id";
  // Node 2 served runs of node 1 (and ran its own with node 1): its child ran and was reaped.
  json s = waitFor(2, "served", {"unavailable"});
  EXPECT_EQ(str(s, "prober"), "node-1") << s.dump(2);
  for (int h : {1, 2}) {
    EXPECT_EQ(zombies(pid(h)), 0);
    auto m = get(h, "/metrics");
    ASSERT_TRUE(m);
    EXPECT_NE(m->body.find("fabricwatch_probe_nccl_served_total{result=\"unavailable\"}"),
              std::string::npos);
  }
}

TEST_F(NcclPeerE2ETest, NamespacePairExchangesARealUniqueIdAcrossTheNetwork) {
  lab(true);
  start(1);
  start(2);
  json r = waitFor(2, "peers", {"unavailable", "ok", "failed", "timeout", "lost"});
  ASSERT_EQ(str(r, "state"), "unavailable") << r.dump(2);
  EXPECT_EQ(str(r, "address").rfind(ip(1), 0), 0u) << r.dump(2);
  std::string id = str(r, "self", "id");
  ASSERT_EQ(id.size(), 16u) << r.dump(2);
  EXPECT_EQ(str(r, "peer", "id"), id);
  json s = waitFor(1, "served", {"unavailable"});
  EXPECT_EQ(str(s, "address"), ip(2)) << s.dump(2);
  EXPECT_EQ(zombies(pid(1)), 0);
  EXPECT_EQ(zombies(pid(2)), 0);
}

TEST_F(NcclPeerE2ETest, APeerWithPeerRunsOffDeclinesAndSaysSo) {
  lab(false);
  start(1);
  start(2, "peers = false\n");
  json r = waitFor(1, "peers", {"declined"});
  EXPECT_EQ(str(r, "state"), "declined") << r.dump(2);
  EXPECT_NE(str(r, "reason").find("node-2 declined: NCCL peer runs are off on this node"),
            std::string::npos)
      << r.dump(2);
  EXPECT_TRUE(probeChildren(pid(2)).empty());
}

TEST_F(NcclPeerE2ETest, ATimeoutOnEitherSideIsReportedAndTheChildrenReaped) {
  lab(false);
  const std::string hang =
      "[probes.nccl.env]\nFABRICWATCH_NCCL_PROBE_TEST_MODE = \"hang_in_init\"\n";
  start(1, "", "2s");
  start(2, hang, "2s");
  // Node 1's runs: its peer's rank 1 hangs until node 2's deadline.
  json r = waitFor(1, "peers", {"timeout", "unavailable", "failed", "lost"});
  EXPECT_EQ(str(r, "state"), "timeout") << r.dump(2);
  EXPECT_EQ(str(r, "peer", "state"), "timeout") << r.dump(2);
  // Node 2's runs: its own rank 0 hangs; node 1 still says why it could not run.
  json r2 = waitFor(2, "peers", {"timeout", "unavailable", "failed", "lost"});
  EXPECT_EQ(str(r2, "state"), "timeout") << r2.dump(2);
  EXPECT_EQ(str(r2, "self", "state"), "timeout") << r2.dump(2);
  EXPECT_EQ(str(r2, "peer", "state"), "unavailable") << r2.dump(2);
  for (int h : {1, 2}) EXPECT_EQ(zombies(pid(h)), 0);
}

TEST_F(NcclPeerE2ETest, APeerKilledMidRunEndsTheRunAndLeavesNothingBehind) {
  lab(false);
  const std::string hang =
      "[probes.nccl.env]\nFABRICWATCH_NCCL_PROBE_TEST_MODE = \"hang_in_init\"\n";
  start(1, hang, "5m");
  start(2, hang, "5m", /*alone=*/true);  // it only serves: node 1's run is the one in flight
  // Wait until node 1 has a run in flight that node 2 serves: both children exist.
  pid_t served_child = 0, own_child = 0;
  auto end = Clock::now() + 60s;
  while (Clock::now() < end) {
    json s = facts(2, "served");
    auto c2 = probeChildren(pid(2)), c1 = probeChildren(pid(1));
    if (str(s, "state") == "running" && str(s, "prober") == "node-1" && !c1.empty() &&
        !c2.empty()) {
      served_child = c2[0];
      own_child = c1[0];
      break;
    }
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_GT(served_child, 0) << "node 2 never served a run of node 1";
  // While the run hangs, node 1's round is blocked in it: scrapes must not be.
  for (int i = 0; i < 5; ++i) {
    auto t0 = Clock::now();
    auto m = get(1, "/metrics");
    ASSERT_TRUE(m);
    EXPECT_EQ(m->status, 200);
    EXPECT_LT(Clock::now() - t0, 1s) << "scrape " << i << " waited for the NCCL run";
  }
  auto t0 = Clock::now();
  nodes_[2].process->signal(SIGKILL);
  nodes_[2].process->wait(10s);
  // Node 2's child dies with its daemon (PR_SET_PDEATHSIG), and node 1 ends its run at once.
  end = Clock::now() + 30s;
  while (alive(served_child) && Clock::now() < end) std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(alive(served_child)) << "the served child outlived its daemon";
  if (alive(served_child)) ::kill(served_child, SIGKILL);
  // The run ends as "lost" (the next runs find node 2 unreachable and replace it in the facts:
  // the counter keeps it).
  const std::string lost = "fabricwatch_probe_nccl_runs_total{result=\"lost\"} 1";
  end = Clock::now() + 60s;
  std::string body;
  while (body.find(lost) == std::string::npos && Clock::now() < end) {
    if (auto m = get(1, "/metrics")) body = m->body;
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_NE(body.find(lost), std::string::npos) << facts(1, "peers").dump(2);
  EXPECT_LT(Clock::now() - t0, 60s) << "ended long before its 5 minute timeout";
  end = Clock::now() + 30s;
  while (alive(own_child) && Clock::now() < end) std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(alive(own_child)) << "node 1's child was cancelled";
  EXPECT_EQ(zombies(pid(1)), 0);
}

}  // namespace
}  // namespace fabricwatch::testing
