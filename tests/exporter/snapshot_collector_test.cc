// A scrape renders one snapshot: the peer and policy metrics come from what the snapshot
// captured when it was built, not from the live prober and pack store, which move on.
#include "exporter/snapshot_collector.h"

#include <gtest/gtest.h>

#include "core/scheduler.h"
#include "core/text_format.h"
#include "exporter/api.h"
#include "policy/policy_stage.h"
#include "probes/kinds/tcp/tcp_kind.h"
#include "probes/mesh/membership.h"
#include "probes/mesh/peer_prober.h"
#include "probes/mesh/peer_source.h"
#include "tests/support/registry.h"
#include "tests/support/temp_dir.h"

namespace fabricwatch::exporter {
namespace {

using namespace std::chrono_literals;

const char* kPack = R"(apiVersion: fabricwatch.io/v1
kind: PolicyPack
metadata: {name: demo}
spec:
  rules:
    - {id: always, severity: info, expression: 'true', remediation: none}
)";

std::string text(const core::MetricFamilies& fams) { return core::textFormat(fams); }

std::shared_ptr<probes::PeerProber> makeProber() {
  std::vector<std::unique_ptr<probes::MembershipSource>> sources;
  sources.push_back(std::make_unique<probes::StaticSource>(std::vector<std::string>{}));
  probes::ProberOptions o;
  o.node_name = "node-a";
  o.secret = "snapshot-collector-test-secret";
  o.channel.listen_address = "127.0.0.1:0";
  o.interval = 1h;  // rounds are driven by the test
  return std::make_shared<probes::PeerProber>(
      o, std::make_unique<probes::Membership>(std::move(sources), 0ms),
      std::vector<std::shared_ptr<probes::ProbeKind>>{
          probes::tcp::makeTcpKind({o.secret, o.node_name, 3, 300ms, 300ms})});
}

TEST(RenderSnapshotTest, PeerAndPolicyMetricsComeFromTheSnapshotNotLiveObjects) {
  auto prober = makeProber();
  ASSERT_TRUE(prober->start());
  prober->runRound(1);

  testing::TempDir dir;
  std::string pack = dir.write("demo.yaml", kPack);
  auto packs = std::make_shared<policy::PackStore>(
      policy::PackStoreOptions{{pack}, false, {}, testing::factRoots()});
  ASSERT_TRUE(packs->reload().empty());

  core::SnapshotStore store;
  core::Scheduler sched(store, core::CollectContext{}, 0);
  sched.addSource(std::make_shared<probes::PeerSource>(prober, "node-a"), {});
  sched.addStage(std::make_shared<policy::PolicyStage>(packs, policy::StageOptions{}));
  sched.runOnce();
  auto snap = store.load();
  ASSERT_NE(snap, nullptr);

  // The live objects move on after the snapshot was published: another round, a bad reload.
  prober->runRound(2);
  dir.write("demo.yaml", "kind: nonsense\n");
  ASSERT_FALSE(packs->reload().empty());

  std::string m = text(renderSnapshot(*snap));
  EXPECT_NE(m.find("fabricwatch_peer_rounds_total 1\n"), std::string::npos) << m;
  EXPECT_NE(m.find("fabricwatch_policy_last_reload_successful 1\n"), std::string::npos) << m;
  EXPECT_NE(m.find("fabricwatch_policy_packs_loaded 1\n"), std::string::npos) << m;
  // The next snapshot sees what the live objects say now.
  sched.runOnce();
  std::string next = text(renderSnapshot(*store.load()));
  EXPECT_NE(next.find("fabricwatch_peer_rounds_total 2\n"), std::string::npos) << next;
  EXPECT_NE(next.find("fabricwatch_policy_last_reload_successful 0\n"), std::string::npos);
  prober->stop();
}

// /api/v1/peers answers from the snapshot too: what the peer source captured with the facts,
// the same round the metrics and facts of that snapshot describe, not the live prober's.
TEST(RenderSnapshotTest, PeersApiComesFromTheSnapshot) {
  auto prober = makeProber();
  ASSERT_TRUE(prober->start());
  prober->runRound(1);
  core::SnapshotStore store;
  core::Scheduler sched(store, core::CollectContext{}, 0);
  sched.addSource(std::make_shared<probes::PeerSource>(prober, "node-a"), {});
  sched.runOnce();
  auto snap = store.load();
  prober->runRound(2);
  ASSERT_EQ(prober->status().find("round")->asInt(), 2);
  auto r = peersJson(snap.get());
  EXPECT_EQ(r.status, 200);
  EXPECT_NE(r.body.find("\"round\":1"), std::string::npos) << r.body;
  EXPECT_EQ(snap->facts.findPath("probes.mesh.round")->asInt(), 1);
  EXPECT_EQ(peersJson(nullptr).status, 503);
  prober->stop();

  // With the mesh off, the peer source captures the disabled document with the node's name.
  core::SnapshotStore off_store;
  core::Scheduler off(off_store, core::CollectContext{}, 0);
  off.addSource(std::make_shared<probes::PeerSource>(nullptr, "lonely"), {});
  off.runOnce();
  auto body = peersJson(off_store.load().get()).body;
  EXPECT_NE(body.find("\"enabled\":false"), std::string::npos) << body;
  EXPECT_NE(body.find("\"node\":\"lonely\""), std::string::npos) << body;
}

}  // namespace
}  // namespace fabricwatch::exporter
