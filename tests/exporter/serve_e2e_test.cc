// End-to-end: the real binary, started on a fixture root and a free port, scraped over HTTP.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/support/daemon.h"
#include "tests/support/paths.h"
#include "tests/support/require.h"
#include "tests/support/tcp_client.h"
#include "tests/support/temp_dir.h"

namespace fabricwatch::testing {
namespace {

using namespace std::chrono_literals;

// A minimal host root: what the kernel source reads.
TempDir makeRoot() {
  TempDir root;
  root.write("proc/sys/kernel/osrelease", "6.1.0-18-amd64\n");
  root.write("proc/sys/kernel/hostname", "gpu-node-7\n");
  return root;
}

// The value of an unlabelled or labelled sample line starting with `series`, or nullopt.
std::optional<double> sample(const std::string& metrics, const std::string& series) {
  size_t pos = 0;
  while ((pos = metrics.find(series + " ", pos)) != std::string::npos) {
    if (pos == 0 || metrics[pos - 1] == '\n') {
      auto end = metrics.find('\n', pos);
      return std::stod(metrics.substr(pos + series.size() + 1, end - pos - series.size() - 1));
    }
    ++pos;
  }
  return std::nullopt;
}

TEST(ServeE2ETest, ServesMetricsHealthReadinessAndFacts) {
  TempDir root = makeRoot();
  auto d = startDaemon({"--path.rootfs=" + root.path()});
  ASSERT_GT(d.port, 0) << d.process->stderrText();
  ASSERT_TRUE(d.waitForStatus("/readyz", 200)) << d.process->stderrText();
  EXPECT_EQ(d.get("/healthz")->status, 200);

  auto m = d.get("/metrics");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->status, 200);
  EXPECT_NE(m->headers.find("text/plain; version=0.0.4"), std::string::npos);
  EXPECT_NE(m->body.find("fabricwatch_build_info{build="), std::string::npos);
  EXPECT_NE(m->body.find("fabricwatch_kernel_info{release=\"6.1.0-18-amd64\"} 1"),
            std::string::npos)
      << m->body;
  EXPECT_EQ(sample(m->body, "fabricwatch_source_success{source=\"kernel\"}"), 1.0);
  EXPECT_EQ(sample(m->body, "fabricwatch_config_last_reload_successful"), 1.0);
  EXPECT_TRUE(sample(m->body, "process_resident_memory_bytes").has_value());

  auto facts = d.get("/api/v1/facts");
  ASSERT_TRUE(facts);
  EXPECT_EQ(facts->status, 200);
  EXPECT_NE(facts->body.find("\"hostname\":\"gpu-node-7\""), std::string::npos) << facts->body;
  EXPECT_NE(facts->body.find("\"complete\":true"), std::string::npos);

  EXPECT_EQ(d.get("/api/v1/violations")->status, 200);
  EXPECT_EQ(d.get("/")->status, 200);
  EXPECT_EQ(d.get("/no/such/page")->status, 404);
}

TEST(ServeE2ETest, MetricsPassPromtoolLint) {
  if (!std::filesystem::exists("/usr/bin/promtool"))
    FW_UNAVAILABLE("tools") << "promtool not installed (Debian package prometheus)";
  TempDir root = makeRoot();
  auto d = startDaemon({"--path.rootfs=" + root.path()});
  ASSERT_GT(d.port, 0) << d.process->stderrText();
  ASSERT_TRUE(d.waitForStatus("/readyz", 200));
  d.get("/metrics");  // so that request counters exist in the second scrape
  auto m = d.get("/metrics");
  ASSERT_TRUE(m);
  TempDir tmp;
  std::string file = tmp.write("metrics.txt", m->body);
  auto r = runCommand({"/bin/sh", "-c", "/usr/bin/promtool check metrics < " + file});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out + r.err, "") << "promtool found lint problems";
}

// /proc/PID/status field, e.g. "CapEff" -> "0000000000004000".
std::string statusField(pid_t pid, const std::string& name) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(name + ":", 0) == 0)
      return line.substr(line.find_first_not_of(" \t", name.size() + 1));
  return "";
}

