#include "probes/kinds/fabric/rails.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <memory>
#include <set>

#include "core/host_fs.h"
#include "core/utf8.h"

namespace fabricwatch::probes::fabric {
namespace {

bool nameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '.' || c == ':' || c == '@';
}

std::string linkTarget(const std::string& path) {
  char buf[PATH_MAX];
  ssize_t n = ::readlink(path.c_str(), buf, sizeof(buf) - 1);
  if (n <= 0) return "";
  std::string t(buf, static_cast<size_t>(n));
  auto slash = t.rfind('/');
  return slash == std::string::npos ? t : t.substr(slash + 1);
}

// "0000:10:1b.0": a PCI address (domain:bus:device.function), not a virtual device's name.
bool looksLikePci(const std::string& s) {
  return s.size() == 12 && s[4] == ':' && s[7] == ':' && s[10] == '.';
}

// The RDMA device or interface of a domain: without the suffix libfabric adds
// ("rdmap16s27-rdm" -> "rdmap16s27"); "" for what is no file name.
std::string deviceOf(const std::string& domain) {
  std::string dev = domain;
  for (const char* suffix : {"-rdm", "-dgrm", "-xrc"}) {
    std::string_view s(suffix);
    if (dev.size() > s.size() && dev.compare(dev.size() - s.size(), s.size(), s) == 0) {
      dev.resize(dev.size() - s.size());
      break;
    }
  }
  if (dev.empty() || dev.find('/') != std::string::npos || dev == "." || dev == "..") return "";
  return dev;
}

bool isInterfaceName(std::string_view n) {
  return !n.empty() && n.size() < 16 && n != "." && n != ".." &&
         std::all_of(n.begin(), n.end(), [](char c) { return nameChar(c) && c != ':'; });
}

// The order a default assignment gives: PCI address, then natural name order; once each.
std::vector<std::string> pciOrder(const std::vector<std::string>& domains,
                                  const std::function<std::string(const std::string&)>& pci_of) {
  struct Keyed {
    std::string pci, domain;
  };
  std::vector<Keyed> keyed;
  for (const auto& d : domains) {
    bool seen = false;
    for (const auto& k : keyed) seen = seen || k.domain == d;
    if (!seen) keyed.push_back({pci_of ? pci_of(d) : "", d});
  }
  std::stable_sort(keyed.begin(), keyed.end(), [](const Keyed& x, const Keyed& y) {
    if (x.pci.empty() != y.pci.empty()) return !x.pci.empty();
    if (x.pci != y.pci) return x.pci < y.pci;
    return naturalLess(x.domain, y.domain);
  });
  std::vector<std::string> out;
  for (auto& k : keyed) out.push_back(std::move(k.domain));
  return out;
}

}  // namespace

std::vector<std::string> railNames(std::string_view entry) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= entry.size()) {
    size_t bar = entry.find('|', start);
    std::string_view n =
        entry.substr(start, bar == std::string_view::npos ? entry.npos : bar - start);
    out.emplace_back(n);
    if (bar == std::string_view::npos) break;
    start = bar + 1;
  }
  return out;
}

std::optional<Subnet> railSubnet(std::string_view name) {
  if (name.substr(0, kSubnetPrefix.size()) != kSubnetPrefix) return std::nullopt;
  return parseSubnet(name.substr(kSubnetPrefix.size()), nullptr);
}

std::optional<std::string> checkRailEntry(std::string_view entry) {
  auto names = railNames(entry);
  if (names.size() > kMaxRailNames)
    return "rail " + core::quoteForDisplay(entry, 80) + " has " + std::to_string(names.size()) +
           " names: at most " + std::to_string(kMaxRailNames);
  for (const auto& n : names) {
    if (n.empty())
      return "rail " + core::quoteForDisplay(entry, 200) +
             " must be a domain or interface name, \"subnet:CIDR\", or those separated by "
             "'|' (e.g. \"mlx5_0\", \"eth1|ens1f1\", \"mlx5_0|subnet:10.1.0.0/24\")";
    if (n.rfind(kSubnetPrefix, 0) == 0) {
      std::string why;
      if (!parseSubnet(std::string_view(n).substr(kSubnetPrefix.size()), &why))
        return "rail name " + core::quoteForDisplay(n, 80) + ": " + why;
      continue;
    }
    if (n.size() > 64) return "rail name " + core::quoteForDisplay(n, 64) + " is over 64 bytes";
    for (char c : n)
      if (!nameChar(c))
        return "rail name " + core::quoteForDisplay(n, 64) +
               " may hold only letters, digits and _ - . : @ (a libfabric domain or interface)";
  }
  return std::nullopt;
}

