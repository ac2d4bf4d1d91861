#include "exporter/process_metrics.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <vector>

namespace fabricwatch::exporter {
namespace {

// The descriptors /proc/self/fd lists, less the one the listing itself holds.
size_t listedFds() {
  size_t n = 0;
  DIR* d = opendir("/proc/self/fd");
  if (!d) return 0;
  while (auto* e = readdir(d)) n += e->d_name[0] != '.';
  closedir(d);
  return n - 1;
}

TEST(ProcessMetricsTest, CountOpenFdsAgreesWithTheListing) {
  EXPECT_EQ(countOpenFds(), listedFds());
}

TEST(ProcessMetricsTest, CountOpenFdsFollowsOpensAndClosesAboveTheFirstTable) {
  size_t before = countOpenFds();
  std::vector<int> fds;
  for (int i = 0; i < 8; ++i) fds.push_back(open("/proc/self/stat", O_RDONLY | O_CLOEXEC));
  // A descriptor far above the others grows the table (FDSize) past its first 64 or 256 slots.
  int high = fcntl(fds[0], F_DUPFD_CLOEXEC, 700);
  ASSERT_GE(high, 700);
  fds.push_back(high);
  EXPECT_EQ(countOpenFds(), before + 9);
  EXPECT_EQ(countOpenFds(), listedFds());
  for (int fd : fds) close(fd);
  EXPECT_EQ(countOpenFds(), before);
}

}  // namespace
}  // namespace fabricwatch::exporter
