// The annotations rules read: NCCL's list settings resolved against the facts (the syntax
// itself is tested in tests/nccl/nccl_list_test.cc).
#include "policy/nccl_facts.h"

#include <gtest/gtest.h>

#include "policy/yaml_value.h"

namespace fabricwatch::policy {
namespace {

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

// NCCL_IB_GID_INDEX is resolved on the ports NCCL would open in the same scope: those its
// NCCL_IB_HCA selects (all when unset) that are ACTIVE, each with the GID entry at the index.
TEST(NcclListTest, AnnotatesTheGidIndexOnThePortsNcclOpens) {
  core::Value f = yamlToValue(YAML::Load(R"(
rdma:
  devices:
    - name: mlx5_0
      node_type: CA
      ports:
        - port: 1
          state: ACTIVE
          link_layer: Ethernet
          gids:
            - {index: 2, type: IB/RoCE v1, address: "0000:0000:0000:0000:0000:ffff:0a00:0105"}
            - {index: 3, type: RoCE v2, address: "0000:0000:0000:0000:0000:ffff:0a00:0105"}
    - name: mlx5_1
      node_type: CA
      ports:
        - {port: 1, state: DOWN, link_layer: Ethernet, gids: []}
        - {port: 2, state: ACTIVE, link_layer: Ethernet, gids: []}
nccl:
  settings:
    NCCL_IB_GID_INDEX: {value: " 3", source: "/etc/nccl.conf:1"}
workloads:
  - pid: 7
    nccl:
      NCCL_IB_GID_INDEX: {value: "2", source: workload 7 environment}
      NCCL_IB_HCA: {value: "=mlx5_0", source: workload 7 environment}
  - pid: 8
    nccl:
      NCCL_IB_GID_INDEX: {value: "auto", source: workload 8 environment}
)"));
  prepareFacts(f, "roce");
  const core::Value& node = *f.findPath("nccl.settings.NCCL_IB_GID_INDEX");
  ASSERT_TRUE(node.find("index") && node.find("ports"));
  EXPECT_EQ(node.find("index")->asInt(), 3);
  const auto& ports = node.find("ports")->asList();
  ASSERT_EQ(ports.size(), 2u);  // mlx5_1 port 1 is DOWN: NCCL does not open it
  EXPECT_EQ(ports[0].find("device")->asString(), "mlx5_0");
  EXPECT_EQ(ports[0].find("node_type")->asString(), "CA");
  EXPECT_EQ(ports[0].findPath("gid.type")->asString(), "RoCE v2");
  EXPECT_EQ(ports[1].find("device")->asString(), "mlx5_1");
  EXPECT_EQ(ports[1].find("port")->asInt(), 2);
  EXPECT_EQ(ports[1].find("gid"), nullptr);  // no entry in use at index 3

  const auto& w = f.find("workloads")->asList();
  const auto& wports = w[0].findPath("nccl.NCCL_IB_GID_INDEX")->find("ports")->asList();
  ASSERT_EQ(wports.size(), 1u);  // NCCL_IB_HCA==mlx5_0
  EXPECT_EQ(wports[0].findPath("gid.type")->asString(), "IB/RoCE v1");
  const core::Value& bad = *w[1].findPath("nccl.NCCL_IB_GID_INDEX");
  EXPECT_EQ(bad.find("index"), nullptr);  // not a number
  EXPECT_EQ(bad.find("ports")->size(), 2u);
}

}  // namespace
}  // namespace fabricwatch::policy
