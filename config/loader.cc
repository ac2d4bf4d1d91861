#include "config/loader.h"

#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <optional>
#include <sstream>

#include "config/duration.h"
#include "config/fabric_providers.h"
#include "config/toml_ascii.h"
#include "core/host_fs.h"

namespace fabricwatch::config {
namespace {

// What one key accepts. A setter returns an error message, or nullopt when the value is good.
// `wild` is the segment matched by '*' in the key's pattern (a source name).
using Setter =
    std::function<std::optional<std::string>(Config&, const toml::node&, const std::string& wild)>;

struct Key {
  std::string pattern;  // dotted; '*' matches one segment
  Setter set;
};

std::string typeName(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table:
      return "table";
    case toml::node_type::array:
      return "array";
    case toml::node_type::string:
      return "string";
    case toml::node_type::integer:
      return "integer";
    case toml::node_type::floating_point:
      return "float";
    case toml::node_type::boolean:
      return "boolean";
    default:
      return "date/time";
  }
}

Setter stringKey(
    std::function<std::optional<std::string>(Config&, const std::string&, const std::string&)>
        apply) {
  return [apply](Config& c, const toml::node& n,
                 const std::string& wild) -> std::optional<std::string> {
    auto v = n.value<std::string>();
    if (!n.is_string() || !v) return "expected a string, got " + typeName(n);
    return apply(c, *v, wild);
  };
}

Setter intKey(int64_t lo, int64_t hi, std::function<void(Config&, int64_t)> apply) {
  return [=](Config& c, const toml::node& n, const std::string&) -> std::optional<std::string> {
    if (!n.is_integer()) return "expected an integer, got " + typeName(n);
    int64_t v = *n.value<int64_t>();
    if (v < lo || v > hi) {
      return "value " + std::to_string(v) + " out of range [" + std::to_string(lo) + ", " +
             std::to_string(hi) + "]";
    }
    apply(c, v);
    return std::nullopt;
  };
}

Setter doubleKey(double lo, double hi, std::function<void(Config&, double)> apply) {
  return [=](Config& c, const toml::node& n, const std::string&) -> std::optional<std::string> {
    if (!n.is_number()) return "expected a number, got " + typeName(n);
    double v = *n.value<double>();
    if (v < lo || v > hi) {
      std::ostringstream msg;
      msg << "value " << v << " out of range [" << lo << ", " << hi << "]";
      return msg.str();
    }
    apply(c, v);
    return std::nullopt;
  };
}

Setter boolKey(std::function<void(Config&, bool, const std::string&)> apply) {
  return
      [=](Config& c, const toml::node& n, const std::string& wild) -> std::optional<std::string> {
        if (!n.is_boolean()) return "expected true or false, got " + typeName(n);
        apply(c, *n.value<bool>(), wild);
        return std::nullopt;
      };
}

Setter durationKey(Duration lo, Duration hi,
                   std::function<void(Config&, Duration, const std::string&)> apply) {
  return stringKey(
      [=](Config& c, const std::string& s, const std::string& wild) -> std::optional<std::string> {
        auto d = parseDuration(s);
        if (!d)
          return "bad duration \"" + s +
                 "\": use a number with a unit (ms, s, m, h, d), e.g. \"30s\" or \"1m30s\"";
        if (*d < lo || *d > hi) {
          return "duration \"" + s + "\" out of range [" + formatDuration(lo) + ", " +
                 formatDuration(hi) + "]";
        }
        apply(c, *d, wild);
        return std::nullopt;
      });
}

Setter stringListKey(std::function<std::optional<std::string>(const std::string&)> check,
                     std::function<void(Config&, std::vector<std::string>)> apply) {
  return [=](Config& c, const toml::node& n, const std::string&) -> std::optional<std::string> {
    const toml::array* arr = n.as_array();
    if (!arr) return "expected an array of strings, got " + typeName(n);
    std::vector<std::string> out;
    for (const auto& item : *arr) {
      auto v = item.value<std::string>();
      if (!item.is_string() || !v) return "expected an array of strings, found " + typeName(item);
      if (auto err = check(*v)) return err;
      out.push_back(*v);
    }
    apply(c, std::move(out));
    return std::nullopt;
  };
}

// extra_metrics under `owner` (the table's path, "collect.sources.*" with the name filled in).
Setter extraMetricsKey(std::string owner) {
  return [owner](Config& c, const toml::node& n,
                 const std::string& wild) -> std::optional<std::string> {
    const toml::array* arr = n.as_array();
    if (!arr) return "expected an array of strings, got " + typeName(n);
    std::vector<std::string> out;
    for (const auto& item : *arr) {
      auto v = item.value<std::string>();
      if (!item.is_string() || !v) return "expected an array of strings, found " + typeName(item);
      std::string error;
      if (*v != "*" && !core::parseSelector(*v, &error)) return error;
      out.push_back(*v);
    }
    std::string key = owner;
    if (auto star = key.find('*'); star != std::string::npos) key.replace(star, 1, wild);
    if (out.empty())
      c.metrics.extra.erase(key);
    else
      c.metrics.extra[key] = std::move(out);
    return std::nullopt;
  };
}

// "256MiB", "1GiB", "4096" -> bytes; nullopt when malformed.
std::optional<uint64_t> parseByteSize(const std::string& s) {
  size_t n = 0;
  while (n < s.size() && std::isdigit(static_cast<unsigned char>(s[n]))) ++n;
  if (n == 0 || n > 12) return std::nullopt;
  uint64_t v = std::stoull(s.substr(0, n));
  static const std::map<std::string, uint64_t> kUnits = {
      {"", 1},      {"B", 1},        {"KiB", 1ull << 10}, {"MiB", 1ull << 20}, {"GiB", 1ull << 30},
      {"KB", 1000}, {"MB", 1000000}, {"GB", 1000000000}};
  auto it = kUnits.find(s.substr(n));
  if (it == kUnits.end()) return std::nullopt;
  return v * it->second;
}

Setter byteSizeKey(uint64_t lo, uint64_t hi, std::function<void(Config&, uint64_t)> apply) {
  return stringKey(
      [=](Config& c, const std::string& s, const std::string&) -> std::optional<std::string> {
        auto b = parseByteSize(s);
        if (!b || *b < lo || *b > hi)
          return "size \"" + s + "\" must be " + std::to_string(lo) + " bytes to " +
                 std::to_string(hi >> 20) + " MiB, written as e.g. \"64B\", \"4KiB\" or \"1MiB\"";
        apply(c, *b);
        return std::nullopt;
      });
}

}  // namespace

