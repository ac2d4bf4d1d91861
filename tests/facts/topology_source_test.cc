// The topology source on fixture roots (InfiniBand subnet prefixes, LIDs, SM LIDs; nothing for
// EFA), its labels from the configuration and the environment, and its bounds towards lldpd:
// no socket, a socket nobody listens on, one that never answers, one that answers garbage.
// tests/facts/topology_lldp_test.cc talks to real lldpd daemons.
#include "facts/topology_source.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "config/loader.h"
#include "core/snapshot.h"
#include "core/value_format.h"
#include "facts/topology_parse.h"
#include "tests/support/paths.h"
#include "tests/support/require.h"
#include "tests/support/temp_dir.h"

namespace fabricwatch::facts {
namespace {

core::MetricFamilies renderTopology(const core::Value& facts) {
  core::Snapshot s;
  s.facts = facts;
  core::MetricFamilies out;
  TopologySource().renderMetrics(s, out);
  return out;
}

const prometheus::MetricFamily* family(const core::MetricFamilies& fs, const std::string& name) {
  for (const auto& f : fs)
    if (f.name == name) return &f;
  return nullptr;
}

std::string label(const prometheus::ClientMetric& m, const std::string& name) {
  for (const auto& l : m.label)
    if (l.name == name) return l.value;
  return "<none>";
}

TEST(TopologyLabelsTest, EnvironmentOverridesTheConfigurationByName) {
  auto r = resolveTopologyLabels({{"rack", "r1"}, {"pod", "p1"}},
                                 {"FABRICWATCH_TOPOLOGY_RACK=r7", "FABRICWATCH_TOPOLOGY_POD=",
                                  "FABRICWATCH_TOPOLOGY_NETWORK_NODE_LAYER_1=nn-0a1b", "PATH=/bin",
                                  "FABRICWATCH_RESOURCE_GROUP=efa-p5"});
  EXPECT_TRUE(r.problems.empty());
  EXPECT_EQ(r.labels, (std::map<std::string, std::string, std::less<>>{
                          {"network_node_layer_1", "nn-0a1b"}, {"rack", "r7"}}));
}

TEST(TopologyLabelsTest, HostileVariablesAreRefusedOneByOne) {
  std::string many;
  std::vector<std::string> env = {
      "FABRICWATCH_TOPOLOGY_NODE=x",                         // the scrape's own label
      "FABRICWATCH_TOPOLOGY___X=x",                          // Prometheus keeps __*
      "FABRICWATCH_TOPOLOGY_1RACK=x",                        // starts with a digit
      "FABRICWATCH_TOPOLOGY_RACK-A=x",                       // not a label name
      "FABRICWATCH_TOPOLOGY_LEAF=" + std::string(129, 'a'),  // too long
      "FABRICWATCH_TOPOLOGY_SPINE=\xff\xfe",                 // not UTF-8
      "FABRICWATCH_TOPOLOGY_ROW=a\nb",                       // a control character
      "FABRICWATCH_TOPOLOGY_POD=" + std::string(128, 'p')};  // at the bound: kept
  auto r = resolveTopologyLabels({}, env);
  EXPECT_EQ(r.problems.size(), 7u);
  EXPECT_EQ(r.labels.size(), 1u);
  EXPECT_EQ(r.labels["pod"].size(), 128u);
  for (int i = 0; i < 20; ++i) env.push_back("FABRICWATCH_TOPOLOGY_L" + std::to_string(i) + "=v");
  r = resolveTopologyLabels({}, env);
  EXPECT_EQ(r.labels.size(), 16u);
  EXPECT_EQ(r.problems.size(), 7u + 5u);
  EXPECT_NE(r.problems.back().find("at most 16"), std::string::npos) << r.problems.back();
}

// The downward API's labels file (a downwardAPI volume of the pod's labels, which node labels
// reach through PodTopologyLabels or a mutating policy, or a file an init step wrote).
TEST(TopologyLabelsTest, LabelsFileTakesTheTopologyKeysByTheirName) {
  std::vector<std::string> problems;
  auto got = topologyLabelsFromFile(
      "app.kubernetes.io/component=\"agent\"\n"
      "topology.k8s.aws/network-node-layer-1=\"nn-e50490a237cb0f01a\"\n"
      "topology.kubernetes.io/zone=\"us-east-1a\"\n"
      "network.topology.nvidia.com/leaf=\"s1\"\n"
      "topology.fabricwatch.io/rack=\"r\\\"12\"\n"
      "garbage line\n",
      config::Config::Topology{}.file_label_prefixes, &problems);
  EXPECT_EQ(got, (std::vector<std::pair<std::string, std::string>>{
                     {"network_node_layer_1", "nn-e50490a237cb0f01a"},
                     {"zone", "us-east-1a"},
                     {"leaf", "s1"}}));
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("topology.fabricwatch.io/rack"), std::string::npos);
  // Over the configuration, under the environment.
  auto r = resolveTopologyLabels({{"zone", "conf"}, {"leaf", "conf"}},
                                 {"FABRICWATCH_TOPOLOGY_LEAF=env"}, got);
  EXPECT_EQ(r.labels.at("zone"), "us-east-1a");
  EXPECT_EQ(r.labels.at("leaf"), "env");
}

TEST(TopologySourceTest, ReadsTheLabelsFileOnEveryCollection) {
  testing::TempDir dir;
  TopologyOptions o;
  o.labels_file = dir.path() + "/labels";
  auto c = TopologySource(o).collect({testing::fixture("no_rdma")});
  EXPECT_EQ(c.read_errors, 1u);  // configured but missing
  dir.write("labels", "topology.k8s.aws/network-node-layer-3=\"nn-3\"\n");
  c = TopologySource(o).collect({testing::fixture("no_rdma")});
  EXPECT_EQ(c.read_errors, 0u);
  EXPECT_EQ(c.facts.findPath("topology.labels.network_node_layer_3")->asString(), "nn-3");
}

TEST(TopologyLabelsTest, ConfigurationRefusesBadLabelsWithTheirPosition) {
  auto r = config::loadConfig("[topology.labels]\nrack = \"r12\"\nnode = \"n1\"\nleaf = \"" +
                                  std::string(200, 'x') +
                                  "\"\n[topology]\nlldpd_socket = \"run/lldpd.socket\"\n",
                              "t.toml", {});
  std::string all;
  for (const auto& d : r.problems) all += d.format() + "\n";
  EXPECT_NE(all.find("t.toml:3:"), std::string::npos) << all;
  EXPECT_NE(all.find("a label the scrape adds itself"), std::string::npos) << all;
  EXPECT_NE(all.find("t.toml:4:"), std::string::npos) << all;
  EXPECT_NE(all.find("longer than 128 bytes"), std::string::npos) << all;
  EXPECT_NE(all.find("must be an absolute path"), std::string::npos) << all;
  auto good = config::loadConfig("[topology.labels]\nrack = \"r12\"\npod = \"p3\"\n", "g.toml", {});
  EXPECT_TRUE(good.ok());
  EXPECT_EQ(good.config.topology.labels.at("rack"), "r12");
}

TEST(TopologyParseTest, SubnetPrefixIsTheGidsUpperHalf) {
  EXPECT_EQ(subnetPrefixOfGid("FE80:0000:0000:0000:946d:ae03:00a1:b2c0"), "fe80:0000:0000:0000");
  EXPECT_EQ(subnetPrefixOfGid("fe80::946d"), std::nullopt);
  EXPECT_EQ(subnetPrefixOfGid("fe80:0000:0000:0000:946d:ae03:00a1:b2cx"), std::nullopt);
}

TEST(TopologySourceTest, InfinibandPortsHaveTheirSubnetAndSubnetManager) {
  auto c = TopologySource().collect({testing::fixture("ib_ndr")});
  EXPECT_EQ(c.read_errors, 0u);
  const core::Value* nics = c.facts.findPath("topology.nics");
  ASSERT_TRUE(nics && nics->isList());
  ASSERT_EQ(nics->asList().size(), 8u);
  const core::Value& first = nics->asList().front();
  EXPECT_EQ(first.find("device")->asString(), "mlx5_0");
  EXPECT_EQ(first.find("port")->asInt(), 1);
  EXPECT_EQ(first.find("subnet_prefix")->asString(), "fe80:0000:0000:0000");
  EXPECT_EQ(first.find("lid")->asInt(), 0x1a);
  EXPECT_EQ(first.find("sm_lid")->asInt(), 1);
  EXPECT_EQ(c.facts.findPath("topology.lldp.status")->asString(), "absent");
  auto fs = renderTopology(c.facts);
  const auto* f = family(fs, "fabricwatch_topology_nic_info");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->metric.size(), 8u);
  EXPECT_EQ(label(f->metric[0], "subnet_prefix"), "fe80:0000:0000:0000");
  EXPECT_EQ(label(f->metric[0], "sm_lid"), "1");
  EXPECT_EQ(label(f->metric[0], "lid"), "26");
  EXPECT_EQ(label(f->metric[0], "switch"), "");
  EXPECT_EQ(family(fs, "fabricwatch_topology_info"), nullptr);      // no labels set
  EXPECT_EQ(family(fs, "fabricwatch_topology_lldpd_up"), nullptr);  // no lldpd
}

