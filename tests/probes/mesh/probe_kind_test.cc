// The probe-kind seam, proven with a kind that exists only in the tests (token_kind.h): its
// registration alone gives it a configuration table, its flag, its frame range and an optional
// series; it is enabled from the configuration by name and runs through the real channel server
// and prober over loopback. Nothing in probes/ names it.
#include "probes/mesh/probe_kind.h"

#include <gtest/gtest.h>

#include <mutex>
#include <set>

#include "config/loader.h"
#include "core/value_format.h"
#include "probes/mesh/channel_client.h"
#include "probes/peer_setup.h"
#include "probes/registry.h"
#include "tests/probes/mesh/token_kind.h"
#include "tests/support/registry.h"
#include "tests/support/temp_dir.h"

namespace fabricwatch::probes {
namespace {

using namespace token;

// Registered once for this binary (off by default: only the tests that ask run it).
const bool kRegistered = [] {
  registerProbeKind(tokenKindRegistration());
  return true;
}();

class ProbeKindTest : public ::testing::Test {
 protected:
  // A node from configuration text, as `serve` builds it, on 127.0.0.1.
  std::shared_ptr<PeerProber> node(const std::string& name, const std::string& listen,
                                   const std::string& peers, bool token = true,
                                   const std::string& token_keys = "") {
    std::string text =
        "[peer]\nnode_name = \"" + name + "\"\nsecret_file = \"" + secret_ +
        "\"\nlisten_address = \"" + listen + "\"\n[probe]\ninterval = \"1h\"\n" + "peers = [\"" +
        peers + "\"]\n" + "[probes.tcp]\nconnect_timeout = \"500ms\"\necho_timeout = \"500ms\"\n" +
        "[probes.dns]\nenabled = false\n" +
        "[probes.token]\nenabled = " + (token ? "true" : "false") + "\n" + token_keys;
    auto cfg = config::loadConfig(text, name + ".toml", testing::kindLoadOptions());
    EXPECT_TRUE(cfg.ok()) << core::formatAll(cfg.problems);
    // The optional series the configuration turns on, as the daemon hands them to the kinds.
    auto selection = std::make_shared<core::MetricSelection>();
    for (const auto& [table, selectors] : cfg.config.metrics.extra)
      for (const auto& s : selectors) selection->add(*core::parseSelector(s, nullptr));
    auto p = makePeerProber(cfg.config, "", selection);
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
  EXPECT_EQ(first.rfind("tok-b-", 0), 0u) << first;  // [probes.token] prefix's default
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
  EXPECT_FALSE(names.count(kTokenCacheFamily)) << "optional: off unless extra_metrics asks";
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
  EXPECT_NE(str(t, "error").find("request type 200 is not served"), std::string::npos)
      << core::toJson(t);
  a->stop();
  b->stop();
}

// What the registration brings besides the kind: its table's keys (checked, positioned), its
// optional family (served when [probes.token] extra_metrics names it), its frame range (checked
// against every other kind's).
TEST_F(ProbeKindTest, ItsRegistrationBringsKeysOptionalSeriesAndFrames) {
  ASSERT_TRUE(kRegistered);
  auto bad =
      config::loadConfig("[probes.token]\nprefix = \"\"\n", "t.toml", testing::kindLoadOptions());
  ASSERT_EQ(bad.problems.size(), 1u);
  EXPECT_EQ(bad.problems[0].line, 2);
  EXPECT_EQ(bad.problems[0].column, 10);
  EXPECT_EQ(bad.problems[0].message, "prefix must be 1 to 16 characters");
  auto wrong = config::loadConfig("[probes.token]\nextra_metrics = [\"fabricwatch_test_nope\"]\n",
                                  "t.toml", testing::kindLoadOptions());
  ASSERT_EQ(wrong.problems.size(), 1u);
  EXPECT_NE(wrong.problems[0].message.find("(optional: fabricwatch_test_token_cache_entries)"),
            std::string::npos)
      << wrong.problems[0].message;

  auto b = node("b", "127.0.0.1:0", "127.0.0.1:1", true, "prefix = \"x\"\n");
  auto a = node("a", "127.0.0.1:0", "127.0.0.1:" + std::to_string(b->port()), true,
                "extra_metrics = [\"fabricwatch_test_token_cache_entries\"]\n");
  a->runRound(1);
  EXPECT_EQ(str(token(*a), "token").rfind("x-b-", 0), 0u) << core::toJson(a->facts());
  core::MetricFamilies fams;
  a->renderMetrics(fams);
  bool cache = false;
  for (const auto& f : fams) cache = cache || f.name == kTokenCacheFamily;
  EXPECT_TRUE(cache);
  a->stop();
  b->stop();

  EXPECT_EQ(checkFrameRanges(probeKinds()), std::nullopt);
  KindRegistration clash = tokenKindRegistration();
  clash.name = "clash";
  clash.frames = {30, 4};  // inside the fabric kind's 16-31
  EXPECT_EQ(checkFrameRanges({probeKinds()[2], clash}),
            "probe kind clash's frame types 30-33 overlap probe kind fabric's (16-31)");
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
