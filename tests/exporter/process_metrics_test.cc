#include "exporter/process_metrics.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <ctime>
#include <fstream>
#include <string>
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

// The one sample of a family's metric, or -1 when the family is missing.
double valueOf(const core::MetricFamilies& families, const std::string& name) {
  for (const auto& f : families) {
    if (f.name != name || f.metric.empty()) continue;
    const auto& m = f.metric.front();
    return f.type == prometheus::MetricType::Counter ? m.counter.value : m.gauge.value;
  }
  return -1;
}

// What the kernel says of this process, field by field from /proc/self/status.
double statusKb(const std::string& key) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key + ":", 0) == 0) return std::stod(line.substr(key.size() + 1));
  return -1;
}

TEST(ProcessMetricsTest, CpuMemoryAndStartTimeDescribeThisProcess) {
  // Some CPU to count, and a megabyte more resident.
  std::vector<char> touched(1 << 20, 1);
  volatile double x = 0;
  for (int i = 0; i < 3000000; ++i) x = x + i * 0.5;
  core::MetricFamilies families;
  appendProcessMetrics(families);
  rusage ru{};
  ASSERT_EQ(getrusage(RUSAGE_SELF, &ru), 0);
  double cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
               ru.ru_stime.tv_usec / 1e6;
  EXPECT_GT(valueOf(families, "process_cpu_seconds_total"), 0);
  EXPECT_LE(valueOf(families, "process_cpu_seconds_total"), cpu);
  EXPECT_NEAR(valueOf(families, "process_virtual_memory_bytes") / 1024, statusKb("VmSize"), 4096);
  EXPECT_NEAR(valueOf(families, "process_resident_memory_bytes") / 1024, statusKb("VmRSS"), 1024);
  // Started in the last hour, not in the future.
  double now = static_cast<double>(std::time(nullptr));
  double start = valueOf(families, "process_start_time_seconds");
  EXPECT_LE(start, now + 1);
  EXPECT_GT(start, now - 3600);
  EXPECT_EQ(valueOf(families, "process_open_fds"), static_cast<double>(listedFds()));
  EXPECT_GT(touched[touched.size() / 2], 0);
}

}  // namespace
}  // namespace fabricwatch::exporter
