#pragma once
// Reads one PCI function's facts from /sys/bus/pci/devices/<bdf>: ids, NUMA node, PCIe link and
// bridge chain. Shared by the RDMA and GPU sources, which read a function once while it lives
// and then only its current link (PcieLink) on each collection.

#include <optional>
#include <string>
#include <vector>

#include "core/metric_selection.h"
#include "core/metrics.h"
#include "core/value.h"
#include "facts/fact_reader.h"
#include "facts/kept_file.h"
#include "facts/pci_parse.h"

namespace fabricwatch::facts {

// The PCIe link of a function: the maxima are read once, the current width and speed (which
// change: a link retrains, a GPU slows its link when idle) are kept open and read each time.
class PcieLink {
 public:
  PcieLink() = default;
  explicit PcieLink(const DirReader& function);
  // The pcie object of the facts document (see pcieValue).
  core::Value read(FactReader& r);

 private:
  KeptFile current_width_, current_speed_;
  PcieLinkText text_;
};

// What cannot change while the function exists, and its link.
struct PciFunction {
  std::string address;
  std::optional<int64_t> vendor, device, pci_class, numa_node;
  std::optional<std::string> driver;
  std::vector<std::string> bridges;  // root port first
  std::string device_path;           // /sys/devices/...: where its bridges' directories are
  PcieLink link;
};

// bus: an open /sys/bus/pci/devices (see pciBus), so that each function costs short relative
// lookups instead of walks of the whole path.
PciFunction readPciFunction(const DirReader& bus, const std::string& address);
DirReader pciBus(FactReader& r);

// NVIDIA (0x10de) display controllers: VGA (0x0300xx) and 3D (0x0302xx).
bool isNvidiaGpu(const PciFunction& f);
// NVIDIA (0x10de) bridges of class "other" (0x0680xx): the NVSwitch chips of HGX baseboards
// (0x1af1 on A100's, 0x22a3 on H100's and H200's), which only NVIDIA Fabric Manager sets up.
bool isNvSwitch(const PciFunction& f);

// The PCIe link metrics for every function with a pcie object in the facts (RDMA NICs, GPUs),
// one family per quantity so that NICs and GPUs share them. By default: degraded for every
// function, and the current and maximum width of GPUs (an idle GPU lowers its speed, so their
// alert compares widths); the rest are optional (pcieOptionalMetrics).
void renderPcieMetrics(const core::Snapshot& snapshot, core::MetricFamilies& out);
std::vector<core::OptionalMetric> pcieOptionalMetrics();

}  // namespace fabricwatch::facts
