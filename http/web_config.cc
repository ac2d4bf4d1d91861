#include "http/web_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>

#include "config/duration.h"
#include "core/yaml_fields.h"
#include "core/yaml_load.h"
#include "http/basic_auth.h"

namespace fabricwatch::http {
namespace {

struct CipherName {
  const char* go;
  const char* openssl;
  bool tls13;
};

// The suites Go's tls.CipherSuites() lists (and, from older Go, the RSA key-exchange ones
// exporter-toolkit once accepted), by their IANA names as Go spells them.
constexpr CipherName kCiphers[] = {
    {"TLS_AES_128_GCM_SHA256", "TLS_AES_128_GCM_SHA256", true},
    {"TLS_AES_256_GCM_SHA384", "TLS_AES_256_GCM_SHA384", true},
    {"TLS_CHACHA20_POLY1305_SHA256", "TLS_CHACHA20_POLY1305_SHA256", true},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA-AES128-GCM-SHA256", false},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA-AES256-GCM-SHA384", false},
    {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA-AES128-GCM-SHA256", false},
    {"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA-AES256-GCM-SHA384", false},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA-CHACHA20-POLY1305", false},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA-CHACHA20-POLY1305", false},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "ECDHE-ECDSA-AES128-SHA", false},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "ECDHE-ECDSA-AES256-SHA", false},
    {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "ECDHE-RSA-AES128-SHA", false},
    {"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", "ECDHE-RSA-AES256-SHA", false},
    {"TLS_RSA_WITH_AES_128_GCM_SHA256", "AES128-GCM-SHA256", false},
    {"TLS_RSA_WITH_AES_256_GCM_SHA384", "AES256-GCM-SHA384", false},
    {"TLS_RSA_WITH_AES_128_CBC_SHA", "AES128-SHA", false},
    {"TLS_RSA_WITH_AES_256_CBC_SHA", "AES256-SHA", false},
};

constexpr const char* kCurves[] = {"CurveP256", "CurveP384", "CurveP521", "X25519"};

// exporter-toolkit's extraHTTPHeaders: the headers a web config may set, and the values
// allowed where the set is closed.
const std::vector<std::pair<std::string, std::vector<std::string>>>& allowedHeaders() {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> kHeaders = {
      {"Strict-Transport-Security", {}},
      {"X-Content-Type-Options", {"nosniff"}},
      {"X-Frame-Options", {"deny", "sameorigin"}},
      {"X-XSS-Protection", {}},
      {"Content-Security-Policy", {}},
  };
  return kHeaders;
}

const std::vector<std::pair<std::string, int>>& tlsVersions() {
  static const std::vector<std::pair<std::string, int>> kVersions = {
      {"TLS10", 0x0301}, {"TLS11", 0x0302}, {"TLS12", 0x0303}, {"TLS13", 0x0304}};
  return kVersions;
}

class Parser {
 public:
  Parser(std::string_view text, const std::string& file, WebConfigParse& out)
      : text_(text), file_(file), out_(out) {
    dir_ = std::filesystem::path(file).parent_path().string();
  }

  void parse() {
    // The bounded loader, as for every YAML input: besides nesting and alias expansion, it
    // refuses a text that yaml-cpp 0.7's YAML::Load reads as nothing at all (a stray flow token
    // at the start), which would otherwise pass for an empty file and turn auth off.
    // A web configuration is small (a user is two nodes), so its bound is a fifth of the
    // default: an alias bomb is refused after 100,000 steps of the walk, not 500,000.
    auto loaded = core::loadYamlDocument(text_, core::YamlLimits{100000, 32});
    if (loaded.error) {
      report(loaded.error->line, loaded.error->column, loaded.error->message);
      return;
    }
    const YAML::Node& doc = loaded.doc;
    if (!doc || doc.IsNull()) return;  // an empty file: plain HTTP, no auth
    auto top = fields(doc, "the web configuration",
                      {"tls_server_config", "http_server_config", "basic_auth_users", "rate_limit",
                       std::string_view(kAllowLessProtection)});
    if (!top) return;
    if (auto n = get(*top, kAllowLessProtection)) {
      bool v = false;
      if (!n->IsScalar() || !YAML::convert<bool>::decode(*n, v))
        report(*n, std::string(kAllowLessProtection) + " must be true or false");
      out_.config.allow_less_protection = v;
    }
    if (auto n = get(*top, "tls_server_config")) {
      remember("tls_server_config", *n);
      tls(*n);
    }
    if (auto n = get(*top, "http_server_config")) http(*n);
    if (auto n = get(*top, "basic_auth_users")) {
      remember("basic_auth_users", *n);
      users(*n);
    }
    if (auto n = get(*top, "rate_limit")) rateLimit(*n);
  }

