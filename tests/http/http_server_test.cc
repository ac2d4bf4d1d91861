#include "http/http_server.h"

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>

#include "tests/support/http_client.h"
#include "tests/support/tcp_client.h"

namespace fabricwatch::http {
namespace {

using namespace std::chrono_literals;
using namespace std::string_literals;
using testing::TcpClient;

HttpOptions options(int threads = 2, int max_request_bytes = 2048, int request_timeout_ms = 1000) {
  HttpOptions o;
  o.listen_address = "127.0.0.1:0";
  o.threads = threads;
  o.max_request_bytes = max_request_bytes;
  o.request_timeout_ms = request_timeout_ms;
  return o;
}

std::string get(const std::string& path, const std::string& extra = "") {
  return "GET " + path + " HTTP/1.1\r\nHost: x\r\n" + extra + "\r\n";
}

class HttpServerFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    server_.route("/hello", [](const HttpRequest& r) {
      return HttpResponse{200, "text/plain", "hi " + r.query};
    });
    server_.route("/shared", [](const HttpRequest& r) {
      HttpResponse resp{200, "text/plain", "head:"};
      resp.shared_body = std::make_shared<const std::string>("tail");
      if (r.acceptsEncoding("x-test")) resp.content_encoding = "x-test";
      resp.body += std::string(r.header("x-probe"));
      return resp;
    });
    server_.route("/boom",
                  [](const HttpRequest&) -> HttpResponse { throw std::runtime_error("bad"); });
    // Answered where it is read: on the I/O thread.
    server_.route(
        "/io",
        [this](const HttpRequest& r) {
          std::lock_guard lock(mu_);
          handler_threads_.push_back(std::this_thread::get_id());
          char here;
          handler_stack_.push_back(reinterpret_cast<uintptr_t>(&here));
          return HttpResponse{200, "text/plain", "io " + r.query};
        },
        HttpServer::Runs::kIoThread);
    server_.observe([this](const std::string& route, int status, double) {
      std::lock_guard lock(mu_);
      seen_.push_back(route + " " + std::to_string(status));
      io_thread_ = std::this_thread::get_id();  // observers run where responses are written
    });
  }
  // Before the members the observer and the handlers use go away.
  void TearDown() override { server_.stop(); }
  void start(HttpOptions o = options()) {
    ASSERT_TRUE(server_.start(o));
    ASSERT_GT(server_.port(), 0);
  }
  std::vector<std::string> seen() {
    std::lock_guard lock(mu_);
    return seen_;
  }
  HttpServer server_;
  std::mutex mu_;
  std::vector<std::string> seen_;
  std::vector<std::thread::id> handler_threads_;
  std::thread::id io_thread_;
  std::vector<uintptr_t> handler_stack_;  // where the /io handler's frame was, per call
};

TEST_F(HttpServerFixture, RoutesExactPaths) {
  start();
  auto r = testing::httpGet("127.0.0.1", server_.port(), "/hello?x=1");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "hi x=1");
  EXPECT_EQ(testing::httpGet("127.0.0.1", server_.port(), "/hello/more")->status, 404);
  EXPECT_EQ(testing::httpGet("127.0.0.1", server_.port(), "/")->status, 404);
}

TEST_F(HttpServerFixture, HandlerExceptionsBecome500) {
  start();
  auto r = testing::httpGet("127.0.0.1", server_.port(), "/boom");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 500);
}

