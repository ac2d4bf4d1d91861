#include "policy/pack_store.h"

#include <algorithm>
#include <filesystem>

#include "policy/pack_loader.h"

namespace fabricwatch::policy {

namespace fs = std::filesystem;

PackStore::PackStore(PackStoreOptions opts) : opts_(std::move(opts)) {
  current_.store(std::make_shared<const PackSet>());
}

std::string PackStore::fingerprint() const {
  std::vector<std::string> parts;
  auto add = [&](const fs::path& p) {
    std::error_code ec;
    auto size = fs::file_size(p, ec);
    auto mtime = fs::last_write_time(p, ec);
    parts.push_back(p.string() + "|" + std::to_string(ec ? 0 : size) + "|" +
                    std::to_string(ec ? 0 : mtime.time_since_epoch().count()));
  };
  for (const auto& path : opts_.paths) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      for (const auto& e : fs::directory_iterator(path, ec)) {
        auto ext = e.path().extension();
        if (ext == ".yaml" || ext == ".yml") add(e.path());
      }
    } else {
      add(path);
    }
  }
  std::sort(parts.begin(), parts.end());
  std::string out;
  for (const auto& p : parts) out += p + "\n";
  return out;
}

std::vector<core::Diagnostic> PackStore::reload() {
  std::lock_guard lock(mu_);
  loaded_fingerprint_ = fingerprint();
  PackLoadResult r = loadPolicySet(opts_.paths, opts_.shipped);
  ++status_.reloads_total;
  status_.at = std::chrono::system_clock::now();
  status_.ok = r.ok();
  if (r.ok()) {
    status_.error.clear();
    current_.store(std::make_shared<const PackSet>(std::move(r.packs)));
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
