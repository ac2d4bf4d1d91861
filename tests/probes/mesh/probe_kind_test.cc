// The probe-kind seam, proven with a kind that exists only in this file. "token" is shaped like
// the fabric probe's endpoint-name exchange: a request type of its own on the peer channel, a
// server-side handler that sees who asks, a per-peer cache that holds until the peer restarts,
// and its own facts, metrics and /api/v1/peers part. It is registered here, enabled from the
// configuration by name, and runs through the real channel server and prober over loopback:
// nothing in probes/mesh names it.
#include "probes/mesh/probe_kind.h"

#include <gtest/gtest.h>

#include <mutex>
#include <set>

#include "config/loader.h"
#include "core/value_format.h"
#include "probes/mesh/channel_client.h"
#include "probes/peer_setup.h"
#include "tests/support/temp_dir.h"

namespace fabricwatch::probes {
namespace {

constexpr auto kTokenRequest = static_cast<FrameType>(static_cast<int>(FrameType::kPrivateFirst));
constexpr auto kTokenReply = static_cast<FrameType>(static_cast<int>(FrameType::kPrivateFirst) + 1);

// What every token kind in this process served, for the assertions.
struct ServedLog {
  std::mutex mu;
  std::vector<std::string> senders;
  int requests() {
    std::lock_guard lock(mu);
    return static_cast<int>(senders.size());
  }
};
ServedLog& served() {
  static ServedLog log;
  return log;
}

struct TokenResult : ProbeResult {
  std::string token;
  bool fetched = false;  // asked for now (else from the cache)
  std::string error;
};

struct TokenTotals : ProbeTotals {
  uint64_t fetches = 0;
};

class TokenKind : public ProbeKind {
 public:
  explicit TokenKind(const KindSetup& s)
      : secret_(s.secret), token_(s.node_name + "-" + std::to_string(randomNonce() % 100000)) {}

  std::string_view name() const override { return "token"; }
  ProbeSchedule schedule() const override { return {.timeout = std::chrono::seconds(2)}; }

  std::vector<RequestHandler> handlers() override {
    return {{kTokenRequest, kTokenReply, 16, [this](std::string_view payload, const Sender& from) {
               if (payload != "token?") return Answer::malformed();
               std::lock_guard lock(served().mu);
               served().senders.push_back(from.address);
               return Answer::reply(token_);
             }}};
  }

  std::shared_ptr<const ProbeResult> probe(const PeerContext& ctx) override {
    auto r = std::make_shared<TokenResult>();
    {
      std::lock_guard lock(mu_);
      auto it = cache_.find(ctx.peer.address);
      if (it != cache_.end() && it->second.first == ctx.peer.instance) {
        r->token = it->second.second;
        r->answered = true;
        return r;
      }
    }
    ChannelClient client(secret_);
    CallResult c = client.connect(ctx.channel_address, std::chrono::seconds(1));
    if (c.ok()) c = client.call(kTokenRequest, "token?", kTokenReply, std::chrono::seconds(1));
    r->answered = c.failure == ChannelFailure::kNone;
    if (!c.ok()) {
      r->error = c.declined ? "declined: " + *c.declined : c.error;
      return r;
    }
    r->token = c.payload;
    r->fetched = true;
    std::lock_guard lock(mu_);
    cache_[ctx.peer.address] = {ctx.peer.instance, r->token};
    return r;
  }

  std::shared_ptr<const ProbeTotals> account(const std::vector<PeerProbe>& run) override {
    for (const auto& p : run) totals_.fetches += resultAs<TokenResult>(p).fetched;
    return std::make_shared<const TokenTotals>(totals_);
  }

  core::Value facts(const KindView& view) const override {
    core::Value peers = core::Value::list();
    for (const auto& p : view.results) peers.push(entry(p));
    return core::Value::map(
        {{"peers", std::move(peers)},
         {"fetches", static_cast<int64_t>(totalsAs<TokenTotals>(view).fetches)}});
  }
  void metrics(const KindView& view, core::MetricFamilies& out) const override {
    auto f = core::counterFamily("fabricwatch_test_token_fetches_total", "Tokens fetched.");
    core::addSample(f, {}, static_cast<double>(totalsAs<TokenTotals>(view).fetches));
    out.push_back(std::move(f));
  }
  void peerStatus(const PeerProbe& p, core::Value& e) const override { e["token"] = entry(p); }

 private:
  static core::Value entry(const PeerProbe& p) {
    const auto& r = resultAs<TokenResult>(p);
    core::Value v = core::Value::map({{"address", p.peer.address}, {"fetched", r.fetched}});
    if (!r.token.empty()) v["token"] = r.token;
    if (!r.error.empty()) v["error"] = r.error;
    return v;
  }

