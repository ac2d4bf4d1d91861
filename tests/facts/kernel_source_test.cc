#include "facts/kernel_source.h"

#include <gtest/gtest.h>

#include "core/snapshot.h"
#include "core/text_format.h"
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
  root.write("proc/sys/kernel/hostname", "node-1\n");
  auto c = KernelSource().collect({root.path()});
  EXPECT_EQ(c.facts.findPath("kernel.release"), nullptr);
  EXPECT_EQ(c.facts.findPath("kernel.modules"), nullptr);
  EXPECT_EQ(c.facts.findPath("kernel.builtin_modules"), nullptr);
  EXPECT_EQ(c.facts.findPath("kernel.uverbs_devices"), nullptr);
  EXPECT_FALSE(c.failed);
  EXPECT_EQ(c.read_errors, 0u);
}

// Issue 25: a root without /proc (a tree of sysfs testdata) reported success with kernel: {},
// and ib-uverbs-loaded read that as "not loaded". Nothing readable is a failed source.
TEST(KernelSourceTest, NothingReadableFailsTheSource) {
  testing::TempDir root;
  root.write("sys/class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n");
  auto c = KernelSource().collect({root.path()});
  EXPECT_TRUE(c.failed);
  ASSERT_FALSE(c.errors.empty());
  EXPECT_NE(c.errors[0].find("no kernel facts in the host root"), std::string::npos);
  EXPECT_EQ(c.read_errors, 0u);  // missing files are no read errors
  EXPECT_EQ(c.facts.find("kernel"), nullptr);
}

// Issue 25: ib_uverbs built into the kernel is not in /proc/modules; /sys/module shows it
// without initstate, and /sys/class/infiniband_verbs shows the verbs devices it made.
TEST(KernelSourceTest, BuiltInModulesAndVerbsDevices) {
  testing::TempDir root;
  root.write("proc/modules",
             "mlx5_ib 450560 0 - Live 0x0000000000000000\n"
             "mlx5_core 2080768 1 mlx5_ib, Live 0x0000000000000000\n");
  root.write("sys/module/mlx5_core/initstate", "live\n");
  root.write("sys/module/mlx5_core/version", "23.10-1.1.9\n");
  root.write("sys/module/mlx5_ib/initstate", "live\n");
  root.write("sys/module/ib_uverbs/uevent", "");
  root.write("sys/module/ib_core/parameters/netns_mode", "Y\n");
  root.write("sys/module/nvidia/initstate", "live\n");  // loadable, yet not loaded: neither
  root.write("sys/module/nf_conntrack/parameters/hashsize", "262144\n");  // not watched
  root.write("sys/class/infiniband_verbs/abi_version", "6\n");
  for (int i : {0, 1, 2, 10})
    root.write("sys/class/infiniband_verbs/uverbs" + std::to_string(i) + "/ibdev",
               "mlx5_" + std::to_string(i) + "\n");
  auto c = KernelSource().collect({root.path()});
  EXPECT_FALSE(c.failed);
  EXPECT_EQ(c.read_errors, 0u);
  const auto* builtin = c.facts.findPath("kernel.builtin_modules");
  ASSERT_NE(builtin, nullptr);
  ASSERT_EQ(builtin->size(), 2u);
  EXPECT_EQ(builtin->asList()[0].asString(), "ib_core");
  EXPECT_EQ(builtin->asList()[1].asString(), "ib_uverbs");
  const auto* uverbs = c.facts.findPath("kernel.uverbs_devices");
  ASSERT_NE(uverbs, nullptr);
  ASSERT_EQ(uverbs->size(), 4u);
  EXPECT_EQ(uverbs->asList()[2].asString(), "uverbs2");
  EXPECT_EQ(uverbs->asList()[3].asString(), "uverbs10");

  // Built in counts as loaded in the metric.
  core::Snapshot snap;
  snap.facts = c.facts;
  core::MetricFamilies fams;
  KernelSource().renderMetrics(snap, fams);
  std::string text = core::textFormat(fams);
  EXPECT_NE(text.find("fabricwatch_kernel_module_loaded{module=\"ib_uverbs\"} 1"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("fabricwatch_kernel_module_loaded{module=\"nvidia\"} 0"), std::string::npos);
}

}  // namespace
}  // namespace fabricwatch::facts
