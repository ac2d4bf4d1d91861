#include "http/rate_limiter.h"

#include <gtest/gtest.h>

#include <string>

namespace fabricwatch::http {
namespace {

using namespace std::chrono_literals;

TEST(RateLimiterTest, EachKeyHasItsOwnBucketRefilledByTheInterval) {
  RateLimiter r;
  r.reset(2, 100ms);
  RateLimiter::Clock::time_point t0{};
  EXPECT_TRUE(r.take("127.0.0.2", t0));
  EXPECT_TRUE(r.take("127.0.0.2", t0));
  EXPECT_FALSE(r.take("127.0.0.2", t0));
  EXPECT_TRUE(r.take("127.0.0.1", t0)) << "another key's bucket is full";
  EXPECT_FALSE(r.take("127.0.0.2", t0 + 99ms));
  EXPECT_TRUE(r.take("127.0.0.2", t0 + 100ms));
  EXPECT_FALSE(r.take("127.0.0.2", t0 + 100ms));
  // A long pause refills up to the burst, not beyond.
  EXPECT_TRUE(r.take("127.0.0.2", t0 + 1h));
  EXPECT_TRUE(r.take("127.0.0.2", t0 + 1h));
  EXPECT_FALSE(r.take("127.0.0.2", t0 + 1h));
  r.reset(1, 1h);
  EXPECT_TRUE(r.take("127.0.0.2", t0 + 1h)) << "a new configuration starts full";
}

TEST(RateLimiterTest, ManyKeysCannotGrowTheTableAndTheLeastRecentlyUsedGoes) {
  RateLimiter r;
  r.reset(1, 1h);
  RateLimiter::Clock::time_point t0{};
  EXPECT_TRUE(r.take("scraper", t0));
  for (size_t i = 0; i < 3 * RateLimiter::kMaxBuckets; ++i) {
    r.take("10." + std::to_string(i), t0);
    if (i % 1000 == 0) {
      EXPECT_FALSE(r.take("scraper", t0)) << "used recently, so kept";
    }
    EXPECT_LE(r.size(), RateLimiter::kMaxBuckets);
  }
  EXPECT_EQ(r.size(), RateLimiter::kMaxBuckets);
  EXPECT_FALSE(r.take("10." + std::to_string(3 * RateLimiter::kMaxBuckets - 1), t0));
  EXPECT_TRUE(r.take("10.0", t0)) << "evicted long ago: back with a full bucket";
}

}  // namespace
}  // namespace fabricwatch::http
