#include "http/http_drop.h"

namespace fabricwatch::http {

const char* httpDropReason(HttpDrop d) {
  switch (d) {
    case HttpDrop::kLimit:
      return "limit";
    case HttpDrop::kAddressLimit:
      return "address_limit";
    case HttpDrop::kEvicted:
      return "evicted";
    case HttpDrop::kEvictedIdle:
      return "evicted_idle";
    case HttpDrop::kHeadTimeout:
      return "head_timeout";
    case HttpDrop::kWriteTimeout:
      return "write_timeout";
    case HttpDrop::kTlsHandshake:
      return "tls_handshake";
    case HttpDrop::kMalformed:
      return "malformed";
    case HttpDrop::kTarget:
      return "target";
    case HttpDrop::kVersion:
      return "version";
    case HttpDrop::kTooLarge:
      return "too_large";
    case HttpDrop::kTooManyHeaders:
      return "too_many_headers";
    case HttpDrop::kBody:
      return "body";
    case HttpDrop::kAuthBusy:
      return "auth_busy";
    case HttpDrop::kCount:
      break;
  }
  return "other";
}

HttpDrop dropOf(HeadError e) {
  switch (e) {
    case HeadError::kMalformed:
      return HttpDrop::kMalformed;
    case HeadError::kTarget:
      return HttpDrop::kTarget;
    case HeadError::kVersion:
      return HttpDrop::kVersion;
    case HeadError::kTooLarge:
      return HttpDrop::kTooLarge;
    case HeadError::kTooManyHeaders:
      return HttpDrop::kTooManyHeaders;
    case HeadError::kBody:
      return HttpDrop::kBody;
  }
  return HttpDrop::kMalformed;
}

}  // namespace fabricwatch::http
