#include "config/loader.h"

#include <toml++/toml.h>

#include <functional>
#include <map>
#include <optional>

#include "config/duration.h"
#include "config/toml_ascii.h"
#include "core/host_fs.h"
#include "core/host_port.h"
#include "core/utf8.h"

namespace fabricwatch::config {
namespace {

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

// A TOML value as the key's type, or the loader's message for a value of another type.
std::optional<KeyValue> keyValue(KeyType type, const toml::node& n, std::string* why) {
  KeyValue v;
  v.type = type;
  switch (type) {
    case KeyType::kString:
      if (auto s = n.value<std::string>(); n.is_string() && s) {
        v.text = *s;
        return v;
      }
      *why = "expected a string, got " + typeName(n);
      return std::nullopt;
    case KeyType::kInteger:
      if (n.is_integer()) {
        v.integer = *n.value<int64_t>();
        return v;
      }
      *why = "expected an integer, got " + typeName(n);
      return std::nullopt;
    case KeyType::kNumber:
      if (n.is_number()) {
        v.number = *n.value<double>();
        return v;
      }
      *why = "expected a number, got " + typeName(n);
      return std::nullopt;
    case KeyType::kBoolean:
      if (n.is_boolean()) {
        v.boolean = *n.value<bool>();
        return v;
      }
      *why = "expected true or false, got " + typeName(n);
      return std::nullopt;
    case KeyType::kStringList: {
      const toml::array* arr = n.as_array();
      if (!arr) {
        *why = "expected an array of strings, got " + typeName(n);
        return std::nullopt;
      }
      for (const auto& item : *arr) {
        auto s = item.value<std::string>();
        if (!item.is_string() || !s) {
          *why = "expected an array of strings, found " + typeName(item);
          return std::nullopt;
        }
        v.list.push_back(*s);
      }
      return v;
    }
  }
  return std::nullopt;
}

class Walker {
 public:
  Walker(std::string_view text, std::string_view file, const LoadOptions& opts, LoadResult& out)
      : text_(text), file_(file), opts_(opts), schema_(schemaOf(opts)), out_(out) {}

  void walk(const toml::table& table, const std::string& prefix) {
    for (auto&& [key, node] : table) {
      std::string path =
          prefix.empty() ? std::string(key.str()) : prefix + "." + std::string(key.str());
      const auto& pos = key.source().begin;
      if (node.is_table()) {
        if (!schema_.isTable(path)) {
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
      KeyContext ctx;
      const KeyDef* def = schema_.find(path, &ctx.wild);
      if (!def) {
        report(pos, "unknown key \"" + path + "\"");
        continue;
      }
      std::string why;
      auto value = keyValue(def->type, node, &why);
      if (!value)
        report(node.source().begin, why);
      else if (auto err = def->set(out_.config, *value, ctx))
        report(node.source().begin, *err);
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
  const Schema& schema_;
  LoadResult& out_;
  std::map<std::string, toml::source_position> positions_;
};

// Each extra_metrics selector names an optional family of its table's renderer.
void validateExtraMetrics(const Config& c, const LoadOptions& opts, const ReportProblem& report) {
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
        report({key}, "[" + owner + "] has no optional family " + s->family +
                          (known.empty() ? " (it has none)" : " (optional: " + known + ")"));
      } else if (!s->label.empty() && s->label != match->label) {
        report({key},
               s->family + " is selected " +
                   (match->label.empty() ? std::string("as a whole (no {label=...})")
                                         : "by its label " + match->label + ", not " + s->label));
      }
    }
  }
}

// Every table's cross-key checks, then the selectors against what renderers declare.
void validateAll(const Config& c, const LoadOptions& opts, const ReportProblem& report) {
  for (const auto& t : schemaOf(opts).tables())
    if (t.validate) t.validate(c, report);
  validateExtraMetrics(c, opts, report);
}

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
  if (r.ok()) {
    // Each problem points at the first of the keys involved that the file sets: the one to
    // change.
    validateAll(r.config, opts, [&](std::initializer_list<std::string> keys, std::string msg) {
      for (const auto& k : keys)
        if (auto pos = walker.position(k)) return walker.report(*pos, std::move(msg));
      r.problems.push_back(core::Diagnostic{std::string(file), 0, 0, std::move(msg), ""});
    });
  }
  return r;
}

constexpr std::string_view kEmbeddedName = "<embedded default>";

}  // namespace

const Schema& schemaOf(const LoadOptions& opts) {
  return opts.schema ? *opts.schema : *Schema::daemon();
}

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
  // The peers file's rule (core/host_port.h), quoted as it quotes: a config value may hold any
  // byte, and the message goes to a terminal and a log.
  if (!core::isPeerEndpoint(s))
    return "peer " + core::quoteForDisplay(s, 100) +
           " must be HOST:PORT (an IPv4 address, an IPv6 address in brackets or a DNS name; a "
           "port 1-65535)";
  return std::nullopt;
}

std::optional<std::string> checkPeerConfig(const Config& c) {
  if (c.probe.meshEnabled() && c.peer.secret_file.empty())
    return "the peer mesh is configured (probe.peers, probe.dns_name or probe.peers_file) but "
           "peer.secret_file is not set: the peer channel never runs unauthenticated";
  return std::nullopt;
}

SourceConfig Config::sourceConfig(std::string_view name) const {
  SourceConfig out;
  auto it = collect.sources.find(name);
  if (it != collect.sources.end()) out = it->second;
  if (out.interval.count() == 0) out.interval = collect.interval;
  if (out.timeout.count() == 0) out.timeout = collect.timeout;
  return out;
}

std::vector<std::string> knownKeys(const LoadOptions& opts) { return schemaOf(opts).keyPaths(); }

LoadResult loadConfig(std::string_view text, std::string_view file, const LoadOptions& opts) {
  // Every file overlays the embedded default, read with the same schema (a kind's table in it
  // is known only to a schema that has the kind).
  return loadOnto(loadEmbeddedDefault(opts).config, text, file, opts);
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

std::optional<std::string> setFromFlag(Config& config, const KeyDef& key, std::string text,
                                       const std::string& wild) {
  if (key.flag_transform)
    if (auto err = key.flag_transform(text)) return err;
  std::string why;
  auto value = flagValue(key.type, text, &why);
  if (!value) return why;
  return key.set(config, *value, KeyContext{wild, KeyOrigin::kFlag});
}

void revalidate(LoadResult& r, const LoadOptions& opts,
                const std::function<std::optional<std::string>(const std::string&)>& flag_of) {
  validateAll(r.config, opts, [&](std::initializer_list<std::string> keys, std::string msg) {
    std::string where = "flags";
    for (const auto& k : keys)
      if (auto f = flag_of(k)) {
        where = "flag --" + *f;
        break;
      }
    r.problems.push_back(core::Diagnostic{where, 0, 0, std::move(msg), ""});
  });
}

}  // namespace fabricwatch::config
