#include "http/http_message.h"

#include <cctype>
#include <charconv>

namespace fabricwatch::http {
namespace {

// RFC 9110 5.6.2: token characters.
bool isTchar(unsigned char c) {
  if (std::isalnum(c)) return true;
  switch (c) {
    case '!':
    case '#':
    case '$':
    case '%':
    case '&':
    case '\'':
    case '*':
    case '+':
    case '-':
    case '.':
    case '^':
    case '_':
    case '`':
    case '|':
    case '~':
      return true;
    default:
      return false;
  }
}

bool isToken(std::string_view s) {
  if (s.empty()) return false;
  for (unsigned char c : s)
    if (!isTchar(c)) return false;
  return true;
}

// field-value characters: HTAB, SP, VCHAR, obs-text.
bool isFieldValue(std::string_view s) {
  for (unsigned char c : s)
    if (c != '\t' && (c < 0x20 || c == 0x7f)) return false;
  return true;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// RFC 9110 5.6.3: optional whitespace (OWS) is space and tab only. Not core::trim, which also
// strips CR and LF: "X: v\r\r\n" would then pass as "v" instead of being refused as malformed.
std::string_view trimOws(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool startsWithNoCase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
  return true;
}

// Comma-separated tokens of a header value (Connection), case-insensitive.
bool listHas(std::string_view list, std::string_view token) {
  while (!list.empty()) {
    size_t comma = list.find(',');
    if (lower(trimOws(list.substr(0, comma))) == token) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

// Leading empty lines before the request line are skipped (RFC 9112 2.2), a few of them.
constexpr size_t kMaxLeadingBlank = 8;
constexpr size_t kMaxMethod = 32;

// What the first bytes of a head settle whatever follows them: more than kMaxLeadingBlank
// leading CR/LF bytes (bare CRs included), or a method that is not a token of at most
// kMaxMethod characters followed by a space (a TLS ClientHello's first byte, 0x16, binary
// garbage, a line that ends before its method does). Both the scanner and the parser ask this,
// so a head the parser refuses is never left waiting for a blank line that will not come. It
// looks at most kMaxLeadingBlank + kMaxMethod + 1 bytes. `settled` is set once the bytes seen
// can no longer be refused by this rule.
std::optional<HeadError> refusedByItsStart(std::string_view buf, bool* settled) {
  *settled = false;
  size_t start = 0;
  while (start < buf.size() && (buf[start] == '\r' || buf[start] == '\n')) {
    if (++start > kMaxLeadingBlank) return HeadError::kMalformed;
  }
  for (size_t i = start; i < buf.size(); ++i) {
    auto c = static_cast<unsigned char>(buf[i]);
    if (c == ' ') {
      if (i == start) return HeadError::kMalformed;  // an empty method
      *settled = true;
      return std::nullopt;
    }
    if (!isTchar(c) || i - start >= kMaxMethod) return HeadError::kMalformed;
  }
  return std::nullopt;
}

}  // namespace

std::string_view HttpRequest::header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (k == name) return v;
  return {};
}

bool HttpRequest::acceptsEncoding(std::string_view coding) const {
  std::string_view list = header("accept-encoding");
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view item = trimOws(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    size_t semi = item.find(';');
    std::string name = lower(trimOws(item.substr(0, semi)));
    if (name != coding && name != "*") continue;
    if (semi == std::string_view::npos) return true;
    // "q=0", "q=0.0", "q=0.000" refuse the coding; any other q-value accepts it.
    std::string_view param = trimOws(item.substr(semi + 1));
    if (param.size() < 2 || (param[0] != 'q' && param[0] != 'Q') || param[1] != '=') return true;
    std::string_view q = trimOws(param.substr(2));
    return q.find_first_not_of("0.") != std::string_view::npos;
  }
  return false;
}

int statusOf(HeadError e) {
  switch (e) {
    case HeadError::kVersion:
      return 505;
    case HeadError::kTooLarge:
    case HeadError::kTooManyHeaders:
      return 431;
    default:
      return 400;
  }
}

const char* reasonOf(HeadError e) {
  switch (e) {
    case HeadError::kMalformed:
      return "malformed";
    case HeadError::kTarget:
      return "target";
    case HeadError::kVersion:
      return "version";
    case HeadError::kTooLarge:
      return "too_large";
    case HeadError::kTooManyHeaders:
      return "too_many_headers";
    case HeadError::kBody:
      return "body";
  }
  return "malformed";
}

std::optional<ParsedHead> parseRequestHead(std::string_view buf, const HeadLimits& limits,
                                           std::optional<HeadError>* error) {
  error->reset();
  auto fail = [&](HeadError e) -> std::optional<ParsedHead> {
    *error = e;
    return std::nullopt;
  };
  bool settled = false;
  if (auto e = refusedByItsStart(buf, &settled)) return fail(*e);
  size_t start = buf.find_first_not_of("\r\n");
  if (start == std::string_view::npos) return std::nullopt;

  // Split into lines up to the blank one; "\n" and "\r\n" both end a line (RFC 9112 2.2).
  std::vector<std::string_view> lines;
  size_t pos = start;
  size_t end = std::string_view::npos;
  while (pos < buf.size()) {
    size_t nl = buf.find('\n', pos);
    if (nl == std::string_view::npos) break;
    std::string_view line = buf.substr(pos, nl - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos = nl + 1;
    if (line.empty()) {
      end = pos;
      break;
    }
    lines.push_back(line);
    if (lines.size() > limits.max_headers + 1) return fail(HeadError::kTooManyHeaders);
  }
  if (end == std::string_view::npos) {
    if (buf.size() >= limits.max_bytes) return fail(HeadError::kTooLarge);
    return std::nullopt;
  }
  if (end > limits.max_bytes) return fail(HeadError::kTooLarge);

  ParsedHead out;
  out.head_bytes = end;
  HttpRequest& req = out.request;

  // request-line = method SP request-target SP HTTP-version
  std::string_view rl = lines.front();
  size_t sp1 = rl.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : rl.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || rl.find(' ', sp2 + 1) != std::string_view::npos)
    return fail(HeadError::kMalformed);
  std::string_view method = rl.substr(0, sp1);
  std::string_view target = rl.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string_view version = rl.substr(sp2 + 1);
  if (!isToken(method) || method.size() > kMaxMethod) return fail(HeadError::kMalformed);
  bool http11;
  if (version == "HTTP/1.1") {
    http11 = true;
  } else if (version == "HTTP/1.0") {
    http11 = false;
  } else if (version.size() == 8 && version.substr(0, 5) == "HTTP/" &&
             std::isdigit(static_cast<unsigned char>(version[5])) && version[6] == '.' &&
             std::isdigit(static_cast<unsigned char>(version[7]))) {
    return fail(HeadError::kVersion);
  } else {
    return fail(HeadError::kMalformed);
  }
  if (target.empty()) return fail(HeadError::kMalformed);
  for (unsigned char c : target)
    if (c <= 0x20 || c >= 0x7f || c == '#') return fail(HeadError::kTarget);
  if (target.front() != '/') {
    // absolute-form: a server must accept it (RFC 9112 3.2.2); the authority is not used.
    std::string_view rest;
    if (startsWithNoCase(target, "http://"))
      rest = target.substr(7);
    else if (startsWithNoCase(target, "https://"))
      rest = target.substr(8);
    else
      return fail(HeadError::kTarget);  // authority-form, asterisk-form, garbage
    size_t path_at = rest.find_first_of("/?");
    if (path_at == 0) return fail(HeadError::kTarget);  // no authority
    std::string_view path_query =
        path_at == std::string_view::npos ? std::string_view{} : rest.substr(path_at);
    out.absolute_form = true;
    static const std::string kRoot = "/";
    std::string normalized = path_query.empty() || path_query.front() == '?'
                                 ? kRoot + std::string(path_query)
                                 : std::string(path_query);
    size_t q = normalized.find('?');
    req.path = normalized.substr(0, q);
    if (q != std::string::npos) req.query = normalized.substr(q + 1);
  } else {
    size_t q = target.find('?');
    req.path = std::string(target.substr(0, q));
    if (q != std::string_view::npos) req.query = std::string(target.substr(q + 1));
  }
  req.method = std::string(method);

  // header-field = field-name ":" OWS field-value OWS; no obs-fold, no space before ':'.
  for (size_t i = 1; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) return fail(HeadError::kMalformed);
    std::string_view name = line.substr(0, colon);
    std::string_view value = trimOws(line.substr(colon + 1));
    if (!isToken(name) || !isFieldValue(value)) return fail(HeadError::kMalformed);
    req.headers.emplace_back(lower(name), std::string(value));
  }
  if (req.headers.size() > limits.max_headers) return fail(HeadError::kTooManyHeaders);

  int hosts = 0;
  bool has_length = false;
  uint64_t length = 0;
  bool chunked = false;
  bool conn_close = false;
  bool conn_keep_alive = false;
  for (const auto& [k, v] : req.headers) {
    if (k == "host") {
      ++hosts;
    } else if (k == "content-length") {
      uint64_t n = 0;
      auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
      if (ec != std::errc() || p != v.data() + v.size() || v.empty())
        return fail(HeadError::kMalformed);
      if (has_length && n != length) return fail(HeadError::kMalformed);
      has_length = true;
      length = n;
    } else if (k == "transfer-encoding") {
      chunked = true;
    } else if (k == "connection") {
      conn_close = conn_close || listHas(v, "close");
      conn_keep_alive = conn_keep_alive || listHas(v, "keep-alive");
    }
  }
  // RFC 9112 3.2: an HTTP/1.1 request without exactly one Host is refused.
  if (http11 && hosts != 1) return fail(HeadError::kMalformed);
  if (hosts > 1) return fail(HeadError::kMalformed);
  bool has_body = chunked || length > 0;
  if (has_body && (req.method == "GET" || req.method == "HEAD")) return fail(HeadError::kBody);
  out.keep_alive = http11 ? !conn_close : (conn_keep_alive && !conn_close);
  // A body we do not read (any other method is answered 405) ends the connection.
  if (has_body) out.keep_alive = false;
  return out;
}

bool HeadScanner::ready(std::string_view buf, const HeadLimits& limits) {
  // The parser's own rule for the first bytes, until they are settled (a few dozen bytes).
  if (!start_settled_) {
    bool settled = false;
    if (refusedByItsStart(buf, &settled)) return true;
    start_settled_ = settled;
    if (settled) start_ = buf.find_first_not_of("\r\n");
  }
  bool found = false;
  for (size_t i = scanned_; i < buf.size(); ++i) {
    if (buf[i] != '\n') continue;
    // Until the start is settled every line end is a leading one (a method byte is a tchar),
    // and the parser skips those: neither a blank line nor a line (fuzzed: http_head_fuzz).
    if (!start_settled_ || i < start_) continue;
    bool blank = buf[i - 1] == '\n' || (buf[i - 1] == '\r' && buf[i - 2] == '\n');
    found = found || blank;
    ++lines_;
  }
  scanned_ = buf.size();
  return found || buf.size() >= limits.max_bytes || lines_ > limits.max_headers + 1;
}

const char* statusText(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Status";
  }
}

std::string responseHead(const HttpResponse& r, bool keep_alive,
                         const std::vector<std::pair<std::string, std::string>>& headers) {
  std::string h;
  h.reserve(256);
  h += "HTTP/1.1 ";
  h += std::to_string(r.status);
  h += ' ';
  h += statusText(r.status);
  h += "\r\nContent-Type: ";
  h += r.content_type;
  h += "\r\nContent-Length: ";
  h += std::to_string(r.bodySize());
  h += "\r\n";
  if (!r.content_encoding.empty()) {
    h += "Content-Encoding: ";
    h += r.content_encoding;
    h += "\r\nVary: Accept-Encoding\r\n";
  }
  h += "Cache-Control: no-store\r\n";
  for (const auto* list : {&r.extra_headers, &headers}) {
    for (const auto& [k, v] : *list) {
      h += k;
      h += ": ";
      h += v;
      h += "\r\n";
    }
  }
  h += keep_alive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
  return h;
}

}  // namespace fabricwatch::http
