#pragma once
// The daemon's configuration: what config/fabricwatch.toml holds, after defaults and validation.
// docs/configuration.md documents every key; tests keep the two in step.

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "core/log.h"

namespace fabricwatch::config {

using Duration = std::chrono::milliseconds;

struct SourceConfig {
  bool enabled = true;
  Duration interval{0};  // 0: use collect.interval
  Duration timeout{0};   // 0: use collect.timeout
};

struct Config {
  struct Web {
    std::string listen_address = ":19736";
    int threads = 4;
    int max_request_bytes = 16384;
    Duration request_timeout{10000};
  } web;

  struct Log {
    core::log::Level level = core::log::Level::kInfo;
    core::log::Format format = core::log::Format::kLogfmt;
  } log;

  struct Host {
    std::string rootfs = "/";
  } host;

  struct Collect {
    Duration interval{30000};
    Duration timeout{10000};
    double jitter = 0.1;
    std::map<std::string, SourceConfig, std::less<>> sources;  // [collect.sources.<name>]
  } collect;

  // The schedule a source runs on: its own keys over the [collect] defaults.
  SourceConfig sourceConfig(std::string_view name) const;

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
  } policy;
};

}  // namespace fabricwatch::config