std::optional<std::string> checkListenAddress(const std::string& s) {
  auto colon = s.rfind(':');
  if (colon == std::string::npos) return "listen address \"" + s + "\" must be HOST:PORT or :PORT";
  std::string port = s.substr(colon + 1);
  // At most 5 digits before converting (std::stol throws past its range), as the listener
  // (http/http_socket.cc) and the peer address parser read a port.
  if (port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string::npos || std::stol(port) > 65535) {
    return "listen address \"" + s + "\" has no valid port (0-65535)";
  }
  return std::nullopt;
}

std::optional<std::string> checkPeerAddress(const std::string& s) {
  auto colon = s.rfind(':');
  std::string host = colon == std::string::npos ? "" : s.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  else if (host.find(':') != std::string::npos)
    host.clear();  // a bare IPv6 address needs brackets
  if (host.empty() || checkListenAddress(s))
    return "peer \"" + s + "\" must be HOST:PORT (an IPv6 address in brackets)";
  return std::nullopt;
}

std::optional<std::string> checkPeerConfig(const Config& c) {
  if (c.probe.meshEnabled() && c.peer.secret_file.empty())
    return "the peer mesh is configured (probe.peers, probe.dns_name or probe.peers_file) but "
           "peer.secret_file is not set: the peer channel never runs unauthenticated";
  return std::nullopt;
}

