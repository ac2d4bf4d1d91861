#include <gtest/gtest.h>

#include <atomic>
#include <set>

#include "config/loader.h"
#include "core/openssl.h"
#include "core/value_format.h"
#include "probes/kinds/tcp/tcp_kind.h"
#include "probes/mesh/peer_prober.h"
#include "probes/mesh/peer_source.h"
#include "probes/peer_setup.h"
#include "tests/support/temp_dir.h"
#include "tests/support/with_openssl.h"

namespace fabricwatch::probes {
namespace {

using namespace std::chrono_literals;
const std::string kProberSecret = "prober-test-secret-0123456789";

// A prober on 127.0.0.1 with an ephemeral port and a static membership.
std::unique_ptr<PeerProber> makeProber(const std::string& name, std::vector<std::string> peers,
                                       const std::string& secret = kProberSecret) {
  std::vector<std::unique_ptr<MembershipSource>> sources;
  sources.push_back(std::make_unique<StaticSource>(std::move(peers)));
  ProberOptions o;
  o.node_name = name;
  o.secret = secret;
  o.channel.listen_address = "127.0.0.1:0";
  o.interval = 1h;  // rounds are driven by the test
  o.peers_per_round = 8;
  o.connect_timeout = 300ms;
  o.echo_timeout = 300ms;
  return std::make_unique<PeerProber>(
      o, std::make_unique<Membership>(std::move(sources), std::chrono::milliseconds(0)),
      std::vector<std::shared_ptr<ProbeKind>>{tcp::makeTcpKind({secret, name, 3, 300ms, 300ms})});
}

// Channel servers that answer echoes (the peers a prober lists), on ephemeral ports.
struct Servers {
  std::vector<std::unique_ptr<ChannelServer>> servers;
  std::vector<std::string> addrs;
};
Servers startServers(std::vector<std::string> names) {
  ChannelServerOptions so;
  so.listen_address = "127.0.0.1:0";
  so.secret = kProberSecret;
  Servers out;
  for (const auto& n : names) {
    so.node_name = n;
    out.servers.push_back(std::make_unique<ChannelServer>(so));
    if (!out.servers.back()->start()) return {};
    out.addrs.push_back("127.0.0.1:" + std::to_string(out.servers.back()->port()));
  }
  return out;
}

const core::Value* peerEntry(const core::Value& facts, const std::string& addr) {
  const core::Value* peers = facts.findPath("probes.tcp.peers");
  if (!peers) return nullptr;
  for (const auto& p : peers->asList())
    if (p.find("address")->asString() == addr) return &p;
  return nullptr;
}

// Probers built by hand, without makePeerProber: OpenSSL is loaded as it would.
class PeerProberTest : public testing::WithOpenSsl {};

TEST_F(PeerProberTest, ProbesAnsweringPeersAndGatesTheRest) {
  ChannelServerOptions so;
  so.listen_address = "127.0.0.1:0";
  so.secret = kProberSecret;
  so.node_name = "peer-b";
  ChannelServer b(so);
  ASSERT_TRUE(b.start());
  std::string b_addr = "127.0.0.1:" + std::to_string(b.port());
  // A listed endpoint where nothing listens: pending, never reported as a failure.
  ChannelServer gone(so);
  ASSERT_TRUE(gone.start());
  std::string gone_addr = "127.0.0.1:" + std::to_string(gone.port());
  gone.stop();

  auto a = makeProber("peer-a", {b_addr, gone_addr});
  ASSERT_TRUE(a->start());
  a->runRound(1);
  core::Value facts = a->facts();
  EXPECT_EQ(facts.findPath("node.name")->asString(), "peer-a");
  EXPECT_EQ(facts.findPath("probes.mesh.active")->asInt(), 1);
  EXPECT_EQ(facts.findPath("probes.mesh.pending")->asInt(), 1);
  const core::Value* e = peerEntry(facts, b_addr);
  ASSERT_NE(e, nullptr) << core::toJson(facts);
  EXPECT_TRUE(e->find("reachable")->asBool());
  EXPECT_EQ(e->find("node")->asString(), "peer-b");
  EXPECT_EQ(e->find("samples_received")->asInt(), 3);
  EXPECT_GT(e->findPath("rtt_seconds.p50")->asDouble(), 0);
  EXPECT_EQ(peerEntry(facts, gone_addr), nullptr);

  // The peer goes away: reported unreachable in the next round, and probed again after.
  b.stop();
  a->runRound(2);
  facts = a->facts();
  e = peerEntry(facts, b_addr);
  ASSERT_NE(e, nullptr);
  EXPECT_FALSE(e->find("reachable")->asBool());
  EXPECT_EQ(e->find("failure")->asString(), "refused");
  EXPECT_EQ(facts.findPath("probes.tcp.unreachable")->asInt(), 1);

  core::MetricFamilies fams;
  a->renderMetrics(fams);
  std::set<std::string> names;
  for (const auto& f : fams) names.insert(f.name);
  for (const char* n : {"fabricwatch_peer_members", "fabricwatch_probe_tcp_rtt_seconds",
                        "fabricwatch_probe_tcp_failures_total", "fabricwatch_probe_tcp_peer_up",
                        "fabricwatch_peer_channel_dropped_total"})
    EXPECT_TRUE(names.count(n)) << n;
  // The prober's own name, as its peers' series name it (peer_node): fleet rules join on it.
  // b's channel answers with its node name, which is the peer_node of a's series about b.
  auto label = [](const prometheus::ClientMetric& m, const std::string& key) {
    for (const auto& l : m.label)
      if (l.name == key) return l.value;
    return std::string("<absent>");
  };
  for (const auto& f : fams) {
    if (f.name == "fabricwatch_peer_self_info") {
      ASSERT_EQ(f.metric.size(), 1u);
      EXPECT_EQ(label(f.metric[0], "peer_node"), "peer-a");
      EXPECT_EQ(f.metric[0].gauge.value, 1);
    }
    if (f.name == "fabricwatch_probe_tcp_peer_up") {
      for (const auto& m : f.metric) {
        if (label(m, "peer") == b_addr) {
          EXPECT_EQ(label(m, "peer_node"), "peer-b");
        }
      }
    }
  }
  EXPECT_TRUE(names.count("fabricwatch_peer_self_info"));
  // A kind that is off renders nothing: no facts, no zero-valued families.
  EXPECT_FALSE(names.count("fabricwatch_probe_dns_resolve_seconds"));
  EXPECT_EQ(facts.findPath("probes.dns"), nullptr);
  a->stop();
}

TEST_F(PeerProberTest, RecognisesItselfAndExpiresOldResults) {
  auto a = makeProber("solo", {});
  ASSERT_TRUE(a->start());
  std::string self = "127.0.0.1:" + std::to_string(a->port());
  a->stop();
  // Rebuild with itself in the list: the knock comes back with its own name.
  std::vector<std::unique_ptr<MembershipSource>> sources;
  sources.push_back(std::make_unique<StaticSource>(std::vector<std::string>{self}));
  ProberOptions o = a->options();
  o.channel.listen_address = self;
  PeerProber p(o, std::make_unique<Membership>(std::move(sources), 0ms),
               {tcp::makeTcpKind({o.secret, o.node_name})});
  ASSERT_TRUE(p.start());
  p.runRound(5);
  core::Value st = p.status();
  ASSERT_EQ(st.find("members")->asList().size(), 1u);
  EXPECT_EQ(st.find("members")->asList()[0].find("state")->asString(), "self");
  EXPECT_TRUE(st.find("round_peers")->asList().empty());
  EXPECT_TRUE(st.find("results")->asList().empty());
  p.stop();
}

TEST_F(PeerProberTest, WrongSecretNeverBecomesActive) {
  ChannelServerOptions so;
  so.listen_address = "127.0.0.1:0";
  so.secret = kProberSecret;
  so.node_name = "b";
  ChannelServer b(so);
  ASSERT_TRUE(b.start());
  auto a = makeProber("a", {"127.0.0.1:" + std::to_string(b.port())}, "some-other-secret-123456");
  ASSERT_TRUE(a->start());
  a->runRound(1);
  a->runRound(2);
  EXPECT_EQ(a->facts().findPath("probes.mesh.pending")->asInt(), 1);
  EXPECT_EQ(b.stats().dropped[static_cast<size_t>(DropReason::kAuth)], 2u);
  a->stop();
}

// A heavy kind: every third round, with a per-node phase, alone. It records the rounds it
// ran in and whether any other probe ran at the same time.
std::atomic<int> g_in_flight{0};

class CountedTcp : public ProbeKind {
 public:
  explicit CountedTcp(std::shared_ptr<ProbeKind> tcp) : tcp_(std::move(tcp)) {}
  std::string_view name() const override { return "tcp"; }
  ProbeSchedule schedule() const override { return tcp_->schedule(); }
  std::shared_ptr<const ProbeResult> probe(const PeerContext& ctx) override {
    g_in_flight++;
    auto r = tcp_->probe(ctx);
    g_in_flight--;
    return r;
  }
  std::shared_ptr<const ProbeTotals> account(const std::vector<PeerProbe>& run) override {
    return tcp_->account(run);
  }
  core::Value facts(const KindView& v) const override { return tcp_->facts(v); }
  void metrics(const KindView& v, core::MetricFamilies& out) const override {
    tcp_->metrics(v, out);
  }
  void peerStatus(const PeerProbe& p, core::Value& e) const override { tcp_->peerStatus(p, e); }

