#pragma once
// Loads the daemon configuration from TOML. Every problem (syntax, unknown key, wrong type,
// value out of range, bad duration) comes back as a positioned Diagnostic; nothing throws.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "config/schema.h"
#include "core/diagnostic.h"

namespace fabricwatch::config {

struct LoadOptions {
  // Source names accepted under [collect.sources.<name>]; empty accepts any name.
  std::vector<std::string> known_sources;
  // Probe kinds accepted under [probes.<kind>]; empty accepts any name.
  std::vector<std::string> known_probe_kinds = {};
  // The optional metrics each table may turn on with extra_metrics ("collect.sources.rdma" ->
  // its declarations); empty accepts any well-formed selector.
  std::map<std::string, std::vector<core::OptionalMetric>, std::less<>> optional_metrics = {};
  // The keys the file may set: null, the daemon's own tables (Schema::daemon()); a binary with
  // probe kinds passes a schema with their tables too (probes/registry.h).
  std::shared_ptr<const Schema> schema = nullptr;
};

struct LoadResult {
  Config config;
  std::vector<core::Diagnostic> problems;
  bool ok() const { return problems.empty(); }
};

// A file overlays the embedded default key by key, tables included: it needs only the keys it
// changes (a file without [collect.sources.workloads] leaves that source off, as the default
// has it). Arrays are values: a file that sets probe.peers replaces the whole list.
LoadResult loadConfig(std::string_view toml_text, std::string_view file_name,
                      const LoadOptions& opts = {});
// A configuration file is a regular file of at most kMaxConfigBytes (a FIFO is refused, so a
// reload never blocks on one).
inline constexpr size_t kMaxConfigBytes = 1 << 20;
LoadResult loadConfigFile(const std::string& path, const LoadOptions& opts = {});

const Schema& schemaOf(const LoadOptions& opts);

// Every key the loader accepts, as dotted patterns ("collect.sources.*.interval"); a test keeps
// docs/configuration.md in step with it.
std::vector<std::string> knownKeys(const LoadOptions& opts = {});

// A flag's text through `key`'s flag transform, type and setter: the file's own checks, so a
// flag and the file accept the same values. nullopt when it was set, else the problem.
std::optional<std::string> setFromFlag(Config& config, const KeyDef& key, std::string text,
                                       const std::string& wild = "");
// The tables' cross-key checks again after flags: a problem is reported at the flag of the
// first key involved that a flag set (`flag_of`: a key's flag when a flag set it).
void revalidate(LoadResult& r, const LoadOptions& opts,
                const std::function<std::optional<std::string>(const std::string&)>& flag_of);

// nullopt when s is a valid HOST:PORT or :PORT listen address, else the problem.
std::optional<std::string> checkListenAddress(const std::string& s);

// nullopt when s is HOST:PORT (a name or an IP, [v6] in brackets), else the problem.
std::optional<std::string> checkPeerAddress(const std::string& s);
// Cross-key checks of [peer] and [probe], run after the file and again after flag overrides:
// the mesh is on when a discovery source is set, and then it needs a secret file.
std::optional<std::string> checkPeerConfig(const Config& c);

// The configuration compiled into the binary: the same text as config/fabricwatch.toml.
std::string_view embeddedDefaultToml();
LoadResult loadEmbeddedDefault(const LoadOptions& opts = {});

}  // namespace fabricwatch::config
