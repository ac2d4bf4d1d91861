// exporter-toolkit's basic-auth tests (web/handler_test.go) as the checklist: bcrypt hashes of
// every prefix, bad hashes refused, unknown users checked against a hash all the same, the
// cache of verified credentials and its poisoning (CVE-2022-46146).
#include "http/basic_auth.h"

#include <crypt.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <memory>

#include "tests/support/with_openssl.h"

namespace fabricwatch::http {
namespace {

// The toolkit's testdata: dave's password is dave123 ($2y$, cost 10).
const std::string kDave = "$2y$10$2UXri9cIDdgeKjBo4Rlpx.U3ZLDV8X1IxKmsfOvhcM5oXQt/mLmXq";

// A bcrypt hash made with libxcrypt itself; cost 4 keeps the tests fast.
std::string hash(const std::string& password, int cost = 4) {
  char salt[CRYPT_GENSALT_OUTPUT_SIZE];
  EXPECT_TRUE(crypt_gensalt_rn("$2b$", cost, nullptr, 0, salt, sizeof salt));
  auto data = std::make_unique<crypt_data>();
  std::memset(data.get(), 0, sizeof(crypt_data));
  return crypt_rn(password.c_str(), salt, data.get(), sizeof(crypt_data));
}

std::string basic(const std::string& user_colon_password) {
  // A small base64 encoder for the test (RFC 4648, padded).
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  const auto& s = user_colon_password;
  for (size_t i = 0; i < s.size(); i += 3) {
    uint32_t n = static_cast<unsigned char>(s[i]) << 16;
    if (i + 1 < s.size()) n |= static_cast<unsigned char>(s[i + 1]) << 8;
    if (i + 2 < s.size()) n |= static_cast<unsigned char>(s[i + 2]);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += i + 1 < s.size() ? kAlphabet[(n >> 6) & 63] : '=';
    out += i + 2 < s.size() ? kAlphabet[n & 63] : '=';
  }
  return "Basic " + out;
}

// BasicAuth built by hand, without a web configuration: OpenSSL is loaded as it would.
class BasicAuthTest : public testing::WithOpenSsl {};

TEST_F(BasicAuthTest, ParsesTheAuthorizationHeader) {
  auto c = parseBasicAuthorization(basic("alice:pa:ss word"));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->user, "alice");
  EXPECT_EQ(c->password, "pa:ss word");  // the first colon splits
  auto lower = parseBasicAuthorization("basic " + basic("a:b").substr(6));
  ASSERT_TRUE(lower);
  EXPECT_EQ(lower->user, "a");
  EXPECT_TRUE(parseBasicAuthorization(basic(":")));  // empty user and password parse
  EXPECT_FALSE(parseBasicAuthorization(""));
  EXPECT_FALSE(parseBasicAuthorization("Bearer abc"));
  EXPECT_FALSE(parseBasicAuthorization("Basic"));
  EXPECT_FALSE(parseBasicAuthorization("Basic !!!!"));
  EXPECT_FALSE(parseBasicAuthorization("Basic YWJj"));                     // "abc": no colon
  EXPECT_FALSE(parseBasicAuthorization("Basic YTpi="));                    // bad padding
  EXPECT_FALSE(parseBasicAuthorization(basic(std::string("a:b\0c", 5))));  // NUL
}

TEST_F(BasicAuthTest, RecognisesBcryptHashesOnly) {
  EXPECT_TRUE(isBcryptHash(kDave));
  EXPECT_TRUE(isBcryptHash(hash("x")));
  EXPECT_TRUE(isBcryptHash("$2a$10$" + kDave.substr(7)));
  EXPECT_FALSE(isBcryptHash("doe"));  // the toolkit's web_config_auth_user_list_invalid
  EXPECT_FALSE(isBcryptHash("$2x$10$" + kDave.substr(7)));
  EXPECT_FALSE(isBcryptHash("$2y$03$" + kDave.substr(7)));  // cost below 4
  EXPECT_FALSE(isBcryptHash("$2y$32$" + kDave.substr(7)));
  EXPECT_FALSE(isBcryptHash(kDave.substr(0, 59)));
  EXPECT_FALSE(isBcryptHash(kDave.substr(0, 59) + "!"));
  EXPECT_FALSE(isBcryptHash("$6$salt$" + std::string(86, 'a')));  // sha512crypt
}

TEST_F(BasicAuthTest, VerifiesBcryptOfEveryPrefix) {
  EXPECT_TRUE(bcryptVerify("dave123", kDave));  // $2y$ (htpasswd, Go)
  EXPECT_FALSE(bcryptVerify("dave1234", kDave));
  EXPECT_TRUE(bcryptVerify("secret", hash("secret")));  // $2b$
  std::string a = hash("secret");
  a[2] = 'a';
  EXPECT_TRUE(bcryptVerify("secret", a));  // $2a$
  EXPECT_FALSE(bcryptVerify("secret", "doe"));
  EXPECT_FALSE(bcryptVerify(std::string("secret\0x", 8), hash("secret")));
}

TEST_F(BasicAuthTest, KnownUsersWithTheRightPasswordOnly) {
  BasicAuth auth({{"alice", hash("alice123")}, {"dave", kDave}});
  EXPECT_TRUE(auth.verify({"alice", "alice123"}));
  EXPECT_FALSE(auth.verify({"alice", "alice1234"}));
  EXPECT_TRUE(auth.verify({"dave", "dave123"}));
  EXPECT_FALSE(auth.verify({"Alice", "alice123"}));
  EXPECT_FALSE(auth.verify({"", ""}));
}

// TestBasicAuthWithFakepassword: an unknown user is checked against a configured hash, whose
// password must not let anyone in under a name that does not exist.
TEST_F(BasicAuthTest, UnknownUsersAreCheckedAgainstAHashAndRefused) {
  BasicAuth auth({{"dave", kDave}});
  EXPECT_FALSE(auth.verify({"mallory", "dave123"}));
  EXPECT_FALSE(auth.verify({"mallory", "dave123"}));  // and not cached either
  EXPECT_FALSE(auth.cached({"mallory", "dave123"}));
  // The check costs what a known user's costs (bcrypt at cost 10 takes milliseconds; a lookup
  // that skipped it would take microseconds): timing does not tell names apart.
  auto t0 = std::chrono::steady_clock::now();
  auth.verify({"mallory", "x"});
  auto unknown = std::chrono::steady_clock::now() - t0;
  EXPECT_GT(unknown, std::chrono::milliseconds(5));
}

TEST_F(BasicAuthTest, VerifiedCredentialsAreCachedWrongOnesAreNot) {
  BasicAuth auth({{"alice", hash("alice123")}});
  EXPECT_FALSE(auth.cached({"alice", "alice123"}));
  EXPECT_TRUE(auth.verify({"alice", "alice123"}));
  EXPECT_TRUE(auth.cached({"alice", "alice123"}));
  EXPECT_FALSE(auth.cached({"alice", "alice1234"}));
  EXPECT_FALSE(auth.verify({"alice", "alice1234"}));
  EXPECT_FALSE(auth.cached({"alice", "alice1234"}));
}

TEST_F(BasicAuthTest, TheCacheIsBounded) {
  std::map<std::string, std::string, std::less<>> users;
  for (size_t i = 0; i <= BasicAuth::kCacheEntries; ++i)
    users["u" + std::to_string(i)] = hash("p" + std::to_string(i));
  BasicAuth auth(users);
  for (size_t i = 0; i <= BasicAuth::kCacheEntries; ++i)
    ASSERT_TRUE(auth.verify({"u" + std::to_string(i), "p" + std::to_string(i)}));
  // One more than it holds: the oldest made room.
  EXPECT_FALSE(auth.cached({"u0", "p0"}));
  EXPECT_TRUE(auth.cached({"u1", "p1"}));
  EXPECT_TRUE(auth.cached({"u" + std::to_string(BasicAuth::kCacheEntries),
                           "p" + std::to_string(BasicAuth::kCacheEntries)}));
}

// TestByPassBasicAuthVuln (CVE-2022-46146): credentials whose user name carries a hash must
// not poison the cache for a wrong password.
TEST_F(BasicAuthTest, CacheCannotBePoisonedThroughTheUserName) {
  std::string h = hash("alice123");
  BasicAuth auth({{"alice", h}});
  EXPECT_FALSE(auth.verify({"alice" + h, "fakepassword"}));
  EXPECT_FALSE(auth.verify({"alice", h + "fakepassword"}));
  EXPECT_FALSE(auth.cached({"alice", h + "fakepassword"}));
  EXPECT_TRUE(auth.verify({"alice", "alice123"}));
  EXPECT_FALSE(auth.cached({"alice" + h.substr(0, 3), h.substr(3) + "alice123"}));
}

}  // namespace
}  // namespace fabricwatch::http
