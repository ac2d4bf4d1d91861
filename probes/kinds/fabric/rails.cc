#include "probes/kinds/fabric/rails.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <climits>

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

std::optional<std::string> checkRailEntry(std::string_view entry) {
  for (const auto& n : railNames(entry)) {
    if (n.empty())
      return "rail \"" + std::string(entry) +
             "\" must be a domain or interface name, or names separated by '|' (e.g. "
             "\"mlx5_0\", \"eth1|ens1f1\")";
    if (n.size() > 64) return "rail name \"" + n.substr(0, 64) + "...\" is over 64 bytes";
    for (char c : n)
      if (!nameChar(c))
        return "rail name \"" + n +
               "\" may hold only letters, digits and _ - . : @ (a libfabric domain or interface)";
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

std::vector<Rail> assignRails(const std::vector<std::string>& configured,
                              const std::vector<std::string>& domains,
                              const std::function<std::string(const std::string&)>& pci_of) {
  std::vector<Rail> out;
  if (!configured.empty()) {
    for (size_t i = 0; i < configured.size() && i < kMaxRails; ++i)
      for (const auto& n : railNames(configured[i]))
        if (std::find(domains.begin(), domains.end(), n) != domains.end()) {
          out.push_back({static_cast<uint32_t>(i), n});
          break;
        }
    return out;
  }
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
  for (size_t i = 0; i < keyed.size() && i < kMaxRails; ++i)
    out.push_back({static_cast<uint32_t>(i), keyed[i].domain});
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
  std::string dev = domain;
  for (const char* suffix : {"-rdm", "-dgrm", "-xrc"}) {
    std::string_view s(suffix);
    if (dev.size() > s.size() && dev.compare(dev.size() - s.size(), s.size(), s) == 0) {
      dev.resize(dev.size() - s.size());
      break;
    }
  }
  if (dev.empty() || dev.find('/') != std::string::npos || dev == "." || dev == "..") return "";
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

}  // namespace fabricwatch::probes::fabric