// docs/security.md: serve keeps only the capabilities its configuration needs (CAP_IPC_LOCK;
// with the workloads source, CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH too) and sets no_new_privs,
// for every thread and for the NCCL probe's child.
TEST(ServeE2ETest, KeepsOnlyTheCapabilitiesItsConfigurationNeeds) {
  TempDir root = makeRoot();
  uint64_t mine = std::stoull(statusField(::getpid(), "CapEff"), nullptr, 16);
  auto d = startDaemon({"--path.rootfs=" + root.path()});
  ASSERT_GT(d.port, 0) << d.process->stderrText();
  ASSERT_TRUE(d.waitForStatus("/readyz", 200));
  EXPECT_EQ(statusField(d.process->pid(), "NoNewPrivs"), "1");
  const uint64_t ipc_lock = 1ull << 14, ptrace = 1ull << 19, dac_read_search = 1ull << 2;
  uint64_t eff = std::stoull(statusField(d.process->pid(), "CapEff"), nullptr, 16);
  uint64_t prm = std::stoull(statusField(d.process->pid(), "CapPrm"), nullptr, 16);
  EXPECT_EQ(eff, mine & ipc_lock);
  EXPECT_EQ(prm, mine & ipc_lock);
  // Every thread holds the same.
  for (const auto& t :
       std::filesystem::directory_iterator("/proc/" + std::to_string(d.process->pid()) + "/task")) {
    std::ifstream in(t.path() / "status");
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("CapEff:", 0) == 0) {
        EXPECT_EQ(std::stoull(line.substr(7), nullptr, 16), mine & ipc_lock) << t.path();
      }
    }
  }
  if (mine & (1ull << 8)) {  // CAP_SETPCAP: the bounding set was cut as well
    EXPECT_EQ(std::stoull(statusField(d.process->pid(), "CapBnd"), nullptr, 16), mine & ipc_lock);
  }
  std::string cfg = root.write("fw.toml", "[collect.sources.workloads]\nenabled = true\n");
  auto w = startDaemon({"--path.rootfs=" + root.path(), "--config.file=" + cfg});
  ASSERT_GT(w.port, 0) << w.process->stderrText();
  eff = std::stoull(statusField(w.process->pid(), "CapEff"), nullptr, 16);
  EXPECT_EQ(eff, mine & (ipc_lock | ptrace | dac_read_search));
}

TEST(ServeE2ETest, SigtermStopsWithinASecond) {
  TempDir root = makeRoot();
  auto d = startDaemon({"--path.rootfs=" + root.path()});
  ASSERT_GT(d.port, 0);
  ASSERT_TRUE(d.waitForStatus("/readyz", 200));
  auto before = std::chrono::steady_clock::now();
  d.process->signal(SIGTERM);
  auto code = d.process->wait(2s);
  ASSERT_TRUE(code.has_value()) << "still running 2s after SIGTERM";
  EXPECT_EQ(*code, 0);
  EXPECT_LT(std::chrono::steady_clock::now() - before, 1s);
}

// --log.level and --log.format hold from the first line: the privileges line was logged at
// info before the daemon applied the configured level.
TEST(ServeE2ETest, LogLevelHoldsFromTheFirstLine) {
  TempDir root = makeRoot();
  int port = freePort();
  Process p({binaryPath(), "serve", "--path.rootfs=" + root.path(),
             "--web.listen-address=127.0.0.1:" + std::to_string(port), "--log.level=warn",
             "--log.format=json"});
  RunningDaemon d;
  d.port = port;
  ASSERT_TRUE(d.waitForStatus("/readyz", 200)) << p.stderrText();
  p.signal(SIGTERM);
  ASSERT_TRUE(p.wait(2s).has_value());
  std::istringstream lines(p.stderrText());
  for (std::string line; std::getline(lines, line);) {
    EXPECT_EQ(line.find("\"level\":\"info\""), std::string::npos) << line;
    EXPECT_EQ(line.rfind("{", 0), 0u) << "not JSON: " << line;
  }
}

TEST(ServeE2ETest, SigintStopsToo) {
  TempDir root = makeRoot();
  auto d = startDaemon({"--path.rootfs=" + root.path()});
  ASSERT_GT(d.port, 0);
  d.process->signal(SIGINT);
  auto code = d.process->wait(2s);
  ASSERT_TRUE(code.has_value()) << "still running 2s after SIGINT";
  EXPECT_EQ(*code, 0);
}

TEST(ServeE2ETest, SighupReloadKeepsRunningConfigWhenTheNewOneIsInvalid) {
  TempDir root = makeRoot();
  TempDir cfg;
  std::string file = cfg.write("fw.toml", "[collect]\ninterval = \"1s\"\ntimeout = \"500ms\"\n");
  auto d = startDaemon({"--path.rootfs=" + root.path(), "--config.file=" + file});
  ASSERT_GT(d.port, 0) << d.process->stderrText();
  ASSERT_TRUE(d.waitForStatus("/readyz", 200));

  cfg.write("fw.toml", "[collect]\ninterval = \"5 parsecs\"\n");
  d.process->signal(SIGHUP);
  ASSERT_TRUE(d.process->waitForStderr("keeping the running one", 5s)) << d.process->stderrText();
  EXPECT_NE(d.process->stderrText().find("fw.toml:2:12: bad duration"), std::string::npos);
  auto m = d.get("/metrics");
  ASSERT_TRUE(m);
  EXPECT_EQ(sample(m->body, "fabricwatch_config_last_reload_successful"), 0.0);

  cfg.write("fw.toml", "[collect]\ninterval = \"2s\"\ntimeout = \"1s\"\n");
  d.process->signal(SIGHUP);
  ASSERT_TRUE(d.process->waitForStderr("configuration reloaded", 5s));
  m = d.get("/metrics");
  EXPECT_EQ(sample(m->body, "fabricwatch_config_last_reload_successful"), 1.0);
  EXPECT_EQ(d.get("/readyz")->status, 200) << "facts are carried over a reload";
}

