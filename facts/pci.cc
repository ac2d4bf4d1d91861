#include "facts/pci.h"

#include "core/metrics.h"
#include "core/snapshot.h"
#include "facts/pci_parse.h"

namespace fabricwatch::facts {

DirReader pciBus(FactReader& r) { return DirReader(r, "/sys/bus/pci/devices"); }

PciFunction readPciFunction(const DirReader& bus, const std::string& address) {
  PciFunction f;
  f.address = address;
  DirReader dir = bus.sub(address);
  f.vendor = dir.integer("vendor");
  f.device = dir.integer("device");
  f.pci_class = dir.integer("class");
  f.numa_node = dir.integer("numa_node");
  f.driver = dir.linkName("driver");
  if (auto link = bus.linkTarget(address)) {
    f.bridges = pciBridges(*link);
    f.device_path = pciDevicePath(*link).value_or("");
  }
  f.link = PcieLink(dir);
  return f;
}

// Functions without a PCIe link (in VMs, say) answer EINVAL for the link attributes: absence.
PcieLink::PcieLink(const DirReader& function)
    : current_width_(function, "current_link_width"),
      current_speed_(function, "current_link_speed") {
  text_.max_width = function.integer("max_link_width", true);
  text_.max_speed = function.line("max_link_speed", true);
}

core::Value PcieLink::read(FactReader& r) {
  text_.current_width = current_width_.integer(r, true);
  text_.current_speed = current_speed_.line(r, true);
  return pcieValue(text_);
}

bool isNvidiaGpu(const PciFunction& f) {
  if (f.vendor != 0x10de || !f.pci_class) return false;
  int64_t cls = *f.pci_class >> 8;
  return cls == 0x0300 || cls == 0x0302;
}

bool isNvSwitch(const PciFunction& f) {
  return f.vendor == 0x10de && f.pci_class && (*f.pci_class >> 8) == 0x0680;
}

std::vector<core::OptionalMetric> pcieOptionalMetrics() {
  return {
      {"fabricwatch_pcie_link_current_width", "", "+1 per RDMA NIC (GPUs have it by default)"},
      {"fabricwatch_pcie_link_max_width", "", "+1 per RDMA NIC (GPUs have it by default)"},
      {"fabricwatch_pcie_link_current_speed_transfers_per_second", "", "+1 per RDMA NIC and GPU"},
      {"fabricwatch_pcie_link_max_speed_transfers_per_second", "", "+1 per RDMA NIC and GPU"},
  };
}

void renderPcieMetrics(const core::Snapshot& snapshot, core::MetricFamilies& out) {
  const core::Value& facts = snapshot.facts;
  auto cw = core::gaugeFamily("fabricwatch_pcie_link_current_width",
                              "Negotiated PCIe link width (lanes) of an RDMA NIC or GPU.");
  auto mw = core::gaugeFamily("fabricwatch_pcie_link_max_width",
                              "Maximum PCIe link width (lanes) of an RDMA NIC or GPU.");
  auto cs = core::gaugeFamily("fabricwatch_pcie_link_current_speed_transfers_per_second",
                              "Negotiated PCIe link speed per lane, in transfers per second.");
  auto ms = core::gaugeFamily("fabricwatch_pcie_link_max_speed_transfers_per_second",
                              "Maximum PCIe link speed per lane, in transfers per second.");
  auto dg = core::gaugeFamily("fabricwatch_pcie_link_degraded",
                              "1 when the PCIe link runs below its maximum width or speed. GPUs "
                              "lower their link speed when idle, so speed alone is not a fault.");
  auto on = [&](const prometheus::MetricFamily& f) { return core::wantsFamily(snapshot, f.name); };
  const bool nic_cw = on(cw), nic_mw = on(mw), all_cs = on(cs), all_ms = on(ms);
  auto emit = [&](const core::Value& pcie, const core::LabelPairs& l) {
    bool gpu = l[1].second == "gpu";
    auto num = [&](const char* key, prometheus::MetricFamily& fam, double scale) {
      bool wanted = &fam == &cw   ? gpu || nic_cw
                    : &fam == &mw ? gpu || nic_mw
                    : &fam == &cs ? all_cs
                                  : all_ms;
      if (const auto* v = pcie.find(key); v && v->isNumber() && wanted)
        core::addSample(fam, l, v->asDouble() * scale);
    };
    num("current_width", cw, 1);
    num("max_width", mw, 1);
    num("current_speed_gts", cs, 1e9);
    num("max_speed_gts", ms, 1e9);
    if (const auto* d = pcie.find("degraded"); d && d->isBool())
      core::addSample(dg, l, d->asBool());
  };
  if (const auto* devs = facts.findPath("rdma.devices"); devs && devs->isList()) {
    for (const auto& d : devs->asList()) {
      const auto *pcie = d.find("pcie"), *addr = d.find("pci_address"), *name = d.find("name");
      if (!pcie || !addr || !name) continue;
      emit(*pcie,
           {{"pci_address", addr->asString()}, {"function", "rdma"}, {"device", name->asString()}});
    }
  }
  if (const auto* gpus = facts.findPath("gpu.devices"); gpus && gpus->isList()) {
    size_t i = 0;
    for (const auto& g : gpus->asList()) {
      const auto *pcie = g.find("pcie"), *addr = g.find("pci_address");
      if (pcie && addr) {
        emit(*pcie, {{"pci_address", addr->asString()},
                     {"function", "gpu"},
                     {"device", "gpu" + std::to_string(i)}});
      }
      ++i;
    }
  }
  for (auto* f : {&cw, &mw, &cs, &ms, &dg}) {
    if (!f->metric.empty()) out.push_back(std::move(*f));
  }
}

}  // namespace fabricwatch::facts
