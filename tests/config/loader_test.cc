#include "config/loader.h"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/paths.h"
#include "tests/support/temp_dir.h"

namespace fabricwatch::config {
namespace {

using std::chrono::milliseconds;

// The one problem a text produces, as "line:col: message".
std::string problem(const std::string& text, const LoadOptions& opts = {}) {
  auto r = loadConfig(text, "t.toml", opts);
  if (r.problems.size() != 1)
    return "expected 1 problem, got " + std::to_string(r.problems.size()) + "\n" +
           core::formatAll(r.problems);
  const auto& d = r.problems[0];
  return std::to_string(d.line) + ":" + std::to_string(d.column) + ": " + d.message;
}

TEST(LoaderTest, EmbeddedDefaultIsValidAndMatchesStructDefaults) {
  // The default configures the node sources by name (the workloads source is off by default).
  auto r = loadEmbeddedDefault(
      {{"kernel", "rdma", "net", "gpu", "memory", "software", "nccl", "workloads"}});
  ASSERT_TRUE(r.ok()) << core::formatAll(r.problems);
  Config plain;
  EXPECT_EQ(r.config.web.listen_address, plain.web.listen_address);
  EXPECT_EQ(r.config.web.threads, plain.web.threads);
  EXPECT_EQ(r.config.web.max_request_bytes, plain.web.max_request_bytes);
  EXPECT_EQ(r.config.web.request_timeout, plain.web.request_timeout);
  EXPECT_EQ(r.config.collect.interval, plain.collect.interval);
  EXPECT_EQ(r.config.collect.timeout, plain.collect.timeout);
  EXPECT_EQ(r.config.collect.jitter, plain.collect.jitter);
  EXPECT_EQ(r.config.host.rootfs, plain.host.rootfs);
  EXPECT_EQ(r.config.log.level, plain.log.level);
  EXPECT_EQ(r.config.log.format, plain.log.format);
}

// docs/configuration.md: a file needs only the keys it changes. It overlays the embedded default
// key by key, tables included, so a file that does not mention [collect.sources.workloads]
// leaves that source off (on a bare Config{} every source would be on).
TEST(LoaderTest, FileOverlaysTheEmbeddedDefaultKeyByKey) {
  auto def = loadEmbeddedDefault();
  ASSERT_TRUE(def.ok());
  auto r = loadConfig("[log]\nlevel = \"debug\"\n", "one-key.toml");
  ASSERT_TRUE(r.ok()) << core::formatAll(r.problems);
  Config expected = def.config;
  expected.log.level = core::log::Level::kDebug;
  EXPECT_TRUE(r.config == expected) << "a key the file does not set lost its default";
  EXPECT_FALSE(r.config.sourceConfig("workloads").enabled);
  EXPECT_EQ(r.config.sourceConfig("kernel").interval, milliseconds(60000));
  EXPECT_EQ(r.config.collect.sources, def.config.collect.sources);
  EXPECT_EQ(r.config.web, def.config.web);
  EXPECT_EQ(r.config.peer, def.config.peer);
  EXPECT_EQ(r.config.probe, def.config.probe);
  EXPECT_EQ(r.config.policy, def.config.policy);

  // Inside a table too: turning the kernel source off keeps its default interval, and the
  // workloads source stays off.
  auto t = loadConfig("[collect.sources.kernel]\nenabled = false\n", "table.toml");
  ASSERT_TRUE(t.ok()) << core::formatAll(t.problems);
  EXPECT_FALSE(t.config.sourceConfig("kernel").enabled);
  EXPECT_EQ(t.config.sourceConfig("kernel").interval, milliseconds(60000));
  EXPECT_FALSE(t.config.sourceConfig("workloads").enabled);
  EXPECT_TRUE(t.config.sourceConfig("rdma").enabled);
}

TEST(LoaderTest, ShippedFileIsTheEmbeddedDefault) {
  testing::TempDir d;
  auto shipped = loadConfigFile(testing::sourceDir() + "/config/fabricwatch.toml");
  ASSERT_TRUE(shipped.ok()) << core::formatAll(shipped.problems);
  std::ifstream in(testing::sourceDir() + "/config/fabricwatch.toml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, embeddedDefaultToml());
}

TEST(LoaderTest, ReadsEveryKey) {
  auto r = loadConfig(R"(
[web]
listen_address = "127.0.0.1:9999"
threads = 8
max_request_bytes = 4096
request_timeout = "2s"
[log]
level = "debug"
format = "json"
[host]
rootfs = "/host"
[collect]
interval = "1m"
timeout = "5s"
jitter = 0.25
[collect.sources.kernel]
enabled = false
interval = "2m"
timeout = "1s"
)",
                      "t.toml");
  ASSERT_TRUE(r.ok()) << core::formatAll(r.problems);
  const Config& c = r.config;
  EXPECT_EQ(c.web.listen_address, "127.0.0.1:9999");
  EXPECT_EQ(c.web.threads, 8);
  EXPECT_EQ(c.web.max_request_bytes, 4096);
  EXPECT_EQ(c.web.request_timeout, milliseconds(2000));
  EXPECT_EQ(c.log.level, core::log::Level::kDebug);
  EXPECT_EQ(c.log.format, core::log::Format::kJson);
  EXPECT_EQ(c.host.rootfs, "/host");
  EXPECT_EQ(c.collect.interval, milliseconds(60000));
  EXPECT_EQ(c.collect.timeout, milliseconds(5000));
  EXPECT_DOUBLE_EQ(c.collect.jitter, 0.25);
  auto k = c.sourceConfig("kernel");
  EXPECT_FALSE(k.enabled);
  EXPECT_EQ(k.interval, milliseconds(120000));
  EXPECT_EQ(k.timeout, milliseconds(1000));
  auto other = c.sourceConfig("rdma");
  EXPECT_TRUE(other.enabled);
  EXPECT_EQ(other.interval, milliseconds(60000)) << "sources inherit [collect]";
}

TEST(LoaderTest, UnknownKeyIsPositioned) {
  EXPECT_EQ(problem("[web]\nlisten_adress = \":1\"\n"), "2:1: unknown key \"web.listen_adress\"");
}

TEST(LoaderTest, UnknownTableIsPositioned) {
  EXPECT_EQ(problem("[webb]\nx = 1\n"), "1:2: unknown table [webb]");
}

TEST(LoaderTest, WrongTypeIsPositioned) {
  EXPECT_EQ(problem("[web]\nthreads = \"four\"\n"), "2:11: expected an integer, got string");
  EXPECT_EQ(problem("[collect.sources.kernel]\nenabled = 1\n"),
            "2:11: expected true or false, got integer");
}

TEST(LoaderTest, OutOfRangeIsPositioned) {
  EXPECT_EQ(problem("[web]\nthreads = 0\n"), "2:11: value 0 out of range [1, 64]");
  EXPECT_EQ(problem("[collect]\njitter = 0.9\n"), "2:10: value 0.9 out of range [0, 0.5]");
  EXPECT_EQ(problem("[collect]\ninterval = \"10ms\"\ntimeout = \"50ms\"\n"),
            "2:12: duration \"10ms\" out of range [100ms, 24h]");
}

TEST(LoaderTest, BadDurationIsPositioned) {
  EXPECT_EQ(problem("[collect]\ninterval = \"5 parsecs\"\n"),
            "2:12: bad duration \"5 parsecs\": use a number with a unit (ms, s, m, h, d), e.g. "
            "\"30s\" or \"1m30s\"");
}

TEST(LoaderTest, BadEnumsAndAddressesArePositioned) {
  EXPECT_EQ(problem("[log]\nlevel = \"loud\"\n"),
            "2:9: unknown log level \"loud\": use debug, info, warn or error");
  EXPECT_EQ(problem("[log]\nformat = \"xml\"\n"),
            "2:10: unknown log format \"xml\": use logfmt or json");
  EXPECT_EQ(problem("[web]\nlisten_address = \"localhost\"\n"),
            "2:18: listen address \"localhost\" must be HOST:PORT or :PORT");
  EXPECT_EQ(problem("[web]\nlisten_address = \":99999\"\n"),
            "2:18: listen address \":99999\" has no valid port (0-65535)");
  EXPECT_EQ(problem("[host]\nrootfs = \"host\"\n"),
            "2:10: rootfs \"host\" must be an absolute path");
}

TEST(LoaderTest, APortTooLongForAnIntegerIsAProblemNotAnException) {
  // config_fuzz found it: std::stol threw std::out_of_range past 19 digits, out of loadConfig
  // (a crash at start, and at a reload). More than 5 digits is refused as the listener and the
  // peer address parser refuse it.
  std::string port(200, '4');
  EXPECT_EQ(problem("[web]\nlisten_address = \"127.0.0.1:" + port + "\"\n"),
            "2:18: listen address \"127.0.0.1:" + port + "\" has no valid port (0-65535)");
  EXPECT_EQ(problem("[probe]\npeers = [\"10.0.0.1:" + port + "\"]\n").substr(0, 11),
            "2:9: peer \"");
  EXPECT_EQ(problem("[web]\nlisten_address = \":019736\"\n"),
            "2:18: listen address \":019736\" has no valid port (0-65535)");
}

// probe.peers took what the peers file refuses (port 0, "[]:80", which a socket address reads as
// the wildcard): both now judge a peer by core::isPeerEndpoint.
TEST(LoaderTest, APeerIsJudgedAsThePeersFileJudgesIt) {
  const std::string why =
      " must be HOST:PORT (an IPv4 address, an IPv6 address in brackets or a DNS name; a port "
      "1-65535)";
  EXPECT_EQ(problem("[probe]\npeers = [\"10.0.0.1:0\"]\n"), "2:9: peer \"10.0.0.1:0\"" + why);
  EXPECT_EQ(problem("[probe]\npeers = [\"[]:80\"]\n"), "2:9: peer \"[]:80\"" + why);
  EXPECT_EQ(problem("[probe]\npeers = [\"a b:80\"]\n"), "2:9: peer \"a b:80\"" + why);
  EXPECT_EQ(problem("[probe]\npeers = [\"10.0.0.1\\u0000x:80\"]\n"),
            "2:9: peer \"10.0.0.1\\x00x:80\"" + why);
  auto r = loadConfig(
      "[peer]\nsecret_file = \"/s\"\n[probe]\npeers = [\"10.0.0.1:1\", \"[fd00::1]:19737\", "
      "\"node-2:19737\"]\n",
      "t.toml");
  EXPECT_TRUE(r.ok()) << core::formatAll(r.problems);
}

TEST(LoaderTest, UnknownSourceIsPositionedWhenSourcesAreKnown) {
  EXPECT_EQ(problem("[collect.sources.rdmaa]\nenabled = true\n", {{"kernel", "rdma"}}),
            "1:18: unknown source \"rdmaa\" (known: kernel, rdma)");
}

TEST(LoaderTest, ProbeKindsAreTurnedOnAndOffByName) {
  LoadOptions kinds;
  kinds.known_probe_kinds = {"tcp", "dns", "fabric"};
  auto r = loadConfig("[probes.tcp]\nenabled = false\n[probes.fabric]\nenabled = true\n", "t.toml",
                      kinds);
  ASSERT_TRUE(r.ok()) << core::formatAll(r.problems);
  EXPECT_FALSE(r.config.probes.enabled("tcp", true));
  EXPECT_TRUE(r.config.probes.enabled("fabric", false));
  EXPECT_TRUE(r.config.probes.enabled("dns", true)) << "unset: the kind's own default";
  EXPECT_FALSE(r.config.probes.enabled("nccl", false));
  EXPECT_EQ(problem("[probes.tpc]\nenabled = true\n", kinds),
            "1:9: unknown probe kind \"tpc\" (known: tcp, dns, fabric)");
  // The older spelling probe.dns_probe is gone with the rest of the kinds' keys under [probe].
  EXPECT_EQ(problem("[probe]\ndns_probe = false\n"), "2:1: unknown key \"probe.dns_probe\"");
}

TEST(LoaderTest, SyntaxErrorIsPositioned) {
  auto r = loadConfig("[web]\nthreads = = 4\n", "t.toml");
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.problems[0].line, 2);
  EXPECT_GT(r.problems[0].column, 0);
  EXPECT_EQ(r.problems[0].snippet, "threads = = 4");
}

TEST(LoaderTest, DuplicateKeyIsASyntaxError) {
  auto r = loadConfig("[web]\nthreads = 4\nthreads = 5\n", "t.toml");
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.problems[0].line, 3);
}

