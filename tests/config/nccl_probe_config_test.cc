// [probe.nccl]: sizes with units, the environment table, and the checks that keep a run's
// deadline inside its interval, each problem with its position.
#include <gtest/gtest.h>

#include <algorithm>

#include "config/loader.h"

namespace fabricwatch::config {
namespace {

TEST(NcclProbeConfigTest, DefaultsAreOffAndSane) {
  auto r = loadEmbeddedDefault();
  ASSERT_TRUE(r.ok());
  const auto& n = r.config.nccl_probe;
  EXPECT_FALSE(n.enabled);
  EXPECT_FALSE(n.run_at_start);
  EXPECT_LT(n.timeout, n.interval);
  EXPECT_EQ(n.sizes, (std::vector<uint64_t>{1 << 20, 256 << 20}));
}

TEST(NcclProbeConfigTest, SizesEnvironmentAndSchedule) {
  auto r = loadConfig(
      "[probe.nccl]\nenabled = true\ninterval = \"1h\"\ntimeout = \"5m\"\n"
      "sizes = [\"8\", \"64KiB\", \"1GiB\", \"2MB\"]\n"
      "[probe.nccl.env]\nNCCL_IB_HCA = \"mlx5\"\nNCCL_IB_GID_INDEX = \"3\"\n",
      "f.toml");
  ASSERT_TRUE(r.ok()) << core::formatAll(r.problems);
  const auto& n = r.config.nccl_probe;
  EXPECT_EQ(n.sizes, (std::vector<uint64_t>{8, 65536, 1ull << 30, 2000000}));
  EXPECT_EQ(n.env.at("NCCL_IB_HCA"), "mlx5");
  EXPECT_EQ(n.env.at("NCCL_IB_GID_INDEX"), "3");
  EXPECT_EQ(n.interval, std::chrono::hours(1));
}

TEST(NcclProbeConfigTest, ProblemsArePositioned) {
  auto r = loadConfig(
      "[probe.nccl]\nsizes = [\"1MiB\", \"lots\"]\n[probe.nccl.env]\nNCCL_DEBUG_FILE = \"/x\"\n"
      "lower = \"1\"\n",
      "f.toml");
  ASSERT_EQ(r.problems.size(), 3u) << core::formatAll(r.problems);
  std::sort(r.problems.begin(), r.problems.end(),
            [](const auto& a, const auto& b) { return a.line < b.line; });
  EXPECT_EQ(r.problems[0].line, 2);
  EXPECT_NE(r.problems[0].message.find("\"lots\""), std::string::npos);
  EXPECT_EQ(r.problems[1].line, 4);
  EXPECT_NE(r.problems[1].message.find("set by the probe itself"), std::string::npos);
  EXPECT_EQ(r.problems[2].line, 5);

  auto none = loadConfig("[probe.nccl]\nsizes = []\n", "f.toml");
  ASSERT_EQ(none.problems.size(), 1u);
  EXPECT_EQ(none.problems[0].line, 2);

  auto t = loadConfig("[probe.nccl]\ninterval = \"1m\"\ntimeout = \"1m\"\n", "f.toml");
  ASSERT_EQ(t.problems.size(), 1u);
  EXPECT_EQ(t.problems[0].line, 3);
  EXPECT_NE(t.problems[0].message.find("must be shorter than probe.nccl.interval"),
            std::string::npos);
}

}  // namespace
}  // namespace fabricwatch::config