// EFA and RoCE ports without lldpd know nothing of their place: no series at all, so the p5's
// 32 devices cost the series budget nothing.
TEST(TopologySourceTest, NicsWithNothingKnownServeNoSeries) {
  for (const char* root : {"p5_efa", "hgx_roce", "no_rdma"}) {
    auto c = TopologySource().collect({testing::fixture(root)});
    EXPECT_TRUE(renderTopology(c.facts).empty()) << root;
  }
  auto c = TopologySource().collect({testing::fixture("hgx_roce")});
  const core::Value* nics = c.facts.findPath("topology.nics");
  ASSERT_TRUE(nics && nics->isList() && !nics->asList().empty());
  const core::Value* iface = nics->asList().front().find("interface");
  ASSERT_TRUE(iface && iface->isString()) << core::toJson(*nics);
  EXPECT_FALSE(iface->asString().empty());
}

// serve leaves the source out where it could only say that nothing is known.
TEST(TopologySourceTest, LeftOutWhereItCanFindNothing) {
  TopologyOptions none;
  EXPECT_FALSE(topologyCanFindAnything(none, testing::fixture("p5_efa")));
  EXPECT_TRUE(topologyCanFindAnything(none, testing::fixture("ib_ndr")));
  EXPECT_TRUE(topologyCanFindAnything(none, testing::fixture("hgx_roce")));
  TopologyOptions labelled;
  labelled.labels = {{"rack", "r1"}};
  EXPECT_TRUE(topologyCanFindAnything(labelled, testing::fixture("p5_efa")));
  testing::TempDir root;
  root.write("run/lldpd.socket", "");
  EXPECT_TRUE(topologyCanFindAnything(none, root.path()));
}

