#include "probes/node/gpu_source.h"

#include <cstdio>

#include "core/snapshot.h"
#include "probes/node/fact_reader.h"
#include "probes/node/host_parse.h"
#include "probes/node/pci.h"
#include "probes/node/pci_parse.h"

namespace fabricwatch::probes::node {
namespace {

struct Nic {
  std::string name;
  std::vector<std::string> bridges;
  std::optional<int64_t> numa;
};

std::vector<Nic> rdmaNics(FactReader& r, const DirReader& bus) {
  std::vector<Nic> out;
  DirReader ib(r, "/sys/class/infiniband");
  for (const auto& name : ib.list()) {
    auto addr = ib.linkName(name + "/device");
    if (!addr || !isPciAddress(*addr)) continue;
    Nic n{name, {}, bus.integer(*addr + "/numa_node")};
    if (auto link = bus.linkTarget(*addr)) n.bridges = pciBridges(*link);
    out.push_back(std::move(n));
  }
  return out;
}

std::string hex4(int64_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%04llx", static_cast<long long>(v));
  return buf;
}

}  // namespace

core::Collection GpuSource::collect(const core::CollectContext& ctx) {
  core::HostFs fs(ctx.rootfs);
  core::Collection c;
  FactReader r(fs, c);
  std::vector<Nic> nics;
  bool nics_read = false;
  core::Value devices = core::Value::list();
  DirReader bus = pciBus(r);
  for (const auto& addr : bus.list()) {
    // The vendor first: most functions on a host are not NVIDIA's, and that ends it.
    auto vendor = bus.integer(addr + "/vendor");
    if (vendor != 0x10de) continue;
    PciFunction f = readPciFunction(bus, addr);
    if (!isNvidiaGpu(f)) continue;
    if (!nics_read) {
      nics = rdmaNics(r, bus);
      nics_read = true;
    }
    core::Value g = core::Value::map();
    g["pci_address"] = addr;
    g["vendor"] = hex4(*f.vendor);
    if (f.device) g["device"] = hex4(*f.device);
    if (f.numa_node && *f.numa_node >= 0) g["numa_node"] = *f.numa_node;
    if (f.pcie.size() > 0) g["pcie"] = f.pcie;
    // The nearest NICs, by the closest relation any NIC has to this GPU.
    std::string best;
    std::vector<std::string> near;
    for (const char* level : {"pci_switch", "root_port", "numa"}) {
      for (const auto& n : nics) {
        bool match = std::string_view(level) == "numa"
                         ? (f.numa_node && *f.numa_node >= 0 && n.numa == f.numa_node)
                         : pciProximity(f.bridges, n.bridges) == level;
        if (match) near.push_back(n.name);
      }
      if (!near.empty()) {
        best = level;
        break;
      }
    }
    core::Value nl = core::Value::list();
    for (auto& n : near) nl.push(std::move(n));
    g["nics"] = std::move(nl);
    if (!best.empty()) g["nic_locality"] = best;
    devices.push(std::move(g));
  }
  core::Value gpu = core::Value::map();
  gpu["count"] = devices.size();
  gpu["devices"] = std::move(devices);
  if (auto version = r.text("/proc/driver/nvidia/version")) {
    core::Value driver = parseNvidiaDriverVersion(*version);
    if (driver.isMap()) gpu["driver"] = std::move(driver);
  }
  c.facts["gpu"] = std::move(gpu);
  return c;
}

void GpuSource::renderMetrics(const core::Snapshot& snapshot, core::MetricFamilies& out) const {
  if (const auto* n = snapshot.facts.findPath("gpu.count"); n && n->isInt()) {
    auto f = core::gaugeFamily("fabricwatch_gpus", "NVIDIA GPUs found on the PCI bus.");
    core::addSample(f, {}, n->asDouble());
    out.push_back(std::move(f));
  }
  renderPcieMetrics(snapshot.facts, out);
}

}  // namespace fabricwatch::probes::node
