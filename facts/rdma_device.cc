#include "facts/rdma_device.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <set>

#include "facts/pci_parse.h"
#include "facts/rdma_parse.h"

namespace fabricwatch::facts {
namespace {

// Directory entries that are numbers ("1", "10"), in numeric order.
std::vector<int64_t> numericEntries(const DirReader& dir) {
  std::vector<int64_t> out;
  for (const auto& n : dir.list()) {
    if (n.find_first_not_of("0123456789") != std::string::npos) continue;
    if (auto i = parseInteger(n)) out.push_back(*i);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// "4: ACTIVE" -> obj[key] = "ACTIVE", obj[code_key] = 4.
void setCodeName(FactReader& r, const std::optional<std::string>& line, std::string_view path,
                 core::Value& obj, const char* key, const char* code_key) {
  if (!line) return;
  if (auto cn = parseCodeName(*line)) {
    obj[key] = cn->name;
    obj[code_key] = cn->code;
  } else {
    r.error(std::string(path) + ": unexpected \"" + line->substr(0, 40) + "\"");
  }
}

std::string hex4(int64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%04llx", static_cast<unsigned long long>(v));
  return buf;
}

// False only when `rel` is surely absent (ENOENT, ENOTDIR); any other failure leaves it to
// the read that follows to report.
bool mayExist(const DirReader& dir, const char* rel) {
  struct stat st;
  if (dir.fd() < 0) return false;
  return ::fstatat(dir.fd(), rel, &st, 0) == 0 || (errno != ENOENT && errno != ENOTDIR);
}

}  // namespace

// What the device is, from its class entry's device/ (where the kernel links the PCI function):
// the driver (device/driver, else DRIVER= in device/uevent), the vendor, the PCI address (the
// link's name, else PCI_SLOT_NAME= in device/uevent), the NUMA node and the PCIe link. A host
// root need not have /sys/bus/pci/devices (a pod that mounts /sys/class only, a tree built
// from another tool's testdata); where it has the function, it must say the same, and a
// disagreement is a read error.
void RdmaDevice::readHardware(FactReader& r, const DirReader& dir, const DirReader& bus,
                              core::Value& d, std::optional<PcieLink>& link) {
  RdmaHardware hw;
  DirReader fn = dir.sub("device");
  hw.has_device = fn.isOpen();
  std::optional<std::string> addr = dir.linkName("device");
  if (addr && !isPciAddress(*addr)) addr.reset();
  if (hw.has_device) {
    hw.vendor = fn.integer("vendor");
    hw.driver = fn.linkName("driver");
    if (!hw.driver || !addr) {
      if (auto uevent = fn.line("uevent")) {
        if (!hw.driver) hw.driver = ueventValue(*uevent, "DRIVER");
        if (auto slot = ueventValue(*uevent, "PCI_SLOT_NAME"); !addr && slot && isPciAddress(*slot))
          addr = std::move(slot);
      }
    }
    if (auto numa = fn.integer("numa_node"); numa && *numa >= 0) d["numa_node"] = *numa;
    link.emplace(fn);
  }
  if (addr) {
    d["pci_address"] = *addr;
    if (DirReader pci = bus.sub(*addr); pci.isOpen()) {
      auto vendor = pci.integer("vendor");
      auto driver = pci.linkName("driver");
      auto differ = [&](const char* what, const std::string& bus_says, const std::string& says) {
        r.error(pci.hostPath() + ": " + what + " " + bus_says + ", but " + dir.hostPath() +
                "/device says " + says);
      };
      if (vendor && hw.vendor && *vendor != *hw.vendor)
        differ("vendor", hex4(*vendor), hex4(*hw.vendor));
      if (driver && hw.driver && *driver != *hw.driver) differ("driver", *driver, *hw.driver);
      if (!hw.vendor) hw.vendor = vendor;
      if (!hw.driver) hw.driver = driver;
    }
  }
  if (hw.driver) d["driver"] = *hw.driver;
  d["kind"] = rdmaKind(std::string_view(d["name"].asString()), hw);
}

std::optional<std::vector<RdmaDevice::Counter>> RdmaDevice::openCounters(const DirReader& port,
                                                                         const char* rel) {
  DirReader dir = port.sub(rel);
  if (!dir.isOpen()) return std::nullopt;
  std::vector<Counter> out;
  for (const auto& n : dir.list()) {
    if (n == "lifespan") continue;  // a refresh interval in ms, not a counter
    out.push_back({n, KeptFile(dir, n)});
  }
  return out;
}

core::Value RdmaDevice::readCounters(FactReader& r, std::vector<Counter>& counters) {
  core::Value out = core::Value::map();
  for (auto& c : counters) {
    auto text = c.file.line(r);
    if (!text || isUnavailableCounter(*text)) continue;
    if (auto v = parseUnsigned(*text))
      out[c.name] = *v;  // u64: above INT64_MAX a double (docs/facts.md)
    else
      r.error(std::string(c.file.hostPath()) + ": not a counter: \"" + text->substr(0, 40) + "\"");
  }
  return out;
}

RdmaDevice RdmaDevice::scan(FactReader& r, const DirReader& cls, const DirReader& bus,
                            const std::string& name, FileId id) {
  uint64_t errors_before = r.collection().read_errors;
  RdmaDevice dev;
  dev.id_ = id;
  DirReader dir = cls.sub(name);
  core::Value& d = dev.fixed_;
  d["name"] = name;
  readHardware(r, dir, bus, d, dev.link_);
  setCodeName(r, dir.line("node_type"), joinPath(dir.hostPath(), "node_type"), d, "node_type",
              "node_type_code");
  for (const char* f : {"fw_ver", "hca_type", "board_id", "node_guid", "sys_image_guid"}) {
    if (auto v = dir.line(f)) d[f] = *v;
  }
  dev.net_dir_ = joinPath(dir.hostPath(), "device/net");
  // Device-wide driver counters (EFA: cmds_err, submitted_cmds, alloc_pd_err ...), beside the
  // ports' own.
  dev.hw_counters_ = openCounters(dir, "hw_counters");

  // Each directory is opened once, listed through that descriptor, and its entries opened
  // relative to it.
  DirReader ports = dir.sub("ports");
  for (int64_t n : numericEntries(ports)) {
    DirReader pd = ports.sub(std::to_string(n));
    Port p;
    p.number = n;
    p.dir = pd.hostPath();
    p.fixed["port"] = n;
    if (auto ll = pd.line("link_layer")) p.fixed["link_layer"] = *ll;
    // Ports without GID attributes (EFA's) are known here at the cost of one lookup, instead
    // of two lookups of the whole path for each GID in use.
    p.gid_attrs = mayExist(pd, "gid_attrs");
    p.state = KeptFile(pd, "state");
    p.phys_state = KeptFile(pd, "phys_state");
    p.rate = KeptFile(pd, "rate");
    p.lid = KeptFile(pd, "lid");
    p.sm_lid = KeptFile(pd, "sm_lid");
    DirReader gids = pd.sub("gids");
    for (int64_t i : numericEntries(gids)) {
      p.gids.push_back({i, KeptFile(gids, std::to_string(i)), std::nullopt, std::nullopt});
    }
    p.counters = openCounters(pd, "counters");
    // Kernels before 4.5 (and mlx4 ports) keep the 64-bit PMA counters apart.
    p.counters_ext = openCounters(pd, "counters_ext");
    p.hw_counters = openCounters(pd, "hw_counters");
    dev.ports_.push_back(std::move(p));
  }
  dev.complete_ = r.collection().read_errors == errors_before;
  return dev;
}

core::Value RdmaDevice::read(FactReader& r) {
  core::Value d = fixed_;
  if (link_) {
    core::Value pcie = link_->read(r);
    if (pcie.size() > 0) d["pcie"] = std::move(pcie);
  }
  // Net devices of the PCI function (RoCE, IPoIB); dev_port says which port (0-based). Listed
  // each time: udev renames them after they appear.
  std::vector<std::pair<std::string, int64_t>> dev_netdevs;
  DirReader net(r, net_dir_);
  for (const auto& nd : net.list()) {
    auto dp = net.integer(nd + "/dev_port");
    dev_netdevs.emplace_back(nd, dp.value_or(0));
  }
  core::Value ports = core::Value::list();
  for (auto& p : ports_) ports.push(readPort(r, p, dev_netdevs));
  d["ports"] = std::move(ports);
  if (hw_counters_) d["hw_counters"] = readCounters(r, *hw_counters_);
  return d;
}

// A RoCE port's RDMA MTU follows the MTU of its net device (`ip link set DEV mtu N` changes it
// at any time): the net device of its own PCI function (dev_port), else the first its GIDs name
// (RoCE over a VLAN or bond without one of its own). iWARP devices (RNIC: eRDMA, irdma) run
// over TCP and have no RoCE MTU; InfiniBand and EFA ports have no net device MTU to follow.
void RdmaDevice::readRoceMtu(FactReader& r, const Port& port,
                             const std::vector<std::pair<std::string, int64_t>>& dev_netdevs,
                             const std::set<std::string>& netdevs, core::Value& p) const {
  const core::Value* ll = p.find("link_layer");
  const core::Value* nt = fixed_.find("node_type_code");
  if (!ll || !ll->isString() || ll->asString() != "Ethernet") return;
  if (nt && nt->isInt() && nt->asInt() == 4) return;
  std::string path;
  for (const auto& [nd, dev_port] : dev_netdevs) {
    if (dev_port + 1 == port.number) {
      path = joinPath(net_dir_, nd);
      p["mtu_netdev"] = nd;
      break;
    }
  }
  if (path.empty()) {
    // A name from a GID attribute file: only a plain interface name leads to a file.
    for (const auto& nd : netdevs) {
      if (nd.empty() || nd == "." || nd == ".." || nd.find('/') != std::string::npos) continue;
      path = "/sys/class/net/" + nd;
      p["mtu_netdev"] = nd;
      break;
    }
  }
  if (path.empty()) return;
  auto mtu = r.integer(joinPath(path, "mtu"));
  if (!mtu) return;
  p["netdev_mtu"] = *mtu;
  if (auto active = roceActiveMtu(*mtu)) p["active_mtu"] = *active;
}

core::Value RdmaDevice::readPort(FactReader& r, Port& port,
                                 const std::vector<std::pair<std::string, int64_t>>& dev_netdevs) {
  core::Value p = port.fixed;
  setCodeName(r, port.state.line(r), joinPath(port.dir, "state"), p, "state", "state_code");
  setCodeName(r, port.phys_state.line(r), joinPath(port.dir, "phys_state"), p, "phys_state",
              "phys_state_code");
  if (auto rate = port.rate.line(r)) {
    p["rate"] = *rate;
    // The text stays as the kernel wrote it; a link that has not trained shows a placeholder
    // there, which is not the port's rate.
    auto code = [&](const char* k) {
      const core::Value* v = p.find(k);
      return v && v->isInt() ? std::optional<int64_t>(v->asInt()) : std::nullopt;
    };
    if (auto g = parseRateGbps(*rate);
        g && rateIsMeasured(code("state_code"), code("phys_state_code")))
      p["rate_gbps"] = *g;
  }
  if (auto lid = port.lid.integer(r)) p["lid"] = *lid;
  if (auto sm = port.sm_lid.integer(r)) p["sm_lid"] = *sm;

  std::set<std::string> netdevs;
  core::Value gids = core::Value::list();
  for (auto& gid : port.gids) {
    auto address = gid.address.line(r);
    if (!address || isZeroGid(*address)) continue;
    std::string idx = std::to_string(gid.index);
    if (!gid.type && !port.gid_attrs) {
      gid.type.emplace();  // missing: reads as absent
      gid.ndev.emplace();
    } else if (!gid.type) {
      gid.type.emplace(r.fs(), joinPath(port.dir, "gid_attrs/types/" + idx));
      gid.ndev.emplace(r.fs(), joinPath(port.dir, "gid_attrs/ndevs/" + idx));
    }
    core::Value g = core::Value::map();
    g["index"] = gid.index;
    g["address"] = std::move(*address);
    // Types and ndevs of entries that the kernel has no attributes for fail with EINVAL.
    if (auto t = gid.type->line(r, true)) g["type"] = *t;
    if (auto nd = gid.ndev->line(r, true)) {
      g["ndev"] = *nd;
      netdevs.insert(*nd);
    }
    gids.push(std::move(g));
  }
  p["gids"] = std::move(gids);
  for (const auto& [nd, dev_port] : dev_netdevs) {
    if (dev_port + 1 == port.number) netdevs.insert(nd);
  }
  core::Value nds = core::Value::list();
  for (const auto& nd : netdevs) nds.push(nd);
  p["netdevs"] = std::move(nds);
  readRoceMtu(r, port, dev_netdevs, netdevs, p);
  if (port.counters) p["counters"] = readCounters(r, *port.counters);
  if (port.counters_ext) p["counters_ext"] = readCounters(r, *port.counters_ext);
  if (port.hw_counters) p["hw_counters"] = readCounters(r, *port.hw_counters);
  return p;
}

}  // namespace fabricwatch::facts