  std::string secret_;
  std::string token_;  // what this node hands out; new with every instance of the kind
  std::mutex mu_;
  std::map<std::string, std::pair<uint64_t, std::string>> cache_;  // address -> (instance, token)
  TokenTotals totals_;
};

// Registered off by default, so the other tests of this binary never run it.
const bool kRegistered = [] {
  registerProbeKind({"token", false, [](const KindSetup& s) {
                       return core::Result<std::shared_ptr<ProbeKind>>(
                           std::make_shared<TokenKind>(s));
                     }});
  return true;
}();

class ProbeKindTest : public ::testing::Test {
 protected:
  // A node from configuration text, as `serve` builds it, on 127.0.0.1.
  std::shared_ptr<PeerProber> node(const std::string& name, const std::string& listen,
                                   const std::string& peers, bool token = true) {
    std::string text = "[peer]\nnode_name = \"" + name + "\"\nsecret_file = \"" + secret_ +
                       "\"\nlisten_address = \"" + listen + "\"\n[probe]\ninterval = \"1h\"\n" +
                       "peers = [\"" + peers + "\"]\n" +
                       "[probes.tcp]\nconnect_timeout = \"500ms\"\necho_timeout = \"500ms\"\n" +
                       "[probes.dns]\nenabled = false\n" +
                       "[probes.token]\nenabled = " + (token ? "true" : "false") + "\n";
    config::LoadOptions opts;
    opts.known_probe_kinds = probeKindNames();
    auto cfg = config::loadConfig(text, name + ".toml", opts);
    EXPECT_TRUE(cfg.ok()) << core::formatAll(cfg.problems);
    auto p = makePeerProber(cfg.config);
    EXPECT_TRUE(p) << p.error().message;
    EXPECT_TRUE((*p)->start(/*rounds=*/false));
    return *p;
  }
  // a's one token result as in its facts (an empty map when there is none), and its fields.
  static core::Value token(const PeerProber& a) {
    core::Value facts = a.facts();
    const core::Value* peers = facts.findPath("probes.token.peers");
    return peers && peers->asList().size() == 1 ? peers->asList()[0] : core::Value::map();
  }
  static std::string str(const core::Value& v, const char* key) {
    const core::Value* x = v.find(key);
    return x && x->isString() ? x->asString() : "";
  }
  static bool fetched(const core::Value& v) {
    const core::Value* x = v.find("fetched");
    return x && x->asBool();
  }

  testing::TempDir dir_;
  std::string secret_ = dir_.write("secret", "probe-kind-test-secret-0123456789\n");
};

TEST_F(ProbeKindTest, ATestOnlyKindRunsEndToEndThroughTheMesh) {
  ASSERT_TRUE(kRegistered);
  // b lists a port where nothing listens: a mesh needs a member to run at all.
  auto b = node("b", "127.0.0.1:0", "127.0.0.1:1");
  std::string b_addr = "127.0.0.1:" + std::to_string(b->port());
  auto a = node("a", "127.0.0.1:0", b_addr);
  int before = served().requests();

  // Round 1: b answers the knock, then the tcp kind, then the token kind asks b's channel.
  a->runRound(1);
  core::Value t = token(*a);
  EXPECT_TRUE(fetched(t)) << core::toJson(a->facts());
  std::string first = str(t, "token");
  EXPECT_EQ(first.rfind("b-", 0), 0u) << first;
  core::Value facts = a->facts();
  const core::Value* fetches = facts.findPath("probes.token.fetches");
  EXPECT_EQ(fetches ? fetches->asInt() : -1, 1);
  ASSERT_EQ(served().requests(), before + 1);
  EXPECT_EQ(served().senders.back(), "127.0.0.1");  // the handler saw who asked

  core::MetricFamilies fams;
  a->renderMetrics(fams);
  std::set<std::string> names;
  for (const auto& f : fams) names.insert(f.name);
  EXPECT_TRUE(names.count("fabricwatch_test_token_fetches_total"));
  EXPECT_TRUE(names.count("fabricwatch_probe_tcp_peer_up"));
  EXPECT_FALSE(names.count("fabricwatch_probe_dns_lookups_total"));  // dns is off here
  core::Value status = a->status();
  ASSERT_EQ(status.find("results")->asList().size(), 1u);
  const core::Value& entry = status.find("results")->asList()[0];
  EXPECT_TRUE(entry.find("reachable")->asBool());
  EXPECT_EQ(str(*entry.find("token"), "token"), first);

  // Round 2: the token is cached while b's instance stays the same.
  a->runRound(2);
  EXPECT_FALSE(fetched(token(*a)));
  EXPECT_EQ(served().requests(), before + 1);

  // b restarts on the same port: its echo carries a new instance, so a asks again.
  b->stop();
  b = node("b", b_addr, "127.0.0.1:1");
  a->runRound(3);
  t = token(*a);
  EXPECT_TRUE(fetched(t));
  EXPECT_NE(str(t, "token"), first);
  EXPECT_EQ(served().requests(), before + 2);

  // A node without the kind declines the request, and says why.
  b->stop();
  b = node("b", b_addr, "127.0.0.1:1", /*token=*/false);
  a->runRound(4);
  t = token(*a);
  EXPECT_NE(str(t, "error").find("request type 240 is not served"), std::string::npos)
      << core::toJson(t);
  a->stop();
  b->stop();
}

TEST_F(ProbeKindTest, KindsAreNamedInTheConfiguration) {
  config::LoadOptions opts;
  opts.known_probe_kinds = probeKindNames();
  auto r = config::loadConfig("[probes.tokn]\nenabled = true\n", "t.toml", opts);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.problems[0].line, 1);
  EXPECT_NE(r.problems[0].message.find(
                "unknown probe kind \"tokn\" (known: tcp, dns, fabric, nccl, token)"),
            std::string::npos)
      << r.problems[0].message;
}

}  // namespace
}  // namespace fabricwatch::probes