TEST_F(HttpServerFixture, RejectsOtherMethodsAndOversizedRequests) {
  start();
  auto post = testing::httpRaw(
      "127.0.0.1", server_.port(),
      "POST /hello HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->substr(0, 12), "HTTP/1.1 405") << *post;
  EXPECT_NE(post->find("Allow: GET, HEAD\r\n"), std::string::npos) << *post;
  std::string huge =
      "GET /hello HTTP/1.1\r\nHost: x\r\nX-Pad: " + std::string(8000, 'a') + "\r\n\r\n";
  auto big = testing::httpRaw("127.0.0.1", server_.port(), huge);
  ASSERT_TRUE(big);
  EXPECT_EQ(big->substr(0, 12), "HTTP/1.1 431") << *big;
  EXPECT_EQ(big->find("hi "), std::string::npos)
      << "an oversized request must not reach the handler";
  EXPECT_EQ(server_.dropped(HttpDrop::kTooLarge), 1u);
  // The server is still healthy afterwards.
  EXPECT_EQ(testing::httpGet("127.0.0.1", server_.port(), "/hello")->status, 200);
}

TEST_F(HttpServerFixture, ObserverSeesEveryRequest) {
  start();
  testing::httpGet("127.0.0.1", server_.port(), "/hello");
  testing::httpGet("127.0.0.1", server_.port(), "/nope");
  ASSERT_EQ(seen().size(), 2u);
  EXPECT_EQ(seen()[0], "/hello 200");
  EXPECT_EQ(seen()[1], "other 404");
}

TEST_F(HttpServerFixture, HeadersInSharedBytesAndEncodingOut) {
  start();
  auto r = testing::httpRaw("127.0.0.1", server_.port(),
                            "GET /shared HTTP/1.1\r\nHost: x\r\nX-Probe: 7\r\n"
                            "Accept-Encoding: gzip, X-Test;q=0.5\r\nConnection: close\r\n\r\n");
  ASSERT_TRUE(r);
  EXPECT_NE(r->find("Content-Length: 10\r\n"), std::string::npos) << *r;
  EXPECT_NE(r->find("Content-Encoding: x-test\r\nVary: Accept-Encoding\r\n"), std::string::npos)
      << *r;
  EXPECT_EQ(r->substr(r->size() - 10), "head:7tail");
  auto plain = testing::httpRaw("127.0.0.1", server_.port(),
                                "GET /shared HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->find("Content-Encoding"), std::string::npos) << *plain;
}

TEST_F(HttpServerFixture, HeadAnswersHeadersWithTheBodyLength) {
  start();
  auto c = TcpClient::connect(server_.port());
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->send("HEAD /shared HTTP/1.1\r\nHost: x\r\n\r\n"));
  std::string r = c->readResponse(10s, /*head=*/true);
  EXPECT_EQ(r.substr(0, 12), "HTTP/1.1 200") << r;
  EXPECT_NE(r.find("Content-Length: 9\r\n"), std::string::npos) << r;
  // Nothing follows the head: the next response on the connection starts right there.
  ASSERT_TRUE(c->send(get("/hello?again")));
  std::string next = c->readResponse();
  EXPECT_EQ(next.substr(0, 12), "HTTP/1.1 200") << next;
  EXPECT_EQ(next.substr(next.size() - 8), "hi again");
}

TEST_F(HttpServerFixture, KeepAliveServesPipelinedRequestsInOrder) {
  start();
  auto c = TcpClient::connect(server_.port());
  ASSERT_TRUE(c);
  // Three requests in one write; the answers come back in order on the same connection.
  ASSERT_TRUE(c->send(get("/hello?1") + get("/nope") + get("/hello?3")));
  std::string a = c->readResponse(), b = c->readResponse(), d = c->readResponse();
  EXPECT_EQ(a.substr(a.size() - 4), "hi 1") << a;
  EXPECT_EQ(b.substr(0, 12), "HTTP/1.1 404") << b;
  EXPECT_NE(b.find("Connection: keep-alive"), std::string::npos) << b;
  EXPECT_EQ(d.substr(d.size() - 4), "hi 3") << d;
  EXPECT_EQ(server_.openConnections(), 1);
  // Connection: close ends it after the answer.
  ASSERT_TRUE(c->send(get("/hello", "Connection: close\r\n")));
  std::string last = c->readResponse();
  EXPECT_NE(last.find("Connection: close"), std::string::npos) << last;
  EXPECT_TRUE(c->waitClosed(10s));
}

TEST_F(HttpServerFixture, IoThreadRoutesAreAnsweredOnTheIoThread) {
  start();
  auto r = testing::httpGet("127.0.0.1", server_.port(), "/io?a");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "io a");
  auto pooled = testing::httpGet("127.0.0.1", server_.port(), "/hello");
  ASSERT_TRUE(pooled);
  std::lock_guard lock(mu_);
  ASSERT_EQ(handler_threads_.size(), 1u);
  EXPECT_EQ(handler_threads_[0], io_thread_);
  EXPECT_EQ(seen_, (std::vector<std::string>{"/io 200", "/hello 200"}));
}

