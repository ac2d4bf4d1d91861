// Rails named by subnet and chosen per resource group: real `fabricwatch serve` processes, each
// in a network namespace of a NetnsLab (the peer channel on eth0, two rails beside it, each its
// own bridge and /24), the tcp provider with one domain (interface) per rail. The nodes' NICs on
// a rail have different names (eth1 on node 1, zrail1 on node 2, where name order would swap
// its rails), so only the rail's subnet tells them apart:
//   - `rails` of subnet entries (one mixed with a name no node has) gives every NIC of nodes 1
//     and 2 the rail of its peer's NIC on the same network, and each rail binds to the address
//     its subnet matched;
//   - node 3's resource group (--resource-group=edge) selects its own list from
//     `rails_by_group` (a name, "nope0|n3a"): one rail, which its peers find on theirs; the
//     rail it lacks is rail_missing, not a failure; node 2's group (train) has no entry and
//     takes `rails`.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "tests/support/eventually.h"
#include "tests/support/netns.h"
#include "tests/support/paths.h"
#include "tests/support/process.h"
#include "tests/support/require.h"
#include "tests/support/temp_dir.h"

namespace fabricwatch::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
constexpr int kSubnetNodes = 3;

// The NIC of each node on rails 1 and 2 (the lab's rail numbers; the probe's rails 0 and 1).
const std::map<int, std::string> kRailA = {{1, "eth1"}, {2, "zrail1"}, {3, "n3a"}};
const std::map<int, std::string> kRailB = {{1, "eth2"}, {2, "arail2"}, {3, "n3b"}};

class SubnetRailFleet {
 public:
  // `rails`: the fabric table's rails keys; rail_a_, rail_b_ and rail_b6_ in them are replaced
  // by the rails' networks ("10.92.45", "fd00:92:45:").
  SubnetRailFleet(int subnet, std::string rails) {
    if (auto why = NetnsLab::unavailableReason()) {
      unavailable_ = *why;
      return;
    }
    third_ = std::to_string(::getpid() % 200 + 20);
    lab_ = std::make_unique<NetnsLab>("10." + std::to_string(subnet) + "." + third_);
    for (int h = 1; h <= kSubnetNodes; ++h) ok_ = ok_ && lab_->addNode(h) != "";
    rail_a_ = "10." + std::to_string(subnet + 1) + "." + third_;
    rail_b_ = "10." + std::to_string(subnet + 2) + "." + third_;
    rail_b6_ = "fd00:" + std::to_string(subnet) + ":" + third_ + ":";
    ok_ = ok_ && lab_->addRail(1, rail_a_, {1, 2, 3}, kRailA) &&
          lab_->addRail(2, rail_b_, {1, 2, 3}, kRailB);
    // Rail B also has an IPv6 network (nodad: usable at once, not tentative).
    for (int h = 1; h <= kSubnetNodes && ok_; ++h) {
      auto r =
          runCommand({"/usr/sbin/ip", "-n", lab_->nsOf(h), "addr", "add",
                      rail_b6_ + ":" + std::to_string(h) + "/64", "dev", kRailB.at(h), "nodad"},
                     10s);
      ok_ = r.exit_code == 0;
    }
    for (auto [name, value] : {std::pair{"rail_a_", rail_a_}, std::pair{"rail_b6_", rail_b6_},
                               std::pair{"rail_b_", rail_b_}})
      for (auto at = rails.find(name); at != std::string::npos; at = rails.find(name))
        rails.replace(at, std::string(name).size(), value);
    secret_ = dir_.write("secret", "a-shared-secret-for-the-subnet-test\n");
    config_ = dir_.write(
        "fabricwatch.toml",
        "[probes.dns]\nenabled = false\n[collect.sources.kernel]\nenabled = false\n"
        "[probes.fabric]\nenabled = true\nprovider = \"tcp\"\nbandwidth_when_gpus_held = true\n"
        "iterations = 50\nwarmup = 5\ntimeout = \"1s\"\nbandwidth_interval = \"0s\"\n" +
            rails);
    for (int h = 1; h <= kSubnetNodes; ++h) members_ += (h > 1 ? "," : "") + peerAddr(h);
  }
  const std::string& unavailable() const { return unavailable_; }
  bool ok() const { return ok_; }
  NetnsLab& lab() { return *lab_; }
  std::string peerAddr(int h) const { return lab_->address(h) + ":19650"; }
  std::string railAddress(int rail, int h) const {
    return (rail == 0 ? rail_a_ : rail_b_) + "." + std::to_string(h);
  }
  std::string railB6(int h) const { return rail_b6_ + ":" + std::to_string(h); }