bool naturalLess(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      size_t ie = i, je = j;
      while (ie < a.size() && digit(a[ie])) ++ie;
      while (je < b.size() && digit(b[je])) ++je;
      std::string_view x = a.substr(i, ie - i), y = b.substr(j, je - j);
      while (x.size() > 1 && x[0] == '0') x.remove_prefix(1);
      while (y.size() > 1 && y[0] == '0') y.remove_prefix(1);
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
      i = ie;
      j = je;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i;
    ++j;
  }
  return a.size() - i < b.size() - j;
}

std::vector<std::string> railsListProblems(const std::vector<std::string>& rails) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  struct Net {
    Subnet net;
    std::string name;
    size_t rail;
  };
  std::vector<Net> nets;
  for (size_t i = 0; i < rails.size(); ++i)
    for (const auto& n : railNames(rails[i])) {
      if (!seen.insert(n).second) out.push_back("names \"" + n + "\" on two rails");
      auto s = railSubnet(n);
      if (!s) continue;
      for (const auto& o : nets)
        if (o.rail != i && o.net.overlaps(*s))
          out.push_back("rail " + std::to_string(i) + "'s " + n + " overlaps rail " +
                        std::to_string(o.rail) + "'s " + o.name +
                        ": an address in both would be on two rails");
      nets.push_back({*s, n, i});
    }
  return out;
}

std::vector<Rail> assignRails(const std::vector<std::string>& configured,
                              const std::vector<std::string>& domains,
                              const std::function<std::string(const std::string&)>& pci_of,
                              const AddressesOf& addresses_of) {
  std::vector<Rail> out;
  std::vector<std::string> ordered = pciOrder(domains, pci_of);
  if (configured.empty()) {
    for (size_t i = 0; i < ordered.size() && i < kMaxRails; ++i)
      out.push_back({static_cast<uint32_t>(i), ordered[i], ""});
    return out;
  }
  std::set<std::string> taken;
  std::map<std::string, std::vector<IpAddress>> addresses;  // asked once per domain
  auto addressesOf = [&](const std::string& d) -> const std::vector<IpAddress>& {
    auto it = addresses.find(d);
    if (it == addresses.end())
      it = addresses.emplace(d, addresses_of ? addresses_of(d) : std::vector<IpAddress>{}).first;
    return it->second;
  };
  for (size_t i = 0; i < configured.size() && i < kMaxRails; ++i) {
    std::optional<Rail> rail;
    for (const auto& n : railNames(configured[i])) {
      if (auto net = railSubnet(n)) {
        for (const auto& d : ordered) {
          if (taken.count(d)) continue;
          for (const auto& a : addressesOf(d))
            if (net->contains(a)) {
              rail = Rail{static_cast<uint32_t>(i), d, formatIpAddress(a)};
              break;
            }
          if (rail) break;
        }
      } else if (!taken.count(n) && std::find(domains.begin(), domains.end(), n) != domains.end()) {
        rail = Rail{static_cast<uint32_t>(i), n, ""};
      }
      if (rail) break;
    }
    if (!rail) continue;
    taken.insert(rail->domain);
    out.push_back(std::move(*rail));
  }
  return out;
}

std::vector<size_t> railsForRun(size_t present, size_t per_round, uint64_t turn) {
  std::vector<size_t> out;
  if (present == 0) return out;
  size_t k = std::min(present, std::max<size_t>(per_round, 1));
  size_t start = static_cast<size_t>((turn * k) % present);
  for (size_t j = 0; j < k; ++j) out.push_back((start + j) % present);
  return out;
}

