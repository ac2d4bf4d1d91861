#include "facts/net_source.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <set>

#include "core/snapshot.h"
#include "facts/dcb_netlink.h"
#include "facts/fact_reader.h"
#include "facts/host_parse.h"
#include "facts/pci_parse.h"
#include "nccl/nccl_list.h"

namespace fabricwatch::facts {
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

// A bond's mode and slaves, from its bonding/ directory (only bonds have one); null otherwise.
core::Value readBond(const DirReader& iface) {
  DirReader b = iface.sub("bonding");
  if (!b.isOpen()) return nullptr;
  core::Value bond = core::Value::map();
  if (auto mode = b.line("mode")) {
    if (auto m = parseBondMode(*mode)) {
      bond["mode"] = m->name;
      bond["mode_code"] = m->code;
    }
  }
  core::Value slaves = core::Value::list();
  if (auto text = b.line("slaves")) {
    for (auto s : splitFields(*text)) slaves.push(std::string(s));
  }
  bond["slaves"] = std::move(slaves);
  if (auto mii = b.line("mii_status")) bond["mii_status"] = *mii;
  return bond;
}

// ECN as mlx5 exposes it per priority: ecn/roce_np/enable/P (notification point: the receiver
// marks CNPs) and ecn/roce_rp/enable/P (reaction point: the sender slows down), each 0 or 1.
// DCQCN needs both on for the priority RoCE traffic runs at. Null without an ecn/ directory
// (other drivers, kernels without it).
core::Value readEcn(const DirReader& iface) {
  DirReader ecn = iface.sub("ecn");
  if (!ecn.isOpen()) return nullptr;
  core::Value out = core::Value::map();
  for (const char* point : {"roce_np", "roce_rp"}) {
    DirReader enable = ecn.sub(std::string(point) + "/enable");
    if (!enable.isOpen()) continue;
    core::Value prios = core::Value::map();
    for (const auto& n : enable.list()) {
      if (n.size() != 1 || n[0] < '0' || n[0] > '7') continue;  // priorities 0-7
      if (auto v = enable.integer(n)) prios[n] = *v != 0;
    }
    out[point] = std::move(prios);
  }
  return out;
}

// PFC by DCB netlink for the interfaces in `list` (net.interfaces[].pfc), hardware ones (with a
// PCI function) first, at most kDcbInterfaces of them and within kDcbDeadline in all: a node
// with hundreds of per-pod veths (which have no DCB) costs a bounded number of questions. lo
// is never asked. Only where this process shares the host's network namespace: netlink
// answers for the namespace it is asked in.
constexpr size_t kDcbInterfaces = 64;
constexpr auto kDcbDeadline = std::chrono::seconds(1);

void addPfc(core::Value& list) {
  std::vector<core::Value*> order;
  for (int hw = 1; hw >= 0; --hw) {
    for (auto& i : list.asList()) {
      if ((i.find("pci_address") != nullptr) == (hw == 1) && i.find("name")->asString() != "lo")
        order.push_back(&i);
    }
  }
  if (order.size() > kDcbInterfaces) order.resize(kDcbInterfaces);
  DcbQuery q;
  auto deadline = std::chrono::steady_clock::now() + kDcbDeadline;
  for (core::Value* i : order) {
    if (std::chrono::steady_clock::now() >= deadline) break;
    (*i)["pfc"] = pfcFact(q.pfc(i->find("name")->asString()));
  }
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
  DirReader cls(r, "/sys/class/net");
  for (const auto& name : cls.list()) {
    // Interfaces are directories (links to them); /sys/class/net also holds plain files such as
    // bonding_masters, the bonding driver's list of bonds, which are not interfaces.
    DirReader d = cls.sub(name);
    if (!d.isOpen()) continue;
    core::Value i = core::Value::map();
    i["name"] = name;
    if (auto v = d.line("operstate")) i["operstate"] = *v;
    if (auto v = d.integer("mtu")) i["mtu"] = *v;
    // Down links and virtual interfaces answer EINVAL or -1: the speed is unknown, not 0.
    if (auto v = d.integer("speed", true); v && *v > 0) i["speed_mbps"] = *v;
    if (auto v = d.line("address")) i["mac"] = *v;
    if (auto pci = d.linkName("device"); pci && isPciAddress(*pci)) i["pci_address"] = *pci;
    if (auto bond = readBond(d); !bond.isNull()) i["bond"] = std::move(bond);
    if (auto ecn = readEcn(d); !ecn.isNull()) i["ecn"] = std::move(ecn);
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
  if (host_network == true) addPfc(list);
  core::Value net = core::Value::map({{"interfaces", std::move(list)}});
  if (host_network) net["host_network"] = *host_network;
  c.facts["net"] = std::move(net);
  return c;
}

namespace {

std::string stringAt(const core::Value& v, std::string_view key) {
  const core::Value* f = v.find(key);
  return f && f->isString() ? f->asString() : std::string();
}

// Adds the interfaces an NCCL_SOCKET_IFNAME setting ({value, source}) names: those an include
// list selects. An exclusion list ("^docker,lo") names nothing by itself and would select every
// per-pod veth, so it adds none.
void addNcclNamed(const core::Value* setting, const std::vector<std::string>& names,
                  std::set<std::string>& out) {
  if (!setting) return;
  const core::Value* value = setting->find("value");
  if (!value || !value->isString()) return;
  nccl::NcclList list = nccl::parseNcclList(value->asString());
  if (list.exclude || list.entries.empty()) return;
  for (const auto& n : names) {
    if (nccl::ncclSelects(list, n)) out.insert(n);
  }
}

// The interfaces besides hardware ones whose series matter: bonds, those NCCL_SOCKET_IFNAME
// names (node settings and each workload's), and the net devices of RDMA ports (RoCE over a
// bond or a VLAN). All are bounded by what the node is configured with, unlike veths.
std::set<std::string> watchedInterfaces(const core::Value& facts, const core::Value::List& ifs) {
  std::vector<std::string> names;
  std::set<std::string> out;
  for (const auto& i : ifs) {
    std::string name = stringAt(i, "name");
    if (name.empty()) continue;
    names.push_back(name);
    if (i.find("pci_address") || i.find("bond")) out.insert(name);
  }
  addNcclNamed(facts.findPath("nccl.settings.NCCL_SOCKET_IFNAME"), names, out);
  if (const auto* wls = facts.find("workloads"); wls && wls->isList()) {
    for (const auto& w : wls->asList())
      addNcclNamed(w.findPath("nccl.NCCL_SOCKET_IFNAME"), names, out);
  }
  if (const auto* devs = facts.findPath("rdma.devices"); devs && devs->isList()) {
    for (const auto& d : devs->asList()) {
      const auto* ports = d.find("ports");
      if (!ports || !ports->isList()) continue;
      for (const auto& p : ports->asList()) {
        const auto* nds = p.find("netdevs");
        if (!nds || !nds->isList()) continue;
        for (const auto& nd : nds->asList()) {
          if (nd.isString()) out.insert(nd.asString());
        }
      }
    }
  }
  return out;
}

}  // namespace

void NetSource::renderMetrics(const core::Snapshot& snapshot, core::MetricFamilies& out) const {
  const core::Value* ifs = snapshot.facts.findPath("net.interfaces");
  if (!ifs || !ifs->isList()) return;
  auto info = core::gaugeFamily(
      "fabricwatch_net_interface_info",
      "Network interface identity and state (constant 1); pci_address is empty for virtual "
      "interfaces.");
  auto up =
      core::gaugeFamily("fabricwatch_net_interface_up", "1 when the interface's operstate is up.");
  auto mtu = core::gaugeFamily("fabricwatch_net_interface_mtu_bytes", "Interface MTU in bytes.");
  auto speed = core::gaugeFamily("fabricwatch_net_interface_speed_bytes_per_second",
                                 "Interface link speed in bytes per second.");
  auto bond_info = core::gaugeFamily("fabricwatch_net_bond_info",
                                     "Bonding mode of a bond interface (constant 1).");
  auto slaves = core::gaugeFamily("fabricwatch_net_bond_slaves", "Interfaces enslaved to a bond.");
  auto slaves_up = core::gaugeFamily("fabricwatch_net_bond_slaves_up",
                                     "Interfaces enslaved to a bond whose operstate is up.");
  std::set<std::string> watched = watchedInterfaces(snapshot.facts, ifs->asList());
  std::map<std::string, std::string> operstate;
  for (const auto& i : ifs->asList()) operstate[stringAt(i, "name")] = stringAt(i, "operstate");
  for (const auto& i : ifs->asList()) {
    std::string name = stringAt(i, "name");
    if (!watched.count(name)) continue;
    core::LabelPairs l{{"interface", name}};
    const auto* op = i.find("operstate");
    core::addSample(info,
                    {l[0],
                     {"pci_address", stringAt(i, "pci_address")},
                     {"operstate", stringAt(i, "operstate")},
                     {"mac", stringAt(i, "mac")}},
                    1);
    if (op) core::addSample(up, l, op->asString() == "up");
    if (const auto* v = i.find("mtu")) core::addSample(mtu, l, v->asDouble());
    if (const auto* v = i.find("speed_mbps")) core::addSample(speed, l, v->asDouble() * 1e6 / 8);
    if (const auto* bond = i.find("bond")) {
      core::addSample(bond_info, {l[0], {"mode", stringAt(*bond, "mode")}}, 1);
      const auto* sl = bond->find("slaves");
      if (sl && sl->isList()) {
        double n_up = 0;
        for (const auto& s : sl->asList()) {
          if (s.isString() && operstate[s.asString()] == "up") ++n_up;
        }
        core::addSample(slaves, l, static_cast<double>(sl->size()));
        core::addSample(slaves_up, l, n_up);
      }
    }
  }
  for (auto* f : {&info, &up, &mtu, &speed, &bond_info, &slaves, &slaves_up}) {
    if (!f->metric.empty()) out.push_back(std::move(*f));
  }
}

}  // namespace fabricwatch::facts
