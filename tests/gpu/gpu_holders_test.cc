// The GPU-holder scan: which device files count as a GPU, which processes hold one, and a
// hostile /proc.
#include "gpu/gpu_holders.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "tests/support/gpu_host.h"
#include "tests/support/temp_dir.h"

namespace fabricwatch::gpu {
namespace {

using testing::hostWithGpuUsers;

TEST(GpuHoldersTest, GpuDevicesAreTheOnesCudaContextsOpen) {
  EXPECT_TRUE(isGpuDevice("/dev/nvidia0"));
  EXPECT_TRUE(isGpuDevice("/dev/nvidia15"));
  EXPECT_TRUE(isGpuDevice("/dev/nvidia-uvm"));
  EXPECT_FALSE(isGpuDevice("/dev/nvidiactl"));
  EXPECT_FALSE(isGpuDevice("/dev/nvidia-uvm-tools"));
  EXPECT_FALSE(isGpuDevice("/dev/nvidia-caps/nvidia-cap1"));
  EXPECT_FALSE(isGpuDevice("/dev/null"));
}

TEST(GpuHoldersTest, ScanFindsTheTrainingProcessAndIgnoresMonitoring) {
  auto root = hostWithGpuUsers();
  GpuScanOptions o;
  o.ignore_comms = {"nvidia-persistenced"};
  auto scan = scanGpuHolders(root.path(), o);
  ASSERT_EQ(scan.holders.size(), 1u);
  EXPECT_EQ(scan.holders[0].pid, 4242);
  EXPECT_EQ(scan.holders[0].comm, "python3");
  EXPECT_EQ(scan.processes_scanned, 3u);
  o.self = 4242;  // this process never counts
  EXPECT_TRUE(scanGpuHolders(root.path(), o).holders.empty());
  o.max_processes = 1;
  EXPECT_FALSE(scanGpuHolders(root.path(), o).complete);
}

// The kernel keeps 15 bytes of a process's name: nvidia-persistenced, which holds every GPU
// open, shows as "nvidia-persiste", so the shipped ignore list never matched it by its name.
TEST(GpuHoldersTest, IgnoredNamesMatchTheKernelsTruncatedComm) {
  EXPECT_TRUE(commMatches("nvidia-persiste", "nvidia-persistenced"));
  EXPECT_TRUE(commMatches("dcgmi", "dcgmi"));
  EXPECT_FALSE(commMatches("dcgmi", "dcgm"));
  EXPECT_FALSE(commMatches("", ""));
  testing::TempDir root;
  root.write("proc/1200/comm", "nvidia-persiste\n");
  std::filesystem::create_directories(root.path() + "/proc/1200/fd");
  std::filesystem::create_symlink("/dev/nvidia0", root.path() + "/proc/1200/fd/4");
  EXPECT_TRUE(scanForJobs(root.path(), monitoringProcesses()).holders.empty());
  EXPECT_EQ(scanForJobs(root.path(), {}).holders.size(), 1u);
  EXPECT_EQ(checkProcessName("nvidia-persistenced"), std::nullopt);
  EXPECT_EQ(*checkProcessName(""), "process name must not be empty");
  EXPECT_NE(checkProcessName("/usr/bin/dcgmi"), std::nullopt);
}

// The daemon is itself where the host root's /proc/self points (its pid in the host's pid
// namespace, not getpid() in its container's), and its children (the NCCL probe's child, named
// "exe") are never a job.
TEST(GpuHoldersTest, ThisDaemonAndItsChildrenAreNoJob) {
  EXPECT_EQ(parentPid("4300 (exe) S 4242 4300 1 0"), 4242);
  EXPECT_EQ(parentPid("77 (a) b) (c) R 12 77"), 12);
  EXPECT_EQ(parentPid("77 (x"), std::nullopt);
  EXPECT_EQ(parentPid("77 (x) S"), std::nullopt);
  auto root = hostWithGpuUsers();
  std::filesystem::create_symlink("4242", root.path() + "/proc/self");
  EXPECT_EQ(selfPid(root.path()), 4242);
  EXPECT_EQ(selfPid("/"), ::getpid());
  root.write("proc/4300/comm", "exe\n");
  root.write("proc/4300/stat", "4300 (exe) S 4242 4300 1 0 -1\n");
  std::filesystem::create_directories(root.path() + "/proc/4300/fd");
  std::filesystem::create_symlink("/dev/nvidia1", root.path() + "/proc/4300/fd/5");
  EXPECT_TRUE(scanForJobs(root.path(), monitoringProcesses()).holders.empty());
  std::filesystem::remove(root.path() + "/proc/self");  // another process's child is a job
  auto scan = scanForJobs(root.path(), monitoringProcesses());
  ASSERT_EQ(scan.holders.size(), 2u);
  EXPECT_EQ(busyReason(scan).rfind("the GPUs are in use: ", 0), 0u);
}

// A scan serves every caller within its age, and is taken anew after it; latest() never scans.
TEST(GpuHoldersTest, AJobWatchScansAgainOnlyOnceItsScanIsOld) {
  auto root = hostWithGpuUsers();
  JobWatch watch(root.path(), monitoringProcesses(), std::chrono::seconds(10));
  auto t0 = JobWatch::Clock::now();
  auto first = watch.current(t0);
  EXPECT_EQ(first->holders.size(), 1u);
  std::filesystem::remove_all(root.path() + "/proc/4242");  // the job ends
  EXPECT_EQ(watch.current(t0 + std::chrono::seconds(9)), first);
  auto later = watch.current(t0 + std::chrono::seconds(10));
  EXPECT_NE(later, first);
  EXPECT_TRUE(later->holders.empty());
  // The channel's thread never scans: it reads the last scan while that is not too old.
  EXPECT_EQ(watch.latest(t0 + std::chrono::seconds(29)), later);
  EXPECT_EQ(watch.latest(t0 + std::chrono::seconds(30)), nullptr);
  JobWatch fresh(root.path(), {}, std::chrono::seconds(10));
  EXPECT_EQ(fresh.latest(), nullptr);
}

TEST(GpuHoldersTest, AProcessDirectoryNamedPastAnyPidIsSkippedNotAnException) {
  // Under --path.rootfs, /proc is input: a directory named with more digits than any pid
  // reached std::stoll, which threw std::out_of_range out of the scan.
  testing::TempDir root;
  std::string big(40, '9');
  root.write("proc/" + big + "/comm", "python3\n");
  std::filesystem::create_directories(root.path() + "/proc/" + big + "/fd");
  std::filesystem::create_symlink("/dev/nvidia0", root.path() + "/proc/" + big + "/fd/3");
  GpuScan scan;
  ASSERT_NO_THROW(scan = scanGpuHolders(root.path(), GpuScanOptions{}));
  EXPECT_TRUE(scan.holders.empty());
}

}  // namespace
}  // namespace fabricwatch::gpu