namespace {

const std::vector<Key>& schema() {
  using std::chrono::hours;
  using std::chrono::milliseconds;
  static const std::vector<Key> keys = {
      {"web.listen_address", stringKey([](Config& c, const std::string& v, const std::string&) {
         auto err = checkListenAddress(v);
         if (!err) c.web.listen_address = v;
         return err;
       })},
      {"web.threads",
       intKey(1, 64, [](Config& c, int64_t v) { c.web.threads = static_cast<int>(v); })},
      {"web.max_request_bytes",
       intKey(1024, 1 << 20,
              [](Config& c, int64_t v) { c.web.max_request_bytes = static_cast<int>(v); })},
      {"web.request_timeout",
       durationKey(milliseconds(100), milliseconds(600000),
                   [](Config& c, Duration d, const std::string&) { c.web.request_timeout = d; })},
      {"web.idle_timeout",
       durationKey(milliseconds(100), hours(1),
                   [](Config& c, Duration d, const std::string&) { c.web.idle_timeout = d; })},
      {"web.max_connections",
       intKey(1, 16384, [](Config& c, int64_t v) { c.web.max_connections = static_cast<int>(v); })},
      {"web.max_connections_per_address", intKey(1, 16384,
                                                 [](Config& c, int64_t v) {
                                                   c.web.max_connections_per_address =
                                                       static_cast<int>(v);
                                                 })},
      {"web.auth_exempt_health",
       boolKey([](Config& c, bool v, const std::string&) { c.web.auth_exempt_health = v; })},
      {"log.level", stringKey([](Config& c, const std::string& v,
                                 const std::string&) -> std::optional<std::string> {
         auto l = core::log::parseLevel(v);
         if (!l) return "unknown log level \"" + v + "\": use debug, info, warn or error";
         c.log.level = *l;
         return std::nullopt;
       })},
      {"log.format", stringKey([](Config& c, const std::string& v,
                                  const std::string&) -> std::optional<std::string> {
         auto f = core::log::parseFormat(v);
         if (!f) return "unknown log format \"" + v + "\": use logfmt or json";
         c.log.format = *f;
         return std::nullopt;
       })},
      {"host.rootfs", stringKey([](Config& c, const std::string& v,
                                   const std::string&) -> std::optional<std::string> {
         if (v.empty() || v[0] != '/') return "rootfs \"" + v + "\" must be an absolute path";
         c.host.rootfs = v;
         return std::nullopt;
       })},
      {"collect.interval",
       durationKey(milliseconds(100), hours(24),
                   [](Config& c, Duration d, const std::string&) { c.collect.interval = d; })},
      {"collect.timeout",
       durationKey(milliseconds(10), hours(1),
                   [](Config& c, Duration d, const std::string&) { c.collect.timeout = d; })},
      {"collect.jitter", doubleKey(0.0, 0.5, [](Config& c, double v) { c.collect.jitter = v; })},
      {"collect.extra_metrics", extraMetricsKey("collect")},
      {"collect.sources.*.extra_metrics", extraMetricsKey("collect.sources.*")},
      {"collect.sources.*.enabled", boolKey([](Config& c, bool v, const std::string& name) {
         c.collect.sources[name].enabled = v;
       })},
      {"collect.sources.*.interval",
       durationKey(milliseconds(100), hours(24),
                   [](Config& c, Duration d, const std::string& name) {
                     c.collect.sources[name].interval = d;
                   })},
      {"collect.sources.*.timeout", durationKey(milliseconds(10), hours(1),
                                                [](Config& c, Duration d, const std::string& name) {
                                                  c.collect.sources[name].timeout = d;
                                                })},
      {"peer.node_name", stringKey([](Config& c, const std::string& v,
                                      const std::string&) -> std::optional<std::string> {
         if (v.size() > 253) return "node name longer than 253 characters";
         c.peer.node_name = v;
         return std::nullopt;
       })},
      {"peer.listen_address", stringKey([](Config& c, const std::string& v, const std::string&) {
         auto err = checkListenAddress(v);
         if (!err) c.peer.listen_address = v;
         return err;
       })},
      {"peer.secret_file", stringKey([](Config& c, const std::string& v, const std::string&) {
         c.peer.secret_file = v;
         return std::optional<std::string>();
       })},
      {"peer.max_connections",
       intKey(1, 4096, [](Config& c, int64_t v) { c.peer.max_connections = static_cast<int>(v); })},
      {"peer.max_connections_per_address", intKey(1, 4096,
                                                  [](Config& c, int64_t v) {
                                                    c.peer.max_connections_per_address =
                                                        static_cast<int>(v);
                                                  })},
      {"peer.frame_timeout",
       durationKey(milliseconds(10), milliseconds(60000),
                   [](Config& c, Duration d, const std::string&) { c.peer.frame_timeout = d; })},
      {"peer.idle_timeout",
       durationKey(milliseconds(100), milliseconds(600000),
                   [](Config& c, Duration d, const std::string&) { c.peer.idle_timeout = d; })},
      {"peer.max_clock_skew",
       durationKey(milliseconds(1000), hours(1),
                   [](Config& c, Duration d, const std::string&) { c.peer.max_clock_skew = d; })},
      {"probe.interval",
       durationKey(milliseconds(100), hours(1),
                   [](Config& c, Duration d, const std::string&) { c.probe.interval = d; })},
      {"probe.peers_per_round",
       intKey(1, 1024,
              [](Config& c, int64_t v) { c.probe.peers_per_round = static_cast<int>(v); })},
      {"probe.peers",
       stringListKey(checkPeerAddress,
                     [](Config& c, std::vector<std::string> v) { c.probe.peers = std::move(v); })},
      {"probe.dns_name", stringKey([](Config& c, const std::string& v, const std::string&) {
         c.probe.dns_name = v;
         return std::optional<std::string>();
       })},
      {"probe.dns_port",
       intKey(0, 65535, [](Config& c, int64_t v) { c.probe.dns_port = static_cast<int>(v); })},
      {"probe.peers_file", stringKey([](Config& c, const std::string& v, const std::string&) {
         c.probe.peers_file = v;
         return std::optional<std::string>();
       })},
      {"probe.grace_period",
       durationKey(milliseconds(0), hours(24),
                   [](Config& c, Duration d, const std::string&) { c.probe.grace_period = d; })},
      {"probe.topology_label", stringKey([](Config& c, const std::string& v, const std::string&) {
         c.probe.topology_label = v;
         return std::optional<std::string>();
       })},
      {"probe.topology_group", stringKey([](Config& c, const std::string& v, const std::string&) {
         c.probe.topology_group = v;
         return std::optional<std::string>();
       })},
      {"probe.workers",
       intKey(1, 64, [](Config& c, int64_t v) { c.probe.workers = static_cast<int>(v); })},
      {"probes.nccl.local",
       boolKey([](Config& c, bool v, const std::string&) { c.probes.nccl.local = v; })},
      {"probes.nccl.peers",
       boolKey([](Config& c, bool v, const std::string&) { c.probes.nccl.peers = v; })},
      {"probes.nccl.interval",
       durationKey(milliseconds(1000), hours(24 * 7),
                   [](Config& c, Duration d, const std::string&) { c.probes.nccl.interval = d; })},
      {"probes.nccl.timeout",
       durationKey(milliseconds(100), hours(1),
                   [](Config& c, Duration d, const std::string&) { c.probes.nccl.timeout = d; })},
      {"probes.nccl.run_at_start",
       boolKey([](Config& c, bool v, const std::string&) { c.probes.nccl.run_at_start = v; })},
      {"probes.nccl.operation", stringKey([](Config& c, const std::string& v,
                                             const std::string&) -> std::optional<std::string> {
         if (v != "all_reduce" && v != "send_recv")
           return "operation \"" + v + "\" must be all_reduce or send_recv";
         c.probes.nccl.operation = v;
         return std::nullopt;
       })},
      {"probes.nccl.device",
       intKey(-1, 1023, [](Config& c, int64_t v) { c.probes.nccl.device = static_cast<int>(v); })},
      {"probes.nccl.sizes", stringListKey(
                                [](const std::string& v) -> std::optional<std::string> {
                                  auto b = parseByteSize(v);
                                  if (!b || *b < 4 || *b > (uint64_t{16} << 30))
                                    return "size \"" + v +
                                           "\" must be 4B to 16GiB, e.g. \"1MiB\" or \"256MiB\"";
                                  return std::nullopt;
                                },
                                [](Config& c, std::vector<std::string> v) {
                                  c.probes.nccl.sizes.clear();
                                  for (const auto& s : v)
                                    c.probes.nccl.sizes.push_back(*parseByteSize(s));
                                })},
      {"probes.nccl.warmup",
       intKey(0, 1000, [](Config& c, int64_t v) { c.probes.nccl.warmup = static_cast<int>(v); })},
      {"probes.nccl.iterations",
       intKey(1, 10000,
              [](Config& c, int64_t v) { c.probes.nccl.iterations = static_cast<int>(v); })},
      {"probes.nccl.nccl_library",
       stringKey([](Config& c, const std::string& v, const std::string&) {
         c.probes.nccl.nccl_library = v;
         return std::optional<std::string>();
       })},
      {"probes.nccl.cudart_library",
       stringKey([](Config& c, const std::string& v, const std::string&) {
         c.probes.nccl.cudart_library = v;
         return std::optional<std::string>();
       })},
      {"probes.nccl.skip_when_busy",
       boolKey([](Config& c, bool v, const std::string&) { c.probes.nccl.skip_when_busy = v; })},
      {"probes.nccl.ignore_processes",
       stringListKey([](const std::string&) { return std::optional<std::string>(); },
                     [](Config& c, std::vector<std::string> v) {
                       c.probes.nccl.ignore_processes = std::move(v);
                     })},
      {"probes.nccl.log_dir", stringKey([](Config& c, const std::string& v,
                                           const std::string&) -> std::optional<std::string> {
         if (!v.empty() && v[0] != '/') return "log_dir \"" + v + "\" must be an absolute path";
         c.probes.nccl.log_dir = v;
         return std::nullopt;
       })},
      {"probes.nccl.env.*", stringKey([](Config& c, const std::string& v,
                                         const std::string& name) -> std::optional<std::string> {
         bool ident = !name.empty() && std::all_of(name.begin(), name.end(), [](char ch) {
           return std::isupper(static_cast<unsigned char>(ch)) ||
                  std::isdigit(static_cast<unsigned char>(ch)) || ch == '_';
         });
         if (!ident)
           return "environment variable \"" + name + "\" must be upper case (NCCL_IB_HCA)";
         if (name.rfind("NCCL_DEBUG", 0) == 0)
           return name + " is set by the probe itself (its log is what it reads)";
         c.probes.nccl.env[name] = v;
         return std::nullopt;
       })},
      {"probes.*.enabled", boolKey([](Config& c, bool v, const std::string& kind) {
         c.probes.kinds[kind].enabled = v;
       })},
      {"probes.*.extra_metrics", extraMetricsKey("probes.*")},
      {"policy.extra_metrics", extraMetricsKey("policy")},
      {"probes.tcp.samples",
       intKey(1, 100, [](Config& c, int64_t v) { c.probes.tcp.samples = static_cast<int>(v); })},
      {"probes.tcp.connect_timeout", durationKey(milliseconds(10), milliseconds(60000),
                                                 [](Config& c, Duration d, const std::string&) {
                                                   c.probes.tcp.connect_timeout = d;
                                                 })},
      {"probes.tcp.echo_timeout", durationKey(milliseconds(10), milliseconds(60000),
                                              [](Config& c, Duration d, const std::string&) {
                                                c.probes.tcp.echo_timeout = d;
                                              })},
      {"probes.dns.timeout",
       durationKey(milliseconds(10), milliseconds(60000),
                   [](Config& c, Duration d, const std::string&) { c.probes.dns.timeout = d; })},
      {"probes.fabric.provider", stringKey([](Config& c, const std::string& v,
                                              const std::string&) -> std::optional<std::string> {
         if (auto err = checkProviderName(v)) return err;
         c.probes.fabric.provider = v;
         c.probes.fabric.provider_origin = Config::Probes::Fabric::Origin::kConfig;
         return std::nullopt;
       })},
      {"probes.fabric.group_providers", stringListKey(
                                            [](const std::string& v) -> std::optional<std::string> {
                                              std::string why;
                                              if (!parseGroupProvider(v, &why)) return why;
                                              return std::nullopt;
                                            },
                                            [](Config& c, std::vector<std::string> v) {
                                              c.probes.fabric.group_providers = std::move(v);
                                            })},
      {"probes.fabric.domain", stringKey([](Config& c, const std::string& v, const std::string&) {
         c.probes.fabric.domain = v;
         return std::optional<std::string>();
       })},
      {"probes.fabric.latency_size",
       byteSizeKey(16, uint64_t{64} << 20,
                   [](Config& c, uint64_t v) { c.probes.fabric.latency_size = v; })},
      {"probes.fabric.warmup",
       intKey(0, 10000,
              [](Config& c, int64_t v) { c.probes.fabric.warmup = static_cast<int>(v); })},
      {"probes.fabric.iterations",
       intKey(1, 90000,
              [](Config& c, int64_t v) { c.probes.fabric.iterations = static_cast<int>(v); })},
      {"probes.fabric.bandwidth_size",
       byteSizeKey(16, uint64_t{64} << 20,
                   [](Config& c, uint64_t v) { c.probes.fabric.bandwidth_size = v; })},
      {"probes.fabric.bandwidth_window", intKey(1, 256,
                                                [](Config& c, int64_t v) {
                                                  c.probes.fabric.bandwidth_window =
                                                      static_cast<int>(v);
                                                })},
      {"probes.fabric.bandwidth_bytes",
       byteSizeKey(16, uint64_t{4} << 30,
                   [](Config& c, uint64_t v) { c.probes.fabric.bandwidth_bytes = v; })},
      {"probes.fabric.bandwidth_round_bytes",
       byteSizeKey(16, uint64_t{64} << 30,
                   [](Config& c, uint64_t v) { c.probes.fabric.bandwidth_round_bytes = v; })},
      {"probes.fabric.bandwidth_interval",
       durationKey(milliseconds(0), hours(24 * 7),
                   [](Config& c, Duration d, const std::string&) {
                     c.probes.fabric.bandwidth_interval = d;
                   })},
      {"probes.fabric.timeout",
       durationKey(milliseconds(10), milliseconds(60000),
                   [](Config& c, Duration d, const std::string&) { c.probes.fabric.timeout = d; })},
      {"probes.fabric.register_buffers", boolKey([](Config& c, bool v, const std::string&) {
         c.probes.fabric.register_buffers = v;
       })},
      {"probes.fabric.hmem",
       boolKey([](Config& c, bool v, const std::string&) { c.probes.fabric.hmem = v; })},
      {"probes.fabric.cudart_library",
       stringKey([](Config& c, const std::string& v, const std::string&) {
         c.probes.fabric.cudart_library = v;
         return std::optional<std::string>();
       })},
      {"policy.paths",
       stringListKey(
           [](const std::string& p) -> std::optional<std::string> {
             if (p.empty()) return "policy paths must not be empty strings";
             return std::nullopt;
           },
           [](Config& c, std::vector<std::string> v) { c.policy.paths = std::move(v); })},
      {"policy.shipped",
       boolKey([](Config& c, bool v, const std::string&) { c.policy.shipped = v; })},
      {"policy.resource_group", stringKey([](Config& c, const std::string& v,
                                             const std::string&) -> std::optional<std::string> {
         if (v.find_first_of(" \t\n\"") != std::string::npos)
           return "resource group \"" + v + "\" must not contain spaces or quotes";
         c.policy.resource_group = v;
         return std::nullopt;
       })},
      {"policy.resource_group_file",
       stringKey(
           [](Config& c, const std::string& v, const std::string&) -> std::optional<std::string> {
             if (!v.empty() && v[0] != '/')
               return "resource_group_file \"" + v + "\" must be an absolute path";
             c.policy.resource_group_file = v;
             return std::nullopt;
           })},
      {"policy.reload_interval", durationKey(milliseconds(0), hours(24),
                                             [](Config& c, Duration d, const std::string&) {
                                               c.policy.reload_interval = d;
                                             })},
      {"policy.max_workload_subjects",
       intKey(1, 1000,
              [](Config& c, int64_t v) { c.policy.max_workload_subjects = static_cast<int>(v); })},
  };
  return keys;
}

// Matches a dotted path against a pattern; on success stores the '*' segment in wild.
bool matches(const std::string& pattern, const std::string& path, std::string& wild,
             bool prefix_only) {
  size_t pi = 0, si = 0;
  while (si < path.size()) {
    if (pi >= pattern.size()) return false;
    size_t pe = pattern.find('.', pi);
    size_t se = path.find('.', si);
    std::string pseg = pattern.substr(pi, pe == std::string::npos ? std::string::npos : pe - pi);
    std::string sseg = path.substr(si, se == std::string::npos ? std::string::npos : se - si);
    if (pseg == "*")
      wild = sseg;
    else if (pseg != sseg)
      return false;
    pi = pe == std::string::npos ? pattern.size() : pe + 1;
    si = se == std::string::npos ? path.size() : se + 1;
  }
  return prefix_only ? pi < pattern.size() : pi >= pattern.size();
}

class Walker {
 public:
  Walker(std::string_view text, std::string_view file, const LoadOptions& opts, LoadResult& out)
      : text_(text), file_(file), opts_(opts), out_(out) {}

