// Collections after the first: the RDMA and GPU sources scan a device once while it lives and
// then re-read only what changes, through kept descriptors. These tests change a copy of a
// fixture root between collections, as the kernel changes sysfs, and check that every change
// shows and that nothing else does.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "facts/gpu_source.h"
#include "facts/kept_file.h"
#include "facts/rdma_source.h"
#include "facts/software_source.h"
#include "tests/facts/fixture_facts.h"
#include "tests/support/temp_dir.h"

namespace fabricwatch::facts {
namespace {

namespace fs = std::filesystem;

const core::Value& valueAt(const core::Value& v, std::string_view path) {
  const core::Value* p = v.findPath(path);
  if (!p) throw std::runtime_error("missing " + std::string(path));
  return *p;
}

const core::Value& deviceNamed(const core::Value& facts, std::string_view name) {
  for (const auto& d : valueAt(facts, "rdma.devices").asList()) {
    if (d.find("name")->asString() == name) return d;
  }
  throw std::runtime_error("no device " + std::string(name));
}

const core::Value& port1(const core::Value& dev) { return valueAt(dev, "ports").asList().at(0); }

// sysfs changes an attribute in place: same inode, new text.
void rewriteInPlace(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

// A copy of a fixture root to change.
struct RootCopy {
  explicit RootCopy(const std::string& name) {
    fs::copy(testing::fixture(name), dir.path(),
             fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  }
  std::string operator/(const std::string& rel) const { return dir.path() + "/" + rel; }
  const std::string& path() const { return dir.path(); }
  testing::TempDir dir;
};

// Every fixture: each collection, the first and those after it, equals what fresh sources read,
// with kept descriptors and without any (a cap of 0: every file is opened for each read).
TEST(CollectAgainTest, EveryFixtureReadsTheSameEachTime) {
  for (const auto& name : fixtureRoots()) {
    std::string root = testing::fixture(name);
    std::vector<core::Value> reference;
    for (auto& s : probes::makeNodeSources()) reference.push_back(s->collect({root}).facts);
    for (bool kept : {true, false}) {
      setKeptFileLimit(kept ? 16384 : 0);
      auto sources = probes::makeNodeSources();
      for (int round = 0; round < 3; ++round) {
        for (size_t i = 0; i < sources.size(); ++i) {
          core::Collection c = sources[i]->collect({root});
          EXPECT_EQ(c.read_errors, 0u) << name << " " << sources[i]->name();
          EXPECT_TRUE(c.facts == reference[i])
              << name << " " << sources[i]->name() << " kept=" << kept << " round " << round;
        }
      }
      if (!kept) {
        EXPECT_EQ(keptFiles(), 0u);
      }
    }
  }
  setKeptFileLimit(16384);
}

TEST(CollectAgainTest, PortStateRateCountersGidsAndLinkChangesShow) {
  RootCopy root("ib_ndr");
  RdmaSource rdma;
  auto before = rdma.collect({root.path()}).facts;
  EXPECT_EQ(valueAt(port1(deviceNamed(before, "mlx5_3")), "state").asString(), "ACTIVE");

  std::string port = root / "sys/class/infiniband/mlx5_3/ports/1/";
  rewriteInPlace(port + "state", "1: DOWN\n");
  rewriteInPlace(port + "phys_state", "2: Polling\n");
  rewriteInPlace(port + "rate", "10 Gb/sec (4X SDR)\n");
  rewriteInPlace(port + "counters/symbol_error", "42\n");
  rewriteInPlace(port + "gids/1", "fe80:0000:0000:0000:0000:0000:0000:0001\n");
  rewriteInPlace(root / "sys/class/infiniband/mlx5_3/device/current_link_width", "8\n");
  auto after = rdma.collect({root.path()}).facts;

  const auto& p = port1(deviceNamed(after, "mlx5_3"));
  EXPECT_EQ(valueAt(p, "state").asString(), "DOWN");
  EXPECT_EQ(valueAt(p, "state_code").asInt(), 1);
  EXPECT_EQ(valueAt(p, "phys_state").asString(), "Polling");
  // The placeholder rate of a link that is down is kept as text, and is no rate.
  EXPECT_EQ(valueAt(p, "rate").asString(), "10 Gb/sec (4X SDR)");
  EXPECT_EQ(p.find("rate_gbps"), nullptr);
  EXPECT_EQ(valueAt(p, "counters.symbol_error").asInt(), 42);
  bool found = false;
  for (const auto& g : valueAt(p, "gids").asList()) {
    if (valueAt(g, "index").asInt() == 1) {
      found = true;
      EXPECT_EQ(valueAt(g, "address").asString(), "fe80:0000:0000:0000:0000:0000:0000:0001");
    }
  }
  EXPECT_TRUE(found);
  const auto& dev = deviceNamed(after, "mlx5_3");
  EXPECT_EQ(valueAt(dev, "pcie.current_width").asInt(), 8);
  EXPECT_TRUE(valueAt(dev, "pcie.degraded").asBool());

  // Back up, trained at a lower rate: that rate is read.
  rewriteInPlace(port + "state", "4: ACTIVE\n");
  rewriteInPlace(port + "phys_state", "5: LinkUp\n");
  rewriteInPlace(port + "rate", "200 Gb/sec (4X HDR)\n");
  auto up = rdma.collect({root.path()}).facts;
  EXPECT_EQ(valueAt(port1(deviceNamed(up, "mlx5_3")), "rate_gbps").asDouble(), 200);
  // Nothing else moved.
  EXPECT_TRUE(deviceNamed(after, "mlx5_2") == deviceNamed(before, "mlx5_2"));
}

// Removed, added, and removed-and-added-again devices: the last is scanned anew (a firmware
// update resets the device, and the kernel creates its directory again).
TEST(CollectAgainTest, DevicesComeGoAndComeBackChanged) {
  RootCopy root("ib_ndr");
  RdmaSource rdma;
  ASSERT_EQ(valueAt(rdma.collect({root.path()}).facts, "rdma.devices").size(), 8u);
  std::string cls = root / "sys/class/infiniband/";

  fs::rename(cls + "mlx5_7", root / "mlx5_7.away");
  EXPECT_EQ(valueAt(rdma.collect({root.path()}).facts, "rdma.devices").size(), 7u);
  fs::rename(root / "mlx5_7.away", cls + "mlx5_7");
  EXPECT_EQ(valueAt(rdma.collect({root.path()}).facts, "rdma.devices").size(), 8u);

  // mlx5_0 again, with new firmware: a new directory behind the class link.
  std::string old_dir = fs::canonical(cls + "mlx5_0").string();
  std::string new_dir = old_dir + ".new";
  fs::copy(old_dir, new_dir, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  rewriteInPlace(new_dir + "/fw_ver", "28.41.1000\n");
  fs::remove(cls + "mlx5_0");
  fs::create_symlink(new_dir, cls + "mlx5_0");
  auto facts = rdma.collect({root.path()}).facts;
  EXPECT_EQ(valueAt(deviceNamed(facts, "mlx5_0"), "fw_ver").asString(), "28.41.1000");
  EXPECT_EQ(valueAt(deviceNamed(facts, "mlx5_1"), "fw_ver").asString(), "28.39.1002");
}

// A fixed attribute that cannot be read is an error on every collection, as a changing one
// is, and appears once it can be read.
TEST(CollectAgainTest, UnreadableFixedAttributeIsRetried) {
  RootCopy root("ib_ndr");
  std::string fw = root / "sys/class/infiniband/mlx5_4/fw_ver";
  fs::remove(fw);
  fs::create_directory(fw);  // read() fails with EISDIR
  RdmaSource rdma;
  for (int i = 0; i < 2; ++i) {
    core::Collection c = rdma.collect({root.path()});
    EXPECT_EQ(c.read_errors, 1u);
    EXPECT_EQ(deviceNamed(c.facts, "mlx5_4").find("fw_ver"), nullptr);
  }
  fs::remove(fw);
  rewriteInPlace(fw, "28.39.1002\n");
  core::Collection c = rdma.collect({root.path()});
  EXPECT_EQ(c.read_errors, 0u);
  EXPECT_EQ(valueAt(deviceNamed(c.facts, "mlx5_4"), "fw_ver").asString(), "28.39.1002");
}

TEST(CollectAgainTest, UnreadableCounterIsAnErrorEachTime) {
  RootCopy root("ib_ndr");
  std::string counter = root / "sys/class/infiniband/mlx5_2/ports/1/counters/symbol_error";
  fs::remove(counter);
  fs::create_directory(counter);
  RdmaSource rdma;
  EXPECT_EQ(rdma.collect({root.path()}).read_errors, 1u);
  EXPECT_EQ(rdma.collect({root.path()}).read_errors, 1u);
}

TEST(CollectAgainTest, GpuLinkChangesAndGpusThatGoAway) {
  RootCopy root("p5_efa");
  GpuSource gpu;
  auto before = gpu.collect({root.path()}).facts;
  ASSERT_EQ(valueAt(before, "gpu.count").asInt(), 8);
  const auto& g0 = valueAt(before, "gpu.devices").asList().at(0);
  std::string addr = valueAt(g0, "pci_address").asString();
  EXPECT_FALSE(valueAt(g0, "pcie.degraded").asBool());

  rewriteInPlace(root / ("sys/bus/pci/devices/" + addr + "/current_link_speed"),
                 "16.0 GT/s PCIe\n");
  auto after = gpu.collect({root.path()}).facts;
  const auto& a0 = valueAt(after, "gpu.devices").asList().at(0);
  EXPECT_EQ(valueAt(a0, "pcie.current_speed_gts").asDouble(), 16.0);
  EXPECT_TRUE(valueAt(a0, "pcie.degraded").asBool());
  EXPECT_TRUE(valueAt(a0, "nics") == valueAt(g0, "nics"));

  fs::remove(root / ("sys/bus/pci/devices/" + addr));
  EXPECT_EQ(valueAt(gpu.collect({root.path()}).facts, "gpu.count").asInt(), 7);
}

// dpkg replaces its status file by rename; installing a library changes its directory. Both
// show on the next collection, though the software source reads neither again while unchanged.
TEST(CollectAgainTest, SoftwareSeesPackageAndLibraryChanges) {
  RootCopy root("ib_ndr");
  SoftwareSource sw;
  auto before = sw.collect({root.path()}).facts;
  EXPECT_EQ(valueAt(before, "software.rdma_core.version").asString(), "2307mlnx47-1.2310036");
  EXPECT_EQ(valueAt(before, "software.nccl.version").asString(), "2.21.5");

  std::string status = root / "var/lib/dpkg/status";
  std::ifstream in(status);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t at_version = text.find("2307mlnx47-1.2310036");
  ASSERT_NE(at_version, std::string::npos);
  text.replace(at_version, 20, "2404mlnx51-1.2404066");
  rewriteInPlace(status + "-new", text);
  fs::rename(status + "-new", status);
  std::string lib = root / "usr/lib/x86_64-linux-gnu/";
  fs::remove(lib + "libnccl.so.2.21.5");
  rewriteInPlace(lib + "libnccl.so.2.23.4", "");

  auto after = sw.collect({root.path()}).facts;
  EXPECT_EQ(valueAt(after, "software.rdma_core.version").asString(), "2404mlnx51-1.2404066");
  EXPECT_EQ(valueAt(after, "software.nccl.version").asString(), "2.23.4");
  fs::remove(status);
  EXPECT_EQ(sw.collect({root.path()}).facts.findPath("software.rdma_core"), nullptr);
}

// One source object serving another host root (a test harness, a reload) starts afresh.
TEST(CollectAgainTest, AnotherRootIsScannedAfresh) {
  RdmaSource rdma;
  EXPECT_EQ(valueAt(rdma.collect({testing::fixture("ib_ndr")}).facts, "rdma.devices").size(), 8u);
  EXPECT_EQ(valueAt(rdma.collect({testing::fixture("p5_efa")}).facts, "rdma.devices").size(), 32u);
  EXPECT_EQ(valueAt(rdma.collect({testing::fixture("no_rdma")}).facts, "rdma.devices").size(), 0u);
}

}  // namespace
}  // namespace fabricwatch::facts
