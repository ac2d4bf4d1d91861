// Pure parser tests on fixture text: sysfs enums and rates, PCI links, /proc files, NCCL and
// package inventories, workload maps/environ/cgroup/libc.
#include <gtest/gtest.h>

#include "facts/fact_reader.h"
#include "facts/host_parse.h"
#include "facts/pci_parse.h"
#include "facts/rdma_parse.h"
#include "facts/software_parse.h"
#include "facts/workload_parse.h"

namespace fabricwatch::facts {
namespace {

TEST(RdmaParseTest, CodeNames) {
  auto s = parseCodeName("4: ACTIVE\n");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->code, 4);
  EXPECT_EQ(s->name, "ACTIVE");
  auto p = parseCodeName("4: PortConfigurationTraining");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->name, "PortConfigurationTraining");
  EXPECT_EQ(parseCodeName("7: Phy Test")->name, "Phy Test");
  EXPECT_FALSE(parseCodeName("ACTIVE"));
  EXPECT_FALSE(parseCodeName("x: ACTIVE"));
  EXPECT_FALSE(parseCodeName("4:"));
}

TEST(RdmaParseTest, Rates) {
  EXPECT_EQ(parseRateGbps("400 Gb/sec (4X NDR)"), 400.0);
  EXPECT_EQ(parseRateGbps("2.5 Gb/sec (1X SDR)\n"), 2.5);
  EXPECT_EQ(parseRateGbps("100 Gb/sec (2X HDR)"), 100.0);
  EXPECT_FALSE(parseRateGbps("fast"));
  EXPECT_FALSE(parseRateGbps(" Gb/sec"));
}

TEST(RdmaParseTest, ZeroGids) {
  EXPECT_TRUE(isZeroGid("0000:0000:0000:0000:0000:0000:0000:0000\n"));
  EXPECT_FALSE(isZeroGid("fe80:0000:0000:0000:946d:ae03:00a1:b2c0"));
  EXPECT_FALSE(isZeroGid("0000:0000:0000:0000:0000:ffff:0a00:0105"));
}

TEST(RdmaParseTest, UnavailableCounters) {
  EXPECT_TRUE(isUnavailableCounter("N/A (no PMA)\n"));
  EXPECT_FALSE(isUnavailableCounter("0\n"));
  EXPECT_FALSE(isUnavailableCounter("garbage"));
}

// Issue 25: the kind comes from what the device's class entry says about its hardware, never
// from the name of a device that has hardware behind it.
TEST(RdmaParseTest, KindsFromTheHardwareNeverFromAHardwareDevicesName) {
  auto hw = [](std::optional<std::string> driver, std::optional<int64_t> vendor) {
    return RdmaHardware{true, std::move(driver), vendor};
  };
  EXPECT_EQ(rdmaKind("mlx5_0", hw("mlx5_core", 0x15b3)), "mlx5");
  EXPECT_EQ(rdmaKind("rdmap79s0", hw("efa", 0x1d0f)), "efa");
  // No driver link or uevent: Amazon's vendor id alone makes EFA, whatever the name.
  EXPECT_EQ(rdmaKind("rdmap16s27", hw(std::nullopt, 0x1d0f)), "efa");
  EXPECT_EQ(rdmaKind("anything", hw("efa", std::nullopt)), "efa");
  EXPECT_EQ(rdmaKind("erdma_0", hw(std::nullopt, 0x1ded)), "erdma");
  // irdma devices get rdmap names from udev too: the name alone does not make EFA.
  EXPECT_EQ(rdmaKind("rdmap24s0f0", hw("irdma", 0x8086)), "irdma");
  EXPECT_EQ(rdmaKind("rdmap24s0f0", hw(std::nullopt, 0x8086)), "other");
  // A device named like EFA or mlx5 whose hardware says nothing of the kind is not one.
  EXPECT_EQ(rdmaKind("efa_0", hw(std::nullopt, std::nullopt)), "other");
  EXPECT_EQ(rdmaKind("efa_0", hw("mlx5_core", 0x15b3)), "mlx5");
  EXPECT_EQ(rdmaKind("mlx5_0", hw("mlx4_core", 0x15b3)), "other");  // 0x15b3 is mlx4 too
  EXPECT_EQ(rdmaKind("bnxt_re0", hw("bnxt_en", 0x14e4)), "bnxt_re");
  // Software devices have no device/; only they are told by their name.
  EXPECT_EQ(rdmaKind("rxe0", RdmaHardware{}), "rxe");
  EXPECT_EQ(rdmaKind("siw0", RdmaHardware{}), "siw");
  EXPECT_EQ(rdmaKind("efa_0", RdmaHardware{}), "other");
  EXPECT_EQ(rdmaKind("mlx5_0", RdmaHardware{}), "other");
  EXPECT_EQ(rdmaKind("rxe0", hw("mlx5_core", 0x15b3)), "mlx5");
}

