// End-to-end: the daemon serves violations and policy metrics, and a bad pack on SIGHUP keeps
// the last good packs running.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
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

// A fact that changes between collections: the violation begins, recovers for the hold after
// the kernel is fixed (still served, so alerts do not flap), then clears with its time.
TEST(ServePolicyE2ETest, AFixedViolationRecoversForItsHoldThenClears) {
  TempDir dir;
  // /etc/nccl.conf is read on every collection (the kernel release, once per boot, is not).
  dir.write("root/etc/nccl.conf", "NCCL_IB_DISABLE=1\n");
  dir.write("packs/nccl.yaml", R"(apiVersion: fabricwatch.io/v1
kind: PolicyPack
metadata: {name: nccl-check}
spec:
  rules:
    - id: ib-enabled
      severity: critical
      expression: '!has(nccl.settings.NCCL_IB_DISABLE)'
      message: NCCL_IB_DISABLE is set
      remediation: Remove it from /etc/nccl.conf.
)");
  std::string config = dir.write("fabricwatch.toml",
                                 "[collect]\ninterval = \"200ms\"\ntimeout = \"100ms\"\n"
                                 "[policy]\nviolation_hold = \"1500ms\"\n");
  auto d = startDaemon({"--path.rootfs=" + dir.path() + "/root", "--config.file=" + config,
                        "--policy.path=" + dir.path() + "/packs", "--resource-group=test-a"});
  ASSERT_NE(d.port, 0) << d.process->stderrText();
  ASSERT_TRUE(waitForBody(d, "/api/v1/violations", "\"state\":\"active\""));
  const std::string labels =
      "{pack=\"nccl-check\",rule=\"ib-enabled\",severity=\"critical\",subject=\"node\"}";
  ASSERT_TRUE(
      waitForBody(d, "/metrics", "fabricwatch_policy_violation_began_timestamp_seconds" + labels));
  auto first = d.get("/api/v1/violations");
  auto began = first->body.find("\"began_at\":\"");
  ASSERT_NE(began, std::string::npos) << first->body;
  std::string began_at = first->body.substr(began, 40);

  dir.write("root/etc/nccl.conf", "");
  ASSERT_TRUE(waitForBody(d, "/api/v1/violations", "\"state\":\"recovering\""));
  auto r = d.get("/api/v1/violations");
  EXPECT_NE(r->body.find(began_at), std::string::npos) << "began_at kept\n" << r->body;
  EXPECT_NE(r->body.find("\"recovering_since\":"), std::string::npos) << r->body;
  auto m = d.get("/metrics");
  EXPECT_NE(m->body.find("fabricwatch_policy_violation" + labels + " 1"), std::string::npos)
      << m->body;
  EXPECT_NE(m->body.find("fabricwatch_policy_violation_recovering" + labels + " 1"),
            std::string::npos)
      << m->body;
  auto page = d.get("/");
  EXPECT_NE(page->body.find("tag recovering"), std::string::npos);

  ASSERT_TRUE(waitForBody(d, "/api/v1/violations", "\"violations\":[]"));
  auto c = d.get("/api/v1/violations");
  EXPECT_NE(c->body.find("\"cleared_at\":"), std::string::npos) << c->body;
  EXPECT_NE(c->body.find("\"cleared_total\":1"), std::string::npos) << c->body;
  EXPECT_TRUE(waitForBody(d, "/metrics", "fabricwatch_policy_violations_cleared_total 1"));
  EXPECT_TRUE(waitForBody(d, "/", "Recently cleared"));
}

// Issue 22 item 7: a counter that rises between two collections of the rdma source. The daemon's
// first collections of the clean HGX RoCE node (totals since boot, link_downed 0) raise nothing;
// once link_downed rises, the shipped rdma-counters pack reports it as critical with the
// increase, and the facts carry the increase and the rate.
TEST(ServePolicyE2ETest, ACounterThatRisesBetweenCollectionsIsJudgedByItsIncrease) {
  TempDir dir;
  std::filesystem::copy(
      fixture("hgx_roce"), dir.path() + "/root",
      std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
  std::string config = dir.write("fabricwatch.toml",
                                 "[collect]\ninterval = \"300ms\"\ntimeout = \"300ms\"\n"
                                 "[policy]\nviolation_hold = \"0s\"\n");
  auto d = startDaemon({"--path.rootfs=" + dir.path() + "/root", "--config.file=" + config});
  ASSERT_NE(d.port, 0) << d.process->stderrText();
  // Two collections: the increases are there, and zero.
  ASSERT_TRUE(waitForBody(d, "/api/v1/facts", "\"counters_increase\":{"));
  auto before = d.get("/api/v1/violations");
  EXPECT_EQ(before->body.find("rdma-fatal-counter-increase"), std::string::npos) << before->body;
  EXPECT_EQ(before->body.find("counter rates need two collections"), std::string::npos)
      << before->body;

  // Rewritten in place: the source reads its counters through kept descriptors.
  const std::string file =
      dir.path() + "/root/sys/class/infiniband/mlx5_0/ports/1/counters/link_downed";
  std::ofstream(file, std::ios::binary | std::ios::trunc) << "3\n";
  ASSERT_TRUE(waitForBody(d, "/api/v1/violations", "mlx5_0 port 1 link_downed +3"));
  auto v = d.get("/api/v1/violations");
  EXPECT_NE(v->body.find("\"rule\":\"rdma-fatal-counter-increase\""), std::string::npos) << v->body;
  EXPECT_TRUE(waitForBody(
      d, "/metrics",
      "fabricwatch_policy_violation{pack=\"rdma-counters\",rule=\"rdma-fatal-counter-increase\","
      "severity=\"critical\",subject=\"node\"} 1"));
  auto f = d.get("/api/v1/facts");
  EXPECT_NE(f->body.find("\"counter_history\":{"), std::string::npos) << f->body.substr(0, 2000);
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
