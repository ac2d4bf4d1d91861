// The nccl probe kind between two nodes in this process, each a real PeerProber with its own
// channel on loopback, its own heavy gate and the real probe child (fabricwatch __nccl-probe)
// with the real libnccl of this machine and no GPU: rank 0 makes a real unique id, it crosses
// the channel, rank 1 joins with it, and both sides end "unavailable" with CUDA's reason. Then
// what must not hang: declines with their reasons, a timeout on either side, a peer that
// vanishes mid-run, a prober that stops. The child's test mode (hang_in_init, through the
// node's [probes.nccl.env]) stands in for NCCL waiting for its peer.
#include "probes/kinds/nccl/nccl_kind.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <thread>

#include "core/value_format.h"
#include "probes/kinds/nccl/nccl_messages.h"
#include "probes/mesh/channel_client.h"
#include "probes/mesh/peer_prober.h"
#include "tests/support/libraries.h"
#include "tests/support/paths.h"
#include "tests/support/proc_table.h"
#include "tests/support/require.h"
#include "tests/support/temp_dir.h"
#include "tests/support/with_openssl.h"

namespace fabricwatch::probes::nccl {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
const std::string kSecret = "nccl-kind-test-secret-0123456789";

int zombieChildren() { return testing::zombieChildren(::getpid()); }

struct NodeSpec {
  NodeSpec(const char* n) : name(n) {}  // NOLINT: implicit, for pair({"node-a"}, ...)
  std::string name;
  bool kind = true;   // has the nccl kind at all
  bool peers = true;  // probes.nccl.peers
  std::string test_mode;
  std::chrono::milliseconds timeout = 30s;
  std::string rootfs;  // host root for the GPU-holder check ("" = an empty directory)
  // probes.nccl.serve_min_interval; 0 here: the tests below run a node's peer runs back to back.
  std::chrono::milliseconds serve_min_interval = 0ms;
};

class NcclKindTest : public testing::WithOpenSsl {
 protected:
  struct Node {
    std::shared_ptr<nccl::HeavyGate> gate = std::make_shared<nccl::HeavyGate>();
    std::unique_ptr<PeerProber> prober;
    std::string address;
  };

  // A node listing `peers`, started (channel only: the test drives the rounds).
  Node node(const NodeSpec& spec, const std::string& peers) {
    Node n;
    NcclKindOptions o;
    o.run.exe = testing::binaryPath();
    o.run.timeout = spec.timeout;
    o.run.sizes = {1 << 20};
    o.run.warmup = 1;
    o.run.iterations = 2;
    if (!spec.test_mode.empty()) o.run.env["FABRICWATCH_NCCL_PROBE_TEST_MODE"] = spec.test_mode;
    o.rootfs = spec.rootfs.empty() ? idle_.path() : spec.rootfs;
    o.node_name = spec.name;
    o.secret = kSecret;
    o.peers = spec.peers;
    o.every_rounds = 1;
    o.gate = n.gate;
    o.poll_interval = 50ms;
    o.side_grace = 3s;
    o.serve_min_interval = spec.serve_min_interval;
    std::vector<std::shared_ptr<ProbeKind>> kinds;
    if (spec.kind) kinds.push_back(makeNcclKind(o));
    std::vector<std::unique_ptr<MembershipSource>> sources;
    sources.push_back(std::make_unique<StaticSource>(std::vector<std::string>{peers}));
    ProberOptions po;
    po.node_name = spec.name;
    po.secret = kSecret;
    po.channel.listen_address = "127.0.0.1:0";
    po.interval = 1h;  // rounds are driven by the test
    po.connect_timeout = 500ms;
    po.echo_timeout = 500ms;
    n.prober = std::make_unique<PeerProber>(
        po, std::make_unique<Membership>(std::move(sources), 0ms), std::move(kinds));
    EXPECT_TRUE(n.prober->start(/*rounds=*/false));
    n.address = "127.0.0.1:" + std::to_string(n.prober->port());
    return n;
  }

  // b first (listing nowhere), then a listing b.
  std::pair<Node, Node> pair(NodeSpec a, NodeSpec b) {
    Node nb = node(b, "127.0.0.1:1");
    Node na = node(a, nb.address);
    return {std::move(na), std::move(nb)};
  }

