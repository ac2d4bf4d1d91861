#include "facts/kernel_source.h"

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace fabricwatch::facts {
namespace {

TEST(KernelSourceTest, ReadsReleaseAndHostnameFromTheRoot) {
  testing::TempDir root;
  root.write("proc/sys/kernel/osrelease", "5.15.0-1051-aws\n");
  root.write("proc/sys/kernel/hostname", "ip-10-1-2-3\n");
  auto c = KernelSource().collect({root.path()});
  EXPECT_EQ(c.facts.findPath("kernel.release")->asString(), "5.15.0-1051-aws");
  EXPECT_EQ(c.facts.findPath("kernel.hostname")->asString(), "ip-10-1-2-3");
  EXPECT_EQ(c.read_errors, 0u);
}

TEST(KernelSourceTest, MissingFilesLeaveFactsAbsent) {
  testing::TempDir root;
  auto c = KernelSource().collect({root.path()});
  EXPECT_EQ(c.facts.findPath("kernel.release"), nullptr);
  EXPECT_FALSE(c.failed);
}

}  // namespace
}  // namespace fabricwatch::facts