 private:
  std::shared_ptr<ProbeKind> tcp_;
};

class HeavyKind : public ProbeKind {
 public:
  std::string_view name() const override { return "heavy"; }
  ProbeSchedule schedule() const override {
    return {.every_rounds = 3, .jitter = true, .exclusive = true, .timeout = 1s};
  }
  std::shared_ptr<const ProbeResult> probe(const PeerContext& ctx) override {
    if (++g_in_flight != 1) alone = false;
    rounds.insert(ctx.peer.round);
    instances.insert(ctx.peer.instance);
    g_in_flight--;
    return std::make_shared<ProbeResult>();
  }
  core::Value facts(const KindView& v) const override {
    core::Value peers = core::Value::list();
    for (const auto& p : v.results) peers.push(core::Value::map({{"round", p.peer.round}}));
    return core::Value::map({{"peers", std::move(peers)}});
  }
  void metrics(const KindView&, core::MetricFamilies&) const override {}
  void peerStatus(const PeerProbe&, core::Value&) const override {}

  std::set<uint64_t> rounds, instances;  // the round thread only
  bool alone = true;
};

TEST_F(PeerProberTest, KindsRunOnTheirScheduleAndHeavyOnesAlone) {
  Servers bcd = startServers({"b", "c", "d"});
  ASSERT_EQ(bcd.addrs.size(), 3u);
  const auto& addrs = bcd.addrs;
  auto base = makeProber("a", addrs);
  std::vector<std::unique_ptr<MembershipSource>> sources;
  sources.push_back(std::make_unique<StaticSource>(addrs));
  auto heavy = std::make_shared<HeavyKind>();
  PeerProber a(
      base->options(), std::make_unique<Membership>(std::move(sources), 0ms),
      {std::make_shared<CountedTcp>(tcp::makeTcpKind({kProberSecret, "a", 3, 300ms, 300ms})),
       heavy});
  ASSERT_TRUE(a.start(/*rounds=*/false));
  std::vector<size_t> heavy_results;
  for (uint64_t round = 1; round <= 9; ++round) {
    a.runRound(round);
    heavy_results.push_back(a.facts().findPath("probes.heavy.peers")->asList().size());
  }
  // Once in every three rounds, at the same phase, all three peers, nothing else running.
  ASSERT_EQ(heavy->rounds.size(), 3u);
  uint64_t first = *heavy->rounds.begin();
  EXPECT_LE(first, 3u);
  EXPECT_EQ(heavy->rounds, (std::set<uint64_t>{first, first + 3, first + 6}));
  EXPECT_TRUE(heavy->alone);
  // It learned each peer's instance from the echo of the tcp kind before it.
  EXPECT_EQ(heavy->instances.size(), 3u);
  EXPECT_FALSE(heavy->instances.count(0));
  // Its results stay between its runs.
  for (uint64_t round = first; round <= 9; ++round) EXPECT_EQ(heavy_results[round - 1], 3u);
  a.stop();
}

// An exclusive kind whose timeout is longer than the round interval (an NCCL run in 10-second
// rounds): it never finds room, unless it may overrun the round, and then only its first peer
// runs; max_peers bounds a run in any case.
class LongKind : public ProbeKind {
 public:
  explicit LongKind(ProbeSchedule s) : schedule_(s) {}
  std::string_view name() const override { return "long"; }
  ProbeSchedule schedule() const override { return schedule_; }
  std::shared_ptr<const ProbeResult> probe(const PeerContext&) override {
    ++probed;
    return std::make_shared<ProbeResult>();
  }
  core::Value facts(const KindView&) const override { return core::Value::map(); }
  void metrics(const KindView&, core::MetricFamilies&) const override {}
  void peerStatus(const PeerProbe&, core::Value&) const override {}
  int probed = 0;  // the round thread only