TEST(RdmaParseTest, UeventValues) {
  std::string_view ue =
      "DRIVER=efa\nPCI_CLASS=20000\nPCI_SLOT_NAME=0000:10:1b.0\nMODALIAS=pci:v1\n";
  EXPECT_EQ(ueventValue(ue, "DRIVER"), "efa");
  EXPECT_EQ(ueventValue(ue, "PCI_SLOT_NAME"), "0000:10:1b.0");
  EXPECT_FALSE(ueventValue(ue, "PCI"));
  EXPECT_FALSE(ueventValue(ue, "DEVTYPE"));
  EXPECT_EQ(ueventValue("DRIVER=\n", "DRIVER"), "");
  EXPECT_FALSE(ueventValue("", "DRIVER"));
}

// Issue 25: a link that has not trained shows a placeholder rate.
TEST(RdmaParseTest, ARateIsMeasuredOnlyOnALinkThatIsUp) {
  EXPECT_TRUE(rateIsMeasured(4, 5));             // ACTIVE, LinkUp
  EXPECT_TRUE(rateIsMeasured(2, 5));             // INIT, LinkUp: trained, no SM yet
  EXPECT_FALSE(rateIsMeasured(1, 2));            // DOWN, Polling: 10 Gb/sec (4X SDR)
  EXPECT_FALSE(rateIsMeasured(1, 3));            // DOWN, Disabled
  EXPECT_FALSE(rateIsMeasured(4, 6));            // ACTIVE, LinkErrorRecovery: retraining
  EXPECT_TRUE(rateIsMeasured(4, std::nullopt));  // no phys_state file: the state decides
  EXPECT_FALSE(rateIsMeasured(1, std::nullopt));
  EXPECT_TRUE(rateIsMeasured(std::nullopt, std::nullopt));
}

// include/rdma/ib_addr.h's iboe_get_mtu: the net device's MTU less 96 bytes of RoCE v2 headers,
// rounded down to an IB MTU.
TEST(RdmaParseTest, RoceActiveMtuFollowsTheNetDevice) {
  EXPECT_EQ(roceActiveMtu(9000), 4096);
  EXPECT_EQ(roceActiveMtu(4200), 4096);
  EXPECT_EQ(roceActiveMtu(4192), 4096);
  EXPECT_EQ(roceActiveMtu(4191), 2048);
  EXPECT_EQ(roceActiveMtu(1500), 1024);
  EXPECT_EQ(roceActiveMtu(1120), 1024);
  EXPECT_EQ(roceActiveMtu(1119), 512);
  EXPECT_EQ(roceActiveMtu(352), 256);
  EXPECT_FALSE(roceActiveMtu(351));
  EXPECT_FALSE(roceActiveMtu(-1));
}

TEST(HostParseTest, IommuParametersOfTheKernelCommandLine) {
  auto p = parseIommuParameters(
      "BOOT_IMAGE=/boot/vmlinuz-5.15.0 root=UUID=6a1f ro intel_iommu=on iommu=pt "
      "iommu.strict=0 amd_iommu=off iommu_foo=1 quiet\n");
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(p[0], "intel_iommu=on");
  EXPECT_EQ(p[1], "iommu=pt");
  EXPECT_EQ(p[2], "iommu.strict=0");
  EXPECT_EQ(p[3], "amd_iommu=off");
  EXPECT_TRUE(parseIommuParameters("").empty());
}

