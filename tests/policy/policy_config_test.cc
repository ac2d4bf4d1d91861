// The [policy] section of the configuration.
#include <gtest/gtest.h>

#include "config/loader.h"

namespace fabricwatch::config {
namespace {

TEST(PolicyConfigTest, DefaultsAndKeys) {
  auto d = loadEmbeddedDefault();
  ASSERT_TRUE(d.ok()) << core::formatAll(d.problems);
  EXPECT_TRUE(d.config.policy.paths.empty());
  EXPECT_TRUE(d.config.policy.shipped);
  EXPECT_EQ(d.config.policy.reload_interval, std::chrono::seconds(30));
  EXPECT_EQ(d.config.policy.max_workload_subjects, 20);
  EXPECT_EQ(d.config.policy.violation_hold, std::chrono::minutes(5));
  EXPECT_EQ(d.config.policy.counter_window, std::chrono::minutes(10));

  auto r = loadConfig(
      "[policy]\npaths = [\"/etc/fabricwatch/policies\", \"/opt/p.yaml\"]\nshipped = false\n"
      "resource_group = \"efa-p5\"\nresource_group_file = \"/etc/podinfo/labels\"\n"
      "reload_interval = \"0s\"\nmax_workload_subjects = 5\nviolation_hold = \"90s\"\n"
      "counter_window = \"1h\"\n",
      "c.toml");
  ASSERT_TRUE(r.ok()) << core::formatAll(r.problems);
  EXPECT_EQ(r.config.policy.paths,
            (std::vector<std::string>{"/etc/fabricwatch/policies", "/opt/p.yaml"}));
  EXPECT_FALSE(r.config.policy.shipped);
  EXPECT_EQ(r.config.policy.resource_group, "efa-p5");
  EXPECT_EQ(r.config.policy.resource_group_file, "/etc/podinfo/labels");
  EXPECT_EQ(r.config.policy.reload_interval.count(), 0);
  EXPECT_EQ(r.config.policy.max_workload_subjects, 5);
  EXPECT_EQ(r.config.policy.violation_hold, std::chrono::seconds(90));
  EXPECT_EQ(r.config.policy.counter_window, std::chrono::hours(1));
}

TEST(PolicyConfigTest, BadValuesArePositioned) {
  auto r = loadConfig(
      "[policy]\npaths = \"/etc\"\nresource_group_file = \"labels\"\n"
      "max_workload_subjects = 0\nviolation_hold = \"25h\"\ncounter_window = \"5s\"\n",
      "c.toml");
  ASSERT_EQ(r.problems.size(), 5u) << core::formatAll(r.problems);
  std::string all = core::formatAll(r.problems);
  EXPECT_NE(all.find("c.toml:2:9: expected an array of strings, got string"), std::string::npos)
      << all;
  EXPECT_NE(all.find("c.toml:3:23: resource_group_file \"labels\" must be an absolute path"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("c.toml:4:25: value 0 out of range [1, 1000]"), std::string::npos) << all;
  EXPECT_NE(all.find("c.toml:5:18: duration \"25h\" out of range [0s, 24h]"), std::string::npos)
      << all;
  EXPECT_NE(all.find("c.toml:6:18: duration \"5s\" out of range [10s, 24h]"), std::string::npos)
      << all;
}

}  // namespace
}  // namespace fabricwatch::config
