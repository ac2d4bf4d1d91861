// core::runChild: the deadline kills the child's whole process group, a crash is reported with
// its signal, results are bounded, lines arrive while the child runs, and nothing is left
// behind (no zombies, no grandchildren). The child is fabricwatch's own probe subcommand in its
// test modes, or /bin/sh where a test needs a process group.
#include "core/child_process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/support/paths.h"
#include "tests/support/proc_table.h"

namespace fabricwatch::core {
namespace {

using namespace std::chrono_literals;

ChildSpec probeChild(const std::string& test_mode, std::chrono::milliseconds timeout) {
  ChildSpec s;
  s.exe = testing::binaryPath();
  s.argv = {s.exe, "__nccl-probe"};
  s.env = {"FABRICWATCH_NCCL_PROBE_TEST_MODE=" + test_mode};
  s.timeout = timeout;
  return s;
}

ChildSpec shell(const std::string& script, std::chrono::milliseconds timeout = 20s) {
  ChildSpec s;
  s.exe = "/bin/sh";
  s.argv = {"sh", "-c", script};
  s.env = {"PATH=/usr/bin:/bin"};
  s.timeout = timeout;
  return s;
}

bool alive(pid_t pid) {
  // A zombie still has /proc/PID; a reaped process has none (its PID is not reused this soon).
  return std::filesystem::exists("/proc/" + std::to_string(pid));
}

int zombieChildren() { return testing::zombieChildren(::getpid()); }

TEST(ChildProcessTest, ExitCodeOutputAndInput) {
  auto s = shell("cat >&3; echo to-stdout; echo to-stderr >&2; exit 3");
  s.input = "request line\n";
  auto r = runChild(s);
  ASSERT_EQ(r.outcome, ChildResult::Outcome::kExited) << r.describe();
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.result, "request line\n");
  EXPECT_NE(r.output.find("to-stdout"), std::string::npos);
  EXPECT_NE(r.output.find("to-stderr"), std::string::npos);
  EXPECT_EQ(r.describe(), "exited with status 3");
  EXPECT_FALSE(alive(r.pid));
}

TEST(ChildProcessTest, TimeoutKillsTheChildAndReportsIt) {
  auto r = runChild(probeChild("hang", 300ms));
  ASSERT_EQ(r.outcome, ChildResult::Outcome::kTimedOut) << r.describe();
  EXPECT_TRUE(r.reaped);
  EXPECT_EQ(r.signal, SIGKILL);
  EXPECT_EQ(r.result, "state=");  // what it wrote before it hung
  EXPECT_NE(r.describe().find("timed out after"), std::string::npos) << r.describe();
  EXPECT_GE(r.seconds, 0.3);
  EXPECT_FALSE(alive(r.pid));
  EXPECT_EQ(zombieChildren(), 0);
}

TEST(ChildProcessTest, TimeoutKillsWhatTheChildStarted) {
  // The shell starts a grandchild and reports its PID, then waits: the kill must reach the
  // whole process group, not only the shell.
  pid_t grandchild = 0;
  auto s = shell("sleep 300 & echo $! >&3; wait", 1s);
  s.on_result_line = [&](std::string_view line) { grandchild = std::stoi(std::string(line)); };
  auto r = runChild(s);
  ASSERT_EQ(r.outcome, ChildResult::Outcome::kTimedOut) << r.describe();
  ASSERT_GT(grandchild, 0) << "the line arrived while the child ran";
  // The grandchild was re-parented to init (or a subreaper) when the shell died; it must be
  // dead (gone, or a zombie its new parent has yet to reap), never running on.
  auto running = [&] {
    std::ifstream in("/proc/" + std::to_string(grandchild) + "/stat");
    std::string stat;
    if (!std::getline(in, stat)) return false;
    size_t rp = stat.rfind(')');
    return rp == std::string::npos || stat.size() <= rp + 2 || stat[rp + 2] != 'Z';
  };
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (running() && std::chrono::steady_clock::now() < deadline) ::usleep(10000);
  EXPECT_FALSE(running()) << "the grandchild " << grandchild << " survived the timeout";
  if (running()) ::kill(grandchild, SIGKILL);
}

TEST(ChildProcessTest, CrashIsReportedWithItsSignal) {
  auto r = runChild(probeChild("crash", 20s));
  ASSERT_EQ(r.outcome, ChildResult::Outcome::kSignaled) << r.describe();
  EXPECT_EQ(r.signal, SIGABRT);
  EXPECT_NE(r.describe().find("killed by signal 6"), std::string::npos) << r.describe();
  EXPECT_FALSE(alive(r.pid));
  EXPECT_EQ(zombieChildren(), 0);
}

TEST(ChildProcessTest, ResultIsBounded) {
  auto s = probeChild("flood", 20s);  // writes about 4 MB to descriptor 3
  s.max_result_bytes = 4096;
  auto r = runChild(s);
  ASSERT_EQ(r.outcome, ChildResult::Outcome::kExited) << r.describe();
  EXPECT_TRUE(r.result_truncated);
  EXPECT_EQ(r.result.size(), 4096u);
}

TEST(ChildProcessTest, OutputKeepsOnlyTheTail) {
  auto s = shell("i=0; while [ $i -lt 2000 ]; do echo line-$i; i=$((i+1)); done");
  s.max_output_bytes = 100;
  auto r = runChild(s);
  ASSERT_EQ(r.outcome, ChildResult::Outcome::kExited);
  EXPECT_LE(r.output.size(), 100u);
  EXPECT_NE(r.output.find("line-1999"), std::string::npos);
}

TEST(ChildProcessTest, ChildSeesOnlyItsDescriptorsAndEnvironment) {
  // The parent's descriptors (here a file kept open) must not leak into the child.
  std::ofstream keep("/dev/null");
  auto r = runChild(shell("ls /proc/self/fd >&3; env >&2"));
  ASSERT_EQ(r.outcome, ChildResult::Outcome::kExited) << r.output;
  std::istringstream fds(r.result);
  std::string fd;
  std::vector<std::string> open;
  while (fds >> fd) open.push_back(fd);
  // 0-3, plus the descriptor ls opened to list the directory.
  EXPECT_LE(open.size(), 5u) << r.result;
  EXPECT_EQ(r.output.find("HOME="), std::string::npos) << "only the given environment";
}

TEST(ChildProcessTest, SpawnFailureIsReported) {
  ChildSpec s;
  s.exe = "/nonexistent/fabricwatch";
  s.argv = {s.exe};
  auto r = runChild(s);
  EXPECT_EQ(r.outcome, ChildResult::Outcome::kSpawnFailed);
  EXPECT_NE(r.describe().find("No such file"), std::string::npos) << r.describe();
}

TEST(ChildProcessTest, CancelFromAnotherThreadKillsTheChildAtOnce) {
  std::atomic<bool> cancel{false};
  auto s = probeChild("hang", 120s);
  s.cancel = &cancel;
  std::thread canceller([&] {
    std::this_thread::sleep_for(300ms);
    cancel = true;
  });
  auto r = runChild(s);
  canceller.join();
  ASSERT_EQ(r.outcome, ChildResult::Outcome::kCancelled) << r.describe();
  EXPECT_EQ(r.signal, SIGKILL);
  EXPECT_TRUE(r.reaped);
  EXPECT_LT(r.seconds, 60.0) << "cancelled, not timed out";
  EXPECT_NE(r.describe().find("cancelled after"), std::string::npos) << r.describe();
  EXPECT_FALSE(alive(r.pid));
  EXPECT_EQ(zombieChildren(), 0);
}

TEST(ChildProcessTest, CancelFromTheResultLineCallback) {
  // As the NCCL peer probe does when the peer declines the unique id it was just sent.
  std::atomic<bool> cancel{false};
  auto s = shell("echo unique_id=abc >&3; exec sleep 300", 120s);
  s.cancel = &cancel;
  std::string seen;
  s.on_result_line = [&](std::string_view line) {
    seen = std::string(line);
    cancel = true;
  };
  auto r = runChild(s);
  EXPECT_EQ(seen, "unique_id=abc");
  ASSERT_EQ(r.outcome, ChildResult::Outcome::kCancelled) << r.describe();
  EXPECT_LT(r.seconds, 60.0);
  EXPECT_FALSE(alive(r.pid));
  EXPECT_EQ(zombieChildren(), 0);
}

TEST(ChildProcessTest, ManyRunsLeaveNoZombies) {
  for (int i = 0; i < 5; ++i) {
    runChild(shell("exit 0"));
    runChild(probeChild("hang", 50ms));
  }
  EXPECT_EQ(zombieChildren(), 0);
}

}  // namespace
}  // namespace fabricwatch::core
