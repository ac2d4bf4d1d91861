#include "probes/node/rdma_source.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "core/snapshot.h"
#include "probes/node/fact_reader.h"
#include "probes/node/pci.h"
#include "probes/node/pci_parse.h"
#include "probes/node/rdma_parse.h"

namespace fabricwatch::probes::node {
namespace {

constexpr std::string_view kClass = "/sys/class/infiniband";

// Directory entries that are numbers ("1", "10"), in numeric order.
std::vector<int64_t> numericEntries(const DirReader& dir, std::string_view rel) {
  std::vector<int64_t> out;
  for (const auto& n : dir.list(rel)) {
    if (n.find_first_not_of("0123456789") != std::string::npos) continue;
    if (auto i = parseInteger(n)) out.push_back(*i);
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool naturalLess(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) &&
        std::isdigit(static_cast<unsigned char>(b[j]))) {
      size_t ie = a.find_first_not_of("0123456789", i), je = b.find_first_not_of("0123456789", j);
      if (ie == std::string::npos) ie = a.size();
      if (je == std::string::npos) je = b.size();
      std::string_view na(a.data() + i, ie - i), nb(b.data() + j, je - j);
      while (na.size() > 1 && na.front() == '0') na.remove_prefix(1);
      while (nb.size() > 1 && nb.front() == '0') nb.remove_prefix(1);
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = ie;
      j = je;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

core::Value readCounters(const DirReader& dir) {
  core::Value out = core::Value::map();
  for (const auto& n : dir.list()) {
    if (n == "lifespan") continue;  // a refresh interval in ms, not a counter
    if (auto v = dir.integer(n)) out[n] = *v;
  }
  return out;
}

void setCodeName(FactReader& r, const DirReader& dir, core::Value& obj, const char* file,
                 const char* key, const char* code_key) {
  auto l = dir.line(file);
  if (!l) return;
  if (auto cn = parseCodeName(*l)) {
    obj[key] = cn->name;
    obj[code_key] = cn->code;
  } else {
    r.error(joinPath(dir.hostPath(), file) + ": unexpected \"" + l->substr(0, 40) + "\"");
  }
}

core::Value readPort(FactReader& r, const DirReader& dev, int64_t port,
                     const std::vector<std::pair<std::string, int64_t>>& dev_netdevs) {
  DirReader dir = dev.sub("ports/" + std::to_string(port));
  core::Value p = core::Value::map();
  p["port"] = port;
  setCodeName(r, dir, p, "state", "state", "state_code");
  setCodeName(r, dir, p, "phys_state", "phys_state", "phys_state_code");
  if (auto rate = dir.line("rate")) {
    p["rate"] = *rate;
    if (auto g = parseRateGbps(*rate)) p["rate_gbps"] = *g;
  }
  if (auto ll = dir.line("link_layer")) p["link_layer"] = *ll;
  if (auto lid = dir.integer("lid")) p["lid"] = *lid;
  if (auto sm = dir.integer("sm_lid")) p["sm_lid"] = *sm;

  std::set<std::string> netdevs;
  core::Value gids = core::Value::list();
  DirReader gid_dir = dir.sub("gids");
  std::optional<DirReader> types, ndevs;
  for (int64_t i : numericEntries(dir, "gids")) {
    std::string idx = std::to_string(i);
    auto gid = gid_dir.line(idx);
    if (!gid || isZeroGid(*gid)) continue;
    if (!types) {
      types.emplace(dir.sub("gid_attrs/types"));
      ndevs.emplace(dir.sub("gid_attrs/ndevs"));
    }
    core::Value g = core::Value::map();
    g["index"] = i;
    g["address"] = *gid;
    // Types and ndevs of entries that the kernel has no attributes for fail with EINVAL.
    if (auto t = types->line(idx, true)) g["type"] = *t;
    if (auto nd = ndevs->line(idx, true)) {
      g["ndev"] = *nd;
      netdevs.insert(*nd);
    }
    gids.push(std::move(g));
  }
  p["gids"] = std::move(gids);
  for (const auto& [nd, dev_port] : dev_netdevs) {
    if (dev_port + 1 == port) netdevs.insert(nd);
  }
  core::Value nds = core::Value::list();
  for (const auto& nd : netdevs) nds.push(nd);
  p["netdevs"] = std::move(nds);
  if (DirReader c = dir.sub("counters"); c.isOpen()) p["counters"] = readCounters(c);
  if (DirReader c = dir.sub("hw_counters"); c.isOpen()) p["hw_counters"] = readCounters(c);
  return p;
}

core::Value readDevice(FactReader& r, const DirReader& bus, const std::string& name) {
  DirReader dir(r, std::string(kClass) + "/" + name);
  core::Value d = core::Value::map();
  d["name"] = name;
  std::optional<PciFunction> pci;
  if (auto addr = dir.linkName("device"); addr && isPciAddress(*addr)) {
    pci = readPciFunction(bus, *addr);
    d["pci_address"] = *addr;
    if (pci->numa_node && *pci->numa_node >= 0) d["numa_node"] = *pci->numa_node;
    if (pci->driver) d["driver"] = *pci->driver;
    if (pci->pcie.size() > 0) d["pcie"] = pci->pcie;
  }
  std::optional<std::string_view> driver;
  if (pci && pci->driver) driver = *pci->driver;
  d["kind"] = rdmaKind(name, driver, pci ? pci->vendor : std::nullopt);
  setCodeName(r, dir, d, "node_type", "node_type", "node_type_code");
  for (const char* f : {"fw_ver", "hca_type", "board_id", "node_guid", "sys_image_guid"}) {
    if (auto v = dir.line(f)) d[f] = *v;
  }
  // Net devices of the PCI function (RoCE, IPoIB); dev_port says which port (0-based).
  std::vector<std::pair<std::string, int64_t>> dev_netdevs;
  DirReader net = dir.sub("device/net");
  for (const auto& nd : net.list()) {
    auto dp = net.integer(nd + "/dev_port");
    dev_netdevs.emplace_back(nd, dp.value_or(0));
  }
  core::Value ports = core::Value::list();
  for (int64_t p : numericEntries(dir, "ports")) ports.push(readPort(r, dir, p, dev_netdevs));
  d["ports"] = std::move(ports);
  return d;
}

}  // namespace

core::Collection RdmaSource::collect(const core::CollectContext& ctx) {
  core::HostFs fs(ctx.rootfs);
  core::Collection c;
  FactReader r(fs, c);
  core::Value devices = core::Value::list();
  std::vector<std::string> names = r.list(std::string(kClass));
  // mlx5_2 before mlx5_10, rdmap19s0 before rdmap147s0.
  std::sort(names.begin(), names.end(), naturalLess);
  DirReader bus = pciBus(r);
  for (const auto& name : names) devices.push(readDevice(r, bus, name));
  c.facts["rdma"] = core::Value::map({{"devices", std::move(devices)}});
  return c;
}

void RdmaSource::renderMetrics(const core::Snapshot& snapshot, core::MetricFamilies& out) const {
  const core::Value* devs = snapshot.facts.findPath("rdma.devices");
  if (!devs || !devs->isList()) return;
  auto count = core::gaugeFamily("fabricwatch_rdma_devices", "RDMA devices found in sysfs.");
  core::addSample(count, {}, static_cast<double>(devs->size()));
  auto info = core::gaugeFamily("fabricwatch_rdma_device_info",
                                "RDMA device identity and firmware (constant 1).");
  auto state =
      core::gaugeFamily("fabricwatch_rdma_port_state",
                        "Logical port state: 1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE, 5 ACTIVE_DEFER.");
  auto phys = core::gaugeFamily("fabricwatch_rdma_port_phys_state",
                                "Physical port state: 1 Sleep, 2 Polling, 3 Disabled, "
                                "4 PortConfigurationTraining, 5 LinkUp, 6 LinkErrorRecovery, "
                                "7 Phy Test.");
  auto rate = core::gaugeFamily("fabricwatch_rdma_port_rate_bytes_per_second",
                                "Port link rate, in bytes per second.");
  auto pinfo = core::gaugeFamily("fabricwatch_rdma_port_info",
                                 "Port link layer and rate text (constant 1).");
  auto counters = core::counterFamily(
      "fabricwatch_rdma_port_stat_total",
      "Standard port counters (ports/N/counters), in the kernel's units: port_xmit_data and "
      "port_rcv_data count 4-byte words.");
  auto hw = core::counterFamily("fabricwatch_rdma_port_hw_stat_total",
                                "Driver port counters (ports/N/hw_counters), as the driver reports "
                                "them (EFA rx_drops, retrans_pkts; mlx5 np_cnp_sent ...).");
  auto str = [](const core::Value& v, const char* k) {
    const auto* f = v.find(k);
    return f && f->isString() ? f->asString() : std::string();
  };
  for (const auto& d : devs->asList()) {
    std::string dev = str(d, "name");
    core::addSample(info,
                    {{"device", dev},
                     {"kind", str(d, "kind")},
                     {"node_type", str(d, "node_type")},
                     {"fw_ver", str(d, "fw_ver")},
                     {"hca_type", str(d, "hca_type")},
                     {"board_id", str(d, "board_id")},
                     {"pci_address", str(d, "pci_address")}},
                    1);
    const auto* ports = d.find("ports");
    if (!ports || !ports->isList()) continue;
    for (const auto& p : ports->asList()) {
      const auto* num = p.find("port");
      if (!num) continue;
      core::LabelPairs l{{"device", dev}, {"port", std::to_string(num->asInt())}};
      if (const auto* v = p.find("state_code")) core::addSample(state, l, v->asDouble());
      if (const auto* v = p.find("phys_state_code")) core::addSample(phys, l, v->asDouble());
      if (const auto* v = p.find("rate_gbps")) core::addSample(rate, l, v->asDouble() * 1e9 / 8);
      core::addSample(pinfo,
                      {{"device", dev},
                       {"port", l[1].second},
                       {"link_layer", str(p, "link_layer")},
                       {"rate", str(p, "rate")}},
                      1);
      for (auto [key, fam] : {std::pair{"counters", &counters}, std::pair{"hw_counters", &hw}}) {
        const auto* cs = p.find(key);
        if (!cs || !cs->isMap()) continue;
        for (const auto& [cname, cv] : cs->asMap()) {
          if (!cv.isNumber()) continue;
          core::addSample(*fam, {l[0], l[1], {"stat", cname}}, cv.asDouble());
        }
      }
    }
  }
  out.push_back(std::move(count));
  for (auto* f : {&info, &state, &phys, &rate, &pinfo, &counters, &hw}) {
    if (!f->metric.empty()) out.push_back(std::move(*f));
  }
}

}  // namespace fabricwatch::probes::node
