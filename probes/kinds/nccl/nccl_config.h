#pragma once
// [probes.nccl]: NCCL runs, on with probes.nccl.enabled (off by default): a local all-reduce
// across the node's GPUs (the nccl_probe source), and runs with a peer of the mesh (the nccl
// kind), each in a child process, rare and never while a training job holds the GPUs.
// docs/nccl.md.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "config/config.h"
#include "config/schema.h"
#include "gpu/gpu_holders.h"

namespace fabricwatch::probes::nccl {

struct NcclConfig {
  bool local = true;  // the local all-reduce (source nccl_probe)
  bool peers = true;  // runs with peers: started here (rank 0) and served for them (rank 1)
  config::Duration interval{30 * 60 * 1000};  // of each: the local run and this node's peer runs
  config::Duration timeout{3 * 60 * 1000};    // the child's hard limit
  bool run_at_start = false;                  // else the first run is one interval after start
  std::string operation = "all_reduce";       // peer runs: all_reduce | send_recv
  int device = -1;                            // peer runs: the GPU; -1: the next one each run
  std::vector<uint64_t> sizes = {uint64_t{1} << 20, uint64_t{256} << 20};
  int warmup = 5;
  int iterations = 20;
  std::string nccl_library = "libnccl.so.2";
  std::string cudart_library;  // "" = libcudart.so, then .so.13, .so.12, .so.11.0
  bool skip_when_busy = true;
  std::vector<std::string> ignore_processes = gpu::monitoringProcesses();
  std::map<std::string, std::string> env;  // [probes.nccl.env]: NCCL_* for the children
  std::string log_dir;                     // "" = the system temporary directory
  // Peer runs served to one member at least this far apart (issue 23, item 6).
  config::Duration serve_min_interval{60 * 1000};
  bool operator==(const NcclConfig&) const = default;
};

inline constexpr const char* kNcclTable = "probes.nccl";
inline const NcclConfig& ncclConfig(const config::Config& c) {
  return c.tables.get<NcclConfig>(kNcclTable);
}
// probes.nccl.enabled: off by default, as the kind registers itself (it runs NCCL on the GPUs).
inline bool ncclEnabled(const config::Config& c) { return c.probes.enabled("nccl", false); }
config::TableDef ncclConfigTable();

}  // namespace fabricwatch::probes::nccl
