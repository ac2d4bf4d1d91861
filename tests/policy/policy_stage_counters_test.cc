// The policy stage with the counters' history (serve): the shipped rdma-counters pack judges an
// increase between collections, a rate against its bound per resource group, and without
// history (check) says that rates need two collections.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/snapshot.h"
#include "policy/policy_stage.h"
#include "tests/support/paths.h"
#include "tests/support/registry.h"
#include "tests/support/temp_dir.h"

namespace fabricwatch::policy {
namespace {

using std::chrono::seconds;
const auto kStart = std::chrono::system_clock::time_point{} + std::chrono::hours(24 * 365 * 56);

// A snapshot after a collection of the rdma source that returned at `at`: one InfiniBand port.
core::Snapshot collection(std::chrono::system_clock::time_point at, int64_t link_downed,
                          int64_t symbol_error) {
  core::Snapshot snap;
  snap.published_at = at;
  snap.complete = true;
  core::SourceStatus rdma;
  rdma.name = "rdma";
  rdma.ran = rdma.success = true;
  rdma.last_run = at;
  snap.sources.push_back(rdma);
  core::Value port =
      core::Value::map({{"port", 1},
                        {"state", "ACTIVE"},
                        {"link_layer", "InfiniBand"},
                        {"counters", core::Value::map({{"link_downed", link_downed},
                                                       {"symbol_error", symbol_error},
                                                       {"link_error_recovery", 0}})}});
  core::Value ports = core::Value::list();
  ports.push(std::move(port));
  core::Value devices = core::Value::list();
  devices.push(core::Value::map({{"name", "mlx5_0"}, {"ports", std::move(ports)}}));
  snap.facts["rdma"] = core::Value::map({{"devices", std::move(devices)}});
  return snap;
}

const core::Violation* findViolation(const core::Snapshot& s, const std::string& rule) {
  for (const auto& v : s.violations)
    if (v.pack == "rdma-counters" && v.rule == rule) return &v;
  return nullptr;
}

std::vector<std::string> unknownRules(const core::Snapshot& s) {
  std::vector<std::string> out;
  for (const auto& u : s.status.findPath("policy.unknown")->asList()) {
    if (u.find("pack")->asString() != "rdma-counters") continue;
    out.push_back(u.find("rule")->asString() + ": " + u.find("message")->asString());
  }
  return out;
}

std::shared_ptr<PackStore> shippedPacks(std::vector<std::string> paths = {}) {
  auto store = std::make_shared<PackStore>(
      PackStoreOptions{std::move(paths), /*shipped=*/true, {}, testing::factRoots()});
  EXPECT_TRUE(store->reload().empty());
  return store;
}

TEST(PolicyStageCountersTest, AFatalCounterThatRoseBetweenCollectionsIsCritical) {
  StageOptions opts;
  opts.group.config = "ib-ndr";
  opts.counters = std::make_shared<CounterHistory>();
  PolicyStage stage(shippedPacks(), opts);

  // Totals since boot, however large, are no increase: the first collection is clean.
  auto first = collection(kStart, 40, 60000);
  stage.apply(first);
  EXPECT_EQ(findViolation(first, "rdma-fatal-counter-increase"), nullptr);
  EXPECT_TRUE(unknownRules(first).empty());
  const core::Value* collections = first.facts.findPath("rdma.counter_history.collections");
  ASSERT_NE(collections, nullptr);
  EXPECT_EQ(collections->asInt(), 1);

  // Another source's run republishes the same rdma collection: still nothing rose.
  auto republished = collection(kStart, 40, 60000);
  stage.apply(republished);
  EXPECT_EQ(findViolation(republished, "rdma-fatal-counter-increase"), nullptr);

  auto second = collection(kStart + seconds(30), 42, 60000);
  stage.apply(second);
  const core::Violation* v = findViolation(second, "rdma-fatal-counter-increase");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->severity, "critical");
  EXPECT_EQ(v->message, "fatal RDMA counters rose in the last 30s: mlx5_0 port 1 link_downed +2");
  const core::Value& device = second.facts.findPath("rdma.devices")->asList()[0];
  const core::Value* increase =
      device.find("ports")->asList()[0].findPath("counters_increase.link_downed");
  ASSERT_NE(increase, nullptr);
  EXPECT_EQ(increase->asInt(), 2);
  EXPECT_EQ(findViolation(second, "rdma-symbol-error-rate"), nullptr);

  auto third = collection(kStart + seconds(60), 42, 60011);
  stage.apply(third);
  // Within the window the link_downed increase is still there; 11 symbol errors in 60 s are
  // 660 an hour.
  EXPECT_NE(findViolation(third, "rdma-fatal-counter-increase"), nullptr);
  const core::Violation* ber = findViolation(third, "rdma-symbol-error-rate");
  ASSERT_NE(ber, nullptr);
  EXPECT_EQ(ber->message,
            "symbol errors above 120/h (the IBTA bit error rate bound of 10^-12) over the last "
            "60s: mlx5_0 port 1 660.0/h");
}

TEST(PolicyStageCountersTest, WithoutHistoryRatesAreUnknownNotJudged) {
  StageOptions opts;  // check: no history
  opts.group.config = "ib-ndr";
  PolicyStage stage(shippedPacks(), opts);
  auto snap = collection(kStart, 40, 60000);
  stage.apply(snap);
  EXPECT_EQ(findViolation(snap, "rdma-fatal-counter-increase"), nullptr);
  EXPECT_EQ(snap.facts.findPath("rdma.counter_history"), nullptr);
  const std::string why =
      "counter rates need two collections or a running daemon (fabricwatch serve); one "
      "collection has only totals since boot";
  EXPECT_EQ(unknownRules(snap),
            (std::vector<std::string>{"rdma-fatal-counter-increase: " + why,
                                      "rdma-symbol-error-rate: " + why,
                                      "rdma-link-error-recovery-rate: " + why}));
}

// A copy of the pack, its name kept, sets a bound for one group; the others keep the default.
TEST(PolicyStageCountersTest, ThresholdsPerResourceGroup) {
  std::ifstream in(testing::sourceDir() + "/config/policies/rdma-counters.yaml");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string pack = ss.str();
  const std::string from = "    - name: counter_thresholds_by_group\n      expression: '{}'\n";
  size_t at = pack.find(from);
  ASSERT_NE(at, std::string::npos);
  pack.replace(at, from.size(),
               "    - name: counter_thresholds_by_group\n"
               "      expression: '{\"ib-lab\": {\"symbol_error_per_hour\": 1000, "
               "\"fatal_increase\": 5}}'\n");
  testing::TempDir dir;
  std::string file = dir.write("rdma-counters.yaml", pack);
  for (const char* group : {"ib-lab", "ib-ndr"}) {
    StageOptions opts;
    opts.group.config = group;
    opts.counters = std::make_shared<CounterHistory>();
    PolicyStage stage(shippedPacks({file}), opts);
    auto a = collection(kStart, 0, 0);
    stage.apply(a);
    auto b = collection(kStart + seconds(60), 2, 11);  // 660 symbol errors an hour, 2 link downs
    stage.apply(b);
    bool lab = std::string(group) == "ib-lab";
    EXPECT_EQ(findViolation(b, "rdma-symbol-error-rate") == nullptr, lab) << group;
    EXPECT_EQ(findViolation(b, "rdma-fatal-counter-increase") == nullptr, lab) << group;
  }
}

}  // namespace
}  // namespace fabricwatch::policy
