// NCCL's list syntax (prefix, =exact, ^exclusion, :port) and the annotations rules read.
#include "policy/nccl_list.h"

#include <gtest/gtest.h>

#include "policy/yaml_value.h"

namespace fabricwatch::policy {
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

core::Value nodeFacts() {
  return yamlToValue(YAML::Load(R"(
net:
  interfaces:
    - {name: lo, operstate: unknown}
    - {name: eth0, operstate: up}
    - {name: eth1, operstate: down}
    - {name: docker0, operstate: up}
rdma:
  devices:
    - {name: mlx5_0, ports: [{port: 1, state: ACTIVE}]}
    - {name: mlx5_1, ports: [{port: 1, state: DOWN}, {port: 2, state: ACTIVE}]}
nccl:
  settings:
    NCCL_SOCKET_IFNAME: {value: "eth,ib", source: "/etc/nccl.conf:3"}
    NCCL_IB_HCA: {value: "=mlx5_1:2,mlx5_7", source: "/etc/nccl.conf:4"}
workloads:
  - pid: 4242
    nccl:
      NCCL_SOCKET_IFNAME: {value: "^eth,lo", source: workload 4242 environment}
      NCCL_IB_HCA: {value: "^mlx5_1", source: workload 4242 environment}
)"));
}

std::vector<std::string> strings(const core::Value* v) {
  std::vector<std::string> out;
  if (v && v->isList())
    for (const auto& s : v->asList()) out.push_back(s.isString() ? s.asString() : "?");
  return out;
}

TEST(NcclListTest, AnnotatesNodeAndWorkloadSettings) {
  core::Value f = nodeFacts();
  prepareFacts(f, "lingjun-gu8xf");
  EXPECT_EQ(f.find("resource_group")->asString(), "lingjun-gu8xf");
  const core::Value& ifn = *f.findPath("nccl.settings.NCCL_SOCKET_IFNAME");
  EXPECT_EQ(strings(ifn.find("matched")), (std::vector<std::string>{"eth0", "eth1"}));
  EXPECT_EQ(strings(ifn.find("matched_up")), (std::vector<std::string>{"eth0"}));
  EXPECT_EQ(strings(ifn.find("unmatched")), (std::vector<std::string>{"ib"}));
  const core::Value& hca = *f.findPath("nccl.settings.NCCL_IB_HCA");
  EXPECT_EQ(strings(hca.find("matched")), (std::vector<std::string>{"mlx5_1:2"}));
  EXPECT_EQ(strings(hca.find("unmatched")), (std::vector<std::string>{"mlx5_7"}));
  ASSERT_EQ(hca.find("ports")->size(), 1u);
  EXPECT_EQ(hca.find("ports")->asList()[0].find("device")->asString(), "mlx5_1");
  EXPECT_EQ(hca.find("ports")->asList()[0].find("state")->asString(), "ACTIVE");

  const core::Value& w = f.find("workloads")->asList()[0];
  const core::Value& wifn = *w.findPath("nccl.NCCL_SOCKET_IFNAME");
  EXPECT_EQ(strings(wifn.find("matched")), (std::vector<std::string>{"docker0"}));
  EXPECT_TRUE(strings(wifn.find("unmatched")).empty());  // exclusion lists name nothing to find
  const core::Value& whca = *w.findPath("nccl.NCCL_IB_HCA");
  EXPECT_EQ(strings(whca.find("matched")), (std::vector<std::string>{"mlx5_0:1"}));

  core::Value again = f;
  prepareFacts(again, "lingjun-gu8xf");
  EXPECT_EQ(again, f);  // idempotent
}

}  // namespace
}  // namespace fabricwatch::policy