  bool start(int h, const std::string& group) {
    std::vector<std::string> argv = {binaryPath(),
                                     "serve",
                                     "--config.file=" + config_,
                                     "--web.listen-address=127.0.0.1:19660",
                                     "--node.name=node-" + std::to_string(h),
                                     "--peer.listen-address=" + peerAddr(h),
                                     "--peer.secret-file=" + secret_,
                                     "--peers=" + members_,
                                     "--probe.interval=2s"};
    if (!group.empty()) argv.push_back("--resource-group=" + group);
    procs_[h] = std::make_unique<Process>(lab_->execArgv(h, argv));
    return procs_[h]->waitForStderr("msg=listening", 15s).has_value();
  }
  Process& proc(int h) { return *procs_[h]; }
  json getJson(int h, const std::string& path) {
    auto r = lab_->httpGet(h, "127.0.0.1", 19660, path);
    return json::parse(r && r->status == 200 ? r->body : "", nullptr, false);
  }
  // The node's fabric facts ({} until the kind has reported: json::value() throws on null, and
  // the first reads come before the fabric kind's first run).
  json fabricFacts(int h) {
    json doc = getJson(h, "/api/v1/facts");
    if (!doc.is_object()) return json::object();
    json f = doc.value("/facts/probes/fabric"_json_pointer, json::object());
    return f.is_object() ? f : json::object();
  }
  // The observer's latest fabric result for the target's rail ({} when none).
  json rail(int observer, int target, int rail) {
    json doc = getJson(observer, "/api/v1/peers");
    if (!doc.is_object() || !doc["results"].is_array()) return json::object();
    for (const auto& r : doc["results"])
      if (r.is_object() && r.value("address", "") == peerAddr(target) && r.contains("fabric") &&
          r["fabric"].is_object())
        for (const auto& x : r["fabric"].value("rails", json::array()))
          if (x.is_object() && x.value("rail", -1) == rail) return x;
    return json::object();
  }

 private:
  std::unique_ptr<NetnsLab> lab_;  // destroyed after the processes
  std::string unavailable_, third_, rail_a_, rail_b_, rail_b6_;
  bool ok_ = true;
  TempDir dir_;
  std::string secret_, config_, members_;
  std::map<int, std::unique_ptr<Process>> procs_;
};

std::string statusOf(const json& r) { return r.is_object() ? r.value("status", "") : ""; }

TEST(FabricRailsSubnetNetnsTest, SubnetsMatchNicsNamedOtherwiseAndAGroupPicksItsOwnList) {
  SubnetRailFleet fleet(91,
                        "rails = [\"mlx5_0|subnet:rail_a_.0/24\", \"subnet:rail_b_.0/24\"]\n"
                        "[probes.fabric.rails_by_group]\nedge = [\"nope0|n3a\"]\n");
  if (!fleet.unavailable().empty()) FW_UNAVAILABLE("netns") << fleet.unavailable();
  ASSERT_TRUE(fleet.ok()) << fleet.lab().lastError();
  const std::map<int, std::string> groups = {{1, ""}, {2, "train"}, {3, "edge"}};
  for (int h = 1; h <= kSubnetNodes; ++h)
    ASSERT_TRUE(fleet.start(h, groups.at(h))) << fleet.proc(h).stderrText();

  // Each node's rails: 1 and 2 by subnet (the address each matched), 3 by its group's name.
  auto railsKnown = [&] {
    for (int h = 1; h <= kSubnetNodes; ++h)
      if (fleet.fabricFacts(h).value("rails", json::array()).empty()) return false;
    return true;
  };
  ASSERT_TRUE(eventually(railsKnown, 20s, 100ms)) << fleet.fabricFacts(1).dump(2);
  for (int h = 1; h <= 2; ++h) {
    json f = fleet.fabricFacts(h);
    ASSERT_EQ(f["rails"].size(), 2u) << h << ": " << f.dump(2);
    for (int r = 0; r < 2; ++r) {
      EXPECT_EQ(f["rails"][r].value("domain", ""), (r == 0 ? kRailA : kRailB).at(h)) << f.dump(2);
      EXPECT_EQ(f["rails"][r].value("address", ""), fleet.railAddress(r, h)) << f.dump(2);
    }
    EXPECT_FALSE(f.contains("rails_group")) << f.dump(2);
  }
  json f3 = fleet.fabricFacts(3);
  EXPECT_EQ(f3.value("rails_group", ""), "edge") << f3.dump(2);
  ASSERT_EQ(f3["rails"].size(), 1u) << f3.dump(2);
  EXPECT_EQ(f3["rails"][0].value("domain", ""), "n3a");
  EXPECT_FALSE(f3["rails"][0].contains("address"));  // a name chose it

  // Every rail meets its peer's NIC on the same network: ok on both rails between 1 and 2,
  // whatever each node calls its NICs; rail 0 with 3, and 3's missing rail 1 is no failure.
  auto expected = [&](int o, int t, int r) -> std::string {
    if (r == 1 && o == 3) return "";  // 3 has no rail 1 to probe from
    return r == 1 && t == 3 ? "rail_missing" : "ok";
  };
  auto everyRail = [&] {
    for (int o = 1; o <= kSubnetNodes; ++o)
      for (int t = 1; t <= kSubnetNodes; ++t)
        for (int r = 0; r < 2 && o != t; ++r)
          if (!expected(o, t, r).empty() && statusOf(fleet.rail(o, t, r)) != expected(o, t, r))
            return false;
    return true;
  };
  ASSERT_TRUE(eventually(everyRail, 40s, 100ms))
      << fleet.rail(1, 2, 0).dump(2) << fleet.rail(1, 2, 1).dump(2) << fleet.rail(2, 3, 0).dump(2)
      << fleet.rail(3, 1, 0).dump(2) << fleet.rail(1, 3, 1).dump(2);
  for (auto [o, t] : {std::pair{1, 2}, std::pair{2, 1}, std::pair{3, 2}, std::pair{2, 3}})
    for (int r = 0; r < 2; ++r) {
      if (expected(o, t, r) != "ok") continue;
      json x = fleet.rail(o, t, r);
      EXPECT_EQ(x.value("domain", ""), (r == 0 ? kRailA : kRailB).at(o)) << x.dump(2);
      EXPECT_EQ(x.value("peer_domain", ""), (r == 0 ? kRailA : kRailB).at(t)) << x.dump(2);
      EXPECT_GT(x.value("latency_seconds", json::object()).value("p50", 0.0), 0) << x.dump(2);
    }
  std::cerr << "[ NOTE ] rails by subnet: 1->2 rail 0 " << fleet.rail(1, 2, 0).value("domain", "")
            << "->" << fleet.rail(1, 2, 0).value("peer_domain", "") << ", rail 1 "
            << fleet.rail(1, 2, 1).value("domain", "") << "->"
            << fleet.rail(1, 2, 1).value("peer_domain", "")
            << "; node 3 (edge): " << f3["rails"].size() << " rail\n";
}

