// Fuzzes the web configuration parser (--web.config.file, exporter-toolkit's format: TLS,
// client auth, headers, basic_auth_users with bcrypt hashes, rate_limit). The file is written by
// an operator, but it is the one that decides who gets in, so any bytes must come back as either
//  - a configuration that holds what the server relies on (a TLS block with one certificate and
//    one key, a known client-auth policy and versions in order, known ciphers and curves; users
//    with names basic auth can carry and hashes crypt(3) takes; allowed headers on one line), or
//  - problems, each positioned (FILE:LINE:COL inside the text) with a message, at most 50, whose
//    printed form is bounded and carries no raw control or invalid bytes to a terminal, and no
//    configuration at all (a bad file must never half-apply),
// the same both times it is parsed, never a crash, a hang or an exception.
//
// Seeds (corpus/web_config_fuzz): toolkit_* are exporter-toolkit's own web/testdata files
// (Apache-2.0, the files its TestYAMLFiles table parses), the rest fabricwatch's: the example of
// docs/configuration.md, inline PEM with mTLS, flow style, CRLF with a problem per key, an alias
// bomb, deep nesting, several documents.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/utf8.h"
#include "http/basic_auth.h"
#include "http/web_config.h"

namespace {

using fabricwatch::http::parseWebConfig;
using fabricwatch::http::TlsServerConfig;
using fabricwatch::http::WebConfig;
using fabricwatch::http::WebConfigParse;

const std::string kFile = "/etc/fabricwatch/web.yml";

[[noreturn]] void fail(const char* what, const std::string& detail = "") {
  std::fprintf(stderr, "web_config_fuzz: %s %s\n", what, detail.c_str());
  std::abort();
}
void check(bool ok, const char* what, const std::string& detail = "") {
  if (!ok) fail(what, detail);
}

// Lines a YAML mark can point at: every line of the text, and the one after a final newline.
int lineCount(std::string_view text) {
  return 1 + static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

void checkProblems(const WebConfigParse& r, std::string_view text) {
  check(r.problems.size() <= 50, "more than 50 problems");
  const int lines = lineCount(text);
  for (const auto& d : r.problems) {
    check(d.file == kFile, "problem names another file", d.file);
    check(!d.message.empty(), "problem without a message");
    check(d.line >= 1 && d.line <= lines, "problem outside the text",
          std::to_string(d.line) + " of " + std::to_string(lines));
    check(d.column >= 1, "problem without a column", d.message);
    check(d.snippet == fabricwatch::core::lineOf(text, d.line),
          "snippet is not the problem's line");
    // What reaches a terminal: FILE:LINE:COL first, then at most the line and a caret; every
    // byte escaped (no control characters but those newlines and tabs, valid UTF-8), and cut
    // (message 1 KiB, snippet a window of 160 bytes, each at most 4 bytes once escaped).
    std::string out = d.format();
    std::string head = kFile + ":" + std::to_string(d.line) + ":" + std::to_string(d.column) + ": ";
    check(out.rfind(head, 0) == 0, "printed problem does not start with FILE:LINE:COL", out);
    check(out.size() <= 16 * 1024, "printed problem is not cut", std::to_string(out.size()));
    check(fabricwatch::core::isValidUtf8(out), "printed problem is not valid UTF-8");
    check(std::count(out.begin(), out.end(), '\n') <= 2, "printed problem spans more lines");
    for (unsigned char c : out)
      check(c == '\n' || c == '\t' || (c >= 0x20 && c != 0x7f), "raw control byte printed",
            std::to_string(c));
  }
  // A file with problems applies nothing: no TLS, no users, no headers, no limiter.
  const WebConfig& c = r.config;
  check(!c.tls && c.users.empty() && c.headers.empty() && !c.rate_limit && c.positions.empty(),
        "a file with problems left a configuration");
}

bool oneOf(const std::string& v, std::initializer_list<std::string_view> set) {
  return std::find(set.begin(), set.end(), v) != set.end();
}

void checkTls(const TlsServerConfig& t) {
  check(oneOf(t.client_auth_type, {"NoClientCert", "RequestClientCert", "RequireAnyClientCert",
                                   "VerifyClientCertIfGiven", "RequireAndVerifyClientCert"}),
        "unknown client_auth_type accepted", t.client_auth_type);
  check(t.cert.empty() != t.cert_file.empty(), "not exactly one of cert and cert_file");
  check(t.key.empty() != t.key_file.empty(), "not exactly one of key and key_file");
  check(t.client_ca.empty() || t.client_ca_file.empty(), "both client_ca and client_ca_file");
  bool has_ca = !t.client_ca.empty() || !t.client_ca_file.empty();
  check(!has_ca || t.requestsClientCert(), "a client CA without a client auth policy");
  // A policy that verifies certificates must have something to verify them against (otherwise
  // OpenSSL would accept any chain or none: a file that reads as mTLS but is not).
  check(t.client_auth_type != "RequireAndVerifyClientCert" || has_ca,
        "RequireAndVerifyClientCert without a CA");
  check(t.client_allowed_sans.empty() || t.requestsClientCert(),
        "client_allowed_sans without client certificates");
  check(t.min_version >= 0x0301 && t.max_version <= 0x0304 && t.min_version <= t.max_version,
        "TLS versions out of range or order");
  for (const auto& c : t.cipher_suites) {
    bool tls13 = false;
    check(fabricwatch::http::opensslCipherName(c, &tls13).has_value(), "unknown cipher", c);
  }
  for (const auto& c : t.curve_preferences)
    check(oneOf(c, {"CurveP256", "CurveP384", "CurveP521", "X25519"}), "unknown curve", c);
  // Relative paths are anchored at the web config's directory.
  for (const std::string* p : {&t.cert_file, &t.key_file, &t.client_ca_file})
    check(p->empty() || p->front() == '/', "a relative path left relative", *p);
}

void checkConfig(const WebConfig& c) {
  if (c.tls) checkTls(*c.tls);
  for (const auto& [name, hash] : c.users) {
    // Basic auth is "user:password": a name with ':' could never log in, or would log in as
    // another split; an empty one is no user.
    check(!name.empty() && name.find(':') == std::string::npos, "unusable user name", name);
    check(fabricwatch::http::isBcryptHash(hash), "a user's hash is not a bcrypt hash", hash);
  }
  for (size_t i = 0; i < c.headers.size(); ++i) {
    const auto& [name, value] = c.headers[i];
    check(oneOf(name, {"Strict-Transport-Security", "X-Content-Type-Options", "X-Frame-Options",
                       "X-XSS-Protection", "Content-Security-Policy"}),
          "a header the toolkit does not allow", name);
    // The value goes into every response head: a CR or LF would split the response.
    for (unsigned char ch : value)
      check(ch == '\t' || (ch >= 0x20 && ch != 0x7f), "a header value with a control byte", name);
    for (size_t j = 0; j < i; ++j) check(c.headers[j].first != name, "a header set twice", name);
  }
  if (c.rate_limit) {
    check(c.rate_limit->interval.count() > 0, "a rate limiter without an interval");
    check(c.rate_limit->burst >= 0 && c.rate_limit->burst <= 1000000,
          "rate_limit.burst out of range");
  }
}

// What a parse says, as text, to compare two parses of the same bytes.
std::string summary(const WebConfigParse& r) {
  std::string s;
  for (const auto& d : r.problems) s += d.format() + "\n";
  const WebConfig& c = r.config;
  if (c.tls) {
    const auto& t = *c.tls;
    s += "tls " + t.cert_file + "|" + t.key_file + "|" + t.client_ca_file + "|" + t.cert + "|" +
         t.key + "|" + t.client_ca + "|" + t.client_auth_type + "|" +
         std::to_string(t.min_version) + "|" + std::to_string(t.max_version) + "|" +
         std::to_string(t.cipher_suites.size()) + "|" + std::to_string(t.curve_preferences.size()) +
         "|" + std::to_string(t.client_allowed_sans.size()) + "\n";
  }
  for (const auto& [u, h] : c.users) s += "user " + u + " " + h + "\n";
  for (const auto& [n, v] : c.headers) s += "header " + n + " " + v + "\n";
  if (c.rate_limit)
    s += "rate " + std::to_string(c.rate_limit->burst) + " " +
         std::to_string(c.rate_limit->interval.count()) + "\n";
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  WebConfigParse r;
  try {
    r = parseWebConfig(text, kFile);
  } catch (const std::exception& e) {
    fail("exception escaped the parser:", e.what());
  } catch (...) {
    fail("exception escaped the parser");
  }
  if (r.problems.empty())
    checkConfig(r.config);
  else
    checkProblems(r, text);
  check(summary(parseWebConfig(text, kFile)) == summary(r), "two parses of the same text differ");
  return 0;
}