TEST(TopologySourceTest, LabelsBecomeTheNodesInfoSeries) {
  TopologyOptions o;
  o.labels = {{"rack", "r12"}};
  o.environment = {"FABRICWATCH_TOPOLOGY_POD=p3", "FABRICWATCH_TOPOLOGY_BAD-NAME=x"};
  auto c = TopologySource(o).collect({testing::fixture("no_rdma")});
  EXPECT_EQ(c.read_errors, 1u);
  ASSERT_EQ(c.errors.size(), 1u);
  EXPECT_NE(c.errors[0].find("FABRICWATCH_TOPOLOGY_BAD-NAME"), std::string::npos) << c.errors[0];
  auto fs = renderTopology(c.facts);
  const auto* f = family(fs, "fabricwatch_topology_info");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->metric.size(), 1u);
  EXPECT_EQ(label(f->metric[0], "rack"), "r12");
  EXPECT_EQ(label(f->metric[0], "pod"), "p3");
}

bool haveLiblldpctl() {
  void* h = ::dlopen("liblldpctl.so.4", RTLD_NOW | RTLD_LOCAL);
  return h != nullptr;  // kept loaded: the source loads it once, too
}

// A Unix socket at `path` that accepts and then does `serve` with the connection.
class FakeLldpd {
 public:
  template <typename F>
  FakeLldpd(const std::string& path, F serve) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(::listen(fd_, 4), 0);
    thread_ = std::thread([this, serve] {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      serve(c);
      ::close(c);
    });
  }
  ~FakeLldpd() {
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    ::close(fd_);
  }

 private:
  int fd_ = -1;
  std::thread thread_;
};