TEST(LoaderTest, ReportsEveryProblemNotJustTheFirst) {
  auto r = loadConfig("[web]\nthreads = 0\nbogus = 1\n[log]\nlevel = \"x\"\n", "t.toml");
  EXPECT_EQ(r.problems.size(), 3u);
}

// Checks across keys point at the key to change: the timeout when the file sets it, else the
// interval that undercuts an inherited timeout.
TEST(LoaderTest, TimeoutLongerThanIntervalIsPositioned) {
  EXPECT_EQ(problem("[collect]\ninterval = \"1s\"\ntimeout = \"2s\"\n"),
            "3:11: collect.timeout (2s) must not exceed collect.interval (1s)");
  EXPECT_EQ(problem("[collect]\ninterval = \"1s\"\n"),
            "2:12: collect.timeout (10s) must not exceed collect.interval (1s)");
  // Sources that inherit both are covered by that one problem, not repeated per source.
  EXPECT_EQ(problem("[collect]\ninterval = \"1s\"\n[collect.sources.rdma]\nenabled = true\n"),
            "2:12: collect.timeout (10s) must not exceed collect.interval (1s)");
  EXPECT_EQ(problem("[collect.sources.rdma]\ninterval = \"5s\"\n"),
            "2:12: collect.sources.rdma: timeout (10s) must not exceed its interval (5s)");
}

