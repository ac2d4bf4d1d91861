#include "probes/kinds/fabric/queue_sizes.h"

#include <stdlib.h>

#include <algorithm>

namespace fabricwatch::probes::fabric {

size_t probeQueueDepth(size_t bandwidth_window) {
  return std::max(kProbeQueueDepth, 2 * bandwidth_window);
}

size_t queueDepthFor(std::string_view prov_name, size_t depth) {
  constexpr std::string_view kRxm = ";ofi_rxm";
  bool rxm =
      prov_name.size() > kRxm.size() && prov_name.substr(prov_name.size() - kRxm.size()) == kRxm;
  return rxm ? depth : 0;
}

const std::vector<ProviderVariable>& probeProviderVariables() {
  // 256 bytes holds the probe's 64-byte latency message (and rxm's rendezvous and atomic
  // headers, its floor), so pings still go out with fi_inject; larger messages take rxm's
  // eager path over tcp as before (FI_OFI_RXM_EAGER_LIMIT stays 16 KiB there: the tcp provider
  // receives into the application's buffer), SAR or rendezvous over verbs. 32 connection
  // entries each way hold two bandwidth windows of the default 16 messages.
  static const std::vector<ProviderVariable> kVars = {
      {"FI_OFI_RXM_BUFFER_SIZE", "256"},
      {"FI_OFI_RXM_MSG_TX_SIZE", "32"},
      {"FI_OFI_RXM_MSG_RX_SIZE", "32"},
  };
  return kVars;
}

std::vector<std::string> unsetProviderVariables(
    const std::function<const char*(const char*)>& lookup) {
  std::vector<std::string> out;
  for (const auto& v : probeProviderVariables()) {
    const char* have = lookup(v.name);
    if (!have) out.push_back(std::string(v.name) + "=" + v.value);
  }
  return out;
}

std::vector<std::string> applyProbeProviderVariables() {
  std::vector<std::string> set = unsetProviderVariables([](const char* n) { return ::getenv(n); });
  for (const auto& a : set) {
    auto eq = a.find('=');
    ::setenv(a.substr(0, eq).c_str(), a.substr(eq + 1).c_str(), 0);
  }
  return set;
}

}  // namespace fabricwatch::probes::fabric
