// `fabricwatch serve` on its HTTP port, end to end: slow clients while /metrics is scraped,
// --web.config.file (TLS and basic auth in front of every endpoint, the kubelet exemption,
// reloads, positioned errors), and the real Prometheus scraping over TLS with basic auth.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <thread>

#include "tests/support/daemon.h"
#include "tests/support/eventually.h"
#include "tests/support/paths.h"
#include "tests/support/process.h"
#include "tests/support/tcp_client.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_pki.h"

namespace fabricwatch::testing {
namespace {

using testing::eventually;

using namespace std::chrono_literals;

const std::string& kAlice = kAliceHash;  // alice123
const std::string& kBob = kBobHash;      // bob123

std::vector<std::string> fixtureArgs() {
  return {"--path.rootfs=" + fixture("p5_efa"), "--node.name=e2e"};
}

// curl against the daemon: its output, or with `status`, the HTTP status only ("000" when no
// HTTP answer came).
std::string curl(int port, const std::string& path, std::vector<std::string> args, bool tls = true,
                 bool status = true) {
  std::vector<std::string> argv = {"/usr/bin/curl", "-s", "--max-time", "10"};
  if (status) argv.insert(argv.end(), {"-o", "/dev/null", "-w", "%{http_code}"});
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back(std::string(tls ? "https" : "http") + "://localhost:" + std::to_string(port) +
                 path);
  return runCommand(argv).out;
}

std::string curlBody(int port, const std::string& path, std::vector<std::string> args) {
  return curl(port, path, std::move(args), true, false);
}

// Issue 13, item 1: with civetweb, as many half-open requests as web.threads stalled /metrics
// for 8-9 s per scrape, and 300 of them for 35 s.
TEST(HttpE2ETest, HalfOpenConnectionsDoNotDelayMetrics) {
  auto d = startDaemon(fixtureArgs());
  ASSERT_GT(d.port, 0) << d.process->stderrText();
  ASSERT_TRUE(d.waitForStatus("/metrics", 200));
  std::vector<TcpClient> slow;
  for (int i = 0; i < 300; ++i) {
    auto c = TcpClient::connect(d.port);
    ASSERT_TRUE(c) << i;
    ASSERT_TRUE(c->send("GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: "));
    slow.push_back(std::move(*c));
  }
  for (int i = 0; i < 5; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    auto r = d.get("/metrics");
    auto took = std::chrono::steady_clock::now() - t0;
    ASSERT_TRUE(r) << "scrape " << i << " got no answer";
    EXPECT_EQ(r->status, 200);
    EXPECT_LT(took, 1s) << "scrape " << i << " took " << std::chrono::duration<double>(took).count()
                        << " s";
  }
  auto m = d.get("/metrics");
  ASSERT_TRUE(m);
  EXPECT_NE(m->body.find("fabricwatch_http_dropped_total{reason=\"evicted\"}"), std::string::npos);
  EXPECT_EQ(m->body.find("fabricwatch_http_dropped_total{reason=\"evicted\"} 0\n"),
            std::string::npos)
      << "the evictions are counted";
}

class WebConfigE2ETest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(pki_.error, ""); }
  std::string webConfig(const std::string& users) {
    return "tls_server_config:\n  cert_file: " + pki_.server_crt +
           "\n  key_file: " + pki_.server_key + "\nbasic_auth_users:\n" + users;
  }
  std::vector<std::string> tls() { return {"--cacert", pki_.ca_crt}; }
  std::vector<std::string> alice() { return {"--cacert", pki_.ca_crt, "-u", "alice:alice123"}; }
  TestPki pki_;
  TempDir dir_;
};

TEST_F(WebConfigE2ETest, EveryEndpointSitsBehindTlsAndBasicAuth) {
  std::string web = dir_.write("web.yml", webConfig("  alice: " + kAlice + "\n"));
  auto args = fixtureArgs();
  args.push_back("--web.config.file=" + web);
  auto d = startDaemon(args);
  ASSERT_GT(d.port, 0) << d.process->stderrText();
  ASSERT_TRUE(eventually([&] { return curl(d.port, "/readyz", alice()) == "200"; }));
  for (const char* path : {"/metrics", "/", "/api/v1/facts", "/api/v1/violations", "/api/v1/peers",
                           "/healthz", "/readyz"}) {
    EXPECT_EQ(curl(d.port, path, tls()), "401") << path;
    EXPECT_EQ(curl(d.port, path, {"--cacert", pki_.ca_crt, "-u", "alice:wrong"}), "401") << path;
    EXPECT_EQ(curl(d.port, path, alice()), "200") << path;
    EXPECT_EQ(curl(d.port, path, {}, /*tls=*/false), "400") << path << " over plain HTTP";
  }
  std::string metrics = curlBody(d.port, "/metrics", alice());
  EXPECT_NE(metrics.find("fabricwatch_web_config_last_reload_successful 1"), std::string::npos);
  EXPECT_NE(metrics.find("fabricwatch_http_requests_total{code=\"401\",route=\"/metrics\"}"),
            std::string::npos);
}

