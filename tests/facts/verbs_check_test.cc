// libibverbs' view against sysfs' (verbs_check.h), on the roce_v2 fixture's rdma facts as the
// rdma source reads them: a query that says what sysfs says agrees; each field that differs is
// reported once, by name. Also the names libibverbs' codes get, the verbs document's paths
// against docs/facts.md, and the source itself on this machine (no RDMA: the clean no-devices
// path, through the real libibverbs).
#include "facts/verbs_check.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "core/snapshot.h"
#include "core/value_format.h"
#include "facts/rdma_source.h"
#include "facts/verbs_source.h"
#include "tests/support/paths.h"

namespace fabricwatch::facts {
namespace {

core::Value sysfsDevices(const std::string& fixture) {
  RdmaSource rdma;
  core::Collection c = rdma.collect({testing::fixture(fixture)});
  return *c.facts.findPath("rdma.devices");
}

// What libibverbs would say about roce_v2's mlx5_0 (sysfs: fw 22.36.1010, node_guid
// b8ce:f603:004c:210a, port 1 ACTIVE/LinkUp, Ethernet, "100 Gb/sec (2X HDR)", lid 0, four GIDs).
VerbsQuery roceV2() {
  VerbsDevice d;
  d.name = "mlx5_0";
  d.node_type = 1;
  d.fw_ver = "22.36.1010";
  d.node_guid = 0xb8cef603004c210aull;
  d.phys_port_cnt = 1;
  VerbsPort p;
  p.port = 1;
  p.state = 4;
  p.phys_state = 5;
  p.active_mtu = 5;
  p.max_mtu = 5;
  p.active_width = 16;  // 2X
  p.active_speed = 64;  // HDR
  p.link_layer = 2;
  p.gid_table_len = 255;
  p.gid_query = "ibv_query_gid_ex";
  const uint8_t ll[] = {0xfe, 0x80, 0,    0,    0,    0,    0,    0,
                        0xba, 0xce, 0xf6, 0xff, 0xfe, 0x4c, 0x21, 0x0a};
  const uint8_t v4[] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0x0a, 0x00, 0x01, 0x05};
  for (uint32_t i = 0; i < 4; ++i) {
    VerbsGid g;
    g.index = i;
    std::copy(i < 2 ? ll : v4, (i < 2 ? ll : v4) + 16, g.raw);
    g.type = i % 2 ? 2 : 1;
    p.gids.push_back(g);
  }
  d.ports.push_back(p);
  VerbsDevice other;  // mlx5_1: libibverbs could not open it, so it is not compared
  other.name = "mlx5_1";
  other.error = "ibv_open_device: Permission denied";
  VerbsQuery q;
  q.listed = true;
  q.devices = {d, other};
  return q;
}

std::set<std::string> fields(const std::vector<Disagreement>& d) {
  std::set<std::string> out;
  for (const auto& x : d) out.insert(x.device + ":" + std::to_string(x.port) + ":" + x.field);
  return out;
}

TEST(VerbsCheckTest, AQueryThatSaysWhatSysfsSaysAgrees) {
  auto d = crossCheck(roceV2(), sysfsDevices("roce_v2"));
  EXPECT_TRUE(d.empty()) << d.front().field << ": verbs " << d.front().verbs << ", sysfs "
                         << d.front().sysfs;
}

TEST(VerbsCheckTest, EachDifferingFieldIsReported) {
  VerbsQuery q = roceV2();
  VerbsPort& p = q.devices[0].ports[0];
  p.state = 1;         // DOWN
  p.active_width = 2;  // 4X
  p.sm_lid = 7;
  p.gids[3].type = 1;     // RoCE v1 where sysfs says v2
  p.gids[2].raw[15] = 6;  // another address
  p.gids.pop_back();      // index 3 unused per libibverbs
  q.devices[0].fw_ver = "22.36.1000";
  auto d = crossCheck(q, sysfsDevices("roce_v2"));
  EXPECT_EQ(fields(d), (std::set<std::string>{"mlx5_0:0:fw_ver", "mlx5_0:1:state", "mlx5_0:1:rate",
                                              "mlx5_0:1:sm_lid", "mlx5_0:1:gid"}))
      << d.size();
  for (const auto& x : d) {
    if (x.field == "rate") {
      EXPECT_EQ(x.verbs, "4X HDR");
      EXPECT_EQ(x.sysfs, "2X HDR");
    }
    if (x.field == "state") {
      EXPECT_EQ(x.verbs, "DOWN");
      EXPECT_EQ(x.sysfs, "ACTIVE");
    }
  }
  // Two GID disagreements: index 2's address, and index 3 unused on one side only.
  EXPECT_EQ(std::count_if(d.begin(), d.end(), [](const auto& x) { return x.field == "gid"; }), 2);
}

TEST(VerbsCheckTest, DevicesOnOneSideOnly) {
  // Sysfs lists two devices libibverbs does not: no /dev/infiniband in the container, say.
  VerbsQuery none;
  none.listed = true;
  auto d = crossCheck(none, sysfsDevices("roce_v2"));
  EXPECT_EQ(fields(d), (std::set<std::string>{"mlx5_0:0:device", "mlx5_1:0:device"}));
  EXPECT_EQ(d[0].verbs, "absent");
  EXPECT_EQ(d[0].sysfs, "present");
  // And one libibverbs lists that sysfs does not have.
  VerbsQuery extra = roceV2();
  extra.devices[0].name = "rxe0";
  d = crossCheck(extra, sysfsDevices("roce_v2"));
  EXPECT_TRUE(fields(d).count("rxe0:0:device"));
  EXPECT_TRUE(fields(d).count("mlx5_0:0:device"));
}

TEST(VerbsCheckTest, Names) {
  EXPECT_EQ(verbsPortStateName(4), "ACTIVE");
  EXPECT_EQ(verbsPhysStateName(5), "LinkUp");
  EXPECT_EQ(verbsPhysStateName(7), "Phy Test");
  EXPECT_EQ(verbsMtuBytes(5), 4096);
  EXPECT_EQ(verbsMtuBytes(1), 256);
  EXPECT_EQ(verbsMtuBytes(0), 0);
  EXPECT_EQ(verbsWidthName(2), "4X");
  EXPECT_EQ(verbsSpeedName(128), "NDR");
  EXPECT_EQ(verbsRateGbps(2, 128), 400);  // sysfs: "400 Gb/sec (4X NDR)"
  EXPECT_EQ(verbsRateGbps(2, 32), 100);   // "100 Gb/sec (4X EDR)"
  EXPECT_EQ(verbsRateGbps(1, 1), 2.5);
  EXPECT_EQ(verbsLinkLayerName(1), "InfiniBand");
  // IBV_LINK_LAYER_UNSPECIFIED (EFA): sysfs's link_layer prints "Unknown" for it.
  EXPECT_EQ(verbsLinkLayerName(0), "Unknown");
  EXPECT_EQ(verbsNodeTypeName(4), "RNIC");
  EXPECT_EQ(verbsGuid(0x0c42a10300b49a5cull), "0c42:a103:00b4:9a5c");
  EXPECT_EQ(verbsGidTypeName(2), "RoCE v2");
  EXPECT_EQ(verbsGidTypeName(-1), "");
}

// The rows of docs/facts.md's verbs table.
std::set<std::string> documentedVerbsPaths() {
  std::ifstream in(testing::sourceDir() + "/docs/facts.md");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string doc = ss.str();
  size_t b = doc.find("<!-- schema-verbs:begin -->"), e = doc.find("<!-- schema-verbs:end -->");
  std::set<std::string> out;
  if (b == std::string::npos || e == std::string::npos) return out;
  std::istringstream rows(doc.substr(b, e - b));
  for (std::string line; std::getline(rows, line);) {
    size_t p1 = line.find('`'), p2 = line.find('`', p1 + 1);
    if (line.rfind("| `", 0) == 0 && p2 != std::string::npos)
      out.insert(line.substr(p1 + 1, p2 - p1 - 1));
  }
  return out;
}

// Every path, as the schema writes them: a list's map elements have no row of their own.
void paths(const core::Value& v, const std::string& path, std::set<std::string>& out,
           bool element = false) {
  if (!path.empty() && !(element && v.isMap())) out.insert(path);
  if (v.isList())
    for (const auto& e : v.asList()) paths(e, path + "[]", out, true);
  if (v.isMap())
    for (const auto& [k, c] : v.asMap()) paths(c, path.empty() ? k : path + "." + k, out);
}

TEST(VerbsCheckTest, TheDevicePathsAreTheDocumentedOnes) {
  // No fixture can produce them (libibverbs reads the live machine): the facts of a query with
  // a device, a failed device, a disagreement and a warning stand in.
  VerbsQuery q = roceV2();
  q.warnings = {"libibverbs: Warning: couldn't load driver 'libmlx4-rdmav34.so'"};
  q.error = "ibv_get_device_list: Permission denied";
  q.note = "the kernel has no RDMA devices";
  q.devices[0].ports.push_back({});
  q.devices[0].ports.back().port = 2;
  q.devices[0].ports.back().error = "ibv_query_port: Invalid argument";
  auto dis = crossCheck(q, sysfsDevices("roce_v2"));
  core::Value v = core::Value::map();
  v["verbs"] = verbsFacts(q, dis);
  v["verbs"]["compared"] = true;
  v["verbs"]["reason"] = "";
  std::set<std::string> produced;
  paths(v, "", produced);
  auto documented = documentedVerbsPaths();
  ASSERT_FALSE(documented.empty());
  for (const auto& p : produced) EXPECT_TRUE(documented.count(p)) << p << " is not documented";
  for (const auto& p : documented) EXPECT_TRUE(produced.count(p)) << p << " is never produced";
}

TEST(VerbsSourceTest, ThisMachineThroughTheRealLibibverbs) {
  VerbsSource s;
  core::Collection c = s.collect({"/"});
  const core::Value* v = c.facts.find("verbs");
  ASSERT_TRUE(v);
  ASSERT_TRUE(v->find("compared")->asBool()) << core::toJson(*v);
  const core::Value* devices = v->find("devices");
  ASSERT_TRUE(devices && devices->isList());
  if (!devices->asList().empty()) GTEST_SKIP() << "this machine has RDMA devices";
  // No RDMA here: a clean "no devices", nothing printed, no read error, nothing disagreeing.
  EXPECT_EQ(c.read_errors, 0u);
  EXPECT_TRUE(v->find("warnings")->asList().empty());
  EXPECT_TRUE(v->find("disagreements")->asList().empty());
  core::Snapshot snap;
  snap.facts = c.facts;
  core::MetricFamilies out;
  s.renderMetrics(snap, out);
  ASSERT_FALSE(out.empty());
  EXPECT_EQ(out[0].name, "fabricwatch_verbs_devices");
  EXPECT_EQ(out[0].metric[0].gauge.value, 0);
}

TEST(VerbsSourceTest, ARootWithAnotherSysfsIsNotCompared) {
  VerbsSource s;
  core::Collection c = s.collect({testing::fixture("ib_ndr")});
  const core::Value* v = c.facts.find("verbs");
  ASSERT_TRUE(v);
  EXPECT_FALSE(v->find("compared")->asBool());
  EXPECT_EQ(v->find("reason")->asString(),
            "libibverbs reads this machine's /sys/class/infiniband, not the host root's");
  EXPECT_FALSE(v->find("devices"));
}

}  // namespace
}  // namespace fabricwatch::facts
