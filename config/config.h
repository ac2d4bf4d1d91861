#pragma once
// The daemon's configuration: what config/fabricwatch.toml holds, after defaults and validation.
// The daemon's own subsystems are fields here, their keys in config/*_keys.cc; what registers
// itself (a probe kind) keeps its table in `tables`. docs/configuration.md documents every key;
// tests keep the two in step.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/tables.h"
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

  // [probes.<kind>]: the probe kinds, each on or off by name. Each kind's own keys are a table of
  // its own (`tables`, declared with the kind: probes/kinds/<kind>/).
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

    bool operator==(const Probes&) const = default;
  } probes;

  // The series budget: optional series turned on, as selectors (core/metric_selection.h), by
  // the table that holds the `extra_metrics` key: "collect" (the pipeline's own families),
  // "collect.sources.<name>", "policy", "probes.<kind>". docs/metrics.md, "Series budget".
  struct Metrics {
    std::map<std::string, std::vector<std::string>, std::less<>> extra;
    bool operator==(const Metrics&) const = default;
  } metrics;

  // The tables of what registers itself ([probes.fabric] ...), by table name (config/tables.h).
  Tables tables;

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
    // serve: how long a violation stays "recovering" after its rule passes again.
    Duration violation_hold{300000};
    // serve: the window of the counters' rates (<counters>_rate facts).
    Duration counter_window{600000};
    bool operator==(const Policy&) const = default;
  } policy;

  // Where the node sits (the topology source, docs/topology.md).
  struct Topology {
    // [topology.labels]: the operator's labels (rack = "r12"); FABRICWATCH_TOPOLOGY_<NAME>
    // environment variables override them by name.
    std::map<std::string, std::string, std::less<>> labels;
    // A node-label file in the downward API's format (key="value" lines): a downwardAPI volume
    // of the pod's labels, or what an init step wrote. Its keys under one of the prefixes
    // become labels by their name part (topology.k8s.aws/network-node-layer-1 ->
    // network_node_layer_1), over [topology.labels] and under the environment.
    std::string labels_file;
    std::vector<std::string> file_label_prefixes = {"topology.kubernetes.io/", "topology.k8s.aws/",
                                                    "network.topology.nvidia.com/",
                                                    "topology.fabricwatch.io/"};
    // lldpd's control socket inside the host root; "" never asks lldpd.
    std::string lldpd_socket = "/run/lldpd.socket";
    Duration lldp_timeout{2000};  // the whole exchange with lldpd
    bool operator==(const Topology&) const = default;
  } topology;
};

}  // namespace fabricwatch::config
