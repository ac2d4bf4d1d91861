// workloads[].nccl_log: the job's own NCCL_DEBUG_FILE, named as NCCL names it, read inside the
// process's root (never outside it, whatever the name or the symlinks in that root say).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "nccl/log_file.h"
#include "tests/facts/fixture_facts.h"
#include "tests/support/temp_dir.h"

namespace fabricwatch::facts {
namespace {

using nccl::expandDebugFileName;
using nccl::openInProcessRoot;

const core::Value& workload(const core::Value& facts, int64_t pid) {
  for (const auto& w : facts.find("workloads")->asList()) {
    if (w.find("pid")->asInt() == pid) return w;
  }
  static core::Value none;
  ADD_FAILURE() << "no workload " << pid;
  return none;
}

TEST(WorkloadNcclLogTest, FileNamesExpandAsNcclDoes) {
  EXPECT_EQ(expandDebugFileName("/tmp/nccl.%h.%p", "node-7.cluster.local", "17"),
            "/tmp/nccl.node-7.17");
  EXPECT_EQ(expandDebugFileName("/x/%%h-%q-%", "h", "1"), "/x/%h-%q-%");
  EXPECT_EQ(expandDebugFileName("/x/%h", "a/b%c", "1"), "/x/a-b-c");
}

TEST(WorkloadNcclLogTest, SocketFallbackOfARunningJob) {
  auto f = collectFixture("roce_v2").facts;
  const auto& log = *workload(f, 5151).find("nccl_log");
  EXPECT_EQ(log.find("file")->asString(), "logs/nccl.88");  // relative: below its cwd
  EXPECT_EQ(log.find("inter_node_transport")->asString(), "socket");
  EXPECT_EQ(log.find("status")->asString(), "problem");
  EXPECT_EQ(log.find("network")->asString(), "Socket");
  EXPECT_EQ(log.find("problems")->asList().front().find("severity")->asString(), "critical");
}

TEST(WorkloadNcclLogTest, EfaJobThroughTheOfiPlugin) {
  auto f = collectFixture("p5_efa").facts;
  const auto& log = *workload(f, 4242).find("nccl_log");
  EXPECT_EQ(log.find("file")->asString(), "/var/log/nccl/trainer-0.17.log");  // %h, %p in the pod
  EXPECT_EQ(log.find("inter_node_transport")->asString(), "efa");
  EXPECT_EQ(log.find("gdr")->asString(), "on");
  EXPECT_EQ(log.find("ofi_provider")->asString(), "efa");
  EXPECT_EQ(log.find("net_plugin")->asString(), "AWS Libfabric");
  EXPECT_EQ(log.find("status")->asString(), "ok");
}

TEST(WorkloadNcclLogTest, NamesCannotLeaveTheProcessRoot) {
  testing::TempDir t;
  t.write("outside/secret", "NCCL INFO secret\n");
  t.write("root/var/log/ok.log", "x\n");
  std::filesystem::create_directories(t.path() + "/root/work");
  std::filesystem::create_symlink(t.path() + "/outside/secret", t.path() + "/root/var/log/abs");
  std::filesystem::create_symlink("../../../outside/secret", t.path() + "/root/var/log/rel");
  std::string root = t.path() + "/root", cwd = t.path() + "/root/work";

  int fd = openInProcessRoot(root, cwd, "/var/log/ok.log");
  EXPECT_GE(fd, 0);
  if (fd >= 0) ::close(fd);
  // An absolute symlink resolves inside the root (where nothing is), ".." stops at the root.
  for (const char* p : {"/var/log/abs", "/var/log/rel", "/../outside/secret"}) {
    fd = openInProcessRoot(root, cwd, p);
    EXPECT_LT(fd, 0) << p << " escaped the process root";
    if (fd >= 0) ::close(fd);
  }
  fd = openInProcessRoot(root, cwd, "../../outside/secret");
  EXPECT_LT(fd, 0) << "a relative name escaped the working directory";
  if (fd >= 0) ::close(fd);
}

TEST(WorkloadNcclLogTest, AFifoIsNotRead) {
  testing::TempDir t;
  std::filesystem::create_directories(t.path() + "/root");
  ASSERT_EQ(::mkfifo((t.path() + "/root/fifo").c_str(), 0600), 0);
  int fd = openInProcessRoot(t.path() + "/root", t.path() + "/root", "/fifo");
  ASSERT_GE(fd, 0) << "opened without blocking (O_NONBLOCK)";
  EXPECT_EQ(nccl::readLogHeadTail(fd), "");
  ::close(fd);
}

TEST(WorkloadNcclLogTest, OnlyTheHeadAndTailOfALargeLogAreRead) {
  testing::TempDir t;
  std::string big = "first line\n" + std::string(1 << 20, 'x') + "\nlast line\n";
  std::string p = t.write("big.log", big);
  int fd = ::open(p.c_str(), O_RDONLY);
  std::string got = nccl::readLogHeadTail(fd, 1024, 4096);
  ::close(fd);
  EXPECT_LE(got.size(), 1024u + 4096u);
  EXPECT_EQ(got.rfind("first line\n", 0), 0u);
  EXPECT_EQ(got.substr(got.size() - 10), "last line\n");
}

}  // namespace
}  // namespace fabricwatch::facts
