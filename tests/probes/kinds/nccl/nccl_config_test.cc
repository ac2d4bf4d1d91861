// [probes.nccl]: one table for the local run and the peer kind, sizes with units, the
// environment table, and the checks that keep a run's deadline inside its interval, each problem
// with its position.
#include "probes/kinds/nccl/nccl_config.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "config/loader.h"
#include "tests/support/registry.h"

namespace fabricwatch::probes::nccl {
namespace {

using config::loadConfig;
using config::loadEmbeddedDefault;
using testing::kindLoadOptions;

TEST(NcclConfigTest, DefaultsAreOffAndSane) {
  auto r = loadEmbeddedDefault(kindLoadOptions());
  ASSERT_TRUE(r.ok());
  const auto& n = ncclConfig(r.config);
  EXPECT_FALSE(ncclEnabled(r.config));
  EXPECT_TRUE(n.local);
  EXPECT_TRUE(n.peers);
  EXPECT_FALSE(n.run_at_start);
  EXPECT_LT(n.timeout, n.interval);
  EXPECT_EQ(n.operation, "all_reduce");
  EXPECT_EQ(n.device, -1);
  EXPECT_EQ(n.sizes, (std::vector<uint64_t>{1 << 20, 256 << 20}));
}

TEST(NcclConfigTest, OneTableForTheLocalRunAndThePeerKind) {
  auto r = loadConfig(
      "[probes.nccl]\nenabled = true\nlocal = false\npeers = true\ninterval = \"1h\"\n"
      "timeout = \"5m\"\noperation = \"send_recv\"\ndevice = 3\n"
      "sizes = [\"8\", \"64KiB\", \"1GiB\", \"2MB\"]\n"
      "[probes.nccl.env]\nNCCL_IB_HCA = \"mlx5\"\nNCCL_IB_GID_INDEX = \"3\"\n",
      "f.toml", kindLoadOptions());
  ASSERT_TRUE(r.ok()) << core::formatAll(r.problems);
  EXPECT_TRUE(ncclEnabled(r.config));
  const auto& n = ncclConfig(r.config);
  EXPECT_FALSE(n.local);
  EXPECT_TRUE(n.peers);
  EXPECT_EQ(n.operation, "send_recv");
  EXPECT_EQ(n.device, 3);
  EXPECT_EQ(n.sizes, (std::vector<uint64_t>{8, 65536, 1ull << 30, 2000000}));
  EXPECT_EQ(n.env.at("NCCL_IB_HCA"), "mlx5");
  EXPECT_EQ(n.env.at("NCCL_IB_GID_INDEX"), "3");
  EXPECT_EQ(n.interval, std::chrono::hours(1));
}

TEST(NcclConfigTest, ProblemsArePositioned) {
  auto r = loadConfig(
      "[probes.nccl]\nsizes = [\"1MiB\", \"lots\"]\n[probes.nccl.env]\n"
      "NCCL_DEBUG_FILE = \"/x\"\nlower = \"1\"\n",
      "f.toml", kindLoadOptions());
  ASSERT_EQ(r.problems.size(), 3u) << core::formatAll(r.problems);
  std::sort(r.problems.begin(), r.problems.end(),
            [](const auto& a, const auto& b) { return a.line < b.line; });
  EXPECT_EQ(r.problems[0].line, 2);
  EXPECT_NE(r.problems[0].message.find("\"lots\""), std::string::npos);
  EXPECT_EQ(r.problems[1].line, 4);
  EXPECT_NE(r.problems[1].message.find("set by the probe itself"), std::string::npos);
  EXPECT_EQ(r.problems[2].line, 5);

  auto none = loadConfig("[probes.nccl]\nsizes = []\n", "f.toml", kindLoadOptions());
  ASSERT_EQ(none.problems.size(), 1u);
  EXPECT_EQ(none.problems[0].line, 2);

  auto t = loadConfig("[probes.nccl]\ninterval = \"1m\"\ntimeout = \"1m\"\n", "f.toml",
                      kindLoadOptions());
  ASSERT_EQ(t.problems.size(), 1u);
  EXPECT_EQ(t.problems[0].line, 3);
  EXPECT_NE(t.problems[0].message.find("must be shorter than probes.nccl.interval"),
            std::string::npos);
  // Only the local run is scheduled by interval and timeout together.
  EXPECT_TRUE(loadConfig("[probes.nccl]\nlocal = false\ninterval = \"1s\"\ntimeout = \"5m\"\n",
                         "f.toml", kindLoadOptions())
                  .ok());

  auto op = loadConfig("[probes.nccl]\noperation = \"broadcast\"\ndevice = -2\n", "f.toml",
                       kindLoadOptions());
  ASSERT_EQ(op.problems.size(), 2u) << core::formatAll(op.problems);
  std::sort(op.problems.begin(), op.problems.end(),
            [](const auto& a, const auto& b) { return a.line < b.line; });
  EXPECT_NE(op.problems[0].message.find("all_reduce or send_recv"), std::string::npos);
  EXPECT_EQ(op.problems[1].line, 3);
}

TEST(NcclConfigTest, TheOldTableSaysWhereItMoved) {
  auto r = loadConfig("[probe]\ninterval = \"10s\"\n[probe.nccl]\nenabled = true\n", "f.toml",
                      kindLoadOptions());
  ASSERT_EQ(r.problems.size(), 1u) << core::formatAll(r.problems);
  EXPECT_EQ(r.problems[0].line, 3);
  EXPECT_NE(r.problems[0].message.find("configured under [probes.nccl]"), std::string::npos)
      << r.problems[0].message;
}

}  // namespace
}  // namespace fabricwatch::probes::nccl
