#pragma once
// The daemon's configuration: what config/fabricwatch.toml holds, after defaults and validation.
// docs/configuration.md documents every key; tests keep the two in step.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/log.h"
#include "core/metric_selection.h"

namespace fabricwatch::config {

using Duration = std::chrono::milliseconds;

struct SourceConfig {
  bool enabled = true;
  Duration interval{0};  // 0: use collect.interval
  Duration timeout{0};   // 0: use collect.timeout
  bool operator==(const SourceConfig&) const = default;
};

struct Config {
  struct Web {
    std::string listen_address = ":19736";
    int threads = 4;
    int max_request_bytes = 16384;
    Duration request_timeout{10000};  // TLS handshake + request head; a response's write
    Duration idle_timeout{120000};    // keep-alive connection between requests
    int max_connections = 256;
    int max_connections_per_address = 32;
    bool auth_exempt_health = false;  // /healthz and /readyz without basic auth
    bool operator==(const Web&) const = default;
  } web;

  struct Log {
    core::log::Level level = core::log::Level::kInfo;
    core::log::Format format = core::log::Format::kLogfmt;
    bool operator==(const Log&) const = default;
  } log;

  struct Host {
    std::string rootfs = "/";
    bool operator==(const Host&) const = default;
  } host;

  struct Collect {
    Duration interval{30000};
    Duration timeout{10000};
    double jitter = 0.1;
    std::map<std::string, SourceConfig, std::less<>> sources;  // [collect.sources.<name>]
    bool operator==(const Collect&) const = default;
  } collect;

  bool operator==(const Config&) const = default;

  // The schedule a source runs on: its own keys over the [collect] defaults.
  SourceConfig sourceConfig(std::string_view name) const;

  // The peer channel: this node's identity in the mesh and the authenticated listener.
  struct Peer {
    std::string node_name;  // "" = $NODE_NAME, else the host name
    std::string listen_address = ":19737";
    std::string secret_file;  // required whenever the mesh is on: never unauthenticated
    int max_connections = 64;
    int max_connections_per_address = 16;
    Duration frame_timeout{2000};
    Duration idle_timeout{10000};
    Duration max_clock_skew{30000};
    bool operator==(const Peer&) const = default;
  } peer;

  // The peer mesh: discovery, selection and rounds (what every kind shares).
  struct Probe {
    Duration interval{10000};
    int peers_per_round = 8;
    std::vector<std::string> peers;  // static HOST:PORT list
    std::string dns_name;            // headless Service; all A/AAAA records are members
    int dns_port = 0;                // port of DNS-discovered members; 0 = our listen port
    std::string peers_file;          // one HOST:PORT per line, re-read when it changes
    Duration grace_period{60000};
    std::string topology_label;  // e.g. "rack" or "rail"
    std::string topology_group;  // this node's group; "" = no topology groups
    int workers = 8;

    // The mesh runs only when some discovery source is configured.
    bool meshEnabled() const { return !peers.empty() || !dns_name.empty() || !peers_file.empty(); }
    bool operator==(const Probe&) const = default;
  } probe;

  // [probes.<kind>]: the probe kinds, each on or off by name, and each kind's own keys in a
  // struct of its own.
  struct Probes {
    struct Kind {
      std::optional<bool> enabled;  // unset: the kind's default
      bool operator==(const Kind&) const = default;
    };
    std::map<std::string, Kind, std::less<>> kinds;
    bool enabled(std::string_view kind, bool by_default) const {
      auto it = kinds.find(kind);
      return it == kinds.end() ? by_default : it->second.enabled.value_or(by_default);
    }

    // [probes.tcp]: echo round trips. Its timeouts are also the knocks' (one echo each).
    struct Tcp {
      int samples = 5;
      Duration connect_timeout{1000};
      Duration echo_timeout{1000};
      bool operator==(const Tcp&) const = default;
    } tcp;

    // [probes.dns]: resolution of peers' names. Its timeout also bounds the mesh's own
    // resolutions (probe.dns_name, listed host names).
    struct Dns {
      Duration timeout{2000};
      bool operator==(const Dns&) const = default;
    } dns;