TEST(HostParseTest, FabricManagerByItsCommCutTo15Characters) {
  EXPECT_TRUE(isFabricManagerComm("nv-fabricmanage\n"));
  EXPECT_TRUE(isFabricManagerComm("nv-fabricmanager"));
  EXPECT_FALSE(isFabricManagerComm("nvidia-persiste"));
  EXPECT_FALSE(isFabricManagerComm("nv-fabric"));
}

// A configuration space as the kernel's config file holds it, read a dword at a time; `size`
// bytes of it can be read (64 for a reader without CAP_SYS_ADMIN).
struct ConfigSpace {
  std::vector<uint8_t> bytes = std::vector<uint8_t>(4096, 0);
  size_t size = 4096;
  void put32(size_t off, uint32_t v) {
    for (int i = 0; i < 4; ++i) bytes[off + i] = static_cast<uint8_t>(v >> (8 * i));
  }
  std::optional<uint32_t> operator()(uint32_t off) const {
    if (off + 4 > size) return std::nullopt;
    return uint32_t{bytes[off]} | uint32_t{bytes[off + 1]} << 8 | uint32_t{bytes[off + 2]} << 16 |
           uint32_t{bytes[off + 3]} << 24;
  }
};

TEST(PciParseTest, AcsControlFromTheExtendedCapabilityList) {
  ConfigSpace c;
  c.put32(0x100, 0x0001 | 2u << 16 | 0x148u << 20);  // AER, next 0x148
  c.put32(0x148, 0x000d | 1u << 16 | 0x158u << 20);  // ACS
  c.put32(0x14c, 0x005f | 0x001du << 16);            // capability, control SV RR CR UF
  c.put32(0x158, 0x0019 | 1u << 16);                 // Secondary PCIe, last
  AcsState a = parseAcs(c);
  EXPECT_TRUE(a.readable);
  EXPECT_TRUE(a.capability);
  EXPECT_EQ(a.control, 0x001d);
  EXPECT_EQ(acsRedirects(a.control), (std::vector<std::string>{"RR", "CR", "UF"}));
  EXPECT_TRUE(acsRedirects(0x0003).empty());  // SV and TB redirect nothing
  // No ACS in the list, or no extended capability at all: readable, clean.
  c.put32(0x148, 0x0019 | 1u << 16);
  a = parseAcs(c);
  EXPECT_TRUE(a.readable);
  EXPECT_FALSE(a.capability);
  ConfigSpace empty;
  EXPECT_TRUE(parseAcs(empty).readable);
  EXPECT_FALSE(parseAcs(empty).capability);
  // The 64 bytes a reader without CAP_SYS_ADMIN sees: unknown, not clean.
  ConfigSpace user;
  user.size = 64;
  EXPECT_FALSE(parseAcs(user).readable);
  // A list that loops, or points below 0x100, ends.
  ConfigSpace loop;
  loop.put32(0x100, 0x0001 | 0x100u << 20);
  EXPECT_FALSE(parseAcs(loop).capability);
  loop.put32(0x100, 0x0001 | 0x040u << 20);
  EXPECT_FALSE(parseAcs(loop).capability);
  // The capability header readable, its registers not: unknown.
  ConfigSpace cut;
  cut.put32(0xffc, 0x000d);
  cut.put32(0x100, 0x0001 | 0xffcu << 20);
  EXPECT_FALSE(parseAcs(cut).readable);
}

TEST(PciParseTest, DevicePathsAndTheBridgesBetweenTwoFunctions) {
  EXPECT_EQ(pciDevicePath("../../../devices/pci0000:10/0000:10:01.0/0000:11:00.0"),
            "/sys/devices/pci0000:10/0000:10:01.0/0000:11:00.0");
  EXPECT_FALSE(pciDevicePath("../../../devices/pci0000:10/../../../../etc"));
  EXPECT_FALSE(pciDevicePath("/etc/passwd"));
  EXPECT_FALSE(pciDevicePath("../../../devices/"));
  std::vector<std::string> gpu = {"0000:10:01.0", "0000:11:00.0", "0000:12:01.0"},
                           nic = {"0000:10:01.0", "0000:11:00.0", "0000:12:00.0"};
  EXPECT_EQ(pciPathBridges(gpu, nic), (std::vector<std::string>{"0000:12:01.0", "0000:12:00.0"}));
}

