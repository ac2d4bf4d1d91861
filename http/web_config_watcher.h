#pragma once
// Keeps the HTTP server's WebSecurity in step with --web.config.file: the file and every file
// it names (certificates, keys, CAs) are checked for a change of inode, size or modification
// time every second (a Kubernetes Secret update swaps them by symlink) and on SIGHUP; a change
// is loaded and, when good, applied to new connections. A bad file keeps the last good one:
// its problems are logged and the reload counted as failed. Turning TLS on or off needs a
// restart (a typo must never silently downgrade to plain HTTP), and a file that would serve with
// less protection than the running one (basic auth off, client certificates no longer required
// or verified: a truncated, emptied or comment-only file) is refused unless it says
// `fabricwatch_allow_less_protection: true` (web_config.h).

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/result.h"
#include "http/web_security.h"

namespace fabricwatch::http {

class WebConfigWatcher {
 public:
  using Apply = std::function<void(std::shared_ptr<const WebSecurity>)>;
  // After each load or reload: success, or why the file was refused: "invalid" (problems in
  // the file or a file it names), "tls_change" (TLS on or off), "less_protection".
  using Report = std::function<void(bool success, std::string_view refused)>;

  WebConfigWatcher(std::string path, Apply apply, Report report);
  ~WebConfigWatcher();

  // The first load: problems (FILE:LINE:COL) make an error, and nothing is applied.
  core::Status load();
  // Polls for changes every `interval` on a thread of its own.
  void start(std::chrono::milliseconds interval = std::chrono::seconds(1));
  void stop();
  // Re-reads the file now (SIGHUP), changed or not; true when applied.
  bool reload();
  // Re-reads the file if it or a file it names changed; true when something was applied.
  bool reloadIfChanged();

  std::shared_ptr<const WebSecurity> current() const;

 private:
  struct Stamp {
    dev_t dev = 0;
    ino_t ino = 0;
    off_t size = -1;
    int64_t mtime_ns = 0;
    bool operator==(const Stamp&) const = default;
  };
  static std::vector<Stamp> stamps(const std::vector<std::string>& files);
  bool apply(WebSecurityLoad load);

  std::string path_;
  Apply apply_;
  Report report_;
  mutable std::mutex mu_;  // everything below
  std::shared_ptr<const WebSecurity> current_;
  std::vector<std::string> files_;
  std::vector<Stamp> stamps_;
  std::mutex reload_mu_;  // one reload at a time (poll thread and SIGHUP)
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace fabricwatch::http
