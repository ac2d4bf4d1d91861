// Where the resource group comes from, and how it is derived when nothing sets it.
#include "policy/resource_group.h"

#include <gtest/gtest.h>

#include "policy/yaml_value.h"

namespace fabricwatch::policy {
namespace {

core::Value facts(const char* yaml) { return yamlToValue(YAML::Load(yaml)); }

TEST(ResourceGroupTest, DerivedFromFacts) {
  EXPECT_EQ(deriveResourceGroup(facts("{}")), "none");
  EXPECT_EQ(deriveResourceGroup(facts("rdma: {devices: []}")), "none");
  EXPECT_EQ(deriveResourceGroup(
                facts("rdma: {devices: [{kind: efa, ports: [{link_layer: Unspecified}]}]}")),
            "efa");
  EXPECT_EQ(deriveResourceGroup(
                facts("rdma: {devices: [{kind: mlx5, ports: [{link_layer: InfiniBand}]}]}")),
            "infiniband");
  EXPECT_EQ(deriveResourceGroup(
                facts("rdma: {devices: [{kind: mlx5, ports: [{link_layer: Ethernet}]}]}")),
            "roce");
  EXPECT_EQ(deriveResourceGroup(
                facts("rdma: {devices: [{kind: erdma, ports: [{link_layer: Ethernet}]}]}")),
            "erdma");
  // efa wins over everything, infiniband over roce.
  EXPECT_EQ(deriveResourceGroup(facts("rdma: {devices: [{kind: mlx5, ports: [{link_layer: "
                                      "Ethernet}]}, {kind: mlx5, ports: [{link_layer: "
                                      "InfiniBand}]}]}")),
            "infiniband");
}

TEST(ResourceGroupTest, LabelFile) {
  EXPECT_EQ(parseLabelFile("lingjun-gu8xf\n"), "lingjun-gu8xf");
  EXPECT_EQ(
      parseLabelFile("kubernetes.io/hostname=\"n1\"\nfabricwatch.io/resource-group=\"efa-p5\"\n"),
      "efa-p5");
  EXPECT_EQ(parseLabelFile("fabricwatch.io/resource-group=ib-ndr"), "ib-ndr");
  EXPECT_FALSE(parseLabelFile("kubernetes.io/hostname=\"n1\"\n"));
  EXPECT_FALSE(parseLabelFile(""));
}

TEST(ResourceGroupTest, FirstSetWins) {
  core::Value f = facts("rdma: {devices: [{kind: efa}]}");
  ResourceGroupInputs in{"from-flag", "from-env", "from-config", "from-file"};
  EXPECT_EQ(resolveResourceGroup(in, f).origin, "flag");
  in.flag.clear();
  EXPECT_EQ(resolveResourceGroup(in, f).name, "from-env");
  in.env.clear();
  EXPECT_EQ(resolveResourceGroup(in, f).origin, "config");
  in.config.clear();
  auto g = resolveResourceGroup(in, f);
  EXPECT_EQ(g.name, "from-file");
  EXPECT_EQ(g.origin, "label-file");
  in.label_file_text.clear();
  g = resolveResourceGroup(in, f);
  EXPECT_EQ(g.name, "efa");
  EXPECT_EQ(g.origin, "derived");
}

}  // namespace
}  // namespace fabricwatch::policy