  static core::Value run(const Node& n) {
    core::Value f = n.prober->facts();
    const core::Value* peers = f.findPath("probes.nccl.peers");
    return peers && peers->size() == 1 ? peers->asList()[0] : core::Value::map();
  }
  static core::Value served(const Node& n) {
    core::Value f = n.prober->facts();
    const core::Value* s = f.findPath("probes.nccl.served");
    return s && s->size() > 0 ? s->asList()[0] : core::Value::map();
  }
  // Polls until b serves a run (its rank 1 child has started).
  static bool waitServing(const Node& b) {
    auto deadline = Clock::now() + 60s;
    while (str(served(b), "state") != "running" && Clock::now() < deadline)
      std::this_thread::sleep_for(20ms);
    return str(served(b), "state") == "running";
  }
  static std::string str(const core::Value& v, const std::string& path) {
    const core::Value* x = v.findPath(path);
    return x && x->isString() ? x->asString() : "";
  }
  static double metric(const Node& n, const std::string& name, const core::LabelPairs& labels) {
    core::MetricFamilies fams;
    n.prober->renderMetrics(fams);
    for (const auto& f : fams) {
      if (f.name != name) continue;
      for (const auto& m : f.metric) {
        bool all = true;
        for (const auto& [k, v] : labels) {
          bool found = false;
          for (const auto& l : m.label) found = found || (l.name == k && l.value == v);
          all = all && found;
        }
        if (all) return f.type == prometheus::MetricType::Counter ? m.counter.value : m.gauge.value;
      }
    }
    return -1;
  }

