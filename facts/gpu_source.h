#pragma once
// NVIDIA GPUs from PCI sysfs alone, no NVML (gpu.*): addresses, ids, NUMA node, PCIe link, and
// the RDMA NICs closest to each GPU (same PCIe switch, else same root port, else same NUMA
// node). Also renders the PCIe link metrics of GPUs and RDMA NICs. Where NVSwitch chips are on
// the bus (an HGX baseboard), whether NVIDIA Fabric Manager runs (/proc/*/comm), without which
// CUDA and NCCL cannot set up NVLink between the GPUs. And the ACS controls of the PCIe bridges
// on the path between each GPU and the NICs beside it (facts/pci_acs.h).
//
// Every PCI function is looked at once while it lives (ScannedDir); a collection then reads
// only the current PCIe link of each GPU.

#include <optional>
#include <string>
#include <vector>

#include "core/source.h"
#include "facts/pci.h"
#include "facts/scanned_dir.h"

namespace fabricwatch::facts {

class GpuSource : public core::Source {
 public:
  std::string_view name() const override { return "gpu"; }
  core::Collection collect(const core::CollectContext& ctx) override;
  void renderMetrics(const core::Snapshot& snapshot, core::MetricFamilies& out) const override;
  // The PCIe link families it renders for NICs and GPUs are selected under [collect.sources.gpu].
  std::vector<core::OptionalMetric> optionalMetrics() const override;

 private:
  // A PCI function: a GPU's facts, or nothing for any other function.
  struct Function {
    FileId id_;
    bool complete_ = true;
    std::optional<PciFunction> gpu;
    std::optional<core::Value> nvswitch;  // an NVSwitch: {pci_address, device}
    FileId id() const { return id_; }
    bool complete() const { return complete_; }
  };
  // An RDMA NIC's place on the PCI tree, to find the NICs closest to each GPU.
  struct Nic {
    FileId id_;
    bool complete_ = true;
    std::string name;
    std::vector<std::string> bridges;
    std::string device_path;  // /sys/devices/...
    std::optional<int64_t> numa;
    FileId id() const { return id_; }
    bool complete() const { return complete_; }
  };
  static Function scanFunction(FactReader& r, const DirReader& bus, const std::string& addr,
                               FileId id);
  static Nic scanNic(FactReader& r, const DirReader& cls, const DirReader& bus,
                     const std::string& name, FileId id);

  ScannedDir<Function> functions_;  // by PCI address
  ScannedDir<Nic> nics_;            // by RDMA device name
};

}  // namespace fabricwatch::facts
