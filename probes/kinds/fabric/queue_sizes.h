#pragma once
// The provider's queues sized for a probe, not for a training job. Two means, as libfabric
// offers them:
//   - fi_info attributes: the endpoint's transmit and receive queue depths (tx_attr->size,
//     rx_attr->size) lowered in the fi_info the endpoint is opened with, to a few times the
//     probe's deepest window instead of the provider's default (rxm: 2048 each way). Only on the
//     providers layered on ofi_rxm (tcp;ofi_rxm, verbs;ofi_rxm), where it was measured: udp;ofi_rxd
//     stalls on a 256 KiB bandwidth window with 64 receives posted (its unit test), and efa keeps
//     its own sizes until they are measured on EFA;
//   - provider variables, read once when libfabric initialises its providers (the first
//     fi_getinfo), so they are set in the environment before libfabric is loaded, and only where
//     the operator has not set them: what is in the environment stays. rxm's bounce buffers
//     (FI_OFI_RXM_BUFFER_SIZE: rxm allocates its receive and transmit pools 1024 buffers at a
//     time, 16 KiB each by default, per endpoint) and the depth of the connection endpoints it
//     opens per peer (FI_OFI_RXM_MSG_TX_SIZE, FI_OFI_RXM_MSG_RX_SIZE: 128 by default), and
//     libfabric's FI_UNIVERSE_SIZE, which sizes rxm's completion queue for a job's ranks.
// Figures (peak RSS by rail count, before and after) in docs/performance.md, "The fabric probe's
// memory"; bench/fabric_rails_rss.sh measures them.

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace fabricwatch::probes::fabric {

// The transmit and receive depth asked for in the hints: at least this, and twice the probe's
// bandwidth window where that is deeper.
inline constexpr size_t kProbeQueueDepth = 64;
size_t probeQueueDepth(size_t bandwidth_window);
// The depth to lower a provider's queues to: `depth` for providers layered on ofi_rxm, 0 (leave
// them) for the others.
size_t queueDepthFor(std::string_view prov_name, size_t depth);

struct ProviderVariable {
  const char* name;
  const char* value;
};
// The variables the probe sets where they are unset, with their values.
const std::vector<ProviderVariable>& probeProviderVariables();

// The assignments to make ("NAME=VALUE"): those of probeProviderVariables() that `lookup` (an
// environment: null where unset) does not hold. Pure: tests pass a map.
std::vector<std::string> unsetProviderVariables(
    const std::function<const char*(const char*)>& lookup);

// Sets them in this process's environment where unset, as the daemon's own
// (core/own_environment.h: the NCCL probe's child does not inherit them), and returns what it
// set. libfabric() calls it once, before loading the library.
std::vector<std::string> applyProbeProviderVariables();

}  // namespace fabricwatch::probes::fabric
