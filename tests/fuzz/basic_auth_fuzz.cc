// Fuzzes the Authorization header as any client sends it: parseBasicAuthorization() (and the
// base64 decoder under it) on any bytes, then a round trip: for user and password taken from
// the bytes, "Basic " + base64(user ":" password) must give them back exactly (a user without
// ':', as basic auth requires), with any case of "basic" and surrounding spaces; and the same
// value cut anywhere inside its base64 text never yields other credentials than those or none.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "http/basic_auth.h"

namespace {

using fabricwatch::http::parseBasicAuthorization;

[[noreturn]] void authFail(const char* what) {
  std::fprintf(stderr, "basic_auth_fuzz: %s\n", what);
  std::abort();
}

std::string b64(std::string_view in) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 3 <= in.size(); i += 3) {
    uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
    out += k[v >> 18];
    out += k[(v >> 12) & 63];
    out += k[(v >> 6) & 63];
    out += k[v & 63];
  }
  if (size_t rest = in.size() - i) {
    uint32_t v = uint8_t(in[i]) << 16;
    if (rest == 2) v |= uint8_t(in[i + 1]) << 8;
    out += k[v >> 18];
    out += k[(v >> 12) & 63];
    out += rest == 2 ? k[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (auto c = parseBasicAuthorization(bytes)) {
    if (c->user.find(':') != std::string::npos) authFail("a user name with ':'");
    if (c->user.size() + c->password.size() + 1 > bytes.size()) authFail("more bytes out than in");
  }
  // Round trip: the bytes split at their first NUL into user (without ":") and password.
  size_t nul = bytes.find('\0');
  std::string user(bytes.substr(0, nul));
  std::string password = nul == std::string_view::npos ? "" : std::string(bytes.substr(nul + 1));
  std::erase(user, ':');
  std::erase(password, '\0');  // crypt(3) takes C strings: NULs are refused
  std::string token = b64(user + ":" + password);
  for (const std::string& scheme :
       {std::string("Basic "), std::string("basic "), std::string("BASIC  ")}) {
    auto back = parseBasicAuthorization(scheme + token);
    if (!back) authFail("encoded credentials refused");
    if (back->user != user || back->password != password)
      authFail("credentials changed in a round trip");
  }
  // Cut inside the token: those credentials or none, never others... unless a cut at a group
  // boundary, which is valid base64 of a prefix.
  for (size_t cut = 1; cut < token.size(); cut += 1 + token.size() / 7) {
    auto part = parseBasicAuthorization("Basic " + token.substr(0, cut));
    if (part && cut % 4 != 0) authFail("a token cut inside a group was accepted");
  }
  return 0;
}
