#include "probes/kinds/fabric/provider_names.h"

#include <algorithm>
#include <array>

namespace fabricwatch::probes::fabric {
namespace {

// Core providers of libfabric 1.x (man fi_provider), and the utility providers that layer an
// RDM endpoint over a core one.
constexpr std::array<std::string_view, 18> kCore = {
    "efa", "verbs", "tcp", "udp",   "shm", "sockets", "psm", "psm2", "psm3",
    "opx", "cxi",   "ucx", "usnic", "gni", "bgq",     "sm2", "lpp",  "net"};
constexpr std::array<std::string_view, 2> kUtil = {"ofi_rxm", "ofi_rxd"};

std::string knownList() {
  std::string s = "auto";
  for (auto c : kCore) s += ", " + std::string(c);
  return s + ", or CORE;ofi_rxm / CORE;ofi_rxd (e.g. verbs;ofi_rxm, tcp;ofi_rxm, udp;ofi_rxd)";
}

}  // namespace

std::optional<std::string> checkProviderName(std::string_view name) {
  if (name == "auto") return std::nullopt;
  auto semi = name.find(';');
  std::string_view core = name.substr(0, semi);
  bool ok = std::find(kCore.begin(), kCore.end(), core) != kCore.end();
  if (ok && semi != std::string_view::npos)
    ok = std::find(kUtil.begin(), kUtil.end(), name.substr(semi + 1)) != kUtil.end();
  if (ok) return std::nullopt;
  return "unknown libfabric provider \"" + std::string(name) + "\": use " + knownList();
}

std::optional<GroupProvider> parseGroupProvider(std::string_view text, std::string* why) {
  auto eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size()) {
    *why = "group provider \"" + std::string(text) +
           "\" must be GLOB=PROVIDER, e.g. \"efa-*=efa\" or \"ib-*=verbs;ofi_rxm\"";
    return std::nullopt;
  }
  GroupProvider g{std::string(text.substr(0, eq)), std::string(text.substr(eq + 1))};
  if (g.provider == "auto") {
    *why = "group provider \"" + std::string(text) + "\" must name a provider, not auto";
    return std::nullopt;
  }
  if (auto err = checkProviderName(g.provider)) {
    *why = *err;
    return std::nullopt;
  }
  return g;
}

}  // namespace fabricwatch::probes::fabric