 private:
  using Fields = core::YamlFields;

  void report(int line, int col, std::string msg) {
    if (out_.problems.size() >= 50) return;
    out_.problems.push_back(
        core::Diagnostic{file_, line, col, std::move(msg), core::lineOf(text_, line)});
  }
  void report(const YAML::Node& n, std::string msg) {
    report(n.Mark().line + 1, n.Mark().column + 1, std::move(msg));
  }
  void remember(const std::string& key, const YAML::Node& n) {
    out_.config.positions[key] = {n.Mark().line + 1, n.Mark().column + 1};
  }

  std::optional<Fields> fields(const YAML::Node& n, const std::string& what,
                               std::initializer_list<std::string_view> known) {
    return core::yamlFields(n, what, known, {}, [this](const YAML::Node& at, std::string msg) {
      report(at, std::move(msg));
    });
  }

  // A field's node; nullopt when absent or null (`key:` with nothing is the same as absent).
  static std::optional<YAML::Node> get(const Fields& f, std::string_view key) {
    auto it = f.find(key);
    if (it == f.end() || it->second.IsNull()) return std::nullopt;
    return it->second;
  }

  std::optional<std::string> str(const Fields& f, std::string_view key, const std::string& what) {
    auto n = get(f, key);
    if (!n) return std::nullopt;
    if (!n->IsScalar()) {
      report(*n, what + "." + std::string(key) + " must be a string");
      return std::nullopt;
    }
    remember(what + "." + std::string(key), *n);
    return n->Scalar();
  }

  std::optional<bool> boolean(const Fields& f, std::string_view key, const std::string& what) {
    auto n = get(f, key);
    if (!n) return std::nullopt;
    bool v = false;
    if (!n->IsScalar() || !YAML::convert<bool>::decode(*n, v)) {
      report(*n, what + "." + std::string(key) + " must be true or false");
      return std::nullopt;
    }
    return v;
  }

  std::vector<std::string> list(const Fields& f, std::string_view key, const std::string& what,
                                std::vector<YAML::Node>* nodes = nullptr) {
    std::vector<std::string> out;
    auto n = get(f, key);
    if (!n) return out;
    if (!n->IsSequence()) {
      report(*n, what + "." + std::string(key) + " must be a list of strings");
      return out;
    }
    for (const auto& item : *n) {
      if (!item.IsScalar()) {
        report(item, what + "." + std::string(key) + " must be a list of strings");
        continue;
      }
      out.push_back(item.Scalar());
      if (nodes) nodes->push_back(item);
    }
    return out;
  }

  std::string path(const std::string& p) const {
    if (p.empty() || p.front() == '/' || dir_.empty()) return p;
    return (std::filesystem::path(dir_) / p).string();
  }

