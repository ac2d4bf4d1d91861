#include "core/host_fs.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/support/temp_dir.h"

namespace fabricwatch::core {
namespace {

TEST(HostFsTest, ReadsBelowTheRoot) {
  testing::TempDir root;
  root.write("sys/class/infiniband/mlx5_0/fw_ver", "28.39.1002\n");
  HostFs fs(root.path() + "/");
  EXPECT_EQ(fs.path("/sys/class"), root.path() + "/sys/class");
  EXPECT_EQ(fs.readTrimmed("/sys/class/infiniband/mlx5_0/fw_ver"), "28.39.1002");
  EXPECT_EQ(fs.list("/sys/class/infiniband"), std::vector<std::string>{"mlx5_0"});
  EXPECT_TRUE(fs.exists("/sys/class/infiniband/mlx5_0"));
}

TEST(HostFsTest, MissingIsNotAnError) {
  testing::TempDir root;
  HostFs fs(root.path());
  EXPECT_EQ(fs.read("/proc/meminfo").status, HostFs::ReadStatus::kMissing);
  EXPECT_TRUE(fs.list("/sys/class/net").empty());
  EXPECT_EQ(fs.readTrimmed("/nope"), std::nullopt);
}

TEST(HostFsTest, UnreadableIsAnError) {
  if (geteuid() == 0) {
    // root reads mode-000 files anyway; a directory read as a file still fails with EISDIR.
    testing::TempDir root;
    root.write("sys/x/file", "1");
    HostFs fs(root.path());
    auto r = fs.read("/sys/x");
    EXPECT_EQ(r.status, HostFs::ReadStatus::kError);
    EXPECT_FALSE(r.error.empty());
    return;
  }
  testing::TempDir root;
  std::string p = root.write("secret", "1");
  chmod(p.c_str(), 0);
  EXPECT_EQ(HostFs(root.path()).read("/secret").status, HostFs::ReadStatus::kError);
}

TEST(HostFsTest, RootSlashMeansHostPaths) {
  HostFs fs("/");
  EXPECT_EQ(fs.path("/proc/meminfo"), "/proc/meminfo");
}

TEST(HostFsTest, TrimStripsWhitespace) {
  EXPECT_EQ(trim("  4: ACTIVE\n"), "4: ACTIVE");
  EXPECT_EQ(trim("\n\t "), "");
}

}  // namespace
}  // namespace fabricwatch::core
