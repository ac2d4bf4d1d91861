// End-to-end: the daemon serves violations and policy metrics, and a bad pack on SIGHUP keeps
// the last good packs running.
#include <gtest/gtest.h>
#include <signal.h>

#include <thread>

#include "tests/support/daemon.h"
#include "tests/support/paths.h"
#include "tests/support/temp_dir.h"

namespace fabricwatch::testing {
namespace {

const char* kPack = R"(apiVersion: fabricwatch.io/v1
kind: PolicyPack
metadata: {name: kernel-check}
spec:
  rules:
    - id: kernel-release
      severity: critical
      expression: 'has(kernel.release) && kernel.release.startsWith("6.")'
      messageExpression: '"kernel " + kernel.release + " is too old"'
      remediation: Boot the 6.x kernel.
)";

bool waitForBody(const RunningDaemon& d, const std::string& path, const std::string& needle) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    auto r = d.get(path);
    if (r && r->body.find(needle) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // poll interval, not a wait
  }
  return false;
}

TEST(ServePolicyE2ETest, ServesViolationsAndKeepsTheLastGoodPacksOnABadReload) {
  TempDir dir;
  dir.write("root/proc/sys/kernel/osrelease", "5.10.0\n");
  std::string pack = dir.write("packs/kernel.yaml", kPack);
  auto d = startDaemon({"--path.rootfs=" + dir.path() + "/root",
                        "--policy.path=" + dir.path() + "/packs", "--resource-group=test-a"});
  ASSERT_NE(d.port, 0) << d.process->stderrText();
  ASSERT_TRUE(waitForBody(d, "/api/v1/violations", "kernel 5.10.0 is too old"));
  auto v = d.get("/api/v1/violations");
  EXPECT_NE(v->body.find("\"remediation\":\"Boot the 6.x kernel.\""), std::string::npos) << v->body;
  EXPECT_NE(v->body.find("\"resource_group\":\"test-a\""), std::string::npos);
  auto m = d.get("/metrics");
  EXPECT_NE(
      m->body.find("fabricwatch_policy_violation{pack=\"kernel-check\",rule=\"kernel-release\","
                   "severity=\"critical\",subject=\"node\"} 1"),
      std::string::npos)
      << m->body;
  EXPECT_NE(
      m->body.find("fabricwatch_resource_group_info{resource_group=\"test-a\",origin=\"flag\"} 1"),
      std::string::npos);

  dir.write("packs/kernel.yaml", std::string(kPack) + "  bogus: 1\n");
  d.process->signal(SIGHUP);
  auto line = d.process->waitForStderr("keeping the last good packs", std::chrono::seconds(10));
  ASSERT_TRUE(line) << d.process->stderrText();
  EXPECT_NE(line->find("kernel.yaml:11:3: unknown field"), std::string::npos) << *line;
  ASSERT_TRUE(waitForBody(d, "/metrics", "fabricwatch_policy_last_reload_successful 0"));
  EXPECT_TRUE(waitForBody(d, "/api/v1/violations", "kernel 5.10.0 is too old"));
}

TEST(ServePolicyE2ETest, AnInvalidPackAtStartIsFatal) {
  TempDir dir;
  std::string bad = dir.write("bad.yaml", "apiVersion: fabricwatch.io/v1\nkind: PolicyPack\n");
  Process p({binaryPath(), "serve", "--web.listen-address=127.0.0.1:0", "--policy.path=" + bad});
  auto rc = p.wait(std::chrono::seconds(10));
  ASSERT_TRUE(rc);
  EXPECT_NE(*rc, 0);
  EXPECT_NE(p.stderrText().find("invalid policy packs"), std::string::npos) << p.stderrText();
  EXPECT_NE(p.stderrText().find("bad.yaml:1:1: document is missing required field"),
            std::string::npos)
      << p.stderrText();
}

}  // namespace
}  // namespace fabricwatch::testing
