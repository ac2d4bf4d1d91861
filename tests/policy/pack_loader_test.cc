// The pack loader: every problem with its exact FILE:LINE:COL, and the shipped packs.
#include "policy/pack_loader.h"

#include <gtest/gtest.h>

#include "tests/support/registry.h"

namespace fabricwatch::policy {
namespace {

std::string problems(const PackLoadResult& r) { return core::formatAll(r.problems); }

// The first line of the first problem: "file:line:col: message".
std::string first(const PackLoadResult& r) {
  if (r.problems.empty()) return "(no problem)";
  std::string s = r.problems.front().format();
  return s.substr(0, s.find('\n'));
}

const char* kGood = R"(apiVersion: fabricwatch.io/v1
kind: PolicyPack
metadata: {name: demo, description: a demo}
spec:
  match:
    resourceGroups: ["efa-*"]
    expression: 'size(rdma.devices) > 0'
  variables:
    - name: efa
      expression: 'rdma.devices.filter(d, d.kind == "efa")'
  rules:
    - id: efa-count
      severity: critical
      expression: 'size(variables.efa) >= 32'
      messageExpression: '"found " + string(size(variables.efa))'
      remediation: add devices
    - id: per-workload
      severity: info
      subject: workload
      expression: 'has(workload.env)'
      message: no env
      remediation: set it
)";

TEST(PackLoaderTest, LoadsAWellFormedPack) {
  auto r = loadPackText(kGood, "demo.yaml", testing::factRoots());
  ASSERT_TRUE(r.ok()) << problems(r);
  ASSERT_EQ(r.packs.size(), 1u);
  const Pack& p = r.packs[0];
  EXPECT_EQ(p.name, "demo");
  EXPECT_EQ(p.description, "a demo");
  EXPECT_EQ(p.resource_groups, std::vector<std::string>{"efa-*"});
  ASSERT_TRUE(p.match_expression);
  ASSERT_EQ(p.variables.size(), 1u);
  EXPECT_EQ(p.variables[0].name, "efa");
  ASSERT_EQ(p.rules.size(), 2u);
  EXPECT_EQ(p.rules[0].severity, Severity::kCritical);
  EXPECT_EQ(p.rules[0].subject, Subject::kNode);
  EXPECT_TRUE(p.rules[0].message_expression);
  EXPECT_EQ(p.rules[0].expression.pos.line, 14);
  EXPECT_EQ(p.rules[0].expression.pos.column, 19);
  EXPECT_EQ(p.rules[1].subject, Subject::kWorkload);
  EXPECT_EQ(p.rules[1].message, "no env");
}

std::string withRule(const std::string& rule) {
  return "apiVersion: fabricwatch.io/v1\nkind: PolicyPack\nmetadata: {name: t}\nspec:\n  rules:\n" +
         rule;
}

TEST(PackLoaderTest, AnExpressionOverTheSizeBoundIsRefusedAtItsPosition) {
  // ["a", "a", ...]: the list and its elements, one node each.
  auto list = [](size_t n) {
    std::string e = "[";
    for (size_t i = 0; i < n; ++i) e += i ? ", \"a\"" : "\"a\"";
    return e + "]";
  };
  auto rule = [](const std::string& e) {
    return withRule("    - id: a\n      severity: info\n      expression: 'size(" + e +
                    ") > 0'\n      remediation: x\n");
  };
  // Large but legal: size, the list and its elements, 0 and >: 4 + n nodes.
  auto ok = loadPackText(rule(list(expr::kMaxExprNodes - 4)), "p.yaml", testing::factRoots());
  EXPECT_TRUE(ok.ok()) << first(ok);
  // One element past the bound: refused at it, line 8 of the file, the column of the element
  // (the scalar's first character is column 20, "size(" and "[" before the first element).
  auto big = loadPackText(rule(list(expr::kMaxExprNodes)), "p.yaml", testing::factRoots());
  EXPECT_TRUE(big.packs.empty());
  size_t col = 20 + 6 + 5 * (expr::kMaxExprNodes - 2);
  EXPECT_EQ(first(big), "p.yaml:8:" + std::to_string(col) + ": rule \"a\" expression: " +
                            expr::exprTooLargeMessage(expr::kMaxExprNodes));
}

TEST(PackLoaderTest, UnknownFieldIsPositioned) {
  auto r = loadPackText(withRule("    - id: a\n      severity: info\n      expresion: 'true'\n"
                                 "      expression: 'true'\n      remediation: x\n"),
                        "p.yaml", testing::factRoots());
  EXPECT_EQ(first(r),
            "p.yaml:8:7: unknown field \"expresion\" in rule (known: id, description, "
            "severity, subject, expression, message, messageExpression, unknownWhen, "
            "unknownMessage, unknownMessageExpression, remediation)");
  EXPECT_TRUE(r.packs.empty());
}

TEST(PackLoaderTest, UnknownWhenIsCompiledAndItsMessageNeedsIt) {
  auto ok = loadPackText(withRule("    - id: a\n      severity: info\n      expression: 'true'\n"
                                  "      unknownWhen: '!has(kernel.modules)'\n"
                                  "      unknownMessageExpression: '\"no modules\"'\n"
                                  "      remediation: x\n"),
                         "p.yaml", testing::factRoots());
  ASSERT_TRUE(ok.ok()) << core::formatAll(ok.problems);
  const Rule& rule = ok.packs[0].rules[0];
  ASSERT_TRUE(rule.unknown_when);
  EXPECT_EQ(rule.unknown_when->text, "!has(kernel.modules)");
  EXPECT_EQ(rule.unknown_when->pos.line, 9);
  EXPECT_EQ(rule.unknown_when->pos.column, 20);
  EXPECT_TRUE(rule.unknown_message_expression);

  // A message for an unknown result without the condition is a mistake, positioned.
  auto lone = loadPackText(withRule("    - id: a\n      severity: info\n      expression: 'true'\n"
                                    "      unknownMessage: never shown\n      remediation: x\n"),
                           "p.yaml", testing::factRoots());
  EXPECT_EQ(first(lone), "p.yaml:9:23: rule \"a\": an unknown message needs unknownWhen");
  // Its expression is compiled at load like any other, with the rule's names.
  auto bad =
      loadPackText(withRule("    - id: a\n      severity: info\n      expression: 'true'\n"
                            "      unknownWhen: 'has(workload.env)'\n      remediation: x\n"),
                   "p.yaml", testing::factRoots());
  EXPECT_NE(first(bad).find("p.yaml:9:"), std::string::npos) << first(bad);
  EXPECT_NE(first(bad).find("unknownWhen"), std::string::npos) << first(bad);
}

TEST(PackLoaderTest, UnknownTopLevelAndSpecFields) {
  auto r = loadPackText(
      "apiVersion: fabricwatch.io/v1\nkind: PolicyPack\nmetadata: {name: t}\n"
      "spec:\n  rules: []\n  extra: 1\nstatus: {}\n",
      "p.yaml", testing::factRoots());
  ASSERT_EQ(r.problems.size(), 2u) << problems(r);
  EXPECT_EQ(r.problems[0].format().substr(0, r.problems[0].format().find('\n')),
            "p.yaml:7:1: unknown field \"status\" in document (known: apiVersion, kind, metadata, "
            "spec)");
  EXPECT_EQ(r.problems[1].line, 6);
  EXPECT_EQ(r.problems[1].column, 3);
}

TEST(PackLoaderTest, DuplicateRuleIdNamesTheFirst) {
  auto r =
      loadPackText(withRule("    - {id: a, severity: info, expression: 'true', remediation: x}\n"
                            "    - {id: a, severity: info, expression: 'true', remediation: x}\n"),
                   "p.yaml", testing::factRoots());
  EXPECT_EQ(first(r), "p.yaml:7:12: duplicate rule id \"a\" (first defined at line 6)");
}

TEST(PackLoaderTest, BadSeveritySubjectAndMissingFields) {
  auto r = loadPackText(withRule("    - id: a\n      severity: fatal\n      subject: pod\n"
                                 "      expression: 'true'\n      remediation: x\n"
                                 "    - id: b\n      severity: info\n"),
                        "p.yaml", testing::factRoots());
  ASSERT_EQ(r.problems.size(), 4u) << problems(r);
  EXPECT_EQ(first(r),
            "p.yaml:7:17: rule \"a\": unknown severity \"fatal\" (use critical, warning or info)");
  EXPECT_EQ(r.problems[1].format().substr(0, r.problems[1].format().find('\n')),
            "p.yaml:8:16: rule \"a\": unknown subject \"pod\" (use node or workload)");
  EXPECT_EQ(r.problems[2].format().substr(0, r.problems[2].format().find('\n')),
            "p.yaml:11:7: rule is missing required field \"expression\"");
  EXPECT_EQ(r.problems[3].line, 11);
  EXPECT_NE(r.problems[3].message.find("\"remediation\""), std::string::npos);
}

TEST(PackLoaderTest, ApiVersionKindAndNames) {
  auto r =
      loadPackText("apiVersion: v2\nkind: Pack\nmetadata: {name: Bad_Name}\nspec: {rules: []}\n",
                   "p.yaml", testing::factRoots());
  ASSERT_EQ(r.problems.size(), 3u) << problems(r);
  EXPECT_EQ(first(r), "p.yaml:1:13: unsupported apiVersion \"v2\" (want fabricwatch.io/v1)");
  EXPECT_EQ(r.problems[1].line, 2);
  EXPECT_EQ(r.problems[1].column, 7);
  EXPECT_EQ(r.problems[2].line, 3);
  EXPECT_EQ(r.problems[2].column, 18);
}

TEST(PackLoaderTest, YamlSyntaxErrorIsPositionedWithSnippet) {
  auto r = loadPackText("apiVersion: fabricwatch.io/v1\nkind: [PolicyPack\n", "p.yaml",
                        testing::factRoots());
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.problems[0].line, 3);
  EXPECT_NE(r.problems[0].message.find("YAML syntax error"), std::string::npos);
}