// An IPv6 network names a rail as well: the socket provider's rail binds to the address the
// /64 matched, and the rail's sessions run over IPv6.
TEST(FabricRailsSubnetNetnsTest, AnIpv6SubnetNamesARailAndItsEndpointsBindThere) {
  SubnetRailFleet fleet(95, "rails = [\"subnet:rail_a_.0/24\", \"subnet:rail_b6_:/64\"]\n");
  if (!fleet.unavailable().empty()) FW_UNAVAILABLE("netns") << fleet.unavailable();
  ASSERT_TRUE(fleet.ok()) << fleet.lab().lastError();
  for (int h = 1; h <= 2; ++h) ASSERT_TRUE(fleet.start(h, "")) << fleet.proc(h).stderrText();
  ASSERT_TRUE(eventually(
      [&] {
        return fleet.fabricFacts(1).value("rails", json::array()).size() == 2 &&
               fleet.fabricFacts(2).value("rails", json::array()).size() == 2;
      },
      20s, 100ms))
      << fleet.fabricFacts(1).dump(2) << fleet.fabricFacts(2).dump(2);
  json f = fleet.fabricFacts(2);
  EXPECT_EQ(f["rails"][1].value("domain", ""), "arail2") << f.dump(2);
  EXPECT_EQ(f["rails"][1].value("address", ""), fleet.railB6(2)) << f.dump(2);
  ASSERT_TRUE(eventually(
      [&] {
        return statusOf(fleet.rail(1, 2, 1)) == "ok" && statusOf(fleet.rail(2, 1, 1)) == "ok" &&
               statusOf(fleet.rail(1, 2, 0)) == "ok";
      },
      40s, 100ms))
      << fleet.rail(1, 2, 1).dump(2) << fleet.rail(2, 1, 1).dump(2);
  EXPECT_EQ(fleet.rail(1, 2, 1).value("peer_domain", ""), "arail2");
  // The provider's sockets on node 2 are bound to that rail's IPv6 address (ss, iproute2).
  auto ss = runCommand(fleet.lab().execArgv(2, {"ss", "-Htan"}), 10s);
  EXPECT_NE(ss.out.find("[" + fleet.railB6(2) + "]:"), std::string::npos) << ss.out << ss.err;
  std::cerr << "[ NOTE ] rail 1 over IPv6 (" << fleet.railB6(1) << " -> " << fleet.railB6(2)
            << "): p50 "
            << fleet.rail(1, 2, 1).value("latency_seconds", json::object()).value("p50", 0.0)
            << " s\n";
}

}  // namespace
}  // namespace fabricwatch::testing
