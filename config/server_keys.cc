// [web], [log] and [host]: the HTTP listener, logging, and the host root every read goes below.
#include <filesystem>

#include "config/keys.h"
#include "config/loader.h"

namespace fabricwatch::config {

TableDef webTable() {
  using std::chrono::hours;
  using std::chrono::milliseconds;
  using W = Config::Web;
  return TableKeys<W>("web", [](Config& c) -> W& { return c.web; })
      .string("listen_address", &W::listen_address, checkListenAddress)
      .flag("Address for /metrics and the API, HOST:PORT or :PORT.")
      .integer("threads", 1, 64, &W::threads)
      .integer("max_request_bytes", 1024, 1 << 20, &W::max_request_bytes)
      .duration("request_timeout", milliseconds(100), milliseconds(600000), &W::request_timeout)
      .duration("idle_timeout", milliseconds(100), hours(1), &W::idle_timeout)
      .integer("max_connections", 1, 16384, &W::max_connections)
      .integer("max_connections_per_address", 1, 16384, &W::max_connections_per_address)
      .boolean("auth_exempt_health", &W::auth_exempt_health)
      .flag("Answer /healthz and /readyz without basic auth (kubelet probes).")
      .build();
}

TableDef logTable() {
  using L = Config::Log;
  return TableKeys<L>("log", [](Config& c) -> L& { return c.log; })
      .custom("level", KeyType::kString,
              [](L& l, const KeyValue& v, const KeyContext&) -> std::optional<std::string> {
                auto level = core::log::parseLevel(v.text);
                if (!level)
                  return "unknown log level \"" + v.text + "\": use debug, info, warn or error";
                l.level = *level;
                return std::nullopt;
              })
      .flag("Log level: debug, info, warn or error.")
      .custom("format", KeyType::kString,
              [](L& l, const KeyValue& v, const KeyContext&) -> std::optional<std::string> {
                auto f = core::log::parseFormat(v.text);
                if (!f) return "unknown log format \"" + v.text + "\": use logfmt or json";
                l.format = *f;
                return std::nullopt;
              })
      .flag("Log format: logfmt or json.")
      .build();
}

TableDef hostTable() {
  using H = Config::Host;
  return TableKeys<H>("host", [](Config& c) -> H& { return c.host; })
      .string("rootfs", &H::rootfs,
              [](const std::string& v) -> std::optional<std::string> {
                if (v.empty() || v[0] != '/')
                  return "rootfs \"" + v + "\" must be an absolute path";
                return std::nullopt;
              })
      .flag("Host root file system: every /sys, /proc and /etc read goes below it.", "path.rootfs")
      // A relative path is taken from the working directory, as node_exporter takes its
      // --path.rootfs (the configuration file, read from elsewhere, asks for an absolute one).
      .flagTransform([](std::string& v) -> std::optional<std::string> {
        std::error_code ec;
        if (v.empty()) return "must not be empty";
        if (!std::filesystem::is_directory(v, ec)) return "\"" + v + "\" is not a directory";
        v = std::filesystem::absolute(v).lexically_normal().string();
        return std::nullopt;
      })
      .build();
}

}  // namespace fabricwatch::config
