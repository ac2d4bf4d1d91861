#include "http/http_message.h"

#include <gtest/gtest.h>

namespace fabricwatch::http {
namespace {

std::optional<ParsedHead> parse(std::string_view text, std::optional<HeadError>* error,
                                HeadLimits limits = {}) {
  return parseRequestHead(text, limits, error);
}

TEST(HttpMessageTest, ParsesARequestHead) {
  std::optional<HeadError> err;
  auto h = parse(
      "GET /metrics?x=1&y HTTP/1.1\r\nHost: node:19736\r\nAccept-Encoding: gzip\r\n"
      "X-Empty:\r\n\r\nNEXT",
      &err);
  ASSERT_TRUE(h) << (err ? reasonOf(*err) : "need more");
  EXPECT_EQ(h->request.method, "GET");
  EXPECT_EQ(h->request.path, "/metrics");
  EXPECT_EQ(h->request.query, "x=1&y");
  ASSERT_EQ(h->request.headers.size(), 3u);
  EXPECT_EQ(h->request.headers[0], (std::pair<std::string, std::string>{"host", "node:19736"}));
  EXPECT_EQ(h->request.header("accept-encoding"), "gzip");
  EXPECT_EQ(h->request.header("x-empty"), "");
  EXPECT_TRUE(h->keep_alive);
  EXPECT_FALSE(h->absolute_form);
  // The next request's bytes are not part of the head.
  EXPECT_EQ(h->head_bytes, std::string_view("GET /metrics?x=1&y HTTP/1.1\r\nHost: node:19736\r\n"
                                            "Accept-Encoding: gzip\r\nX-Empty:\r\n\r\n")
                               .size());
}

TEST(HttpMessageTest, WaitsForTheBlankLine) {
  std::optional<HeadError> err;
  EXPECT_FALSE(parse("GET / HTTP/1.1\r\nHost: x\r\n", &err));
  EXPECT_FALSE(err);
  EXPECT_FALSE(parse("", &err));
  EXPECT_FALSE(err);
  EXPECT_FALSE(parse("\r\n", &err));
  EXPECT_FALSE(err);
}

TEST(HttpMessageTest, BareLineFeedsAndLeadingBlankLinesAreAccepted) {
  std::optional<HeadError> err;
  auto h = parse("\r\nGET /a HTTP/1.1\nHost: x\n\n", &err);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->request.path, "/a");
  EXPECT_FALSE(parse("\r\n\r\n\r\n\r\n\r\nGET /a HTTP/1.1\r\nHost: x\r\n\r\n", &err));
  EXPECT_EQ(err, HeadError::kMalformed);
}

TEST(HttpMessageTest, ConnectionSemanticsFollowTheVersion) {
  std::optional<HeadError> err;
  EXPECT_FALSE(parse("GET / HTTP/1.1\r\nHost: x\r\nConnection: Close\r\n\r\n", &err)->keep_alive);
  EXPECT_FALSE(parse("GET / HTTP/1.0\r\n\r\n", &err)->keep_alive);
  EXPECT_TRUE(parse("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", &err)->keep_alive);
  // Another method with a body we will not read ends the connection after the 405.
  auto post = parse("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc", &err);
  ASSERT_TRUE(post);
  EXPECT_FALSE(post->keep_alive);
  EXPECT_TRUE(parse("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", &err)->keep_alive);
}

TEST(HttpMessageTest, AbsoluteFormTargetsKeepTheirPathAndQuery) {
  std::optional<HeadError> err;
  auto h = parse("GET HTTP://example.com:80/metrics?a=b HTTP/1.1\r\nHost: x\r\n\r\n", &err);
  ASSERT_TRUE(h);
  EXPECT_TRUE(h->absolute_form);
  EXPECT_EQ(h->request.path, "/metrics");
  EXPECT_EQ(h->request.query, "a=b");
  auto bare = parse("GET https://example.com HTTP/1.1\r\nHost: x\r\n\r\n", &err);
  ASSERT_TRUE(bare);
  EXPECT_EQ(bare->request.path, "/");
  auto q = parse("GET http://example.com?z HTTP/1.1\r\nHost: x\r\n\r\n", &err);
  ASSERT_TRUE(q);
  EXPECT_EQ(q->request.path, "/");
  EXPECT_EQ(q->request.query, "z");
  EXPECT_FALSE(parse("GET http:///x HTTP/1.1\r\nHost: x\r\n\r\n", &err));
  EXPECT_EQ(err, HeadError::kTarget);
}

struct Refused {
  const char* name;
  std::string text;
  HeadError error;
};

TEST(HttpMessageTest, RefusesWhatIsNotARequestHead) {
  std::string many = "GET / HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 64; ++i) many += "X-" + std::to_string(i) + ": 1\r\n";
  std::vector<Refused> cases = {
      {"no version", "GET /\r\n\r\n", HeadError::kMalformed},
      {"tab separator", "GET\t/ HTTP/1.1\r\nHost: x\r\n\r\n", HeadError::kMalformed},
      {"trailing space", "GET / HTTP/1.1 \r\nHost: x\r\n\r\n", HeadError::kMalformed},
      {"bad method", "G(T / HTTP/1.1\r\nHost: x\r\n\r\n", HeadError::kMalformed},
      {"lower-case version", "GET / http/1.1\r\nHost: x\r\n\r\n", HeadError::kMalformed},
      {"HTTP/2.0", "GET / HTTP/2.0\r\nHost: x\r\n\r\n", HeadError::kVersion},
      {"HTTP/0.9", "GET / HTTP/0.9\r\n\r\n", HeadError::kVersion},
      {"no Host", "GET / HTTP/1.1\r\n\r\n", HeadError::kMalformed},
      {"two Hosts in 1.0", "GET / HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n", HeadError::kMalformed},
      {"no colon", "GET / HTTP/1.1\r\nHost: x\r\nJunk\r\n\r\n", HeadError::kMalformed},
      {"empty name", "GET / HTTP/1.1\r\nHost: x\r\n: v\r\n\r\n", HeadError::kMalformed},
      {"space in name", "GET / HTTP/1.1\r\nHo st: x\r\n\r\n", HeadError::kMalformed},
      {"obs-fold", "GET / HTTP/1.1\r\nHost: x\r\n\tmore\r\n\r\n", HeadError::kMalformed},
      {"CR in value", "GET / HTTP/1.1\r\nHost: x\ry\r\n\r\n", HeadError::kMalformed},
      // Only space and tab are optional whitespace: a CR at the end of a value is not trimmed.
      {"CR after value", "GET / HTTP/1.1\r\nHost: x\r\r\n\r\n", HeadError::kMalformed},
      {"bad length", "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
       HeadError::kMalformed},
      {"two lengths",
       "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
       HeadError::kMalformed},
      {"asterisk", "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", HeadError::kTarget},
      {"authority", "CONNECT example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n", HeadError::kTarget},
      {"fragment", "GET /a#b HTTP/1.1\r\nHost: x\r\n\r\n", HeadError::kTarget},
      {"non-ASCII target", "GET /\xc3\xa9 HTTP/1.1\r\nHost: x\r\n\r\n", HeadError::kTarget},
      {"body on GET", "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nx", HeadError::kBody},
      {"chunked HEAD", "HEAD / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
       HeadError::kBody},
      {"65 headers", many + "\r\n", HeadError::kTooManyHeaders},
  };
  for (const auto& c : cases) {
    std::optional<HeadError> err;
    EXPECT_FALSE(parse(c.text, &err)) << c.name;
    EXPECT_EQ(err, c.error) << c.name << ": " << (err ? reasonOf(*err) : "need more");
  }
}

TEST(HttpMessageTest, LimitsApplyBeforeTheHeadIsComplete) {
  std::optional<HeadError> err;
  HeadLimits small{64, 4};
  EXPECT_FALSE(parse("GET / HTTP/1.1\r\nX-Pad: " + std::string(60, 'a'), &err, small));
  EXPECT_EQ(err, HeadError::kTooLarge);
  EXPECT_FALSE(parse("GET / HTTP/1.1\r\nA: 1\r\nB: 1\r\nC: 1\r\nD: 1\r\nE: 1\r\n", &err, small));
  EXPECT_EQ(err, HeadError::kTooManyHeaders);
  EXPECT_EQ(statusOf(HeadError::kTooLarge), 431);
  EXPECT_EQ(statusOf(HeadError::kVersion), 505);
  EXPECT_EQ(statusOf(HeadError::kBody), 400);
}

TEST(HttpMessageTest, ScannerAsksForAParseOnlyWhenAHeadMayHaveEnded) {
  HeadLimits limits;
  HeadScanner scan;
  std::string buf;
  int ready = 0;
  // A head trickled one byte at a time is parsed once, when its blank line arrives.
  for (char c : std::string("GET / HTTP/1.1\r\nHost: x\r\nX-A: b\r\n\r\n")) {
    buf.push_back(c);
    ready += scan.ready(buf, limits) ? 1 : 0;
  }
  EXPECT_EQ(ready, 1);
  scan.reset();
  HeadScanner lf;
  EXPECT_FALSE(lf.ready("GET / HTTP/1.1\nHost: x\n", limits));
  EXPECT_TRUE(lf.ready("GET / HTTP/1.1\nHost: x\n\n", limits));
  HeadScanner full;
  EXPECT_TRUE(full.ready(std::string(limits.max_bytes, 'a'), limits));
}

// Found by http_head_fuzz: leading blank lines (which the parser skips) were taken for the
// head's blank line, or counted as header lines, so the scanner handed over a head the parser
// could not judge yet.
TEST(HttpMessageTest, ScannerSkipsLeadingBlankLinesAsTheParserDoes) {
  HeadLimits limits;
  std::optional<HeadError> err;
  HeadScanner lead;
  EXPECT_FALSE(lead.ready("\nET http://n1", limits));
  EXPECT_FALSE(parse("\nET http://n1", &err, limits));
  EXPECT_FALSE(err);
  EXPECT_FALSE(lead.ready("\nET http://n1/ HTTP/1.0\n", limits));
  EXPECT_TRUE(lead.ready("\nET http://n1/ HTTP/1.0\n\n", limits));
  EXPECT_TRUE(parse("\nET http://n1/ HTTP/1.0\n\n", &err, limits));
  // Leading line ends are no header lines: 4 of them and 3 lines wait with 1 header allowed.
  HeadLimits one{16384, 1};
  HeadScanner count;
  const std::string two = "\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n";
  EXPECT_FALSE(count.ready(two, one));
  EXPECT_FALSE(parse(two, &err, one));
  EXPECT_FALSE(err);
  EXPECT_TRUE(count.ready(two + "A: b\r\n", one));
  EXPECT_FALSE(parse(two + "A: b\r\n", &err, one));
  EXPECT_EQ(err, HeadError::kTooManyHeaders);
}

TEST(HttpMessageTest, ResponseHeadCarriesLengthEncodingAndHeaders) {
  HttpResponse r{200, "text/plain; version=0.0.4", "abc"};
  r.shared_body = std::make_shared<const std::string>("defg");
  r.content_encoding = "gzip";
  r.extra_headers.emplace_back("WWW-Authenticate", "Basic");
  std::string h = responseHead(r, true, {{"X-Frame-Options", "deny"}});
  EXPECT_EQ(h,
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: 7\r\n"
            "Content-Encoding: gzip\r\nVary: Accept-Encoding\r\nCache-Control: no-store\r\n"
            "WWW-Authenticate: Basic\r\nX-Frame-Options: deny\r\nConnection: keep-alive\r\n\r\n");
  EXPECT_NE(responseHead(HttpResponse{431, "text/plain", ""}, false)
                .find("431 Request Header Fields Too Large\r\n"),
            std::string::npos);
}

}  // namespace
}  // namespace fabricwatch::http
