#include "exporter/daemon.h"

#include <signal.h>

#include "core/log.h"
#include "core/text_format.h"
#include "exporter/api.h"
#include "exporter/config_flags.h"
#include "exporter/exposition.h"
#include "exporter/pipeline.h"
#include "exporter/process_metrics.h"
#include "exporter/status_page.h"
#include "probes/peer_setup.h"

namespace fabricwatch::exporter {

Daemon::Daemon(const FlagSet& flags, config::Config initial)
    : flags_(flags), config_(std::move(initial)) {
  applyLogSettings(config_);
  self_.configReloaded(true);
  http_.observe([this](const std::string& route, int status, double secs) {
    self_.observeRequest(route, status, secs);
  });
  http_.observeDrops([this](http::HttpDrop reason) { self_.httpDropped(reason); });
  // What a scraper and the kubelet ask for is answered on the HTTP server's I/O thread: the
  // snapshot's exposition was rendered when it was published, so a scrape only renders the
  // self metrics (a few KB, no waiting) after it.
  constexpr auto kIo = http::HttpServer::Runs::kIoThread;
  http_.route(
      "/metrics",
      [this](const http::HttpRequest& req) {
        return metricsResponse(store_.load(), renderPerRequestMetrics(),
                               req.acceptsEncoding("gzip"));
      },
      kIo);
  http_.route(
      "/healthz", [](const http::HttpRequest&) { return healthz(); }, kIo);
  http_.route(
      "/readyz", [this](const http::HttpRequest&) { return readyz(store_.load().get()); }, kIo);
  http_.route("/api/v1/facts",
              [this](const http::HttpRequest&) { return factsJson(store_.load().get()); });
  http_.route("/api/v1/violations",
              [this](const http::HttpRequest&) { return violationsJson(store_.load().get()); });
  http_.route("/api/v1/peers",
              [this](const http::HttpRequest&) { return peersJson(store_.load().get()); });
  http_.route("/", [this](const http::HttpRequest&) { return statusPage(store_.load().get()); });
}

Daemon::~Daemon() { stop(); }

std::string Daemon::renderPerRequestMetrics() {
  core::MetricFamilies families;
  self_.collect(families);
  appendProcessMetrics(families);
  return core::textFormat(families);
}

http::HttpOptions httpOptions(const config::Config::Web& w) {
  http::HttpOptions opts;
  opts.listen_address = w.listen_address;
  opts.threads = w.threads;
  opts.max_request_bytes = w.max_request_bytes;
  opts.request_timeout_ms = static_cast<int>(w.request_timeout.count());
  opts.idle_timeout_ms = static_cast<int>(w.idle_timeout.count());
  opts.max_connections = w.max_connections;
  opts.max_connections_per_address = w.max_connections_per_address;
  if (w.auth_exempt_health) opts.auth_exempt_paths = {"/healthz", "/readyz"};
  return opts;
}

core::Status Daemon::start() {
  // Packs first: loading them has no side effect, so an invalid pack stops the start before
  // any port is opened. Then the mesh (its own port), then the listener, then collection.
  packs_ = std::make_shared<policy::PackStore>(packStoreOptions(config_));
  if (auto problems = packs_->reload(); !problems.empty())
    return core::Error{"invalid policy packs:\n" + core::formatAll(problems)};
  auto prober =
      probes::makePeerProber(config_, policy::configuredResourceGroup(policyStageOptions(config_)),
                             metricSelection(config_));
  if (!prober) return core::Error{prober.error().message};
  if (*prober) {
    if (auto st = (*prober)->start(); !st) return st;
  }
  // The web configuration before the listener: TLS and users are in place for the first
  // connection, and a bad file stops the start (FILE:LINE:COL).
  if (flags_.isSet("web.config.file")) {
    web_config_ = std::make_unique<http::WebConfigWatcher>(
        flags_.get("web.config.file"),
        [this](std::shared_ptr<const http::WebSecurity> s) { http_.setSecurity(std::move(s)); },
        [this](bool ok, std::string_view refused) { self_.webConfigReloaded(ok, refused); });
    if (auto st = web_config_->load(); !st) {
      if (*prober) (*prober)->stop();
      return core::Error{"invalid web configuration:\n" + st.message()};
    }
  }
  http::HttpOptions opts = httpOptions(config_.web);
  if (auto st = http_.start(opts); !st) {
    if (*prober) (*prober)->stop();
    return st;
  }
  if (web_config_) web_config_->start();
  prober_ = *prober;
  scheduler_ = buildScheduler(config_, store_,
                              PipelineOptions{packs_, true, prober_, /*heavy_probes=*/true,
                                              /*exposition=*/true, violations_, counters_});
  scheduler_->start();
  core::log::info("exporter", "listening",
                  {{"address", config_.web.listen_address},
                   {"port", std::to_string(http_.port())},
                   {"rootfs", config_.host.rootfs}});
  return core::Status::Ok();
}

bool Daemon::reloadPacks(const config::Config& c) {
  auto problems = packs_->reconfigure(packStoreOptions(c));
  for (const auto& d : problems)
    core::log::error("policy", "invalid policy pack, keeping the last good packs",
                     {{"problem", d.format()}});
  if (problems.empty())
    core::log::info("policy", "policy packs reloaded",
                    {{"packs", std::to_string(packs_->current()->size())}});
  return problems.empty();
}

bool Daemon::reload() {
  if (web_config_) web_config_->reload();
  if (!flags_.isSet("config.file")) {
    bool packs_ok = reloadPacks(config_);
    // The policy metrics render from the snapshot: evaluate and publish one now, rather than
    // when a source next runs.
    if (scheduler_) scheduler_->republish();
    core::log::info("exporter", "reload requested; running on the embedded default configuration");
    self_.configReloaded(true);
    return packs_ok;
  }
  config::LoadResult r = loadConfigWithFlags(flags_);
  if (!r.ok()) {
    self_.configReloaded(false);
    for (const auto& d : r.problems)
      core::log::error("config", "invalid configuration, keeping the running one",
                       {{"problem", d.format()}});
    return false;
  }
  // The new mesh is built before anything is applied: a configuration whose mesh cannot be
  // built (the secret file went missing) fails the reload as a whole, counted as failed, and
  // what runs stays as it was.
  auto next_prober = probes::makePeerProber(
      r.config, policy::configuredResourceGroup(policyStageOptions(r.config)),
      metricSelection(r.config));
  if (!next_prober) {
    self_.configReloaded(false);
    core::log::error("config", "invalid configuration, keeping the running one",
                     {{"problem", next_prober.error().message}});
    return false;
  }
  std::shared_ptr<probes::PeerProber> prober = *next_prober;
  if (prober_) prober_->stop();
  if (prober) {
    if (auto st = prober->start(); !st) {
      // The new mesh cannot listen (its port is taken): the running one goes on, unchanged.
      self_.configReloaded(false);
      core::log::error("config", "cannot start the peer mesh, keeping the running configuration",
                       {{"problem", st.message()}});
      if (prober_) (void)prober_->start();
      return false;
    }
  }
  if (r.config.web != config_.web)
    core::log::warn("config", "changes under [web] take effect after a restart");
  applyLogSettings(r.config);
  if (r.config.sourceConfig("workloads").enabled && !config_.sourceConfig("workloads").enabled)
    core::log::warn("config",
                    "the workloads source needs CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH, which "
                    "were given up at start without it: restart fabricwatch to read workloads");
  prober_ = prober;
  reloadPacks(r.config);
  auto next = buildScheduler(r.config, store_,
                             PipelineOptions{packs_, true, prober_, /*heavy_probes=*/true,
                                             /*exposition=*/true, violations_, counters_});
  scheduler_->stop();
  next->carryOver(*scheduler_);
  scheduler_ = std::move(next);
  scheduler_->start();
  config_ = std::move(r.config);
  self_.configReloaded(true);
  core::log::info("config", "configuration reloaded", {{"file", flags_.get("config.file")}});
  return true;
}

void Daemon::stopCollecting() {
  if (scheduler_) scheduler_->stop();
  if (prober_) prober_->requestStop();  // probes in flight may take seconds; do not wait
}

void Daemon::stop() {
  if (scheduler_) scheduler_->stop();
  if (prober_) prober_->stop();
  if (web_config_) web_config_->stop();
  http_.stop();
}

int serveUntilSignalled(Daemon& daemon) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  while (true) {
    int sig = 0;
    if (sigwait(&set, &sig) != 0) continue;
    if (sig == SIGHUP) {
      daemon.reload();
      continue;
    }
    core::log::info("exporter", "shutting down",
                    {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}});
    // Stop collecting and exit: probes in flight may take seconds to return, and a daemon must
    // stop within a second. Nothing is left to flush, so the caller exits the process without
    // running destructors under live threads.
    daemon.stopCollecting();
    return 0;
  }
}

}  // namespace fabricwatch::exporter
