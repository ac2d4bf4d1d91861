#include "http/basic_auth.h"

#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/random.h>

#include <cctype>
#include <cstring>
#include <memory>

namespace fabricwatch::http {
namespace {

int base64Value(unsigned char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// Standard base64 with padding (RFC 4648 4), strict: nullopt on anything else.
std::optional<std::string> base64Decode(std::string_view in) {
  if (in.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(in.size() / 4 * 3);
  for (size_t i = 0; i < in.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int j = 0; j < 4; ++j) {
      unsigned char c = static_cast<unsigned char>(in[i + j]);
      if (c == '=' && i + 4 == in.size() && j >= 2) {
        v[j] = 0;
        ++pad;
        continue;
      }
      if (pad) return std::nullopt;  // data after padding
      v[j] = base64Value(c);
      if (v[j] < 0) return std::nullopt;
    }
    uint32_t n = (v[0] << 18) | (v[1] << 12) | (v[2] << 6) | v[3];
    out.push_back(static_cast<char>((n >> 16) & 0xff));
    if (pad < 2) out.push_back(static_cast<char>((n >> 8) & 0xff));
    if (pad < 1) out.push_back(static_cast<char>(n & 0xff));
  }
  return out;
}

void appendField(std::string& msg, std::string_view field) {
  uint64_t n = field.size();
  for (int i = 0; i < 8; ++i) msg.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  msg.append(field);
}

}  // namespace

std::optional<Credentials> parseBasicAuthorization(std::string_view value) {
  // auth-scheme is case-insensitive (RFC 9110 11.1).
  if (value.size() < 6) return std::nullopt;
  for (size_t i = 0; i < 5; ++i)
    if (std::tolower(static_cast<unsigned char>(value[i])) != "basic"[i]) return std::nullopt;
  if (value[5] != ' ') return std::nullopt;
  std::string_view token = value.substr(6);
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  auto decoded = base64Decode(token);
  if (!decoded) return std::nullopt;
  size_t colon = decoded->find(':');
  if (colon == std::string::npos) return std::nullopt;
  Credentials c{decoded->substr(0, colon), decoded->substr(colon + 1)};
  // crypt(3) takes C strings: a NUL would cut the password short.
  if (c.user.find('\0') != std::string::npos || c.password.find('\0') != std::string::npos)
    return std::nullopt;
  return c;
}

bool isBcryptHash(std::string_view h) {
  if (h.size() != 60 || h[0] != '$' || h[1] != '2' || h[3] != '$' || h[6] != '$') return false;
  if (h[2] != 'a' && h[2] != 'b' && h[2] != 'y') return false;
  if (!std::isdigit(static_cast<unsigned char>(h[4])) ||
      !std::isdigit(static_cast<unsigned char>(h[5])))
    return false;
  int cost = (h[4] - '0') * 10 + (h[5] - '0');
  if (cost < 4 || cost > 31) return false;
  for (size_t i = 7; i < h.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(h[i]);
    if (!std::isalnum(c) && c != '.' && c != '/') return false;
  }
  return true;
}

bool bcryptVerify(const std::string& password, const std::string& hash) {
  if (!isBcryptHash(hash) || password.find('\0') != std::string::npos) return false;
  auto data = std::make_unique<crypt_data>();  // ~32 KB: not on the stack
  std::memset(data.get(), 0, sizeof(crypt_data));
  const char* out = crypt_rn(password.c_str(), hash.c_str(), data.get(), sizeof(crypt_data));
  if (!out || std::strlen(out) != hash.size()) return false;
  bool ok = CRYPTO_memcmp(out, hash.data(), hash.size()) == 0;
  OPENSSL_cleanse(data.get(), sizeof(crypt_data));  // it held the password
  return ok;
}

BasicAuth::BasicAuth(std::map<std::string, std::string, std::less<>> users)
    : users_(std::move(users)) {
  // The dummy is the costliest configured hash: an unknown name takes at least as long as a
  // known one, and no password can pass it (the user is unknown whatever crypt says).
  for (const auto& [name, hash] : users_)
    if (dummy_hash_.empty() || hash.substr(4, 2) > dummy_hash_.substr(4, 2)) dummy_hash_ = hash;
  // getrandom(2) rather than RAND_bytes: 32 bytes from the kernel, never partial.
  if (getrandom(key_.data(), key_.size(), 0) != static_cast<ssize_t>(key_.size())) {
    // Without randomness the cache key is still a keyed digest, only with a fixed key.
    key_.fill(0x5c);
  }
  cache_.reserve(kCacheEntries);
}

BasicAuth::Digest BasicAuth::digest(const Credentials& c, const std::string& hash) const {
  // Length-prefixed fields: no user/password split can collide with another (the cache
  // poisoning of exporter-toolkit's CVE-2022-46146 came from joined strings).
  std::string msg;
  msg.reserve(24 + c.user.size() + c.password.size() + hash.size());
  appendField(msg, c.user);
  appendField(msg, c.password);
  appendField(msg, hash);
  Digest d{};
  unsigned int len = 0;
  HMAC(EVP_sha256(), key_.data(), static_cast<int>(key_.size()),
       reinterpret_cast<const unsigned char*>(msg.data()), msg.size(), d.data(), &len);
  OPENSSL_cleanse(msg.data(), msg.size());
  return d;
}

bool BasicAuth::cached(const Credentials& c) const {
  auto it = users_.find(c.user);
  if (it == users_.end()) return false;
  Digest d = digest(c, it->second);
  std::lock_guard lock(mu_);
  bool hit = false;
  for (const auto& e : cache_) hit |= CRYPTO_memcmp(e.data(), d.data(), d.size()) == 0;
  return hit;
}

bool BasicAuth::verify(const Credentials& c) const {
  auto it = users_.find(c.user);
  bool known = it != users_.end();
  const std::string& hash = known ? it->second : dummy_hash_;
  bool ok = bcryptVerify(c.password, hash) && known;
  if (ok) {
    Digest d = digest(c, hash);
    std::lock_guard lock(mu_);
    if (cache_.size() < kCacheEntries) {
      cache_.push_back(d);
    } else {
      cache_[next_] = d;
      next_ = (next_ + 1) % kCacheEntries;
    }
  }
  return ok;
}

}  // namespace fabricwatch::http