  void walk(const toml::table& table, const std::string& prefix) {
    for (auto&& [key, node] : table) {
      std::string path =
          prefix.empty() ? std::string(key.str()) : prefix + "." + std::string(key.str());
      const auto& pos = key.source().begin;
      if (node.is_table()) {
        std::string wild;
        bool known = false;
        for (const auto& k : schema())
          known = known || matches(k.pattern, path, wild, /*prefix_only=*/true);
        if (!known) {
          report(pos, "unknown table [" + path + "]" +
                          (path.rfind("probe.nccl", 0) == 0
                               ? ": the NCCL probe is configured under [probes.nccl]"
                               : ""));
          continue;
        }
        if (!checkName(path, "collect.sources.", "source", opts_.known_sources, pos) ||
            !checkName(path, "probes.", "probe kind", opts_.known_probe_kinds, pos))
          continue;
        walk(*node.as_table(), path);
        continue;
      }
      const Key* match = nullptr;
      std::string wild;
      for (const auto& k : schema()) {
        if (matches(k.pattern, path, wild, false)) {
          match = &k;
          break;
        }
      }
      if (!match) {
        report(pos, "unknown key \"" + path + "\"");
        continue;
      }
      if (auto err = match->set(out_.config, node, wild)) report(node.source().begin, *err);
      positions_[path] = node.source().begin;
    }
  }

