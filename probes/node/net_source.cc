#include "probes/node/net_source.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <unistd.h>

#include <map>

#include "core/snapshot.h"
#include "probes/node/fact_reader.h"
#include "probes/node/host_parse.h"
#include "probes/node/pci_parse.h"

namespace fabricwatch::probes::node {
namespace {

// Whether this process runs in the host's network namespace: the one of the host's PID 1, read
// through the root (/host/proc with hostPID in the DaemonSet). nullopt when that cannot be told
// (a fixture root has no proc/1/ns/net; without CAP_SYS_PTRACE the link cannot be read).
std::optional<bool> hostNetwork(const core::HostFs& fs) {
  auto host = fs.readLink("/proc/1/ns/net");
  if (!host) return std::nullopt;
  char self[64];
  ssize_t n = ::readlink("/proc/self/ns/net", self, sizeof self);
  if (n <= 0) return std::nullopt;
  return *host == std::string_view(self, static_cast<size_t>(n));
}

// IPv4 addresses by interface, from the kernel (netlink, through getifaddrs): procfs has no
// per-interface IPv4 list. They are this process's namespace's, so only used when that is the
// host's. An alias label ("eth0:1") counts for its interface.
std::map<std::string, std::vector<std::string>> ipv4ByInterface() {
  std::map<std::string, std::vector<std::string>> out;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return out;
  for (const ifaddrs* a = list; a; a = a->ifa_next) {
    if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET || !a->ifa_name) continue;
    char buf[INET_ADDRSTRLEN];
    const auto* in = reinterpret_cast<const sockaddr_in*>(a->ifa_addr);
    if (!::inet_ntop(AF_INET, &in->sin_addr, buf, sizeof buf)) continue;
    std::string_view name = a->ifa_name;
    out[std::string(name.substr(0, name.find(':')))].emplace_back(buf);
  }
  ::freeifaddrs(list);
  return out;
}

}  // namespace

core::Collection NetSource::collect(const core::CollectContext& ctx) {
  core::HostFs fs(ctx.rootfs);
  core::Collection c;
  FactReader r(fs, c);
  std::optional<bool> host_network = hostNetwork(fs);
  // /proc/net is the reading process's namespace too: in a pod of its own, neither list is
  // the host's, so both are left out rather than reported wrong.
  std::vector<Inet6Address> v6;
  std::map<std::string, std::vector<std::string>> v4;
  if (host_network != false) {
    if (auto t = r.text("/proc/net/if_inet6")) v6 = parseIfInet6(*t);
  }
  if (host_network == true) v4 = ipv4ByInterface();
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
    if (auto it = v4.find(name); it != v4.end()) {
      for (const auto& a : it->second) addrs.push(a);
    }
    for (const auto& a : v6) {
      if (a.ifname == name) addrs.push(a.address);
    }
    i["addresses"] = std::move(addrs);
    list.push(std::move(i));
  }
  core::Value net = core::Value::map({{"interfaces", std::move(list)}});
  if (host_network) net["host_network"] = *host_network;
  c.facts["net"] = std::move(net);
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