TEST(LoaderTest, MeshWithoutSecretIsPositionedAtWhatConfiguresTheMesh) {
  std::string p = problem("[probe]\ndns_name = \"fw.svc\"\n");
  EXPECT_EQ(p.rfind("2:12: the peer mesh is configured", 0), 0u) << p;
}

TEST(LoaderTest, MissingFileIsAProblemNotACrash) {
  auto r = loadConfigFile("/nonexistent/fabricwatch.toml");
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(
      r.problems[0].format(),
      "/nonexistent/fabricwatch.toml: cannot read configuration file: No such file or directory");
}

}  // namespace
}  // namespace fabricwatch::config

namespace fabricwatch::config {
namespace {

LoadOptions withOptionalMetrics() {
  LoadOptions o;
  o.known_sources = {"rdma", "kernel"};
  o.known_probe_kinds = {"tcp"};
  o.optional_metrics["collect.sources.rdma"] = {
      {"fabricwatch_rdma_device_info", "", "+1 per device"},
      {"fabricwatch_rdma_port_hw_stat_total", "stat", "+1 per port per counter"}};
  o.optional_metrics["collect.sources.kernel"] = {};
  o.optional_metrics["policy"] = {{"fabricwatch_policy_pack_matched", "", "+1 per pack"}};
  o.optional_metrics["probes.tcp"] = {};
  return o;
}

TEST(LoaderTest, ExtraMetricsSelectOptionalSeriesPerTable) {
  auto r = loadConfig(
      "[collect.sources.rdma]\nextra_metrics = [\"fabricwatch_rdma_device_info\", "
      "'fabricwatch_rdma_port_hw_stat_total{stat=\"tx_bytes\"}']\n[policy]\nextra_metrics = "
      "[\"*\"]\n",
      "t.toml", withOptionalMetrics());
  ASSERT_TRUE(r.ok()) << core::formatAll(r.problems);
  EXPECT_EQ(r.config.metrics.extra.at("collect.sources.rdma"),
            (std::vector<std::string>{"fabricwatch_rdma_device_info",
                                      "fabricwatch_rdma_port_hw_stat_total{stat=\"tx_bytes\"}"}));
  EXPECT_EQ(r.config.metrics.extra.at("policy"), std::vector<std::string>{"*"});
  EXPECT_TRUE(loadConfig("", "t.toml", withOptionalMetrics()).config.metrics.extra.empty())
      << "the default turns nothing optional on";
}

TEST(LoaderTest, ExtraMetricsProblemsArePositioned) {
  auto o = withOptionalMetrics();
  EXPECT_EQ(
      problem("[collect.sources.rdma]\nextra_metrics = [\"fabricwatch_rdma_devic_info\"]\n", o),
      "2:17: [collect.sources.rdma] has no optional family fabricwatch_rdma_devic_info "
      "(optional: fabricwatch_rdma_device_info, fabricwatch_rdma_port_hw_stat_total)");
  EXPECT_EQ(problem("[collect.sources.kernel]\nextra_metrics = [\"fabricwatch_kernel_info\"]\n", o),
            "2:17: [collect.sources.kernel] has no optional family fabricwatch_kernel_info (it "
            "has none)");
  EXPECT_EQ(problem("[probes.tcp]\nextra_metrics = [\"x\"]\n", o),
            "2:17: [probes.tcp] has no optional family x (it has none)");
  EXPECT_EQ(problem("[collect.sources.rdma]\nextra_metrics = "
                    "['fabricwatch_rdma_device_info{kind=\"efa\"}']\n",
                    o),
            "2:17: fabricwatch_rdma_device_info is selected as a whole (no {label=...})");
  EXPECT_EQ(problem("[collect.sources.rdma]\nextra_metrics = "
                    "['fabricwatch_rdma_port_hw_stat_total{device=\"x\"}']\n",
                    o),
            "2:17: fabricwatch_rdma_port_hw_stat_total is selected by its label stat, not device");
  EXPECT_EQ(problem("[collect.sources.rdma]\nextra_metrics = ['a{stat=tx}']\n", o),
            "2:17: \"a{stat=tx}\": expected family{label=\"value\"}");
  EXPECT_EQ(problem("[collect.sources.rdma]\nextra_metrics = ['9lives']\n", o),
            "2:17: \"9lives\" is not a metric family name (or family{label=\"value\"})");
  EXPECT_EQ(
      problem("[collect.sources.rdma]\nextra_metrics = \"fabricwatch_rdma_device_info\"\n", o),
      "2:17: expected an array of strings, got string");
}

}  // namespace
}  // namespace fabricwatch::config