TEST(PackLoaderTest, DuplicateVariablesAndPackNames) {
  auto r = loadPackText(
      "apiVersion: fabricwatch.io/v1\nkind: PolicyPack\nmetadata: {name: t}\nspec:\n"
      "  variables:\n    - {name: x, expression: '1'}\n    - {name: x, expression: '2'}\n"
      "  rules: []\n",
      "p.yaml", testing::factRoots());
  EXPECT_EQ(first(r), "p.yaml:7:14: duplicate variable \"x\" (first defined at line 6)");
  auto two = loadPackText(
      "apiVersion: fabricwatch.io/v1\nkind: PolicyPack\nmetadata: {name: t}\nspec: {rules: []}\n"
      "---\napiVersion: fabricwatch.io/v1\nkind: PolicyPack\nmetadata: {name: t}\n"
      "spec: {rules: []}\n",
      "p.yaml", testing::factRoots());
  EXPECT_EQ(first(two), "p.yaml:6:1: duplicate pack name \"t\" (also defined at p.yaml:1)");
}

// Expression compile errors point into the file, whatever the scalar style.
TEST(PackLoaderTest, ExpressionErrorsMapToFilePositions) {
  auto single = loadPackText(
      withRule("    - id: a\n      severity: info\n      expression: 'size(rmda.devices) > 0'\n"
               "      remediation: x\n"),
      "p.yaml", testing::factRoots());
  ASSERT_FALSE(single.ok());
  EXPECT_EQ(single.problems[0].line, 8);
  EXPECT_EQ(single.problems[0].column, 25) << first(single);
  EXPECT_EQ(single.problems[0].message.rfind("rule \"a\" expression: ", 0), 0u) << first(single);

  auto dbl = loadPackText(
      withRule("    - id: a\n      severity: info\n      expression: \"kernel.release == \\\"5\\\" "
               "&& rmda\"\n      remediation: x\n"),
      "p.yaml", testing::factRoots());
  ASSERT_FALSE(dbl.ok());
  EXPECT_EQ(dbl.problems[0].line, 8);
  EXPECT_EQ(dbl.problems[0].column, 47) << first(dbl);

  auto plain =
      loadPackText(withRule("    - id: a\n      severity: info\n      expression: size(rmda) > 0\n"
                            "      remediation: x\n"),
                   "p.yaml", testing::factRoots());
  ASSERT_FALSE(plain.ok());
  EXPECT_EQ(plain.problems[0].line, 8);
  EXPECT_EQ(plain.problems[0].column, 24) << first(plain);

  auto block = loadPackText(withRule("    - id: a\n      severity: info\n      expression: |\n     "
                                     "   size(kernel.modules) > 0 &&\n"
                                     "          rmda.devices.all(d, true)\n      remediation: x\n"),
                            "p.yaml", testing::factRoots());
  ASSERT_FALSE(block.ok());
  EXPECT_EQ(block.problems[0].line, 10);
  EXPECT_EQ(block.problems[0].column, 11) << first(block);
  EXPECT_EQ(block.problems[0].snippet, "          rmda.devices.all(d, true)");

  auto folded = loadPackText(withRule("    - id: a\n      severity: info\n      expression: >-\n   "
                                      "     size(kernel.modules) > 0 &&\n"
                                      "        rmda.devices.all(d, true)\n      remediation: x\n"),
                             "p.yaml", testing::factRoots());
  ASSERT_FALSE(folded.ok());
  EXPECT_EQ(folded.problems[0].line, 10);
  EXPECT_EQ(folded.problems[0].column, 9) << first(folded);
}