std::string pciAddressOf(const std::string& root, const std::string& domain) {
  std::string dev = deviceOf(domain);
  if (dev.empty()) return "";
  std::string base = root.empty() || root == "/" ? "" : root;
  for (const char* cls : {"/sys/class/infiniband/", "/sys/class/net/"}) {
    std::string t = linkTarget(base + cls + dev + "/device");
    if (looksLikePci(t)) return t;
  }
  return "";
}

std::string interfaceIpv4(const std::string& name) {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return "";
  std::string out;
  for (ifaddrs* a = list; a && out.empty(); a = a->ifa_next) {
    if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET || !a->ifa_name || name != a->ifa_name)
      continue;
    char buf[INET_ADDRSTRLEN] = {};
    const auto* in = reinterpret_cast<const sockaddr_in*>(a->ifa_addr);
    if (::inet_ntop(AF_INET, &in->sin_addr, buf, sizeof(buf))) out = buf;
  }
  ::freeifaddrs(list);
  return out;
}

InterfaceAddresses interfaceAddresses() {
  InterfaceAddresses out;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return out;
  for (ifaddrs* a = list; a; a = a->ifa_next) {
    if (!a->ifa_addr || !a->ifa_name) continue;
    IpAddress ip;
    if (a->ifa_addr->sa_family == AF_INET) {
      const auto* in = reinterpret_cast<const sockaddr_in*>(a->ifa_addr);
      std::copy_n(reinterpret_cast<const uint8_t*>(&in->sin_addr), 4, ip.bytes.begin());
    } else if (a->ifa_addr->sa_family == AF_INET6) {
      const auto* in = reinterpret_cast<const sockaddr_in6*>(a->ifa_addr);
      ip.v6 = true;
      std::copy_n(reinterpret_cast<const uint8_t*>(&in->sin6_addr), 16, ip.bytes.begin());
    } else {
      continue;
    }
    // An IPv4 alias's label ("eth1:1") is an address of its interface.
    std::string name = a->ifa_name;
    name = name.substr(0, name.find(':'));
    out[name].push_back(ip);
  }
  ::freeifaddrs(list);
  return out;
}

std::vector<std::string> domainInterfaces(const std::string& root, const std::string& domain) {
  std::string dev = deviceOf(domain);
  if (dev.empty()) return {};
  core::HostFs fs(root.empty() ? "/" : root);
  std::string ib = "/sys/class/infiniband/" + dev;
  if (!fs.exists(ib))
    return isInterfaceName(dev) ? std::vector<std::string>{dev} : std::vector<std::string>{};
  std::vector<std::string> out;
  auto add = [&](std::string_view n) {
    if (isInterfaceName(n) && std::find(out.begin(), out.end(), n) == out.end())
      out.emplace_back(n);
  };
  // Bounded: a port's GID table has up to 256 entries (each names its netdev, mostly the same
  // one), and a device a few ports.
  auto number = [](const std::string& n) {
    return !n.empty() && n.size() < 6 && n.find_first_not_of("0123456789") == std::string::npos;
  };
  for (const auto& port : fs.list(ib + "/ports", 8)) {
    if (!number(port)) continue;
    std::string ndevs = ib + "/ports/" + port + "/gid_attrs/ndevs/";
    for (const auto& gid : fs.list(ndevs, 256)) {
      if (!number(gid)) continue;
      if (auto n = fs.readTrimmed(ndevs + gid)) add(*n);  // unused entries: EINVAL, none
    }
  }
  for (const auto& n : fs.list(ib + "/device/net", 16)) add(n);
  return out;
}

AddressesOf hostAddressesOf(const std::string& root) {
  auto listed = std::make_shared<std::optional<InterfaceAddresses>>();
  return [root, listed](const std::string& domain) {
    if (!*listed) *listed = interfaceAddresses();
    std::vector<IpAddress> out;
    for (const auto& i : domainInterfaces(root, domain))
      if (auto it = (*listed)->find(i); it != (*listed)->end())
        out.insert(out.end(), it->second.begin(), it->second.end());
    return out;
  };
}

}  // namespace fabricwatch::probes::fabric