// Requests pipelined in one write, answered on the I/O thread and on the pool in turn, come back
// in order; a long pipeline of I/O-thread answers is read turn by turn, never by recursion
// (each answer used to read the next request from inside its own write).
TEST_F(HttpServerFixture, PipelinesMixingIoThreadAndPoolRoutesKeepTheirOrder) {
  start(options(2, 1 << 16));
  auto c = TcpClient::connect(server_.port());
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->send(get("/io?1") + get("/hello?2") + get("/io?3") + get("/nope")));
  std::string a = c->readResponse(), b = c->readResponse(), d = c->readResponse(),
              e = c->readResponse();
  EXPECT_EQ(a.substr(a.size() - 4), "io 1") << a;
  EXPECT_EQ(b.substr(b.size() - 4), "hi 2") << b;
  EXPECT_EQ(d.substr(d.size() - 4), "io 3") << d;
  EXPECT_EQ(e.substr(0, 12), "HTTP/1.1 404") << e;
  std::string many;
  constexpr int kMany = 1500;
  for (int i = 0; i < kMany; ++i) many += get("/io?" + std::to_string(i));
  ASSERT_TRUE(c->send(many));
  for (int i = 0; i < kMany; ++i) {
    std::string r = c->readResponse();
    std::string want = "io " + std::to_string(i);
    ASSERT_EQ(r.substr(r.size() - want.size()), want) << "answer " << i << ": " << r;
  }
  EXPECT_EQ(server_.openConnections(), 1);
  // Every answer at the same depth of the I/O thread's stack, give or take a frame: a pipeline
  // read by recursion would sink by a few hundred bytes per request.
  std::lock_guard lock(mu_);
  auto [lo, hi] = std::minmax_element(handler_stack_.begin(), handler_stack_.end());
  EXPECT_LT(*hi - *lo, 4096u) << "the handler ran " << (*hi - *lo) << " bytes apart on the stack";
}

TEST_F(HttpServerFixture, IdleKeepAliveConnectionIsClosedAfterItsTimeout) {
  HttpOptions o = options();
  o.idle_timeout_ms = 300;
  start(o);
  auto c = TcpClient::connect(server_.port());
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->send(get("/hello")));
  EXPECT_EQ(c->readResponse().substr(0, 12), "HTTP/1.1 200");
  auto answered = std::chrono::steady_clock::now();
  EXPECT_TRUE(c->waitClosed(10s)) << "an idle keep-alive connection must be closed";
  EXPECT_GE(std::chrono::steady_clock::now() - answered, 250ms);
  // Idle timeouts are normal: nothing is counted as dropped.
  for (int i = 0; i < static_cast<int>(HttpDrop::kCount); ++i)
    EXPECT_EQ(server_.dropped(static_cast<HttpDrop>(i)), 0u) << i;
}

TEST_F(HttpServerFixture, HeadThatDoesNotCompleteInTimeIsDroppedAndCounted) {
  start(options(2, 2048, 300));
  auto c = TcpClient::connect(server_.port());
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->send("GET /hello HTTP/1.1\r\nHost: x\r\n"));
  EXPECT_TRUE(c->waitClosed(10s));
  EXPECT_EQ(server_.dropped(HttpDrop::kHeadTimeout), 1u);
}

struct BadHead {
  std::string name;
  std::string request;
  std::string status;
  HttpDrop reason;
};