  void tls(const YAML::Node& n) {
    const std::string what = "tls_server_config";
    auto f = fields(n, what,
                    {"cert", "key", "client_ca", "cert_file", "key_file", "client_auth_type",
                     "client_ca_file", "cipher_suites", "curve_preferences", "min_version",
                     "max_version", "prefer_server_cipher_suites", "client_allowed_sans"});
    if (!f) return;
    TlsServerConfig t;
    bool any = false;
    auto s = [&](std::string_view key) {
      auto v = str(*f, key, what);
      if (v && !v->empty()) any = true;
      return v.value_or("");
    };
    t.cert = s("cert");
    t.key = s("key");
    t.client_ca = s("client_ca");
    t.cert_file = path(s("cert_file"));
    t.key_file = path(s("key_file"));
    t.client_ca_file = path(s("client_ca_file"));
    std::string auth = s("client_auth_type");
    if (auth.empty() || auth == "NoClientCert") {
      t.client_auth_type = "NoClientCert";
    } else if (auth == "RequireClientCert" || auth == "RequireAnyClientCert") {
      t.client_auth_type = "RequireAnyClientCert";  // the toolkit keeps the old name
    } else if (auth == "RequestClientCert" || auth == "VerifyClientCertIfGiven" ||
               auth == "RequireAndVerifyClientCert") {
      t.client_auth_type = auth;
    } else {
      report(f->at("client_auth_type"),
             "invalid ClientAuth: \"" + auth +
                 "\" (use NoClientCert, RequestClientCert, RequireAnyClientCert, "
                 "VerifyClientCertIfGiven or RequireAndVerifyClientCert)");
    }
    std::vector<YAML::Node> nodes;
    auto ciphers = list(*f, "cipher_suites", what, &nodes);
    for (size_t i = 0; i < ciphers.size(); ++i) {
      bool tls13 = false;
      if (!opensslCipherName(ciphers[i], &tls13))
        report(nodes[i], "unknown cipher: \"" + ciphers[i] + "\"");
    }
    t.cipher_suites = ciphers;
    if (!ciphers.empty()) any = true;
    nodes.clear();
    t.curve_preferences = list(*f, "curve_preferences", what, &nodes);
    for (size_t i = 0; i < t.curve_preferences.size(); ++i) {
      const auto& c = t.curve_preferences[i];
      if (std::find_if(std::begin(kCurves), std::end(kCurves),
                       [&](const char* k) { return c == k; }) == std::end(kCurves))
        report(nodes[i], "unknown curve: \"" + c +
                             "\" (use CurveP256, CurveP384, CurveP521 or "
                             "X25519)");
    }
    auto version = [&](std::string_view key, int& out) {
      auto v = str(*f, key, what);
      if (!v) return;
      for (const auto& [name, code] : tlsVersions()) {
        if (*v == name) {
          out = code;
          return;
        }
      }
      report(f->find(key)->second,
             "unknown TLS version: \"" + *v + "\" (use TLS10, TLS11, TLS12 or TLS13)");
    };
    version("min_version", t.min_version);
    version("max_version", t.max_version);
    if (t.min_version > t.max_version)
      report(f->count("min_version") ? f->at("min_version") : n,
             "min_version is above max_version");
    if (auto b = boolean(*f, "prefer_server_cipher_suites", what))
      t.prefer_server_cipher_suites = *b;
    nodes.clear();
    t.client_allowed_sans = list(*f, "client_allowed_sans", what, &nodes);
    if (!any && t.client_auth_type == "NoClientCert" && t.client_allowed_sans.empty()) {
      return;  // no TLS key set: plain HTTP (the toolkit's errNoTLSConfig)
    }
    if (t.cert.empty() && t.cert_file.empty()) report(n, "missing one of cert or cert_file");
    if (!t.cert.empty() && !t.cert_file.empty())
      report(f->at("cert"), "set one of cert or cert_file, not both");
    if (t.key.empty() && t.key_file.empty()) report(n, "missing one of key or key_file");
    if (!t.key.empty() && !t.key_file.empty())
      report(f->at("key"), "set one of key or key_file, not both");
    bool has_ca = !t.client_ca.empty() || !t.client_ca_file.empty();
    if (!t.client_ca.empty() && !t.client_ca_file.empty())
      report(f->at("client_ca"), "set one of client_ca or client_ca_file, not both");
    if (has_ca && !t.requestsClientCert())
      report(f->count("client_ca_file") ? f->at("client_ca_file") : f->at("client_ca"),
             "client CA's have been configured without a Client Auth Policy (set "
             "client_auth_type)");
    if (t.client_auth_type == "RequireAndVerifyClientCert" && !has_ca)
      report(f->at("client_auth_type"),
             "RequireAndVerifyClientCert needs client_ca_file (or client_ca) to verify against");
    if (!t.client_allowed_sans.empty() && !t.requestsClientCert())
      report(f->at("client_allowed_sans"),
             "client_allowed_sans needs a client_auth_type that asks for client certificates");
    out_.config.tls = std::move(t);
  }

