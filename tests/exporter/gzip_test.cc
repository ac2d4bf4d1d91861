#include "exporter/gzip.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "tests/support/gzip.h"

namespace fabricwatch::exporter {
namespace {

using testing::gunzipOneMember;

std::string metricsLike(size_t bytes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s;
  while (s.size() < bytes) {
    s += "fabricwatch_rdma_port_hw_stat_total{device=\"rdmap" + std::to_string(rng() % 200) +
         "s0\",port=\"1\",stat=\"retrans_pkts\"} " + std::to_string(rng()) + "\n";
  }
  return s;
}

TEST(GzipTest, WholeMemberRoundTrips) {
  for (size_t n : {0, 1, 100, 300000}) {
    std::string text = metricsLike(n, n);
    auto out = gunzipOneMember(gzip::compress(text));
    ASSERT_TRUE(out) << n;
    EXPECT_EQ(*out, text);
  }
}

TEST(GzipTest, SharedPrefixAndPerRequestEndMakeOneMember) {
  // The prefix is made once; each request appends its own end. Every combination must be one
  // valid member holding prefix text + rest, with the CRC and length of the whole.
  for (size_t shared : {0, 50, 90000, 400000}) {
    std::string head = metricsLike(shared, shared);
    std::string prefix = gzip::prefix(head);
    uint32_t crc = gzip::crc32(head);
    for (size_t rest_size : {0, 1, 3000, 70000}) {
      std::string rest = metricsLike(rest_size, rest_size + 7);
      std::string body = prefix;
      gzip::appendEnd(body, rest, crc, head.size());
      auto out = gunzipOneMember(body);
      ASSERT_TRUE(out) << shared << "+" << rest_size;
      EXPECT_EQ(*out, head + rest) << shared << "+" << rest_size;
    }
  }
}

TEST(GzipTest, AWrongPrefixCrcIsCaughtByTheTrailer) {
  std::string head = metricsLike(1000, 1);
  std::string body = gzip::prefix(head);
  gzip::appendEnd(body, "rest\n", gzip::crc32(head) ^ 1, head.size());
  EXPECT_FALSE(gunzipOneMember(body));
}

TEST(GzipTest, CompressesMetricsText) {
  std::string text = metricsLike(100000, 3);
  EXPECT_LT(gzip::compress(text).size(), text.size() / 2);
  EXPECT_LT(gzip::prefix(text).size(), text.size() / 2);
}

}  // namespace
}  // namespace fabricwatch::exporter