TEST_F(HttpServerFixture, BadHeadsAreAnsweredAndCountedByReason) {
  start();
  std::vector<BadHead> cases = {
      {"bad request line", "GET /hello\r\nHost: x\r\n\r\n", "400", HttpDrop::kMalformed},
      {"two spaces", "GET  /hello HTTP/1.1\r\nHost: x\r\n\r\n", "400", HttpDrop::kMalformed},
      {"missing Host", "GET /hello HTTP/1.1\r\n\r\n", "400", HttpDrop::kMalformed},
      {"two Hosts", "GET /hello HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", "400",
       HttpDrop::kMalformed},
      {"space before colon", "GET /hello HTTP/1.1\r\nHost : x\r\n\r\n", "400",
       HttpDrop::kMalformed},
      {"obs-fold", "GET /hello HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n  2\r\n\r\n", "400",
       HttpDrop::kMalformed},
      {"NUL in a value", "GET /hello HTTP/1.1\r\nHost: x\r\nX-A: a\0b\r\n\r\n"s, "400",
       HttpDrop::kMalformed},
      {"authority-form", "GET 127.0.0.1:80 HTTP/1.1\r\nHost: x\r\n\r\n", "400", HttpDrop::kTarget},
      {"asterisk-form", "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", "400", HttpDrop::kTarget},
      {"control in target", "GET /he\x01llo HTTP/1.1\r\nHost: x\r\n\r\n", "400", HttpDrop::kTarget},
      {"HTTP/2.0", "GET /hello HTTP/2.0\r\nHost: x\r\n\r\n", "505", HttpDrop::kVersion},
      {"too many headers",
       get("/hello",
           [] {
             std::string h;
             for (int i = 0; i < 70; ++i) h += "X-" + std::to_string(i) + ": a\r\n";
             return h;
           }()),
       "431", HttpDrop::kTooManyHeaders},
      {"body on GET", "GET /hello HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nabcde", "400",
       HttpDrop::kBody},
      {"chunked GET",
       "GET /hello HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "400",
       HttpDrop::kBody},
  };
  for (const auto& c : cases) {
    uint64_t before = server_.dropped(c.reason);
    auto r = testing::httpRaw("127.0.0.1", server_.port(), c.request);
    ASSERT_TRUE(r) << c.name;
    EXPECT_EQ(r->substr(0, 12), "HTTP/1.1 " + c.status) << c.name << ": " << *r;
    EXPECT_NE(r->find("Connection: close"), std::string::npos) << c.name;
    EXPECT_EQ(r->find("hi "), std::string::npos) << c.name << " reached the handler";
    EXPECT_EQ(server_.dropped(c.reason), before + 1) << c.name;
  }
  EXPECT_EQ(testing::httpGet("127.0.0.1", server_.port(), "/hello")->status, 200);
}

TEST_F(HttpServerFixture, AbsoluteFormTargetsAreServedByTheirPath) {
  start();
  auto r = testing::httpRaw("127.0.0.1", server_.port(),
                            "GET http://elsewhere.example/hello?abs HTTP/1.1\r\nHost: x\r\n"
                            "Connection: close\r\n\r\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->substr(0, 12), "HTTP/1.1 200") << *r;
  EXPECT_EQ(r->substr(r->size() - 6), "hi abs");
}

TEST_F(HttpServerFixture, HttpOneZeroClosesUnlessAskedToKeepAlive) {
  start();
  auto c = TcpClient::connect(server_.port());
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->send("GET /hello HTTP/1.0\r\n\r\n"));
  EXPECT_NE(c->readResponse().find("Connection: close"), std::string::npos);
  EXPECT_TRUE(c->waitClosed(10s));
}

// Slowloris: N connections that never finish their head, N far above the handler threads and
// above the connection cap, while /metrics-like requests must each be answered within 1 s.
TEST_F(HttpServerFixture, HalfOpenConnectionsDoNotDelayScrapes) {
  start(options(/*threads=*/4, 16384, /*request_timeout_ms=*/10000));
  constexpr int kSlow = 300;
  std::vector<TcpClient> slow;
  for (int i = 0; i < kSlow; ++i) {
    auto c = TcpClient::connect(server_.port());
    ASSERT_TRUE(c) << i;
    ASSERT_TRUE(c->send("GET /hello HTTP/1.1\r\nHost: x\r\nX-Slow: "));
    slow.push_back(std::move(*c));
  }
  // They keep trickling while the scrapes run.
  std::atomic<bool> stop{false};
  std::thread trickle([&] {
    while (!stop) {
      for (auto& c : slow) (void)c.send("a");
      std::this_thread::sleep_for(50ms);  // the attacker's pace, not a wait for the server
    }
  });
  for (int i = 0; i < 10; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    auto r = testing::httpGet("127.0.0.1", server_.port(), "/hello", 5s);
    auto took = std::chrono::steady_clock::now() - t0;
    ASSERT_TRUE(r) << "scrape " << i;
    EXPECT_EQ(r->status, 200);
    EXPECT_LT(took, 1s) << "scrape " << i << " took " << std::chrono::duration<double>(took).count()
                        << " s";
  }
  stop = true;
  trickle.join();
  // Everything above the caps was evicted (oldest incomplete head first), and counted.
  EXPECT_GE(server_.dropped(HttpDrop::kEvicted), static_cast<uint64_t>(kSlow - 32));
  EXPECT_LE(server_.openConnections(), 32);
}

