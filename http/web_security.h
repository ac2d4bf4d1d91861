#pragma once
// What --web.config.file turns on, loaded and checked: the TLS context (certificate, key,
// client certificate policy, versions, ciphers), the basic-auth users and the extra response
// headers. Immutable once built; the HTTP server takes a new one on each good reload
// (WebConfigWatcher), while connections keep the one they were accepted under.

#include <openssl/ssl.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/diagnostic.h"
#include "http/basic_auth.h"
#include "http/web_config.h"

namespace fabricwatch::http {

// How much a web configuration protects, compared between the running file and a reload.
struct WebProtection {
  bool tls = false;
  bool requires_client_cert = false;
  bool verifies_client_cert = false;
  size_t users = 0;
  bool allow_less = false;  // the file says kAllowLessProtection: true
};

// What `after` protects less than `before`, one phrase each ("basic auth turned off (2 users
// before, none now)", "fewer users (2 users before, 1 user now)"); empty when nothing is
// weaker. Fewer users is less protection: a file cut inside its users' list looks exactly like
// a revocation, so revoking a user takes kAllowLessProtection (or a restart). TLS on or off is
// refused on its own (it needs a restart), so it is not listed here.
std::vector<std::string> lessProtection(const WebProtection& before, const WebProtection& after);

class WebSecurity {
 public:
  struct RateLimit {
    int burst = 0;
    std::chrono::milliseconds interval{0};
  };

  WebSecurity(std::shared_ptr<SSL_CTX> tls, std::unique_ptr<BasicAuth> auth,
              std::vector<std::pair<std::string, std::string>> headers,
              std::optional<RateLimit> rate_limit, WebProtection protection = {})
      : tls_(std::move(tls)),
        auth_(std::move(auth)),
        headers_(std::move(headers)),
        rate_limit_(rate_limit),
        protection_(protection) {}

  SSL_CTX* tlsContext() const { return tls_.get(); }          // null: plain HTTP
  const BasicAuth* basicAuth() const { return auth_.get(); }  // null: no users, no auth
  const std::vector<std::pair<std::string, std::string>>& headers() const { return headers_; }
  const std::optional<RateLimit>& rateLimit() const { return rate_limit_; }
  const WebProtection& protection() const { return protection_; }

 private:
  std::shared_ptr<SSL_CTX> tls_;
  std::unique_ptr<BasicAuth> auth_;
  std::vector<std::pair<std::string, std::string>> headers_;
  std::optional<RateLimit> rate_limit_;
  WebProtection protection_;
};

struct WebSecurityLoad {
  std::shared_ptr<const WebSecurity> security;  // null when problems is not empty
  std::vector<core::Diagnostic> problems;
  std::vector<std::string> files;  // the files it read (the web config, certificates, CAs)
};

// Reads and checks the web configuration file and every file it names. Relative paths are
// taken from the file's directory, as exporter-toolkit does.
WebSecurityLoad loadWebSecurity(const std::string& path);
// The same from text (tests; `path` names it in problems and anchors relative paths).
WebSecurityLoad buildWebSecurity(std::string_view text, const std::string& path);

}  // namespace fabricwatch::http
