// End-to-end: `fabricwatch nccl-log` on the parser's fixtures: the verdict, the exit codes
// (0 no problem at or above --fail-on, 1 a problem or no NCCL line, 2 usage or read error),
// JSON output, and standard input.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/paths.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace fabricwatch::testing {
namespace {

std::string log(const std::string& name) { return fixture("nccl_logs/" + name + ".log"); }

TEST(NcclLogCliE2ETest, HealthyLogExitsZeroWithItsVerdict) {
  auto r = runCommand({binaryPath(), "nccl-log", log("ib")});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("Verdict: OK"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("inter-node transport: ib"), std::string::npos);
  EXPECT_NE(r.out.find("GPUDirect RDMA:       on"), std::string::npos);
}

TEST(NcclLogCliE2ETest, SocketFallbackExitsOne) {
  auto r = runCommand({binaryPath(), "nccl-log", log("socket_fallback")});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("Verdict: PROBLEM"), std::string::npos);
  EXPECT_NE(r.out.find("critical: inter-node traffic used TCP sockets"), std::string::npos);
}

TEST(NcclLogCliE2ETest, FailOnDecidesWhetherWarningsFail) {
  // GPUDirect RDMA off is a warning: it fails only with --fail-on warning.
  EXPECT_EQ(runCommand({binaryPath(), "nccl-log", log("gdr_disabled")}).exit_code, 0);
  EXPECT_EQ(
      runCommand({binaryPath(), "nccl-log", "--fail-on=warning", log("gdr_disabled")}).exit_code,
      1);
}

TEST(NcclLogCliE2ETest, JsonFromStandardInput) {
  TempDir tmp;
  std::string script = tmp.write("run.sh", "exec \"$1\" nccl-log --format json - < \"$2\"\n");
  auto r = runCommand({"/bin/sh", script, binaryPath(), log("efa_ofi")});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["verdict"]["inter_node_transport"], "efa");
  EXPECT_EQ(j["ofi"]["provider"], "efa");
  EXPECT_EQ(j["exit_code"], 0);
}

// Real logs as pasted (tests/fixtures/nccl_logs/real/): PyTorch's watchdog alone is a problem,
// not "no NCCL lines"; a healthy single-node job exits zero whatever its Socket network says.
TEST(NcclLogCliE2ETest, RealPastedLogs) {
  auto hung = runCommand({binaryPath(), "nccl-log", "--format", "json",
                          fixture("nccl_logs/real/megatron_935_watchdog_terminate.log")});
  EXPECT_EQ(hung.exit_code, 1) << hung.out << hung.err;
  auto j = nlohmann::json::parse(hung.out);
  EXPECT_EQ(j["verdict"]["status"], "problem");
  EXPECT_EQ(j["verdict"]["problems"][0]["code"], "pytorch_watchdog");
  EXPECT_EQ(j["verdict"]["problems"][0]["line"], 6);
  auto single = runCommand({binaryPath(), "nccl-log", "--fail-on=warning",
                            fixture("nccl_logs/real/accelerate_2183_single_node_socket_nic.log")});
  EXPECT_EQ(single.exit_code, 0) << single.out;
  EXPECT_NE(single.out.find("inter-node transport: none"), std::string::npos) << single.out;
}

TEST(NcclLogCliE2ETest, NoNcclLinesExitsOneAndUsageErrorsTwo) {
  TempDir tmp;
  auto empty = runCommand({binaryPath(), "nccl-log", tmp.write("x.log", "nothing here\n")});
  EXPECT_EQ(empty.exit_code, 1);
  EXPECT_NE(empty.out.find("Verdict: UNKNOWN"), std::string::npos) << empty.out;
  EXPECT_EQ(runCommand({binaryPath(), "nccl-log", "/nonexistent.log"}).exit_code, 2);
  EXPECT_EQ(runCommand({binaryPath(), "nccl-log"}).exit_code, 2);
  EXPECT_EQ(runCommand({binaryPath(), "nccl-log", "--format=xml", log("ib")}).exit_code, 2);
  EXPECT_EQ(runCommand({binaryPath(), "nccl-log", tmp.path()}).exit_code, 2) << "a directory";
}

// Issue 23, item 7: an endless input ends at the parser's bounds (1 GiB, 4 million lines),
// reading stops there and the output says so. Before, /dev/zero (no newline, so no line ever
// counted) was read for ever, and an endless pipe of lines was read past the line bound.
TEST(NcclLogCliE2ETest, EndlessInputEndsAtTheBoundsAndSaysSo) {
  auto zero = runCommand({binaryPath(), "nccl-log", "--format", "json", "/dev/zero"},
                         std::chrono::seconds(120));
  ASSERT_EQ(zero.exit_code, 1) << "killed at the timeout: still reading\n" << zero.err;
  auto j = nlohmann::json::parse(zero.out);
  EXPECT_EQ(j["input"]["truncated"], true);
  EXPECT_EQ(j["input"]["bytes"], uint64_t{1} << 30);
  EXPECT_EQ(j["verdict"]["status"], "unknown");
  EXPECT_NE(zero.err.find("stopped reading after 0 lines, 1073741824 bytes"), std::string::npos)
      << zero.err;

  // A pipe that never closes, of NCCL lines: stops at the line bound, not at end of input.
  TempDir tmp;
  std::string script =
      tmp.write("run.sh", "yes 'h:1:1 [0] NCCL INFO Using network IB' | exec \"$1\" nccl-log -\n");
  auto lines = runCommand({"/bin/sh", script, binaryPath()}, std::chrono::seconds(120));
  EXPECT_NE(lines.exit_code, -1) << "killed at the timeout: still reading";
  EXPECT_NE(lines.out.find("NCCL log: 4000000 lines, 4000000 from NCCL (truncated"),
            std::string::npos)
      << lines.out;
  EXPECT_NE(lines.err.find("stopped reading after 4000000 lines"), std::string::npos) << lines.err;
}

}  // namespace
}  // namespace fabricwatch::testing
