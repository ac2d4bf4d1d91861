#include <gtest/gtest.h>

#include "policy/expr/expr.h"
#include "tests/policy/expr/expr_test_util.h"

// The function library, called both globally and as methods.

namespace fabricwatch::policy::expr {
namespace {

using testing::ExprTest;
using L = core::Value::List;

TEST_F(ExprTest, Size) {
  EXPECT_EQ(eval("size(rdma.devices)"), core::Value(4));
  EXPECT_EQ(eval("rdma.devices.size()"), core::Value(4));
  EXPECT_EQ(eval("size(memory.hugepages)"), core::Value(2));
  EXPECT_EQ(eval("size('héllo')"), core::Value(5));  // code points, like CEL
  EXPECT_EQ(eval("kernel.release.size()"), core::Value(20));
  EXPECT_EQ(evalError("size(gpu.count)"), "1:1: no matching overload for 'size' applied to (int)");
}

TEST_F(ExprTest, StringPredicates) {
  EXPECT_EQ(eval("kernel.release.contains('cloud')"), core::Value(true));
  EXPECT_EQ(eval("kernel.release.startsWith('6.1')"), core::Value(true));
  EXPECT_EQ(eval("kernel.release.startsWith('6.2')"), core::Value(false));
  EXPECT_EQ(eval("kernel.release.endsWith('amd64')"), core::Value(true));
  EXPECT_EQ(eval("'a'.endsWith('abc')"), core::Value(false));
  EXPECT_EQ(eval("contains('abc', 'b')"), core::Value(true));
  EXPECT_EQ(eval("''.contains('')"), core::Value(true));
  EXPECT_EQ(evalError("gpu.count.contains('x')"),
            "1:11: no matching overload for 'contains' applied to (int, string)");
}

TEST_F(ExprTest, Matches) {
  EXPECT_EQ(eval("kernel.release.matches('^6\\\\.[0-9]+')"), core::Value(true));
  EXPECT_EQ(eval("kernel.release.matches('aws$')"), core::Value(false));
  EXPECT_EQ(eval("matches(kernel.hostname, 'ip-(\\\\d+-){3}\\\\d+')"), core::Value(true));
  EXPECT_EQ(eval("rdma.devices.all(d, d.name.matches(r'^(efa|rdmap)'))"), core::Value(true));
  // A pattern computed at evaluation time goes through the bounded cache.
  EXPECT_EQ(eval("kernel.release.matches('^' + '6')"), core::Value(true));
  EXPECT_EQ(eval("rdma.devices.all(d, d.name.matches(d.kind + '|rdmap'))"), core::Value(true));
  EXPECT_EQ(evalError("kernel.release.matches(kernel.release + '(')"),
            "1:16: invalid regular expression '6.1.0-18-cloud-amd64(': missing ): "
            "6.1.0-18-cloud-amd64(");
  EXPECT_EQ(evalError("gpu.count.matches('x')"),
            "1:11: no matching overload for 'matches' applied to (int, string)");
}

TEST_F(ExprTest, Split) {
  EXPECT_EQ(eval("'a,b,,c'.split(',')"), core::Value(L{"a", "b", "", "c"}));
  EXPECT_EQ(eval("''.split(',')"), core::Value(L{""}));
  EXPECT_EQ(eval("'ab'.split('')"), core::Value(L{"a", "b"}));
  EXPECT_EQ(eval("workload.env.LD_LIBRARY_PATH.split(':')[0]"), core::Value("/opt/amazon/efa/lib"));
  EXPECT_EQ(eval("nccl.settings.NCCL_IB_HCA.value.split(',').size()"), core::Value(2));
}

TEST_F(ExprTest, Conversions) {
  EXPECT_EQ(eval("int('42')"), core::Value(42));
  EXPECT_EQ(eval("int('-42')"), core::Value(-42));
  EXPECT_EQ(eval("int(workload.env.FI_EFA_USE_DEVICE_RDMA) == 1"), core::Value(true));
  EXPECT_EQ(eval("int(2.9)"), core::Value(2));
  EXPECT_EQ(eval("int(-2.9)"), core::Value(-2));
  EXPECT_EQ(eval("int(true)"), core::Value(1));
  EXPECT_EQ(eval("double(3)"), core::Value(3.0));
  EXPECT_EQ(eval("double('2.5')"), core::Value(2.5));
  EXPECT_EQ(eval("string(42)"), core::Value("42"));
  EXPECT_EQ(eval("string(2.5)"), core::Value("2.5"));
  EXPECT_EQ(eval("string(2.0)"), core::Value("2.0"));
  EXPECT_EQ(eval("string(true)"), core::Value("true"));
  EXPECT_EQ(eval("string(kernel.release)"), core::Value("6.1.0-18-cloud-amd64"));
  EXPECT_EQ(eval("string(semver(software.nccl.version))"), core::Value("2.21.5+cuda12.4"));
  EXPECT_EQ(eval("string(gpu.count) + ' GPUs'"), core::Value("8 GPUs"));
  EXPECT_EQ(evalError("int(kernel.release)"), "1:1: cannot convert '6.1.0-18-cloud-amd64' to int");
  EXPECT_EQ(evalError("int('1 ')"), "1:1: cannot convert '1 ' to int");
  EXPECT_EQ(evalError("int('')"), "1:1: cannot convert '' to int");
  EXPECT_EQ(compileError("int('99999999999999999999')"),
            "1:1: cannot convert '99999999999999999999' to int");
  EXPECT_EQ(compileError("int(1e19)"), "1:1: int() argument out of range");
  EXPECT_EQ(compileError("double('x')"), "1:1: cannot convert 'x' to double");
  EXPECT_EQ(evalError("string(rdma)"), "1:1: no matching overload for 'string' applied to (map)");
  EXPECT_EQ(compileError("string([1])"),
            "1:1: no matching overload for 'string' applied to (list)");
}

TEST_F(ExprTest, StringExtensions) {
  EXPECT_EQ(eval("'MiXed-1'.lowerAscii()"), core::Value("mixed-1"));
  EXPECT_EQ(eval("'MiXed-1'.upperAscii()"), core::Value("MIXED-1"));
  EXPECT_EQ(eval("'  x y \\t\\n'.trim()"), core::Value("x y"));
  EXPECT_EQ(eval("'   '.trim()"), core::Value(""));
  EXPECT_EQ(eval("['a', 'b'].join(',')"), core::Value("a,b"));
  EXPECT_EQ(eval("['a', 'b'].join()"), core::Value("ab"));
  EXPECT_EQ(eval("[].join('-')"), core::Value(""));
  EXPECT_EQ(eval("rdma.devices.map(d, d.name).join(' ')"),
            core::Value("efa_0 rdmap1s0 rdmap2s0 rdmap3s0"));
  EXPECT_EQ(eval("kernel.release.indexOf('cloud')"), core::Value(9));
  EXPECT_EQ(eval("kernel.release.indexOf('aws')"), core::Value(-1));
  EXPECT_EQ(eval("'héllo'.indexOf('l')"), core::Value(2));
  EXPECT_EQ(evalError("[1, 2].join(',')"), "1:8: join() needs a list of strings, found int");
}

TEST_F(ExprTest, ListAggregates) {
  EXPECT_EQ(eval("[1, 2, 3].sum()"), core::Value(6));
  EXPECT_EQ(eval("sum([1, 2.5])"), core::Value(3.5));
  EXPECT_EQ(eval("[].sum()"), core::Value(0));
  EXPECT_EQ(eval("rdma.devices.map(d, d.ports[0].rate_gbps).sum()"), core::Value(400.0));
  EXPECT_EQ(eval("[3, 1, 2].min()"), core::Value(1));
  EXPECT_EQ(eval("[3, 1, 2.5].max()"), core::Value(3));
  EXPECT_EQ(eval("['b', 'a'].min()"), core::Value("a"));
  EXPECT_EQ(eval("rdma.devices.map(d, d.numa_node).max()"), core::Value(0));
  EXPECT_EQ(evalError("[].min()"), "1:4: min() of an empty list");
  EXPECT_EQ(evalError("[1, 'a'].max()"),
            "1:10: max() needs a list of numbers or strings, found string and int");
  EXPECT_EQ(evalError("['a'].sum()"), "1:7: sum() needs a list of numbers, found string");
  EXPECT_EQ(evalError("[9223372036854775807, gpu.count].sum()"), "1:34: integer overflow");
}

TEST_F(ExprTest, QuantityFunction) {
  EXPECT_EQ(eval("quantity('5Gi')"), core::Value(int64_t{5} << 30));
  EXPECT_EQ(eval("memory.hugepages['2048kB'].total * memory.hugepages['2048kB'].size_bytes >= "
                 "quantity('5Gi')"),
            core::Value(true));
  EXPECT_EQ(eval("memory.hugepages['2048kB'].total * memory.hugepages['2048kB'].size_bytes >= "
                 "quantity('6Gi')"),
            core::Value(false));
  EXPECT_EQ(eval("quantity('500m')"), core::Value(0.5));
  EXPECT_EQ(eval("quantity(string(gpu.count) + 'k')"), core::Value(8000));
  EXPECT_EQ(evalError("quantity(kernel.release)"),
            "1:1: invalid quantity '6.1.0-18-cloud-amd64': unknown suffix");
}

TEST_F(ExprTest, SemverFunction) {
  EXPECT_EQ(eval("semver(workload.glibc_version) >= semver('2.34')"), core::Value(true));
  EXPECT_EQ(eval("semver(workload.glibc_version) < semver('2.35.1')"), core::Value(true));
  EXPECT_EQ(eval("semver(software.nccl.version) >= semver('2.21.5')"), core::Value(true));
  EXPECT_EQ(eval("semver(software.nccl.version) < semver('2.22')"), core::Value(true));
  EXPECT_EQ(eval("semver(software.libfabric.version) >= semver('1.22')"), core::Value(true));
  EXPECT_EQ(eval("semver('2.34') == semver('2.34.0')"), core::Value(true));
  EXPECT_EQ(eval("semver('2.34') != semver('2.34.1')"), core::Value(true));
  EXPECT_EQ(eval("semver('28.39.1002') > semver('28.39.999')"), core::Value(true));
  EXPECT_EQ(eval("semver(semver('1.2')) == semver('1.2')"), core::Value(true));
  EXPECT_EQ(eval("semver('2.21.5+cuda12.4').major()"), core::Value(2));
  EXPECT_EQ(eval("semver('2.21.5+cuda12.4').minor()"), core::Value(21));
  EXPECT_EQ(eval("semver('2.21').patch()"), core::Value(0));
  EXPECT_EQ(eval("semver(workload.glibc_version) in [semver('2.35'), semver('2.36')]"),
            core::Value(true));
  EXPECT_EQ(eval("[semver('1.0')]"), core::Value(L{"1.0"}));
  EXPECT_EQ(eval("[semver('2.1'), semver('2.10'), semver('2.9')].max()"), core::Value("2.10"));
  EXPECT_EQ(evalError("semver(workload.glibc_version) >= '2.34'"),
            "1:32: cannot compare semver with string; convert the string with semver(\"...\")");
  EXPECT_EQ(evalError("semver(workload.glibc_version) == workload.glibc_version"),
            "1:32: cannot compare semver with string; convert the string with semver(\"...\")");
  EXPECT_EQ(evalError("semver(workload.comm)"), "1:1: invalid version 'python3'");
  EXPECT_EQ(compileError("semver('abc')"), "1:1: invalid version 'abc'");
  EXPECT_EQ(compileError("semver('1') < 1"),
            "1:13: no matching overload for '<' applied to (semver, int)");
}

}  // namespace
}  // namespace fabricwatch::policy::expr
