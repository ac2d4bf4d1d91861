#include "facts/gpu_source.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "core/snapshot.h"
#include "facts/fact_reader.h"
#include "facts/host_parse.h"
#include "facts/pci.h"
#include "facts/pci_acs.h"
#include "facts/pci_parse.h"

namespace fabricwatch::facts {
namespace {

std::string hex4(int64_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%04llx", static_cast<long long>(v));
  return buf;
}

// Whether NVIDIA Fabric Manager runs: a process named nv-fabricmanager among those of the root's
// /proc (the host's with the DaemonSet's hostPID, or a host /proc under --path.rootfs). Null
// when no process can be seen there (a root without /proc, or /proc/1/comm unreadable), which
// leaves the fact absent rather than "not running".
core::Value fabricManager(FactReader& r) {
  constexpr size_t kMaxProcEntries = 65536;  // as the workloads source: a node runs thousands
  if (!r.line("/proc/1/comm")) return nullptr;
  int64_t seen = 0;
  core::Value fm = core::Value::map();
  for (const auto& n : r.list("/proc", kMaxProcEntries)) {
    if (n.empty() || n.find_first_not_of("0123456789") != std::string::npos) continue;
    // A process that exited since the listing is gone: its comm is missing, not an error.
    auto comm = r.line("/proc/" + n + "/comm");
    if (!comm) continue;
    ++seen;
    if (!fm.find("pid") && isFabricManagerComm(*comm)) {
      if (auto pid = parseInteger(n)) fm["pid"] = *pid;
    }
  }
  fm["running"] = fm.find("pid") != nullptr;
  fm["processes"] = seen;
  return fm;
}

}  // namespace

GpuSource::Function GpuSource::scanFunction(FactReader& r, const DirReader& bus,
                                            const std::string& addr, FileId id) {
  uint64_t errors_before = r.collection().read_errors;
  Function fn;
  fn.id_ = id;
  // The vendor first: most functions on a host are not NVIDIA's, and that ends it.
  if (bus.integer(addr + "/vendor") == 0x10de) {
    PciFunction f = readPciFunction(bus, addr);
    if (isNvSwitch(f)) {
      fn.nvswitch = core::Value::map({{"pci_address", addr}});
      if (f.device) (*fn.nvswitch)["device"] = hex4(*f.device);
    }
    if (isNvidiaGpu(f)) fn.gpu = std::move(f);
  }
  fn.complete_ = r.collection().read_errors == errors_before;
  return fn;
}

GpuSource::Nic GpuSource::scanNic(FactReader& r, const DirReader& cls, const DirReader& bus,
                                  const std::string& name, FileId id) {
  Nic n;
  n.id_ = id;
  n.name = name;
  if (auto addr = cls.linkName(name + "/device"); addr && isPciAddress(*addr)) {
    uint64_t errors_before = r.collection().read_errors;
    n.numa = bus.integer(*addr + "/numa_node");
    if (auto link = bus.linkTarget(*addr)) {
      n.bridges = pciBridges(*link);
      n.device_path = pciDevicePath(*link).value_or("");
    }
    n.complete_ = r.collection().read_errors == errors_before;
  }
  return n;
}

core::Collection GpuSource::collect(const core::CollectContext& ctx) {
  core::HostFs fs(ctx.rootfs);
  core::Collection c;
  FactReader r(fs, c);
  DirReader bus = pciBus(r);
  std::vector<Nic*> nics;
  bool nics_read = false;
  core::Value devices = core::Value::list();
  core::Value nvswitches = core::Value::list();
  std::map<std::string, std::string> path_bridges;  // address -> its directory
  auto scan = [&](const std::string& addr, FileId id) { return scanFunction(r, bus, addr, id); };
  for (Function* fn : functions_.refresh(bus, bus.list(), scan)) {
    if (fn->nvswitch) nvswitches.push(*fn->nvswitch);
    if (!fn->gpu) continue;
    PciFunction& f = *fn->gpu;
    if (!nics_read) {
      DirReader cls(r, "/sys/class/infiniband");
      auto scan_nic = [&](const std::string& name, FileId id) {
        return scanNic(r, cls, bus, name, id);
      };
      nics = nics_.refresh(cls, cls.list(), scan_nic);
      nics_read = true;
    }
    const std::string& addr = f.address;
    core::Value g = core::Value::map();
    g["pci_address"] = addr;
    g["vendor"] = hex4(*f.vendor);
    if (f.device) g["device"] = hex4(*f.device);
    if (f.numa_node && *f.numa_node >= 0) g["numa_node"] = *f.numa_node;
    if (core::Value pcie = f.link.read(r); pcie.size() > 0) g["pcie"] = std::move(pcie);
    // The nearest NICs, by the closest relation any NIC has to this GPU.
    std::string best;
    std::vector<std::string> near;
    for (const char* level : {"pci_switch", "root_port", "numa"}) {
      for (const Nic* n : nics) {
        bool match = std::string_view(level) == "numa"
                         ? (f.numa_node && *f.numa_node >= 0 && n->numa == f.numa_node)
                         : pciProximity(f.bridges, n->bridges) == level;
        if (match) near.push_back(n->name);
      }
      if (!near.empty()) {
        best = level;
        break;
      }
    }
    // The bridges between the GPU and each NIC under the same switch or root port: where ACS
    // would redirect their peer-to-peer traffic.
    core::Value paths = core::Value::list();
    if (best == "pci_switch" || best == "root_port") {
      for (const Nic* n : nics) {
        if (std::find(near.begin(), near.end(), n->name) == near.end()) continue;
        core::Value bl = core::Value::list();
        for (const auto& b : pciPathBridges(f.bridges, n->bridges)) {
          std::string dir = bridgeDir(f.device_path, b);
          if (dir.empty()) dir = bridgeDir(n->device_path, b);
          auto [it, fresh] = path_bridges.emplace(b, dir);
          if (!fresh && it->second.empty()) it->second = dir;
          bl.push(b);
        }
        paths.push(core::Value::map({{"nic", n->name}, {"bridges", std::move(bl)}}));
      }
    }
    g["nic_paths"] = std::move(paths);
    core::Value nl = core::Value::list();
    for (auto& n : near) nl.push(std::move(n));
    g["nics"] = std::move(nl);
    if (!best.empty()) g["nic_locality"] = best;
    devices.push(std::move(g));
  }
  core::Value gpu = core::Value::map();
  gpu["count"] = devices.size();
  gpu["devices"] = std::move(devices);
  if (nvswitches.size() > 0) {
    if (core::Value fm = fabricManager(r); !fm.isNull()) gpu["fabric_manager"] = std::move(fm);
  }
  gpu["nvswitches"] = std::move(nvswitches);
  core::Value bridges = core::Value::list();
  for (const auto& [addr, dir] : path_bridges) bridges.push(readBridgeAcs(r, addr, dir));
  gpu["pci_bridges"] = std::move(bridges);
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
  renderPcieMetrics(snapshot, out);
}

std::vector<core::OptionalMetric> GpuSource::optionalMetrics() const {
  return pcieOptionalMetrics();
}

}  // namespace fabricwatch::facts