TEST_F(HttpServerFixture, OneAddressCannotTakeTheSlotsOfAnother) {
  HttpOptions o = options();
  o.max_connections = 16;
  o.max_connections_per_address = 8;
  start(o);
  // 127.0.0.2 floods with connections that never send a request.
  std::vector<TcpClient> flood;
  for (int i = 0; i < 50; ++i) {
    auto c = TcpClient::connect(server_.port(), "127.0.0.2");
    ASSERT_TRUE(c);
    flood.push_back(std::move(*c));
  }
  // The flood only ever held its own 8: it evicted itself, never anyone else.
  ASSERT_TRUE(testing::httpGet("127.0.0.1", server_.port(), "/hello"));
  EXPECT_GE(server_.dropped(HttpDrop::kEvicted), 42u);
  // 127.0.0.1 keeps 8 connections open and usable next to the flood.
  std::vector<TcpClient> mine;
  for (int i = 0; i < 8; ++i) {
    auto c = TcpClient::connect(server_.port(), "127.0.0.1");
    ASSERT_TRUE(c);
    mine.push_back(std::move(*c));
  }
  uint64_t evicted = server_.dropped(HttpDrop::kEvicted);
  for (auto& c : mine) {
    ASSERT_TRUE(c.send(get("/hello")));
    EXPECT_EQ(c.readResponse().substr(0, 12), "HTTP/1.1 200");
  }
  // Another flood address fills the rest of the total; the keep-alive ones stay.
  for (int i = 0; i < 20; ++i) {
    auto c = TcpClient::connect(server_.port(), "127.0.0.3");
    ASSERT_TRUE(c);
    flood.push_back(std::move(*c));
  }
  for (auto& c : mine) {
    ASSERT_TRUE(c.send(get("/hello")));
    EXPECT_EQ(c.readResponse().substr(0, 12), "HTTP/1.1 200");
  }
  EXPECT_GT(server_.dropped(HttpDrop::kEvicted), evicted);
}

TEST_F(HttpServerFixture, ConnectionsBeingAnsweredAreNeverEvicted) {
  std::mutex m;
  std::condition_variable cv;
  bool release = false;
  std::atomic<int> inside{0};
  server_.route("/wait", [&](const HttpRequest&) {
    ++inside;
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return release; });
    return HttpResponse{200, "text/plain", "done"};
  });
  HttpOptions o = options(/*threads=*/4);
  o.max_connections = 4;
  o.max_connections_per_address = 4;
  start(o);
  std::vector<TcpClient> busy;
  for (int i = 0; i < 4; ++i) {
    auto c = TcpClient::connect(server_.port());
    ASSERT_TRUE(c);
    ASSERT_TRUE(c->send(get("/wait")));
    busy.push_back(std::move(*c));
  }
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (inside < 4 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  ASSERT_EQ(inside, 4);
  // Full of requests in progress: a new connection is refused and counted, not evicting them.
  auto extra = TcpClient::connect(server_.port());
  ASSERT_TRUE(extra);
  EXPECT_TRUE(extra->waitClosed(10s));
  EXPECT_EQ(server_.dropped(HttpDrop::kAddressLimit), 1u);
  // From another address, the total cap refuses it the same way.
  auto other = TcpClient::connect(server_.port(), "127.0.0.2");
  ASSERT_TRUE(other);
  EXPECT_TRUE(other->waitClosed(10s));
  EXPECT_EQ(server_.dropped(HttpDrop::kLimit), 1u);
  EXPECT_EQ(server_.dropped(HttpDrop::kEvicted), 0u);
  {
    std::lock_guard lock(m);
    release = true;
  }
  cv.notify_all();
  for (auto& c : busy) EXPECT_EQ(c.readResponse().substr(0, 12), "HTTP/1.1 200");
}

