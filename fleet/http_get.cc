#include "fleet/http_get.h"

#include <curl/curl.h>
#include <dlfcn.h>

#include <mutex>
#include <type_traits>

namespace fabricwatch::fleet {
namespace {

// The few entry points used, resolved from the loaded library by their declared prototypes
// (curl/curl.h; the variadic ones are called with exactly the argument types the options take).
struct Curl {
  decltype(&::curl_global_init) global_init = nullptr;
  decltype(&::curl_easy_init) init = nullptr;
  decltype(&::curl_easy_setopt) setopt = nullptr;
  decltype(&::curl_easy_perform) perform = nullptr;
  decltype(&::curl_easy_getinfo) getinfo = nullptr;
  decltype(&::curl_easy_cleanup) cleanup = nullptr;
  decltype(&::curl_easy_strerror) strerror = nullptr;
  decltype(&::curl_slist_append) slist_append = nullptr;
  decltype(&::curl_slist_free_all) slist_free_all = nullptr;
  std::string error;  // why it could not be loaded
};

const Curl& curl() {
  static const Curl c = [] {
    Curl c;
    void* h = ::dlopen(kCurlLibrary, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* e = ::dlerror();
      c.error = std::string("diagnose needs ") + kCurlLibrary + " (libcurl): " + (e ? e : "");
      return c;
    }
    bool all = true;
    auto get = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(h, name));
      all = all && fn;
    };
    get(c.global_init, "curl_global_init");
    get(c.init, "curl_easy_init");
    get(c.setopt, "curl_easy_setopt");
    get(c.perform, "curl_easy_perform");
    get(c.getinfo, "curl_easy_getinfo");
    get(c.cleanup, "curl_easy_cleanup");
    get(c.strerror, "curl_easy_strerror");
    get(c.slist_append, "curl_slist_append");
    get(c.slist_free_all, "curl_slist_free_all");
    if (!all)
      c.error = std::string(kCurlLibrary) + " lacks an entry point diagnose uses";
    else if (c.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
      c.error = "curl_global_init failed";
    return c;
  }();
  return c;
}

struct Sink {
  std::string* body;
  size_t max_bytes;
  bool too_long = false;
};

size_t writeBody(char* data, size_t size, size_t n, void* user) {
  auto* sink = static_cast<Sink*>(user);
  size_t bytes = size * n;
  if (sink->body->size() + bytes > sink->max_bytes) {
    sink->too_long = true;
    return 0;  // curl stops with CURLE_WRITE_ERROR
  }
  sink->body->append(data, bytes);
  return bytes;
}

// http and https only, also after a redirect or in a proxy's answer. CURLOPT_PROTOCOLS_STR is
// 7.85's; an older library (Ubuntu 22.04 has 7.81) knows only the bitmask it replaced.
bool onlyHttp(const Curl& c, CURL* h) {
#if LIBCURL_VERSION_NUM >= 0x075500
  if (c.setopt(h, CURLOPT_PROTOCOLS_STR, "http,https") == CURLE_OK) return true;
#endif
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  return c.setopt(h, CURLOPT_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS)) ==
         CURLE_OK;
#pragma GCC diagnostic pop
}

}  // namespace

std::string urlEncode(std::string_view s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

core::Result<HttpReply> httpGet(const std::string& url, const HttpGetOptions& o) {
  if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0)
    return core::Error{"the URL must start with http:// or https://"};
  const Curl& c = curl();
  if (!c.error.empty()) return core::Error{c.error};
  CURL* h = c.init();
  if (!h) return core::Error{"curl_easy_init failed"};
  HttpReply reply;
  Sink sink{&reply.body, o.max_bytes};
  char error[CURL_ERROR_SIZE] = {0};
  curl_slist* headers = nullptr;
  auto set = [&](CURLoption opt, auto value) { return c.setopt(h, opt, value) == CURLE_OK; };
  bool ok = set(CURLOPT_URL, url.c_str()) && set(CURLOPT_ERRORBUFFER, error) &&
            set(CURLOPT_NOSIGNAL, 1L) && set(CURLOPT_FOLLOWLOCATION, 0L) && onlyHttp(c, h) &&
            set(CURLOPT_TIMEOUT_MS, static_cast<long>(o.timeout.count())) &&
            set(CURLOPT_WRITEFUNCTION, &writeBody) && set(CURLOPT_WRITEDATA, &sink) &&
            set(CURLOPT_USERAGENT, "fabricwatch-diagnose") &&
            set(CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(o.max_bytes));
  if (ok && !o.ca_file.empty()) ok = set(CURLOPT_CAINFO, o.ca_file.c_str());
  if (ok && !o.cert_file.empty()) ok = set(CURLOPT_SSLCERT, o.cert_file.c_str());
  if (ok && !o.key_file.empty()) ok = set(CURLOPT_SSLKEY, o.key_file.c_str());
  if (ok && o.insecure_skip_verify)
    ok = set(CURLOPT_SSL_VERIFYPEER, 0L) && set(CURLOPT_SSL_VERIFYHOST, 0L);
  if (ok && !o.username.empty())
    ok = set(CURLOPT_HTTPAUTH, static_cast<long>(CURLAUTH_BASIC)) &&
         set(CURLOPT_USERNAME, o.username.c_str()) && set(CURLOPT_PASSWORD, o.password.c_str());
  if (ok && !o.bearer_token.empty()) {
    std::string line = "Authorization: Bearer " + o.bearer_token;
    headers = c.slist_append(headers, line.c_str());
    ok = headers && set(CURLOPT_HTTPHEADER, headers);
  }
  CURLcode rc = ok ? c.perform(h) : CURLE_BAD_FUNCTION_ARGUMENT;
  if (rc == CURLE_OK) {
    c.getinfo(h, CURLINFO_RESPONSE_CODE, &reply.status);
    char* type = nullptr;
    if (c.getinfo(h, CURLINFO_CONTENT_TYPE, &type) == CURLE_OK && type) reply.content_type = type;
  }
  if (headers) c.slist_free_all(headers);
  c.cleanup(h);
  if (sink.too_long || rc == CURLE_FILESIZE_EXCEEDED)
    return core::Error{"the answer is over " + std::to_string(o.max_bytes) + " bytes"};
  if (rc != CURLE_OK) return core::Error{error[0] ? std::string(error) : c.strerror(rc)};
  return reply;
}

}  // namespace fabricwatch::fleet
