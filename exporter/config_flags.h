#pragma once
// The flags that override configuration keys, shared by the commands that load a configuration,
// and the one place that turns "file or embedded default, then flags" into a Config.

#include <optional>
#include <string>

#include "config/loader.h"
#include "exporter/flags.h"

namespace fabricwatch::exporter {

struct ConfigFlagOptions {
  bool web = false;     // --web.* flags (serve only)
  bool policy = false;  // --policy.path and --resource-group (serve, check)
};

void addConfigFlags(FlagSet& flags, ConfigFlagOptions opts);

// Loads --config.file (or the embedded default) and applies flag overrides. Problems are
// positioned diagnostics (flags report as "flag --name").
config::LoadResult loadConfigWithFlags(const FlagSet& flags);

// For one-shot commands (check, facts): loads the configuration as above, prints any problems
// to stderr (returning nullopt, exit 2 for the caller) and applies its log settings.
std::optional<config::Config> loadCommandConfig(const FlagSet& flags);

// Applies the configuration's log level and format (every command, and serve on reload).
void applyLogSettings(const config::Config& config);

// Applies flag overrides to an already loaded configuration (used again on reload).
void applyFlagOverrides(const FlagSet& flags, config::LoadResult& result);

}  // namespace fabricwatch::exporter