 private:
  ProbeSchedule schedule_;
};

TEST_F(PeerProberTest, ExclusiveKindsLongerThanTheRoundRunOnePeerWhenTheyMayOverrun) {
  Servers bcd = startServers({"b", "c", "d"});
  ASSERT_EQ(bcd.addrs.size(), 3u);
  const auto& addrs = bcd.addrs;
  auto base = makeProber("a", addrs);  // interval 1h
  auto run = [&](ProbeSchedule s) {
    std::vector<std::unique_ptr<MembershipSource>> sources;
    sources.push_back(std::make_unique<StaticSource>(addrs));
    auto kind = std::make_shared<LongKind>(s);
    PeerProber a(base->options(), std::make_unique<Membership>(std::move(sources), 0ms), {kind});
    EXPECT_TRUE(a.start(/*rounds=*/false));
    a.runRound(1);
    a.stop();
    return kind->probed;
  };
  EXPECT_EQ(run({.exclusive = true, .timeout = 2h}), 0) << "no room in a 1h round";
  EXPECT_EQ(run({.exclusive = true, .timeout = 2h, .overrun = true}), 1) << "its first peer";
  EXPECT_EQ(run({.exclusive = true, .timeout = 2h, .max_peers = 2, .overrun = true}), 1)
      << "after the first, only while there is room";
  EXPECT_EQ(run({.exclusive = true, .timeout = 1s, .max_peers = 2}), 2);
  EXPECT_EQ(run({.exclusive = true, .timeout = 1s}), 3);
}

TEST(PeerSourceTest, WithoutAMeshReportsNodeNameAndEmptyMembership) {
  PeerSource src(nullptr, "lonely");
  core::Collection c = src.collect({});
  EXPECT_EQ(c.facts.findPath("node.name")->asString(), "lonely");
  EXPECT_EQ(c.facts.findPath("probes.mesh.members")->asInt(), 0);
}

TEST(PeerSetupTest, MeshIsOffByDefaultAndNeverUnauthenticated) {
  auto def = config::loadEmbeddedDefault();
  ASSERT_TRUE(def.ok()) << core::formatAll(def.problems);
  EXPECT_FALSE(def.config.probe.meshEnabled());
  auto none = makePeerProber(def.config);
  ASSERT_TRUE(none);
  EXPECT_EQ(*none, nullptr);

  auto r = config::loadConfig("[probe]\npeers = [\"10.0.0.1:19737\"]\n", "t.toml");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.problems[0].message.find("peer.secret_file"), std::string::npos);

