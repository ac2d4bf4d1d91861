// Issue 23, item 8: the head scanner and the parser frame a request head alike. Whatever
// parseRequestHead() decides (a head, or a refusal) the scanner hands over at once, so a client
// that sent a head the parser would refuse (nine bare CRs, a TLS ClientHello on the plain port,
// more header lines than allowed, a method that is no token) gets its 400 at once instead of
// waiting out web.request_timeout for a blank line that never comes.
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "http/http_message.h"
#include "http/http_server.h"
#include "tests/support/tcp_client.h"

namespace fabricwatch::http {
namespace {

using namespace std::chrono_literals;
using namespace std::string_literals;

// The first bytes of a real TLS 1.2/1.3 ClientHello (record type 0x16, version 3.1, length,
// handshake type 1, ...); no newline, no blank line.
const std::string kClientHello =
    "\x16\x03\x01\x00\xc8\x01\x00\x00\xc4\x03\x03"
    "\x5b\x90\x9d\x9b\x72\x0b\xbc\x0c\xbc\x2b\x92\xa8\x48\x97\xcf\xbd"
    "\x39\x04\xcc\x16\x0a\x85\x03\x90\x9f\x77\x04\x33\xd4\xde\x00\x00"
    "\x20\xc0\x2b\xc0\x2f\xc0\x2c\xc0\x30\xcc\xa9\xcc\xa8\x13\x01\x13"s;

std::string manyHeaderLines(int n) {
  std::string h = "GET / HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < n; ++i) h += "X-" + std::to_string(i) + ": a\r\n";
  return h;  // no blank line
}

// Feeds `text` to a scanner in the chunks `cuts` makes and checks the property at every step:
// when the parser decides, the scanner said ready.
void expectScannerReadyWhenParserDecides(const std::string& text, const HeadLimits& limits,
                                         const std::vector<size_t>& chunk_sizes,
                                         const std::string& name) {
  HeadScanner scanner;
  size_t at = 0, i = 0;
  while (at < text.size()) {
    size_t n = std::min(text.size() - at, chunk_sizes[i++ % chunk_sizes.size()]);
    at += n;
    std::string_view buf(text.data(), at);
    bool ready = scanner.ready(buf, limits);
    std::optional<HeadError> error;
    bool decided = parseRequestHead(buf, limits, &error).has_value() || error.has_value();
    if (decided && !ready) {
      ADD_FAILURE() << name << ": the parser decides at byte " << at
                    << " but the scanner waits for more";
      return;
    }
    if (decided) return;  // the server parses, answers and resets the scanner here
  }
}

TEST(HeadFramingTest, TheScannerIsReadyWheneverTheParserDecides) {
  HeadLimits limits{512, 8};
  std::vector<std::pair<std::string, std::string>> cases = {
      {"a head", "GET /a HTTP/1.1\r\nHost: x\r\n\r\n"},
      {"LF only", "GET /a HTTP/1.1\nHost: x\n\n"},
      {"leading blank lines", "\r\n\r\nGET /a HTTP/1.1\r\nHost: x\r\n\r\n"},
      {"nine bare CRs", std::string(9, '\r')},
      {"nine CRs then a request", std::string(9, '\r') + "GET / HTTP/1.1\r\nHost: x\r\n\r\n"},
      {"CR LF CR LF ... nine", "\r\n\r\n\r\n\r\n\r"},
      {"a TLS ClientHello", kClientHello},
      {"a method that is too long", std::string(40, 'G') + " / HTTP/1.1\r\n"},
      {"an empty method", " / HTTP/1.1\r\nHost: x\r\n"},
      {"a line that ends before its method", "GET\r\nHost: x\r\n"},
      {"NUL in the method", "GE\0T / HTTP/1.1\r\n"s},
      {"more header lines than allowed", manyHeaderLines(9)},
      {"more lines after leading blanks", "\r\n\n\r\n" + manyHeaderLines(9)},
      {"garbage up to the limit", "GET /" + std::string(600, 'a')},
  };
  std::mt19937 rng(23);
  for (int k = 0; k < 300; ++k) {
    std::string junk;
    size_t n = rng() % 200;
    // Bytes a head is made of, and some it must not hold, so that every branch is reached.
    static const std::string kAlphabet = "GET /:\r\n\r\n\t aHx\x16\x03\x00\xff"s;
    for (size_t i = 0; i < n; ++i) junk += kAlphabet[rng() % kAlphabet.size()];
    cases.emplace_back("random " + std::to_string(k), junk);
  }
  for (const auto& [name, text] : cases) {
    for (std::vector<size_t> chunks : {std::vector<size_t>{1}, {2, 5}, {7, 1, 3}, {1000}})
      expectScannerReadyWhenParserDecides(text, limits, chunks, name);
  }
}

TEST(HeadFramingTest, RefusalsByTheFirstBytesAreTheParsersOwn) {
  HeadLimits limits;
  std::optional<HeadError> err;
  EXPECT_FALSE(parseRequestHead(std::string(9, '\r'), limits, &err));
  EXPECT_EQ(err, HeadError::kMalformed);
  EXPECT_FALSE(parseRequestHead(kClientHello, limits, &err));
  EXPECT_EQ(err, HeadError::kMalformed) << "refused at its first byte, not at the size limit";
  EXPECT_FALSE(parseRequestHead(std::string(33, 'G'), limits, &err));
  EXPECT_EQ(err, HeadError::kMalformed);
  // Prefixes of good heads still ask for more.
  EXPECT_FALSE(parseRequestHead("GET", limits, &err));
  EXPECT_FALSE(err);
  EXPECT_FALSE(parseRequestHead(std::string(8, '\r'), limits, &err));
  EXPECT_FALSE(err);
  EXPECT_FALSE(parseRequestHead(std::string(32, 'G'), limits, &err));
  EXPECT_FALSE(err);
  // One more line than the header limit allows is refused without a blank line.
  EXPECT_FALSE(parseRequestHead(manyHeaderLines(64), limits, &err));
  EXPECT_EQ(err, HeadError::kTooManyHeaders);
  HeadScanner scanner;
  EXPECT_TRUE(scanner.ready(manyHeaderLines(64), limits));
}

// End to end, with real sockets: each of these used to wait for the request timeout (10 s
// here, the default); now each is answered at once and counted.
TEST(HeadFramingE2ETest, HeadsTheParserRefusesAreAnsweredAtOnce) {
  HttpServer server;
  server.route("/", [](const HttpRequest&) { return HttpResponse{200, "text/plain", "ok"}; });
  HttpOptions o;
  o.listen_address = "127.0.0.1:0";
  o.threads = 1;
  o.request_timeout_ms = 10000;
  ASSERT_TRUE(server.start(o));
  struct Case {
    std::string name, bytes, status;
  };
  std::vector<Case> cases = {
      {"nine bare CRs", std::string(9, '\r'), "400"},
      {"a TLS ClientHello on the plain port", kClientHello, "400"},
      {"a method that is no token", "\x01\x02\x03"s, "400"},
      {"65 header lines without a blank line", manyHeaderLines(64), "431"},
  };
  for (const auto& c : cases) {
    auto client = testing::TcpClient::connect(server.port());
    ASSERT_TRUE(client) << c.name;
    auto t0 = std::chrono::steady_clock::now();
    ASSERT_TRUE(client->send(c.bytes)) << c.name;
    std::string answer = client->readUntil(
        [](const std::string& got) { return got.find("\r\n\r\n") != std::string::npos; }, 15s);
    auto took = std::chrono::steady_clock::now() - t0;
    EXPECT_EQ(answer.substr(0, 12), "HTTP/1.1 " + c.status) << c.name << ": " << answer;
    EXPECT_LT(took, 5s) << c.name << " waited for the request timeout";
    EXPECT_TRUE(client->waitClosed(5s)) << c.name;
  }
  EXPECT_EQ(server.dropped(HttpDrop::kMalformed), 3u);
  EXPECT_EQ(server.dropped(HttpDrop::kTooManyHeaders), 1u);
  server.stop();
}

}  // namespace
}  // namespace fabricwatch::http