TEST_F(WebConfigE2ETest, HealthEndpointsCanBeExemptedForKubeletProbes) {
  std::string web = dir_.write("web.yml", webConfig("  alice: " + kAlice + "\n"));
  auto args = fixtureArgs();
  args.push_back("--web.config.file=" + web);
  args.push_back("--web.auth-exempt-health");
  auto d = startDaemon(args);
  ASSERT_GT(d.port, 0) << d.process->stderrText();
  EXPECT_EQ(curl(d.port, "/healthz", tls()), "200");
  ASSERT_TRUE(eventually([&] { return curl(d.port, "/readyz", tls()) == "200"; }));
  EXPECT_EQ(curl(d.port, "/metrics", tls()), "401");
  EXPECT_EQ(curl(d.port, "/", tls()), "401");
}

TEST_F(WebConfigE2ETest, InvalidWebConfigExitsTwoWithPositions) {
  std::string web =
      dir_.write("web.yml",
                 "tls_server_config:\n  cert_file: a.crt\n  key_file: b.key\n  min_version: TLS9\n"
                 "basic_auth_users:\n  john: doe\n");
  auto r = runCommand(
      {binaryPath(), "serve", "--web.listen-address=127.0.0.1:0", "--web.config.file=" + web});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(web + ":4:16: unknown TLS version: \"TLS9\""), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(web + ":6:9: the password of user \"john\" is not a bcrypt hash"),
            std::string::npos)
      << r.err;
  auto missing = runCommand({binaryPath(), "serve", "--web.listen-address=127.0.0.1:0",
                             "--web.config.file=" + dir_.path() + "/nope.yml"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("nope.yml: cannot read the web configuration"), std::string::npos)
      << missing.err;
}

TEST_F(WebConfigE2ETest, ChangesAreAppliedAndABadFileKeepsTheLastGoodOne) {
  std::string web = dir_.write("web.yml", webConfig("  alice: " + kAlice + "\n"));
  auto args = fixtureArgs();
  args.push_back("--web.config.file=" + web);
  auto d = startDaemon(args);
  ASSERT_GT(d.port, 0) << d.process->stderrText();
  std::vector<std::string> bob = {"--cacert", pki_.ca_crt, "-u", "bob:bob123"};
  EXPECT_EQ(curl(d.port, "/healthz", bob), "401");
  // The file changes: picked up without a signal.
  dir_.write("web.yml", webConfig("  alice: " + kAlice + "\n  bob: " + kBob + "\n"));
  EXPECT_TRUE(eventually([&] { return curl(d.port, "/healthz", bob) == "200"; }));
  // A bad file: logged with its position, counted, and the last good one keeps serving.
  dir_.write("web.yml", webConfig("  alice: " + kAlice + "\n  bob: not-a-hash\n"));
  EXPECT_TRUE(eventually([&] {
    return curlBody(d.port, "/metrics", alice())
               .find("fabricwatch_web_config_last_reload_successful 0") != std::string::npos;
  }));
  EXPECT_NE(d.process->stderrText().find(web + ":6:8: the password of user \\\"bob\\\""),
            std::string::npos)
      << d.process->stderrText();
  EXPECT_EQ(curl(d.port, "/healthz", bob), "200");
  // SIGHUP re-reads it too. (Removing bob is fewer users: the file says it means it.)
  dir_.write("web.yml",
             "fabricwatch_allow_less_protection: true\n" + webConfig("  alice: " + kAlice + "\n"));
  d.process->signal(SIGHUP);
  EXPECT_TRUE(eventually([&] { return curl(d.port, "/healthz", bob) == "401"; }));
  EXPECT_NE(
      curlBody(d.port, "/metrics", alice()).find("fabricwatch_web_config_last_reload_successful 1"),
      std::string::npos);
}

