// End-to-end: the NCCL probe inside `fabricwatch serve`. A probe that hangs never holds up a
// scrape or a shutdown, and dies with the daemon; a timeout and a crash are reported as such;
// with the real libnccl and no GPU the probe says why it cannot run. The child's test modes
// (FABRICWATCH_NCCL_PROBE_TEST_MODE, passed through [probes.nccl.env]) stand in for NCCL.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/support/daemon.h"
#include "tests/support/paths.h"
#include "tests/support/require.h"
#include "tests/support/temp_dir.h"

namespace fabricwatch::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

std::string config(const std::string& timeout, const std::string& test_mode) {
  std::string c =
      "[probes.nccl]\nenabled = true\nrun_at_start = true\ninterval = \"10m\"\n"
      "timeout = \"" +
      timeout + "\"\nsizes = [\"1MiB\"]\n";
  if (!test_mode.empty())
    c += "[probes.nccl.env]\nFABRICWATCH_NCCL_PROBE_TEST_MODE = \"" + test_mode + "\"\n";
  return c;
}

RunningDaemon start(TempDir& tmp, const std::string& cfg) {
  tmp.write("root/proc/sys/kernel/osrelease", "6.1.0-18-amd64\n");
  std::string file = tmp.write("fabricwatch.toml", cfg);
  return startDaemon({"--config.file=" + file, "--path.rootfs=" + tmp.path() + "/root"});
}

// The probe child of `parent`: a process whose command line is `fabricwatch __nccl-probe`.
pid_t probeChildOf(pid_t parent) {
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    std::ifstream stat(e.path() / "stat"), cmd(e.path() / "cmdline");
    std::string line, args;
    if (!std::getline(stat, line) || !std::getline(cmd, args, '\0')) continue;
    std::getline(cmd, args, '\0');
    size_t rp = line.rfind(')');
    if (rp == std::string::npos) continue;
    std::istringstream rest(line.substr(rp + 2));
    char state;
    pid_t ppid;
    rest >> state >> ppid;
    if (ppid == parent && args == "__nccl-probe") return std::stoi(e.path().filename().string());
  }
  return 0;
}

bool running(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return false;
  size_t rp = stat.rfind(')');
  return rp != std::string::npos && stat.size() > rp + 2 && stat[rp + 2] != 'Z';
}

// Polls /metrics until it holds `needle`.
std::string waitForMetric(const RunningDaemon& d, const std::string& needle,
                          std::chrono::seconds limit = 60s) {
  auto deadline = Clock::now() + limit;
  std::string body;
  while (Clock::now() < deadline) {
    if (auto m = d.get("/metrics"); m && m->status == 200) {
      body = m->body;
      if (body.find(needle) != std::string::npos) return body;
    }
    std::this_thread::sleep_for(100ms);
  }
  return body;
}

TEST(NcclProbeE2ETest, ScrapesAnswerWhileTheProbeHangsAndTheChildDiesWithTheDaemon) {
  TempDir tmp;
  auto d = start(tmp, config("5m", "hang"));
  ASSERT_GT(d.port, 0) << d.process->stderrText();
  pid_t child = 0;
  auto deadline = Clock::now() + 30s;
  while (!(child = probeChildOf(d.process->pid())) && Clock::now() < deadline)
    std::this_thread::sleep_for(20ms);
  ASSERT_GT(child, 0) << "the probe child never started\n" << d.process->stderrText();
  // The other sources publish on their own threads; wait for one before timing scrapes.
  const std::string kernel_ok = "fabricwatch_source_success{source=\"kernel\"} 1";
  ASSERT_NE(waitForMetric(d, kernel_ok).find(kernel_ok), std::string::npos);

  for (int i = 0; i < 5; ++i) {
    auto t0 = Clock::now();
    auto m = d.get("/metrics");
    auto took = Clock::now() - t0;
    ASSERT_TRUE(m);
    EXPECT_EQ(m->status, 200);
    EXPECT_LT(took, 1s) << "scrape " << i << " waited for the hung probe";
    EXPECT_NE(m->body.find(kernel_ok), std::string::npos);
  }
  EXPECT_TRUE(running(child)) << "the child hangs until its deadline";

  auto t0 = Clock::now();
  d.process->signal(SIGTERM);
  EXPECT_EQ(d.process->wait(20s), 0);
  EXPECT_LT(Clock::now() - t0, 5s) << "shutdown waited for the probe";
  // PR_SET_PDEATHSIG: the hung child is killed with its parent.
  deadline = Clock::now() + 10s;
  while (running(child) && Clock::now() < deadline) std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(running(child)) << "the probe child outlived the daemon";
  if (running(child)) ::kill(child, SIGKILL);
}

