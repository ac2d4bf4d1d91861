#include "config/duration.h"

#include <gtest/gtest.h>

namespace fabricwatch::config {
namespace {

using std::chrono::milliseconds;

TEST(DurationTest, ParsesPrometheusStyleDurations) {
  EXPECT_EQ(parseDuration("500ms"), milliseconds(500));
  EXPECT_EQ(parseDuration("30s"), milliseconds(30000));
  EXPECT_EQ(parseDuration("1m30s"), milliseconds(90000));
  EXPECT_EQ(parseDuration("2h"), milliseconds(7200000));
  EXPECT_EQ(parseDuration("1d"), milliseconds(86400000));
  EXPECT_EQ(parseDuration("0"), milliseconds(0));
}

TEST(DurationTest, RejectsEverythingElse) {
  for (const char* bad : {"", "5 parsecs", "5", "s", "1.5s", "-1s", "10y", "5s ", "99999999999s"}) {
    EXPECT_EQ(parseDuration(bad), std::nullopt) << bad;
  }
}

TEST(DurationTest, FormatsRoundTrip) {
  EXPECT_EQ(formatDuration(milliseconds(90500)), "1m30s500ms");
  EXPECT_EQ(formatDuration(milliseconds(0)), "0s");
  EXPECT_EQ(parseDuration(formatDuration(milliseconds(3723004))), milliseconds(3723004));
}

}  // namespace
}  // namespace fabricwatch::config
