// The fabric kind's rail series stay within their stated bound (docs/peers.md, "Series bound"):
// 7 per rail, 2 per (peer, rail) for at most peers_per_round peers of the latest run and 1 per
// (peer, rail) for at most 2 peers of the latest bandwidth round, so at 8 rails and the default
// 8 peers per round at most 200, however many peers a run re-probed or a round measured.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "probes/kinds/fabric/fabric_kind.h"

namespace fabricwatch::probes::fabric {
namespace {

// A view of two runs of `peers` peers each (the latest one with failures and a missing rail),
// 8 rails, and a bandwidth round over every (peer, rail).
KindView railView(int peers, uint32_t rails, uint32_t rail_peers) {
  auto t = std::make_shared<FabricTotals>();
  t->rail_peers = rail_peers;
  for (uint32_t r = 0; r < rails; ++r) {
    t->state.rails.push_back({r, "mlx5_" + std::to_string(r), "", true, "", 0, {}, ""});
    t->rails[r].timeout = r;
  }
  KindView v;
  for (uint64_t round : {41u, 42u})
    for (int p = 0; p < peers; ++p) {
      auto res = std::make_shared<FabricResult>();
      PeerInfo peer{
          "10.0.0." + std::to_string(p) + ":19737", "node-" + std::to_string(p), "", 1, round, {}};
      for (uint32_t r = 0; r < rails; ++r) {
        RailResult rr;
        rr.rail = r;
        if (p % 3 == 0 && r == 5) {
          rr.failure = "timeout";
        } else if (p % 4 == 1 && r == rails - 1) {
          rr.missing = true;
        } else {
          rr.latency = LatencyStats{50, 1e-6 * (r + 1), 2e-6 * (r + 1), 3e-6, 4e-6, 2e-6};
          t->bandwidth.push_back({peer, r, 1e10 - p, 32u << 20});
        }
        res->rails.push_back(rr);
      }
      v.results.push_back({peer, res});
    }
  v.totals = t;
  return v;
}

size_t railSeries(const core::MetricFamilies& fams) {
  size_t n = 0;
  for (const auto& f : fams)
    if (f.name.find("_rail_") != std::string::npos) n += f.metric.size();
  return n;
}

const prometheus::MetricFamily* family(const core::MetricFamilies& fams, const std::string& name) {
  for (const auto& f : fams)
    if (f.name == name) return &f;
  return nullptr;
}

TEST(FabricRenderTest, RailSeriesStayWithinSevenAPerRailAndTwoPerPeerAndRail) {
  // 16 peers in the latest run (8 selected and 8 failing ones re-probed), and bandwidth to 14
  // of them on most rails: still 8 peers' and 2 bandwidth peers' worth.
  core::MetricFamilies fams;
  fabricMetrics(railView(16, 8, 8), fams);
  EXPECT_LE(railSeries(fams), 200u);
  // 56 per rail (info 8, latency 8, missing 8, failures 32), 118 per (peer, rail): the 6
  // failing peers (88: rail 5 up only, peer 9 also lacks rail 7) and peers 1 (14) and 2 (16),
  // and 16 bandwidth pairs (2 peers on each of the 8 rails).
  EXPECT_EQ(railSeries(fams), 190u);
  // The peers with a failing rail come first: every failing (peer, rail) has its series.
  const auto* up = family(fams, "fabricwatch_probe_fabric_peer_rail_up");
  ASSERT_TRUE(up);
  size_t down = 0;
  for (const auto& m : up->metric) down += m.gauge.value == 0 ? 1 : 0;
  EXPECT_EQ(down, 6u);  // peers 0, 3, 6, 9, 12, 15 on rail 5
  // Per-rail aggregates over every peer of the run, not only those with series.
  const auto* missing = family(fams, "fabricwatch_probe_fabric_rail_peers_missing");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->metric.back().gauge.value, 4);  // peers 1, 5, 9, 13 lack rail 7
  // Per peer, one series each as before rails: the lowest bandwidth over its rails.
  EXPECT_EQ(family(fams, "fabricwatch_probe_fabric_peer_bandwidth_bytes_per_second")->metric.size(),
            16u);
  // Only the highest p99 per rail: the median is the pair series'.
  const auto* rl = family(fams, "fabricwatch_probe_fabric_rail_latency_seconds");
  ASSERT_TRUE(rl);
  ASSERT_EQ(rl->metric.size(), 8u);
  EXPECT_DOUBLE_EQ(rl->metric[0].gauge.value, 3e-6);
  // Per (peer, rail) bandwidth: the first 2 peers measured on each rail, with their peer_node,
  // so that a rule can tell the node whose rail is slow (docs/fleet.md).
  const auto* bw = family(fams, "fabricwatch_probe_fabric_peer_rail_bandwidth_bytes_per_second");
  ASSERT_TRUE(bw);
  ASSERT_EQ(bw->metric.size(), 16u);
  std::map<std::string, std::set<std::string>> nodes;  // rail -> peer_node
  for (const auto& m : bw->metric) {
    std::map<std::string, std::string> l;
    for (const auto& lp : m.label) l[lp.name] = lp.value;
    ASSERT_EQ(l.size(), 3u);
    nodes[l["rail"]].insert(l["peer_node"]);
    EXPECT_GT(m.gauge.value, 9e9);
  }
  ASSERT_EQ(nodes.size(), 8u);
  for (const auto& [rail, n] : nodes) EXPECT_EQ(n.size(), 2u) << rail;
  EXPECT_EQ(nodes["5"], (std::set<std::string>{"node-1", "node-2"}));  // node-0 failed rail 5
  EXPECT_EQ(nodes["0"], (std::set<std::string>{"node-0", "node-1"}));
  EXPECT_EQ(family(fams, "fabricwatch_probe_fabric_rail_bandwidth_min_bytes_per_second"), nullptr);
  // One rail (the tcp default): 7 + 2 x 8 + 2.
  core::MetricFamilies one;
  fabricMetrics(railView(8, 1, 8), one);
  EXPECT_LE(railSeries(one), 25u);
}

}  // namespace
}  // namespace fabricwatch::probes::fabric
