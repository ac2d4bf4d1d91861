// The status page as a pure rendering of one snapshot: the verdict, grouping, escaping, and
// the generic rendering of probe kinds the page has never heard of.
#include "exporter/status_page.h"

#include <gtest/gtest.h>

#include "core/value_format.h"
#include "exporter/html.h"

namespace fabricwatch::exporter {
namespace {

using core::Value;

Value listOf(Value v) {
  Value l = Value::list();
  l.push(std::move(v));
  return l;
}

core::Snapshot baseSnapshot() {
  core::Snapshot s;
  s.generation = 7;
  s.complete = true;
  s.facts["node"] = Value::map({{"name", "gpu-node-17"}});
  core::SourceStatus ok;
  ok.name = "rdma";
  ok.ran = true;
  ok.success = true;
  ok.runs_total = 3;
  s.sources.push_back(ok);
  s.status["policy"] = Value::map({{"resource_group", "efa-p5"},
                                   {"resource_group_origin", "env"},
                                   {"last_reload_successful", true},
                                   {"packs", Value::list()},
                                   {"errors", Value::list()}});
  return s;
}

core::Violation violation(std::string severity, std::string rule, std::string remediation) {
  core::Violation v;
  v.pack = "pack";
  v.message = "message of " + rule;
  v.rule = std::move(rule);
  v.severity = std::move(severity);
  v.subject = "node";
  v.remediation = std::move(remediation);
  v.metric_subject = "node";
  return v;
}

std::string page(const core::Snapshot& s) { return statusPage(&s).body; }

TEST(HtmlEscapeTest, EscapesMarkupAndKeepsUtf8Valid) {
  EXPECT_EQ(htmlEscape("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(htmlEscape("µs ✓ 𝄞"), "µs ✓ 𝄞");
  // A stray continuation byte, a truncated sequence, an overlong '/' and a surrogate.
  EXPECT_EQ(htmlEscape("a\x80z"), "a\xEF\xBF\xBDz");
  EXPECT_EQ(htmlEscape("\xE2\x9C"), "\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(htmlEscape("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(htmlEscape("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(htmlEscape(std::string("a\0b\x1b\tc\n", 7)),
            "a\xEF\xBF\xBD"
            "b\xEF\xBF\xBD\tc\n");
}

TEST(StatusPageTest, WithoutSnapshotSaysItIsStarting) {
  http::HttpResponse r = statusPage(nullptr);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/html; charset=utf-8");
  EXPECT_NE(r.body.find("class=\"verdict pending\">STARTING"), std::string::npos) << r.body;
}

TEST(StatusPageTest, IsAStandalonePageForPhones) {
  std::string h = page(baseSnapshot());
  EXPECT_NE(h.find("<meta name=\"viewport\""), std::string::npos);
  EXPECT_NE(h.find("@media (max-width:600px)"), std::string::npos);
  EXPECT_NE(h.find("Content-Security-Policy\" content=\"default-src 'none'"), std::string::npos);
  // Nothing loads from elsewhere: no scripts, stylesheets or images at all.
  for (const char* tag : {"<script", "<link", "<img", "src=", "http://", "https://"})
    EXPECT_EQ(h.find(tag), std::string::npos) << tag;
}

TEST(StatusPageTest, VerdictFollowsTheWorstFinding) {
  core::Snapshot s = baseSnapshot();
  EXPECT_NE(page(s).find("class=\"verdict ok\">OK · no violations · 1 source healthy"),
            std::string::npos)
      << page(s);

  s.complete = false;
  EXPECT_NE(page(s).find("verdict pending\">STARTING"), std::string::npos);
  s.complete = true;

  s.sources[0].success = false;
  s.sources[0].last_error = "timed out";
  EXPECT_NE(page(s).find("verdict warn\">WARN · source rdma failed"), std::string::npos);

  s.violations.push_back(violation("warning", "w1", "fix w1"));
  EXPECT_NE(page(s).find("verdict warn\">WARN · 1 warning violation · source rdma failed"),
            std::string::npos)
      << page(s);

  s.violations.push_back(violation("critical", "c1", "fix c1"));
  s.violations.push_back(violation("critical", "c2", ""));
  EXPECT_NE(page(s).find("verdict fail\">FAIL · 2 critical and 1 warning violations"),
            std::string::npos)
      << page(s);
  EXPECT_NE(page(s).find("<title>FAIL · gpu-node-17 · fabricwatch</title>"), std::string::npos);
}

// A rule that cannot judge the node for missing facts is said so, apart from violations.
TEST(StatusPageTest, ShowsRulesThatCannotJudgeTheNode) {
  core::Snapshot s = baseSnapshot();
  s.status["policy"]["packs"].push(Value::map(
      {{"name", "baseline"}, {"matched", true}, {"pass", 8}, {"fail", 0}, {"unknown", 1}}));
  s.status["policy"]["unknown"] = Value::list();
  s.status["policy"]["unknown"].push(Value::map({{"pack", "baseline"},
                                                 {"rule", "ib-uverbs-loaded"},
                                                 {"subject", "node"},
                                                 {"message", "/proc/modules <unreadable>"}}));
  std::string p = page(s);
  EXPECT_NE(p.find("verdict warn\">WARN · 1 rule cannot judge for missing facts"),
            std::string::npos)
      << p;
  EXPECT_NE(p.find("<th>unknown</th>"), std::string::npos);
  EXPECT_NE(p.find("unknown: baseline/ib-uverbs-loaded (node): /proc/modules &lt;unreadable&gt;"),
            std::string::npos)
      << p;
}

TEST(StatusPageTest, GroupsViolationsBySeverityWithTheirRemediation) {
  core::Snapshot s = baseSnapshot();
  s.violations.push_back(violation("warning", "w1", "fix w1"));
  s.violations.push_back(violation("critical", "c1", "fix c1"));
  s.violations.push_back(violation("info", "i1", "fix i1"));
  std::string h = page(s);
  size_t critical = h.find("id=\"severity-critical\">Critical (1)");
  size_t warning = h.find("id=\"severity-warning\">Warning (1)");
  size_t info = h.find("id=\"severity-info\">Info (1)");
  ASSERT_NE(critical, std::string::npos) << h;
  ASSERT_NE(warning, std::string::npos);
  ASSERT_NE(info, std::string::npos);
  EXPECT_LT(critical, warning);
  EXPECT_LT(warning, info);
  size_t c1 = h.find("pack/c1");
  EXPECT_GT(c1, critical);
  EXPECT_LT(c1, warning);
  EXPECT_NE(h.find("<b>Fix:</b> fix c1"), std::string::npos);
}

TEST(StatusPageTest, ShowsWhenAViolationBeganAndWhatRecoversOrCleared) {
  core::Snapshot s = baseSnapshot();
  const auto t0 = std::chrono::system_clock::time_point(std::chrono::seconds(1'800'000'000));
  core::Violation v = violation("critical", "rdma-ports-active", "bring it up");
  v.state = "recovering";
  v.began_at = t0;
  v.recovering_since = t0 + std::chrono::minutes(1);
  s.violations.push_back(v);
  s.status["policy"]["cleared"] = Value::list();
  s.status["policy"]["cleared"].push(Value::map({{"pack", "pack"},
                                                 {"rule", "<old>"},
                                                 {"subject", "node"},
                                                 {"began_at", "2027-01-15T08:00:00Z"},
                                                 {"recovering_since", "2027-01-15T08:01:00Z"},
                                                 {"cleared_at", "2027-01-15T08:06:00Z"}}));
  std::string h = page(s);
  EXPECT_NE(h.find("<span class=\"tag recovering\">recovering</span>"), std::string::npos) << h;
  EXPECT_NE(h.find("Began " + core::rfc3339(t0) + "; passing again since " +
                   core::rfc3339(t0 + std::chrono::minutes(1))),
            std::string::npos)
      << h;
  EXPECT_NE(h.find("<section id=\"cleared\"><h2>Recently cleared</h2>"), std::string::npos);
  EXPECT_NE(h.find("pack/&lt;old&gt;"), std::string::npos);
  EXPECT_NE(h.find("2027-01-15T08:06:00Z"), std::string::npos);
  // check's violations carry no lifecycle, and a snapshot without cleared ones has no list.
  core::Snapshot plain = baseSnapshot();
  plain.violations.push_back(violation("critical", "r", "fix"));
  EXPECT_EQ(page(plain).find("Began "), std::string::npos);
  EXPECT_EQ(page(plain).find("id=\"cleared\""), std::string::npos);
}

TEST(StatusPageTest, SaysHowTheResourceGroupWasChosen) {
  std::string h = page(baseSnapshot());
  EXPECT_NE(h.find("id=\"resource-group\"><b>efa-p5</b> <span class=\"muted\">(from "
                   "$FABRICWATCH_RESOURCE_GROUP)"),
            std::string::npos)
      << h;
  EXPECT_NE(h.find("id=\"node-name\">gpu-node-17</dd>"), std::string::npos);
}

TEST(StatusPageTest, RendersAProbeKindItHasNeverSeen) {
  core::Snapshot s = baseSnapshot();
  Value peer = Value::map({{"node", "gpu-node-18"},
                           {"reachable", false},
                           {"latency_seconds", Value::map({{"p50", 1.5e-6}, {"p99", 0.0042}})},
                           {"bandwidth_bytes_per_second", 2.5e10},
                           {"provider", "efa"}});
  s.facts["probes"]["fabric"] =
      Value::map({{"failures", 2}, {"provider", "efa"}, {"peers", listOf(peer)}});
  std::string h = page(s);
  EXPECT_NE(h.find("<h3 id=\"probe-fabric\">fabric</h3>"), std::string::npos) << h;
  EXPECT_NE(h.find("<table id=\"probe-fabric-peers\">"), std::string::npos);
  EXPECT_NE(h.find("<th>latency_seconds.p50</th>"), std::string::npos);
  EXPECT_NE(h.find("<td>1.5 µs</td>"), std::string::npos);
  EXPECT_NE(h.find("<td>4.2 ms</td>"), std::string::npos);
  EXPECT_NE(h.find("<tr class=\"bad\"><td>gpu-node-18</td>"), std::string::npos);
  EXPECT_NE(h.find("verdict warn\">WARN · fabric failures: 2"), std::string::npos);
}

TEST(StatusPageTest, SaysWhenThereAreNoPeers) {
  core::Snapshot s = baseSnapshot();
  EXPECT_NE(page(s).find("The peer mesh is off"), std::string::npos);
  s.facts["probes"]["mesh"] = Value::map({{"members", 0}, {"active", 0}});
  EXPECT_NE(page(s).find("No peers: the mesh is off or has found no member yet"),
            std::string::npos);
  s.facts["probes"]["mesh"]["members"] = 3;
  EXPECT_EQ(page(s).find("No peers"), std::string::npos);
}

TEST(StatusPageTest, ShowsTheLatestRttOfEachPeer) {
  core::Snapshot s = baseSnapshot();
  Value peer = Value::map({{"address", "10.0.0.2:19737"},
                           {"node", "gpu-node-2"},
                           {"reachable", true},
                           {"loss_ratio", 0.0},
                           {"rtt_seconds", Value::map({{"p50", 2.7e-5}, {"p99", 8.1e-5}})}});
  s.facts["probes"]["tcp"] =
      Value::map({{"reachable", 1}, {"unreachable", 0}, {"peers", listOf(peer)}});
  std::string h = page(s);
  EXPECT_NE(h.find("<tr><td>gpu-node-2</td><td>10.0.0.2:19737</td><td>yes</td><td>27 µs</td>"
                   "<td>81 µs</td><td>0 %</td>"),
            std::string::npos)
      << h;
  EXPECT_NE(h.find("OK · no violations · 1 source healthy · 1 peer reachable over tcp"),
            std::string::npos);
}

TEST(StatusPageTest, EscapesEveryValueFromHostsPeersAndPacks) {
  core::Snapshot s = baseSnapshot();
  const std::string evil = "<script>alert(1)</script>\"'&";
  const std::string escaped = "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;";
  s.facts["node"]["name"] = evil;
  s.facts["probes"][evil] =
      Value::map({{evil, Value(evil)}, {"peers", listOf(Value::map({{evil, Value(evil)}}))}});
  s.sources[0].name = evil;
  s.sources[0].last_error = evil;
  s.violations.push_back(violation(evil, evil, evil));
  for (auto* f :
       {&s.violations.back().pack, &s.violations.back().subject, &s.violations.back().message})
    *f = evil;
  s.status["policy"]["resource_group"] = evil;
  s.status["policy"]["resource_group_origin"] = evil;
  std::string h = page(s);
  EXPECT_EQ(h.find("<script"), std::string::npos) << h;
  EXPECT_EQ(h.find("alert(1)</"), std::string::npos);
  EXPECT_NE(h.find(escaped), std::string::npos);
}

// The topology section: labels, lldpd's state, and one row per NIC whose place is known; a
// switch's name is what a switch sent, escaped like every other value.
TEST(StatusPageTest, TopologyShowsLabelsAndEachNicsSwitch) {
  core::Snapshot s = baseSnapshot();
  Value nic = Value::map({{"device", "mlx5_0"}, {"port", 1}, {"interface", "eth2"}});
  nic["neighbors"] = listOf(Value::map({{"switch", "<leaf-7>"}, {"switch_port", "Ethernet12"}}));
  Value ib = Value::map(
      {{"device", "mlx5_1"}, {"port", 1}, {"subnet_prefix", "fe80:0000:0000:0000"}, {"sm_lid", 1}});
  Value quiet = Value::map({{"device", "rdmap0"}, {"port", 1}});
  Value nics = Value::list();
  nics.push(nic);
  nics.push(ib);
  nics.push(quiet);
  s.facts["topology"] = Value::map({{"labels", Value::map({{"rack", "r12"}})},
                                    {"lldp", Value::map({{"status", "ok"}})},
                                    {"nics", nics}});
  std::string h = page(s);
  ASSERT_NE(h.find("<section id=\"topology\">"), std::string::npos);
  EXPECT_NE(h.find("<dt>rack</dt><dd>r12</dd>"), std::string::npos);
  EXPECT_NE(h.find("&lt;leaf-7&gt;"), std::string::npos);
  EXPECT_EQ(h.find("<leaf-7>"), std::string::npos);
  EXPECT_NE(h.find("fe80:0000:0000:0000"), std::string::npos);
  EXPECT_EQ(h.find("rdmap0"), std::string::npos) << "a NIC with nothing known has no row";
  // No topology facts (serve left the source out): no section.
  EXPECT_EQ(page(baseSnapshot()).find("id=\"topology\""), std::string::npos);
}

}  // namespace
}  // namespace fabricwatch::exporter