TEST(PciParseTest, SpeedsAndAddresses) {
  EXPECT_EQ(parsePcieSpeed("32.0 GT/s PCIe"), 32.0);
  EXPECT_EQ(parsePcieSpeed("8 GT/s"), 8.0);
  EXPECT_EQ(parsePcieSpeed("2.5 GT/s PCIe\n"), 2.5);
  EXPECT_FALSE(parsePcieSpeed("Unknown"));
  EXPECT_TRUE(isPciAddress("0000:17:00.0"));
  EXPECT_TRUE(isPciAddress("0001:a3:1f.7"));
  EXPECT_FALSE(isPciAddress("pci0000:17"));
  EXPECT_FALSE(isPciAddress("0000:17:00"));
}

TEST(PciParseTest, BridgesAndProximity) {
  auto nic = pciBridges(
      "../../../devices/pci0000:10/0000:10:01.0/0000:11:00.0/0000:12:00.0/"
      "0000:13:00.0");
  ASSERT_EQ(nic.size(), 3u);
  EXPECT_EQ(nic[0], "0000:10:01.0");
  EXPECT_EQ(nic[2], "0000:12:00.0");
  auto gpu = pciBridges(
      "../../../devices/pci0000:10/0000:10:01.0/0000:11:00.0/0000:12:01.0/"
      "0000:14:00.0");
  auto other = pciBridges("../../../devices/pci0000:10/0000:10:01.0/0000:15:00.0");
  auto far = pciBridges("../../../devices/pci0000:90/0000:90:01.0/0000:91:00.0");
  EXPECT_EQ(pciProximity(nic, gpu), "pci_switch");
  EXPECT_EQ(pciProximity(nic, other), "root_port");
  EXPECT_EQ(pciProximity(nic, far), std::nullopt);
  EXPECT_TRUE(pciBridges("../../../devices/pci0000:00/0000:00:05.0").empty());
}

TEST(PciParseTest, PcieValueMarksDowngrades) {
  PcieLinkText x8{16 / 2, 16, "32.0 GT/s PCIe", "32.0 GT/s PCIe"};
  auto v = pcieValue(x8);
  EXPECT_EQ(v.find("current_width")->asInt(), 8);
  EXPECT_TRUE(v.find("degraded")->asBool());
  PcieLinkText gen4{16, 16, "16.0 GT/s PCIe", "32.0 GT/s PCIe"};
  EXPECT_TRUE(pcieValue(gen4).find("degraded")->asBool());
  EXPECT_EQ(pcieValue(gen4).find("current_speed_gts")->asDouble(), 16.0);
  PcieLinkText ok{16, 16, "32.0 GT/s PCIe", "32.0 GT/s PCIe"};
  EXPECT_FALSE(pcieValue(ok).find("degraded")->asBool());
  // A function without a link (VMs): no widths, no speeds, no verdict.
  PcieLinkText none{0, 0, "Unknown", "Unknown"};
  EXPECT_EQ(pcieValue(none).size(), 0u);
  PcieLinkText half{16, std::nullopt, "32.0 GT/s PCIe", std::nullopt};
  EXPECT_EQ(pcieValue(half).find("degraded"), nullptr);
}

TEST(HostParseTest, Meminfo) {
  auto m = parseMeminfo(
      "MemTotal:       2113464 kB\nHugePages_Total:    5128\nHugepagesize:       2048 kB\n"
      "garbage\n");
  EXPECT_EQ(m["MemTotal"], 2113464LL * 1024);
  EXPECT_EQ(m["HugePages_Total"], 5128);
  EXPECT_EQ(m["Hugepagesize"], 2048 * 1024);
  EXPECT_EQ(m.count("garbage"), 0u);
}

