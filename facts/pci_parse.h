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

struct PcieLinkText {
  std::optional<int64_t> current_width, max_width;
  std::optional<std::string> current_speed, max_speed;
};

// The Pcie object of the facts document: widths, speeds (GT/s and raw text) and `degraded`
// (current below max in width or speed) when both sides are known. A width of 0 and a speed of
// "Unknown" (functions without a PCIe link, e.g. in VMs) are absent.
core::Value pcieValue(const PcieLinkText& t);

}  // namespace fabricwatch::facts
