// Rails (rails.h): which domain is which rail, the rails of a round, and the PCI order.
#include "probes/kinds/fabric/rails.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
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
  EXPECT_EQ(rails[0], (Rail{0, "eth1", ""}));
  EXPECT_EQ(rails[1], (Rail{1, "ens3", ""}));
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

IpAddress addr(const std::string& text) { return parseIpAddress(text).value(); }

// Two nodes whose NICs have other names but the same rails' subnets: subnet entries give each
// NIC the rail its peers' NIC on that network has.
TEST(RailsTest, SubnetEntriesNameTheNicWithAnAddressInTheNetwork) {
  std::vector<std::string> rails = {"subnet:10.1.0.0/24", "mlx5_7|subnet:10.1.1.0/24",
                                    "subnet:fd00:2::/64", "subnet:10.9.0.0/24"};
  std::map<std::string, std::vector<IpAddress>> a = {{"eth1", {addr("fe80::1"), addr("10.1.0.5")}},
                                                     {"eth2", {addr("10.1.1.5")}},
                                                     {"eth3", {addr("fd00:2::5")}},
                                                     {"eth0", {addr("10.0.0.5")}}};
  auto of = [&](const std::string& d) { return a.count(d) ? a[d] : std::vector<IpAddress>{}; };
  auto r = assignRails(rails, {"eth0", "eth1", "eth2", "eth3", "lo"}, nullptr, of);
  ASSERT_EQ(r.size(), 3u);  // nobody is in 10.9.0.0/24: rail 3 is missing here
  EXPECT_EQ(r[0], (Rail{0, "eth1", "10.1.0.5"}));
  EXPECT_EQ(r[1], (Rail{1, "eth2", "10.1.1.5"}));
  EXPECT_EQ(r[2], (Rail{2, "eth3", "fd00:2::5"}));
  // The peer: other names, the same networks; a mixed entry takes its name where it has it.
  std::map<std::string, std::vector<IpAddress>> b = {
      {"zrail1", {addr("10.1.0.6")}}, {"arail2", {addr("10.1.1.6")}}, {"mlx5_7", {}}};
  auto of_b = [&](const std::string& d) { return b.count(d) ? b[d] : std::vector<IpAddress>{}; };
  r = assignRails(rails, {"arail2", "zrail1", "mlx5_7"}, nullptr, of_b);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0], (Rail{0, "zrail1", "10.1.0.6"}));
  EXPECT_EQ(r[1], (Rail{1, "mlx5_7", ""}));
  // Without addresses (no lookup) a subnet matches nothing; names still do.
  r = assignRails(rails, {"eth1", "mlx5_7"}, nullptr, nullptr);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0], (Rail{1, "mlx5_7", ""}));
}

TEST(RailsTest, ADomainIsOnOneRailAndSeveralInOneSubnetGoInPciOrder) {
  // Two NICs in one flat network: the first in PCI order takes the rail, the next the next
  // rail that matches it; a domain a name took is not taken again by a subnet.
  std::map<std::string, std::vector<IpAddress>> a = {{"mlx5_0", {addr("10.2.0.2")}},
                                                     {"mlx5_1", {addr("10.2.0.1")}}};
  std::map<std::string, std::string> pci = {{"mlx5_0", "0000:9c:00.0"}, {"mlx5_1", "0000:1a:00.0"}};
  auto of = [&](const std::string& d) { return a[d]; };
  auto pci_of = [&](const std::string& d) { return pci[d]; };
  auto r = assignRails({"subnet:10.2.0.0/16", "subnet:10.2.0.0/16|mlx5_0"}, {"mlx5_0", "mlx5_1"},
                       pci_of, of);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0], (Rail{0, "mlx5_1", "10.2.0.1"}));
  EXPECT_EQ(r[1], (Rail{1, "mlx5_0", "10.2.0.2"}));
  r = assignRails({"mlx5_0", "subnet:10.2.0.0/24"}, {"mlx5_0"}, pci_of, of);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].domain, "mlx5_0");
}

