#include <gtest/gtest.h>

#include <cmath>

#include "policy/expr/expr.h"
#include "tests/policy/expr/expr_test_util.h"

namespace fabricwatch::policy::expr {
namespace {

using testing::ExprTest;
using L = core::Value::List;

TEST_F(ExprTest, Literals) {
  EXPECT_EQ(eval("1"), core::Value(1));
  EXPECT_EQ(eval("-9223372036854775808"), core::Value(INT64_MIN));
  EXPECT_EQ(eval("9223372036854775807"), core::Value(INT64_MAX));
  EXPECT_EQ(eval("0x10"), core::Value(16));
  EXPECT_EQ(eval("7u"), core::Value(7));
  EXPECT_EQ(eval("1.5"), core::Value(1.5));
  EXPECT_EQ(eval(".5"), core::Value(0.5));
  EXPECT_EQ(eval("1e3"), core::Value(1000.0));
  EXPECT_EQ(eval("2.5E-1"), core::Value(0.25));
  EXPECT_EQ(eval("'a\\n'"), core::Value("a\n"));
  EXPECT_EQ(eval("r'a\\n'"), core::Value("a\\n"));
  EXPECT_EQ(eval("'''x'y'''"), core::Value("x'y"));
  EXPECT_EQ(eval("\"\"\"two\nlines\"\"\""), core::Value("two\nlines"));
  EXPECT_EQ(eval("\"\\u00e9\\x41\\101\\\"\""), core::Value("\xc3\xa9"
                                                           "AA\""));
  EXPECT_EQ(eval("true"), core::Value(true));
  EXPECT_EQ(eval("false"), core::Value(false));
  EXPECT_EQ(eval("null"), core::Value());
  EXPECT_EQ(eval("[1, 'a', [true]]"), core::Value(L{1, "a", core::Value(L{true})}));
  EXPECT_EQ(eval("{'a': 1, 'b': [2]}"), core::Value::map({{"a", 1}, {"b", core::Value(L{2})}}));
  EXPECT_EQ(eval("[1, 2,]"), core::Value(L{1, 2}));
  EXPECT_EQ(eval("{}"), core::Value::map());
  EXPECT_EQ(eval("[]"), core::Value::list());
  EXPECT_EQ(eval("// a comment\n 1 // another\n + 1"), core::Value(2));
}

TEST_F(ExprTest, ComputedListsAndMaps) {
  EXPECT_EQ(eval("[gpu.count, kernel.release]"), core::Value(L{8, "6.1.0-18-cloud-amd64"}));
  EXPECT_EQ(eval("{'n': gpu.count}.n"), core::Value(8));
  EXPECT_EQ(eval("{'n': gpu.count}['n']"), core::Value(8));
  EXPECT_EQ(evalError("{kernel.release: 1, kernel.release: 2}"),
            "1:28: duplicate map key '6.1.0-18-cloud-amd64'");
  EXPECT_EQ(evalError("{'a': 1, 'a': 2}"), "1:10: duplicate map key 'a'");
  EXPECT_EQ(evalError("{gpu.count: 1}"), "1:6: map keys must be strings, not int");
}

TEST_F(ExprTest, FieldSelectionAndIndexing) {
  EXPECT_EQ(eval("size(rdma.devices)"), core::Value(4));
  EXPECT_EQ(eval("rdma.devices[0].name"), core::Value("efa_0"));
  EXPECT_EQ(eval("rdma.devices[3].ports[0].state"), core::Value("DOWN"));
  EXPECT_EQ(eval("memory.hugepages['2048kB'].total"), core::Value(2560));
  EXPECT_EQ(eval("rdma.devices[1.0].kind"), core::Value("efa"));
  EXPECT_EQ(eval("variables.efa_count"), core::Value(4));
  EXPECT_EQ(eval("workload.env.FI_PROVIDER"), core::Value("efa"));
  EXPECT_EQ(eval(".kernel.release"), core::Value("6.1.0-18-cloud-amd64"));
  EXPECT_EQ(evalError("rdma.nothing"), "1:6: no such key: 'nothing'");
  EXPECT_EQ(evalError("memory.hugepages['4kB']"), "1:17: no such key: '4kB'");
  EXPECT_EQ(evalError("nope.x"), "1:1: undeclared reference to 'nope'");
  EXPECT_EQ(evalError("rdma.devices[4]"), "1:13: index out of range: 4 (size 4)");
  EXPECT_EQ(evalError("rdma.devices[-1]"), "1:13: index out of range: -1 (size 4)");
  EXPECT_EQ(evalError("rdma.devices['a']"), "1:13: list index must be an int, not string");
  EXPECT_EQ(evalError("rdma.devices.name"), "1:14: cannot select field 'name' from list");
  EXPECT_EQ(evalError("kernel.release.x"), "1:16: cannot select field 'x' from string");
  EXPECT_EQ(evalError("rdma[1]"), "1:5: map keys are strings, not int");
  EXPECT_EQ(evalError("gpu.count[0]"), "1:10: no matching overload for '[]' applied to (int, int)");
}

TEST_F(ExprTest, Has) {
  EXPECT_EQ(eval("has(rdma.devices)"), core::Value(true));
  EXPECT_EQ(eval("has(rdma.nothing)"), core::Value(false));
  EXPECT_EQ(eval("has(workload.env.NCCL_DEBUG)"), core::Value(true));
  EXPECT_EQ(eval("has(workload.env.NCCL_ALGO)"), core::Value(false));
  EXPECT_EQ(eval("has(kernel.x) && kernel.x == 1"), core::Value(false));
  // has() tests only the last selection; a missing intermediate is still an error.
  EXPECT_EQ(evalError("has(rdma.a.b)"), "1:10: no such key: 'a'");
  EXPECT_EQ(evalError("has(kernel.release.x)"), "1:1: cannot select field 'x' from string");
  EXPECT_EQ(compileError("has(rdma)"),
            "1:1: has() takes one field selection, e.g. has(a.b); for a key that is not an "
            "identifier write \"key\" in a");
  EXPECT_EQ(compileError("rdma.has(x)"), "1:6: has() is not a method; write has(a.b)");
}

TEST_F(ExprTest, Arithmetic) {
  EXPECT_EQ(eval("1 + 2 * 3"), core::Value(7));
  EXPECT_EQ(eval("(1 + 2) * 3"), core::Value(9));
  EXPECT_EQ(eval("7 / 2"), core::Value(3));
  EXPECT_EQ(eval("-7 / 2"), core::Value(-3));
  EXPECT_EQ(eval("7 % 3"), core::Value(1));
  EXPECT_EQ(eval("-7 % 3"), core::Value(-1));
  EXPECT_EQ(eval("7.0 / 2"), core::Value(3.5));
  EXPECT_EQ(eval("1 + 0.5"), core::Value(1.5));
  EXPECT_EQ(eval("2 - 3"), core::Value(-1));
  EXPECT_EQ(eval("-gpu.count"), core::Value(-8));
  EXPECT_EQ(eval("--gpu.count"), core::Value(8));
  EXPECT_EQ(eval("-(1.5)"), core::Value(-1.5));
  EXPECT_EQ(eval("gpu.count * 2.5"), core::Value(20.0));
  EXPECT_EQ(eval("'ab' + 'cd'"), core::Value("abcd"));
  EXPECT_EQ(eval("kernel.hostname + '.local'"), core::Value("ip-10-0-0-1.local"));
  EXPECT_EQ(eval("[1] + [2, 3]"), core::Value(L{1, 2, 3}));
  EXPECT_EQ(eval("kernel.modules + ['x']"),
            core::Value(L{"efa", "ib_core", "nvidia_peermem", "x"}));
  EXPECT_EQ(eval("(-9223372036854775807 - 1) % -1"), core::Value(0));
}

TEST_F(ExprTest, ArithmeticErrors) {
  EXPECT_EQ(evalError("gpu.count / 0"), "1:11: division by zero");
  EXPECT_EQ(evalError("gpu.count / 0.0"), "1:11: division by zero");
  EXPECT_EQ(evalError("gpu.count % 0"), "1:11: modulus by zero");
  EXPECT_EQ(evalError("9223372036854775807 + gpu.count"), "1:21: integer overflow");
  EXPECT_EQ(evalError("-9223372036854775807 - gpu.count"), "1:22: integer overflow");
  EXPECT_EQ(evalError("9223372036854775807 * gpu.count"), "1:21: integer overflow");
  EXPECT_EQ(evalError("(-9223372036854775807 - 1) / (gpu.count - 9)"), "1:28: integer overflow");
  EXPECT_EQ(evalError("-(gpu.count - 9223372036854775807 - 9)"), "1:1: integer overflow");
  EXPECT_EQ(evalError("gpu.count % rdma.devices[0].pcie.max_speed_gts"),
            "1:11: no matching overload for '%' applied to (int, double)");
  EXPECT_EQ(compileError("gpu.count % 1.5"),
            "1:11: no matching overload for '%' applied to (dyn, double)");
  EXPECT_EQ(evalError("gpu.count + kernel.release"),
            "1:11: no matching overload for '+' applied to (int, string)");
  EXPECT_EQ(evalError("-kernel.release"), "1:1: no matching overload for '-' applied to (string)");
  EXPECT_EQ(evalError("rdma + rdma"), "1:6: no matching overload for '+' applied to (map, map)");
  // Statically known mismatches are compile errors.
  EXPECT_EQ(compileError("1 + 'a'"), "1:3: no matching overload for '+' applied to (int, string)");
  EXPECT_EQ(compileError("1 - [1]"), "1:3: no matching overload for '-' applied to (int, list)");
  EXPECT_EQ(compileError("-'a'"), "1:1: no matching overload for '-' applied to (string)");
  EXPECT_EQ(compileError("!1"), "1:1: no matching overload for '!' applied to (int)");
  EXPECT_EQ(compileError("x + 1 / 0"), "1:7: division by zero");
}

TEST_F(ExprTest, Comparison) {
  EXPECT_EQ(eval("1 < 2"), core::Value(true));
  EXPECT_EQ(eval("2 <= 2"), core::Value(true));
  EXPECT_EQ(eval("3 > 2.5"), core::Value(true));
  EXPECT_EQ(eval("2 >= 2.0"), core::Value(true));
  EXPECT_EQ(eval("1 == 1.0"), core::Value(true));
  EXPECT_EQ(eval("1 != 2"), core::Value(true));
  EXPECT_EQ(eval("'abc' < 'abd'"), core::Value(true));
  EXPECT_EQ(eval("false < true"), core::Value(true));
  EXPECT_EQ(eval("kernel.release == '6.1.0-18-cloud-amd64'"), core::Value(true));
  EXPECT_EQ(eval("null == null"), core::Value(true));
  EXPECT_EQ(eval("gpu.count == null"), core::Value(false));
  EXPECT_EQ(eval("gpu.count == 'x'"), core::Value(false));  // heterogeneous equality
  EXPECT_EQ(eval("[1, 2.0] == [1.0, 2]"), core::Value(true));
  EXPECT_EQ(eval("[1, 2] == [1, 2, 3]"), core::Value(false));
  EXPECT_EQ(eval("{'a': 1} == {'a': 1.0}"), core::Value(true));
  EXPECT_EQ(eval("{'a': 1} != {'b': 1}"), core::Value(true));
  EXPECT_EQ(eval("rdma.devices[0].pcie == rdma.devices[1].pcie"), core::Value(true));
  EXPECT_EQ(evalError("gpu.count < kernel.release"),
            "1:11: no matching overload for '<' applied to (int, string)");
  EXPECT_EQ(evalError("rdma >= rdma"), "1:6: no matching overload for '>=' applied to (map, map)");
  EXPECT_EQ(compileError("1 < 'a'"), "1:3: no matching overload for '<' applied to (int, string)");
}

TEST_F(ExprTest, In) {
  EXPECT_EQ(eval("'efa' in kernel.modules"), core::Value(true));
  EXPECT_EQ(eval("'mlx5_ib' in kernel.modules"), core::Value(false));
  EXPECT_EQ(eval("2 in [1, 2.0]"), core::Value(true));
  EXPECT_EQ(eval("'2048kB' in memory.hugepages"), core::Value(true));
  EXPECT_EQ(eval("'4kB' in memory.hugepages"), core::Value(false));
  EXPECT_EQ(eval("1 in memory.hugepages"), core::Value(false));
  EXPECT_EQ(eval("'FI_PROVIDER' in workload.env"), core::Value(true));
  EXPECT_EQ(evalError("1 in gpu.count"),
            "1:3: no matching overload for 'in' applied to (int, int)");
  EXPECT_EQ(compileError("1 in 2"), "1:3: no matching overload for 'in' applied to (int, int)");
}

TEST_F(ExprTest, LogicShortCircuitsAndAbsorbsErrors) {
  EXPECT_EQ(eval("true && false"), core::Value(false));
  EXPECT_EQ(eval("true || false"), core::Value(true));
  EXPECT_EQ(eval("!true"), core::Value(false));
  EXPECT_EQ(eval("!!true"), core::Value(true));
  // false && error == false and true || error == true, on either side (CEL is commutative).
  EXPECT_EQ(eval("false && rdma.missing"), core::Value(false));
  EXPECT_EQ(eval("rdma.missing && false"), core::Value(false));
  EXPECT_EQ(eval("true || rdma.missing"), core::Value(true));
  EXPECT_EQ(eval("rdma.missing || true"), core::Value(true));
  EXPECT_EQ(eval("gpu.count > 100 && gpu.count / 0 == 1"), core::Value(false));
  EXPECT_EQ(evalError("true && rdma.missing"), "1:14: no such key: 'missing'");
  EXPECT_EQ(evalError("rdma.missing && true"), "1:6: no such key: 'missing'");
  EXPECT_EQ(evalError("false || rdma.missing"), "1:15: no such key: 'missing'");
  EXPECT_EQ(evalError("rdma.a || rdma.b"), "1:6: no such key: 'a'");
  // Non-bool operands are errors, absorbed the same way.
  EXPECT_EQ(evalError("true && gpu.count"), "1:6: operands of '&&' must be bool, got int");
  EXPECT_EQ(eval("gpu.count || true"), core::Value(true));
  EXPECT_EQ(evalError("!gpu.count"), "1:1: no matching overload for '!' applied to (int)");
  EXPECT_EQ(compileError("true && 1"), "1:9: operands of '&&' must be bool, got int");
  EXPECT_EQ(compileError("'a' || true"), "1:1: operands of '||' must be bool, got string");
  // Precedence: && binds tighter than ||.
  EXPECT_EQ(eval("true || false && false"), core::Value(true));
  EXPECT_EQ(eval("(true || false) && false"), core::Value(false));
}

TEST_F(ExprTest, Ternary) {
  EXPECT_EQ(eval("gpu.count > 4 ? 'big' : 'small'"), core::Value("big"));
  EXPECT_EQ(eval("gpu.count > 40 ? 'big' : 'small'"), core::Value("small"));
  EXPECT_EQ(eval("false ? rdma.missing : 1"), core::Value(1));
  EXPECT_EQ(eval("true ? 1 : false ? 2 : 3"), core::Value(1));
  EXPECT_EQ(eval("false ? 1 : false ? 2 : 3"), core::Value(3));
  EXPECT_EQ(evalError("gpu.count ? 1 : 2"), "1:11: condition of '?:' must be bool, got int");
  EXPECT_EQ(compileError("1 ? 1 : 2"), "1:1: condition of '?:' must be bool, got int");
}

TEST_F(ExprTest, ResultsAreConvertedToValues) {
  EXPECT_EQ(eval("semver('2.34')"), core::Value("2.34"));
  EXPECT_EQ(eval("rdma.devices[0].pcie"), facts_["rdma"]["devices"].asList()[0]["pcie"]);
  EXPECT_EQ(eval("rdma.devices.map(d, d.numa_node)"), core::Value(L{0, 0, 0, 0}));
}

}  // namespace
}  // namespace fabricwatch::policy::expr
