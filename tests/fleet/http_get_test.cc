// fleet/http_get: libcurl, loaded on demand, against fabricwatch's own HTTP server on loopback.
#include "fleet/http_get.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>

#include "http/http_server.h"

namespace fabricwatch::fleet {
namespace {

using namespace std::chrono_literals;

class HttpGetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_.route("/big", [](const http::HttpRequest&) {
      return http::HttpResponse{200, "text/plain", std::string(1 << 20, 'x')};
    });
    server_.route("/moved", [](const http::HttpRequest&) {
      http::HttpResponse r{302, "text/plain", "elsewhere"};
      r.extra_headers.push_back({"Location", "/big"});
      return r;
    });
    server_.route("/auth", [&](const http::HttpRequest& r) {
      seen_ = std::string(r.header("authorization"));
      return http::HttpResponse{200, "application/json", "{}"};
    });
    http::HttpOptions o;
    o.listen_address = "127.0.0.1:0";
    ASSERT_TRUE(server_.start(o));
    base_ = "http://127.0.0.1:" + std::to_string(server_.port());
  }
  void TearDown() override { server_.stop(); }

  http::HttpServer server_;
  std::string base_, seen_;
};

TEST_F(HttpGetTest, AnAnswerOverItsBoundIsAnErrorNotATruncation) {
  HttpGetOptions o;
  auto whole = httpGet(base_ + "/big", o);
  ASSERT_TRUE(whole) << whole.error().message;
  EXPECT_EQ(whole->status, 200);
  EXPECT_EQ(whole->body.size(), size_t{1} << 20);
  o.max_bytes = 1000;
  auto cut = httpGet(base_ + "/big", o);
  ASSERT_FALSE(cut);
  EXPECT_EQ(cut.error().message, "the answer is over 1000 bytes");
}

TEST_F(HttpGetTest, ARedirectIsNotFollowed) {
  auto r = httpGet(base_ + "/moved", HttpGetOptions{});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->status, 302);
  EXPECT_EQ(r->body, "elsewhere");
}

TEST_F(HttpGetTest, CredentialsGoInTheirHeader) {
  HttpGetOptions o;
  o.username = "ops";
  o.password = "pw";
  ASSERT_TRUE(httpGet(base_ + "/auth", o));
  EXPECT_EQ(seen_, "Basic b3BzOnB3");
  o = HttpGetOptions{};
  o.bearer_token = "t0k";
  ASSERT_TRUE(httpGet(base_ + "/auth", o));
  EXPECT_EQ(seen_, "Bearer t0k");
}

TEST_F(HttpGetTest, OnlyHttpAndHttpsAndATimeout) {
  EXPECT_EQ(httpGet("file:///etc/passwd", HttpGetOptions{}).error().message,
            "the URL must start with http:// or https://");
  // A listener that never answers: the timeout ends the exchange.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(fd, 4), 0);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  HttpGetOptions o;
  o.timeout = 300ms;
  auto start = std::chrono::steady_clock::now();
  auto r = httpGet("http://127.0.0.1:" + std::to_string(ntohs(a.sin_port)) + "/", o);
  EXPECT_FALSE(r);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  ::close(fd);
}

TEST(UrlEncodeTest, EncodesWhatAQueryCannotHold) {
  EXPECT_EQ(urlEncode("up{job=\"a b\"} & x"), "up%7Bjob%3D%22a%20b%22%7D%20%26%20x");
}

}  // namespace
}  // namespace fabricwatch::fleet
