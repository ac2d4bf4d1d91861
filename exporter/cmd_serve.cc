#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "core/host_fs.h"
#include "core/log.h"
#include "exporter/commands.h"
#include "exporter/config_flags.h"
#include "exporter/daemon.h"
#include "exporter/privileges.h"
#include "facts/kept_file.h"
#include "http/web_security.h"

namespace fabricwatch::exporter {

int runServe(const Args& args) {
  FlagSet flags(
      "usage: fabricwatch serve [flags]\n\n"
      "Collects node facts on their intervals and serves /metrics, /healthz, /readyz and "
      "/api/v1/*.\n"
      "SIGHUP reloads --config.file and --web.config.file; SIGTERM or SIGINT stops.");
  addConfigFlags(flags, {.web = true, .policy = true});
  flags.addBool("help", "Show this help.");
  if (auto err = flags.parse(args)) {
    std::cerr << "fabricwatch serve: " << *err << "\n\n" << flags.help();
    return kExitUsage;
  }
  if (flags.getBool("help")) {
    std::cout << flags.help();
    return kExitOk;
  }
  if (!flags.positional().empty()) {
    std::cerr << "fabricwatch serve: unexpected argument \"" << flags.positional().front()
              << "\"\n";
    return kExitUsage;
  }
  config::LoadResult r = loadConfigWithFlags(flags);
  if (!r.ok()) {
    std::cerr << core::formatAll(r.problems);
    return kExitUsage;
  }
  // Before the first line logged here (the privileges below), not only when the daemon starts.
  applyLogSettings(r.config);
  // An invalid web configuration is a configuration error too (exit 2, FILE:LINE:COL); the
  // daemon loads it again when it starts.
  if (flags.isSet("web.config.file")) {
    auto web = http::loadWebSecurity(flags.get("web.config.file"));
    if (!web.problems.empty()) {
      std::cerr << core::formatAll(web.problems);
      return kExitUsage;
    }
  }
  // The fact sources keep sysfs attributes open between collections (facts/kept_file.h),
  // within a share of this limit: a service's default soft limit of 1024 is far below its hard.
  size_t nofile = facts::raiseOpenFileLimit();
  core::log::debug("exporter", "open file limit", {{"soft", std::to_string(nofile)}});
  // Only the capabilities this configuration needs, and no new privileges ever: given up here,
  // while this is the only thread (capabilities are per thread; every thread started later
  // inherits what this one holds). exporter/privileges.h.
  // lldpd's socket is its group's: join that group while CAP_SETGID is still held.
  if (!r.config.topology.lldpd_socket.empty()) {
    std::string why;
    std::string sock = core::HostFs(r.config.host.rootfs).path(r.config.topology.lldpd_socket);
    if (auto gid = joinSocketGroup(sock, &why))
      core::log::info("exporter", "joined the group of lldpd's socket",
                      {{"socket", sock}, {"gid", std::to_string(*gid)}});
    else if (!why.empty())
      core::log::debug("exporter", "cannot join the group of lldpd's socket",
                       {{"socket", sock}, {"error", why}});
  }
  PrivilegeReport priv = dropPrivileges(neededCapabilities(r.config));
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
    return s.empty() ? std::string("none") : s;
  };
  core::log::info("exporter", "privileges",
                  {{"capabilities", join(priv.kept)},
                   {"dropped", join(priv.dropped)},
                   {"no_new_privs", priv.no_new_privs ? "true" : "false"}});
  if (!priv.error.empty())
    core::log::warn("exporter", "could not give up every privilege", {{"error", priv.error}});
  // Signals are taken synchronously by sigwait, so block them before any thread starts.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);

  Daemon daemon(flags, std::move(r.config));
  if (auto st = daemon.start(); !st) {
    core::log::error("exporter", "cannot start", {{"error", st.message()}});
    return 1;
  }
  int rc = serveUntilSignalled(daemon);
  core::log::info("exporter", "stopped");
  std::fflush(nullptr);
  std::_Exit(rc);
}

}  // namespace fabricwatch::exporter
