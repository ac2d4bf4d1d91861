#include "probes/kinds/fabric/queue_sizes.h"

#include <stdlib.h>

#include <algorithm>

#include "core/own_environment.h"

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
  // FI_UNIVERSE_SIZE (libfabric's, 1024 by default) sizes what rxm opens per endpoint for a
  // job's ranks: its completion queue on the connections holds (MSG_TX_SIZE + MSG_RX_SIZE) x
  // universe entries, 65,536 of 40 B (2.5 MiB) at 1024, resident as the ring turns over, and
  // the address vector's first chunk. A probe's endpoint talks to the peers of a round or two;
  // 64 makes the queue 4,096 entries (160 KiB). Both grow past their size when needed (an
  // overflow list, more AV chunks), so more peers still work.
  static const std::vector<ProviderVariable> kVars = {
      {"FI_OFI_RXM_BUFFER_SIZE", "256"},
      {"FI_OFI_RXM_MSG_TX_SIZE", "32"},
      {"FI_OFI_RXM_MSG_RX_SIZE", "32"},
      {"FI_UNIVERSE_SIZE", "64"},
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
  std::vector<std::string> set;
  for (const auto& a : unsetProviderVariables([](const char* n) { return ::getenv(n); })) {
    auto eq = a.find('=');
    if (core::setOwnVariable(a.substr(0, eq), a.substr(eq + 1))) set.push_back(a);
  }
  return set;
}

}  // namespace fabricwatch::probes::fabric
