#include <gtest/gtest.h>

#include "policy/expr/expr.h"
#include "tests/policy/expr/expr_test_util.h"

// Syntax errors point at the offending token (line:column within the expression).

namespace fabricwatch::policy::expr {
namespace {

using testing::ExprTest;

TEST_F(ExprTest, SyntaxErrorsPointAtTheToken) {
  EXPECT_EQ(compileError("1 +"), "1:4: unexpected end of expression");
  EXPECT_EQ(compileError("(1 + 2"), "1:7: expected ')', found end of expression");
  EXPECT_EQ(compileError("1 + 2)"), "1:6: unexpected ')'");
  EXPECT_EQ(compileError("a.b.\n  c + )"), "2:7: unexpected ')'");
  EXPECT_EQ(compileError("a = 1"), "1:3: unexpected '=' (did you mean '=='?)");
  EXPECT_EQ(compileError("a & b"), "1:3: unexpected '&' (did you mean '&&'?)");
  EXPECT_EQ(compileError("a | b"), "1:3: unexpected '|' (did you mean '||'?)");
  EXPECT_EQ(compileError("a # b"), "1:3: unexpected character '#'");
  EXPECT_EQ(compileError("'abc"), "1:1: unterminated string literal");
  EXPECT_EQ(compileError("x == 'a\nb'"), "1:6: unterminated string literal");
  EXPECT_EQ(compileError("'\\q'"), "1:2: invalid escape sequence");
  EXPECT_EQ(compileError("'\\u12'"), "1:6: malformed escape sequence");
  EXPECT_EQ(compileError("b'x'"), "1:1: bytes literals are not supported");
  EXPECT_EQ(compileError("9223372036854775808"), "1:1: integer literal out of range");
  EXPECT_EQ(compileError("-9223372036854775809"), "1:2: integer literal out of range");
  EXPECT_EQ(compileError("1e"), "1:2: malformed exponent");
  EXPECT_EQ(compileError("12abc"), "1:3: unexpected character after number");
  EXPECT_EQ(compileError("a."),
            "1:3: expected a field or method name after '.', found end of expression");
  EXPECT_EQ(compileError("a.1"), "1:2: unexpected number .1");
  EXPECT_EQ(compileError("[1, 2"), "1:6: expected ']', found end of expression");
  EXPECT_EQ(compileError("{'a' 1}"), "1:6: expected ':', found number 1");
  EXPECT_EQ(compileError("true ? 1"), "1:9: expected ':', found end of expression");
  EXPECT_EQ(compileError("f(1,,2)"), "1:5: unexpected ','");
  EXPECT_EQ(compileError(""), "1:1: unexpected end of expression");
  EXPECT_EQ(compileError("while"), "1:1: reserved identifier 'while'");
  EXPECT_EQ(compileError("a.if"), "1:3: reserved identifier 'if'");
  EXPECT_EQ(compileError("in"), "1:1: unexpected 'in'");
}

TEST_F(ExprTest, DeepNestingIsRejectedNotACrash) {
  std::string deep(5000, '(');
  EXPECT_EQ(compileError(deep + "1" + std::string(5000, ')')).substr(0, 32),
            "1:201: expression is nested too ");
  std::string chain = "1";
  for (int i = 0; i < 5000; ++i) chain += " + 1";
  EXPECT_NE(compileError(chain).find("nested too deeply"), std::string::npos);
  EXPECT_NE(compileError(std::string(5000, '!') + "true").find("nested too deeply"),
            std::string::npos);
  std::string ok = "1";
  for (int i = 0; i < 150; ++i) ok += " + 1";
  EXPECT_EQ(eval(ok), core::Value(151));
}

// A list of n strings in one expression: n + 3 nodes ("h", in, the list, its elements).
std::string hostListExpr(size_t n) {
  std::string e = "\"h\" in [";
  for (size_t i = 0; i < n; ++i) e += (i ? ", \"node-" : "\"node-") + std::to_string(i) + "\"";
  return e + "]";
}

TEST_F(ExprTest, AnExpressionOverTheSizeBoundIsRefusedAtTheTokenThatPassesIt) {
  // At the bound: compiles and evaluates.
  std::string legal = hostListExpr(kMaxExprNodes - 3);
  EXPECT_EQ(eval(legal), core::Value(false));
  // Two elements more: refused where the element past the bound starts (the `in` node comes
  // after its operands).
  std::string over = hostListExpr(kMaxExprNodes - 1);
  size_t last = over.rfind("\"node-");
  EXPECT_EQ(compileError(over),
            "1:" + std::to_string(last + 1) + ": " + exprTooLargeMessage(kMaxExprNodes));
  EXPECT_NE(exprTooLargeMessage(kMaxExprNodes).find("over 50000 nodes"), std::string::npos);
  // The 3.3 MB list of issue 23 (250,000 names): refused by the lexer at 4 tokens per node,
  // before a tree is built.
  std::string huge = hostListExpr(250000);
  EXPECT_GT(huge.size(), 3'300'000u);
  EXPECT_NE(compileError(huge).find(": expression is too large: over 50000 nodes"),
            std::string::npos);
  // A smaller bound from the options.
  CompileOptions small;
  small.max_nodes = 10;
  auto r = compile(hostListExpr(9), small);
  ASSERT_TRUE(std::holds_alternative<ExprError>(r));
  EXPECT_EQ(std::get<ExprError>(r).message, exprTooLargeMessage(10));
  EXPECT_TRUE(
      std::holds_alternative<std::shared_ptr<const Program>>(compile(hostListExpr(7), small)));
}

TEST_F(ExprTest, CompileTimeChecks) {
  EXPECT_EQ(compileError("foo(1)"), "1:1: unknown function 'foo'");
  EXPECT_EQ(compileError("rdma.devices.frobnicate()"), "1:14: unknown function 'frobnicate'");
  EXPECT_EQ(compileError("size(1, 2)"), "1:1: function 'size' takes 1 argument(s), got 2");
  EXPECT_EQ(compileError("'a'.startsWith()"),
            "1:5: function 'startsWith' takes 1 argument(s), got 0");
  EXPECT_EQ(compileError("size(1)"), "1:1: no matching overload for 'size' applied to (int)");
  EXPECT_EQ(compileError("'a'.contains(1)"),
            "1:5: no matching overload for 'contains' applied to (string, int)");
  EXPECT_EQ(compileError("all(x, true)"), "1:1: all() is a macro: write list.all(x, ...)");
  EXPECT_EQ(compileError("rdma.devices.all(1, true)"),
            "1:18: all() needs a variable name as its first argument");
  EXPECT_EQ(compileError("rdma.devices.all(d)"),
            "1:14: all() takes 2 arguments: a variable name and an expression");
  EXPECT_EQ(compileError("rdma.devices.exists(d, 1)"),
            "1:24: predicate of exists() must be bool, got int");
  EXPECT_EQ(compileError("1.all(x, true)"), "1:3: all() needs a list or a map, not int");
  EXPECT_EQ(compileError("'x'.y"), "1:5: cannot select field 'y' from string");
  EXPECT_EQ(compileError("semver('2.34') < '2.35'"),
            "1:16: cannot compare semver with string; convert the string with semver(\"...\")");
  EXPECT_EQ(compileError("quantity('5Gx')"), "1:1: invalid quantity '5Gx': unknown suffix");
  EXPECT_EQ(compileError("'a'.matches('(')"), "1:13: invalid regular expression '(': missing ): (");
}

TEST_F(ExprTest, DeclaredIdentifiers) {
  CompileOptions opts;
  opts.identifiers = {"rdma", "variables"};
  EXPECT_EQ(compileError("size(rdma.devices) > 0 && gpu.count == 8", opts),
            "1:27: undeclared reference to 'gpu'");
  // Comprehension variables shadow and need no declaration.
  EXPECT_TRUE(std::holds_alternative<std::shared_ptr<const Program>>(
      compile("rdma.devices.all(gpu, gpu.kind == 'efa')", opts)));
}

TEST_F(ExprTest, ResultTypeIsWhatTheCompilerKnows) {
  auto type = [](const char* src) {
    return std::get<std::shared_ptr<const Program>>(compile(src))->resultType();
  };
  EXPECT_EQ(type("size(rdma.devices) > 0"), "bool");
  EXPECT_EQ(type("rdma.devices.all(d, d.x)"), "bool");
  EXPECT_EQ(type("size(rdma.devices)"), "int");
  EXPECT_EQ(type("gpu.count + 1"), "int|double");
  EXPECT_EQ(type("rdma.devices.map(d, d.name)"), "list");
  EXPECT_EQ(type("semver('1.2')"), "semver");
  EXPECT_EQ(type("rdma.devices[0].name"), "dyn");
  EXPECT_EQ(type("true ? 1 : 'a'"), "int");  // folded
  EXPECT_EQ(type("gpu.count > 1 ? 1 : 'a'"), "int|string");
}

TEST_F(ExprTest, MultiLinePositions) {
  EXPECT_EQ(evalError("gpu.count == 8 &&\n  rdma.devices.all(d,\n    d.nope == 1)"),
            "3:7: no such key: 'nope'");
}

}  // namespace
}  // namespace fabricwatch::policy::expr
