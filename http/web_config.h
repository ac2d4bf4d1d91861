#pragma once
// The web configuration file of --web.config.file, in the Prometheus exporter-toolkit format
// (https://github.com/prometheus/exporter-toolkit/blob/master/docs/web-configuration.md), so
// that operators reuse the file they have for node_exporter:
//
//   tls_server_config: {cert_file, key_file, cert, key, client_auth_type, client_ca_file,
//                       client_ca, min_version, max_version, cipher_suites,
//                       curve_preferences, prefer_server_cipher_suites, client_allowed_sans}
//   http_server_config: {http2, headers}
//   basic_auth_users: {NAME: BCRYPT_HASH, ...}
//   rate_limit: {burst, interval}
//   fabricwatch_allow_less_protection: true   (fabricwatch's own; see kAllowLessProtection)
//
// This is the pure half: text in, the settings or FILE:LINE:COL problems out. Unknown keys are
// errors (the toolkit parses strictly too). Reading the named files and building the TLS
// context is web_security.h.

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/diagnostic.h"

namespace fabricwatch::http {

struct TlsServerConfig {
  // Paths as written, relative ones joined with the web config file's directory.
  std::string cert_file, key_file, client_ca_file;
  // Inline PEM (the toolkit's cert, key, client_ca).
  std::string cert, key, client_ca;
  // NoClientCert, RequestClientCert, RequireAnyClientCert, VerifyClientCertIfGiven,
  // RequireAndVerifyClientCert (RequireClientCert is read as RequireAnyClientCert).
  std::string client_auth_type = "NoClientCert";
  std::vector<std::string> cipher_suites;  // IANA names, as Go spells them
  std::vector<std::string> curve_preferences;
  int min_version = 0x0303;  // TLS 1.2
  int max_version = 0x0304;  // TLS 1.3
  bool prefer_server_cipher_suites = true;
  std::vector<std::string> client_allowed_sans;

  bool requestsClientCert() const { return client_auth_type != "NoClientCert"; }
  bool verifiesClientCert() const {
    return client_auth_type == "VerifyClientCertIfGiven" ||
           client_auth_type == "RequireAndVerifyClientCert";
  }
  bool requiresClientCert() const {
    return client_auth_type == "RequireAnyClientCert" ||
           client_auth_type == "RequireAndVerifyClientCert";
  }
};

// The one key that is not the toolkit's: a reload that would serve with less protection than the
// running file (basic auth turned off, client certificates no longer required or verified) is
// refused unless the new file says `fabricwatch_allow_less_protection: true`. A truncated or
// emptied file (an editor's or a ConfigMap's truncate-then-write) must never turn auth off.
inline constexpr const char* kAllowLessProtection = "fabricwatch_allow_less_protection";

struct WebConfig {
  std::optional<TlsServerConfig> tls;                     // set when any TLS key is set
  std::map<std::string, std::string, std::less<>> users;  // name -> bcrypt hash
  std::vector<std::pair<std::string, std::string>> headers;
  bool http2 = true;  // accepted for compatibility; fabricwatch speaks HTTP/1.1
  struct RateLimit {
    int burst = 0;
    std::chrono::milliseconds interval{0};
  };
  std::optional<RateLimit> rate_limit;
  bool allow_less_protection = false;  // kAllowLessProtection
  // Where keys sat ("tls_server_config.cert_file" -> line, column), for problems found later
  // (a certificate that does not load).
  std::map<std::string, std::pair<int, int>, std::less<>> positions;
};

struct WebConfigParse {
  WebConfig config;
  std::vector<core::Diagnostic> problems;
};

// `file` names the text in problems; its directory anchors relative paths.
WebConfigParse parseWebConfig(std::string_view text, const std::string& file);

// The OpenSSL name of a TLS 1.2 cipher suite Go names (TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 ->
// ECDHE-RSA-AES128-GCM-SHA256); for a TLS 1.3 suite its own name; nullopt when unknown.
std::optional<std::string> opensslCipherName(std::string_view go_name, bool* tls13);

}  // namespace fabricwatch::http
