// The series budget's table of optional series (docs/metrics.md) is what the renderers declare,
// row for row, and a configuration that turns them on reaches the renderers.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

#include "config/loader.h"
#include "exporter/pipeline.h"
#include "tests/support/paths.h"

namespace fabricwatch::exporter {
namespace {

using Row = std::tuple<std::string, std::string, std::string, std::string>;

std::set<Row> documentedRows() {
  std::ifstream in(testing::sourceDir() + "/docs/metrics.md");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  const std::string begin = "<!-- optional-metrics:begin -->",
                    end = "<!-- optional-metrics:end -->";
  size_t b = text.find(begin), e = text.find(end);
  EXPECT_TRUE(b != std::string::npos && e != std::string::npos);
  std::stringstream table(text.substr(b, e - b));
  std::set<Row> rows;
  std::string line;
  while (std::getline(table, line)) {
    if (line.rfind("| `", 0) != 0) continue;
    std::vector<std::string> cells;
    std::stringstream cs(line.substr(1));
    std::string c;
    while (std::getline(cs, c, '|')) {
      c.erase(0, c.find_first_not_of(' '));
      c.erase(c.find_last_not_of(' ') + 1);
      if (c.size() >= 2 && c.front() == '`' && c.back() == '`') c = c.substr(1, c.size() - 2);
      cells.push_back(c);
    }
    if (cells.size() >= 4) rows.insert({cells[0], cells[1], cells[2], cells[3]});
  }
  return rows;
}

TEST(SeriesBudgetTest, OptionalSeriesTableIsWhatTheRenderersDeclare) {
  std::set<Row> declared;
  for (const auto& [table, metrics] : optionalMetricsByTable())
    for (const auto& m : metrics) declared.insert({"[" + table + "]", m.family, m.label, m.adds});
  auto documented = documentedRows();
  ASSERT_FALSE(declared.empty());
  for (const auto& r : declared)
    EXPECT_TRUE(documented.count(r))
        << std::get<0>(r) << " " << std::get<1>(r) << " is missing from docs/metrics.md or differs";
  for (const auto& r : documented)
    EXPECT_TRUE(declared.count(r))
        << std::get<0>(r) << " " << std::get<1>(r) << " is documented but not declared";
}

TEST(SeriesBudgetTest, ConfigurationTurnsOptionalSeriesOn) {
  auto r = config::loadConfig(
      "[collect.sources.rdma]\nextra_metrics = "
      "['fabricwatch_rdma_port_hw_stat_total{stat=\"tx_bytes\"}']\n[policy]\nextra_metrics = "
      "[\"*\"]\n",
      "t.toml", configLoadOptions());
  ASSERT_TRUE(r.ok()) << core::formatAll(r.problems);
  auto sel = metricSelection(r.config);
  ASSERT_TRUE(sel);
  EXPECT_TRUE(sel->value("fabricwatch_rdma_port_hw_stat_total", "tx_bytes"));
  EXPECT_FALSE(sel->value("fabricwatch_rdma_port_hw_stat_total", "rx_bytes"));
  EXPECT_FALSE(sel->family("fabricwatch_rdma_port_hw_stat_total"));
  EXPECT_TRUE(sel->family("fabricwatch_policy_pack_matched"));
  EXPECT_TRUE(sel->family("fabricwatch_policy_rules_evaluated"));
  EXPECT_FALSE(sel->family("fabricwatch_rdma_device_info"));
  EXPECT_EQ(metricSelection(config::loadConfig("", "t.toml").config), nullptr);
  // A family another table declares is refused in this one.
  auto wrong = config::loadConfig("[policy]\nextra_metrics = [\"fabricwatch_rdma_device_info\"]\n",
                                  "t.toml", configLoadOptions());
  ASSERT_EQ(wrong.problems.size(), 1u);
  EXPECT_NE(wrong.problems[0].message.find("[policy] has no optional family"), std::string::npos);
}

}  // namespace
}  // namespace fabricwatch::exporter