TEST_F(HttpServerFixture, ClientThatDoesNotReadItsAnswerIsDropped) {
  auto big = std::make_shared<const std::string>(64 << 20, 'x');
  server_.route("/big", [big](const HttpRequest&) {
    HttpResponse r{200, "text/plain", ""};
    r.shared_body = big;
    return r;
  });
  start(options(2, 2048, /*request_timeout_ms=*/300));
  auto c = TcpClient::connect(server_.port());
  ASSERT_TRUE(c);
  int small = 4096;
  setsockopt(c->fd(), SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  ASSERT_TRUE(c->send(get("/big")));
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (server_.dropped(HttpDrop::kWriteTimeout) == 0 &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(10ms);
  EXPECT_EQ(server_.dropped(HttpDrop::kWriteTimeout), 1u);
  EXPECT_EQ(server_.openConnections(), 0);
}

// The short version of bench/http_load.sh: concurrent keep-alive scrapers, no errors (no timing).
TEST_F(HttpServerFixture, ConcurrentKeepAliveClientsAllGetTheirAnswers) {
  auto body = std::make_shared<const std::string>(100000, 'm');
  server_.route("/metrics", [body](const HttpRequest&) {
    HttpResponse r{200, "text/plain", ""};
    r.shared_body = body;
    return r;
  });
  start(options(/*threads=*/4));
  constexpr int kClients = 16, kRequests = 50;
  std::atomic<int> ok{0};
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([&] {
      auto c = TcpClient::connect(server_.port());
      if (!c) return;
      for (int j = 0; j < kRequests; ++j) {
        if (!c->send(get("/metrics"))) return;
        std::string r = c->readResponse();
        if (r.substr(0, 12) == "HTTP/1.1 200" && r.size() > 100000) ++ok;
      }
    });
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(ok, kClients * kRequests);
  for (int i = 0; i < static_cast<int>(HttpDrop::kCount); ++i)
    EXPECT_EQ(server_.dropped(static_cast<HttpDrop>(i)), 0u) << httpDropReason(HttpDrop(i));
}

TEST(HttpServerTest, AcceptEncodingFollowsQValues) {
  auto req = [](std::string v) {
    HttpRequest r;
    r.headers.emplace_back("accept-encoding", std::move(v));
    return r;
  };
  EXPECT_TRUE(req("gzip").acceptsEncoding("gzip"));
  EXPECT_TRUE(req("deflate, GZIP;q=0.8").acceptsEncoding("gzip"));
  EXPECT_TRUE(req("*").acceptsEncoding("gzip"));
  EXPECT_FALSE(req("gzip;q=0").acceptsEncoding("gzip"));
  EXPECT_FALSE(req("gzip; q=0.000").acceptsEncoding("gzip"));
  EXPECT_FALSE(req("deflate, br").acceptsEncoding("gzip"));
  EXPECT_FALSE(req("gzipx").acceptsEncoding("gzip"));
  EXPECT_FALSE(HttpRequest{}.acceptsEncoding("gzip"));
}

// A response's parts go out in order, body, shared bytes, tail, on a connection that serves the
// next request with nothing left over; HEAD counts them all and sends none.
TEST(HttpServerTest, TailFollowsTheSharedBytes) {
  HttpServer s;
  s.route("/t", [](const HttpRequest&) {
    HttpResponse r{200, "text/plain", "body,"};
    r.shared_body = std::make_shared<const std::string>("shared,");
    r.tail = "tail";
    return r;
  });
  ASSERT_TRUE(s.start(options()));
  auto c = TcpClient::connect(s.port());
  ASSERT_TRUE(c);
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(c->send(get("/t")));
    std::string r = c->readResponse();
    EXPECT_NE(r.find("Content-Length: 16\r\n"), std::string::npos) << r;
    EXPECT_EQ(r.substr(r.size() - 16), "body,shared,tail") << r;
  }
  ASSERT_TRUE(c->send("HEAD /t HTTP/1.1\r\nHost: x\r\n\r\n"));
  std::string h = c->readResponse(10s, true);
  EXPECT_NE(h.find("Content-Length: 16\r\n"), std::string::npos) << h;
  EXPECT_EQ(h.substr(h.size() - 4), "\r\n\r\n") << h;
}

TEST(HttpServerTest, PortInUseIsAClearError) {
  HttpServer a, b;
  ASSERT_TRUE(a.start(options(1)));
  HttpOptions o = options(1);
  o.listen_address = "127.0.0.1:" + std::to_string(a.port());
  auto st = b.start(o);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("cannot listen on 127.0.0.1:"), std::string::npos) << st.message();
}

TEST(HttpServerTest, StopClosesEveryConnection) {
  HttpServer s;
  s.route("/x", [](const HttpRequest&) { return HttpResponse{200, "text/plain", "x"}; });
  ASSERT_TRUE(s.start(options()));
  std::vector<TcpClient> open;
  for (int i = 0; i < 20; ++i) {
    auto c = TcpClient::connect(s.port());
    ASSERT_TRUE(c);
    ASSERT_TRUE(c->send("GET /x HTTP/1.1\r\n"));
    open.push_back(std::move(*c));
  }
  s.stop();
  for (auto& c : open) EXPECT_TRUE(c.waitClosed(10s));
}

}  // namespace
}  // namespace fabricwatch::http
