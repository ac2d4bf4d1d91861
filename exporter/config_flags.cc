#include "exporter/config_flags.h"

#include "exporter/pipeline.h"

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
    flags.add(
        "web.config.file",
        "Web configuration (TLS, basic auth) in the exporter-toolkit format. Not supported yet.");
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
    std::string v = flags.get("path.rootfs");
    if (v.empty() || v[0] != '/')
      problem("path.rootfs", "must be an absolute path, got \"" + v + "\"");
    else
      r.config.host.rootfs = v;
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
  if (flags.isSet("web.config.file")) {
    problem("web.config.file",
            "TLS and basic authentication are not supported yet; remove the flag and put "
            "fabricwatch behind a proxy (e.g. kube-rbac-proxy) until they are");
  }
}

config::LoadResult loadConfigWithFlags(const FlagSet& flags) {
  config::LoadOptions opts{knownSourceNames()};
  config::LoadResult r = flags.isSet("config.file")
                             ? config::loadConfigFile(flags.get("config.file"), opts)
                             : config::loadEmbeddedDefault(opts);
  if (r.ok()) applyFlagOverrides(flags, r);
  return r;
}

}  // namespace fabricwatch::exporter