// The RDMA and GPU sources keep sysfs attributes open (about 600 on the p5 root). A reload
// builds new sources; the old ones must give their descriptors back, not pile them up.
TEST(ServeE2ETest, ReloadsGiveKeptDescriptorsBack) {
  TempDir cfg;  // with a file, a reload builds a new scheduler and new sources
  // The run counts (optional series) tell when the new scheduler has collected.
  std::string file = cfg.write("fw.toml",
                               "[collect]\nextra_metrics = [\"fabricwatch_source_runs_total\"]\n"
                               "[collect.sources.kernel]\ninterval = \"60s\"\n");
  auto d = startDaemon({"--path.rootfs=" + fixture("p5_efa"), "--config.file=" + file});
  ASSERT_GT(d.port, 0) << d.process->stderrText();
  ASSERT_TRUE(d.waitForStatus("/readyz", 200));
  auto fds = [&] { return sample(d.get("/metrics")->body, "process_open_fds").value_or(-1); };
  double before = fds();
  EXPECT_GT(before, 500) << "the p5 root's attributes are kept open";
  auto count = [](const std::string& text, const std::string& needle) {
    size_t n = 0;
    for (size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
    return n;
  };
  const std::string runs = "fabricwatch_source_runs_total{source=\"rdma\"}";
  auto rdma_runs = [&] { return sample(d.get("/metrics")->body, runs).value_or(-1); };
  for (size_t i = 1; i <= 3; ++i) {
    double runs_before = rdma_runs();
    d.process->signal(SIGHUP);
    // The new scheduler carries the counts over and runs every source at once.
    auto deadline = std::chrono::steady_clock::now() + 5s;
    while ((count(d.process->stderrText(), "configuration reloaded") < i ||
            rdma_runs() <= runs_before) &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(20ms);
    }
    ASSERT_EQ(count(d.process->stderrText(), "configuration reloaded"), i);
    ASSERT_GT(rdma_runs(), runs_before) << "reload " << i << " ran no new collection";
  }
  double after = fds();
  EXPECT_NEAR(after, before, 4);
}

// The daemon's descriptors are bounded by its configuration, not by the host: kept sysfs
// attributes (about 600 on the p5 root) take at most a quarter of the open-file limit, and what
// is not kept is read by path with the same result (docs/security.md, "Open descriptors").
TEST(ServeE2ETest, KeptDescriptorsStayWithinAQuarterOfTheOpenFileLimit) {
  auto rdma = [](const RunningDaemon& d) {
    std::string out;
    std::istringstream in(d.get("/metrics")->body);
    for (std::string line; std::getline(in, line);)
      if (line.rfind("fabricwatch_rdma_", 0) == 0) out += line + "\n";
    return out;
  };
  auto fds = [](const RunningDaemon& d) {
    return sample(d.get("/metrics")->body, "process_open_fds").value_or(-1);
  };
  auto free_run = startDaemon({"--path.rootfs=" + fixture("p5_efa")});
  ASSERT_GT(free_run.port, 0) << free_run.process->stderrText();
  ASSERT_TRUE(free_run.waitForStatus("/readyz", 200));
  EXPECT_GT(fds(free_run), 500) << "the p5 root's attributes are kept open";
  // 256 descriptors, soft and hard: a quarter, 64, for kept attributes.
  auto capped = startDaemonUnder({"/usr/bin/prlimit", "--nofile=256:256", "--"},
                                 {"--path.rootfs=" + fixture("p5_efa")});
  ASSERT_GT(capped.port, 0) << capped.process->stderrText();
  ASSERT_TRUE(capped.waitForStatus("/readyz", 200));
  double n = fds(capped);
  EXPECT_GT(n, 64) << "the cap is used";
  EXPECT_LE(n, 64 + 32) << "64 kept, and the daemon's own (stdio, listeners, epoll, wake pipes)";
  std::string want = rdma(free_run);
  EXPECT_NE(want.find("fabricwatch_rdma_port_hw_stat_total"), std::string::npos);
  EXPECT_EQ(rdma(capped), want) << "attributes past the cap read the same, by path";
}

TEST(ServeE2ETest, InvalidConfigExitsTwoWithPositionedMessages) {
  TempDir cfg;
  std::string file =
      cfg.write("bad.toml", "[web]\nthreads = 0\n[collect]\ninterval = \"5 parsecs\"\n");
  auto r = runCommand({binaryPath(), "serve", "--config.file=" + file});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(file + ":2:11: value 0 out of range [1, 64]"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(file + ":4:12: bad duration \"5 parsecs\""), std::string::npos) << r.err;
}

TEST(ServeE2ETest, PortInUseExitsNonZeroWithAClearMessage) {
  auto first = startDaemon({});
  ASSERT_GT(first.port, 0);
  auto r = runCommand(
      {binaryPath(), "serve", "--web.listen-address=127.0.0.1:" + std::to_string(first.port)});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cannot listen on"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace fabricwatch::testing