  void http(const YAML::Node& n) {
    const std::string what = "http_server_config";
    auto f = fields(n, what, {"http2", "headers"});
    if (!f) return;
    if (auto b = boolean(*f, "http2", what)) out_.config.http2 = *b;
    auto h = get(*f, "headers");
    if (!h) return;
    if (!h->IsMap()) {
      report(*h, what + ".headers must be a mapping of header names to values");
      return;
    }
    for (auto it = h->begin(); it != h->end(); ++it) {
      const YAML::Node key = it->first;
      const YAML::Node value = it->second;
      std::string name = key.IsScalar() ? key.Scalar() : "";
      auto allowed = std::find_if(allowedHeaders().begin(), allowedHeaders().end(),
                                  [&](const auto& a) { return a.first == name; });
      if (allowed == allowedHeaders().end()) {
        report(key, "HTTP header \"" + name +
                        "\" can not be configured (use Strict-Transport-Security, "
                        "X-Content-Type-Options, X-Frame-Options, X-XSS-Protection or "
                        "Content-Security-Policy)");
        continue;
      }
      std::string v = value.IsScalar() ? value.Scalar() : "";
      bool printable = value.IsScalar() && std::all_of(v.begin(), v.end(), [](char c) {
                         return c == '\t' || (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f);
                       });
      if (!printable) {
        report(value, "the value of header " + name + " must be a string on one line");
        continue;
      }
      const auto& values = allowed->second;
      if (!values.empty() && std::find(values.begin(), values.end(), v) == values.end()) {
        std::string list;
        for (const auto& a : values) list += (list.empty() ? "\"" : ", \"") + a + "\"";
        report(value, "invalid value for " + name + ". Expected one of: " + list + ", but got: \"" +
                          v + "\"");
        continue;
      }
      if (std::any_of(out_.config.headers.begin(), out_.config.headers.end(),
                      [&](const auto& e) { return e.first == name; })) {
        report(key, "duplicate header \"" + name + "\"");
        continue;
      }
      out_.config.headers.emplace_back(name, v);
    }
  }

  void users(const YAML::Node& n) {
    if (!n.IsMap()) {
      report(n, "basic_auth_users must be a mapping of user names to bcrypt hashes");
      return;
    }
    for (auto it = n.begin(); it != n.end(); ++it) {
      const YAML::Node key = it->first;
      const YAML::Node value = it->second;
      if (!key.IsScalar() || key.Scalar().empty()) {
        report(key, "a basic_auth_users name must be a non-empty string");
        continue;
      }
      const std::string& name = key.Scalar();
      if (name.find(':') != std::string::npos) {
        report(key, "user name \"" + name + "\" contains ':', which basic auth cannot carry");
        continue;
      }
      if (!value.IsScalar() || !isBcryptHash(value.Scalar())) {
        report(value.IsNull() ? key : value,
               "the password of user \"" + name +
                   "\" is not a bcrypt hash ($2a$, $2b$ or $2y$, cost 04-31; e.g. from "
                   "`htpasswd -nBC 10 \"\" | tr -d ':\\n'`)");
        continue;
      }
      if (!out_.config.users.emplace(name, value.Scalar()).second)
        report(key, "duplicate user \"" + name + "\" in basic_auth_users");
    }
  }

  void rateLimit(const YAML::Node& n) {
    auto f = fields(n, "rate_limit", {"burst", "interval"});
    if (!f) return;
    WebConfig::RateLimit rl;
    if (auto b = get(*f, "burst")) {
      int v = -1;
      if (!b->IsScalar() || !YAML::convert<int>::decode(*b, v) || v < 0 || v > 1000000)
        report(*b, "rate_limit.burst must be an integer from 0 to 1000000");
      rl.burst = v;
    }
    if (auto i = get(*f, "interval")) {
      auto d = i->IsScalar() ? config::parseDuration(i->Scalar()) : std::nullopt;
      if (!d)
        report(*i, "rate_limit.interval must be a duration, e.g. \"1s\"");
      else
        rl.interval = *d;
    }
    // The toolkit turns the limiter on only with an interval.
    if (rl.interval.count() > 0) out_.config.rate_limit = rl;
  }

  std::string_view text_;
  std::string file_;
  std::string dir_;
  WebConfigParse& out_;
};

}  // namespace

std::optional<std::string> opensslCipherName(std::string_view go_name, bool* tls13) {
  for (const auto& c : kCiphers) {
    if (go_name == c.go) {
      *tls13 = c.tls13;
      return std::string(c.openssl);
    }
  }
  return std::nullopt;
}

WebConfigParse parseWebConfig(std::string_view text, const std::string& file) {
  WebConfigParse out;
  Parser(text, file, out).parse();
  if (!out.problems.empty()) out.config = WebConfig{};
  return out;
}

}  // namespace fabricwatch::http
