// Evaluator semantics: pack matching, variables, messages, errors, per-workload subjects.
#include "policy/evaluator.h"

#include <gtest/gtest.h>

#include "policy/pack_loader.h"
#include "policy/yaml_value.h"
#include "tests/support/registry.h"

namespace fabricwatch::policy {
namespace {

PackSet load(const std::string& spec) {
  auto r =
      loadPackText("apiVersion: fabricwatch.io/v1\nkind: PolicyPack\nmetadata: {name: p}\n" + spec,
                   "p.yaml", testing::factRoots());
  EXPECT_TRUE(r.ok()) << core::formatAll(r.problems);
  return r.packs;
}

core::Value facts(const std::string& yaml) { return yamlToValue(YAML::Load(yaml)); }

TEST(EvaluatorTest, ViolationCarriesMessageExpressionAndRemediation) {
  auto packs = load(R"(spec:
  variables:
    - {name: n, expression: 'size(rdma.devices)'}
  rules:
    - id: count
      severity: critical
      expression: 'variables.n >= 2'
      messageExpression: '"found " + string(variables.n)'
      remediation: fix it
    - id: fine
      severity: info
      expression: 'variables.n == 1'
      remediation: nothing
)");
  auto e = evaluate(packs, facts("rdma: {devices: [{name: a}]}"), "g");
  ASSERT_EQ(e.violations.size(), 1u);
  const Finding& f = e.violations[0];
  EXPECT_EQ(f.pack, "p");
  EXPECT_EQ(f.rule, "count");
  EXPECT_EQ(f.severity, Severity::kCritical);
  EXPECT_EQ(f.subject, "node");
  EXPECT_EQ(f.subject_label, "node");
  EXPECT_EQ(f.message, "found 1");
  EXPECT_EQ(f.remediation, "fix it");
  ASSERT_EQ(e.packs.size(), 1u);
  EXPECT_TRUE(e.packs[0].matched);
  EXPECT_EQ(e.packs[0].pass, 1u);
  EXPECT_EQ(e.packs[0].fail, 1u);
  EXPECT_TRUE(e.errors.empty());
}

// A rule whose inputs are missing says so: its result is unknown, counted and listed apart,
// never a violation; a rule that holds on what is known still passes, and facts that prove a
// fault still fail it.
TEST(EvaluatorTest, MissingInputsGiveAnUnknownResultNotAViolation) {
  auto packs = load(R"y(spec:
  rules:
    - id: uverbs
      severity: critical
      expression: 'has(kernel.modules) && "ib_uverbs" in kernel.modules'
      message: ib_uverbs is not loaded
      unknownWhen: '!has(kernel.modules)'
      unknownMessageExpression: '"kernel modules unknown (no /proc/modules)"'
      remediation: modprobe ib_uverbs
    - id: static-message
      severity: warning
      expression: 'has(limits.memlock)'
      unknownWhen: '!has(limits.memlock)'
      unknownMessage: memlock unknown
      remediation: x
    - id: default-message
      severity: info
      expression: 'false'
      unknownWhen: 'true'
      remediation: x
)y");
  auto missing = evaluate(packs, facts("{}"), "g");
  EXPECT_TRUE(missing.violations.empty());
  EXPECT_TRUE(missing.errors.empty());
  ASSERT_EQ(missing.unknown.size(), 3u);
  EXPECT_EQ(missing.unknown[0].rule, "uverbs");
  EXPECT_EQ(missing.unknown[0].severity, Severity::kCritical);
  EXPECT_EQ(missing.unknown[0].subject, "node");
  EXPECT_EQ(missing.unknown[0].message, "kernel modules unknown (no /proc/modules)");
  EXPECT_TRUE(missing.unknown[0].remediation.empty());
  EXPECT_EQ(missing.unknown[1].message, "memlock unknown");
  EXPECT_EQ(missing.unknown[2].message, "cannot be judged: true");
  EXPECT_EQ(missing.packs[0].unknown, 3u);
  EXPECT_EQ(missing.packs[0].fail, 0u);
  EXPECT_EQ(missing.packs[0].pass, 0u);

  auto known = evaluate(packs, facts("{kernel: {modules: [mlx5_ib]}, limits: {memlock: {}}}"), "g");
  ASSERT_EQ(known.violations.size(), 1u);
  EXPECT_EQ(known.violations[0].message, "ib_uverbs is not loaded");
  ASSERT_EQ(known.unknown.size(), 1u);  // default-message: always unknown when false
  EXPECT_EQ(known.packs[0].pass, 1u);
  EXPECT_EQ(known.packs[0].fail, 1u);
}

// unknownWhen is evaluated only on a false result, and must be a bool.
TEST(EvaluatorTest, UnknownWhenOnlyOnAFalseResultAndMustBeABool) {
  auto packs = load(R"(spec:
  rules:
    - {id: holds, severity: info, expression: 'true', unknownWhen: 'kernel.nope', remediation: x}
    - {id: not-bool, severity: info, expression: 'false', unknownWhen: '1', remediation: x}
    - {id: broken, severity: info, expression: 'false', unknownWhen: 'kernel.nope', remediation: x}
)");
  auto e = evaluate(packs, facts("{}"), "g");
  EXPECT_TRUE(e.violations.empty());
  EXPECT_TRUE(e.unknown.empty());
  EXPECT_EQ(e.packs[0].pass, 1u);
  ASSERT_EQ(e.errors.size(), 2u);
  EXPECT_EQ(e.errors[0].rule, "not-bool");
  EXPECT_EQ(e.errors[0].message, "unknownWhen must evaluate to a bool, got int");
  EXPECT_EQ(e.errors[1].rule, "broken");
  EXPECT_EQ(e.packs[0].error, 2u);
}

TEST(EvaluatorTest, UnknownWorkloadResultsAreBoundedLikeViolations) {
  auto packs = load(R"(spec:
  rules:
    - id: memlock
      severity: critical
      subject: workload
      expression: 'has(workload.memlock) && workload.memlock.unlimited'
      unknownWhen: '!has(workload.memlock)'
      unknownMessage: the process's limits are unreadable
      remediation: x
)");
  std::string wl = "workloads: [";
  for (int i = 0; i < 4; ++i) wl += "{pid: " + std::to_string(100 + i) + "}, ";
  wl += "{pid: 200, memlock: {unlimited: false}}]";
  EvalSettings settings;
  settings.max_workload_subjects = 2;
  auto e = evaluate(packs, facts(wl), "g", settings);
  ASSERT_EQ(e.violations.size(), 1u);
  EXPECT_EQ(e.violations[0].subject_label, "workload:200");
  ASSERT_EQ(e.unknown.size(), 3u);
  EXPECT_EQ(e.unknown[0].subject_label, "workload:100");
  EXPECT_EQ(e.unknown[2].subject_label, "workload:_more");
  EXPECT_EQ(e.unknown[2].message,
            "2 more workloads cannot be judged by this rule (at most 2 are listed one by one)");
  EXPECT_EQ(e.packs[0].unknown, 4u);
}

TEST(EvaluatorTest, MessageFallsBackToStaticThenToTheExpression) {
  auto packs = load(R"(spec:
  rules:
    - {id: a, severity: info, expression: 'false', message: static, remediation: x}
    - {id: b, severity: info, expression: '1 > 2', remediation: x}
    - {id: c, severity: info, expression: 'false', message: m, messageExpression: 'kernel.nope', remediation: x}
)");
  auto e = evaluate(packs, facts("{}"), "g");
  ASSERT_EQ(e.violations.size(), 3u);
  EXPECT_EQ(e.violations[0].message, "static");
  EXPECT_EQ(e.violations[1].message, "expression is false: 1 > 2");
  EXPECT_EQ(e.violations[2].message, "m");
}

TEST(EvaluatorTest, ResourceGroupGlobsAndMatchExpressionSelectPacks) {
  auto packs = load(R"(spec:
  match:
    resourceGroups: ["efa-*", "efa"]
    expression: 'has(rdma.devices)'
  rules:
    - {id: a, severity: info, expression: 'false', remediation: x}
)");
  core::Value with = facts("rdma: {devices: []}");
  EXPECT_EQ(evaluate(packs, with, "efa-p5").violations.size(), 1u);
  EXPECT_EQ(evaluate(packs, with, "efa").violations.size(), 1u);
  auto other = evaluate(packs, with, "ib-ndr");
  EXPECT_TRUE(other.violations.empty());
  EXPECT_FALSE(other.packs[0].matched);
  EXPECT_EQ(other.packs[0].skipped, "resource group");
  auto no_rdma = evaluate(packs, facts("{}"), "efa-p5");
  EXPECT_TRUE(no_rdma.violations.empty());
  EXPECT_EQ(no_rdma.packs[0].skipped, "match expression");
}

TEST(EvaluatorTest, EvaluationErrorsAreNotViolations) {
  auto packs = load(R"(spec:
  variables:
    - {name: bad, expression: 'kernel.release'}
  rules:
    - {id: missing, severity: critical, expression: 'kernel.release == "x"', remediation: x}
    - {id: notbool, severity: critical, expression: 'size(kernel)', remediation: x}
    - {id: usesbad, severity: critical, expression: 'variables.bad == "x"', remediation: x}
)");
  auto e = evaluate(packs, facts("kernel: {}"), "g");
  EXPECT_TRUE(e.violations.empty());
  ASSERT_EQ(e.errors.size(), 4u);
  EXPECT_EQ(e.errors[0].rule, "variables.bad");
  EXPECT_EQ(e.errors[1].rule, "missing");
  EXPECT_EQ(e.errors[2].rule, "notbool");
  EXPECT_EQ(e.errors[2].message, "expression must evaluate to a bool, got int");
  EXPECT_EQ(e.errors[3].rule, "usesbad");
  EXPECT_EQ(e.packs[0].error, 3u);
}

TEST(EvaluatorTest, WorkloadRulesNameOnlyTheViolatingWorkloads) {
  auto packs = load(R"(spec:
  rules:
    - id: rdma
      severity: critical
      subject: workload
      expression: 'has(workload.env) && "FI_EFA_USE_DEVICE_RDMA" in workload.env'
      messageExpression: '"pid " + string(workload.pid) + " lacks it"'
      remediation: set it
)");
  auto e = evaluate(packs, facts(R"(workloads:
  - {pid: 1, comm: good, env: {FI_EFA_USE_DEVICE_RDMA: "1"}}
  - {pid: 4242, comm: python, pod_uid: u-1, container_id: 0123456789abcdef0123, env: {}}
  - {pid: 77}
)"),
                    "g");
  ASSERT_EQ(e.violations.size(), 2u);
  EXPECT_EQ(e.violations[0].subject, "pod=u-1 container=0123456789ab pid=4242 (python)");
  EXPECT_EQ(e.violations[0].subject_label, "workload:u-1");
  EXPECT_EQ(e.violations[0].message, "pid 4242 lacks it");
  EXPECT_EQ(e.violations[1].subject, "pid=77");
  EXPECT_EQ(e.violations[1].subject_label, "workload:77");
  EXPECT_EQ(e.packs[0].pass, 1u);
  EXPECT_EQ(e.packs[0].fail, 2u);
}

TEST(EvaluatorTest, WorkloadSubjectsAreCappedPerRule) {
  auto packs = load(R"(spec:
  rules:
    - {id: r, severity: info, subject: workload, expression: 'false', remediation: x}
)");
  std::string yaml = "workloads:\n";
  for (int i = 0; i < 30; ++i) yaml += "  - {pid: " + std::to_string(100 + i) + "}\n";
  EvalSettings s;
  s.max_workload_subjects = 5;
  auto e = evaluate(packs, facts(yaml), "g", s);
  ASSERT_EQ(e.violations.size(), 6u);
  EXPECT_EQ(e.violations[4].subject_label, "workload:104");
  EXPECT_EQ(e.violations[5].subject_label, "workload:_more");
  EXPECT_EQ(e.violations[5].message,
            "25 more workloads violate this rule (at most 5 are listed one by one)");
  EXPECT_EQ(e.packs[0].fail, 30u);
}

TEST(EvaluatorTest, AbsentRootsAreEmptySoHasWorks) {
  auto packs = load(R"(spec:
  rules:
    - {id: r, severity: info, expression: '!has(software.efa_ofi_dir) && size(workloads) == 0', remediation: x}
)");
  auto e = evaluate(packs, facts("{}"), "g");
  EXPECT_TRUE(e.errors.empty()) << e.errors[0].message;
  EXPECT_TRUE(e.violations.empty());
}

}  // namespace
}  // namespace fabricwatch::policy
