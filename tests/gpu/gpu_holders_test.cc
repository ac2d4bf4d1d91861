// The GPU-holder scan: which device files count as a GPU, which processes hold one, and a
// hostile /proc.
#include "gpu/gpu_holders.h"

#include <gtest/gtest.h>

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
