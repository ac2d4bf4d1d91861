// fleet/diagnosis: the localisation rules' answers -> culprits, evidence, alert state, words.
#include "fleet/diagnosis.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

namespace fabricwatch::fleet {
namespace {

Sample sample(std::map<std::string, std::string> labels, double value) {
  return Sample{std::move(labels), value};
}

using Answers = std::vector<std::pair<std::string, std::vector<Sample>>>;

Answers fleetAnswers() {
  return {
      {"node_unreachable", {sample({{"cluster", "c"}, {"peer_node", "n4"}}, 12)}},
      {"node_unreachable:whole", {sample({{"cluster", "c"}, {"peer_node", "n4"}}, 13)}},
      {"node_rail", {sample({{"cluster", "c"}, {"peer_node", "n2"}, {"rail", "3"}}, 7)}},
      {"node_rail:whole", {sample({{"cluster", "c"}, {"peer_node", "n2"}, {"rail", "3"}}, 8)}},
      {"pair",
       {sample({{"cluster", "c"},
                {"job", "fw"},
                {"instance", "n1:19736"},
                {"peer", "10.0.0.9:19737"},
                {"peer_node", "n9"}},
               1)}},
      {"alerts",
       {sample({{"alertname", "FabricwatchNodeUnreachable"},
                {"alertstate", "firing"},
                {"cluster", "c"},
                {"peer_node", "n4"}},
               1),
        // Another node's alert does not lend its state.
        sample({{"alertname", "FabricwatchNodeRailUnreachable"},
                {"alertstate", "firing"},
                {"cluster", "c"},
                {"peer_node", "n2"},
                {"rail", "1"}},
               1)}},
      {"alerts_since",
       {sample({{"alertname", "FabricwatchNodeUnreachable"}, {"cluster", "c"}, {"peer_node", "n4"}},
               1733220240)}},
  };
}

TEST(DiagnosisTest, EachSuspectGetsItsEvidenceAndItsOwnAlertsState) {
  auto s = suspectsFrom(fleetAnswers());
  ASSERT_EQ(s.size(), 3u);
  // Critical first (a rail), then the levels in order.
  EXPECT_EQ(s[0].level, "node_rail");
  EXPECT_EQ(s[0].summary, "7 of 8 probers fail to reach n2 on rail 3");
  EXPECT_EQ(s[0].alert_state, "");
  EXPECT_FALSE(s[0].since);
  EXPECT_EQ(s[1].level, "node_unreachable");
  EXPECT_EQ(s[1].summary, "12 of 13 probers fail to reach n4");
  EXPECT_EQ(s[1].alert_state, "firing");
  ASSERT_TRUE(s[1].since);
  EXPECT_EQ(*s[1].since, 1733220240);
  EXPECT_EQ(s[2].level, "pair");
  EXPECT_EQ(s[2].summary,
            "n1:19736 cannot reach n9 (10.0.0.9:19737), while both reach their other peers");
  EXPECT_FALSE(s[2].witnesses);
}

TEST(DiagnosisTest, TextAndJsonSayTheSame) {
  Diagnosis d;
  d.prometheus = "https://prom:9090";
  d.time = 1733230000;
  d.nodes = 20;
  d.suspects = suspectsFrom(fleetAnswers());
  std::string text = renderText(d);
  EXPECT_NE(text.find("fabricwatch diagnose: 3 suspects among 20 nodes (https://prom:9090, "
                      "2024-12-03T12:46:40Z)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("alert FabricwatchNodeUnreachable: firing since 2024-12-03T10:04:00Z"),
            std::string::npos)
      << text;
  auto j = nlohmann::json::parse(renderJson(d));
  ASSERT_EQ(j["suspects"].size(), 3u);
  EXPECT_EQ(j["suspects"][1]["node"], "n4");
  EXPECT_EQ(j["suspects"][1]["failing"], 12);
  EXPECT_EQ(j["suspects"][1]["witnesses"], 13);
  EXPECT_EQ(j["suspects"][1]["since"], "2024-12-03T10:04:00Z");
  EXPECT_FALSE(j["suspects"][2].contains("witnesses"));
  d.suspects.clear();
  EXPECT_EQ(renderText(d).rfind("fabricwatch diagnose: nothing suspect among 20 nodes", 0), 0u);
}

// prometheus_answer_fuzz found it: an ALERTS_FOR_STATE value of NaN (any series may hold one)
// was cast to a time_t, which is undefined behaviour.
TEST(DiagnosisTest, ATimeNoClockGivesIsUnknown) {
  Answers a = fleetAnswers();
  for (double bad : {std::nan(""), 1e300, -5.0}) {
    a.back().second[0].value = bad;
    Diagnosis d;
    d.time = bad;
    d.nodes = 1;
    d.suspects = suspectsFrom(a);
    EXPECT_NE(renderText(d).find("(, unknown)"), std::string::npos) << bad;
    EXPECT_NE(renderText(d).find("firing since unknown"), std::string::npos) << bad;
    EXPECT_EQ(nlohmann::json::parse(renderJson(d))["suspects"][1]["since"], "unknown");
  }
}

TEST(DiagnosisTest, ASwitchAndARailPlaneComeFirst) {
  Answers a = fleetAnswers();
  a.push_back({"switch", {sample({{"cluster", "c"}, {"leaf", "leaf-1"}}, 5)}});
  a.push_back({"switch:whole", {sample({{"cluster", "c"}, {"leaf", "leaf-1"}}, 6)}});
  a.push_back({"rail_plane", {sample({{"cluster", "c"}, {"rail", "1"}}, 0.754)}});
  auto s = suspectsFrom(a);
  ASSERT_EQ(s.size(), 5u);
  EXPECT_EQ(s[0].summary, "5 of 6 nodes below leaf leaf-1 are unreachable or cut off");
  EXPECT_EQ(s[1].summary, "rail 1 fails on 75% of the cluster's measured pairs");
  Diagnosis d;
  d.nodes = 12;
  d.suspects = s;
  EXPECT_NE(renderText(d).find("critical  switch  leaf leaf-1  (cluster c)"), std::string::npos)
      << renderText(d);
  EXPECT_EQ(nlohmann::json::parse(renderJson(d))["suspects"][0]["leaf"], "leaf-1");
}

TEST(DiagnosisTest, ARailSwitchNamesItsLeafAndRailAfterTheLeafSwitch) {
  Answers a = fleetAnswers();
  a.push_back({"rail_switch",
               {sample({{"cluster", "c"}, {"leaf", "leaf-2"}, {"rail", "3"}}, 5),
                sample({{"cluster", "c"}, {"leaf", "leaf-1"}, {"rail", "3"}}, 4)}});
  a.push_back({"rail_switch:whole",
               {sample({{"cluster", "c"}, {"leaf", "leaf-2"}, {"rail", "3"}}, 6),
                sample({{"cluster", "c"}, {"leaf", "leaf-1"}, {"rail", "2"}}, 6)}});
  a.push_back({"switch", {sample({{"cluster", "c"}, {"leaf", "leaf-9"}}, 5)}});
  a.push_back({"alerts",
               {sample({{"alertname", "FabricwatchRailSwitchSuspect"},
                        {"alertstate", "firing"},
                        {"cluster", "c"},
                        {"leaf", "leaf-2"},
                        {"rail", "3"}},
                       1)}});
  auto s = suspectsFrom(a);
  ASSERT_GE(s.size(), 3u);
  EXPECT_EQ(s[0].level, "switch");
  EXPECT_EQ(s[1].level, "rail_switch");
  EXPECT_EQ(s[2].level, "rail_switch");
  // The evidence's whole and the alert match on leaf and rail, not on the leaf alone.
  const Suspect& two = s[1].leaf == "leaf-2" ? s[1] : s[2];
  const Suspect& one = s[1].leaf == "leaf-2" ? s[2] : s[1];
  EXPECT_EQ(two.summary,
            "rail 3 reaches no peer on 5 of 6 nodes below leaf leaf-2 that measure it, and works "
            "elsewhere");
  EXPECT_EQ(two.alert_state, "firing");
  EXPECT_FALSE(one.witnesses) << "leaf-1's whole is for rail 2";
  EXPECT_EQ(one.alert_state, "");
  Diagnosis d;
  d.nodes = 12;
  d.suspects = s;
  EXPECT_NE(renderText(d).find("critical  rail_switch  leaf leaf-2 rail 3  (cluster c)"),
            std::string::npos)
      << renderText(d);
}

TEST(DiagnosisTest, ASwitchIsNamedByTheSwitchItsNodesReportByLldp) {
  Answers a = fleetAnswers();
  a.push_back({"rail_switch", {sample({{"cluster", "c"}, {"leaf", "leaf-2"}, {"rail", "1"}}, 5)}});
  a.push_back(
      {"rail_switch:whole", {sample({{"cluster", "c"}, {"leaf", "leaf-2"}, {"rail", "1"}}, 6)}});
  // The most reported name wins; a tie goes to the first by name; another rail lends nothing.
  a.push_back(
      {"rail_switch:lldp",
       {sample({{"cluster", "c"}, {"leaf", "leaf-2"}, {"rail", "1"}, {"switch", "sw-x"}}, 1),
        sample({{"cluster", "c"}, {"leaf", "leaf-2"}, {"rail", "1"}, {"switch", "sw-r1"}}, 5),
        sample({{"cluster", "c"}, {"leaf", "leaf-2"}, {"rail", "0"}, {"switch", "sw-r0"}}, 6)}});
  a.push_back({"switch", {sample({{"cluster", "c"}, {"leaf", "leaf-3"}}, 4)}});
  a.push_back({"switch:lldp",
               {sample({{"cluster", "c"}, {"leaf", "leaf-3"}, {"switch", "sw-b"}}, 3),
                sample({{"cluster", "c"}, {"leaf", "leaf-3"}, {"switch", "sw-a"}}, 3)}});
  auto s = suspectsFrom(a);
  ASSERT_GE(s.size(), 2u);
  EXPECT_EQ(s[0].level, "switch");
  EXPECT_EQ(s[0].switch_name, "sw-a");
  EXPECT_EQ(s[0].summary,
            "switch sw-a of leaf leaf-3: 4 nodes below leaf leaf-3 are unreachable or cut off");
  EXPECT_EQ(s[1].level, "rail_switch");
  EXPECT_EQ(s[1].switch_name, "sw-r1");
  EXPECT_EQ(s[1].switch_nodes, 5);
  EXPECT_EQ(s[1].summary,
            "rail 1 switch sw-r1 of leaf leaf-2: rail 1 reaches no peer on 5 of 6 nodes below "
            "leaf leaf-2 that measure it, and works elsewhere");
  EXPECT_NE(s[1].advice.find("the switch of rail 1 for leaf leaf-2, sw-r1 by LLDP (in a"),
            std::string::npos)
      << s[1].advice;
  Diagnosis d;
  d.nodes = 12;
  d.suspects = s;
  EXPECT_NE(
      renderText(d).find("critical  rail_switch  leaf leaf-2 rail 1 switch sw-r1  (cluster c)"),
      std::string::npos)
      << renderText(d);
  auto j = nlohmann::json::parse(renderJson(d))["suspects"][1];
  EXPECT_EQ(j["switch"], "sw-r1");
  EXPECT_EQ(j["switch_nodes"], 5);
  // Without LLDP answers a switch has no name, and the words say nothing of one.
  auto plain = suspectsFrom(fleetAnswers());
  for (const auto& x : plain) EXPECT_TRUE(x.switch_name.empty());
  EXPECT_FALSE(nlohmann::json::parse(renderJson(d))["suspects"][2].contains("switch"));
}

TEST(DiagnosisTest, TheSwitchLevelsAskForTheirLldpNames) {
  bool rail = false, leaf = false;
  for (const auto& q : diagnosisQueries("c")) {
    if (q.name == "rail_switch:lldp") {
      rail = true;
      EXPECT_EQ(q.promql,
                "cluster_leaf_rail_switch:fabricwatch_topology_nodes:max1h{cluster=\"c\"} and on "
                "(cluster, leaf, rail) "
                "cluster_leaf_rail:fabricwatch_localisation_rail_switch:suspect{cluster=\"c\"}");
    }
    if (q.name == "switch:lldp") leaf = true;
  }
  EXPECT_TRUE(rail);
  EXPECT_TRUE(leaf);
}

TEST(DiagnosisTest, ARailLowInBandwidthNamesItsNodeAndRailAfterTheSlowRail) {
  Answers a = fleetAnswers();
  // The alert carries the node's job and instance too; it matches on cluster, node and rail.
  a.push_back({"node_rail_bandwidth",
               {sample({{"cluster", "c"}, {"peer_node", "n9"}, {"rail", "4"}}, 6),
                sample({{"cluster", "c"}, {"peer_node", "n9"}, {"rail", "5"}}, 3)}});
  a.push_back({"node_rail_bandwidth:whole",
               {sample({{"cluster", "c"}, {"peer_node", "n9"}, {"rail", "4"}}, 7)}});
  a.push_back(
      {"node_rail_slow", {sample({{"cluster", "c"}, {"peer_node", "n8"}, {"rail", "1"}}, 5)}});
  a.push_back({"alerts",
               {sample({{"alertname", "FabricwatchNodeRailBandwidthLow"},
                        {"alertstate", "pending"},
                        {"cluster", "c"},
                        {"job", "fabricwatch"},
                        {"instance", "n9:19736"},
                        {"peer_node", "n9"},
                        {"rail", "4"}},
                       1)}});
  auto s = suspectsFrom(a);
  std::vector<const Suspect*> bw;
  size_t slow_at = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i].level == "node_rail_bandwidth") bw.push_back(&s[i]);
    if (s[i].level == "node_rail_slow") slow_at = i;
  }
  ASSERT_EQ(bw.size(), 2u);
  EXPECT_GT(bw[0] - s.data(), static_cast<long>(slow_at)) << "a warning after the slow rail";
  EXPECT_EQ(bw[0]->alert, "FabricwatchNodeRailBandwidthLow");
  EXPECT_EQ(bw[0]->severity, "warning");
  EXPECT_EQ(bw[0]->rail, "4");
  EXPECT_EQ(bw[0]->summary,
            "6 of 7 probers measure n9 on rail 4 at under 60% of the rail's best bandwidth");
  EXPECT_NE(bw[0]->advice.find("PCIe link"), std::string::npos);
  EXPECT_EQ(bw[0]->alert_state, "pending");
  EXPECT_EQ(bw[1]->summary,
            "3 probers measure n9 on rail 5 at under 60% of the rail's best bandwidth");
  EXPECT_FALSE(bw[1]->witnesses) << "rail 5 has no whole";
  EXPECT_EQ(bw[1]->alert_state, "") << "the alert is rail 4's";
  bool asked = false;
  for (const auto& q : diagnosisQueries("c"))
    if (q.promql.find("FabricwatchNodeRailBandwidthLow") != std::string::npos) asked = true;
  EXPECT_TRUE(asked) << "its alert's state is asked for";
}

TEST(DiagnosisTest, AClusterIsSelectedAsAPromqlString) {
  auto q = diagnosisQueries("a\"b\\c");
  ASSERT_FALSE(q.empty());
  EXPECT_EQ(q[0].promql,
            "cluster_leaf:fabricwatch_localisation_switch:suspect{cluster=\"a\\\"b\\\\c\"}");
  EXPECT_EQ(diagnosisQueries("")[0].promql,
            "cluster_leaf:fabricwatch_localisation_switch:suspect{}");
}

}  // namespace
}  // namespace fabricwatch::fleet
