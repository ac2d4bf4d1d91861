#include "http/web_config_watcher.h"

#include <sys/stat.h>

#include "core/log.h"

namespace fabricwatch::http {

WebConfigWatcher::WebConfigWatcher(std::string path, Apply apply, Report report)
    : path_(std::move(path)), apply_(std::move(apply)), report_(std::move(report)) {}

WebConfigWatcher::~WebConfigWatcher() { stop(); }

std::vector<WebConfigWatcher::Stamp> WebConfigWatcher::stamps(
    const std::vector<std::string>& files) {
  std::vector<Stamp> out;
  for (const auto& f : files) {
    struct stat st {};
    Stamp s;
    if (stat(f.c_str(), &st) == 0) {
      s = Stamp{st.st_dev, st.st_ino, st.st_size,
                static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
    }
    out.push_back(s);
  }
  return out;
}

core::Status WebConfigWatcher::load() {
  std::lock_guard reload(reload_mu_);
  // Stamps first: a change while loading is seen by the next check.
  WebSecurityLoad l = loadWebSecurity(path_);
  if (!l.problems.empty()) return core::Error{core::formatAll(l.problems)};
  std::lock_guard lock(mu_);
  current_ = l.security;
  files_ = l.files;
  stamps_ = stamps(files_);
  if (apply_) apply_(current_);
  if (report_) report_(true, "");
  return core::Status::Ok();
}

bool WebConfigWatcher::apply(WebSecurityLoad l) {
  bool ok = l.problems.empty();
  const char* refused = ok ? "" : "invalid";
  std::shared_ptr<const WebSecurity> previous;
  {
    std::lock_guard lock(mu_);
    previous = current_;
    // Watch what this attempt read, good or bad, so a fix of any of them is seen.
    if (!l.files.empty()) files_ = l.files;
    stamps_ = stamps(files_);
  }
  if (ok && previous &&
      (previous->tlsContext() != nullptr) != (l.security->tlsContext() != nullptr)) {
    l.problems.push_back(core::Diagnostic{path_, 0, 0,
                                          previous->tlsContext() ? "turning TLS off needs a restart"
                                                                 : "turning TLS on needs a restart",
                                          ""});
    ok = false;
    refused = "tls_change";
  }
  if (ok && previous && !l.security->protection().allow_less) {
    // Checked against the running file, not the last one read: a truncate-then-write that is
    // seen half-way is refused, and the complete file, read next, compares with what runs.
    for (const auto& weaker : lessProtection(previous->protection(), l.security->protection())) {
      l.problems.push_back(core::Diagnostic{path_, 0, 0,
                                            weaker + ": refused; say " +
                                                std::string(kAllowLessProtection) +
                                                ": true in the file to mean it, or restart",
                                            ""});
      ok = false;
      refused = "less_protection";
    }
  }
  if (!ok) {
    for (const auto& d : l.problems)
      core::log::error("web", "invalid web configuration, keeping the last good one",
                       {{"problem", d.format()}, {"reason", refused}});
    if (report_) report_(false, refused);
    return false;
  }
  {
    std::lock_guard lock(mu_);
    current_ = l.security;
  }
  if (apply_) apply_(l.security);
  if (report_) report_(true, "");
  if (previous && !lessProtection(previous->protection(), l.security->protection()).empty()) {
    core::log::warn("web", "web configuration reloaded with less protection, as it allows",
                    {{"file", path_}, {"key", kAllowLessProtection}});
  } else {
    core::log::info("web", "web configuration reloaded",
                    {{"file", path_}, {"users", std::to_string(l.security->protection().users)}});
  }
  return true;
}

bool WebConfigWatcher::reload() {
  std::lock_guard reload(reload_mu_);
  return apply(loadWebSecurity(path_));
}

bool WebConfigWatcher::reloadIfChanged() {
  std::lock_guard reload(reload_mu_);
  {
    std::lock_guard lock(mu_);
    if (stamps(files_) == stamps_) return false;
  }
  return apply(loadWebSecurity(path_));
}

std::shared_ptr<const WebSecurity> WebConfigWatcher::current() const {
  std::lock_guard lock(mu_);
  return current_;
}

void WebConfigWatcher::start(std::chrono::milliseconds interval) {
  if (thread_.joinable()) return;
  {
    std::lock_guard lock(stop_mu_);
    stopping_ = false;
  }
  thread_ = std::thread([this, interval] {
    std::unique_lock lock(stop_mu_);
    while (!stop_cv_.wait_for(lock, interval, [this] { return stopping_; })) {
      lock.unlock();
      reloadIfChanged();
      lock.lock();
    }
  });
}

void WebConfigWatcher::stop() {
  {
    std::lock_guard lock(stop_mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace fabricwatch::http
