#pragma once
// HTTP basic authentication against bcrypt hashes, as exporter-toolkit's basic_auth_users:
// crypt(3) from libxcrypt verifies the hash (no crypto of our own). An unknown user is checked
// against a configured hash all the same and refused, so the time taken does not tell which
// names exist. Verified credentials are remembered (a bounded set of keyed digests of
// user, password and hash, never the password) so a scraper pays bcrypt once, not per scrape.

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabricwatch::http {

struct Credentials {
  std::string user;
  std::string password;
};

// The credentials of an "Authorization: Basic base64(user:password)" header value; nullopt
// when it is absent or not that.
std::optional<Credentials> parseBasicAuthorization(std::string_view value);

// True when `hash` is a bcrypt hash crypt(3) takes: $2a$, $2b$ or $2y$, cost 04-31, 53 chars
// of salt and hash.
bool isBcryptHash(std::string_view hash);

// Verifies `password` against a bcrypt `hash` with crypt_rn(); false on any error.
bool bcryptVerify(const std::string& password, const std::string& hash);

class BasicAuth {
 public:
  static constexpr size_t kCacheEntries = 64;

  // users: name -> bcrypt hash (checked by the loader with isBcryptHash); not empty.
  explicit BasicAuth(std::map<std::string, std::string, std::less<>> users);

  // True when these credentials were verified before (cheap: one HMAC, constant-time compares).
  bool cached(const Credentials& c) const;
  // Verifies with bcrypt (tens of milliseconds or more): true for a known user with the right
  // password. Successes are cached.
  bool verify(const Credentials& c) const;

  size_t users() const { return users_.size(); }

 private:
  using Digest = std::array<unsigned char, 32>;
  Digest digest(const Credentials& c, const std::string& hash) const;

  std::map<std::string, std::string, std::less<>> users_;
  std::string dummy_hash_;               // one configured hash, checked for unknown users
  std::array<unsigned char, 32> key_{};  // per-process HMAC key of the cache digests
  mutable std::mutex mu_;
  mutable std::vector<Digest> cache_;  // ring of verified digests
  mutable size_t next_ = 0;
};

}  // namespace fabricwatch::http