TEST(HostParseTest, Memlock) {
  std::string head =
      "Limit                     Soft Limit           Hard Limit           Units     \n"
      "Max open files            1048576              1048576              files     \n";
  auto unl = parseMemlock(head +
                          "Max locked memory         unlimited            unlimited    "
                          "        bytes     \n");
  EXPECT_TRUE(unl.find("unlimited")->asBool());
  EXPECT_EQ(unl.find("soft_bytes"), nullptr);
  auto small = parseMemlock(head +
                            "Max locked memory         65536                65536        "
                            "        bytes     \n");
  EXPECT_FALSE(small.find("unlimited")->asBool());
  EXPECT_EQ(small.find("soft_bytes")->asInt(), 65536);
  EXPECT_EQ(small.find("hard_bytes")->asInt(), 65536);
  EXPECT_TRUE(parseMemlock(head).isNull());
}

// Limits are u64: 2^64 - 1 MiB is a limit above INT64_MAX, reported as the nearest double, not
// clamped to INT64_MAX; RLIM_INFINITY written as a number is unlimited, as "unlimited" is.
TEST(HostParseTest, MemlockIsUnsigned64Bit) {
  std::string head = "Limit                     Soft Limit           Hard Limit           Units\n";
  auto big = parseMemlock(head +
                          "Max locked memory         18446744073708503040 18446744073708503040 "
                          "bytes\n");
  EXPECT_FALSE(big.find("unlimited")->asBool());
  ASSERT_TRUE(big.find("soft_bytes")->isDouble());
  EXPECT_EQ(big.find("soft_bytes")->asDouble(), 18446744073708503040.0);
  EXPECT_GT(big.find("hard_bytes")->asDouble(), 9223372036854775807.0);
  auto inf = parseMemlock(head +
                          "Max locked memory         18446744073709551615 65536                "
                          "bytes\n");
  EXPECT_TRUE(inf.find("unlimited")->asBool());
  EXPECT_EQ(inf.find("soft_bytes"), nullptr);
  EXPECT_FALSE(inf.find("hard_unlimited")->asBool());
  EXPECT_EQ(inf.find("hard_bytes")->asInt(), 65536);
}

TEST(HostParseTest, MeminfoIsUnsigned) {
  auto m = parseMeminfo("HugePages_Total:    18446744073709551615\n");
  EXPECT_EQ(m["HugePages_Total"], UINT64_MAX);
}

TEST(FactReaderTest, UnsignedAndSignedIntegers) {
  EXPECT_EQ(parseUnsigned("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(parseUnsigned("0x10"), 16u);
  EXPECT_EQ(parseUnsigned("-1"), std::nullopt);
  EXPECT_EQ(parseUnsigned("18446744073709551616"), std::nullopt);
  EXPECT_EQ(parseInteger("-1"), -1);
  // Past int64 a signed read is not an integer (u64 attributes are read with parseUnsigned),
  // never a clamped INT64_MAX.
  EXPECT_EQ(parseInteger("9223372036854775808"), std::nullopt);
  EXPECT_EQ(parseInteger("9223372036854775807"), INT64_MAX);
}

TEST(HostParseTest, BondMode) {
  auto m = parseBondMode("802.3ad 4\n");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->name, "802.3ad");
  EXPECT_EQ(m->code, 4);
  EXPECT_EQ(parseBondMode("active-backup 1")->name, "active-backup");
  EXPECT_EQ(parseBondMode("802.3ad"), std::nullopt);
  EXPECT_EQ(parseBondMode(""), std::nullopt);
}

TEST(HostParseTest, NvidiaDriverVersionTellsOpenFromProprietaryModules) {
  auto open = parseNvidiaDriverVersion(
      "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build  "
      "(dvs-builder@U16-I3-B03-4-3)  Tue Mar  5 22:16:48 UTC 2024\n"
      "GCC version:  gcc version 12.3.0 (GCC)\n");
  EXPECT_TRUE(open.find("open_kernel_module")->asBool());
  EXPECT_EQ(open.find("version")->asString(), "550.54.15");
  auto closed = parseNvidiaDriverVersion(
      "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023\n");
  EXPECT_FALSE(closed.find("open_kernel_module")->asBool());
  EXPECT_EQ(closed.find("version")->asString(), "535.104.05");
  EXPECT_TRUE(parseNvidiaDriverVersion("").isNull());
  EXPECT_TRUE(parseNvidiaDriverVersion("something else entirely\n").isNull());
}

TEST(HostParseTest, ModulesAndInet6) {
  auto mods = parseModules(
      "nvidia_peermem 16384 0 - Live 0x0000000000000000 (OE)\n"
      "ib_core 442368 6 rdma_cm,ib_uverbs, Live 0x0000000000000000\n");
  ASSERT_EQ(mods.size(), 2u);
  EXPECT_EQ(mods[0], "nvidia_peermem");
  auto a = parseIfInet6(
      "fe800000000000007ec255fffe9a3104 02 40 20 80 enp97s0f0\n"
      "00000000000000000000000000000001 01 80 10 80       lo\nshort line\n");
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].ifname, "enp97s0f0");
  EXPECT_EQ(a[0].address, "fe80::7ec2:55ff:fe9a:3104");
  EXPECT_EQ(a[1].address, "::1");
}

