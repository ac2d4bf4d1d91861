#pragma once
// [probes.fabric]: the fabric kind's keys: latency and bandwidth through a libfabric provider
// (docs/peers.md, "The fabric probe").

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "config/config.h"
#include "config/schema.h"
#include "gpu/gpu_holders.h"

namespace fabricwatch::probes::fabric {

struct FabricConfig {
  std::string provider = "auto";  // a libfabric provider name, or "auto"
  enum class Origin { kDefault, kConfig, kFlag } provider_origin = Origin::kDefault;
  // "GLOB=PROVIDER" rows: the provider of a node whose resource group matches (first row
  // wins), when provider is "auto".
  std::vector<std::string> group_providers = {
      "efa*=efa",           "ib-*=verbs;ofi_rxm",      "infiniband=verbs;ofi_rxm",
      "roce=verbs;ofi_rxm", "lingjun-*=verbs;ofi_rxm", "general-*=verbs;ofi_rxm",
      "erdma=verbs;ofi_rxm"};
  std::string domain;  // libfabric domain (mlx5_0, rdmap16s27-rdm ...); "": the provider's
  // The domains per rail (rails.h): entry i "NAME" or "NAME|NAME" (the first the node has);
  // empty: every domain the provider lists, in PCI order (socket providers: one rail, `domain`).
  std::vector<std::string> rails;
  // [probes.fabric.rails_by_group]: GROUP = [entries], the rails of a node in that resource
  // group (an empty list: the default, PCI order) instead of `rails`.
  std::map<std::string, std::vector<std::string>> rails_by_group;
  int rails_per_round = 8;     // rails of each peer one round probes (rotating)
  uint64_t latency_size = 64;  // bytes per ping and pong
  int warmup = 10;
  int iterations = 200;
  uint64_t bandwidth_size = uint64_t{1} << 20;
  int bandwidth_window = 16;
  uint64_t bandwidth_bytes = uint64_t{32} << 20;        // per peer, warm-up window included
  uint64_t bandwidth_round_bytes = uint64_t{64} << 20;  // all peers of one round together
  config::Duration bandwidth_interval{5 * 60 * 1000};   // 0: no bandwidth
  // Bandwidth yields to training: while a process other than these (and this daemon) holds a
  // GPU of the node, its bandwidth sessions are skipped and the peers' declined.
  bool bandwidth_when_gpus_held = false;
  std::vector<std::string> ignore_processes = gpu::monitoringProcesses();
  config::Duration timeout{2000};              // per peer and session
  config::Duration serve_setup_timeout{1000};  // a served session's first message within this
  config::Duration serve_backoff{30000};       // a member whose session was never driven waits
  bool register_buffers = false;  // register buffers even where the provider does not ask
  bool hmem = false;              // also measure GPU memory (FI_HMEM) where CUDA has a GPU
  std::string cudart_library;     // "": libcudart.so, .so.13, .so.12, .so.11.0
  bool operator==(const FabricConfig&) const = default;
};

inline constexpr const char* kFabricTable = "probes.fabric";
inline const FabricConfig& fabricConfig(const config::Config& c) {
  return c.tables.get<FabricConfig>(kFabricTable);
}
config::TableDef fabricConfigTable();

// The rails list of a node in resource `group` ("" when none is set): its rails_by_group entry,
// else `rails`. `by_group` says whether the group's entry chose it.
const std::vector<std::string>& railsOfGroup(const FabricConfig& f, const std::string& group,
                                             bool* by_group = nullptr);

}  // namespace fabricwatch::probes::fabric
