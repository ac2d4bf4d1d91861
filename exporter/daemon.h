#pragma once
// `fabricwatch serve`: the HTTP server and the snapshot pipeline, until SIGTERM/SIGINT; SIGHUP
// reloads the configuration after a dry run (an invalid file keeps the running one) and the web
// configuration (--web.config.file, also re-read when it changes).

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "config/loader.h"
#include "core/scheduler.h"
#include "core/snapshot.h"
#include "exporter/flags.h"
#include "exporter/self_metrics.h"
#include "exporter/snapshot_collector.h"
#include "http/http_server.h"
#include "http/web_config_watcher.h"
#include "policy/counter_history.h"
#include "policy/pack_store.h"
#include "policy/violation_tracker.h"
#include "probes/mesh/peer_prober.h"

namespace fabricwatch::exporter {

class Daemon {
 public:
  Daemon(const FlagSet& flags, config::Config initial);
  ~Daemon();

  // Binds the listener and starts collecting. An error means nothing was started.
  core::Status start();
  // SIGHUP: re-reads --config.file; true if the new configuration was applied.
  bool reload();
  void stop();
  // Stops the scheduler only (shutdown path; see serveUntilSignalled).
  void stopCollecting();

  int port() const { return http_.port(); }
  const core::SnapshotStore& store() const { return store_; }

 private:
  // The self metrics that change per request (HTTP, process), in the text format.
  std::string renderPerRequestMetrics();

  const FlagSet& flags_;
  config::Config config_;
  core::SnapshotStore store_;
  SelfMetrics self_;
  http::HttpServer http_;
  std::unique_ptr<http::WebConfigWatcher> web_config_;  // null without --web.config.file
  std::unique_ptr<core::Scheduler> scheduler_;
  // The peer mesh (null when off); swapped on reload. Only the thread that starts, reloads and
  // stops the daemon touches it and config_: HTTP handlers answer from the snapshot alone
  // (/api/v1/peers from what the peer source captured).
  std::shared_ptr<probes::PeerProber> prober_;
  // Outlives scheduler rebuilds, so a failed pack reload keeps the last good packs.
  std::shared_ptr<policy::PackStore> packs_;
  // Outlives them too, so a reload keeps when each violation began and what is recovering.
  std::shared_ptr<policy::ViolationTracker> violations_ =
      std::make_shared<policy::ViolationTracker>();
  // And the counters' samples, so a reload keeps the rates' window.
  std::shared_ptr<policy::CounterHistory> counters_ = std::make_shared<policy::CounterHistory>();
  bool reloadPacks(const config::Config& c);
};

// The HTTP server's options from [web].
http::HttpOptions httpOptions(const config::Config::Web& web);

// Blocks SIGTERM, SIGINT and SIGHUP in the calling thread (do it before starting threads) and
// then waits for them: stop on TERM/INT, reload on HUP.
int serveUntilSignalled(Daemon& daemon);

}  // namespace fabricwatch::exporter
