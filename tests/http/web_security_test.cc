// TLS and basic auth of the HTTP server, with real certificates (made by openssl for the test)
// and a real TLS client (curl), following exporter-toolkit's TestServerBehaviour table: TLS
// versions, cipher suites, every client_auth_type with no, a trusted and an untrusted client
// certificate, client_allowed_sans, basic auth, security headers, the rate limit.
#include "http/web_security.h"

#include <crypt.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <thread>

#include "core/openssl.h"
#include "http/http_server.h"
#include "tests/support/process.h"
#include "tests/support/tcp_client.h"
#include "tests/support/test_pki.h"

namespace fabricwatch::http {
namespace {

using namespace std::chrono_literals;
using testing::TestPki;

const std::string& kAlice = testing::kAliceHash;  // alice123
const std::string& kBob = testing::kBobHash;      // bob123

TestPki& pki() { return TestPki::shared(); }

class WebSecurityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(pki().error, "");
    server_.route("/hello", [](const HttpRequest&) {
      return HttpResponse{200, "text/plain", "hello"};
    });
    server_.route("/healthz", [](const HttpRequest&) {
      return HttpResponse{200, "text/plain", "ok"};
    });
  }
  void TearDown() override { server_.stop(); }

  // Starts the server with a web config (relative paths are taken from the PKI's directory).
  void start(const std::string& web_config, std::set<std::string> exempt = {}) {
    auto l = buildWebSecurity(web_config, pki().dir.path() + "/web.yml");
    ASSERT_TRUE(l.problems.empty()) << core::formatAll(l.problems);
    server_.setSecurity(l.security);
    HttpOptions o;
    o.listen_address = "127.0.0.1:0";
    o.threads = 2;
    o.request_timeout_ms = 2000;
    o.auth_exempt_paths = std::move(exempt);
    ASSERT_TRUE(server_.start(o));
  }

  // curl's answer: the HTTP status ("000" when the connection or handshake failed).
  std::string curl(std::vector<std::string> args, const std::string& path = "/hello",
                   bool tls = true) {
    std::vector<std::string> argv = {"/usr/bin/curl", "-s",         "-o", "/dev/null", "-w",
                                     "%{http_code}",  "--max-time", "10"};
    if (tls) {
      argv.push_back("--cacert");
      argv.push_back(pki().ca_crt);
    }
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back(std::string(tls ? "https" : "http") +
                   "://localhost:" + std::to_string(server_.port()) + path);
    return testing::runCommand(argv).out;
  }
  std::vector<std::string> cert(const std::string& base) {
    return {"--cert", base + ".crt", "--key", base + ".key"};
  }

  HttpServer server_;
};

const std::string kTls = "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n";

