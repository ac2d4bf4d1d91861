// End-to-end: the real binary serves /metrics for a fixture root (the broken InfiniBand node:
// a port DOWN/Polling, a downgraded rate, a NIC at x8 of x16, no nvidia_peermem), compared with
// a golden file after masking what changes from run to run, and linted with promtool when it is
// installed. FW_UPDATE_GOLDEN=1 rewrites the golden file instead of comparing.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/support/daemon.h"
#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/temp_dir.h"

namespace fabricwatch::testing {
namespace {

using testing::readFile;

bool startsWith(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

// The metric name of a "# HELP name ...", "# TYPE name ..." or sample line.
std::string metricName(const std::string& line) {
  std::string s = line;
  if (startsWith(s, "# HELP ") || startsWith(s, "# TYPE ")) s = s.substr(7);
  size_t end = s.find_first_of("{ ");
  return s.substr(0, end);
}

// Drops the families that describe the process, the build, the HTTP server and time, and masks
// the durations of source runs and policy evaluations and when violations began; everything
// else is determined by the fixture.
std::string stable(const std::string& metrics) {
  static const char* const kDropped[] = {"process_",
                                         "fabricwatch_build_info",
                                         "fabricwatch_http_",
                                         "fabricwatch_config_",
                                         "fabricwatch_web_config_",
                                         "fabricwatch_snapshot_timestamp",
                                         "fabricwatch_source_last_run_",
                                         "fabricwatch_policy_last_reload_timestamp"};
  std::istringstream in(metrics);
  std::string line, out;
  while (std::getline(in, line)) {
    std::string name = metricName(line);
    bool drop = false;
    for (const char* p : kDropped) drop = drop || startsWith(name, p);
    if (drop) continue;
    if (name == "fabricwatch_policy_violation_began_timestamp_seconds" && !startsWith(line, "#"))
      line = line.substr(0, line.rfind(' ')) + " <timestamp>";
    if (name == "fabricwatch_policy_violations_cleared_total" && !startsWith(line, "#"))
      line = line.substr(0, line.rfind(' ')) + " <count>";
    if ((name == "fabricwatch_source_duration_seconds" ||
         name == "fabricwatch_policy_evaluation_duration_seconds") &&
        !startsWith(line, "#")) {
      line = line.substr(0, line.rfind(' ')) + " <duration>";
    }
    out += line + "\n";
  }
  return out;
}

TEST(FixtureMetricsE2ETest, BrokenNodeMetricsMatchGolden) {
  TempDir tmp;
  // Every source, workloads included, so that each renders its families.
  std::string config =
      tmp.write("fabricwatch.toml",
                "[collect.sources.workloads]\nenabled = true\n"
                // A violation raised by a first run that timed out on a loaded machine would
                // otherwise stay recovering for the hold (policy.violation_hold).
                "[policy]\nviolation_hold = \"0s\"\n");
  auto d = startDaemon({"--path.rootfs=" + fixture("broken"), "--config.file=" + config});
  ASSERT_GT(d.port, 0) << d.process->stderrText();
  ASSERT_TRUE(d.waitForStatus("/readyz", 200)) << d.process->stderrText();
  auto m = d.get("/metrics");
  ASSERT_TRUE(m);
  ASSERT_EQ(m->status, 200);
  std::string got = stable(m->body);

  std::string golden = sourceDir() + "/tests/exporter/golden/fixture_broken.metrics";
  if (const char* u = std::getenv("FW_UPDATE_GOLDEN"); u && std::string(u) == "1") {
    std::ofstream(golden) << got;
    GTEST_SKIP() << "rewrote " << golden;
  }
  std::string want = readFile(golden);
  ASSERT_FALSE(want.empty()) << golden << " is missing; run with FW_UPDATE_GOLDEN=1";
  EXPECT_EQ(got, want) << "run with FW_UPDATE_GOLDEN=1 to accept the new output";

  // What the golden file must show, so that a regenerated file cannot silently lose it.
  EXPECT_NE(got.find("fabricwatch_rdma_port_state{device=\"mlx5_3\",port=\"1\"} 1"),
            std::string::npos);
  EXPECT_NE(got.find("fabricwatch_rdma_port_phys_state{device=\"mlx5_3\",port=\"1\"} 2"),
            std::string::npos);
  EXPECT_NE(got.find("fabricwatch_rdma_port_rate_bytes_per_second{device=\"mlx5_5\",port=\"1\"} "
                     "25000000000"),
            std::string::npos);
  EXPECT_NE(got.find("fabricwatch_pcie_link_degraded{pci_address=\"0000:b3:00.0\","
                     "function=\"rdma\",device=\"mlx5_6\"} 1"),
            std::string::npos);
  EXPECT_NE(got.find("fabricwatch_kernel_module_loaded{module=\"nvidia_peermem\"} 0"),
            std::string::npos);
  EXPECT_NE(got.find("fabricwatch_source_success{source=\"rdma\"} 1"), std::string::npos);

  if (std::filesystem::exists("/usr/bin/promtool")) {
    std::string file = tmp.write("metrics.prom", m->body);
    auto lint = runCommand({"/bin/sh", "-c", "/usr/bin/promtool check metrics < " + file});
    EXPECT_EQ(lint.exit_code, 0) << lint.out << lint.err;
  }
}

// `fabricwatch facts` on the p5-like root: the document, with the workloads source off by default
// and on when the configuration enables it.
TEST(FixtureMetricsE2ETest, FactsCommandPrintsTheFixtureDocument) {
  std::string root = "--path.rootfs=" + fixture("p5_efa");
  auto json = runCommand({binaryPath(), "facts", root});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find("\"name\": \"rdmap19s0\""), std::string::npos);
  EXPECT_NE(json.out.find("\"efa_ofi_dir\": \"/opt/amazon-efa-ofi\""), std::string::npos);
  EXPECT_EQ(json.out.find("\"workloads\""), std::string::npos) << "workloads must be opt-in";

  TempDir tmp;
  std::string config = tmp.write("on.toml", "[collect.sources.workloads]\nenabled = true\n");
  auto yaml = runCommand({binaryPath(), "facts", root, "--format=yaml", "--config.file=" + config});
  ASSERT_EQ(yaml.exit_code, 0) << yaml.err;
  EXPECT_NE(yaml.out.find("glibc_version: \"2.35\""), std::string::npos) << yaml.out.substr(0, 400);
  EXPECT_EQ(yaml.out.find("do-not-export-me"), std::string::npos);
}

}  // namespace
}  // namespace fabricwatch::testing