TEST(TopologySourceTest, NoLldpdIsNoNeighboursAndNoError) {
  testing::TempDir root;
  std::filesystem::create_directories(root.path() + "/run");
  auto c = TopologySource().collect({root.path()});
  EXPECT_EQ(c.read_errors, 0u);
  EXPECT_EQ(c.facts.findPath("topology.lldp.status")->asString(), "absent");
  // A socket left behind by an lldpd that is gone: nobody listens.
  {
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::snprintf(a.sun_path, sizeof a.sun_path, "%s/run/lldpd.socket", root.path().c_str());
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ::close(fd);
  }
  c = TopologySource().collect({root.path()});
  EXPECT_EQ(c.read_errors, 0u) << (c.errors.empty() ? "" : c.errors[0]);
  EXPECT_EQ(c.facts.findPath("topology.lldp.status")->asString(), "absent");
}

TEST(TopologySourceTest, AnLldpdThatNeverAnswersCostsAtMostTheTimeout) {
  if (!haveLiblldpctl()) FW_UNAVAILABLE("tools") << "liblldpctl.so.4 (package lldpd) is missing";
  testing::TempDir root;
  std::filesystem::create_directories(root.path() + "/run");
  FakeLldpd silent(root.path() + "/run/lldpd.socket", [](int c) {
    char b[256];
    while (::recv(c, b, sizeof b, 0) > 0) {
    }
  });
  TopologyOptions o;
  o.lldp_timeout = std::chrono::milliseconds(300);
  auto start = std::chrono::steady_clock::now();
  auto c = TopologySource(o).collect({root.path()});
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_LT(took, std::chrono::seconds(3));
  EXPECT_GE(took, std::chrono::milliseconds(300));
  EXPECT_EQ(c.facts.findPath("topology.lldp.status")->asString(), "failed");
  EXPECT_EQ(c.read_errors, 1u);
  EXPECT_NE(c.facts.findPath("topology.lldp.error")->asString().find("in time"), std::string::npos);
  auto fs = renderTopology(c.facts);
  const auto* up = family(fs, "fabricwatch_topology_lldpd_up");
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(up->metric[0].gauge.value, 0);
}

TEST(TopologySourceTest, AGarbageAnswerIsRefusedWithinItsByteBound) {
  if (!haveLiblldpctl()) FW_UNAVAILABLE("tools") << "liblldpctl.so.4 (package lldpd) is missing";
  testing::TempDir root;
  std::string sock = root.path() + "/lldpd.socket";
  for (char fill : {'\xff', '\0'}) {
    FakeLldpd garbage(sock, [fill](int c) {
      std::string junk(64 * 1024, fill);
      for (int i = 0; i < 256; ++i)
        if (::send(c, junk.data(), junk.size(), MSG_NOSIGNAL) <= 0) break;
    });
    LldpLimits limits;
    limits.max_bytes = 256 * 1024;
    limits.timeout = std::chrono::seconds(5);
    auto a = queryLldpd(sock, limits);
    EXPECT_EQ(a.status, LldpAnswer::Status::kFailed) << int(fill);
    EXPECT_TRUE(a.interfaces.empty());
    ::unlink(sock.c_str());
  }
}

}  // namespace
}  // namespace fabricwatch::facts