TEST(SoftwareParseTest, NcclConfKeepsLinePositions) {
  auto e = parseNcclConf(
      "# comment\nNCCL_IB_HCA=mlx5\n\nNCCL_IB_GID_INDEX = 3\nnot a setting\n"
      "NCCL_SOCKET_IFNAME==eth0\n");
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0].key, "NCCL_IB_HCA");
  EXPECT_EQ(e[0].line, 2);
  EXPECT_EQ(e[1].key, "NCCL_IB_GID_INDEX");
  EXPECT_EQ(e[1].value, "3");
  EXPECT_EQ(e[1].line, 4);
  EXPECT_EQ(e[2].value, "=eth0");  // NCCL's exact-match prefix survives
}

TEST(SoftwareParseTest, DpkgStatusInstalledOnly) {
  auto d = parseDpkgStatus(
      "Package: rdma-core\nStatus: install ok installed\nVersion: 50.0-2\n\n"
      "Package: libnccl2\nStatus: deinstall ok config-files\nVersion: 2.18.1-1\n\n"
      "Package: libfabric1\nStatus: install ok not-installed\nVersion: 1.17.0-3\n");
  EXPECT_EQ(d["rdma-core"], "50.0-2");
  EXPECT_EQ(d.count("libfabric1"), 0u);
}

TEST(SoftwareParseTest, EfaPackagesAndVersions) {
  auto e = parseEfaInstalledPackages(
      "# EFA installer version: 1.34.0\n# Packages installed:\n"
      "libfabric-aws-1.22.0amzn4.0-1.amzn2023 rdma-core-52.0-1.amzn2023\n");
  EXPECT_EQ(e.installer_version, "1.34.0");
  ASSERT_EQ(e.packages.size(), 2u);
  EXPECT_EQ(packageVersion("libfabric-aws", e.packages[0]), "1.22.0amzn4.0");
  EXPECT_EQ(packageVersion("rdma-core", e.packages[1]), "52.0");
  EXPECT_EQ(packageVersion("libfabric-aws-bin", e.packages[0]), std::nullopt);
  EXPECT_EQ(packageVersion("libfabric1-aws", "libfabric1-aws_1.22.0amzn4.0_amd64"),
            "1.22.0amzn4.0");
  EXPECT_EQ(versionAfter("libnccl.so.", "libnccl.so.2.21.5"), "2.21.5");
  EXPECT_EQ(versionAfter("libnccl.so.", "libnccl.so.2"), "2");
  EXPECT_EQ(versionAfter("libnccl.so.", "libnccl.so.2.21.5.bak"), std::nullopt);
  EXPECT_EQ(versionAfter("libnccl.so.", "libnccl.so."), std::nullopt);
}

