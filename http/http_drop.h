#pragma once
// The reasons the HTTP server refuses or closes a connection: the vocabulary of
// fabricwatch_http_dropped_total{reason} (docs/metrics.md).

#include "http/http_message.h"

namespace fabricwatch::http {

// Why the server closed or refused a connection (label `reason` of
// fabricwatch_http_dropped_total).
enum class HttpDrop {
  kLimit,           // at max_connections, nothing evictable
  kAddressLimit,    // at max_connections_per_address, nothing evictable from that address
  kEvicted,         // no complete request, or not reading its answer; closed to make room
  kEvictedIdle,     // idle keep-alive; closed to make room
  kHeadTimeout,     // TLS handshake or request head not complete within request_timeout
  kWriteTimeout,    // the client did not read its response within request_timeout
  kTlsHandshake,    // the handshake failed (plain HTTP to the TLS port, bad client cert...)
  kMalformed,       // 400: request line or header syntax
  kTarget,          // 400: not an origin-form or absolute-form target
  kVersion,         // 505
  kTooLarge,        // 431: head over max_request_bytes
  kTooManyHeaders,  // 431
  kBody,            // 400: GET/HEAD with a body
  kAuthBusy,        // 503: too many password checks waiting
  kCount
};
const char* httpDropReason(HttpDrop d);
// The drop reason of a refused request head.
HttpDrop dropOf(HeadError e);

}  // namespace fabricwatch::http
