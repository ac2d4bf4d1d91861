// `fabricwatch diagnose --prometheus.url URL`: asks the Prometheus that evaluates the fleet
// localisation rules which node, NIC (rail) or path they name, and prints each culprit with its
// evidence and what to do. Exit codes: 0 nothing suspect, 1 a suspect, 2 a usage error or an
// answer that cannot be vouched for (Prometheus unreachable, the rules not loaded there, no
// fabricwatch series).
#include <fcntl.h>
#include <unistd.h>

#include <iostream>

#include "config/duration.h"
#include "core/utf8.h"
#include "exporter/commands.h"
#include "exporter/flags.h"
#include "fleet/diagnosis.h"

namespace fabricwatch::exporter {
namespace {

// A secret from a file (never from the command line, where `ps` shows it): at most 4 KiB, one
// line, its trailing newline dropped.
core::Result<std::string> readSecret(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return core::Error{path + ": cannot open"};
  char buf[4097];
  ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  if (n < 0) return core::Error{path + ": cannot read"};
  if (n > 4096) return core::Error{path + ": over 4096 bytes"};
  std::string s(buf, static_cast<size_t>(n));
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  if (s.find_first_of("\r\n") != std::string::npos || s.find('\0') != std::string::npos)
    return core::Error{path + ": more than one line"};
  return s;
}

}  // namespace

int runDiagnose(const Args& args) {
  FlagSet flags(
      "usage: fabricwatch diagnose --prometheus.url URL [flags]\n\n"
      "Asks a Prometheus that evaluates fabricwatch's fleet localisation rules\n"
      "(deploy/prometheus/localisation.yml) which node, NIC (rail) or path is at fault, and\n"
      "prints each culprit with its evidence and what to do.\n"
      "Exit codes: 0 nothing suspect, 1 a suspect, 2 usage error, or Prometheus unreachable,\n"
      "without the rules or without fabricwatch series.");
  flags.add("prometheus.url", "Base URL of the Prometheus HTTP API (http:// or https://).");
  flags.add("prometheus.cluster", "Only this cluster (the `cluster` label); empty: all.");
  flags.add("prometheus.timeout", "Time allowed per request.", "10s");
  flags.add("prometheus.ca-file", "CA certificates to verify the server with (PEM).");
  flags.add("prometheus.cert-file", "Client certificate for mutual TLS (PEM).");
  flags.add("prometheus.key-file", "Key of the client certificate (PEM).");
  flags.addBool("prometheus.insecure-skip-verify", "Do not verify the server's certificate.");
  flags.add("prometheus.username", "Basic auth user name.");
  flags.add("prometheus.password-file", "File holding the basic auth password.");
  flags.add("prometheus.bearer-token-file", "File holding a bearer token.");
  flags.add("prometheus.require-rules",
            "Check that the Prometheus evaluates the localisation rules (false where the rules "
            "API is elsewhere, as with a separate ruler).",
            "true");
  flags.add("format", "Output format: text or json.", "text");
  flags.addBool("help", "Show this help.");
  auto usage = [&](const std::string& why) {
    std::cerr << "fabricwatch diagnose: " << why << "\n\n" << flags.help();
    return kExitUsage;
  };
  if (auto err = flags.parse(args)) return usage(*err);
  if (flags.getBool("help")) {
    std::cout << flags.help();
    return kExitOk;
  }
  if (!flags.positional().empty()) return usage("takes no arguments");
  std::string url = flags.get("prometheus.url"), format = flags.get("format");
  if (url.empty()) return usage("--prometheus.url is required");
  if (format != "text" && format != "json")
    return usage("--format must be text or json, not " + core::quoteForDisplay(format, 40));
  std::string require = flags.get("prometheus.require-rules");
  if (require != "true" && require != "false")
    return usage("--prometheus.require-rules must be true or false");
  fleet::HttpGetOptions o;
  auto timeout = config::parseDuration(flags.get("prometheus.timeout"));
  if (!timeout || timeout->count() <= 0)
    return usage("--prometheus.timeout: not a duration: " +
                 core::quoteForDisplay(flags.get("prometheus.timeout"), 40));
  o.timeout = *timeout;
  o.ca_file = flags.get("prometheus.ca-file");
  o.cert_file = flags.get("prometheus.cert-file");
  o.key_file = flags.get("prometheus.key-file");
  o.insecure_skip_verify = flags.getBool("prometheus.insecure-skip-verify");
  o.username = flags.get("prometheus.username");
  if (o.cert_file.empty() != o.key_file.empty())
    return usage("--prometheus.cert-file and --prometheus.key-file go together");
  if (auto f = flags.get("prometheus.password-file"); !f.empty()) {
    if (o.username.empty()) return usage("--prometheus.password-file needs --prometheus.username");
    auto p = readSecret(f);
    if (!p) return usage("--prometheus.password-file: " + p.error().message);
    o.password = std::move(*p);
  }
  if (auto f = flags.get("prometheus.bearer-token-file"); !f.empty()) {
    auto t = readSecret(f);
    if (!t) return usage("--prometheus.bearer-token-file: " + t.error().message);
    o.bearer_token = std::move(*t);
  }
  fleet::PrometheusApi api(url, o);
  auto d = fleet::diagnose(api, flags.get("prometheus.cluster"), require == "true");
  if (!d) {
    std::cerr << "fabricwatch diagnose: " << core::escapeForDisplay(d.error().message, 2000)
              << "\n";
    return kExitUsage;
  }
  std::cout << (format == "json" ? fleet::renderJson(*d) : fleet::renderText(*d));
  return d->suspects.empty() ? kExitOk : kExitViolations;
}

}  // namespace fabricwatch::exporter
