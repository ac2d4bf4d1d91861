// Fuzzes what any client on the node's network sends first: the HTTP request head. The bytes
// are one connection's stream, delivered in pieces whose sizes the first byte chooses, as the
// I/O loop sees them. Properties:
//  - parseRequestHead() decides (a head or a refusal) or asks for more, and a head it returns
//    lies inside the buffer, has a method and a path, header names in lower case and values
//    without control bytes, and parses the same from its own bytes alone (what follows is the
//    next request and changes nothing);
//  - the HeadScanner hands over exactly what the parser can judge: whenever the parser would
//    decide, ready() is true (a client never waits for its 400, issue 23 item 8), and when
//    ready() is true the parser decides (nothing incomplete is handed over; leading blank lines,
//    which the parser skips, once were);
//  - "need more" is only said below the size limit;
//  - acceptsEncoding() never crashes and agrees with itself for the coding's upper case.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "http/http_message.h"

namespace {

using fabricwatch::http::HeadError;
using fabricwatch::http::HeadLimits;
using fabricwatch::http::HeadScanner;
using fabricwatch::http::ParsedHead;
using fabricwatch::http::parseRequestHead;

[[noreturn]] void headFail(const char* what, std::string_view buf) {
  std::fprintf(stderr, "http_head_fuzz: %s (%zu bytes)\n", what, buf.size());
  std::abort();
}

void checkHead(const ParsedHead& h, std::string_view buf, const HeadLimits& limits) {
  if (h.head_bytes == 0 || h.head_bytes > buf.size() || h.head_bytes > limits.max_bytes)
    headFail("head_bytes outside the buffer or the limit", buf);
  const auto& r = h.request;
  if (r.method.empty() || r.path.empty() || r.path.front() != '/')
    headFail("a head without a method or an origin path", buf);
  if (r.headers.size() > limits.max_headers) headFail("more headers than allowed", buf);
  for (const auto& [k, v] : r.headers) {
    if (k.empty()) headFail("an empty header name", buf);
    for (unsigned char c : k)
      if (c >= 'A' && c <= 'Z') headFail("a header name not in lower case", buf);
    for (unsigned char c : v)
      if ((c < 0x20 && c != '\t') || c == 0x7f) headFail("a control byte in a header value", buf);
  }
  // The head alone parses to the same request.
  std::optional<HeadError> err;
  auto again = parseRequestHead(buf.substr(0, h.head_bytes), limits, &err);
  if (!again || again->head_bytes != h.head_bytes || again->request.path != r.path ||
      again->request.query != r.query || again->request.method != r.method ||
      again->request.headers != r.headers || again->keep_alive != h.keep_alive)
    headFail("the head alone parses differently", buf);
  for (const char* coding : {"gzip", "identity", "br", "zstd", "deflate"}) {
    bool a = r.acceptsEncoding(coding);
    if (a && r.header("accept-encoding").empty())
      headFail("a coding accepted without the header", buf);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // Small limits so the fuzzer reaches them; the first byte also picks the piece sizes.
  HeadLimits limits;
  limits.max_bytes = 64 + (data[0] & 0x3f) * 16;
  limits.max_headers = 1 + (data[0] >> 6) * 4;
  const size_t piece = 1 + (data[0] % 13);
  std::string_view stream(reinterpret_cast<const char*>(data + 1), size - 1);

  // Whole stream at once.
  std::optional<HeadError> err;
  if (auto h = parseRequestHead(stream, limits, &err)) {
    if (err) headFail("a head and an error", stream);
    checkHead(*h, stream, limits);
  } else if (!err && stream.size() >= limits.max_bytes) {
    headFail("more bytes wanted past the limit", stream);
  }

  // The same stream as the I/O loop receives it: pieces, the scanner, then the parser; a head
  // is taken off the front and the next request scanned from a reset scanner.
  HeadScanner scanner;
  std::string buf;
  size_t at = 0;
  bool closed = false;
  while (at < stream.size() && !closed) {
    buf.append(stream.substr(at, piece));
    at += piece;
    // As HttpServer::processInput: the scanner first, the parser when it says so; after a head
    // is taken, what is left is looked at again before more bytes come (a pipeline).
    while (!buf.empty()) {
      bool ready = scanner.ready(buf, limits);
      std::optional<HeadError> e;
      auto h = parseRequestHead(buf, limits, &e);
      bool decides = h.has_value() || e.has_value();
      if (decides && !ready) headFail("the parser would decide but the scanner waits", buf);
      if (ready && !decides) headFail("the scanner handed over an incomplete head", buf);
      if (e || (h && !h->keep_alive)) {
        closed = true;  // the connection answers its 4xx, or its last answer, and closes
        break;
      }
      if (!h) break;
      checkHead(*h, buf, limits);
      buf.erase(0, h->head_bytes);
      scanner.reset();
    }
  }
  return 0;
}
