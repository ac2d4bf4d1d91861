// The net source's addresses: reported only from the host's network namespace, told by the
// namespace of the host's PID 1 (ROOT/proc/1/ns/net) against fabricwatch's own. IPv4 comes from
// the kernel (netlink), so these tests use real namespaces: this process's, and one made for
// the test (NetnsLab) in which the binary runs.
#include "facts/net_source.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "tests/support/netns.h"
#include "tests/support/paths.h"
#include "tests/support/process.h"
#include "tests/support/require.h"
#include "tests/support/temp_dir.h"

namespace fabricwatch::facts {
namespace {

namespace fs = std::filesystem;

std::string selfNetNamespace() {
  char buf[64];
  ssize_t n = ::readlink("/proc/self/ns/net", buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

// A root whose /sys is this machine's and whose PID 1 is in the network namespace `ns_link`
// ("net:[4026531840]"), as readlink shows it.
struct HostRoot {
  explicit HostRoot(const std::string& ns_link) {
    fs::create_directories(dir.path() + "/proc/1/ns");
    fs::create_symlink(ns_link, dir.path() + "/proc/1/ns/net");
    fs::create_symlink("/sys", dir.path() + "/sys");
  }
  testing::TempDir dir;
};

std::set<std::string> addressesOf(const core::Value& facts) {
  std::set<std::string> out;
  for (const auto& i : facts.findPath("net.interfaces")->asList()) {
    for (const auto& a : i.find("addresses")->asList()) {
      out.insert(i.find("name")->asString() + " " + a.asString());
    }
  }
  return out;
}

const std::vector<std::string> kIpv4 = {"/usr/sbin/ip", "-4", "-o", "addr"};

// What `ip -4 -o addr` (argv) prints, as "IFNAME ADDRESS" lines: the reference.
std::set<std::string> ipv4FromIp(const std::vector<std::string>& argv) {
  auto r = testing::runCommand(argv);
  std::set<std::string> out;
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string idx, name, family, cidr;
    f >> idx >> name >> family >> cidr;
    out.insert(name + " " + cidr.substr(0, cidr.find('/')));
  }
  return out;
}

TEST(NetSourceTest, HostNamespaceReportsEveryIpv4AddressAsIpShowsThem) {
  std::string self = selfNetNamespace();
  ASSERT_FALSE(self.empty());
  HostRoot root(self);
  core::Collection c = NetSource().collect({root.dir.path()});
  EXPECT_EQ(c.facts.findPath("net.host_network")->asBool(), true);
  std::set<std::string> seen = addressesOf(c.facts);
  std::set<std::string> expected = ipv4FromIp(kIpv4);
  ASSERT_FALSE(expected.empty());
  EXPECT_TRUE(expected.count("lo 127.0.0.1"));
  for (const auto& a : expected) EXPECT_TRUE(seen.count(a)) << a;
}

TEST(NetSourceTest, AnotherNamespaceReportsNoAddresses) {
  HostRoot root("net:[1]");
  root.dir.write("proc/net/if_inet6", "00000000000000000000000000000001 01 80 10 80       lo\n");
  core::Collection c = NetSource().collect({root.dir.path()});
  EXPECT_EQ(c.facts.findPath("net.host_network")->asBool(), false);
  EXPECT_TRUE(addressesOf(c.facts).empty());
  EXPECT_FALSE(c.facts.findPath("net.interfaces")->asList().empty());
}

// A fixture root has no proc/1/ns/net: IPv6 comes from its if_inet6 as ever, and no IPv4 (this
// machine's addresses must never be reported as the fixture's).
TEST(NetSourceTest, FixtureRootKeepsItsOwnAddressesOnly) {
  core::Collection c = NetSource().collect({testing::fixture("roce_v2")});
  EXPECT_EQ(c.facts.findPath("net.host_network"), nullptr);
  for (const auto& a : addressesOf(c.facts)) {
    EXPECT_NE(a.find(':'), std::string::npos) << a << " is not IPv6";
  }
  EXPECT_FALSE(addressesOf(c.facts).empty());
}

// The binary in a namespace of its own, with a veth and an address that exist only there: with
// a root whose PID 1 shares that namespace it reports exactly that namespace's addresses; with
// the machine's own root (PID 1 elsewhere) it reports none.
TEST(NetSourceTest, InANamespaceOfItsOwn) {
  if (auto why = testing::NetnsLab::unavailableReason()) {
    FW_UNAVAILABLE("netns") << "network namespaces unavailable: " << *why;
  }
  testing::NetnsLab lab("10.78." + std::to_string(::getpid() % 200 + 20));
  std::string ns = lab.addNode(7);
  ASSERT_NE(ns, "") << lab.lastError();
  struct stat st;
  ASSERT_EQ(::stat(("/run/netns/" + ns).c_str(), &st), 0);
  // `ip netns exec` mounts the namespace's own /sys, which the root links to.
  HostRoot root("net:[" + std::to_string(st.st_ino) + "]");
  auto run = [&](const std::string& rootfs) {
    auto r = testing::runCommand(lab.execArgv(
        7, {testing::binaryPath(), "facts", "--format=json", "--path.rootfs=" + rootfs}));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    auto doc = nlohmann::json::parse(r.out);
    std::set<std::string> v4;
    for (const auto& i : doc["net"]["interfaces"]) {
      for (const auto& a : i["addresses"]) {
        std::string s = a;
        if (s.find(':') == std::string::npos) v4.insert(i["name"].get<std::string>() + " " + s);
      }
    }
    return std::make_pair(doc["net"].value("host_network", false), v4);
  };
  auto [inside, v4] = run(root.dir.path());
  EXPECT_TRUE(inside);
  EXPECT_EQ(v4, (std::set<std::string>{"eth0 " + lab.address(7), "lo 127.0.0.1"}));
  EXPECT_EQ(v4, ipv4FromIp(lab.execArgv(7, kIpv4)));
  auto [outside, none] = run("/");
  EXPECT_FALSE(outside);
  EXPECT_TRUE(none.empty());
}

// PFC by DCB netlink, asked in the namespace the binary runs in: its veth has no DCB, so the
// kernel answers EOPNOTSUPP and the fact says unsupported (the policy's unknown, never a
// fault); lo is never asked. Outside the host's namespace nothing is asked.
TEST(NetSourceTest, AVethInANamespaceHasNoDcb) {
  if (auto why = testing::NetnsLab::unavailableReason()) {
    FW_UNAVAILABLE("netns") << "network namespaces unavailable: " << *why;
  }
  testing::NetnsLab lab("10.79." + std::to_string(::getpid() % 200 + 20));
  std::string ns = lab.addNode(8);
  ASSERT_NE(ns, "") << lab.lastError();
  struct stat st;
  ASSERT_EQ(::stat(("/run/netns/" + ns).c_str(), &st), 0);
  HostRoot root("net:[" + std::to_string(st.st_ino) + "]");
  auto facts = [&](const std::string& rootfs) {
    auto r = testing::runCommand(lab.execArgv(
        8, {testing::binaryPath(), "facts", "--format=json", "--path.rootfs=" + rootfs}));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::map<std::string, nlohmann::json> out;
    auto doc = nlohmann::json::parse(r.out);
    for (const auto& i : doc["net"]["interfaces"]) out[i["name"].get<std::string>()] = i;
    return out;
  };
  auto inside = facts(root.dir.path());
  ASSERT_TRUE(inside.count("eth0"));
  EXPECT_EQ(
      inside["eth0"]["pfc"],
      nlohmann::json({{"supported", false}, {"error", "the device has no DCB (EOPNOTSUPP)"}}));
  EXPECT_FALSE(inside["lo"].contains("pfc"));
  for (auto& [name, i] : facts("/")) EXPECT_FALSE(i.contains("pfc")) << name;
}

}  // namespace
}  // namespace fabricwatch::facts
