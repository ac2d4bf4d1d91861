// Issue 23, items 1 and 3, end to end with real sockets on loopback: clients from a few source
// addresses that do not read their answers (in plain text or over TLS), or that guess passwords
// over keep-alive, never cost a client at another address its scrapes.

#include <crypt.h>
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/diagnostic.h"
#include "http/http_server.h"
#include "http/web_security.h"
#include "tests/support/tcp_client.h"
#include "tests/support/test_pki.h"
#include "tests/support/tls_client.h"

namespace fabricwatch::http {
namespace {

using namespace std::chrono_literals;
using testing::TcpClient;

std::string fairGet(const std::string& path, const std::string& auth = "") {
  return "GET " + path + " HTTP/1.1\r\nHost: x\r\n" +
         (auth.empty() ? "" : "Authorization: Basic " + auth + "\r\n") + "\r\n";
}

// 4 addresses x 16 connections fill every slot (max_connections 64), each with SO_RCVBUF=1024,
// pipelining 200 requests for a 64 KiB answer and never reading. Before slow readers were
// evictable every scrape from a fifth address was refused (limit) until request_timeout.
TEST(HttpFairnessTest, SlowReadersCannotTakeEverySlot) {
  auto body = std::make_shared<const std::string>(64 << 10, 'f');
  std::atomic<int> answered{0};
  HttpServer server;
  server.route("/api/v1/facts", [&](const HttpRequest&) {
    ++answered;
    HttpResponse r{200, "application/json", ""};
    r.shared_body = body;
    return r;
  });
  server.route("/metrics", [](const HttpRequest&) { return HttpResponse{200, "text/plain", "m"}; });
  HttpOptions o;
  o.listen_address = "127.0.0.1:0";
  o.threads = 2;
  o.max_connections = 64;
  o.max_connections_per_address = 16;
  o.request_timeout_ms = 60000;  // longer than the test: only eviction can make room
  ASSERT_TRUE(server.start(o));
  std::string pipeline;
  for (int i = 0; i < 200; ++i) pipeline += fairGet("/api/v1/facts");
  std::vector<TcpClient> readers;
  for (int a = 2; a <= 5; ++a) {
    for (int i = 0; i < 16; ++i) {
      auto c = TcpClient::connect(server.port(), "127.0.0." + std::to_string(a));
      ASSERT_TRUE(c);
      int small = 1024;
      setsockopt(c->fd(), SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
      ASSERT_TRUE(c->send(pipeline));
      readers.push_back(std::move(*c));
    }
  }
  // Every slot is taken and the answers have stopped moving (the readers' windows are full).
  auto deadline = std::chrono::steady_clock::now() + 20s;
  int last = -1;
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(200ms);
    if (server.openConnections() == 64 && answered.load() == last) break;
    last = answered.load();
  }
  ASSERT_EQ(server.openConnections(), 64);
  // A scraper at another address, a new connection per scrape: every one answered.
  constexpr int kScrapes = 20;
  int ok = 0;
  for (int i = 0; i < kScrapes; ++i) {
    auto c = TcpClient::connect(server.port(), "127.0.0.9");
    ASSERT_TRUE(c);
    if (c->send(fairGet("/metrics")) && c->readResponse(5s).rfind("HTTP/1.1 200", 0) == 0) ++ok;
  }
  EXPECT_EQ(ok, kScrapes);
  EXPECT_EQ(server.dropped(HttpDrop::kLimit), 0u);
  // The first scrape evicted a reader; the next ones took the slot each scrape left.
  EXPECT_GE(server.dropped(HttpDrop::kEvicted), 1u);
  // A reader's address at its cap makes room from its own readers, not by refusal.
  auto again = TcpClient::connect(server.port(), "127.0.0.5");
  ASSERT_TRUE(again);
  ASSERT_TRUE(again->send(fairGet("/metrics")));
  EXPECT_EQ(again->readResponse(5s).substr(0, 12), "HTTP/1.1 200");
  EXPECT_EQ(server.dropped(HttpDrop::kAddressLimit), 0u);
  server.stop();
}

// The same attack over TLS, with valid credentials (issue 23 item 1: 66 of 92 scrapes refused
// before slow readers were evictable): the answers back up in TLS records rather than in plain
// bytes, and a scraper at another address is still answered every time.
TEST(HttpFairnessTest, SlowTlsReadersWithCredentialsCannotTakeEverySlot) {
  const auto& pki = testing::TestPki::shared();
  ASSERT_EQ(pki.error, "");
  auto loaded = buildWebSecurity("tls_server_config:\n  cert_file: " + pki.server_crt +
                                     "\n  key_file: " + pki.server_key +
                                     "\nbasic_auth_users:\n  alice: " + testing::kAliceHash + "\n",
                                 "/web.yml");
  ASSERT_TRUE(loaded.problems.empty()) << core::formatAll(loaded.problems);
  auto body = std::make_shared<const std::string>(64 << 10, 'f');
  std::atomic<int> answered{0};
  HttpServer server;
  server.route("/api/v1/facts", [&](const HttpRequest&) {
    ++answered;
    HttpResponse r{200, "application/json", ""};
    r.shared_body = body;
    return r;
  });
  server.route("/metrics", [](const HttpRequest&) { return HttpResponse{200, "text/plain", "m"}; });
  server.setSecurity(loaded.security);
  HttpOptions o;
  o.listen_address = "127.0.0.1:0";
  o.threads = 2;
  o.max_connections = 32;
  o.max_connections_per_address = 8;
  o.request_timeout_ms = 60000;  // longer than the test: only eviction can make room
  ASSERT_TRUE(server.start(o));
  const std::string alice = "YWxpY2U6YWxpY2UxMjM=";  // alice:alice123
  std::string pipeline;
  for (int i = 0; i < 200; ++i) pipeline += fairGet("/api/v1/facts", alice);
  std::vector<std::unique_ptr<testing::TlsClient>> readers;
  for (int a = 2; a <= 5; ++a) {
    for (int i = 0; i < 8; ++i) {
      auto c = TcpClient::connect(server.port(), "127.0.0." + std::to_string(a));
      ASSERT_TRUE(c);
      int small = 1024;
      setsockopt(c->fd(), SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
      auto tls = std::make_unique<testing::TlsClient>(std::move(*c));
      ASSERT_TRUE(tls->ok());
      ASSERT_TRUE(tls->send(pipeline));
      readers.push_back(std::move(tls));
    }
  }
  auto deadline = std::chrono::steady_clock::now() + 20s;
  int last = -1;
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(200ms);
    if (server.openConnections() == 32 && answered.load() == last) break;
    last = answered.load();
  }
  ASSERT_EQ(server.openConnections(), 32);
  ASSERT_GT(answered.load(), 0) << "the readers were answered (authenticated) before they stalled";
  constexpr int kScrapes = 20;
  int ok = 0;
  for (int i = 0; i < kScrapes; ++i) {
    auto c = TcpClient::connect(server.port(), "127.0.0.9");
    ASSERT_TRUE(c);
    testing::TlsClient scraper(std::move(*c));
    if (scraper.ok() && scraper.get("/metrics", "Authorization: Basic " + alice + "\r\n") == 200)
      ++ok;
  }
  EXPECT_EQ(ok, kScrapes);
  EXPECT_EQ(server.dropped(HttpDrop::kLimit), 0u);
  EXPECT_GE(server.dropped(HttpDrop::kEvicted), 1u);
  server.stop();
}

// An address at its share of the slots does not evict another address's reader: it waits its
// turn like before (refused at the total cap), and the reader's answer is not cut.
TEST(HttpFairnessTest, AnAddressAtItsShareDoesNotCutAnotherAddressesAnswer) {
  auto body = std::make_shared<const std::string>(64 << 10, 'f');
  HttpServer server;
  server.route("/big", [&](const HttpRequest&) {
    HttpResponse r{200, "text/plain", ""};
    r.shared_body = body;
    return r;
  });
  HttpOptions o;
  o.listen_address = "127.0.0.1:0";
  o.max_connections = 4;
  o.max_connections_per_address = 4;
  o.request_timeout_ms = 60000;
  ASSERT_TRUE(server.start(o));
  std::string pipeline;
  for (int i = 0; i < 200; ++i) pipeline += fairGet("/big");  // more than socket buffers hold
  std::vector<TcpClient> readers;
  for (const char* a : {"127.0.0.2", "127.0.0.2", "127.0.0.3", "127.0.0.3"}) {
    auto c = TcpClient::connect(server.port(), a);
    ASSERT_TRUE(c);
    int small = 1024;
    setsockopt(c->fd(), SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    ASSERT_TRUE(c->send(pipeline));
    readers.push_back(std::move(*c));
  }
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (server.openConnections() < 4 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(10ms);
  std::this_thread::sleep_for(300ms);  // the answers fill the readers' windows
  // Two addresses, share 2 each: a third connection from 127.0.0.2 takes from its own.
  auto own = TcpClient::connect(server.port(), "127.0.0.2");
  ASSERT_TRUE(own);
  EXPECT_TRUE(own->send(fairGet("/big")));
  auto deadline2 = std::chrono::steady_clock::now() + 10s;
  while (server.dropped(HttpDrop::kEvicted) + server.dropped(HttpDrop::kLimit) == 0 &&
         std::chrono::steady_clock::now() < deadline2)
    std::this_thread::sleep_for(10ms);
  EXPECT_EQ(server.dropped(HttpDrop::kEvicted), 1u);
  EXPECT_EQ(server.dropped(HttpDrop::kLimit), 0u);
  // 127.0.0.3's two readers are still there: their answers keep coming when they read.
  for (size_t i = 2; i < 4; ++i)
    EXPECT_EQ(readers[i].readResponse(10s).substr(0, 12), "HTTP/1.1 200") << i;
  server.stop();
}

// 8 addresses x 12 keep-alive connections guess a password (bcrypt cost 10) without pause, so
// that more than the password queue's 64 places are always asked for; the credential cache is
// emptied before each scrape (a reload), so every scrape of the legitimate client needs a check
// of its own. Before the queue was shared by address, every such scrape was answered 503.
TEST(HttpFairnessTest, PasswordGuessingFromEightAddressesCannotLockAScraperOut) {
  char salt[CRYPT_GENSALT_OUTPUT_SIZE];
  ASSERT_TRUE(crypt_gensalt_rn("$2b$", 10, nullptr, 0, salt, sizeof salt));
  auto data = std::make_unique<crypt_data>();
  std::memset(data.get(), 0, sizeof(crypt_data));
  std::string slow = crypt_rn("not-guessable", salt, data.get(), sizeof(crypt_data));
  const std::string file =
      "basic_auth_users:\n  alice: " + testing::kAliceHash + "\n  root: " + slow + "\n";
  auto fresh = [&] {
    auto l = buildWebSecurity(file, "/web.yml");
    EXPECT_TRUE(l.problems.empty()) << core::formatAll(l.problems);
    return l.security;
  };
  HttpServer server;
  server.route("/metrics", [](const HttpRequest&) { return HttpResponse{200, "text/plain", "m"}; });
  server.setSecurity(fresh());
  HttpOptions o;
  o.listen_address = "127.0.0.1:0";
  o.max_connections = 512;
  o.max_connections_per_address = 64;
  ASSERT_TRUE(server.start(o));
  int port = server.port();
  std::atomic<bool> stop{false};
  std::atomic<int> guesses{0};
  std::vector<std::thread> flood;
  for (int a = 2; a <= 9; ++a) {
    for (int i = 0; i < 12; ++i) {
      flood.emplace_back([&, source = "127.0.0." + std::to_string(a)] {
        std::optional<TcpClient> c;
        while (!stop) {
          if (!c) c = TcpClient::connect(port, source);
          if (!c) continue;
          if (!c->send(fairGet("/metrics", "cm9vdDpndWVzcw=="))) {  // root:guess
            c.reset();
            continue;
          }
          std::string r = c->readResponse(2s);
          ++guesses;
          if (r.rfind("HTTP/1.1 401", 0) != 0) c.reset();  // 503 closes; so does a timeout
        }
      });
    }
  }
  // The flood is on: the queue is full and refusing.
  auto deadline = std::chrono::steady_clock::now() + 30s;
  while (server.dropped(HttpDrop::kAuthBusy) < 50 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(10ms);
  ASSERT_GE(server.dropped(HttpDrop::kAuthBusy), 50u);
  const std::string alice = "YWxpY2U6YWxpY2UxMjM=";  // alice:alice123
  constexpr int kScrapes = 10;
  int ok = 0;
  for (int i = 0; i < kScrapes; ++i) {
    server.setSecurity(fresh());  // a reload: nothing cached
    auto c = TcpClient::connect(port, "127.0.0.1");
    ASSERT_TRUE(c);
    std::string r = c->send(fairGet("/metrics", alice)) ? c->readResponse(10s) : "";
    if (r.rfind("HTTP/1.1 200", 0) == 0)
      ++ok;
    else
      ADD_FAILURE() << "scrape " << i << ": " << r.substr(0, 40);
  }
  stop = true;
  server.stop();  // answers nothing more: the flood's reads end at their timeout
  for (auto& t : flood) t.join();
  EXPECT_EQ(ok, kScrapes);
  EXPECT_GT(guesses.load(), 0);
}

}  // namespace
}  // namespace fabricwatch::http