TEST(WorkloadParseTest, MappedLibraries) {
  auto l = parseMappedLibraries(
      "7f3a2c000000-7f3a2c4e1000 r-xp 00000000 00:2d 2490881   /opt/torch/lib/libnccl.so.2.21.5\n"
      "7f3a3d000000-7f3a3d0a2000 r-xp 00000000 00:2e 3145761   "
      "/opt/amazon/ofi-nccl/lib/libnccl-net.so\n"
      "7f3a3e000000-7f3a3e1b4000 r-xp 00000000 00:2e 3145740   /opt/amazon/efa/lib/libfabric.so.1\n"
      "7f3a40000000-7f3a40195000 r-xp 00028000 00:2d 1049120   "
      "/usr/lib/x86_64-linux-gnu/libc.so.6\n"
      "7ffd2a1f2000-7ffd2a213000 rw-p 00000000 00:00 0         [stack]\n");
  EXPECT_EQ(l.nccl, "/opt/torch/lib/libnccl.so.2.21.5");
  EXPECT_EQ(l.nccl_net_plugin, "/opt/amazon/ofi-nccl/lib/libnccl-net.so");
  EXPECT_EQ(l.libfabric, "/opt/amazon/efa/lib/libfabric.so.1");
  EXPECT_EQ(l.libc, "/usr/lib/x86_64-linux-gnu/libc.so.6");
  EXPECT_FALSE(parseMappedLibraries("00-01 r-xp 0 0:0 1 /usr/lib64/libc.so.6\n").nccl);
}

TEST(WorkloadParseTest, EnvironKeepsOnlyFabricVariables) {
  std::string env(
      "HOME=/root\0AWS_SECRET_ACCESS_KEY=x\0NCCL_DEBUG=INFO\0FI_PROVIDER=efa\0"
      "LD_LIBRARY_PATH=/a:/b\0CUDA_VISIBLE_DEVICES=0,1\0NCCL_ALGO=Ring=x\0",
      131);
  auto kept = parseEnviron(env, isFabricVariable);
  ASSERT_EQ(kept.size(), 5u);
  EXPECT_EQ(kept[0].first, "NCCL_DEBUG");
  EXPECT_EQ(kept[4].second, "Ring=x");
  for (const auto& [k, v] : kept) EXPECT_NE(k, "AWS_SECRET_ACCESS_KEY");
}

TEST(WorkloadParseTest, CgroupIdentity) {
  auto sd = parseCgroupIdentity(
      "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod7c1e2d34_5b6a_4f8e_9d0c_"
      "1a2b3c4d5e6f.slice/cri-containerd-4f1c2b9e8d7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4"
      "f3a2b1c.scope\n");
  EXPECT_EQ(sd.pod_uid, "7c1e2d34-5b6a-4f8e-9d0c-1a2b3c4d5e6f");
  EXPECT_EQ(sd.container_id, "4f1c2b9e8d7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c");
  auto fs = parseCgroupIdentity(
      "12:memory:/kubepods/besteffort/pod0a1b2c3d-0000-4000-8000-0123456789ab/"
      "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b1a0f9e8d\n");
  EXPECT_EQ(fs.pod_uid, "0a1b2c3d-0000-4000-8000-0123456789ab");
  EXPECT_EQ(fs.container_id->size(), 64u);
  auto host = parseCgroupIdentity("0::/system.slice/sshd.service\n");
  EXPECT_FALSE(host.pod_uid);
  EXPECT_FALSE(host.container_id);
}

TEST(WorkloadParseTest, GlibcVersion) {
  std::string blob(
      "\x7f"
      "ELF\0\0GLIBC_2.34\0GNU C Library (Ubuntu GLIBC 2.35-0ubuntu3.8) stable "
      "release version 2.35.\nCopyright",
      100);
  EXPECT_EQ(findGlibcVersion(blob), "2.35");
  EXPECT_EQ(findGlibcVersion("GNU C Library (GNU libc) release release version 2.28.\n"), "2.28");
  EXPECT_EQ(findGlibcVersion("GNU C Library without a version"), std::nullopt);
  // Cut at a chunk boundary: "2.3" of "2.35" is not a version yet.
  EXPECT_EQ(findGlibcVersion("GNU C Library (GNU libc) stable release version 2.3"), std::nullopt);
}

}  // namespace
}  // namespace fabricwatch::facts
