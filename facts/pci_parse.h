#pragma once
// Pure parsers for PCI sysfs text: link speeds ("32.0 GT/s PCIe"), PCI addresses, and the
// chain of bridges above a function (from its /sys/bus/pci/devices link), which tells whether
// a GPU and a NIC sit under the same PCIe switch.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/value.h"

namespace fabricwatch::facts {

// "32.0 GT/s PCIe" -> 32.0, "8 GT/s" -> 8; "Unknown" and anything else -> nullopt.
std::optional<double> parsePcieSpeed(std::string_view text);

// "0000:17:00.0" (domain:bus:device.function, hex).
bool isPciAddress(std::string_view s);

// The PCI addresses of the bridges above a function, root port first, from the target of its
// /sys/bus/pci/devices/<bdf> link ("../../../devices/pci0000:10/0000:10:01.0/.../0000:13:00.0").
std::vector<std::string> pciBridges(std::string_view link_target);

// How close two functions are, from their bridge chains: "pci_switch" when they share a bridge
// below the root port (the switch's upstream port), "root_port" when they share only the root
// port, nullopt otherwise.
std::optional<std::string> pciProximity(const std::vector<std::string>& a,
                                        const std::vector<std::string>& b);

// The target of a /sys/bus/pci/devices/<bdf> link as a host path: "../../../devices/pci0000:10/
// 0000:10:01.0/0000:11:00.0" -> "/sys/devices/pci0000:10/0000:10:01.0/0000:11:00.0"; nullopt for a
// target anywhere else, or one that climbs out again (".."), so that a hostile root's link
// cannot lead a read outside /sys/devices.
std::optional<std::string> pciDevicePath(std::string_view link_target);

// The bridges on the path between two functions, from their bridge chains (root port first):
// those below the last bridge both share, on either side (the downstream ports where traffic
// between them enters and leaves a switch), in the order a then b.
std::vector<std::string> pciPathBridges(const std::vector<std::string>& a,
                                        const std::vector<std::string>& b);

// What a function's ACS (Access Control Services) extended capability says, from its
// configuration space read a dword at a time: `dword(offset)` is the little-endian dword at
// offset, nullopt where nothing can be read there (a reader without CAP_SYS_ADMIN sees the first
// 64 bytes only, a conventional PCI function has 256). The extended capability list starts at
// 0x100; each header holds the capability ID (bits 0-15) and the next offset (bits 20-31).
struct AcsState {
  bool readable = false;    // the extended configuration space could be read
  bool capability = false;  // the ACS capability (ID 0x000D) is in its list
  uint16_t control = 0;     // its control register, at the capability + 6
};
template <typename DwordAt>
AcsState parseAcs(DwordAt&& dword) {
  AcsState s;
  uint32_t offset = 0x100;
  // A list is at most (4096 - 256) / 4 headers long; a loop in a broken one ends there.
  for (int hops = 0; hops < 960 && offset >= 0x100 && offset <= 0xffc; ++hops) {
    std::optional<uint32_t> header = dword(offset);
    if (!header) return s;  // unreadable from here on: unknown, not "no ACS"
    s.readable = true;
    if (*header == 0 || *header == 0xffffffff) return s;  // no extended capability
    if ((*header & 0xffff) == 0x000d) {
      std::optional<uint32_t> regs = dword(offset + 4);  // capability (low), control (high)
      if (!regs) {
        s.readable = false;
        return s;
      }
      s.capability = true;
      s.control = static_cast<uint16_t>(*regs >> 16);
      return s;
    }
    offset = (*header >> 20) & 0xffc;
    if (offset == 0) return s;
  }
  return s;
}

// The controls of an ACS control register that send peer-to-peer traffic up towards the root
// complex instead of across the switch: "RR" (P2P Request Redirect, bit 2), "CR" (P2P Completion
// Redirect, bit 3), "UF" (Upstream Forwarding, bit 4). Source Validation (bit 0) and
// Translation Blocking (bit 1) redirect nothing.
std::vector<std::string> acsRedirects(uint16_t control);

struct PcieLinkText {
  std::optional<int64_t> current_width, max_width;
  std::optional<std::string> current_speed, max_speed;
};

// The Pcie object of the facts document: widths, speeds (GT/s and raw text) and `degraded`
// (current below max in width or speed) when both sides are known. A width of 0 and a speed of
// "Unknown" (functions without a PCIe link, e.g. in VMs) are absent.
core::Value pcieValue(const PcieLinkText& t);

}  // namespace fabricwatch::facts
