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