TEST(PackLoaderTest, WorkloadIsOnlyVisibleToWorkloadRules) {
  auto r = loadPackText(withRule("    - {id: a, severity: info, expression: 'has(workload.env)', "
                                 "remediation: x}\n"),
                        "p.yaml", testing::factRoots());
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.problems[0].line, 6);
}

TEST(PackLoaderTest, ShippedPacksAllLoad) {
  auto r = loadEmbeddedPacks(testing::factRoots());
  ASSERT_TRUE(r.ok()) << problems(r);
  std::vector<std::string> names;
  for (const auto& p : r.packs) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"aws-efa", "baseline", "infiniband", "nccl",
                                             "pai-general-erdma", "pai-lingjun", "rdma-counters"}));
  for (const auto& p : r.packs)
    for (const auto& rule : p.rules)
      EXPECT_FALSE(rule.remediation.empty()) << p.name << "/" << rule.id;
}

TEST(PackLoaderTest, TestFilesAreNotPacks) {
  EXPECT_TRUE(isPolicyTestFile("config/policies/aws-efa_test.yaml"));
  EXPECT_TRUE(isPolicyTestFile("x.test.yml"));
  EXPECT_FALSE(isPolicyTestFile("config/policies/aws-efa.yaml"));
}

}  // namespace
}  // namespace fabricwatch::policy
