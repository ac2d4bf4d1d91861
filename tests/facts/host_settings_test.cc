// The host settings that leave every port ACTIVE and yet halve or break GPUDirect RDMA (issue
// 22), as the node sources read them from the HGX RoCE fixture roots: the clean node and its
// variants with one setting wrong each.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/facts/fixture_facts.h"
#include "tests/support/temp_dir.h"

namespace fabricwatch::facts {
namespace {

const core::Value& factAt(const core::Value& v, std::string_view path) {
  const core::Value* p = v.findPath(path);
  if (!p) throw std::runtime_error("missing " + std::string(path));
  return *p;
}

const core::Value& firstPortOf(const core::Value& facts, std::string_view device) {
  for (const auto& d : factAt(facts, "rdma.devices").asList())
    if (d.find("name")->asString() == device) return d.find("ports")->asList().at(0);
  throw std::runtime_error("no device " + std::string(device));
}

TEST(HostSettingsTest, RoceMtuFollowsTheNetDevice) {
  auto clean = collectFixture("hgx_roce");
  EXPECT_EQ(clean.read_errors, 0u) << (clean.errors.empty() ? "" : clean.errors[0]);
  const auto& p0 = firstPortOf(clean.facts, "mlx5_0");
  EXPECT_EQ(factAt(p0, "mtu_netdev").asString(), "eth1");
  EXPECT_EQ(factAt(p0, "netdev_mtu").asInt(), 9000);
  EXPECT_EQ(factAt(p0, "active_mtu").asInt(), 4096);
  auto faulty = collectFixture("hgx_roce_mtu").facts;
  const auto& p3 = firstPortOf(faulty, "mlx5_3");
  EXPECT_EQ(factAt(p3, "mtu_netdev").asString(), "eth4");
  EXPECT_EQ(factAt(p3, "netdev_mtu").asInt(), 1500);
  EXPECT_EQ(factAt(p3, "active_mtu").asInt(), 1024);
  // InfiniBand and EFA ports follow no net device; iWARP runs over TCP.
  auto ib = collectFixture("ib_ndr").facts;
  EXPECT_EQ(firstPortOf(ib, "mlx5_0").find("active_mtu"), nullptr);
  auto iwarp = collectFixture("erdma").facts;
  EXPECT_EQ(firstPortOf(iwarp, "erdma_0").find("netdev_mtu"), nullptr);
  // RoCE over a VLAN (ConnectX-3 port 2): its own function's net device, ens5p2.
  auto legacy = collectFixture("legacy_bond").facts;
  const auto& mlx4 = factAt(legacy, "rdma.devices").asList().at(1).find("ports")->asList().at(1);
  EXPECT_EQ(factAt(mlx4, "mtu_netdev").asString(), "ens5p2");
  EXPECT_EQ(factAt(mlx4, "active_mtu").asInt(), 1024);
}

TEST(HostSettingsTest, ARoceNetDeviceWithoutMtuLeavesTheMtuAbsent) {
  testing::TempDir root;
  std::string dev = "sys/class/infiniband/mlx5_0";
  root.write(dev + "/node_type", "1: CA\n");
  root.write(dev + "/ports/1/link_layer", "Ethernet\n");
  root.write(dev + "/ports/1/state", "4: ACTIVE\n");
  root.write(dev + "/ports/1/gids/0", "fe80:0000:0000:0000:ba3f:d2ff:fe8a:102c\n");
  root.write(dev + "/ports/1/gid_attrs/types/0", "RoCE v2\n");
  root.write(dev + "/ports/1/gid_attrs/ndevs/0", "../../etc\n");  // no interface name
  auto f = collectRoot(root.path());
  const auto& p = firstPortOf(f.facts, "mlx5_0");
  EXPECT_EQ(p.find("mtu_netdev"), nullptr);
  EXPECT_EQ(p.find("netdev_mtu"), nullptr);
  root.write(dev + "/ports/1/gid_attrs/ndevs/0", "eth1\n");  // named, but no such interface
  f = collectRoot(root.path());
  EXPECT_EQ(factAt(firstPortOf(f.facts, "mlx5_0"), "mtu_netdev").asString(), "eth1");
  EXPECT_EQ(firstPortOf(f.facts, "mlx5_0").find("netdev_mtu"), nullptr);
}

TEST(HostSettingsTest, NvSwitchesAndFabricManager) {
  auto clean = collectFixture("hgx_roce").facts;
  const auto& sw = factAt(clean, "gpu.nvswitches");
  ASSERT_EQ(sw.size(), 4u);
  EXPECT_EQ(factAt(sw.asList().at(0), "pci_address").asString(), "0000:07:00.0");
  EXPECT_EQ(factAt(sw.asList().at(0), "device").asString(), "0x22a3");
  EXPECT_EQ(factAt(clean, "gpu.count").asInt(), 8);  // an NVSwitch is no GPU
  EXPECT_TRUE(factAt(clean, "gpu.fabric_manager.running").asBool());
  EXPECT_EQ(factAt(clean, "gpu.fabric_manager.pid").asInt(), 2817);
  EXPECT_EQ(factAt(clean, "gpu.fabric_manager.processes").asInt(), 7);
  auto faulty = collectFixture("hgx_no_fabric_manager").facts;
  EXPECT_FALSE(factAt(faulty, "gpu.fabric_manager.running").asBool());
  EXPECT_EQ(faulty.findPath("gpu.fabric_manager.pid"), nullptr);
  EXPECT_EQ(factAt(faulty, "gpu.fabric_manager.processes").asInt(), 6);
  // A p5.48xlarge sees its baseboard's four NVSwitches, and Fabric Manager runs there too.
  auto p5 = collectFixture("p5_efa").facts;
  EXPECT_EQ(factAt(p5, "gpu.nvswitches").size(), 4u);
  EXPECT_EQ(factAt(p5, "gpu.count").asInt(), 8);
  EXPECT_TRUE(factAt(p5, "gpu.fabric_manager.running").asBool());
  EXPECT_EQ(factAt(p5, "gpu.fabric_manager.processes").asInt(), 6);
  // No NVSwitch: no process is looked at (roce_v2 has a /proc), and the list is empty.
  auto roce = collectFixture("roce_v2").facts;
  EXPECT_EQ(factAt(roce, "gpu.nvswitches").size(), 0u);
  EXPECT_EQ(roce.findPath("gpu.fabric_manager"), nullptr);
}

TEST(HostSettingsTest, WithoutProcessesFabricManagerIsAbsentNotStopped) {
  testing::TempDir root;
  std::string sw = "sys/devices/pci0000:04/0000:04:01.0/0000:05:00.0";
  root.write(sw + "/vendor", "0x10de\n");
  root.write(sw + "/device", "0x1af1\n");
  root.write(sw + "/class", "0x068000\n");
  std::filesystem::create_directories(root.path() + "/sys/bus/pci/devices");
  std::filesystem::create_symlink("../../../devices/pci0000:04/0000:04:01.0/0000:05:00.0",
                                  root.path() + "/sys/bus/pci/devices/0000:05:00.0");
  auto f = collectRoot(root.path()).facts;
  ASSERT_EQ(factAt(f, "gpu.nvswitches").size(), 1u);
  EXPECT_EQ(f.findPath("gpu.fabric_manager"), nullptr);
  // With processes to see, a comm the kernel cut to 15 characters counts.
  root.write("proc/1/comm", "systemd\n");
  root.write("proc/99/comm", "nv-fabricmanage\n");
  root.write("proc/self/comm", "fabricwatch\n");  // not a process directory of its own
  f = collectRoot(root.path()).facts;
  EXPECT_TRUE(factAt(f, "gpu.fabric_manager.running").asBool());
  EXPECT_EQ(factAt(f, "gpu.fabric_manager.pid").asInt(), 99);
  EXPECT_EQ(factAt(f, "gpu.fabric_manager.processes").asInt(), 2);
}

TEST(HostSettingsTest, IommuGroupsByTypeAndTheCommandLine) {
  auto clean = collectFixture("hgx_roce").facts;
  // A group per PCI function: 8 GPUs, 8 NICs, 4 NVSwitches and eth0.
  EXPECT_EQ(factAt(clean, "kernel.iommu.groups").asInt(), 21);
  EXPECT_EQ(factAt(clean, "kernel.iommu.types.identity").asInt(), 21);
  const auto& cmd = factAt(clean, "kernel.iommu.cmdline").asList();
  ASSERT_EQ(cmd.size(), 2u);
  EXPECT_EQ(cmd[1].asString(), "iommu=pt");
  auto dma = collectFixture("hgx_iommu_dma").facts;
  EXPECT_EQ(factAt(dma, "kernel.iommu.types.DMA-FQ").asInt(), 21);
  EXPECT_EQ(dma.findPath("kernel.iommu.types.identity"), nullptr);
  EXPECT_EQ(factAt(dma, "kernel.iommu.cmdline").size(), 1u);
  // A 5.10 kernel names no type; a virtual machine without an IOMMU has no group (the
  // fixture's README stands in for the empty directory and is no group).
  auto roce = collectFixture("roce_v2").facts;
  EXPECT_EQ(factAt(roce, "kernel.iommu.groups").asInt(), 4);
  EXPECT_EQ(factAt(roce, "kernel.iommu.types").size(), 0u);
  auto p5 = collectFixture("p5_efa").facts;
  EXPECT_EQ(factAt(p5, "kernel.iommu.groups").asInt(), 0);
  EXPECT_EQ(factAt(p5, "kernel.iommu.cmdline").size(), 0u);
  // Without the directory the fact is absent, not "no IOMMU".
  EXPECT_EQ(collectFixture("legacy_bond").facts.findPath("kernel.iommu"), nullptr);
}

const core::Value* bridgeAt(const core::Value& facts, std::string_view address) {
  for (const auto& b : factAt(facts, "gpu.pci_bridges").asList())
    if (b.find("pci_address")->asString() == address) return &b;
  return nullptr;
}

TEST(HostSettingsTest, AcsOfTheBridgesBetweenEachGpuAndItsNic) {
  auto clean = collectFixture("hgx_roce");
  EXPECT_EQ(clean.read_errors, 0u) << (clean.errors.empty() ? "" : clean.errors[0]);
  const auto& g0 = factAt(clean.facts, "gpu.devices").asList().at(0);
  const auto& path = factAt(g0, "nic_paths").asList().at(0);
  EXPECT_EQ(factAt(path, "nic").asString(), "mlx5_0");
  ASSERT_EQ(factAt(path, "bridges").size(), 2u);
  EXPECT_EQ(factAt(path, "bridges").asList().at(0).asString(), "0000:12:01.0");  // the GPU's port
  EXPECT_EQ(factAt(clean.facts, "gpu.pci_bridges").size(), 16u);
  const auto* down = bridgeAt(clean.facts, "0000:12:00.0");
  ASSERT_TRUE(down);
  EXPECT_TRUE(factAt(*down, "config_extended").asBool());
  EXPECT_TRUE(factAt(*down, "acs_capability").asBool());
  EXPECT_EQ(factAt(*down, "acs_control").asInt(), 0);
  EXPECT_EQ(factAt(*down, "acs_redirect").size(), 0u);
  auto faulty = collectFixture("hgx_acs").facts;
  const auto* on = bridgeAt(faulty, "0000:12:00.0");
  ASSERT_TRUE(on);
  EXPECT_EQ(factAt(*on, "acs_control").asInt(), 0x1d);
  EXPECT_EQ(factAt(*on, "acs_redirect").size(), 3u);
  // A virtual machine's bridges carry no ACS capability.
  auto p5 = collectFixture("p5_efa").facts;
  EXPECT_EQ(factAt(p5, "gpu.pci_bridges").size(), 40u);  // 8 switches: 4 NIC ports + 1 GPU port
  EXPECT_FALSE(factAt(*bridgeAt(p5, "0000:12:00.0"), "acs_capability").asBool());
}

TEST(HostSettingsTest, AConfigSpaceCutAtItsHeaderIsUnknownNotClean) {
  testing::TempDir root;
  std::filesystem::copy(
      testing::fixture("hgx_roce"), root.path(),
      std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
  // What a reader without CAP_SYS_ADMIN gets: the first 64 bytes.
  std::string sw = root.path() + "/sys/devices/pci0000:10/0000:10:01.0/0000:11:00.0/";
  std::filesystem::resize_file(sw + "0000:12:00.0/config", 64);
  std::filesystem::remove(sw + "0000:12:01.0/config");
  auto f = collectRoot(root.path());
  EXPECT_EQ(f.read_errors, 0u) << (f.errors.empty() ? "" : f.errors[0]);
  const auto* cut = bridgeAt(f.facts, "0000:12:00.0");
  ASSERT_TRUE(cut);
  EXPECT_FALSE(factAt(*cut, "config_extended").asBool());
  EXPECT_EQ(cut->find("acs_redirect"), nullptr);
  const auto* none = bridgeAt(f.facts, "0000:12:01.0");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->find("config_extended"), nullptr);
  EXPECT_EQ(none->size(), 1u);
}

const core::Value& interfaceNamed(const core::Value& facts, std::string_view name) {
  for (const auto& i : factAt(facts, "net.interfaces").asList())
    if (i.find("name")->asString() == name) return i;
  throw std::runtime_error("no interface " + std::string(name));
}

TEST(HostSettingsTest, EcnPerPriorityOfTheRoceNetDevices) {
  auto clean = collectFixture("hgx_roce").facts;
  const auto& eth1 = interfaceNamed(clean, "eth1");
  EXPECT_TRUE(factAt(eth1, "ecn.roce_np.4").asBool());
  EXPECT_TRUE(factAt(eth1, "ecn.roce_rp.4").asBool());
  EXPECT_EQ(factAt(eth1, "ecn.roce_rp").size(), 8u);
  auto off = collectFixture("hgx_ecn_off").facts;
  const auto& eth4 = interfaceNamed(off, "eth4");
  EXPECT_TRUE(factAt(eth4, "ecn.roce_np.3").asBool());
  EXPECT_FALSE(factAt(eth4, "ecn.roce_np.4").asBool());
  EXPECT_FALSE(factAt(eth4, "ecn.roce_rp.4").asBool());
  // Other drivers show no switches: the fact is absent.
  EXPECT_EQ(interfaceNamed(clean, "eth0").find("ecn"), nullptr);
}

}  // namespace
}  // namespace fabricwatch::facts
