#include "policy/pack_store.h"

#include <filesystem>

#include "policy/pack_loader.h"

namespace fabricwatch::policy {

namespace fs = std::filesystem;

PackStore::PackStore(PackStoreOptions opts) : opts_(std::move(opts)) {
  current_ = std::make_shared<const PackSet>();
}

std::string PackStore::fingerprint() const {
  // The files loading reads, from the same scan (test files next to packs are not packs).
  std::vector<std::string> parts;
  for (const auto& f : packFiles(opts_.paths)) {
    std::error_code size_ec, time_ec;
    auto size = fs::file_size(f, size_ec);
    auto mtime = fs::last_write_time(f, time_ec);
    parts.push_back(f + "|" + std::to_string(size_ec ? 0 : size) + "|" +
                    std::to_string(time_ec ? 0 : mtime.time_since_epoch().count()));
  }
  std::string out;
  for (const auto& p : parts) out += p + "\n";
  return out;
}

std::vector<core::Diagnostic> PackStore::reload() {
  std::lock_guard lock(mu_);
  loaded_fingerprint_ = fingerprint();
  PackLoadResult r = loadPolicySet(opts_.paths, opts_.shipped, opts_.fact_roots);
  ++status_.reloads_total;
  status_.at = std::chrono::system_clock::now();
  status_.ok = r.ok();
  if (r.ok()) {
    status_.error.clear();
    auto next = std::make_shared<const PackSet>(std::move(r.packs));
    std::lock_guard current_lock(current_mu_);
    current_.swap(next);
  } else {
    ++status_.failures_total;
    status_.error = r.problems.front().format();
  }
  return r.problems;
}

std::vector<core::Diagnostic> PackStore::reconfigure(PackStoreOptions opts) {
  {
    std::lock_guard lock(mu_);
    opts_ = std::move(opts);
  }
  return reload();
}

bool PackStore::reloadIfChanged(std::chrono::steady_clock::time_point now) {
  {
    std::lock_guard lock(mu_);
    if (opts_.paths.empty() || opts_.reload_interval.count() <= 0) return false;
    if (last_check_ != std::chrono::steady_clock::time_point{} &&
        now - last_check_ < opts_.reload_interval)
      return false;
    last_check_ = now;
    if (fingerprint() == loaded_fingerprint_) return false;
  }
  reload();
  return true;
}

ReloadStatus PackStore::lastReload() const {
  std::lock_guard lock(mu_);
  return status_;
}

}  // namespace fabricwatch::policy
