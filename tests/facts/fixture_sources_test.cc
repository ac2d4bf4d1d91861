// The node sources on the fixture roots (tests/fixtures/*, made by generate_fixtures.py), each
// modelled on a real machine type, and on broken variants.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

#include "facts/kernel_source.h"
#include "facts/rdma_source.h"
#include "facts/workload_source.h"
#include "tests/facts/fixture_facts.h"
#include "tests/support/temp_dir.h"

namespace fabricwatch::facts {
namespace {

const core::Value& at(const core::Value& v, std::string_view path) {
  const core::Value* p = v.findPath(path);
  if (!p) throw std::runtime_error("missing " + std::string(path));
  return *p;
}
const core::Value& idx(const core::Value& list, size_t i) { return list.asList().at(i); }
std::string str(const core::Value& v, std::string_view key) { return at(v, key).asString(); }

const core::Value* device(const core::Value& facts, std::string_view name) {
  for (const auto& d : at(facts, "rdma.devices").asList()) {
    if (d.find("name")->asString() == name) return &d;
  }
  return nullptr;
}

TEST(FixtureSourcesTest, EveryFixtureReadsWithoutErrors) {
  for (const auto& name : fixtureRoots()) {
    auto f = collectFixture(name);
    EXPECT_EQ(f.read_errors, 0u) << name << ": " << (f.errors.empty() ? "" : f.errors[0]);
    // gpud's class testdata has no /proc.
    EXPECT_EQ(f.facts.findPath("kernel.release") != nullptr, name != "h100_class_only") << name;
  }
}

TEST(FixtureSourcesTest, InfiniBandNdrNode) {
  auto f = collectFixture("ib_ndr").facts;
  const auto& devs = at(f, "rdma.devices");
  ASSERT_EQ(devs.size(), 8u);
  for (size_t i = 0; i < 8; ++i) {
    const auto& d = idx(devs, i);
    EXPECT_EQ(str(d, "name"), "mlx5_" + std::to_string(i));
    EXPECT_EQ(str(d, "kind"), "mlx5");
    EXPECT_EQ(str(d, "hca_type"), "MT4129");
    EXPECT_EQ(str(d, "node_type"), "CA");
    EXPECT_EQ(at(d, "numa_node").asInt(), i < 4 ? 0 : 1);
    const auto& p = idx(at(d, "ports"), 0);
    EXPECT_EQ(str(p, "state"), "ACTIVE");
    EXPECT_EQ(at(p, "state_code").asInt(), 4);
    EXPECT_EQ(str(p, "phys_state"), "LinkUp");
    EXPECT_EQ(str(p, "rate"), "400 Gb/sec (4X NDR)");
    EXPECT_EQ(at(p, "rate_gbps").asDouble(), 400.0);
    EXPECT_EQ(str(p, "link_layer"), "InfiniBand");
    EXPECT_EQ(at(p, "lid").asInt(), 0x1a + static_cast<int64_t>(i));
    EXPECT_EQ(at(p, "gids").size(), 1u);  // the zero entry is skipped
    EXPECT_EQ(at(p, "counters.port_xmit_data").asInt(), 91837429384);
    EXPECT_EQ(p.find("hw_counters")->find("lifespan"), nullptr);
    EXPECT_FALSE(at(d, "pcie.degraded").asBool());
  }
  EXPECT_EQ(at(idx(at(idx(devs, 0), "ports"), 0), "netdevs").asList().at(0).asString(), "ibp16s0");
  EXPECT_EQ(at(f, "gpu.count").asInt(), 8);
  const auto& g0 = idx(at(f, "gpu.devices"), 0);
  EXPECT_EQ(str(g0, "nic_locality"), "pci_switch");
  ASSERT_EQ(at(g0, "nics").size(), 1u);
  EXPECT_EQ(idx(at(g0, "nics"), 0).asString(), "mlx5_0");
  EXPECT_TRUE(at(f, "kernel.memory_peers").asBool());
  EXPECT_EQ(idx(at(f, "kernel.modules"), 0).asString(), "nvidia_peermem");
  EXPECT_EQ(str(f, "software.nccl.version"), "2.21.5");
  EXPECT_EQ(str(at(f, "nccl.settings"), "NCCL_IB_GID_INDEX.source"), "/etc/nccl.conf:4");
  EXPECT_EQ(str(at(f, "nccl.settings"), "NCCL_IB_GID_INDEX.value"), "0");
  EXPECT_TRUE(at(f, "limits.memlock.unlimited").asBool());
}

TEST(FixtureSourcesTest, RoceV2NodeHasBothGidTypesPerAddress) {
  auto f = collectFixture("roce_v2").facts;
  const auto* d = device(f, "mlx5_0");
  ASSERT_TRUE(d);
  const auto& p = idx(at(*d, "ports"), 0);
  EXPECT_EQ(str(p, "link_layer"), "Ethernet");
  const auto& gids = at(p, "gids");
  ASSERT_EQ(gids.size(), 4u);
  EXPECT_EQ(str(idx(gids, 2), "type"), "IB/RoCE v1");
  EXPECT_EQ(str(idx(gids, 3), "type"), "RoCE v2");
  EXPECT_EQ(str(idx(gids, 3), "address"), "0000:0000:0000:0000:0000:ffff:0a00:0105");
  EXPECT_EQ(str(idx(gids, 1), "address").substr(0, 4), "fe80");
  EXPECT_EQ(str(idx(gids, 3), "ndev"), "ens1f0np0");
  EXPECT_EQ(at(p, "netdevs").size(), 1u);
  EXPECT_EQ(at(p, "hw_counters.np_cnp_sent").asInt(), 48213);
  EXPECT_EQ(at(p, "hw_counters.roce_adp_retrans").asInt(), 17);
  const auto& ifs = at(f, "net.interfaces");
  EXPECT_EQ(str(idx(ifs, 0), "pci_address"), str(*d, "pci_address"));
  EXPECT_EQ(at(idx(ifs, 0), "mtu").asInt(), 4200);
  EXPECT_EQ(idx(at(idx(ifs, 0), "addresses"), 0).asString(), "fe80::bace:f6ff:fe4c:210a");
  EXPECT_EQ(at(f, "limits.memlock.soft_bytes").asInt(), 65536);
}

// Modelled on node_exporter's sysfs fixture: an i40iw iWARP port whose counters read
// "N/A (no PMA)" (absent, not read errors), a ConnectX-3 port with counters_ext, an 802.3ad bond
// (and the bonding driver's bonding_masters file, which is no interface), a u64 memlock limit.
TEST(FixtureSourcesTest, LegacyNodeCountersNotAvailableAreAbsentNotErrors) {
  core::Collection c = RdmaSource().collect({testing::fixture("legacy_bond")});
  EXPECT_EQ(c.read_errors, 0u) << (c.errors.empty() ? "" : c.errors[0]);
  const auto* iw = device(c.facts, "i40iw0");
  ASSERT_TRUE(iw);
  const auto& p = idx(at(*iw, "ports"), 0);
  EXPECT_EQ(at(p, "counters").size(), 0u);  // every counter is N/A: none is reported
  EXPECT_EQ(str(p, "state"), "ACTIVE");
}

TEST(FixtureSourcesTest, LegacyNodeReadsCountersExt) {
  auto f = collectFixture("legacy_bond").facts;
  const auto* d = device(f, "mlx4_0");
  ASSERT_TRUE(d);
  const auto& p1 = idx(at(*d, "ports"), 0);
  EXPECT_EQ(at(p1, "counters_ext.port_xmit_data_64").asInt(), 3733440);
  EXPECT_EQ(at(p1, "counters_ext.port_rcv_packets_64").asInt(), 0);
  EXPECT_EQ(at(p1, "counters.port_xmit_wait").asInt(), 4294967295);
  EXPECT_EQ(at(p1, "counters.port_rcv_packets").asInt(), 6825908347);
}

TEST(FixtureSourcesTest, LegacyNodeBondsAndNoBondingMastersInterface) {
  auto f = collectFixture("legacy_bond").facts;
  std::vector<std::string> names;
  const core::Value* bond = nullptr;
  for (const auto& i : at(f, "net.interfaces").asList()) {
    names.push_back(str(i, "name"));
    if (str(i, "name") == "bond0") bond = &i;
  }
  EXPECT_EQ(std::count(names.begin(), names.end(), "bonding_masters"), 0) << names.size();
  ASSERT_TRUE(bond);
  EXPECT_EQ(str(*bond, "bond.mode"), "802.3ad");
  EXPECT_EQ(at(*bond, "bond.mode_code").asInt(), 4);
  ASSERT_EQ(at(*bond, "bond.slaves").size(), 2u);
  EXPECT_EQ(idx(at(*bond, "bond.slaves"), 1).asString(), "eno2");
  EXPECT_EQ(str(*bond, "bond.mii_status"), "up");
  EXPECT_EQ(at(*bond, "speed_mbps").asInt(), 20000);
  EXPECT_EQ(bond->find("pci_address"), nullptr);
}

TEST(FixtureSourcesTest, LegacyNodeMemlockAboveInt64IsNotClamped) {
  auto f = collectFixture("legacy_bond").facts;
  const auto& soft = at(f, "limits.memlock.soft_bytes");
  ASSERT_TRUE(soft.isDouble());
  EXPECT_EQ(soft.asDouble(), 18446744073708503040.0);
  EXPECT_FALSE(at(f, "limits.memlock.unlimited").asBool());
}

TEST(FixtureSourcesTest, P5NodeHas32EfaDevicesAndHugepages) {
  auto f = collectFixture("p5_efa").facts;
  const auto& devs = at(f, "rdma.devices");
  ASSERT_EQ(devs.size(), 32u);
  EXPECT_EQ(str(idx(devs, 0), "name"), "rdmap19s0");  // natural order
  double total = 0;
  for (const auto& d : devs.asList()) {
    EXPECT_EQ(str(d, "kind"), "efa");
    EXPECT_EQ(str(d, "node_type"), "unspecified");
    const auto& p = idx(at(d, "ports"), 0);
    EXPECT_EQ(str(p, "link_layer"), "Unknown");
    EXPECT_EQ(p.find("counters"), nullptr);  // EFA has no standard counters directory
    EXPECT_EQ(at(p, "hw_counters.rx_drops").asInt(), 0);
    EXPECT_EQ(at(p, "hw_counters.retrans_pkts").asInt(), 312);
    EXPECT_EQ(at(p, "hw_counters").size(), 22u);  // the kernel's every EFA port counter
    // The device-wide counters, beside the ports.
    EXPECT_EQ(at(d, "hw_counters.cmds_err").asInt(), 0);
    EXPECT_EQ(at(d, "hw_counters.submitted_cmds").asInt(), 2389);
    EXPECT_EQ(at(d, "hw_counters").size(), 12u);
    total += at(p, "rate_gbps").asDouble();
  }
  EXPECT_EQ(total, 3200.0);
  EXPECT_EQ(at(f, "gpu.count").asInt(), 8);
  for (const auto& g : at(f, "gpu.devices").asList()) EXPECT_EQ(at(g, "nics").size(), 4u);
  EXPECT_EQ(at(f, "memory.hugepages.2048kB.total").asInt(), 5128);
  EXPECT_EQ(at(f, "memory.hugepages.2048kB.free").asInt(), 5028);
  EXPECT_EQ(at(f, "memory.hugepages.2048kB.reserved").asInt(), 16);
  EXPECT_EQ(at(f, "memory.hugepages.2048kB.size_bytes").asInt(), 2097152);
  EXPECT_EQ(at(f, "memory.hugepages.1048576kB.total").asInt(), 0);
  EXPECT_EQ(str(f, "software.efa_ofi_dir"), "/opt/amazon-efa-ofi");
  EXPECT_EQ(str(f, "software.efa.installer_version"), "1.34.0");
  EXPECT_EQ(str(f, "software.libfabric.version"), "1.22.0amzn4.0");
  EXPECT_EQ(str(f, "software.aws_ofi_nccl.path"), "/opt/amazon-efa-ofi/lib/libnccl-net.so");
  EXPECT_EQ(str(f, "software.rdma_core.version"), "52.0");
}

TEST(FixtureSourcesTest, P5WorkloadShowsWhatActuallyRuns) {
  auto f = collectFixture("p5_efa").facts;
  const auto& wl = at(f, "workloads");
  ASSERT_EQ(wl.size(), 1u);  // systemd (pid 1) has no NCCL mapped
  const auto& w = idx(wl, 0);
  EXPECT_EQ(at(w, "pid").asInt(), 4242);
  EXPECT_EQ(str(w, "comm"), "python3");
  EXPECT_EQ(str(w, "glibc_version"), "2.35");
  EXPECT_EQ(str(w, "pod_uid"), "7c1e2d34-5b6a-4f8e-9d0c-1a2b3c4d5e6f");
  EXPECT_EQ(str(w, "container_id").size(), 64u);
  EXPECT_TRUE(at(w, "memlock.unlimited").asBool());
  EXPECT_EQ(str(w, "libraries.nccl"),
            "/opt/conda/lib/python3.10/site-packages/torch/lib/libnccl.so.2.21.5");
  EXPECT_EQ(str(w, "libraries.libfabric"), "/opt/amazon/efa/lib/libfabric.so.1.25.0");
  EXPECT_EQ(str(w, "libraries.nccl_net_plugin"),
            "/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu/libnccl-net.so");
  // The versions the job's libraries say (facts/workload_versions.h).
  EXPECT_EQ(str(w, "libraries.cudart"), "/opt/conda/lib/libcudart.so.12.4.127");
  EXPECT_EQ(str(w, "cuda_runtime_version"), "12.4.127");
  EXPECT_EQ(str(w, "nccl_version"), "2.21.5");
  EXPECT_EQ(str(w, "net_plugin.name"), "aws-ofi-nccl");
  EXPECT_EQ(str(w, "net_plugin.version"), "1.13.2-aws");
  EXPECT_EQ(str(w, "libfabric_library_version"), "1.25.0");
  const auto& env = at(w, "env");
  EXPECT_EQ(str(env, "FI_PROVIDER"), "efa");
  EXPECT_EQ(str(env, "NVIDIA_GDRCOPY"), "enabled");
  EXPECT_EQ(env.find("AWS_SECRET_ACCESS_KEY"), nullptr);
  EXPECT_EQ(env.find("PATH"), nullptr);
  EXPECT_EQ(env.find("HOME"), nullptr);
  // Environment over the container's /etc/nccl.conf; the file fills what the environment lacks.
  EXPECT_EQ(str(w, "nccl.NCCL_DEBUG.value"), "INFO");
  EXPECT_EQ(str(w, "nccl.NCCL_DEBUG.source"), "workload 4242 environment");
  EXPECT_EQ(str(w, "nccl.NCCL_NET_GDR_LEVEL.value"), "PHB");
  EXPECT_EQ(str(w, "nccl.NCCL_NET_GDR_LEVEL.source"), "/etc/nccl.conf:2");
}

// Two jobs whose versions do not work together: pip wheels of CUDA 13 (the runtime's version
// from its dist-info, NCCL's from its banner) and an image that pins NCCL 2.14.3.
TEST(FixtureSourcesTest, P5JobsSayTheirVersions) {
  auto f = collectFixture("p5_efa_versions").facts;
  const auto& wl = at(f, "workloads");
  ASSERT_EQ(wl.size(), 2u);
  const auto& cuda13 = idx(wl, 0);
  EXPECT_EQ(str(cuda13, "libraries.cudart"),
            "/opt/conda/lib/python3.10/site-packages/nvidia/cu13/lib/libcudart.so.13");
  EXPECT_EQ(str(cuda13, "cuda_runtime_version"), "13.0.96");
  EXPECT_EQ(str(cuda13, "nccl_version"), "2.28.9");
  EXPECT_EQ(str(cuda13, "nccl_cuda_version"), "13.0");
  const auto& old = idx(wl, 1);
  EXPECT_EQ(at(old, "pid").asInt(), 5151);
  EXPECT_EQ(str(old, "nccl_version"), "2.14.3");
  EXPECT_EQ(old.find("nccl_cuda_version"), nullptr);  // no banner in the fixture's file
  EXPECT_EQ(str(old, "net_plugin.version"), "1.13.2-aws");
  EXPECT_EQ(str(f, "gpu.driver.version"), "550.90.07");
}

TEST(FixtureSourcesTest, ErdmaWorkloadWithSmallMemlockAndHomeConfig) {
  auto f = collectFixture("erdma").facts;
  const auto& w = idx(at(f, "workloads"), 0);
  EXPECT_EQ(str(w, "glibc_version"), "2.32");
  EXPECT_EQ(str(w, "pod_uid"), "0a1b2c3d-0000-4000-8000-0123456789ab");
  EXPECT_FALSE(at(w, "memlock.unlimited").asBool());
  EXPECT_EQ(at(w, "memlock.soft_bytes").asInt(), 65536);
  EXPECT_EQ(at(w, "env").find("ACCESS_TOKEN"), nullptr);
  EXPECT_EQ(w.findPath("libraries.libfabric"), nullptr);
  // ~/.nccl.conf of the process's HOME, in its own root; the environment still wins.
  EXPECT_EQ(str(w, "nccl.NCCL_IB_TIMEOUT.source"), "/home/admin/.nccl.conf:1");
  EXPECT_EQ(str(w, "nccl.NCCL_IB_HCA.value"), "erdma_0");
}

TEST(FixtureSourcesTest, ErdmaNode) {
  auto f = collectFixture("erdma").facts;
  const auto* d = device(f, "erdma_0");
  ASSERT_TRUE(d);
  EXPECT_EQ(str(*d, "kind"), "erdma");
  EXPECT_EQ(str(*d, "node_type"), "RNIC");
  EXPECT_EQ(d->find("pcie"), nullptr);  // a VM function without a PCIe link
  const auto& p = idx(at(*d, "ports"), 0);
  EXPECT_EQ(idx(at(p, "netdevs"), 0).asString(), "eth0");
  EXPECT_EQ(at(p, "hw_counters.connect_reset_cnt").asInt(), 2);
  EXPECT_EQ(str(f, "software.erdma.driver_version"), "0.2.38");
  const auto& g = idx(at(f, "gpu.devices"), 0);
  EXPECT_EQ(str(g, "nic_locality"), "numa");
  EXPECT_FALSE(at(f, "kernel.memory_peers").asBool());
}

TEST(FixtureSourcesTest, NodeWithoutRdma) {
  auto f = collectFixture("no_rdma").facts;
  EXPECT_EQ(at(f, "rdma.devices").size(), 0u);
  EXPECT_EQ(at(f, "gpu.count").asInt(), 0);
  EXPECT_EQ(at(f, "net.interfaces").size(), 3u);
  EXPECT_EQ(at(f, "workloads").size(), 0u);
  EXPECT_EQ(f.findPath("software.nccl"), nullptr);
  EXPECT_EQ(at(f, "nccl.config_files").size(), 0u);
  const auto& docker = idx(at(f, "net.interfaces"), 0);
  EXPECT_EQ(str(docker, "name"), "docker0");
  EXPECT_EQ(docker.find("speed_mbps"), nullptr);
  EXPECT_EQ(docker.find("pci_address"), nullptr);
}

TEST(FixtureSourcesTest, BrokenNodeShowsEveryFault) {
  auto f = collectFixture("broken").facts;
  const auto& down = idx(at(*device(f, "mlx5_3"), "ports"), 0);
  EXPECT_EQ(str(down, "state"), "DOWN");
  EXPECT_EQ(at(down, "state_code").asInt(), 1);
  EXPECT_EQ(str(down, "phys_state"), "Polling");
  EXPECT_EQ(at(down, "phys_state_code").asInt(), 2);
  EXPECT_EQ(at(idx(at(*device(f, "mlx5_5"), "ports"), 0), "rate_gbps").asDouble(), 200.0);
  const auto* x8 = device(f, "mlx5_6");
  EXPECT_EQ(at(*x8, "pcie.current_width").asInt(), 8);
  EXPECT_EQ(at(*x8, "pcie.max_width").asInt(), 16);
  EXPECT_TRUE(at(*x8, "pcie.degraded").asBool());
  EXPECT_TRUE(at(idx(at(f, "gpu.devices"), 2), "pcie.degraded").asBool());
  for (const auto& m : at(f, "kernel.modules").asList()) EXPECT_NE(m.asString(), "nvidia_peermem");
  EXPECT_FALSE(at(f, "kernel.memory_peers").asBool());
}

// An unreadable counter (a directory where the file should be: read() fails with EISDIR) loses
// that counter alone and counts one read error; the device, the port and the other counters stay.
TEST(FixtureSourcesTest, UnreadableCounterLeavesTheRestIntact) {
  testing::TempDir root;
  std::filesystem::copy(
      testing::fixture("ib_ndr"), root.path(),
      std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
  std::string counters = root.path() + "/sys/class/infiniband/mlx5_2/ports/1/counters/";
  std::filesystem::remove(counters + "symbol_error");
  std::filesystem::create_directory(counters + "symbol_error");
  core::Collection c = RdmaSource().collect({root.path()});
  EXPECT_FALSE(c.failed);
  EXPECT_EQ(c.read_errors, 1u);
  ASSERT_EQ(c.errors.size(), 1u);
  EXPECT_NE(c.errors[0].find("mlx5_2/ports/1/counters/symbol_error"), std::string::npos);
  const auto& devs = at(c.facts, "rdma.devices");
  ASSERT_EQ(devs.size(), 8u);
  const auto& p = idx(at(idx(devs, 2), "ports"), 0);
  EXPECT_EQ(at(p, "counters").find("symbol_error"), nullptr);
  EXPECT_EQ(at(p, "counters.link_downed").asInt(), 0);
  EXPECT_EQ(str(p, "state"), "ACTIVE");
  EXPECT_TRUE(at(idx(at(idx(devs, 3), "ports"), 0), "counters").find("symbol_error"));
}

TEST(FixtureSourcesTest, WorkloadsIgnoreVanishedProcesses) {
  testing::TempDir root;
  root.write("proc/77/comm", "ghost\n");  // listed, but its maps are gone
  auto c = WorkloadSource().collect({root.path()});
  EXPECT_EQ(c.read_errors, 0u);
  EXPECT_EQ(at(c.facts, "workloads").size(), 0u);
}

// Issue 25: NVSentinel's EFA tree: class entries whose device/ says vendor 0x1d0f, a driver link
// or DRIVER=efa in uevent, and no /sys/bus/pci/devices. Every device is EFA, whatever tells it.
TEST(FixtureSourcesTest, EfaToldByItsDeviceWithoutAPciTree) {
  auto f = collectFixture("efa_no_pci_tree");
  EXPECT_EQ(f.read_errors, 0u) << (f.errors.empty() ? "" : f.errors[0]);
  const auto& devs = at(f.facts, "rdma.devices");
  ASSERT_EQ(devs.size(), 4u);
  const char* names[] = {"rdmap16s27", "rdmap32s27", "rdmap144s27", "rdmap160s27"};
  for (size_t i = 0; i < 4; ++i) {
    const auto& d = idx(devs, i);
    EXPECT_EQ(str(d, "name"), names[i]);
    EXPECT_EQ(str(d, "kind"), "efa") << names[i];
    EXPECT_EQ(d.find("pcie"), nullptr) << names[i];  // no link attributes in its device/
    EXPECT_EQ(at(d, "numa_node").asInt(), i < 2 ? 0 : 1);
    EXPECT_EQ(at(d, "hw_counters.cmds_err").asInt(), 0);
    EXPECT_EQ(at(d, "hw_counters.keep_alive_rcvd").asInt(), 871263);
    const auto& p = idx(at(d, "ports"), 0);
    EXPECT_EQ(at(p, "hw_counters.rx_pkts").asInt(), 1281736451);
    EXPECT_EQ(at(p, "hw_counters.tx_pkts").asInt(), 1283746123);
    EXPECT_EQ(str(p, "link_layer"), "Unknown");
  }
  // Driver link and uevent; uevent only; the vendor only (no address, no driver).
  EXPECT_EQ(str(idx(devs, 0), "driver"), "efa");
  EXPECT_EQ(str(idx(devs, 0), "pci_address"), "0000:10:1b.0");
  EXPECT_EQ(str(idx(devs, 1), "driver"), "efa");
  EXPECT_EQ(str(idx(devs, 1), "pci_address"), "0000:20:1b.0");
  EXPECT_EQ(idx(devs, 2).find("driver"), nullptr);
  EXPECT_EQ(idx(devs, 2).find("pci_address"), nullptr);
  // The fourth has no ports/1/state: the state is absent, not DOWN.
  const auto& stateless = idx(at(idx(devs, 3), "ports"), 0);
  EXPECT_EQ(stateless.find("state"), nullptr);
  EXPECT_EQ(str(stateless, "phys_state"), "LinkUp");
  EXPECT_EQ(at(stateless, "rate_gbps").asDouble(), 100.0);
}

// The PCI tree, where a root has it, is a cross-check of what the class entry's device/ says.
// A symbolic link under a test root (parent directories created), as sysfs has them.
void symlink(const testing::TempDir& root, const std::string& rel, const std::string& target) {
  std::filesystem::path p = std::filesystem::path(root.path()) / rel;
  std::filesystem::create_directories(p.parent_path());
  std::filesystem::create_symlink(target, p);
}

TEST(FixtureSourcesTest, APciTreeThatDisagreesIsAReadError) {
  testing::TempDir root;
  std::string fn = "sys/devices/pci0000:10/0000:10:1b.0";
  root.write(fn + "/vendor", "0x1d0f\n");
  root.write("sys/class/infiniband/rdmap16s27/node_type", "7: unspecified\n");
  symlink(root, "sys/class/infiniband/rdmap16s27/device",
          "../../../devices/pci0000:10/0000:10:1b.0");
  symlink(root, "sys/bus/pci/devices/0000:10:1b.0", "../../../devices/pci0000:10/0000:10:1b.0");
  auto agree = collectRoot(root.path());
  EXPECT_EQ(str(idx(at(agree.facts, "rdma.devices"), 0), "kind"), "efa");
  // A bus entry that is another function: the device/ wins, and the disagreement is counted.
  root.write("sys/devices/pci0000:10/0000:10:1c.0/vendor", "0x15b3\n");
  std::filesystem::remove(root.path() + "/sys/bus/pci/devices/0000:10:1b.0");
  symlink(root, "sys/bus/pci/devices/0000:10:1b.0", "../../../devices/pci0000:10/0000:10:1c.0");
  auto differ = collectRoot(root.path());
  EXPECT_EQ(str(idx(at(differ.facts, "rdma.devices"), 0), "kind"), "efa");
  ASSERT_GE(differ.read_errors, 1u);
  bool named = false;
  for (const auto& e : differ.errors)
    named = named || (e.find("vendor 0x15b3, but") != std::string::npos &&
                      e.find("rdmap16s27/device says 0x1d0f") != std::string::npos);
  EXPECT_TRUE(named) << differ.errors[0];
}

// Issue 25: the second ports of dual-port cards, DOWN and Disabled, show a placeholder rate
// that is kept as text and is no rate; the ports of a card share its system image GUID. The
// kernel has ib_uverbs built in.
TEST(FixtureSourcesTest, DualPortCardsDisabledPortsAndBuiltInVerbs) {
  auto f = collectFixture("h100_dual_port").facts;
  const auto& devs = at(f, "rdma.devices");
  ASSERT_EQ(devs.size(), 12u);
  const auto* second = device(f, "mlx5_2");
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(str(*second, "sys_image_guid"), str(*device(f, "mlx5_1"), "sys_image_guid"));
  EXPECT_NE(str(*second, "node_guid"), str(*device(f, "mlx5_1"), "node_guid"));
  const auto& p = idx(at(*second, "ports"), 0);
  EXPECT_EQ(str(p, "state"), "DOWN");
  EXPECT_EQ(str(p, "phys_state"), "Disabled");
  EXPECT_EQ(str(p, "rate"), "40 Gb/sec (4X QDR)");
  EXPECT_EQ(p.find("rate_gbps"), nullptr);
  EXPECT_EQ(at(idx(at(*device(f, "mlx5_1"), "ports"), 0), "rate_gbps").asDouble(), 100.0);
  // ib_uverbs is not in /proc/modules but built in; its class lists a device per HCA.
  bool in_modules = false;
  for (const auto& m : at(f, "kernel.modules").asList())
    in_modules = in_modules || m.asString() == "ib_uverbs";
  EXPECT_FALSE(in_modules);
  const auto& builtin = at(f, "kernel.builtin_modules");
  ASSERT_EQ(builtin.size(), 2u);
  EXPECT_EQ(builtin.asList()[0].asString(), "ib_core");
  EXPECT_EQ(builtin.asList()[1].asString(), "ib_uverbs");
  EXPECT_EQ(at(f, "kernel.uverbs_devices").size(), 12u);
  // The rails are the NICs beside the GPUs; the CX-6 Dx cards are near none.
  size_t rails = 0;
  for (const auto& g : at(f, "gpu.devices").asList()) {
    EXPECT_EQ(str(g, "nic_locality"), "pci_switch");
    rails += at(g, "nics").size();
  }
  EXPECT_EQ(rails, 8u);
}

// Issue 25: a DOWN InfiniBand port's 10 Gb/sec (4X SDR) is the kernel's placeholder.
TEST(FixtureSourcesTest, ADownPortsPlaceholderRateIsNoRate) {
  auto f = collectFixture("a100_port_down").facts;
  const auto& down = idx(at(*device(f, "mlx5_5"), "ports"), 0);
  EXPECT_EQ(str(down, "state"), "DOWN");
  EXPECT_EQ(str(down, "rate"), "10 Gb/sec (4X SDR)");
  EXPECT_EQ(down.find("rate_gbps"), nullptr);
  EXPECT_EQ(at(idx(at(*device(f, "mlx5_4"), "ports"), 0), "rate_gbps").asDouble(), 200.0);
}

// Issue 25: gpud's class testdata: devices without device/ are of no known kind (never from
// the name), and with no /proc the kernel source has nothing, so fails.
TEST(FixtureSourcesTest, ClassOnlyTreeWithoutProc) {
  auto f = collectFixture("h100_class_only").facts;
  const auto& devs = at(f, "rdma.devices");
  ASSERT_EQ(devs.size(), 9u);
  for (const auto& d : devs.asList()) {
    EXPECT_EQ(str(d, "kind"), "other") << str(d, "name");
    EXPECT_EQ(d.find("pci_address"), nullptr);
  }
  EXPECT_EQ(str(idx(at(*device(f, "mlx5_bond_0"), "ports"), 0), "rate"), "200 Gb/sec (2X NDR)");
  EXPECT_EQ(f.find("kernel"), nullptr);
  EXPECT_EQ(f.findPath("limits.memlock"), nullptr);
  auto kernel = KernelSource().collect({testing::fixture("h100_class_only")});
  EXPECT_TRUE(kernel.failed);
}

}  // namespace
}  // namespace fabricwatch::facts