    // [probes.fabric]: latency and bandwidth through a libfabric provider (docs/peers.md).
    struct Fabric {
      std::string provider = "auto";  // a libfabric provider name, or "auto"
      enum class Origin { kDefault, kConfig, kFlag } provider_origin = Origin::kDefault;
      // "GLOB=PROVIDER" rows: the provider of a node whose resource group matches (first row
      // wins), when provider is "auto".
      std::vector<std::string> group_providers = {
          "efa*=efa",           "ib-*=verbs;ofi_rxm",      "infiniband=verbs;ofi_rxm",
          "roce=verbs;ofi_rxm", "lingjun-*=verbs;ofi_rxm", "general-*=verbs;ofi_rxm",
          "erdma=verbs;ofi_rxm"};
      std::string domain;  // libfabric domain (mlx5_0, rdmap16s27-rdm ...); "": the provider's
      uint64_t latency_size = 64;  // bytes per ping and pong
      int warmup = 10;
      int iterations = 200;
      uint64_t bandwidth_size = uint64_t{1} << 20;
      int bandwidth_window = 16;
      uint64_t bandwidth_bytes = uint64_t{32} << 20;        // per peer, warm-up window included
      uint64_t bandwidth_round_bytes = uint64_t{64} << 20;  // all peers of one round together
      Duration bandwidth_interval{5 * 60 * 1000};           // 0: no bandwidth
      Duration timeout{2000};                               // per peer and session
      bool register_buffers = false;  // register buffers even where the provider does not ask
      bool hmem = false;              // also measure GPU memory (FI_HMEM) where CUDA has a GPU
      std::string cudart_library;     // "": libcudart.so, .so.13, .so.12, .so.11.0
      bool operator==(const Fabric&) const = default;
    } fabric;

    // [probes.nccl]: NCCL runs, on with probes.nccl.enabled (off by default): a local
    // all-reduce across the node's GPUs, and runs with a peer of the mesh (the nccl probe kind),
    // each in a child process, rare and never while a training job holds the GPUs. docs/nccl.md.
    struct Nccl {
      bool local = true;  // the local all-reduce (source nccl_probe)
      bool peers = true;  // runs with peers: started here (rank 0) and served for them (rank 1)
      Duration interval{30 * 60 * 1000};     // of each: the local run and this node's peer runs
      Duration timeout{3 * 60 * 1000};       // the child's hard limit
      bool run_at_start = false;             // else the first run is one interval after start
      std::string operation = "all_reduce";  // peer runs: all_reduce | send_recv
      int device = -1;                       // peer runs: the GPU; -1: the next one each run
      std::vector<uint64_t> sizes = {uint64_t{1} << 20, uint64_t{256} << 20};
      int warmup = 5;
      int iterations = 20;
      std::string nccl_library = "libnccl.so.2";
      std::string cudart_library;  // "" = libcudart.so, then .so.13, .so.12, .so.11.0
      bool skip_when_busy = true;
      std::vector<std::string> ignore_processes = {"nvidia-persistenced", "nv-hostengine",
                                                   "dcgm-exporter", "dcgmi", "nvidia-smi"};
      std::map<std::string, std::string> env;  // [probes.nccl.env]: NCCL_* for the children
      std::string log_dir;                     // "" = the system temporary directory
      bool operator==(const Nccl&) const = default;
    } nccl;
    // probes.nccl.enabled; the nccl kind registers with the same default (off).
    bool ncclEnabled() const { return enabled("nccl", false); }
    bool operator==(const Probes&) const = default;
  } probes;

  // The series budget: optional series turned on, as selectors (core/metric_selection.h), by
  // the table that holds the `extra_metrics` key: "collect" (the pipeline's own families),
  // "collect.sources.<name>", "policy", "probes.<kind>". docs/metrics.md, "Series budget".
  struct Metrics {
    std::map<std::string, std::vector<std::string>, std::less<>> extra;
    bool operator==(const Metrics&) const = default;
  } metrics;

  struct Policy {
    // Pack files or directories, loaded after the shipped packs; a pack here replaces a shipped
    // pack of the same name.
    std::vector<std::string> paths;
    bool shipped = true;         // load the packs compiled into the binary (config/policies/)
    std::string resource_group;  // empty: env, label file, then derived from facts
    bool resource_group_from_flag = false;  // set by --resource-group (wins over the env var)
    std::string resource_group_file;  // node-label file with fabricwatch.io/resource-group=...
    Duration reload_interval{30000};  // how often pack files are checked for changes; 0: never
    int max_workload_subjects = 20;   // workload violations listed one by one per rule
    bool operator==(const Policy&) const = default;
  } policy;
};

}  // namespace fabricwatch::config
