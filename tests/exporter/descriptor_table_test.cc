#include "exporter/descriptor_table.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>

namespace fabricwatch::exporter {
namespace {

// The table's slots as the kernel reports them ("FDSize:" in /proc/self/status).
int tableSlots() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("FDSize:", 0) == 0) return std::stoi(line.substr(7));
  return -1;
}

int openDescriptors() {
  int n = 0;
  for (int fd = 0; fd < tableSlots(); ++fd) n += fcntl(fd, F_GETFD) != -1;
  return n;
}

TEST(DescriptorTableTest, GrowsTheTableOnceAndLeavesNoDescriptorOpen) {
  rlimit rl{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &rl), 0);
  int before = tableSlots();
  ASSERT_GT(before, 0);
  int want = before * 4;
  if (rl.rlim_cur != RLIM_INFINITY) want = std::min<int>(want, static_cast<int>(rl.rlim_cur));
  ASSERT_GT(want, before) << "the open-file limit (" << rl.rlim_cur << ") leaves no room to grow";
  int open_before = openDescriptors();
  EXPECT_EQ(reserveDescriptorTable(want), want);
  EXPECT_GE(tableSlots(), want);
  EXPECT_EQ(fcntl(want - 1, F_GETFD), -1) << "the slot used to grow the table stays open";
  EXPECT_EQ(openDescriptors(), open_before);
  // Asking again for no more than there is changes nothing.
  int slots = tableSlots();
  EXPECT_EQ(reserveDescriptorTable(want), want);
  EXPECT_EQ(tableSlots(), slots);
}

// Never beyond the open-file limit (dup2 past it fails): the table grows to the limit instead.
// In a child, so that the lower limit does not reach the other tests.
TEST(DescriptorTableTest, StopsAtTheOpenFileLimit) {
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    rlimit rl{};
    getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = 300;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0) _exit(10);
    if (reserveDescriptorTable(4096) != 300) _exit(11);
    if (tableSlots() < 300) _exit(12);
    if (fcntl(299, F_GETFD) != -1) _exit(13);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10: setrlimit, 11: the slots returned, 12: FDSize, "
                                       "13: the slot left open";
}

}  // namespace
}  // namespace fabricwatch::exporter