  // Where a key's value was set in the file; nullopt for a key the file does not set.
  std::optional<toml::source_position> position(const std::string& path) const {
    auto it = positions_.find(path);
    if (it == positions_.end()) return std::nullopt;
    return it->second;
  }

  void report(const toml::source_position& pos, std::string msg) const {
    core::Diagnostic d;
    d.file = std::string(file_);
    d.line = static_cast<int>(pos.line);
    d.column = static_cast<int>(pos.column);
    d.message = std::move(msg);
    d.snippet = core::lineOf(text_, d.line);
    out_.problems.push_back(std::move(d));
  }

 private:
  // A table under `prefix` names a source or a probe kind: one the binary knows.
  bool checkName(const std::string& path, const std::string& prefix, const std::string& what,
                 const std::vector<std::string>& known, const toml::source_position& pos) {
    if (known.empty() || path.rfind(prefix, 0) != 0) return true;
    std::string name = path.substr(prefix.size());
    if (name.find('.') != std::string::npos) return true;
    for (const auto& s : known)
      if (s == name) return true;
    std::string list;
    for (const auto& s : known) list += (list.empty() ? "" : ", ") + s;
    report(pos, "unknown " + what + " \"" + name + "\" (known: " + list + ")");
    return false;
  }

  std::string_view text_;
  std::string_view file_;
  const LoadOptions& opts_;
  LoadResult& out_;
  std::map<std::string, toml::source_position> positions_;
};

// Cross-key checks that no single key can make. Each problem points at the first of the keys
// involved that the file sets: the one to change.
// Each extra_metrics selector names an optional family of its table's renderer.
void validateExtraMetrics(const Config& c, const LoadOptions& opts,
                          const std::function<void(const std::string&, std::string)>& add) {
  if (opts.optional_metrics.empty()) return;
  for (const auto& [owner, selectors] : c.metrics.extra) {
    auto it = opts.optional_metrics.find(owner);
    const std::vector<core::OptionalMetric> none;
    const auto& declared = it == opts.optional_metrics.end() ? none : it->second;
    std::string known;
    for (const auto& d : declared) known += (known.empty() ? "" : ", ") + d.family;
    for (const auto& text : selectors) {
      if (text == "*") continue;
      auto s = core::parseSelector(text, nullptr);
      const core::OptionalMetric* match = nullptr;
      for (const auto& d : declared)
        if (d.family == s->family) match = &d;
      std::string key = owner + ".extra_metrics";
      if (!match) {
        add(key, "[" + owner + "] has no optional family " + s->family +
                     (known.empty() ? " (it has none)" : " (optional: " + known + ")"));
      } else if (!s->label.empty() && s->label != match->label) {
        add(key, s->family + " is selected " +
                     (match->label.empty() ? std::string("as a whole (no {label=...})")
                                           : "by its label " + match->label + ", not " + s->label));
      }
    }
  }
}

void validate(LoadResult& r, std::string_view file, const Walker& w, const LoadOptions& opts) {
  const auto& c = r.config.collect;
  auto add = [&](std::initializer_list<std::string> keys, std::string msg) {
    for (const auto& k : keys) {
      if (auto pos = w.position(k)) return w.report(*pos, std::move(msg));
    }
    r.problems.push_back(core::Diagnostic{std::string(file), 0, 0, std::move(msg), ""});
  };
  if (c.timeout > c.interval)
    add({"collect.timeout", "collect.interval"}, "collect.timeout (" + formatDuration(c.timeout) +
                                                     ") must not exceed collect.interval (" +
                                                     formatDuration(c.interval) + ")");
  for (const auto& [name, sc] : c.sources) {
    // A source that sets neither inherits both, and the check above covers it.
    if (!sc.interval.count() && !sc.timeout.count()) continue;
    auto interval = sc.interval.count() ? sc.interval : c.interval;
    auto timeout = sc.timeout.count() ? sc.timeout : c.timeout;
    std::string key = "collect.sources." + name;
    if (timeout > interval) {
      add({key + ".timeout", key + ".interval", "collect.timeout", "collect.interval"},
          key + ": timeout (" + formatDuration(timeout) + ") must not exceed its interval (" +
              formatDuration(interval) + ")");
    }
  }
  const auto& np = r.config.probes.nccl;
  if (np.sizes.empty() || np.sizes.size() > 16)
    add({"probes.nccl.sizes"},
        "probes.nccl.sizes must list 1 to 16 sizes, not " + std::to_string(np.sizes.size()));
  // The local run is a source: the scheduler needs its deadline inside its interval. A peer
  // run longer than the interval only delays the next one (the round that runs it is late).
  if (np.local && np.timeout >= np.interval)
    add({"probes.nccl.timeout", "probes.nccl.interval"},
        "probes.nccl.timeout (" + formatDuration(np.timeout) +
            ") must be shorter than probes.nccl.interval (" + formatDuration(np.interval) + ")");
  const auto& f = r.config.probes.fabric;
  uint64_t window_bytes = f.bandwidth_size * static_cast<uint64_t>(f.bandwidth_window);
  if (f.bandwidth_bytes < 2 * window_bytes)
    add({"probes.fabric.bandwidth_bytes", "probes.fabric.bandwidth_size",
         "probes.fabric.bandwidth_window"},
        "probes.fabric.bandwidth_bytes (" + std::to_string(f.bandwidth_bytes) +
            ") must hold at least two windows of bandwidth_window x bandwidth_size (" +
            std::to_string(window_bytes) + " bytes each): one to warm up, one to time");
  if (f.bandwidth_round_bytes < f.bandwidth_bytes)
    add({"probes.fabric.bandwidth_round_bytes", "probes.fabric.bandwidth_bytes"},
        "probes.fabric.bandwidth_round_bytes must not be less than probes.fabric.bandwidth_bytes");
  if (auto err = checkPeerConfig(r.config))
    add({"probe.peers", "probe.dns_name", "probe.peers_file", "peer.secret_file"}, *err);
  validateExtraMetrics(
      r.config, opts, [&](const std::string& key, std::string msg) { add({key}, std::move(msg)); });
}

}  // namespace

