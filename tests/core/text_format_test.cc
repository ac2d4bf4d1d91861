// The text exposition format writer: byte-identical to prometheus-cpp 1.0.1's TextSerializer
// (the golden file it wrote), numbers as %.16g, escaping, histograms.
#include "core/text_format.h"

#include <gtest/gtest.h>

#include <clocale>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "tests/core/text_format_golden.h"
#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/require.h"

namespace fabricwatch::core {
namespace {

using testing::readFile;

std::string value(double v) {
  std::string s;
  appendSampleValue(s, v);
  return s;
}

TEST(TextFormatTest, MatchesTheGoldenExpositionTextSerializerWrote) {
  std::string golden = readFile(testing::sourceDir() + "/tests/core/golden/text_format.prom");
  ASSERT_FALSE(golden.empty());
  EXPECT_EQ(textFormat(testing::textFormatGoldenFamilies()), golden);
}

TEST(TextFormatTest, WritesNumbersAsPercent16g) {
  EXPECT_EQ(value(0), "0");
  EXPECT_EQ(value(-0.0), "-0");
  EXPECT_EQ(value(42), "42");
  EXPECT_EQ(value(-7), "-7");
  EXPECT_EQ(value(0.1), "0.1");
  EXPECT_EQ(value(1.0 / 3), "0.3333333333333333");
  EXPECT_EQ(value(1e21), "1e+21");
  EXPECT_EQ(value(1e-7), "1e-07");
  EXPECT_EQ(value(0.0005), "0.0005");
  EXPECT_EQ(value(1e15), "1000000000000000");
  EXPECT_EQ(value(1e16), "1e+16");
  EXPECT_EQ(value(1796112876.930453), "1796112876.930453");
  // Counters past 2^53 are doubles: 16 significant digits, then an exponent.
  EXPECT_EQ(value(9007199254740992.0), "9007199254740992");
  EXPECT_EQ(value(18446744073709551615.0), "1.844674407370955e+19");
  EXPECT_EQ(value(std::numeric_limits<double>::max()), "1.797693134862316e+308");
  EXPECT_EQ(value(std::numeric_limits<double>::denorm_min()), "4.940656458412465e-324");
}

TEST(TextFormatTest, SpellsNanAndInfinitiesAsTextSerializerDid) {
  EXPECT_EQ(value(std::nan("")), "Nan");
  EXPECT_EQ(value(-std::nan("")), "Nan");
  EXPECT_EQ(value(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(value(-std::numeric_limits<double>::infinity()), "-Inf");
}

TEST(TextFormatTest, NumbersIgnoreTheProcessLocale) {
  // printf would write "0,25" under a locale with a decimal comma; the format wants a point.
  const char* old = std::setlocale(LC_NUMERIC, nullptr);
  std::string saved = old ? old : "C";
  if (!std::setlocale(LC_NUMERIC, "de_DE.UTF-8"))
    FW_UNAVAILABLE("locale") << "no de_DE.UTF-8 locale";
  std::string quarter = value(0.25), big = value(1234567.5);
  std::setlocale(LC_NUMERIC, saved.c_str());
  EXPECT_EQ(quarter, "0.25");
  EXPECT_EQ(big, "1234567.5");
}

TEST(TextFormatTest, EscapesLabelValuesAndHelp) {
  auto f = gaugeFamily("m", "Help with \\ backslash, \"quotes\"\nand a newline.");
  addSample(f, {{"a", "back\\slash"}, {"b", "say \"hi\""}, {"c", "two\nlines"}, {"d", "tab\t"}}, 1);
  EXPECT_EQ(textFormat({f}),
            "# HELP m Help with \\\\ backslash, \"quotes\"\\nand a newline.\n"
            "# TYPE m gauge\n"
            "m{a=\"back\\\\slash\",b=\"say \\\"hi\\\"\",c=\"two\\nlines\",d=\"tab\t\"} 1\n");
}

TEST(TextFormatTest, HistogramsAreCumulativeWithATrailingInfBucket) {
  prometheus::MetricFamily f{"h_seconds", "", prometheus::MetricType::Histogram, {}};
  prometheus::ClientMetric m;
  m.label = {{"route", "/x"}};
  m.histogram.sample_count = 5;
  m.histogram.sample_sum = 1.5;
  m.histogram.bucket = {{2, 0.1}, {4, 1}};
  f.metric.push_back(m);
  // Ending at +Inf already: no second +Inf bucket.
  m.histogram.bucket.push_back({5, std::numeric_limits<double>::infinity()});
  f.metric.push_back(m);
  std::string want_one =
      "h_seconds_count{route=\"/x\"} 5\n"
      "h_seconds_sum{route=\"/x\"} 1.5\n"
      "h_seconds_bucket{route=\"/x\",le=\"0.1\"} 2\n"
      "h_seconds_bucket{route=\"/x\",le=\"1\"} 4\n"
      "h_seconds_bucket{route=\"/x\",le=\"+Inf\"} 5\n";
  EXPECT_EQ(textFormat({f}), "# TYPE h_seconds histogram\n" + want_one + want_one);
}

TEST(TextFormatTest, TimestampsOnlyWhenSet) {
  auto f = counterFamily("c_total", "C.");
  addSample(f, {}, 1);
  f.metric.push_back(f.metric[0]);
  f.metric[1].timestamp_ms = 1700000000123;
  EXPECT_EQ(textFormat({f}),
            "# HELP c_total C.\n# TYPE c_total counter\nc_total 1\n"
            "c_total 1 1700000000123\n");
}

TEST(TextFormatTest, AppendsToWhatTheStringHolds) {
  auto f = gaugeFamily("g", "G.");
  addSample(f, {}, 2);
  std::string out = "before\n";
  appendTextFormat(out, {f});
  EXPECT_EQ(out, "before\n# HELP g G.\n# TYPE g gauge\ng 2\n");
}

}  // namespace
}  // namespace fabricwatch::core
