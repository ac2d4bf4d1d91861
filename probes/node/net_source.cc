#include "probes/node/net_source.h"

#include "core/snapshot.h"
#include "probes/node/fact_reader.h"
#include "probes/node/host_parse.h"
#include "probes/node/pci_parse.h"

namespace fabricwatch::probes::node {

core::Collection NetSource::collect(const core::CollectContext& ctx) {
  core::HostFs fs(ctx.rootfs);
  core::Collection c;
  FactReader r(fs, c);
  std::vector<Inet6Address> v6;
  if (auto t = r.text("/proc/net/if_inet6")) v6 = parseIfInet6(*t);
  core::Value list = core::Value::list();
  for (const auto& name : r.list("/sys/class/net")) {
    std::string dir = "/sys/class/net/" + name;
    core::Value i = core::Value::map();
    i["name"] = name;
    if (auto v = r.line(dir + "/operstate")) i["operstate"] = *v;
    if (auto v = r.integer(dir + "/mtu")) i["mtu"] = *v;
    // Down links and virtual interfaces answer EINVAL or -1: the speed is unknown, not 0.
    if (auto v = r.integer(dir + "/speed", true); v && *v > 0) i["speed_mbps"] = *v;
    if (auto v = r.line(dir + "/address")) i["mac"] = *v;
    if (auto pci = r.linkName(dir + "/device"); pci && isPciAddress(*pci)) i["pci_address"] = *pci;
    core::Value addrs = core::Value::list();
    for (const auto& a : v6) {
      if (a.ifname == name) addrs.push(a.address);
    }
    i["addresses"] = std::move(addrs);
    list.push(std::move(i));
  }
  c.facts["net"] = core::Value::map({{"interfaces", std::move(list)}});
  return c;
}

void NetSource::renderMetrics(const core::Snapshot& snapshot, core::MetricFamilies& out) const {
  const core::Value* ifs = snapshot.facts.findPath("net.interfaces");
  if (!ifs || !ifs->isList()) return;
  auto info = core::gaugeFamily("fabricwatch_net_interface_info",
                                "Hardware network interface identity and state (constant 1).");
  auto up =
      core::gaugeFamily("fabricwatch_net_interface_up", "1 when the interface's operstate is up.");
  auto mtu = core::gaugeFamily("fabricwatch_net_interface_mtu_bytes", "Interface MTU in bytes.");
  auto speed = core::gaugeFamily("fabricwatch_net_interface_speed_bytes_per_second",
                                 "Interface link speed in bytes per second.");
  for (const auto& i : ifs->asList()) {
    const auto *pci = i.find("pci_address"), *name = i.find("name");
    if (!pci || !name) continue;
    core::LabelPairs l{{"interface", name->asString()}};
    const auto* op = i.find("operstate");
    const auto* mac = i.find("mac");
    core::addSample(info,
                    {l[0],
                     {"pci_address", pci->asString()},
                     {"operstate", op ? op->asString() : ""},
                     {"mac", mac ? mac->asString() : ""}},
                    1);
    if (op) core::addSample(up, l, op->asString() == "up");
    if (const auto* v = i.find("mtu")) core::addSample(mtu, l, v->asDouble());
    if (const auto* v = i.find("speed_mbps")) core::addSample(speed, l, v->asDouble() * 1e6 / 8);
  }
  for (auto* f : {&info, &up, &mtu, &speed}) {
    if (!f->metric.empty()) out.push_back(std::move(*f));
  }
}

}  // namespace fabricwatch::probes::node