  testing::TempDir dir;
  std::string short_secret = dir.write("short", "abc\n");
  auto c = config::loadConfig(
      "[peer]\nsecret_file = \"" + short_secret + "\"\n[probe]\npeers = [\"10.0.0.1:19737\"]\n",
      "t.toml");
  ASSERT_TRUE(c.ok()) << core::formatAll(c.problems);
  auto p = makePeerProber(c.config);
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().message.find("at least 16"), std::string::npos);
}

// The mesh authenticates every frame with HMAC-SHA256 (libcrypto): it loads OpenSSL when it is
// built, and without the library it does not start, with an error that says why. A fresh
// process ("threadsafe" death test) where nothing loaded OpenSSL before.
TEST(PeerSetupTest, WithoutOpenSslTheMeshDoesNotStart) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        auto run = [] {
          auto def = config::loadEmbeddedDefault();
          bool off = def.ok() && makePeerProber(def.config).ok() && !core::openssl::loaded();
          core::openssl::testing::useLibrary("libssl.so.0-fabricwatch-missing");
          testing::TempDir dir;
          std::string secret = dir.write("secret", "0123456789abcdef0123\n");
          auto c = config::loadConfig(
              "[peer]\nsecret_file = \"" + secret + "\"\n[probe]\npeers = [\"10.0.0.1:19737\"]\n",
              "t.toml");
          auto p = makePeerProber(c.config);
          std::fprintf(stderr, "%s\n", p ? "built" : p.error().message.c_str());
          return off && c.ok() && !p ? 3 : 0;
        };
        std::exit(run());
      },
      ::testing::ExitedWithCode(3),
      "the peer mesh \\(HMAC-SHA256 frames\\) needs libssl\\.so\\.0-fabricwatch-missing "
      "\\(OpenSSL 3\\): .*cannot open shared object file");
}

TEST(PeerSetupTest, ConfigKeysAreCheckedWithPositions) {
  auto r = config::loadConfig("[probe]\npeers = [\"no-port\"]\npeers_per_round = 0\n", "t.toml");
  ASSERT_EQ(r.problems.size(), 2u);
  EXPECT_EQ(r.problems[0].line, 2);
  EXPECT_NE(r.problems[0].message.find("HOST:PORT"), std::string::npos);
  EXPECT_EQ(r.problems[1].line, 3);
}

TEST(DnsProbeTest, ResolvesLocalhostAndFailsUnknownNames) {
  DnsResult ok = resolveHost("localhost", 2s);
  EXPECT_TRUE(ok.ok) << ok.error;
  EXPECT_FALSE(ok.addresses.empty());
  DnsResult bad = resolveHost("does-not-exist.invalid", 2s);
  EXPECT_FALSE(bad.ok);
  EXPECT_FALSE(bad.error.empty());
}

}  // namespace
}  // namespace fabricwatch::probes
