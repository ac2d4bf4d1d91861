#pragma once
// HTTP/1.x messages as fabricwatch serves them: the request head parser (pure: bytes in, a
// request or the reason it is refused out) and the response head writer. Only what a metrics
// endpoint needs: GET and HEAD without bodies, origin-form and absolute-form targets, bounded
// head size and header count.

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fabricwatch::http {

struct HttpRequest {
  std::string method;
  std::string path;   // the target's path, as sent (no percent-decoding)
  std::string query;  // after '?', without it
  // Request headers, names lower-cased, in arrival order.
  std::vector<std::pair<std::string, std::string>> headers;

  // The value of the first header named `name` (lower case), or "" when absent.
  std::string_view header(std::string_view name) const;
  // True when Accept-Encoding lists `coding` with a non-zero q-value (RFC 9110 12.5.3).
  bool acceptsEncoding(std::string_view coding) const;
};

struct HttpResponse {
  HttpResponse() = default;
  HttpResponse(int status, std::string content_type, std::string body)
      : status(status), content_type(std::move(content_type)), body(std::move(body)) {}

  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  // Bytes shared with a longer-lived owner (e.g. an exposition rendered once per snapshot);
  // sent after `body` without a copy when set.
  std::shared_ptr<const std::string> shared_body;
  // Sent after shared_body: what a request adds to shared bytes (e.g. per-request metrics, or
  // the end of a compressed stream whose start is shared).
  std::string tail;
  std::string content_encoding;  // e.g. "gzip"; sent with "Vary: Accept-Encoding"
  // More response headers ("Name", "value"), e.g. WWW-Authenticate, Allow.
  std::vector<std::pair<std::string, std::string>> extra_headers;

  size_t bodySize() const {
    return body.size() + (shared_body ? shared_body->size() : 0) + tail.size();
  }
};

// Why a request head was refused; each has its status and a metric reason.
enum class HeadError {
  kMalformed,       // 400: request line or header syntax
  kTarget,          // 400: a target that is neither origin-form nor absolute-form
  kVersion,         // 505: not HTTP/1.0 or HTTP/1.1
  kTooLarge,        // 431: head longer than the limit
  kTooManyHeaders,  // 431
  kBody,            // 400: GET/HEAD with a body (Content-Length > 0 or Transfer-Encoding)
};
int statusOf(HeadError e);
const char* reasonOf(HeadError e);  // the metric label: malformed, target, version, ...

struct HeadLimits {
  size_t max_bytes = 16384;
  size_t max_headers = 64;
};

struct ParsedHead {
  HttpRequest request;
  size_t head_bytes = 0;  // bytes of the buffer the head took, up to its blank line
  bool keep_alive = true;
  bool absolute_form = false;  // the target was absolute-form (http://host/path)
};

// Parses one request head from the front of `buf`.
//   - a ParsedHead when a whole head is there (more bytes after it are the next request);
//   - nullopt with *error unset when more bytes are needed (and the limit is not reached);
//   - nullopt with *error set when the head is refused.
// A method other than GET/HEAD parses (the router answers 405); a body never does.
std::optional<ParsedHead> parseRequestHead(std::string_view buf, const HeadLimits& limits,
                                           std::optional<HeadError>* error);

// Watches a growing buffer for the end of a head, so that a head trickled byte by byte costs
// linear time rather than a parse per byte.
class HeadScanner {
 public:
  // True when `buf` (grown at its end since the last call, never shrunk) may now hold a whole
  // head or one to refuse: a blank line ended, the size limit is reached, there are more lines
  // than headers allowed, or its first bytes are refused by the parser's own rule (too many
  // leading CR/LF bytes, a method that is no token: a TLS ClientHello). Then parseRequestHead()
  // decides. Whenever parseRequestHead() would decide (a head or a refusal), ready() is true,
  // so a client is never left waiting for its 400 (issue 23, item 8).
  bool ready(std::string_view buf, const HeadLimits& limits);
  void reset() {
    scanned_ = lines_ = start_ = 0;
    start_settled_ = false;
  }

 private:
  size_t scanned_ = 0;
  size_t lines_ = 0;            // line ends after the leading blank lines
  bool start_settled_ = false;  // the request line's method and its space have arrived
  size_t start_ = 0;            // then: where the request line starts (after blank lines)
};

// "HTTP/1.1 200 OK\r\n...\r\n\r\n" for `r` (its Content-Length counts the body even for HEAD).
// `headers` are added as they are (the web configuration's security headers).
std::string responseHead(const HttpResponse& r, bool keep_alive,
                         const std::vector<std::pair<std::string, std::string>>& headers = {});

const char* statusText(int status);

}  // namespace fabricwatch::http
