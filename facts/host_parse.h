#pragma once
// Pure parsers for small /proc files: meminfo, limits, modules, if_inet6.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/value.h"

namespace fabricwatch::facts {

// /proc/meminfo: "MemTotal:  2064 kB" -> {"MemTotal": 2113536} (kB values in bytes; counts
// such as HugePages_Total stay counts). The kernel prints unsigned longs.
std::map<std::string, uint64_t, std::less<>> parseMeminfo(std::string_view text);

// /proc/<pid>/limits "Max locked memory" -> {unlimited, hard_unlimited, soft_bytes, hard_bytes}
// (u64; RLIM_INFINITY, written "unlimited", is unlimited); null when the line is missing or
// malformed.
core::Value parseMemlock(std::string_view limits_text);

// /proc/modules -> module names, in file order.
std::vector<std::string> parseModules(std::string_view text);

struct Inet6Address {
  std::string ifname;
  std::string address;  // "fe80::7ec2:55ff:fe9a:3104"
};
// /proc/net/if_inet6: "fe800000000000007ec255fffe9a3104 02 40 20 80 enp97s0f0".
std::vector<Inet6Address> parseIfInet6(std::string_view text);

// /proc/driver/nvidia/version -> {version, open_kernel_module}: the open GPU kernel modules say
// "NVIDIA UNIX Open Kernel Module for x86_64  550.54.15 ...", the proprietary ones
// "NVIDIA UNIX x86_64 Kernel Module  535.104.05 ...". Only the open modules export GPU memory
// as DMA-BUF, GPUDirect RDMA's alternative to nvidia_peermem. Null when unrecognised.
core::Value parseNvidiaDriverVersion(std::string_view text);

// Whether a process's /proc/PID/comm is NVIDIA Fabric Manager's: its binary is nv-fabricmanager,
// which the kernel truncates to 15 characters ("nv-fabricmanage").
bool isFabricManagerComm(std::string_view comm);

// The IOMMU parameters of a kernel command line (/proc/cmdline), in order: iommu=, iommu.*=,
// intel_iommu=, amd_iommu= ("iommu=pt", "intel_iommu=on", "iommu.passthrough=1").
std::vector<std::string_view> parseIommuParameters(std::string_view cmdline);

struct BondMode {
  std::string name;  // "802.3ad", "active-backup", "balance-rr" ...
  int64_t code = 0;  // the kernel's BOND_MODE_* number
};
// /sys/class/net/BOND/bonding/mode: "802.3ad 4" -> {"802.3ad", 4}; nullopt when malformed.
std::optional<BondMode> parseBondMode(std::string_view text);

// Splits text into lines (without the newline).
std::vector<std::string_view> splitLines(std::string_view text);
// Splits on runs of spaces and tabs.
std::vector<std::string_view> splitFields(std::string_view line);

}  // namespace fabricwatch::facts
