#include "exporter/http_server.h"

#include <gtest/gtest.h>

#include <memory>

#include "tests/support/http_client.h"

namespace fabricwatch::exporter {
namespace {

TEST(HttpServerTest, CivetPortsFromListenAddresses) {
  EXPECT_EQ(toCivetPorts(":19736"), "19736");
  EXPECT_EQ(toCivetPorts("0.0.0.0:19736"), "19736");
  EXPECT_EQ(toCivetPorts("127.0.0.1:0"), "127.0.0.1:0");
  EXPECT_EQ(toCivetPorts("[::]:19736"), "[::]:19736");
}

class HttpServerFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    server_.route("/hello", [](const HttpRequest& r) {
      return HttpResponse{200, "text/plain", "hi " + r.query};
    });
    server_.route("/shared", [](const HttpRequest& r) {
      HttpResponse resp{200, "text/plain", "head:"};
      resp.shared_body = std::make_shared<const std::string>("shared");
      resp.tail = ".end";
      if (r.acceptsEncoding("x-test")) resp.content_encoding = "x-test";
      resp.body += std::string(r.header("x-probe"));
      return resp;
    });
    server_.route("/boom",
                  [](const HttpRequest&) -> HttpResponse { throw std::runtime_error("bad"); });
    server_.observe([this](const std::string& route, int status, double) {
      seen_.push_back(route + " " + std::to_string(status));
    });
    ASSERT_TRUE(server_.start({"127.0.0.1:0", 2, 2048, 1000}));
    ASSERT_GT(server_.port(), 0);
  }
  HttpServer server_;
  std::vector<std::string> seen_;
};

TEST_F(HttpServerFixture, RoutesExactPaths) {
  auto r = testing::httpGet("127.0.0.1", server_.port(), "/hello?x=1");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "hi x=1");
  EXPECT_EQ(testing::httpGet("127.0.0.1", server_.port(), "/hello/more")->status, 404);
  EXPECT_EQ(testing::httpGet("127.0.0.1", server_.port(), "/")->status, 404);
}

TEST_F(HttpServerFixture, HandlerExceptionsBecome500) {
  auto r = testing::httpGet("127.0.0.1", server_.port(), "/boom");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 500);
}

TEST_F(HttpServerFixture, RejectsOtherMethodsAndOversizedRequests) {
  auto post = testing::httpRaw("127.0.0.1", server_.port(),
                               "POST /hello HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->substr(0, 12), "HTTP/1.1 405");
  std::string huge =
      "GET /hello HTTP/1.1\r\nHost: x\r\nX-Pad: " + std::string(8000, 'a') + "\r\n\r\n";
  auto big = testing::httpRaw("127.0.0.1", server_.port(), huge);
  ASSERT_TRUE(big);
  EXPECT_EQ(big->find("hi "), std::string::npos)
      << "an oversized request must not reach the handler";
  // The server is still healthy afterwards.
  EXPECT_EQ(testing::httpGet("127.0.0.1", server_.port(), "/hello")->status, 200);
}

TEST_F(HttpServerFixture, ObserverSeesEveryRequest) {
  testing::httpGet("127.0.0.1", server_.port(), "/hello");
  testing::httpGet("127.0.0.1", server_.port(), "/nope");
  ASSERT_EQ(seen_.size(), 2u);
  EXPECT_EQ(seen_[0], "/hello 200");
  EXPECT_EQ(seen_[1], "other 404");
}

TEST_F(HttpServerFixture, HeadersInSharedBytesAndEncodingOut) {
  auto r = testing::httpRaw("127.0.0.1", server_.port(),
                            "GET /shared HTTP/1.1\r\nHost: x\r\nX-Probe: 7\r\n"
                            "Accept-Encoding: gzip, X-Test;q=0.5\r\n\r\n");
  ASSERT_TRUE(r);
  EXPECT_NE(r->find("Content-Length: 16\r\n"), std::string::npos) << *r;
  EXPECT_NE(r->find("Content-Encoding: x-test\r\nVary: Accept-Encoding\r\n"), std::string::npos)
      << *r;
  // body, then the shared bytes, then the tail.
  EXPECT_EQ(r->substr(r->size() - 16), "head:7shared.end");
  auto plain =
      testing::httpRaw("127.0.0.1", server_.port(), "GET /shared HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->find("Content-Encoding"), std::string::npos) << *plain;
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

TEST(HttpServerTest, PortInUseIsAClearError) {
  HttpServer a, b;
  ASSERT_TRUE(a.start({"127.0.0.1:0", 1, 2048, 1000}));
  auto st = b.start({"127.0.0.1:" + std::to_string(a.port()), 1, 2048, 1000});
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("cannot listen on 127.0.0.1:"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace fabricwatch::exporter
