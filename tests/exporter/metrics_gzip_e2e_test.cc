// /metrics gzip'd as real clients read it. The body is one gzip member whose start is shared
// by every scrape of a snapshot and whose end (the self metrics and the trailer) is made per
// request. curl (7.88 reads only the first member of a multi-member stream) and Prometheus
// itself must read all of it: the self metrics come last, so a reader that stopped early would
// miss process_max_fds.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "tests/support/daemon.h"
#include "tests/support/paths.h"
#include "tests/support/require.h"
#include "tests/support/tcp_client.h"
#include "tests/support/temp_dir.h"

namespace fabricwatch::testing {
namespace {

using namespace std::chrono_literals;

TEST(MetricsGzipE2ETest, AnsweredGzipOnlyWhenAsked) {
  auto d = startDaemon({"--path.rootfs=" + fixture("p5_efa")});
  ASSERT_GT(d.port, 0) << d.process->stderrText();
  ASSERT_TRUE(d.waitForStatus("/readyz", 200));
  auto plain = d.get("/metrics");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->headers.find("Content-Encoding"), std::string::npos);
  auto raw = httpRaw("127.0.0.1", d.port,
                     "GET /metrics HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n");
  ASSERT_TRUE(raw);
  EXPECT_NE(raw->find("Content-Encoding: gzip\r\n"), std::string::npos);
  auto body = raw->substr(raw->find("\r\n\r\n") + 4);
  ASSERT_GE(body.size(), 18u);
  EXPECT_EQ(body.substr(0, 2), "\x1f\x8b");
  EXPECT_LT(body.size(), plain->body.size() / 5) << "compressed";
}

TEST(MetricsGzipE2ETest, CurlReadsTheWholeBody) {
  if (!std::filesystem::exists("/usr/bin/curl")) FW_UNAVAILABLE("tools") << "curl not installed";
  auto d = startDaemon({"--path.rootfs=" + fixture("p5_efa")});
  ASSERT_GT(d.port, 0) << d.process->stderrText();
  ASSERT_TRUE(d.waitForStatus("/readyz", 200));
  auto r = runCommand({"/usr/bin/curl", "-sS", "--fail", "--compressed", "-D", "/dev/stderr",
                       "http://127.0.0.1:" + std::to_string(d.port) + "/metrics"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("Content-Encoding: gzip"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("fabricwatch_rdma_port_state{device=\"rdmap147s0\",port=\"1\"} 4\n"),
            std::string::npos);
  EXPECT_NE(r.out.find("\nprocess_max_fds "), std::string::npos) << "the per-request end is lost";
}

TEST(MetricsGzipE2ETest, PrometheusScrapesTheWholeBody) {
  if (!std::filesystem::exists("/usr/bin/prometheus"))
    FW_UNAVAILABLE("tools") << "prometheus not installed (Debian package prometheus)";
  auto d = startDaemon({"--path.rootfs=" + fixture("p5_efa")});
  ASSERT_GT(d.port, 0) << d.process->stderrText();
  ASSERT_TRUE(d.waitForStatus("/readyz", 200));
  TempDir tmp;
  std::string config =
      tmp.write("prometheus.yml",
                "global: {scrape_interval: 1s}\nscrape_configs:\n  - job_name: fw\n"
                "    static_configs: [{targets: ['127.0.0.1:" +
                    std::to_string(d.port) + "']}]\n");
  int port = freePort();
  Process prom({"/usr/bin/prometheus", "--config.file=" + config,
                "--storage.tsdb.path=" + tmp.path() + "/data",
                "--web.listen-address=127.0.0.1:" + std::to_string(port), "--log.level=warn"});
  // The last family of the body (process_max_fds, made per request) and one from the shared
  // start must both arrive; `up` alone would not show a body cut short.
  auto has = [&](const std::string& query) {
    auto r = httpGet("127.0.0.1", port, "/api/v1/query?query=" + query);
    return r && r->status == 200 && r->body.find("\"result\":[{") != std::string::npos;
  };
  auto end = std::chrono::steady_clock::now() + 60s;
  bool tail = false, head = false;
  while (std::chrono::steady_clock::now() < end && !(tail && head)) {
    tail = has("process_max_fds");
    head = has("fabricwatch_rdma_devices");
    std::this_thread::sleep_for(200ms);
  }
  EXPECT_TRUE(head) << prom.stderrText();
  EXPECT_TRUE(tail) << prom.stderrText();
  auto up = httpGet("127.0.0.1", port, "/api/v1/query?query=up");
  ASSERT_TRUE(up);
  EXPECT_NE(up->body.find("\"value\":["), std::string::npos);
  EXPECT_NE(up->body.find(",\"1\"]"), std::string::npos) << up->body;
}

}  // namespace
}  // namespace fabricwatch::testing