TEST(NcclProbeE2ETest, TimeoutIsReported) {
  TempDir tmp;
  auto d = start(tmp, config("1s", "hang"));
  ASSERT_GT(d.port, 0) << d.process->stderrText();
  std::string m = waitForMetric(d, "fabricwatch_nccl_probe_state{probe=\"local\"} 5");
  EXPECT_NE(m.find("fabricwatch_nccl_probe_state{probe=\"local\"} 5"), std::string::npos) << m;
  auto facts = d.get("/api/v1/facts");
  ASSERT_TRUE(facts);
  EXPECT_NE(facts->body.find("timed out after"), std::string::npos) << facts->body;
}

TEST(NcclProbeE2ETest, CrashIsReported) {
  TempDir tmp;
  auto d = start(tmp, config("1m", "crash"));
  ASSERT_GT(d.port, 0) << d.process->stderrText();
  std::string m = waitForMetric(d, "fabricwatch_nccl_probe_state{probe=\"local\"} 6");
  EXPECT_NE(m.find("fabricwatch_nccl_probe_state{probe=\"local\"} 6"), std::string::npos) << m;
  auto facts = d.get("/api/v1/facts");
  ASSERT_TRUE(facts);
  EXPECT_NE(facts->body.find("killed by signal 6"), std::string::npos) << facts->body;
}

// Every fabricwatch_nccl_probe_* family served has its row in docs/metrics.md, same help.
void checkDocumented(const std::string& metrics) {
  std::ifstream in(sourceDir() + "/docs/metrics.md");
  std::stringstream docs;
  docs << in.rdbuf();
  std::istringstream lines(metrics);
  std::string line;
  int n = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("# HELP fabricwatch_nccl_probe_", 0) != 0) continue;
    ++n;
    std::string name = line.substr(7, line.find(' ', 7) - 7);
    std::string help = line.substr(8 + name.size());
    std::string row = "| `" + name + "` | gauge |";
    size_t at = docs.str().find(row);
    ASSERT_NE(at, std::string::npos) << name << " is not in docs/metrics.md";
    std::string doc_row = docs.str().substr(at, docs.str().find('\n', at) - at);
    EXPECT_NE(doc_row.find("| " + help + " |"), std::string::npos) << name << ": " << help;
  }
  EXPECT_GE(n, 3);
}

TEST(NcclProbeE2ETest, RealLibraryWithoutGpuIsUnavailable) {
  if (!std::filesystem::exists("/usr/local/cuda/lib64/libnccl.so.2") &&
      !std::filesystem::exists("/usr/lib/x86_64-linux-gnu/libnccl.so.2"))
    FW_UNAVAILABLE("nccl") << "no libnccl.so.2 on this machine";
  TempDir tmp;
  auto d = start(tmp, config("1m", ""));
  ASSERT_GT(d.port, 0) << d.process->stderrText();
  std::string m = waitForMetric(d, "fabricwatch_nccl_probe_state{probe=\"local\"} 3");
  EXPECT_NE(m.find("fabricwatch_nccl_probe_state{probe=\"local\"} 3"), std::string::npos) << m;
  auto facts = d.get("/api/v1/facts");
  ASSERT_TRUE(facts);
  EXPECT_NE(facts->body.find("cudaGetDeviceCount: "), std::string::npos) << facts->body;
  EXPECT_NE(facts->body.find("\"nccl_version\""), std::string::npos) << facts->body;
  checkDocumented(m);
}

}  // namespace
}  // namespace fabricwatch::testing