// Issue 23, item 2, on the binary: `: > web.yml` used to turn basic auth off (an unauthenticated
// /metrics answered 200 with fabricwatch_web_config_last_reload_successful 1). Now the emptied
// file is refused, counted and logged, the users stay, and the key applies it when said.
TEST_F(WebConfigE2ETest, AnEmptiedWebConfigKeepsBasicAuth) {
  const std::string users = "basic_auth_users:\n  alice: " + kAlice + "\n";
  std::string web = dir_.write("web.yml", users);
  auto args = fixtureArgs();
  args.push_back("--web.config.file=" + web);
  auto d = startDaemon(args);
  ASSERT_GT(d.port, 0) << d.process->stderrText();
  std::vector<std::string> alice_plain = {"-u", "alice:alice123"};
  auto metrics = [&] { return curl(d.port, "/metrics", alice_plain, false, false); };
  ASSERT_TRUE(eventually([&] { return curl(d.port, "/readyz", alice_plain, false) == "200"; }));
  dir_.write("web.yml", "");  // : > web.yml
  ASSERT_TRUE(eventually([&] {
    return metrics().find(
               "fabricwatch_web_config_reloads_refused_total{reason=\"less_protection\"} 1") !=
           std::string::npos;
  })) << metrics();
  EXPECT_NE(metrics().find("fabricwatch_web_config_last_reload_successful 0"), std::string::npos);
  EXPECT_EQ(curl(d.port, "/metrics", {}, false), "401");
  EXPECT_EQ(curl(d.port, "/api/v1/facts", {}, false), "401");
  EXPECT_NE(d.process->stderrText().find("basic auth turned off (1 user before, none now)"),
            std::string::npos)
      << d.process->stderrText();
  // Said plainly, it applies: auth is off.
  dir_.write("web.yml", "fabricwatch_allow_less_protection: true\n");
  EXPECT_TRUE(eventually([&] { return curl(d.port, "/metrics", {}, false) == "200"; }));
}

// The real Prometheus scrapes fabricwatch over TLS with basic auth: up == 1.
TEST_F(WebConfigE2ETest, PrometheusScrapesOverTlsWithBasicAuth) {
  std::string web = dir_.write("web.yml", webConfig("  alice: " + kAlice + "\n"));
  auto args = fixtureArgs();
  args.push_back("--web.config.file=" + web);
  auto d = startDaemon(args);
  ASSERT_GT(d.port, 0) << d.process->stderrText();
  int prom_port = freePort();
  std::string cfg = dir_.write("prometheus.yml", R"(global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: fabricwatch
    scheme: https
    tls_config:
      ca_file: )" + pki_.ca_crt + R"(
    basic_auth:
      username: alice
      password: alice123
    static_configs:
      - targets: ["localhost:)" + std::to_string(d.port) +
                                                     R"("]
  - job_name: fabricwatch-wrong-password
    scheme: https
    tls_config:
      ca_file: )" + pki_.ca_crt + R"(
    basic_auth:
      username: alice
      password: wrong
    static_configs:
      - targets: ["localhost:)" + std::to_string(d.port) +
                                                     R"("]
)");
  Process prom({"/usr/bin/prometheus", "--config.file=" + cfg,
                "--storage.tsdb.path=" + dir_.path() + "/data",
                "--web.listen-address=127.0.0.1:" + std::to_string(prom_port), "--log.level=warn"});
  auto query = [&](const std::string& q) {
    auto r = httpGet("127.0.0.1", prom_port, "/api/v1/query?query=" + q);
    return r && r->status == 200 ? r->body : std::string();
  };
  // up{job="fabricwatch"} == 1, and the scrape really carried fabricwatch's series.
  EXPECT_TRUE(eventually(
      [&] {
        return query("up%7Bjob%3D%22fabricwatch%22%7D%3D%3D1").find("\"value\":[") !=
                   std::string::npos &&
               query("fabricwatch_build_info").find("\"job\":\"fabricwatch\"") != std::string::npos;
      },
      60s))
      << query("up") << prom.stderrText();
  // The scrape with the wrong password is down.
  EXPECT_TRUE(eventually(
      [&] {
        return query("up%7Bjob%3D%22fabricwatch-wrong-password%22%7D%3D%3D0").find("\"value\":[") !=
               std::string::npos;
      },
      30s))
      << query("up");
}

}  // namespace
}  // namespace fabricwatch::testing
