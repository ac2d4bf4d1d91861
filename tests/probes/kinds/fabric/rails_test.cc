// Rails (rails.h): which domain is which rail, the rails of a round, and the PCI order.
#include "probes/kinds/fabric/rails.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include "tests/support/temp_dir.h"

namespace fabricwatch::probes::fabric {
namespace {

TEST(RailsTest, ConfiguredRailsTakeTheFirstNameTheNodeHas) {
  std::vector<std::string> domains = {"eth0", "lo", "eth1", "ens3"};
  auto rails = assignRails({"eth1", "eth9|ens3", "eth7"}, domains, nullptr);
  // Rail 2 (eth7) is not on this node: it lacks that rail, and the others keep their index.
  ASSERT_EQ(rails.size(), 2u);
  EXPECT_EQ(rails[0], (Rail{0, "eth1"}));
  EXPECT_EQ(rails[1], (Rail{1, "ens3"}));
}

TEST(RailsTest, ByDefaultEveryDomainInPciOrderThenNaturalNameOrder) {
  std::map<std::string, std::string> pci = {
      {"mlx5_1", "0000:1a:00.0"}, {"mlx5_0", "0000:9c:00.0"}, {"mlx5_10", "0000:0c:00.0"}};
  auto of = [&](const std::string& d) { return pci.count(d) ? pci[d] : ""; };
  auto rails = assignRails({}, {"mlx5_0", "mlx5_1", "mlx5_10", "mlx5_3", "mlx5_2", "mlx5_0"}, of);
  std::vector<std::string> order;
  for (const auto& r : rails) order.push_back(r.domain);
  // Rails by PCI address; those without one after, mlx5_2 before mlx5_3; duplicates once.
  EXPECT_EQ(order, (std::vector<std::string>{"mlx5_10", "mlx5_1", "mlx5_0", "mlx5_2", "mlx5_3"}));
  EXPECT_EQ(rails.back().index, 4u);
  std::vector<std::string> many;
  for (int i = 0; i < 40; ++i) many.push_back("rdmap" + std::to_string(i) + "s0-rdm");
  EXPECT_EQ(assignRails({}, many, nullptr).size(), kMaxRails);
}

TEST(RailsTest, NaturalOrder) {
  EXPECT_TRUE(naturalLess("mlx5_2", "mlx5_10"));
  EXPECT_FALSE(naturalLess("mlx5_10", "mlx5_2"));
  EXPECT_TRUE(naturalLess("eth1", "eth01x"));
  EXPECT_FALSE(naturalLess("a", "a"));
  EXPECT_TRUE(naturalLess("a", "ab"));
}

TEST(RailsTest, EachRunRotatesSoThatEveryRailIsMeasuredWithinCeilRailsOverPerRound) {
  EXPECT_EQ(railsForRun(8, 8, 5), (std::vector<size_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(railsForRun(8, 3, 1), (std::vector<size_t>{3, 4, 5}));
  EXPECT_EQ(railsForRun(8, 3, 2), (std::vector<size_t>{6, 7, 0}));
  EXPECT_EQ(railsForRun(3, 8, 0).size(), 3u);
  EXPECT_TRUE(railsForRun(0, 8, 0).empty());
  for (size_t rails : {1, 3, 8, 32})
    for (size_t per : {1, 2, 3, 8}) {
      std::vector<bool> seen(rails, false);
      size_t runs = (rails + per - 1) / per;
      for (uint64_t turn = 17; turn < 17 + runs; ++turn)
        for (size_t i : railsForRun(rails, per, turn)) seen[i] = true;
      for (size_t i = 0; i < rails; ++i) EXPECT_TRUE(seen[i]) << rails << " " << per << " " << i;
    }
}

TEST(RailsTest, EntriesAreChecked) {
  EXPECT_FALSE(checkRailEntry("mlx5_0"));
  EXPECT_FALSE(checkRailEntry("eth1|ens1f1"));
  EXPECT_TRUE(checkRailEntry(""));
  EXPECT_TRUE(checkRailEntry("eth1|"));
  EXPECT_TRUE(checkRailEntry("eth 1"));
  EXPECT_TRUE(checkRailEntry(std::string(65, 'a')));
}

TEST(RailsTest, PciAddressFromSysfs) {
  testing::TempDir dir;
  namespace fs = std::filesystem;
  fs::create_directories(dir.path() + "/sys/devices/pci0000:00/0000:10:1b.0");
  fs::create_directories(dir.path() + "/sys/class/infiniband/rdmap16s27");
  fs::create_symlink(dir.path() + "/sys/devices/pci0000:00/0000:10:1b.0",
                     dir.path() + "/sys/class/infiniband/rdmap16s27/device");
  fs::create_directories(dir.path() + "/sys/class/net/veth1");
  EXPECT_EQ(pciAddressOf(dir.path(), "rdmap16s27-rdm"), "0000:10:1b.0");
  EXPECT_EQ(pciAddressOf(dir.path(), "veth1"), "");
  EXPECT_EQ(pciAddressOf(dir.path(), "../../etc"), "");
}

}  // namespace
}  // namespace fabricwatch::probes::fabric
