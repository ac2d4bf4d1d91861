// NCCL's list syntax: prefix, =exact, ^exclusion, :port.
#include "nccl/nccl_list.h"

#include <gtest/gtest.h>

namespace fabricwatch::nccl {
namespace {

TEST(NcclListTest, ParsesListLevelPrefixes) {
  NcclList l = parseNcclList("^=docker0,lo");
  EXPECT_TRUE(l.exclude);
  EXPECT_TRUE(l.exact);
  ASSERT_EQ(l.entries.size(), 2u);
  EXPECT_EQ(l.entries[0].name, "docker0");
  EXPECT_EQ(l.entries[1].name, "lo");
  NcclList h = parseNcclList("mlx5_0:1,mlx5_1");
  EXPECT_FALSE(h.exclude);
  EXPECT_EQ(h.entries[0].port, 1);
  EXPECT_EQ(h.entries[1].port, -1);
}

TEST(NcclListTest, SelectsLikeNccl) {
  EXPECT_TRUE(ncclSelects(parseNcclList("eth"), "eth0"));
  EXPECT_TRUE(ncclSelects(parseNcclList("eth"), "eth12"));
  EXPECT_FALSE(ncclSelects(parseNcclList("eth"), "ens1"));
  EXPECT_TRUE(ncclSelects(parseNcclList("=eth0"), "eth0"));
  EXPECT_FALSE(ncclSelects(parseNcclList("=eth0"), "eth01"));
  EXPECT_FALSE(ncclSelects(parseNcclList("^docker,lo"), "docker0"));
  EXPECT_FALSE(ncclSelects(parseNcclList("^docker,lo"), "lo"));
  EXPECT_TRUE(ncclSelects(parseNcclList("^docker,lo"), "eth0"));
  EXPECT_FALSE(ncclSelects(parseNcclList("^=docker0"), "docker0"));
  EXPECT_TRUE(ncclSelects(parseNcclList("^=docker0"), "docker01"));
  EXPECT_TRUE(ncclSelects(parseNcclList("mlx5_0:1"), "mlx5_0", 1));
  EXPECT_FALSE(ncclSelects(parseNcclList("mlx5_0:1"), "mlx5_0", 2));
  EXPECT_TRUE(ncclSelects(parseNcclList("mlx5"), "mlx5_3", 1));
  EXPECT_TRUE(ncclSelects(parseNcclList(""), "anything"));
}

}  // namespace
}  // namespace fabricwatch::nccl
