#include <gtest/gtest.h>

#include "policy/expr/expr.h"
#include "tests/policy/expr/expr_test_util.h"

// The comprehension macros, their error semantics and the cost limit.

namespace fabricwatch::policy::expr {
namespace {

using testing::ExprTest;
using L = core::Value::List;

TEST_F(ExprTest, All) {
  EXPECT_EQ(eval("rdma.devices.all(d, d.kind == 'efa')"), core::Value(true));
  EXPECT_EQ(eval("rdma.devices.all(d, d.ports.all(p, p.state == 'ACTIVE'))"), core::Value(false));
  EXPECT_EQ(eval("[].all(x, false)"), core::Value(true));
  // A false element decides even when another element errors (either order).
  EXPECT_EQ(eval("[0, 1].all(x, 1 / x > 5)"), core::Value(false));
  EXPECT_EQ(eval("[1, 0].all(x, 1 / x > 5)"), core::Value(false));
  EXPECT_EQ(evalError("[1, 0].all(x, 1 / x >= 1)"), "1:17: division by zero");
  EXPECT_EQ(evalError("[1, 2].all(x, x)"), "1:15: predicate of all() must be bool, got int");
}

TEST_F(ExprTest, Exists) {
  EXPECT_EQ(eval("rdma.devices.exists(d, d.ports.exists(p, p.state == 'DOWN'))"),
            core::Value(true));
  EXPECT_EQ(eval("rdma.devices.exists(d, d.kind == 'mlx5')"), core::Value(false));
  EXPECT_EQ(eval("[].exists(x, true)"), core::Value(false));
  EXPECT_EQ(eval("[0, 1].exists(x, 1 / x == 1)"), core::Value(true));
  EXPECT_EQ(evalError("[0, 2].exists(x, 1 / x == 1)"), "1:20: division by zero");
}

TEST_F(ExprTest, ExistsOne) {
  EXPECT_EQ(eval("rdma.devices.exists_one(d, d.ports[0].state == 'DOWN')"), core::Value(true));
  EXPECT_EQ(eval("rdma.devices.exists_one(d, d.kind == 'efa')"), core::Value(false));
  EXPECT_EQ(eval("[].exists_one(x, true)"), core::Value(false));
  EXPECT_EQ(evalError("[1, 0].exists_one(x, 1 / x == 1)"), "1:24: division by zero");
}

TEST_F(ExprTest, MapAndFilter) {
  EXPECT_EQ(eval("rdma.devices.map(d, d.name)"),
            core::Value(L{"efa_0", "rdmap1s0", "rdmap2s0", "rdmap3s0"}));
  EXPECT_EQ(eval("rdma.devices.filter(d, d.ports[0].state != 'ACTIVE').map(d, d.name)"),
            core::Value(L{"rdmap3s0"}));
  EXPECT_EQ(eval("rdma.devices.map(d, d.ports[0].state == 'ACTIVE', d.name)"),
            core::Value(L{"efa_0", "rdmap1s0", "rdmap2s0"}));
  EXPECT_EQ(eval("[1, 2, 3].map(x, x * x)"), core::Value(L{1, 4, 9}));
  EXPECT_EQ(eval("[1, 2, 3].filter(x, x % 2 == 1)"), core::Value(L{1, 3}));
  EXPECT_EQ(eval("size(rdma.devices.filter(d, d.numa_node == 0))"), core::Value(4));
  EXPECT_EQ(eval("[[1, 2], [3]].map(l, l.map(x, x + 1))"),
            core::Value(L{core::Value(L{2, 3}), core::Value(L{4})}));
  EXPECT_EQ(evalError("[1, 2].filter(x, x)"), "1:18: predicate of filter() must be bool, got int");
  EXPECT_EQ(evalError("[1, 0].map(x, 1 / x)"), "1:17: division by zero");
}

TEST_F(ExprTest, MacrosOverMapsIterateKeys) {
  EXPECT_EQ(eval("memory.hugepages.all(k, memory.hugepages[k].size_bytes > 0)"), core::Value(true));
  EXPECT_EQ(eval("memory.hugepages.map(k, k)"), core::Value(L{"1048576kB", "2048kB"}));
  EXPECT_EQ(eval("workload.env.exists(k, k.startsWith('NCCL_'))"), core::Value(true));
  EXPECT_EQ(eval("workload.env.filter(k, k.startsWith('FI_'))"),
            core::Value(L{"FI_EFA_USE_DEVICE_RDMA", "FI_PROVIDER"}));
  EXPECT_EQ(evalError("gpu.count.all(x, true)"), "1:11: all() needs a list or a map, not int");
}

TEST_F(ExprTest, NestedScopesAndShadowing) {
  EXPECT_EQ(eval("[1, 2].all(x, [3, 4].all(y, x < y))"), core::Value(true));
  EXPECT_EQ(eval("[1, 2].map(x, [10, 20].map(x, x + 1))"),
            core::Value(L{core::Value(L{11, 21}), core::Value(L{11, 21})}));
  EXPECT_EQ(eval("[1, 2].exists(gpu, gpu == 2) && gpu.count == 8"), core::Value(true));
  EXPECT_EQ(eval("[[1], [2, 3]].map(x, x.exists(y, y == 3)).filter(b, b).size()"), core::Value(1));
  std::string deep = "true";
  for (int i = 0; i < 17; ++i) deep = "[1].all(x" + std::to_string(i) + ", " + deep + ")";
  // The innermost macro is the one that is too deep.
  EXPECT_EQ(compileError(deep), "1:204: comprehensions are nested too deeply (limit 16)");
}

TEST_F(ExprTest, CostLimitStopsANestedMacroBomb) {
  const std::string ten = "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]";
  const std::string bomb = ten + ".all(a, " + ten + ".all(b, " + ten + ".all(c, " + ten +
                           ".all(d, " + ten + ".all(e, true)))))";
  // Reported at the node that crossed the limit (here the innermost literal).
  EXPECT_EQ(evalError(bomb, 10'000), "1:184: evaluation cost limit 10000 exceeded");
  // The same bomb fits a large enough budget, and reports what it cost.
  auto prog =
      std::get<std::shared_ptr<const Program>>(compile(ten + ".all(a, " + ten + ".all(b, true))"));
  Activation act;
  EvalResult r = prog->evaluate(act, EvalOptions{1'000'000});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value, core::Value(true));
  EXPECT_GT(r.cost, 200u);
  EXPECT_LT(r.cost, 1000u);
  EXPECT_EQ(prog->evaluate(act, EvalOptions{r.cost}).ok(), true);
  EXPECT_EQ(prog->evaluate(act, EvalOptions{r.cost - 1}).errors.at(0).message,
            "evaluation cost limit " + std::to_string(r.cost - 1) + " exceeded");
}

TEST_F(ExprTest, CostLimitErrorsAreNeverAbsorbed) {
  const std::string ten = "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]";
  const std::string bomb = ten + ".all(a, " + ten + ".all(b, " + ten + ".all(c, true)))";
  EXPECT_NE(evalError("(" + bomb + ") || true", 500).find("cost limit 500 exceeded"),
            std::string::npos);
  EXPECT_NE(evalError("false || (" + bomb + ") && false", 500).find("cost limit"),
            std::string::npos);
  EXPECT_NE(evalError(ten + ".exists(a, " + ten + ".all(b, " + ten + ".all(c, a == 9)))", 500)
                .find("cost limit"),
            std::string::npos);
}

TEST_F(ExprTest, CostLimitBoundsStringAndListGrowth) {
  // Doubling a string in a loop: string ops cost in proportion to their length.
  std::string s = "'abcdefghijklmnop'";
  std::string grow = "[" + s;
  for (int i = 0; i < 3; ++i) grow += "," + s;
  grow += "].map(a, [1,2,3,4,5,6,7,8,9,10,11,12].map(b, a + a + a + a + a + a + a + a))";
  EXPECT_NE(evalError(grow, 300).find("cost limit 300 exceeded"), std::string::npos);
  EXPECT_NE(evalError("rdma.devices.map(d, kernel.modules + kernel.modules + kernel.modules)", 40)
                .find("cost limit 40 exceeded"),
            std::string::npos);
}

}  // namespace
}  // namespace fabricwatch::policy::expr
