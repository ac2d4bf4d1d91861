// The policy stage on a snapshot, its metrics, and reloads that keep the last good packs.
#include "policy/policy_stage.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "core/snapshot.h"
#include "core/text_format.h"
#include "core/value_format.h"
#include "policy/yaml_value.h"
#include "tests/support/registry.h"
#include "tests/support/temp_dir.h"

namespace fabricwatch::policy {
namespace {

const char* kPack = R"(apiVersion: fabricwatch.io/v1
kind: PolicyPack
metadata: {name: demo}
spec:
  match: {resourceGroups: ["test-*"]}
  rules:
    - {id: release, severity: critical, expression: 'kernel.release == "6.1"', message: old kernel, remediation: upgrade}
    - {id: env, severity: warning, subject: workload, expression: '"X" in workload.env', remediation: set X}
    - {id: broken, severity: info, expression: 'kernel.nope == 1', remediation: none}
    - id: modules
      severity: critical
      expression: 'has(kernel.modules) && "ib_uverbs" in kernel.modules'
      unknownWhen: '!has(kernel.modules)'
      unknownMessage: kernel modules unknown
      remediation: load it
)";

std::string render(const PolicyStage& stage, const core::Snapshot& snap) {
  core::MetricFamilies fams;
  stage.renderMetrics(snap, fams);
  return core::textFormat(fams);
}

TEST(PolicyStageTest, EvaluatesEachSnapshotAndRendersMetrics) {
  testing::TempDir dir;
  std::string file = dir.write("demo.yaml", kPack);
  auto store = std::make_shared<PackStore>(
      PackStoreOptions{{file}, /*shipped=*/false, {}, testing::factRoots()});
  ASSERT_TRUE(store->reload().empty());
  StageOptions opts;
  opts.group.config = "test-a";
  PolicyStage stage(store, opts);

  core::Snapshot snap;
  snap.facts = yamlToValue(YAML::Load(R"(
kernel: {release: "5.10"}
workloads:
  - {pid: 9, pod_uid: u-9, env: {}}
  - {pid: 10, env: {X: "1"}}
)"));
  stage.apply(snap);
  ASSERT_EQ(snap.violations.size(), 2u);
  EXPECT_EQ(snap.violations[0].rule, "release");
  EXPECT_EQ(snap.violations[0].message, "old kernel");
  EXPECT_EQ(snap.violations[0].remediation, "upgrade");
  EXPECT_EQ(snap.violations[1].subject, "pod=u-9 pid=9");
  EXPECT_EQ(snap.violations[1].metric_subject, "workload:u-9");
  EXPECT_EQ(snap.facts.find("resource_group")->asString(), "test-a");

  const core::Value* st = snap.status.find("policy");
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(st->find("resource_group")->asString(), "test-a");
  EXPECT_EQ(st->find("resource_group_origin")->asString(), "config");
  EXPECT_EQ(st->find("errors")->size(), 1u);
  // No kernel.modules: an unknown result, listed with its message, not a violation.
  ASSERT_EQ(st->find("unknown")->size(), 1u);
  EXPECT_EQ(st->find("unknown")->asList()[0].find("message")->asString(), "kernel modules unknown");
  EXPECT_EQ(st->find("packs")->asList()[0].find("unknown")->asInt(), 1);

  // The per-pack details are optional ([policy] extra_metrics): absent by default.
  std::string plain = render(stage, snap);
  EXPECT_EQ(plain.find("fabricwatch_policy_rules_evaluated"), std::string::npos) << plain;
  EXPECT_EQ(plain.find("fabricwatch_policy_evaluation_duration_seconds"), std::string::npos);
  EXPECT_NE(plain.find("fabricwatch_policy_evaluation_errors{pack=\"demo\"} 1"), std::string::npos)
      << plain;
  EXPECT_NE(plain.find("fabricwatch_policy_unknown{pack=\"demo\",rule=\"modules\",severity="
                       "\"critical\",subject=\"node\"} 1"),
            std::string::npos)
      << plain;
  auto all = std::make_shared<core::MetricSelection>();
  for (const auto& o : stage.optionalMetrics()) all->add({o.family, "", ""});
  snap.metric_selection = all;

  std::string m = render(stage, snap);
  EXPECT_NE(m.find("fabricwatch_policy_violation{pack=\"demo\",rule=\"release\",severity="
                   "\"critical\",subject=\"node\"} 1"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("fabricwatch_policy_violation{pack=\"demo\",rule=\"env\",severity=\"warning\","
                   "subject=\"workload:u-9\"} 1"),
            std::string::npos);
  EXPECT_NE(m.find("fabricwatch_policy_rules_evaluated{pack=\"demo\",result=\"fail\"} 2"),
            std::string::npos);
  EXPECT_NE(m.find("fabricwatch_policy_rules_evaluated{pack=\"demo\",result=\"pass\"} 1"),
            std::string::npos);
  EXPECT_NE(m.find("fabricwatch_policy_rules_evaluated{pack=\"demo\",result=\"error\"} 1"),
            std::string::npos);
  EXPECT_NE(m.find("fabricwatch_policy_rules_evaluated{pack=\"demo\",result=\"unknown\"} 1"),
            std::string::npos);
  EXPECT_NE(m.find("fabricwatch_policy_evaluation_errors_total 1"), std::string::npos);
  EXPECT_NE(m.find("fabricwatch_policy_last_reload_successful 1"), std::string::npos);
  EXPECT_NE(
      m.find("fabricwatch_resource_group_info{resource_group=\"test-a\",origin=\"config\"} 1"),
      std::string::npos);
  EXPECT_NE(m.find("fabricwatch_policy_evaluation_duration_seconds{pack=\"demo\"}"),
            std::string::npos);

  // A clean node: the violation and unknown series disappear.
  snap.facts = yamlToValue(YAML::Load("kernel: {release: \"6.1\", nope: 1, modules: [ib_uverbs]}"));
  snap.violations.clear();
  stage.apply(snap);
  EXPECT_TRUE(snap.violations.empty());
  EXPECT_EQ(render(stage, snap).find("fabricwatch_policy_violation{"), std::string::npos);
  EXPECT_EQ(render(stage, snap).find("fabricwatch_policy_unknown{"), std::string::npos);
}

// serve's stage: violations carry their lifecycle; a fixed one stays served (recovering) for the
// hold, then clears into status["policy"]["cleared"]; without a tracker (check) none of it shows.
TEST(PolicyStageTest, TracksTheLifecycleOfViolationsInServe) {
  testing::TempDir dir;
  std::string file = dir.write("demo.yaml", kPack);
  auto store = std::make_shared<PackStore>(
      PackStoreOptions{{file}, /*shipped=*/false, {}, testing::factRoots()});
  ASSERT_TRUE(store->reload().empty());
  StageOptions opts;
  opts.group.config = "test-a";
  PolicyStage check_stage(store, opts);
  opts.tracker = std::make_shared<ViolationTracker>();
  opts.violation_hold = std::chrono::minutes(5);
  PolicyStage stage(store, opts);
  const auto t0 = std::chrono::system_clock::time_point(std::chrono::seconds(1'800'000'000));
  const std::string labels =
      "{pack=\"demo\",rule=\"release\",severity=\"critical\",subject=\"node\"}";

  core::Snapshot snap;
  snap.facts = yamlToValue(YAML::Load("kernel: {release: \"5.10\", nope: 1}"));
  core::Snapshot once = snap;
  check_stage.apply(once);
  ASSERT_EQ(once.violations.size(), 1u);
  EXPECT_EQ(once.violations[0].state, "");
  EXPECT_EQ(render(check_stage, once).find("began_timestamp"), std::string::npos);
  EXPECT_EQ(render(check_stage, once).find("cleared_total"), std::string::npos);

  snap.complete = true;  // every source has reported (before that a gone violation is forgotten)
  snap.published_at = t0;
  stage.apply(snap);
  ASSERT_EQ(snap.violations.size(), 1u);
  EXPECT_EQ(snap.violations[0].state, "active");
  std::string m = render(stage, snap);
  EXPECT_NE(m.find("fabricwatch_policy_violation_began_timestamp_seconds" + labels + " 1800000000"),
            std::string::npos)
      << m;
  EXPECT_EQ(m.find("fabricwatch_policy_violation_recovering{"), std::string::npos);
  EXPECT_NE(m.find("fabricwatch_policy_violations_cleared_total 0"), std::string::npos);

  snap.facts = yamlToValue(YAML::Load("kernel: {release: \"6.1\", nope: 1}"));
  snap.published_at = t0 + std::chrono::minutes(1);
  stage.apply(snap);
  ASSERT_EQ(snap.violations.size(), 1u);
  EXPECT_EQ(snap.violations[0].state, "recovering");
  m = render(stage, snap);
  EXPECT_NE(m.find("fabricwatch_policy_violation" + labels + " 1"), std::string::npos) << m;
  EXPECT_NE(m.find("fabricwatch_policy_violation_recovering" + labels + " 1"), std::string::npos);
  EXPECT_NE(m.find("fabricwatch_policy_violation_began_timestamp_seconds" + labels + " 1800000000"),
            std::string::npos);

  snap.published_at = t0 + std::chrono::minutes(6);
  stage.apply(snap);
  EXPECT_TRUE(snap.violations.empty());
  m = render(stage, snap);
  EXPECT_EQ(m.find("fabricwatch_policy_violation{"), std::string::npos) << m;
  EXPECT_NE(m.find("fabricwatch_policy_violations_cleared_total 1"), std::string::npos);
  const core::Value* st = snap.status.find("policy");
  ASSERT_NE(st, nullptr);
  ASSERT_EQ(st->find("cleared")->size(), 1u);
  const core::Value& c = st->find("cleared")->asList()[0];
  EXPECT_EQ(c.find("rule")->asString(), "release");
  EXPECT_EQ(c.find("began_at")->asString(), core::rfc3339(t0));
  EXPECT_EQ(c.find("recovering_since")->asString(), core::rfc3339(t0 + std::chrono::minutes(1)));
  EXPECT_EQ(c.find("cleared_at")->asString(), core::rfc3339(t0 + std::chrono::minutes(6)));
  EXPECT_EQ(st->find("violation_hold_seconds")->asDouble(), 300.0);
}

TEST(PolicyStageTest, ABadReloadKeepsTheLastGoodPacks) {
  testing::TempDir dir;
  std::string file = dir.write("demo.yaml", kPack);
  auto store = std::make_shared<PackStore>(PackStoreOptions{
      {dir.path()}, /*shipped=*/false, std::chrono::milliseconds(1), testing::factRoots()});
  ASSERT_TRUE(store->reload().empty());
  ASSERT_EQ(store->current()->size(), 1u);

  dir.write("demo.yaml",
            std::string(kPack) +
                "    - {id: release, severity: info, expression: 'true', remediation: x}\n");
  auto problems = store->reload();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].message.find("duplicate rule id"), std::string::npos);
  EXPECT_FALSE(store->lastReload().ok);
  EXPECT_EQ(store->current()->size(), 1u);
  EXPECT_EQ(store->current()->front().rules.size(), 4u);  // still the good one

  StageOptions opts;
  opts.group.config = "test-a";
  PolicyStage stage(store, opts);
  core::Snapshot snap;
  snap.facts = yamlToValue(YAML::Load("kernel: {release: \"5\"}"));
  stage.apply(snap);
  EXPECT_FALSE(snap.status.find("policy")->find("last_reload_successful")->asBool());
  EXPECT_NE(render(stage, snap).find("fabricwatch_policy_last_reload_successful 0"),
            std::string::npos);

  // Fixing the file is picked up by change detection on the next apply.
  dir.write("demo.yaml",
            std::string(kPack) +
                "    - {id: extra, severity: info, expression: 'true', remediation: x}\n");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (store->current()->front().rules.size() != 5 && std::chrono::steady_clock::now() < deadline)
    stage.apply(snap);
  EXPECT_EQ(store->current()->front().rules.size(), 5u);
  EXPECT_TRUE(store->lastReload().ok);
}

TEST(PolicyStageTest, ResourceGroupFromTheLabelFileOrDerived) {
  testing::TempDir dir;
  auto store = std::make_shared<PackStore>(PackStoreOptions{{}, false, {}, testing::factRoots()});
  store->reload();
  StageOptions opts;
  opts.resource_group_file = dir.write("labels", "fabricwatch.io/resource-group=\"ib-ndr\"\n");
  PolicyStage stage(store, opts);
  core::Snapshot snap;
  stage.apply(snap);
  EXPECT_EQ(snap.status.find("policy")->find("resource_group")->asString(), "ib-ndr");
  EXPECT_EQ(snap.status.find("policy")->find("resource_group_origin")->asString(), "label-file");
  std::filesystem::remove(opts.resource_group_file);
  stage.apply(snap);
  EXPECT_EQ(snap.status.find("policy")->find("resource_group")->asString(), "none");
  EXPECT_EQ(snap.status.find("policy")->find("resource_group_origin")->asString(), "derived");
}

}  // namespace
}  // namespace fabricwatch::policy
