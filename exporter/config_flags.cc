#include "exporter/config_flags.h"

#include <filesystem>
#include <iostream>

#include "config/duration.h"
#include "config/fabric_providers.h"
#include "exporter/pipeline.h"
#include "probes/mesh/probe_kind.h"

namespace fabricwatch::exporter {

void addConfigFlags(FlagSet& flags, ConfigFlagOptions opts) {
  flags.add("config.file", "TOML configuration file; without it the embedded default is used.");
  flags.add("path.rootfs",
            "Host root file system: every /sys, /proc and /etc read goes below it. Overrides "
            "host.rootfs.");
  flags.add("log.level", "Log level: debug, info, warn or error. Overrides log.level.");
  flags.add("log.format", "Log format: logfmt or json. Overrides log.format.");
  if (opts.web) {
    flags.add(
        "web.listen-address",
        "Address for /metrics and the API, HOST:PORT or :PORT. Overrides web.listen_address.");
    flags.add("web.config.file",
              "Web configuration (TLS, basic auth) in the Prometheus exporter-toolkit format; "
              "re-read when it changes and on SIGHUP.");
    flags.addBool("web.auth-exempt-health",
                  "Answer /healthz and /readyz without basic auth (kubelet probes). Overrides "
                  "web.auth_exempt_health.");
    flags.add("node.name",
              "This node's name in the peer mesh (default $NODE_NAME, else the host name). "
              "Overrides peer.node_name.");
    flags.add("peer.listen-address",
              "Peer channel address, IP:PORT or :PORT. Overrides peer.listen_address.");
    flags.add("peer.secret-file",
              "File with the mesh's shared HMAC secret. Overrides peer.secret_file.");
    flags.add("peers", "Static mesh members, HOST:PORT,... Overrides probe.peers.");
    flags.add("probe.dns-name",
              "DNS name whose A/AAAA records are mesh members. Overrides probe.dns_name.");
    flags.add("probe.peers-file",
              "File listing mesh members, one HOST:PORT per line. Overrides probe.peers_file.");
    flags.add("probe.interval", "Time between probe rounds, e.g. 10s. Overrides probe.interval.");
    flags.add("probe.peers-per-round", "Peers probed per round. Overrides probe.peers_per_round.");
    flags.add("probe.fabric.provider",
              "The fabric probe's libfabric provider (efa, verbs;ofi_rxm, tcp, udp;ofi_rxd, shm "
              "...) or auto. Overrides probes.fabric.provider and the resource group's row.");
    for (const auto& kind : probes::probeKindNames())
      flags.add(
          "probe." + kind + ".enabled",
          "Run the " + kind + " probe kind: true or false. Overrides probes." + kind + ".enabled.");
  }
  if (opts.policy) {
    flags.add("policy.path",
              "Policy pack files or directories, comma-separated, loaded after the shipped packs. "
              "Overrides policy.paths.");
    flags.add("resource-group",
              "The node's resource group (selects the packs). Overrides "
              "FABRICWATCH_RESOURCE_GROUP and policy.resource_group.");
  }
}

void applyFlagOverrides(const FlagSet& flags, config::LoadResult& r) {
  auto problem = [&](const std::string& flag, std::string msg) {
    r.problems.push_back(core::Diagnostic{"flag --" + flag, 0, 0, std::move(msg), ""});
  };
  if (flags.isSet("path.rootfs")) {
    // A relative path is taken from the working directory, as node_exporter takes its
    // --path.rootfs (the configuration file, read from elsewhere, asks for an absolute one).
    std::string v = flags.get("path.rootfs");
    std::error_code ec;
    if (v.empty())
      problem("path.rootfs", "must not be empty");
    else if (!std::filesystem::is_directory(v, ec))
      problem("path.rootfs", "\"" + v + "\" is not a directory");
    else
      r.config.host.rootfs = std::filesystem::absolute(v).lexically_normal().string();
  }
  if (flags.isSet("log.level")) {
    if (auto l = core::log::parseLevel(flags.get("log.level")))
      r.config.log.level = *l;
    else
      problem("log.level", "unknown log level \"" + flags.get("log.level") +
                               "\": use debug, info, warn or error");
  }
  if (flags.isSet("log.format")) {
    if (auto f = core::log::parseFormat(flags.get("log.format")))
      r.config.log.format = *f;
    else
      problem("log.format",
              "unknown log format \"" + flags.get("log.format") + "\": use logfmt or json");
  }
  if (flags.isSet("web.listen-address")) {
    std::string v = flags.get("web.listen-address");
    if (auto err = config::checkListenAddress(v))
      problem("web.listen-address", *err);
    else
      r.config.web.listen_address = v;
  }
  if (flags.isSet("node.name")) r.config.peer.node_name = flags.get("node.name");
  if (flags.isSet("peer.listen-address")) {
    std::string v = flags.get("peer.listen-address");
    if (auto err = config::checkListenAddress(v))
      problem("peer.listen-address", *err);
    else
      r.config.peer.listen_address = v;
  }
  if (flags.isSet("peer.secret-file")) r.config.peer.secret_file = flags.get("peer.secret-file");
  if (flags.isSet("peers")) {
    std::vector<std::string> peers;
    std::string list = flags.get("peers");
    for (size_t start = 0; start <= list.size();) {
      size_t comma = list.find(',', start);
      std::string item =
          list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (!item.empty()) {
        if (auto err = config::checkPeerAddress(item)) problem("peers", *err);
        peers.push_back(item);
      }
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    r.config.probe.peers = std::move(peers);
  }
  if (flags.isSet("probe.dns-name")) r.config.probe.dns_name = flags.get("probe.dns-name");
  if (flags.isSet("probe.peers-file")) r.config.probe.peers_file = flags.get("probe.peers-file");
  if (flags.isSet("probe.interval")) {
    auto d = config::parseDuration(flags.get("probe.interval"));
    if (!d || d->count() < 100)
      problem("probe.interval", "expected a duration of at least 100ms, e.g. \"10s\", got \"" +
                                    flags.get("probe.interval") + "\"");
    else
      r.config.probe.interval = *d;
  }
  if (flags.isSet("probe.peers-per-round")) {
    std::string v = flags.get("probe.peers-per-round");
    int k = 0;
    if (v.empty() || v.size() > 4 || v.find_first_not_of("0123456789") != std::string::npos ||
        (k = std::stoi(v)) < 1 || k > 1024)
      problem("probe.peers-per-round", "expected an integer from 1 to 1024, got \"" + v + "\"");
    else
      r.config.probe.peers_per_round = k;
  }
  for (const auto& kind : probes::probeKindNames()) {
    std::string flag = "probe." + kind + ".enabled";
    if (!flags.isSet(flag)) continue;
    std::string v = flags.get(flag);
    if (v == "true" || v == "false")
      r.config.probes.kinds[kind].enabled = v == "true";
    else
      problem(flag, "expected true or false, got \"" + v + "\"");
  }
  if (flags.isSet("probe.fabric.provider")) {
    std::string v = flags.get("probe.fabric.provider");
    if (auto err = config::checkProviderName(v)) {
      problem("probe.fabric.provider", *err);
    } else {
      r.config.probes.fabric.provider = v;
      r.config.probes.fabric.provider_origin = config::Config::Probes::Fabric::Origin::kFlag;
    }
  }
  if (auto err = config::checkPeerConfig(r.config)) problem("peer.secret-file", *err);
  if (flags.isSet("policy.path")) {
    std::vector<std::string> paths;
    std::string v = flags.get("policy.path");
    size_t start = 0;
    while (start <= v.size()) {
      size_t comma = v.find(',', start);
      std::string p =
          v.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (!p.empty()) paths.push_back(p);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    if (paths.empty())
      problem("policy.path", "needs at least one file or directory");
    else
      r.config.policy.paths = std::move(paths);
  }
  if (flags.isSet("resource-group")) {
    std::string v = flags.get("resource-group");
    if (v.empty() || v.find_first_of(" \t\n\"") != std::string::npos) {
      problem("resource-group", "must be a non-empty name without spaces, got \"" + v + "\"");
    } else {
      r.config.policy.resource_group = v;
      r.config.policy.resource_group_from_flag = true;
    }
  }
  if (flags.isSet("web.auth-exempt-health")) r.config.web.auth_exempt_health = true;
  if (flags.isSet("web.config.file") && flags.get("web.config.file").empty())
    problem("web.config.file", "must name a file");
}

config::LoadResult loadConfigWithFlags(const FlagSet& flags) {
  config::LoadOptions opts = configLoadOptions();
  config::LoadResult r = flags.isSet("config.file")
                             ? config::loadConfigFile(flags.get("config.file"), opts)
                             : config::loadEmbeddedDefault(opts);
  if (r.ok()) applyFlagOverrides(flags, r);
  return r;
}

std::optional<config::Config> loadCommandConfig(const FlagSet& flags) {
  config::LoadResult r = loadConfigWithFlags(flags);
  if (!r.ok()) {
    std::cerr << core::formatAll(r.problems);
    return std::nullopt;
  }
  applyLogSettings(r.config);
  return std::move(r.config);
}

void applyLogSettings(const config::Config& config) {
  core::log::setLevel(config.log.level);
  core::log::setFormat(config.log.format);
}

}  // namespace fabricwatch::exporter
