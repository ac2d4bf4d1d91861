#pragma once
// One HTTP(S) GET through libcurl, loaded with dlopen() on first use (libcurl.so.4): only
// `fabricwatch diagnose` asks another server anything, so the daemon and `check` never map
// libcurl and its dozen dependencies. TLS and authentication as a Prometheus's users configure
// them: a CA file, a client certificate, basic auth, a bearer token. The answer is bounded in
// size and time; redirects are not followed (a redirect to another host would take the
// credentials with it).

#include <chrono>
#include <string>

#include "core/result.h"

namespace fabricwatch::fleet {

struct HttpGetOptions {
  std::chrono::milliseconds timeout{10000};  // the whole exchange, connection included
  size_t max_bytes = size_t{64} << 20;       // a longer answer is an error, not a truncation
  std::string ca_file;                       // empty: the system's CAs
  std::string cert_file, key_file;           // a client certificate (mutual TLS)
  bool insecure_skip_verify = false;
  std::string username, password;  // basic auth when username is set
  std::string bearer_token;        // "Authorization: Bearer ..." when set
};

struct HttpReply {
  long status = 0;
  std::string content_type;
  std::string body;
};

// The library dlopen()ed.
inline constexpr const char* kCurlLibrary = "libcurl.so.4";

// GETs url (http:// or https:// only). An error says what failed, without the credentials.
core::Result<HttpReply> httpGet(const std::string& url, const HttpGetOptions& options);

// The URL-encoded form of s, for a query parameter.
std::string urlEncode(std::string_view s);

}  // namespace fabricwatch::fleet