std::vector<std::string> knownKeys() {
  std::vector<std::string> out;
  for (const auto& k : schema()) out.push_back(k.pattern);
  return out;
}

SourceConfig Config::sourceConfig(std::string_view name) const {
  SourceConfig out;
  auto it = collect.sources.find(name);
  if (it != collect.sources.end()) out = it->second;
  if (out.interval.count() == 0) out.interval = collect.interval;
  if (out.timeout.count() == 0) out.timeout = collect.timeout;
  return out;
}

namespace {

// Parses text onto `base`, key by key: a key the text does not set keeps its value in base,
// inside tables too ([collect.sources.kernel] enabled = false keeps the kernel's interval).
LoadResult loadOnto(const Config& base, std::string_view text, std::string_view file,
                    const LoadOptions& opts) {
  LoadResult r;
  r.config = base;
  if (auto d = nonAsciiOutsideStrings(text, file)) {
    r.problems.push_back(std::move(*d));
    return r;
  }
  toml::table table;
  try {
    table = toml::parse(text, file);
  } catch (const toml::parse_error& e) {
    core::Diagnostic d;
    d.file = std::string(file);
    d.line = static_cast<int>(e.source().begin.line);
    d.column = static_cast<int>(e.source().begin.column);
    d.message = std::string(e.description());
    d.snippet = core::lineOf(text, d.line);
    r.problems.push_back(std::move(d));
    return r;
  }
  Walker walker(text, file, opts, r);
  walker.walk(table, "");
  if (r.ok()) validate(r, file, walker, opts);
  return r;
}

constexpr std::string_view kEmbeddedName = "<embedded default>";

// The embedded default, parsed once: what every file overlays.
const Config& embeddedDefaultConfig() {
  static const Config c = loadOnto(Config{}, embeddedDefaultToml(), kEmbeddedName, {}).config;
  return c;
}

}  // namespace

LoadResult loadConfig(std::string_view text, std::string_view file, const LoadOptions& opts) {
  return loadOnto(embeddedDefaultConfig(), text, file, opts);
}

LoadResult loadConfigFile(const std::string& path, const LoadOptions& opts) {
  // Never blocks (a FIFO is refused) and never reads more than a configuration can need.
  auto text = core::readRegularFile(path, kMaxConfigBytes);
  if (!text) {
    LoadResult r;
    r.problems.push_back(core::Diagnostic{
        path, 0, 0, "cannot read configuration file: " + text.error().message, ""});
    return r;
  }
  return loadConfig(*text, path, opts);
}

LoadResult loadEmbeddedDefault(const LoadOptions& opts) {
  return loadOnto(Config{}, embeddedDefaultToml(), kEmbeddedName, opts);
}

}  // namespace fabricwatch::config