TEST_F(WebSecurityTest, ServesTlsWithTheConfiguredCertificate) {
  start(kTls);
  EXPECT_EQ(curl({}), "200");
  // The client does not trust the certificate without the CA.
  auto r = testing::runCommand({"/usr/bin/curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                                "https://localhost:" + std::to_string(server_.port()) + "/hello"});
  EXPECT_EQ(r.out, "000");
  EXPECT_NE(r.exit_code, 0);
}

TEST_F(WebSecurityTest, ClientsHangingUpMidResponseDoNotKillTheServer) {
  auto big = std::make_shared<const std::string>(32 << 20, 'x');
  server_.route("/big", [big](const HttpRequest&) {
    HttpResponse r{200, "text/plain", ""};
    r.shared_body = big;
    return r;
  });
  start(kTls);
  // A client that asks and hangs up at once: OpenSSL's writes of the answer then meet a closed
  // socket (SIGPIPE unless ignored: the whole process would die).
  std::string script =
      "import socket, ssl, sys\n"
      "ctx = ssl.create_default_context(cafile=sys.argv[1])\n"
      "for _ in range(3):\n"
      "    s = ctx.wrap_socket(socket.create_connection(('127.0.0.1', int(sys.argv[2]))),\n"
      "                        server_hostname='localhost')\n"
      "    s.sendall(b'GET /big HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n')\n"
      "    s.close()\n";
  auto r = testing::runCommand(
      {"/usr/bin/python3", "-c", script, pki().ca_crt, std::to_string(server_.port())});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(curl({}), "200");
}

TEST_F(WebSecurityTest, PlainHttpToTheTlsPortGetsAReadableRefusal) {
  start(kTls);
  auto c = testing::TcpClient::connect(server_.port());
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n"));
  std::string r = c->readUntil([](const std::string&) { return false; }, 10s);
  EXPECT_EQ(r.substr(0, 24), "HTTP/1.0 400 Bad Request") << r;
  EXPECT_NE(r.find("Client sent an HTTP request to an HTTPS server."), std::string::npos) << r;
  EXPECT_EQ(server_.dropped(HttpDrop::kTlsHandshake), 1u);
}

TEST_F(WebSecurityTest, HandshakeMustCompleteWithinTheRequestTimeout) {
  start(kTls);
  auto c = testing::TcpClient::connect(server_.port());
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->send(std::string("\x16\x03\x01", 3)));  // the start of a ClientHello, no more
  EXPECT_TRUE(c->waitClosed(10s));
  EXPECT_EQ(server_.dropped(HttpDrop::kHeadTimeout), 1u);
}

TEST_F(WebSecurityTest, MinAndMaxVersionsAreEnforced) {
  start(kTls + "  min_version: TLS13\n");
  EXPECT_EQ(curl({"--tls-max", "1.2"}), "000");
  EXPECT_EQ(curl({"--tlsv1.3"}), "200");
  EXPECT_GE(server_.dropped(HttpDrop::kTlsHandshake), 1u);
  server_.stop();
  start(kTls + "  max_version: TLS12\n");
  EXPECT_EQ(curl({"--tlsv1.3"}), "000");
  EXPECT_EQ(curl({"--tls-max", "1.2"}), "200");
}

TEST_F(WebSecurityTest, CipherSuitesLimitTls12) {
  start(kTls + "  max_version: TLS12\n  cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]\n");
  EXPECT_EQ(curl({"--ciphers", "ECDHE-RSA-AES128-GCM-SHA256"}), "200");
  EXPECT_EQ(curl({"--ciphers", "ECDHE-RSA-AES256-GCM-SHA384"}), "000");
}

TEST_F(WebSecurityTest, CurvePreferencesLimitKeyExchange) {
  start(kTls + "  curve_preferences: [CurveP521]\n");
  EXPECT_EQ(curl({"--curves", "P-521"}), "200");
  EXPECT_EQ(curl({"--curves", "P-384"}), "000");
}

struct ClientAuthCase {
  std::string type;
  bool none, trusted,
      stranger;  // whether a client with no, a CA-signed, a self-signed cert gets in
};

TEST_F(WebSecurityTest, EveryClientAuthType) {
  std::vector<ClientAuthCase> cases = {
      {"NoClientCert", true, true, true},
      {"RequestClientCert", true, true, true},
      {"RequireAnyClientCert", false, true, true},
      {"VerifyClientCertIfGiven", true, true, false},
      {"RequireAndVerifyClientCert", false, true, false},
  };
  std::string client = pki().dir.path() + "/client";
  std::string stranger = pki().dir.path() + "/stranger";
  for (const auto& c : cases) {
    std::string ca = c.type == "NoClientCert" ? "" : "  client_ca_file: ca.crt\n";
    start(kTls + "  client_auth_type: " + c.type + "\n" + ca);
    auto in = [](const std::string& s) { return s == "200"; };
    EXPECT_EQ(in(curl({})), c.none) << c.type << " without a certificate";
    EXPECT_EQ(in(curl(cert(client))), c.trusted) << c.type << " with a trusted certificate";
    EXPECT_EQ(in(curl(cert(stranger))), c.stranger) << c.type << " with an unknown certificate";
    server_.stop();
  }
}

TEST_F(WebSecurityTest, ClientAllowedSansNarrowVerifiedClients) {
  std::string other = pki().clientWithSan("other-client", "someone-else");
  ASSERT_EQ(pki().error, "");
  start(kTls +
        "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.crt\n"
        "  client_allowed_sans: [one, good-client, two]\n");
  EXPECT_EQ(curl(cert(pki().dir.path() + "/client")), "200");
  EXPECT_EQ(curl(cert(other)), "000");
}

TEST_F(WebSecurityTest, BasicAuthGuardsEveryRouteButTheExemptOnes) {
  start(kTls + "basic_auth_users:\n  alice: " + kAlice + "\n  bob: " + kBob + "\n", {"/healthz"});
  EXPECT_EQ(curl({}), "401");
  EXPECT_EQ(curl({"-u", "alice:alice123"}), "200");
  EXPECT_EQ(curl({"-u", "alice:alice123"}), "200");  // from the cache this time
  EXPECT_EQ(curl({"-u", "bob:bob123"}), "200");
  EXPECT_EQ(curl({"-u", "alice:bob123"}), "401");
  EXPECT_EQ(curl({"-u", "mallory:alice123"}), "401");
  EXPECT_EQ(curl({"-u", "alice:alice123"}, "/nope"), "404");
  EXPECT_EQ(curl({}, "/nope"), "401") << "unknown paths are not revealed without credentials";
  EXPECT_EQ(curl({}, "/healthz"), "200");
  // The challenge names the scheme.
  auto r = testing::runCommand({"/usr/bin/curl", "-s", "-i", "--cacert", pki().ca_crt,
                                "https://localhost:" + std::to_string(server_.port()) + "/hello"});
  EXPECT_NE(r.out.find("WWW-Authenticate: Basic"), std::string::npos) << r.out;
}

TEST_F(WebSecurityTest, BasicAuthWithoutTls) {
  // web_config_users_noTLS.good.yml
  start("basic_auth_users:\n  alice: " + kAlice + "\n");
  EXPECT_EQ(curl({}, "/hello", false), "401");
  EXPECT_EQ(curl({"-u", "alice:alice123"}, "/hello", false), "200");
}

TEST_F(WebSecurityTest, SecurityHeadersAreSent) {
  // web_config_headers.good.yml
  start(R"(http_server_config:
  headers:
    X-Frame-Options: deny
    Strict-Transport-Security: max-age=31536000; includeSubDomains
    X-Content-Type-Options: nosniff
    X-XSS-Protection: 1
    Content-Security-Policy: "default-src 'self' *.test.example.net"
)");
  auto r = testing::runCommand({"/usr/bin/curl", "-s", "-i",
                                "http://localhost:" + std::to_string(server_.port()) + "/hello"});
  for (const char* h : {"X-Frame-Options: deny\r\n",
                        "Strict-Transport-Security: max-age=31536000; includeSubDomains\r\n",
                        "X-Content-Type-Options: nosniff\r\n", "X-XSS-Protection: 1\r\n",
                        "Content-Security-Policy: default-src 'self' *.test.example.net\r\n"})
    EXPECT_NE(r.out.find(h), std::string::npos) << h << r.out;
}

TEST_F(WebSecurityTest, RateLimitAnswers429) {
  // web_config_rate_limiter_one_second.yaml, with an interval that cannot refill mid-test.
  start("rate_limit:\n  burst: 2\n  interval: 1h\n");
  EXPECT_EQ(curl({}, "/hello", false), "200");
  EXPECT_EQ(curl({}, "/hello", false), "200");
  EXPECT_EQ(curl({}, "/hello", false), "429");
}

// issue 23 item 4: the rate limit was one bucket for everyone, taken before authentication, so
// an unauthenticated pipelined /healthz flood got every authenticated scrape a 429. Buckets are
// per client now: a flood from another address, or an unauthenticated one from the scraper's
// own address, empties only its own bucket.
TEST_F(WebSecurityTest, AnUnauthenticatedFloodCannotRateLimitAuthenticatedScrapers) {
  // No refill within the test: what each client gets is its burst.
  start("basic_auth_users:\n  alice: " + kAlice + "\nrate_limit:\n  burst: 20\n  interval: 1h\n",
        {"/healthz"});
  const std::string flood_request = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
  const std::string scrape =
      "GET /hello HTTP/1.1\r\nHost: x\r\nAuthorization: Basic YWxpY2U6YWxpY2UxMjM=\r\n\r\n";
  auto other = testing::TcpClient::connect(server_.port(), "127.0.0.2");
  auto same = testing::TcpClient::connect(server_.port(), "127.0.0.1");
  auto scraper = testing::TcpClient::connect(server_.port(), "127.0.0.1");
  ASSERT_TRUE(other && same && scraper);
  constexpr int kScrapes = 20, kBatch = 25;
  int scraped = 0, flood_ok = 0, flood_429 = 0;
  auto flood = [&](testing::TcpClient& c) {
    std::string batch;
    for (int j = 0; j < kBatch; ++j) batch += flood_request;
    ASSERT_TRUE(c.send(batch));
    for (int j = 0; j < kBatch; ++j) {
      std::string r = c.readResponse();
      if (r.rfind("HTTP/1.1 200", 0) == 0) ++flood_ok;
      if (r.rfind("HTTP/1.1 429", 0) == 0) ++flood_429;
    }
  };
  for (int i = 0; i < kScrapes; ++i) {
    flood(*other);
    // From the scraper's own address too, once its credentials are verified (its first scrape
    // is charged to its address, as a password guess would be).
    if (i > 0) flood(*same);
    ASSERT_TRUE(scraper->send(scrape));
    if (scraper->readResponse().rfind("HTTP/1.1 200", 0) == 0) ++scraped;
  }
  std::printf("authenticated scrapes answered 200: %d of %d; flood: %d answered 200, %d 429\n",
              scraped, kScrapes, flood_ok, flood_429);
  EXPECT_EQ(scraped, kScrapes);
  // Each flooding bucket gave its burst and no more (127.0.0.1's less the scraper's first).
  EXPECT_EQ(flood_ok, 39);
  EXPECT_EQ(flood_429, (2 * kScrapes - 1) * kBatch - 39);
}

// Password guessing fills the password thread's queue: what does not fit is answered 503 at
// once and counted, and a scraper whose credentials were verified before is answered meanwhile
// (its check is a cache hit, not a place in the queue).
TEST(WebSecurityAuthTest, GuessingCannotDelayVerifiedScrapers) {
  // A costly hash (bcrypt cost 13, about half a second a check) for the guessed name: a full
  // queue takes half a minute to drain.
  char salt[CRYPT_GENSALT_OUTPUT_SIZE];
  ASSERT_TRUE(crypt_gensalt_rn("$2b$", 13, nullptr, 0, salt, sizeof salt));
  auto data = std::make_unique<crypt_data>();
  std::memset(data.get(), 0, sizeof(crypt_data));
  std::string slow = crypt_rn("not-guessable", salt, data.get(), sizeof(crypt_data));
  auto l = buildWebSecurity("basic_auth_users:\n  alice: " + kAlice + "\n  root: " + slow + "\n",
                            "/web.yml");
  ASSERT_TRUE(l.problems.empty()) << core::formatAll(l.problems);
  HttpServer server;
  server.route("/metrics", [](const HttpRequest&) { return HttpResponse{200, "text/plain", "m"}; });
  server.setSecurity(l.security);
  HttpOptions o;
  o.listen_address = "127.0.0.1:0";
  o.max_connections = o.max_connections_per_address = 512;
  ASSERT_TRUE(server.start(o));
  auto request = [](const std::string& auth) {
    return "GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Basic " + auth + "\r\n\r\n";
  };
  const std::string alice = "YWxpY2U6YWxpY2UxMjM=";  // alice:alice123
  // alice is verified once: her next scrapes are cache hits.
  {
    auto c = testing::TcpClient::connect(server.port());
    ASSERT_TRUE(c && c->send(request(alice)));
    ASSERT_EQ(c->readResponse().substr(0, 12), "HTTP/1.1 200");
  }
  // 200 guesses at root's password at once, each on a connection of its own.
  constexpr int kGuesses = 200;
  std::vector<testing::TcpClient> guesses;
  for (int i = 0; i < kGuesses; ++i) {
    auto c = testing::TcpClient::connect(server.port());
    ASSERT_TRUE(c);
    ASSERT_TRUE(c->send(request("cm9vdDpndWVzcw==")));  // root:guess
    guesses.push_back(std::move(*c));
  }
  // The queue holds 64 and a check takes hundreds of milliseconds: most guesses are refused
  // at once (all but the few checked while the 200 arrive, on a loaded machine).
  auto deadline = std::chrono::steady_clock::now() + 30s;
  while (server.dropped(HttpDrop::kAuthBusy) < kGuesses / 2 &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(10ms);
  EXPECT_GE(server.dropped(HttpDrop::kAuthBusy), static_cast<uint64_t>(kGuesses / 2));
  // Those were answered 503, asking to retry (the others are still waiting: a short look each).
  std::string refused;
  for (auto g = guesses.rbegin(); g != guesses.rend() && refused.empty(); ++g) {
    std::string r = g->readUntil(
        [](const std::string& in) { return in.find("\r\n\r\n") != std::string::npos; }, 100ms);
    if (r.rfind("HTTP/1.1 503", 0) == 0) refused = r;
  }
  EXPECT_NE(refused.find("Retry-After: 1\r\n"), std::string::npos) << refused;
  // The queue takes many seconds to drain (64 checks at cost 13); alice does not wait for it.
  auto c = testing::TcpClient::connect(server.port());
  ASSERT_TRUE(c && c->send(request(alice)));
  EXPECT_EQ(c->readResponse(10s).substr(0, 12), "HTTP/1.1 200");
  server.stop();  // drops the checks still queued
}

TEST(WebSecurityLoadTest, FilesThatDoNotLoadArePositioned) {
  ASSERT_EQ(pki().error, "");
  std::string dir = pki().dir.path();
  auto problems = [&](const std::string& text) {
    return core::formatAll(buildWebSecurity(text, dir + "/web.yml").problems);
  };
  EXPECT_NE(problems("tls_server_config:\n  cert_file: nope.crt\n  key_file: server.key\n")
                .find(dir + "/web.yml:2:14: cannot read cert_file \"" + dir +
                      "/nope.crt\": No such file or directory"),
            std::string::npos);
  EXPECT_NE(problems("tls_server_config:\n  cert_file: server.crt\n  key_file: client.key\n")
                .find(dir + "/web.yml:3:13: the private key does not match the certificate"),
            std::string::npos)
      << problems("tls_server_config:\n  cert_file: server.crt\n  key_file: client.key\n");
  EXPECT_NE(problems("tls_server_config:\n  cert_file: server.key\n  key_file: server.key\n")
                .find("web.yml:2:14: no PEM certificate"),
            std::string::npos);
  EXPECT_NE(problems("tls_server_config:\n  cert_file: /dev\n  key_file: server.key\n")
                .find("\"/dev\" is not a regular file"),
            std::string::npos);
  // Inline PEM (the toolkit's cert and key) works as the files do.
  std::ifstream c(pki().server_crt), k(pki().server_key);
  std::string crt((std::istreambuf_iterator<char>(c)), {}),
      key((std::istreambuf_iterator<char>(k)), {});
  auto indent = [](std::string s) {
    std::string out;
    for (char ch : s) out += ch == '\n' ? std::string("\n    ") : std::string(1, ch);
    return out;
  };
  auto inline_load = buildWebSecurity(
      "tls_server_config:\n  cert: |\n    " + indent(crt) + "\n  key: |\n    " + indent(key) + "\n",
      dir + "/web.yml");
  EXPECT_TRUE(inline_load.problems.empty()) << core::formatAll(inline_load.problems);
  EXPECT_TRUE(inline_load.security && inline_load.security->tlsContext());
}

// OpenSSL is loaded when a web configuration first asks for TLS or users, and a host without it
// gets a positioned configuration problem (exit 2 at start, the last good file kept on reload).
// Each case runs in a fresh process (a "threadsafe" death test re-executes this binary), where
// nothing loaded OpenSSL before.
class WebSecurityOpenSslTest : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(WebSecurityOpenSslTest, HeadersAndRateLimitAloneDoNotLoadOpenSsl) {
  EXPECT_EXIT(
      {
        auto l = buildWebSecurity(
            "http_server_config:\n  headers:\n    X-Frame-Options: deny\n"
            "rate_limit:\n  burst: 5\n  interval: 1s\n",
            "/etc/fabricwatch/web.yml");
        std::exit(l.security && l.problems.empty() && !core::openssl::loaded() ? 3 : 0);
      },
      ::testing::ExitedWithCode(3), "");
  EXPECT_EXIT(
      {
        auto l = buildWebSecurity("basic_auth_users:\n  alice: " + kAlice + "\n",
                                  "/etc/fabricwatch/web.yml");
        std::exit(l.security && core::openssl::loaded() ? 3 : 0);
      },
      ::testing::ExitedWithCode(3), "");
}

TEST_F(WebSecurityOpenSslTest, WithoutOpenSslTlsAndUsersAreConfigurationProblems) {
  EXPECT_EXIT(
      {
        core::openssl::testing::useLibrary("libssl.so.0-fabricwatch-missing");
        auto l = buildWebSecurity("tls_server_config:\n  cert_file: a.crt\n  key_file: a.key\n",
                                  "/etc/fabricwatch/web.yml");
        std::fprintf(stderr, "%s", core::formatAll(l.problems).c_str());
        std::exit(!l.security && l.problems.size() == 1 ? 2 : 0);
      },
      ::testing::ExitedWithCode(2),
      "/etc/fabricwatch/web.yml:2:3: TLS \\(tls_server_config\\) needs "
      "libssl\\.so\\.0-fabricwatch-missing \\(OpenSSL 3\\): .*cannot open shared object file");
  EXPECT_EXIT(
      {
        core::openssl::testing::useLibrary("libssl.so.0-fabricwatch-missing");
        auto l = buildWebSecurity("basic_auth_users:\n  alice: " + kAlice + "\n",
                                  "/etc/fabricwatch/web.yml");
        std::fprintf(stderr, "%s", core::formatAll(l.problems).c_str());
        std::exit(!l.security && l.problems.size() == 1 ? 2 : 0);
      },
      ::testing::ExitedWithCode(2),
      "/etc/fabricwatch/web.yml:2:3: basic auth \\(basic_auth_users\\) needs "
      "libssl\\.so\\.0-fabricwatch-missing \\(OpenSSL 3\\)");
}

}  // namespace
}  // namespace fabricwatch::http
