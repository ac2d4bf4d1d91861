#include "exporter/config_flags.h"

#include <iostream>

#include "exporter/pipeline.h"
#include "probes/registry.h"

namespace fabricwatch::exporter {
namespace {

// Which commands take a table's flags: the host root and logging every command; the daemon's
// listeners, the mesh and the probe kinds serve only; the packs serve and check.
bool takes(const std::string& table, ConfigFlagOptions opts) {
  if (table == "host" || table == "log") return true;
  if (table == "policy") return opts.policy;
  return opts.web;
}

// Every flag a configuration key has, once per name a '*' stands for (probe.<kind>.enabled),
// with the key and that name: the one list addConfigFlags and applyFlagOverrides both walk.
struct KeyFlag {
  std::string flag;
  std::string help;
  const config::KeyDef* key;
  std::string wild;
};

std::vector<KeyFlag> keyFlags(const config::Schema& schema, ConfigFlagOptions opts) {
  std::vector<KeyFlag> out;
  auto kinds = probes::probeKindNames();
  for (const auto& t : schema.tables()) {
    if (!takes(t.name, opts)) continue;
    for (const auto& k : t.keys) {
      if (k.flag.empty()) continue;
      if (k.flag.find('*') == std::string::npos) {
        out.push_back({k.flag, k.flag_help, &k, ""});
        continue;
      }
      for (const auto& name : kinds) {
        auto fill = [&](std::string s) {
          for (auto p = s.find('*'); p != std::string::npos; p = s.find('*', p + name.size()))
            s.replace(p, 1, name);
          return s;
        };
        out.push_back({fill(k.flag), fill(k.flag_help), &k, name});
      }
    }
  }
  return out;
}

}  // namespace

void addConfigFlags(FlagSet& flags, ConfigFlagOptions opts) {
  flags.add("config.file", "TOML configuration file; without it the embedded default is used.");
  if (opts.web)
    flags.add("web.config.file",
              "Web configuration (TLS, basic auth) in the Prometheus exporter-toolkit format; "
              "re-read when it changes and on SIGHUP.");
  auto schema = probes::configSchema();
  for (const auto& f : keyFlags(*schema, opts)) {
    if (f.key->type == config::KeyType::kBoolean)
      flags.addBool(f.flag, f.help);
    else
      flags.add(f.flag, f.help);
  }
}

void applyFlagOverrides(const FlagSet& flags, config::LoadResult& r) {
  config::LoadOptions opts = configLoadOptions();
  std::map<std::string, std::string> flag_of_key;
  for (const auto& f : keyFlags(config::schemaOf(opts), {true, true})) {
    if (!flags.isSet(f.flag)) continue;
    std::string key = f.key->path;
    if (auto star = key.find('*'); star != std::string::npos) key.replace(star, 1, f.wild);
    flag_of_key[key] = f.flag;
    if (auto err = config::setFromFlag(r.config, *f.key, flags.get(f.flag), f.wild))
      r.problems.push_back(core::Diagnostic{"flag --" + f.flag, 0, 0, std::move(*err), ""});
  }
  if (!r.ok()) return;
  // The tables' cross-key checks again, now that flags have had their say.
  config::revalidate(r, opts, [&](const std::string& key) -> std::optional<std::string> {
    auto it = flag_of_key.find(key);
    if (it == flag_of_key.end()) return std::nullopt;
    return it->second;
  });
  if (flags.isSet("web.config.file") && flags.get("web.config.file").empty())
    r.problems.push_back(core::Diagnostic{"flag --web.config.file", 0, 0, "must name a file", ""});
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
