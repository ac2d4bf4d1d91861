#include <gtest/gtest.h>

#include <thread>

#include "policy/expr/expr.h"
#include "tests/policy/expr/expr_test_util.h"

// Realistic rules over a p5-like facts document (32 EFA devices, 8 GPUs), and concurrent use of
// one compiled program.

namespace fabricwatch::policy::expr {
namespace {

using testing::bindAll;
using testing::formatError;
using testing::p5Facts;

struct Case {
  const char* expr;
  bool expected;
};

class P5Test : public ::testing::Test {
 protected:
  P5Test() : facts_(p5Facts()) {
    variables_["expected_efa"] = 32;
    variables_["efa_devices"] = core::Value(core::Value::List{});
    for (const auto& d : facts_["rdma"]["devices"].asList()) variables_["efa_devices"].push(d);
  }

  bool run(const std::string& src, core::Value* facts = nullptr) {
    auto c = compile(src);
    if (auto* e = std::get_if<ExprError>(&c)) {
      ADD_FAILURE() << src << ": " << formatError(*e);
      return false;
    }
    const core::Value& f = facts ? *facts : facts_;
    const core::Value& w = f.find("workloads")->asList()[0];
    Activation a = bindAll(f, &variables_, &w);
    EvalResult r = std::get<std::shared_ptr<const Program>>(c)->evaluate(a);
    if (!r.ok()) {
      ADD_FAILURE() << src << ": " << formatError(r.errors[0]);
      return false;
    }
    if (!r.value.isBool()) {
      ADD_FAILURE() << src << ": not a bool";
      return false;
    }
    return r.value.asBool();
  }

  core::Value facts_;
  core::Value variables_;
};

TEST_F(P5Test, HealthyNodePassesEveryRule) {
  const Case cases[] = {
      {"size(rdma.devices.filter(d, d.kind == 'efa')) == variables.expected_efa", true},
      {"rdma.devices.all(d, d.ports.all(p, p.state == 'ACTIVE' && p.phys_state == 'LinkUp'))",
       true},
      {"rdma.devices.all(d, !d.pcie.degraded && d.pcie.current_width == d.pcie.max_width)", true},
      {"rdma.devices.map(d, d.ports.map(p, p.rate_gbps).sum()).sum() >= 3200.0", true},
      {"memory.hugepages['2048kB'].total * memory.hugepages['2048kB'].size_bytes >= "
       "quantity('5Gi')",
       true},
      {"limits.memlock.unlimited || limits.memlock.soft_bytes >= quantity('64Mi')", true},
      {"'efa' in kernel.modules && kernel.memory_peers", true},
      {"semver(workload.glibc_version) >= semver('2.34')", true},
      {"semver(software.libfabric.version) >= semver('1.18')", true},
      {"!has(software.nccl.version) || semver(software.nccl.version) >= semver('2.18.5')", true},
      {"gpu.devices.all(g, size(g.nics) == 4 && g.nics.all(n, rdma.devices.exists(d, d.name == n "
       "&& d.numa_node == g.numa_node)))",
       true},
      {"workloads.all(w, !('FI_PROVIDER' in w.env) || w.env.FI_PROVIDER == 'efa')", true},
      // NCCL_IB_HCA: "^" excludes devices; otherwise each listed HCA must exist on the node.
      {"!has(nccl.settings.NCCL_IB_HCA) || nccl.settings.NCCL_IB_HCA.value.startsWith('^') || "
       "nccl.settings.NCCL_IB_HCA.value.split(',').all(h, rdma.devices.exists(d, d.name == "
       "h.trim().split(':')[0]))",
       true},
      // RoCE ports need a RoCE v2 GID; EFA ports are not Ethernet, so the rule holds vacuously.
      {"rdma.devices.all(d, d.ports.all(p, p.link_layer != 'Ethernet' || p.gids.exists(g, g.type "
       "== 'RoCE v2')))",
       true},
      {"net.interfaces.filter(i, i.name.matches('^ens')).all(i, i.mtu >= 9001)", true},
      {"resource_group == 'p5' ? size(rdma.devices) == 32 : true", true},
      {"variables.efa_devices.all(d, d.kind == 'efa')", true},
  };
  for (const Case& c : cases) EXPECT_EQ(run(c.expr), c.expected) << c.expr;
}

TEST_F(P5Test, BrokenNodeFailsTheRightRules) {
  core::Value broken = p5Facts(31);
  broken["rdma"]["devices"].asList()[5]["ports"].asList()[0]["state"] = "DOWN";
  broken["rdma"]["devices"].asList()[6]["pcie"]["current_width"] = 8;
  broken["memory"]["hugepages"]["2048kB"]["total"] = 1024;
  broken["workloads"].asList()[0]["glibc_version"] = "2.26";
  broken["nccl"]["settings"]["NCCL_IB_HCA"]["value"] = "rdmap0s0,rdmap99s0";
  auto& port = broken["rdma"]["devices"].asList()[7]["ports"].asList()[0];
  port["link_layer"] = "Ethernet";
  port["gids"].asList()[0]["type"] = "IB/RoCE v1";

  EXPECT_FALSE(
      run("size(rdma.devices.filter(d, d.kind == 'efa')) == variables.expected_efa", &broken));
  EXPECT_FALSE(run("rdma.devices.all(d, d.ports.all(p, p.state == 'ACTIVE'))", &broken));
  EXPECT_EQ(run("rdma.devices.filter(d, d.ports.exists(p, p.state != 'ACTIVE')).map(d, d.name) == "
                "['rdmap5s0']",
                &broken),
            true);
  EXPECT_FALSE(run("rdma.devices.all(d, d.pcie.current_width == d.pcie.max_width)", &broken));
  EXPECT_FALSE(
      run("memory.hugepages['2048kB'].total * memory.hugepages['2048kB'].size_bytes >= "
          "quantity('5Gi')",
          &broken));
  EXPECT_FALSE(run("semver(workload.glibc_version) >= semver('2.34')", &broken));
  EXPECT_FALSE(
      run("nccl.settings.NCCL_IB_HCA.value.split(',').all(h, rdma.devices.exists(d, "
          "d.name == h))",
          &broken));
  EXPECT_FALSE(
      run("rdma.devices.all(d, d.ports.all(p, p.link_layer != 'Ethernet' || "
          "p.gids.exists(g, g.type == 'RoCE v2')))",
          &broken));
}

TEST_F(P5Test, OneProgramEvaluatesConcurrently) {
  auto c = compile(
      "rdma.devices.filter(d, d.name.matches('^rdmap' + string(d.numa_node))).size() + "
      "rdma.devices.map(d, d.name.upperAscii()).filter(n, n.endsWith('S0')).size()");
  ASSERT_TRUE(std::holds_alternative<std::shared_ptr<const Program>>(c));
  auto prog = std::get<std::shared_ptr<const Program>>(c);
  Activation a = bindAll(facts_);
  std::vector<std::thread> threads;
  std::atomic<int> good{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        EvalResult r = prog->evaluate(a);
        // NUMA 0 holds rdmap0s0..rdmap15s0 ('^rdmap0' matches one), NUMA 1 rdmap16s0..rdmap31s0
        // ('^rdmap1' matches 16..19); all 32 upper-cased names end in S0.
        if (r.ok() && r.value == core::Value(1 + 4 + 32)) ++good;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(good.load(), 800);
  EXPECT_EQ(prog->source().substr(0, 19), "rdma.devices.filter");
}

}  // namespace
}  // namespace fabricwatch::policy::expr