TEST(RailsTest, SubnetEntriesAreCheckedAndAListMayNotPutAnAddressOnTwoRails) {
  EXPECT_FALSE(checkRailEntry("subnet:10.1.3.0/24"));
  EXPECT_FALSE(checkRailEntry("mlx5_0|subnet:10.1.0.0/24|subnet:fd00:1::/64"));
  EXPECT_EQ(checkRailEntry("subnet:10.1.3.5/24").value_or(""),
            "rail name \"subnet:10.1.3.5/24\": subnet \"10.1.3.5/24\" has bits set past its /24: "
            "the network is 10.1.3.0/24");
  EXPECT_EQ(checkRailEntry("subnet:").value_or("").substr(0, 42),
            "rail name \"subnet:\": subnet \"\" needs a pre");
  EXPECT_TRUE(checkRailEntry("subnet:10.0.0.0/0"));
  EXPECT_TRUE(checkRailEntry("subnet:10.0.0.0/24|"));
  EXPECT_TRUE(checkRailEntry("subnet 10.0.0.0/24"));
  EXPECT_TRUE(checkRailEntry("SUBNET:10.0.0.0/24"));  // not the prefix: a name, and ':' '/' no
  EXPECT_EQ(checkRailEntry("eth\n1").value_or("").substr(0, 22), "rail name \"eth\\n1\" may");
  std::string many = "e0";
  for (int i = 1; i < 17; ++i) many += "|e" + std::to_string(i);
  EXPECT_EQ(checkRailEntry(many).value_or("").substr(0, 10), "rail \"e0|e");
  EXPECT_NE(checkRailEntry(many).value_or("").find(" has 17 names: at most 16"), std::string::npos);
  EXPECT_FALSE(railSubnet("mlx5_0"));
  EXPECT_EQ(formatSubnet(*railSubnet("subnet:10.1.3.0/24")), "10.1.3.0/24");

  EXPECT_TRUE(railsListProblems({"subnet:10.1.0.0/24", "subnet:10.1.1.0/24"}).empty());
  // Alternatives of one rail may overlap: whichever matches, it is that rail.
  EXPECT_TRUE(railsListProblems({"subnet:10.1.0.0/24|subnet:10.1.0.0/16"}).empty());
  EXPECT_TRUE(railsListProblems({"subnet:10.1.0.0/16", "subnet:fd00::/16"}).empty());
  EXPECT_EQ(railsListProblems({"subnet:10.1.0.0/16", "eth2", "mlx5_0|subnet:10.1.3.0/24"}),
            (std::vector<std::string>{"rail 2's subnet:10.1.3.0/24 overlaps rail 0's "
                                      "subnet:10.1.0.0/16: an address in both would be on two "
                                      "rails"}));
  EXPECT_EQ(railsListProblems({"subnet:fd00:1::/64", "subnet:fd00:1::/48"}).size(), 1u);
  EXPECT_EQ(railsListProblems({"subnet:10.1.0.0/24", "subnet:10.1.0.0/24"}),
            (std::vector<std::string>{"names \"subnet:10.1.0.0/24\" on two rails",
                                      "rail 1's subnet:10.1.0.0/24 overlaps rail 0's "
                                      "subnet:10.1.0.0/24: an address in both would be on two "
                                      "rails"}));
}

// A RoCE device's netdevs: as its GID table names them (bonds: only there) and its PCI
// function's net/ directory; what is no interface name is skipped.
TEST(RailsTest, TheInterfacesOfARoceDeviceComeFromSysfs) {
  testing::TempDir dir;
  namespace fs = std::filesystem;
  std::string ib = dir.path() + "/sys/class/infiniband/mlx5_bond_0";
  fs::create_directories(ib + "/ports/1/gid_attrs/ndevs");
  fs::create_directories(ib + "/ports/x/gid_attrs/ndevs");
  fs::create_directories(ib + "/device/net/ens1f0np0");
  dir.write("sys/class/infiniband/mlx5_bond_0/ports/1/gid_attrs/ndevs/0", "bond0\n");
  dir.write("sys/class/infiniband/mlx5_bond_0/ports/1/gid_attrs/ndevs/1", "bond0\n");
  dir.write("sys/class/infiniband/mlx5_bond_0/ports/1/gid_attrs/ndevs/2", "../../etc\n");
  dir.write("sys/class/infiniband/mlx5_bond_0/ports/1/gid_attrs/ndevs/3", "a name with spaces");
  dir.write("sys/class/infiniband/mlx5_bond_0/ports/x/gid_attrs/ndevs/0", "evil0\n");
  EXPECT_EQ(domainInterfaces(dir.path(), "mlx5_bond_0"),
            (std::vector<std::string>{"bond0", "ens1f0np0"}));
  // Not an RDMA device: the domain is the interface (tcp); EFA's suffix is dropped.
  EXPECT_EQ(domainInterfaces(dir.path(), "eth1"), (std::vector<std::string>{"eth1"}));
  EXPECT_EQ(domainInterfaces(dir.path(), "rdmap16s27-rdm"),
            (std::vector<std::string>{"rdmap16s27"}));
  EXPECT_TRUE(domainInterfaces(dir.path(), "../x").empty());
  EXPECT_TRUE(domainInterfaces(dir.path(), "").empty());
  // This process's own interfaces: loopback holds 127.0.0.1 wherever the test runs.
  auto mine = interfaceAddresses();
  ASSERT_TRUE(mine.count("lo"));
  EXPECT_TRUE(std::find(mine["lo"].begin(), mine["lo"].end(), addr("127.0.0.1")) !=
              mine["lo"].end());
  auto lo = hostAddressesOf(dir.path())("lo");
  EXPECT_TRUE(std::find(lo.begin(), lo.end(), addr("127.0.0.1")) != lo.end());
  EXPECT_EQ(assignRails({"subnet:127.0.0.0/8"}, {"lo"}, nullptr, hostAddressesOf("/")),
            (std::vector<Rail>{{0, "lo", "127.0.0.1"}}));
}

}  // namespace
}  // namespace fabricwatch::probes::fabric
