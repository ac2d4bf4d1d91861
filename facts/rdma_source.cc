#include "facts/rdma_source.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <system_error>
#include <thread>

#include "core/snapshot.h"
#include "facts/fact_reader.h"
#include "facts/kept_file.h"
#include "facts/pci.h"
#include "facts/rdma_device.h"
#include "facts/scanned_dir.h"

namespace fabricwatch::facts {
namespace {

constexpr std::string_view kClass = "/sys/class/infiniband";

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

bool contains(std::string_view s, std::initializer_list<std::string_view> parts) {
  for (auto p : parts)
    if (s.find(p) != std::string_view::npos) return true;
  return false;
}

// Scans devices from..to of `stale` into out.
void scanRange(FactReader& r, const DirReader& cls, const ScannedDir<RdmaDevice>::Stale& stale,
               size_t from, size_t to, std::vector<RdmaDevice>& out) {
  std::optional<DirReader> bus;  // opened only when a device is scanned
  for (size_t i = from; i < to; ++i) {
    if (!bus) bus.emplace(pciBus(r));
    out.push_back(RdmaDevice::scan(r, cls, *bus, stale[i].first, stale[i].second));
  }
}

// A scan reads about a hundred files of a device; the first collection scans every device (on
// a p5 node, 32 EFA devices: the longest part of `fabricwatch check`, which a Slurm prolog runs
// before every job). From kSplitScan devices on, the second half is scanned on a thread of its
// own, with a reader of its own (FactReader::share) and its own open directories, while this
// thread scans the first half; errors keep the devices' order.
constexpr size_t kSplitScan = 8;

std::vector<RdmaDevice> scanDevices(FactReader& r, const DirReader& cls,
                                    const ScannedDir<RdmaDevice>::Stale& stale) {
  std::vector<RdmaDevice> out;
  out.reserve(stale.size());
  size_t half = stale.size() >= kSplitScan ? stale.size() / 2 : stale.size();
  core::Collection part_errors;
  FactReader part = r.share(part_errors);
  std::vector<RdmaDevice> second;
  std::thread helper;
  if (half < stale.size()) {
    try {
      helper = std::thread([&] {
        DirReader part_cls(part, cls.hostPath());
        scanRange(part, part_cls, stale, half, stale.size(), second);
      });
    } catch (const std::system_error&) {
      half = stale.size();  // no thread to be had: all of it here
    }
  }
  scanRange(r, cls, stale, 0, half, out);
  if (helper.joinable()) helper.join();
  r.merge(part);
  for (auto& dev : second) out.push_back(std::move(dev));
  return out;
}

constexpr std::string_view kStat = "fabricwatch_rdma_port_stat_total";
constexpr std::string_view kHwStat = "fabricwatch_rdma_port_hw_stat_total";
constexpr std::string_view kDeviceHwStat = "fabricwatch_rdma_device_hw_stat_total";

}  // namespace

// The standard counters (IBA PortCounters and PortCountersExtended) an operator alerts on and
// draws: every error and discard counter, link downs and recoveries, data and packets sent and
// received, and the time spent waiting to send (congestion). The unicast and multicast packet
// counts are the long tail.
bool defaultPortCounter(std::string_view name) {
  if (contains(name, {"unicast", "multicast"})) return false;
  return contains(name, {"error", "discard", "downed", "recovery", "integrity", "overrun",
                         "dropped", "_data", "_packets", "xmit_wait"});
}

// Driver counters (hw_counters) differ per driver and version, dozens each: by default those
// whose name says they count an error, a drop, a retransmission, a timeout, an unresponsive or
// impaired remote, or congestion (CNP and ECN marks, slow restarts). Byte and packet totals,
// work requests and admin commands are the long tail.
//
// EFA's are one known set, 22 per port in kernel 6.x, on 32 devices on a p5: the name rule
// would serve nine of them (288 series, the p5 node over its 400-series budget). By default,
// what an alert or a panel reads per device: packets sent and received (the pair the
// retransmit ratio and the throughput panels divide by), packets retransmitted, receive drops
// and the remotes given up on (unresponsive: FabricwatchEfaUnresponsiveRemote). Rate-limited
// remotes (impaired_remote_conn_events, which no alert reads: the baseline pack judges them
// from the facts), retransmit timeouts (which precede unresponsive remotes), bytes
// retransmitted (a ratio against tx_bytes, opt-in), the RDMA read/write work request errors
// (which the job sees in its own completions) and the device-wide admin counters (cmds_err
// ...) are opt-in by name; the packs judge them from the facts all the same.
bool defaultHwCounter(std::string_view kind, std::string_view name) {
  if (kind == "efa") {
    for (std::string_view n :
         {"tx_pkts", "rx_pkts", "retrans_pkts", "rx_drops", "unresponsive_remote_events"})
      if (name == n) return true;
    return false;
  }
  return contains(name, {"err", "drop", "discard", "retrans", "timeout", "unresponsive", "impaired",
                         "out_of_", "duplicate", "nak", "slow_restart", "cnp", "ecn"});
}

core::Collection RdmaSource::collect(const core::CollectContext& ctx) {
  core::HostFs fs(ctx.rootfs);
  core::Collection c;
  FactReader r(fs, c);
  DirReader cls(r, std::string(kClass));
  std::vector<std::string> names = cls.list();
  // mlx5_2 before mlx5_10, rdmap19s0 before rdmap147s0.
  std::sort(names.begin(), names.end(), naturalLess);
  auto scan = [&](const ScannedDir<RdmaDevice>::Stale& stale) {
    return scanDevices(r, cls, stale);
  };
  core::Value devices = core::Value::list();
  for (RdmaDevice* dev : devices_.refreshAll(cls, names, scan)) devices.push(dev->read(r));
  c.facts["rdma"] = core::Value::map({{"devices", std::move(devices)}});
  return c;
}

std::vector<core::OptionalMetric> RdmaSource::optionalMetrics() const {
  return {
      {"fabricwatch_rdma_device_info", "", "+1 per RDMA device"},
      {"fabricwatch_rdma_port_info", "", "+1 per EFA port (other ports have it by default)"},
      {"fabricwatch_rdma_port_phys_state", "", "+1 per EFA port (other ports have it by default)"},
      {"fabricwatch_rdma_port_rate_bytes_per_second", "",
       "+1 per EFA port (other ports have it by default)"},
      {std::string(kStat), "stat", "+1 per port for each standard counter named"},
      {std::string(kHwStat), "stat", "+1 per port for each driver counter named"},
      {std::string(kDeviceHwStat), "stat",
       "+1 per device for each device-wide driver counter named (EFA cmds_err ...)"},
  };
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
                                "Port link rate, in bytes per second; absent while the physical "
                                "link is not up (the kernel's rate is a placeholder then).");
  auto pinfo = core::gaugeFamily("fabricwatch_rdma_port_info",
                                 "Port link layer and rate text (constant 1).");
  auto counters = core::counterFamily(
      "fabricwatch_rdma_port_stat_total",
      "Standard port counters (ports/N/counters, and counters_ext where the kernel keeps the "
      "64-bit ones apart), in the kernel's units: port_xmit_data, port_rcv_data and their _64 "
      "forms count 4-byte words.");
  auto hw = core::counterFamily("fabricwatch_rdma_port_hw_stat_total",
                                "Driver port counters (ports/N/hw_counters), as the driver reports "
                                "them (EFA rx_drops, retrans_pkts; mlx5 np_cnp_sent ...).");
  auto dev_hw = core::counterFamily(
      "fabricwatch_rdma_device_hw_stat_total",
      "Device-wide driver counters (hw_counters beside ports/), as the driver reports them (EFA "
      "cmds_err, submitted_cmds, alloc_pd_err ...).");
  auto str = [](const core::Value& v, const char* k) {
    const auto* f = v.find(k);
    return f && f->isString() ? f->asString() : std::string();
  };
  const bool device_info = core::wantsFamily(snapshot, "fabricwatch_rdma_device_info");
  // The EFA driver reports its ports' state, physical state and rate as constants (ACTIVE,
  // LinkUp, 100 Gb/sec 4X EDR, whatever the link does): on EFA ports only the state stays, for
  // the port counts; the others are opt-in.
  const bool efa_phys = core::wantsFamily(snapshot, "fabricwatch_rdma_port_phys_state");
  const bool efa_rate = core::wantsFamily(snapshot, "fabricwatch_rdma_port_rate_bytes_per_second");
  const bool efa_info = core::wantsFamily(snapshot, "fabricwatch_rdma_port_info");
  for (const auto& d : devs->asList()) {
    std::string dev = str(d, "name");
    std::string kind = str(d, "kind");
    bool efa = kind == "efa";
    auto wanted = [&](prometheus::MetricFamily* fam, const std::string& stat) {
      if (fam == &hw)
        return defaultHwCounter(kind, stat) || core::wantsValue(snapshot, kHwStat, stat);
      return defaultPortCounter(stat) || core::wantsValue(snapshot, kStat, stat);
    };
    if (const auto* cs = d.find("hw_counters"); cs && cs->isMap()) {
      for (const auto& [cname, cv] : cs->asMap()) {
        if (cv.isNumber() && core::wantsValue(snapshot, kDeviceHwStat, cname))
          core::addSample(dev_hw, {{"device", dev}, {"stat", cname}}, cv.asDouble());
      }
    }
    if (device_info)
      core::addSample(info,
                      {{"device", dev},
                       {"kind", kind},
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
      if (const auto* v = p.find("phys_state_code"); v && (!efa || efa_phys))
        core::addSample(phys, l, v->asDouble());
      if (const auto* v = p.find("rate_gbps"); v && (!efa || efa_rate))
        core::addSample(rate, l, v->asDouble() * 1e9 / 8);
      if (!efa || efa_info) {
        core::addSample(pinfo,
                        {{"device", dev},
                         {"port", l[1].second},
                         {"link_layer", str(p, "link_layer")},
                         {"rate", str(p, "rate")}},
                        1);
      }
      for (auto [key, fam] :
           {std::pair{"counters", &counters}, std::pair{"counters_ext", &counters},
            std::pair{"hw_counters", &hw}}) {
        const auto* cs = p.find(key);
        if (!cs || !cs->isMap()) continue;
        for (const auto& [cname, cv] : cs->asMap()) {
          if (!cv.isNumber() || !wanted(fam, cname)) continue;
          core::addSample(*fam, {l[0], l[1], {"stat", cname}}, cv.asDouble());
        }
      }
    }
  }
  out.push_back(std::move(count));
  for (auto* f : {&info, &state, &phys, &rate, &pinfo, &counters, &hw, &dev_hw}) {
    if (!f->metric.empty()) out.push_back(std::move(*f));
  }
}

}  // namespace fabricwatch::facts
