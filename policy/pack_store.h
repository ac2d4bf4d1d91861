#pragma once
// The packs the daemon runs with, behind a swapped pointer: evaluations copy the current set's
// pointer (a lock held for that copy only) while a reload compiles the next one. A reload is a dry
// run first: a set with any problem is rejected and the last good set keeps running (and says so
// through lastReload()). reloadIfChanged() polls the files' modification times, at most once per
// interval, so edits under policy.paths apply without a signal.

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/diagnostic.h"
#include "policy/pack.h"

namespace fabricwatch::policy {

struct PackStoreOptions {
  std::vector<std::string> paths;                    // files and directories of packs
  bool shipped = true;                               // load the embedded shipped packs first
  std::chrono::milliseconds reload_interval{30000};  // 0: never poll for changes
  FactRoots fact_roots;  // the binary's sources' (probes/registry.h): what packs compile against
};

struct ReloadStatus {
  bool ok = true;
  std::chrono::system_clock::time_point at{};
  std::string error;  // the first problem of the last failed reload
  uint64_t reloads_total = 0;
  uint64_t failures_total = 0;
};

class PackStore {
 public:
  explicit PackStore(PackStoreOptions opts);

  // Loads the configured packs; on success they replace the current set. Returns the problems.
  std::vector<core::Diagnostic> reload();
  // Replaces the options (a new configuration) and reloads.
  std::vector<core::Diagnostic> reconfigure(PackStoreOptions opts);
  // Reloads when the files changed since the last load; checked at most once per interval.
  // True when a reload was attempted.
  bool reloadIfChanged(std::chrono::steady_clock::time_point now);

  std::shared_ptr<const PackSet> current() const {
    std::lock_guard lock(current_mu_);
    return current_;
  }
  ReloadStatus lastReload() const;

 private:
  std::string fingerprint() const;  // paths, sizes and mtimes of every pack file

  mutable std::mutex mu_;  // guards everything below but current_
  PackStoreOptions opts_;
  std::string loaded_fingerprint_;
  std::chrono::steady_clock::time_point last_check_{};
  ReloadStatus status_;
  // Not std::atomic<std::shared_ptr>: libstdc++ 12 implements it with a spin lock that
  // ThreadSanitizer cannot see, so the TSan build would report every reload (as SnapshotStore).
  mutable std::mutex current_mu_;
  std::shared_ptr<const PackSet> current_;
};

}  // namespace fabricwatch::policy