  testing::TempDir idle_;  // a host root without /proc: nobody holds a GPU
};

TEST_F(NcclKindTest, ARealUniqueIdCrossesTheChannelAndBothSidesReportCudasReason) {
  if (!testing::haveNccl())
    FW_UNAVAILABLE("nccl") << "libnccl.so.2 or libcudart.so is not installed here";
  auto [a, b] = pair({"node-a"}, {"node-b"});
  a.prober->runRound(1);
  core::Value r = run(a);
  EXPECT_EQ(str(r, "state"), "unavailable") << core::toJson(r);
  EXPECT_EQ(str(r, "self.state"), "unavailable");
  EXPECT_EQ(str(r, "self.reason").rfind("cudaGetDeviceCount: ", 0), 0u) << core::toJson(r);
  EXPECT_EQ(str(r, "peer.state"), "unavailable");
  EXPECT_EQ(str(r, "peer.reason").rfind("cudaGetDeviceCount: ", 0), 0u) << core::toJson(r);
  // Both reasons, each with its node.
  EXPECT_NE(str(r, "reason").find("node-a: cudaGetDeviceCount"), std::string::npos);
  EXPECT_NE(str(r, "reason").find("node-b: cudaGetDeviceCount"), std::string::npos);
  // The peer's child joined with the id a's child made: the same fingerprint on both sides.
  std::string id = str(r, "self.id");
  EXPECT_EQ(id.size(), 16u) << core::toJson(r);
  EXPECT_EQ(str(r, "peer.id"), id);
  EXPECT_EQ(str(r, "id"), id);
  EXPECT_FALSE(str(r, "self.nccl_version").empty());
  EXPECT_EQ(str(r, "operation"), "all_reduce");
  EXPECT_EQ(str(r, "node"), "node-b");

  // b reports what it served.
  core::Value s = served(b);
  EXPECT_EQ(str(s, "prober"), "node-a") << core::toJson(b.prober->facts());
  EXPECT_EQ(str(s, "state"), "unavailable");
  EXPECT_EQ(str(s, "id"), id);
  EXPECT_EQ(metric(b, "fabricwatch_probe_nccl_served_total", {{"result", "unavailable"}}), 1);
  EXPECT_EQ(metric(a, "fabricwatch_probe_nccl_runs_total", {{"result", "unavailable"}}), 1);
  EXPECT_EQ(metric(a, "fabricwatch_probe_nccl_peer_state", {{"peer_node", "node-b"}}), 3);
  EXPECT_EQ(metric(a, "fabricwatch_probe_nccl_peer_transport_info",
                   {{"peer_node", "node-b"}, {"inter_node_transport", "unknown"}}),
            1)
      << "NCCL logged its bootstrap, no transport: the run never connected";
  // /api/v1/peers carries the run under the kind's name.
  core::Value st = a.prober->status();
  EXPECT_EQ(str(st.find("results")->asList()[0], "nccl.state"), "unavailable");

  // The next run makes a new id.
  a.prober->runRound(2);
  EXPECT_NE(str(run(a), "self.id"), id);
  EXPECT_EQ(metric(b, "fabricwatch_probe_nccl_served_total", {{"result", "unavailable"}}), 2);
  EXPECT_EQ(zombieChildren(), 0);
}

// Every key the kind puts in its facts (an entry of probes.nccl.peers[], its self and peer
// sides, an entry of probes.nccl.served[]) is named in docs/nccl.md's table.
TEST_F(NcclKindTest, FactKeysAreDocumented) {
  if (!testing::haveNccl())
    FW_UNAVAILABLE("nccl") << "libnccl.so.2 or libcudart.so is not installed here";
  std::ifstream in(testing::sourceDir() + "/docs/nccl.md");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string doc = ss.str();
  size_t section = doc.find("## Runs with peers");
  ASSERT_NE(section, std::string::npos);
  doc = doc.substr(section);
  auto [a, b] = pair({"node-a"}, {"node-b"});
  a.prober->runRound(1);
  core::Value r = run(a);
  ASSERT_TRUE(r.find("peer")) << core::toJson(r);
  auto check = [&](const core::Value& m, const std::string& where) {
    for (const auto& [k, _] : m.asMap())
      EXPECT_TRUE(doc.find("`" + k + "`") != std::string::npos ||
                  doc.find("." + k + "`") != std::string::npos)
          << where << "." << k << " is not in docs/nccl.md";
  };
  check(r, "peers[]");
  check(*r.find("self"), "peers[].self");
  check(*r.find("peer"), "peers[].peer");
  check(served(b), "served[]");
  EXPECT_NE(doc.find("`probes.nccl.peers[].self`"), std::string::npos);
}

TEST_F(NcclKindTest, DeclinesSayWhy) {
  if (!testing::haveNccl())
    FW_UNAVAILABLE("nccl") << "libnccl.so.2 or libcudart.so is not installed here";
  {
    NodeSpec off("node-b");
    off.peers = false;
    auto [a, b] = pair({"node-a"}, off);
    a.prober->runRound(1);
    EXPECT_EQ(str(run(a), "state"), "declined");
    EXPECT_NE(str(run(a), "reason").find("off on this node (probes.nccl.peers = false)"),
              std::string::npos)
        << core::toJson(run(a));
    core::Value f = b.prober->facts();
    EXPECT_EQ(f.findPath("probes.nccl.peers"), nullptr) << "peers = false renders nothing";
  }
  {
    NodeSpec without("node-b");
    without.kind = false;
    auto [a, b] = pair({"node-a"}, without);
    a.prober->runRound(1);
    EXPECT_EQ(str(run(a), "state"), "declined");
    EXPECT_NE(str(run(a), "reason").find("does not run NCCL peer runs"), std::string::npos)
        << core::toJson(run(a));
  }
  {
    // b's own NCCL probe holds its GPUs.
    auto [a, b] = pair({"node-a"}, {"node-b"});
    auto hold = b.gate->tryAcquire("the local NCCL probe");
    ASSERT_TRUE(hold);
    a.prober->runRound(1);
    EXPECT_EQ(str(run(a), "state"), "declined");
    EXPECT_NE(str(run(a), "reason").find("busy: the local NCCL probe"), std::string::npos)
        << core::toJson(run(a));
    EXPECT_EQ(metric(b, "fabricwatch_probe_nccl_served_total", {{"result", "declined"}}), 1);
  }
  {
    // A training job holds one of b's GPUs.
    testing::TempDir host;
    host.write("proc/4242/comm", "python3\n");
    std::filesystem::create_directories(host.path() + "/proc/4242/fd");
    std::filesystem::create_symlink("/dev/nvidia0", host.path() + "/proc/4242/fd/17");
    NodeSpec busy{"node-b"};
    busy.rootfs = host.path();
    auto [a, b] = pair({"node-a"}, busy);
    a.prober->runRound(1);
    EXPECT_EQ(str(run(a), "state"), "declined");
    EXPECT_NE(str(run(a), "reason").find("the GPUs are in use: python3 (pid 4242)"),
              std::string::npos)
        << core::toJson(run(a));
    EXPECT_EQ(str(served(b), "state"), "declined");

    // The same job on a: a skips the run and never asks b.
    NodeSpec busy_a{"node-a"};
    busy_a.rootfs = host.path();
    auto [a2, b2] = pair(busy_a, {"node-b"});
    a2.prober->runRound(1);
    EXPECT_EQ(str(run(a2), "state"), "skipped");
    EXPECT_NE(str(run(a2), "reason").find("python3 (pid 4242)"), std::string::npos);
    EXPECT_EQ(run(a2).find("gpu_holders")->size(), 1u);
    EXPECT_EQ(served(b2).find("state"), nullptr) << "b2 was never asked";
  }
  {
    // a's own local probe is running: a skips.
    auto [a, b] = pair({"node-a"}, {"node-b"});
    auto hold = a.gate->tryAcquire("the local NCCL probe");
    a.prober->runRound(1);
    EXPECT_EQ(str(run(a), "state"), "skipped");
    EXPECT_NE(str(run(a), "reason").find("the local NCCL probe"), std::string::npos);
  }
  EXPECT_EQ(zombieChildren(), 0);
}

// Issue 23, item 6: a member (it holds the secret) asked for runs back to back (1,862 accepted
// in 20 s, 93 spawns/s) and for sizes, iterations and ranks far beyond this node's own. Now a
// member gets one run per probes.nccl.serve_min_interval, and a request beyond this node's
// sizes, warmup, iterations or rank 1 of 2 is declined with its reason. Over the real channel.
TEST_F(NcclKindTest, AMemberCannotMakeThisNodeRunNcclBackToBackOrBeyondItsBounds) {
  if (!testing::haveNccl())
    FW_UNAVAILABLE("nccl") << "libnccl.so.2 or libcudart.so is not installed here";
  NodeSpec spec("node-b");
  spec.serve_min_interval = 60s;
  spec.timeout = 5s;
  Node b = node(spec, "127.0.0.1:1");
  auto request = [](uint64_t session) {
    NcclRunRequest r;
    r.session = session;
    r.prober = "node-a";
    r.unique_id = std::string(256, 'a');
    r.operation = "all_reduce";
    r.timeout_ms = 5000;
    r.warmup = 1;
    r.iterations = 2;
    r.sizes = {1 << 20};
    return r;
  };
  auto ask = [&](const NcclRunRequest& r) {
    ChannelClient c(kSecret);
    CallResult res = c.connect(b.address, 2s);
    if (res.failure == ChannelFailure::kNone)
      res = c.call(kNcclRunRequest, encodeNcclRunRequest(r), kNcclRunReply, 2s);
    return res;
  };
  // Beyond this node's bounds: declined whatever the spacing, nothing spawned.
  struct Beyond {
    const char* what;
    std::function<void(NcclRunRequest&)> change;
    const char* reason;
  };
  std::vector<Beyond> beyond = {
      {"16 x 16 GiB", [](NcclRunRequest& r) { r.sizes.assign(16, uint64_t{16} << 30); },
       "more than this node runs (1, probes.nccl.sizes)"},
      {"a size of 16 GiB", [](NcclRunRequest& r) { r.sizes = {uint64_t{16} << 30}; },
       "17179869184 bytes, more than this node's largest size (1048576"},
      {"10,000 iterations", [](NcclRunRequest& r) { r.iterations = 10000; },
       "10000 iterations, more than this node runs (2"},
      {"1,000 warm-up iterations", [](NcclRunRequest& r) { r.warmup = 1000; },
       "warm-up iterations, more than this node runs (1"},
      {"65,535 ranks", [](NcclRunRequest& r) { r.nranks = 65535; }, "rank 1 of 65535"},
  };
  uint64_t session = 1;
  for (const auto& x : beyond) {
    NcclRunRequest r = request(session++);
    x.change(r);
    CallResult res = ask(r);
    ASSERT_TRUE(res.declined) << x.what << " was accepted";
    EXPECT_NE(res.declined->find(x.reason), std::string::npos) << x.what << ": " << *res.declined;
  }
  // Back to back for 2 s (at most 3,000: past 4,096 frames in the timestamp window the channel's
  // replay guard refuses this address's frames anyway, its own share): one run accepted, every
  // other request declined "busy" at once.
  int accepted = 0, spaced = 0, asked = 0;
  std::map<std::string, int> other;
  auto end = Clock::now() + 2s;
  while (Clock::now() < end && asked < 3000) {
    CallResult res = ask(request(session++));
    ++asked;
    if (res.ok())
      ++accepted;
    else if (res.declined && res.declined->find("serve_min_interval") != std::string::npos)
      ++spaced;
    else
      ++other[res.declined ? *res.declined : res.error];
  }
  for (const auto& [why, n] : other) std::printf("  %d: %s\n", n, why.c_str());
  std::printf("back to back: %d run requests, %d accepted, %d declined by the interval\n", asked,
              accepted, spaced);
  EXPECT_EQ(accepted, 1);
  EXPECT_EQ(spaced, asked - 1);
  EXPECT_TRUE(other.empty());
  EXPECT_GT(asked, 10);
  EXPECT_EQ(metric(b, "fabricwatch_probe_nccl_served_total", {{"result", "declined"}}),
            static_cast<double>(asked - 1 + beyond.size()));
  b.prober->stop();
  EXPECT_EQ(zombieChildren(), 0);
}

// Issue 23, item 6: probes.nccl.served[].prober recorded whatever name the sender claimed. The
// channel authenticates members, not names; a request's prober must be the name the member at
// the sender's address answered this node's echoes with.
TEST_F(NcclKindTest, ARunRequestMustNameTheMemberThatSendsIt) {
  if (!testing::haveNccl())
    FW_UNAVAILABLE("nccl") << "libnccl.so.2 or libcudart.so is not installed here";
  NodeSpec without("node-a");
  without.kind = false;  // so that b's own round with a declines at once, freeing b's gate
  Node a = node(without, "127.0.0.1:1");
  Node b = node({"node-b"}, a.address);  // b lists a, at 127.0.0.1
  b.prober->runRound(1);                 // b's knock: a answers as node-a
  auto ask = [&](const std::string& prober, uint64_t session) {
    NcclRunRequest r;
    r.session = session;
    r.prober = prober;
    r.unique_id = std::string(256, 'a');
    r.operation = "all_reduce";
    r.timeout_ms = 5000;
    r.warmup = 1;
    r.iterations = 2;
    r.sizes = {1 << 20};
    ChannelClient c(kSecret);
    CallResult res = c.connect(b.address, 2s);
    if (res.failure == ChannelFailure::kNone)
      res = c.call(kNcclRunRequest, encodeNcclRunRequest(r), kNcclRunReply, 2s);
    return res;
  };
  CallResult forged = ask("node-z", 1);
  ASSERT_TRUE(forged.declined) << "a forged prober name was accepted";
  EXPECT_NE(forged.declined->find("names its prober \"node-z\", but the member at 127.0.0.1 is "
                                  "node-a"),
            std::string::npos)
      << *forged.declined;
  CallResult real = ask("node-a", 2);
  EXPECT_TRUE(real.ok()) << (real.declined ? *real.declined : real.error);
  b.prober->stop();
  EXPECT_EQ(zombieChildren(), 0);
}

TEST_F(NcclKindTest, ATimeoutOnEitherSideEndsTheRunAsTimeout) {
  if (!testing::haveNccl())
    FW_UNAVAILABLE("nccl") << "libnccl.so.2 or libcudart.so is not installed here";
  NodeSpec hang{"node-b"};
  hang.test_mode = "hang_in_init";
  hang.timeout = 1500ms;
  NodeSpec quick{"node-a"};
  quick.timeout = 1500ms;
  {
    auto [a, b] = pair(quick, hang);  // the peer's rank 1 hangs
    auto t0 = Clock::now();
    a.prober->runRound(1);
    EXPECT_LT(Clock::now() - t0, 20s);
    core::Value r = run(a);
    EXPECT_EQ(str(r, "state"), "timeout") << core::toJson(r);
    EXPECT_EQ(str(r, "peer.state"), "timeout");
    EXPECT_NE(str(r, "reason").find("node-b: the probe process timed out"), std::string::npos)
        << core::toJson(r);
    EXPECT_EQ(str(served(b), "state"), "timeout");
  }
  {
    hang.name = "node-a";
    quick.name = "node-b";
    auto [a, b] = pair(hang, quick);  // this side's rank 0 hangs after making the id
    a.prober->runRound(1);
    core::Value r = run(a);
    EXPECT_EQ(str(r, "state"), "timeout") << core::toJson(r);
    EXPECT_EQ(str(r, "self.state"), "timeout");
    EXPECT_EQ(str(r, "peer.state"), "unavailable") << "the peer still ran and said why";
    EXPECT_FALSE(str(r, "self.id").empty());
  }
  EXPECT_EQ(zombieChildren(), 0);
}

TEST_F(NcclKindTest, APeerThatVanishesMidRunEndsTheRunAtOnce) {
  if (!testing::haveNccl())
    FW_UNAVAILABLE("nccl") << "libnccl.so.2 or libcudart.so is not installed here";
  NodeSpec ha{"node-a"}, hb{"node-b"};
  ha.test_mode = hb.test_mode = "hang_in_init";  // both wait for each other, as NCCL would
  ha.timeout = hb.timeout = 120s;
  auto [a, b] = pair(ha, hb);
  auto t0 = Clock::now();
  std::thread round([&a = a] { a.prober->runRound(1); });
  ASSERT_TRUE(waitServing(b)) << core::toJson(b.prober->facts());
  // b publishes "running" before its reply to the run request is written: stopping b then
  // leaves a without a reply ("unreachable"). a polls b's status only once it has the reply, so
  // two more frames on b's channel mean a follows the run.
  const double frames = metric(b, "fabricwatch_peer_channel_frames_total", {});
  auto followed = Clock::now() + 30s;
  while (metric(b, "fabricwatch_peer_channel_frames_total", {}) < frames + 2 &&
         Clock::now() < followed)
    std::this_thread::sleep_for(10ms);
  b.prober->stop();  // its channel closes, its child is killed and reaped
  round.join();
  EXPECT_LT(Clock::now() - t0, 60s) << "the run ended long before its 120 s timeout";
  core::Value r = run(a);
  EXPECT_EQ(str(r, "state"), "lost") << core::toJson(r);
  EXPECT_NE(str(r, "reason").find("node-b stopped answering during the run"), std::string::npos)
      << core::toJson(r);
  EXPECT_EQ(str(r, "self.state"), "cancelled") << "a's child waited for its peer: cancelled";
  EXPECT_EQ(str(served(b), "state"), "cancelled");
  EXPECT_EQ(zombieChildren(), 0);
}

TEST_F(NcclKindTest, AProberThatStopsCancelsBothSides) {
  if (!testing::haveNccl())
    FW_UNAVAILABLE("nccl") << "libnccl.so.2 or libcudart.so is not installed here";
  NodeSpec ha{"node-a"}, hb{"node-b"};
  ha.test_mode = hb.test_mode = "hang_in_init";
  ha.timeout = hb.timeout = 120s;
  auto [a, b] = pair(ha, hb);
  auto t0 = Clock::now();
  std::thread round([&a = a] { a.prober->runRound(1); });
  ASSERT_TRUE(waitServing(b)) << core::toJson(b.prober->facts());
  a.prober->requestStop();  // shutdown or reload
  round.join();
  EXPECT_LT(Clock::now() - t0, 60s);
  auto deadline = Clock::now() + 30s;
  while (str(served(b), "state") == "running" && Clock::now() < deadline)
    std::this_thread::sleep_for(20ms);
  EXPECT_EQ(str(served(b), "state"), "cancelled") << core::toJson(b.prober->facts());
  EXPECT_EQ(b.gate->holder(), "") << "b's gate is free again";
  EXPECT_EQ(a.gate->holder(), "");
  EXPECT_EQ(zombieChildren(), 0);
}

}  // namespace
}  // namespace fabricwatch::probes::nccl
