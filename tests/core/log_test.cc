#include "core/log.h"

#include <gtest/gtest.h>

namespace fabricwatch::core::log {
namespace {

TEST(LogTest, LogfmtQuotesOnlyWhatNeedsIt) {
  EXPECT_EQ(
      formatLine(Format::kLogfmt, "T", Level::kWarn, "scheduler", "source timed out",
                 {{"source", "rdma"}, {"err", "a b"}}),
      "time=T level=warn component=scheduler msg=\"source timed out\" source=rdma err=\"a b\"");
}

TEST(LogTest, JsonLinesCarryTheSameFields) {
  EXPECT_EQ(
      formatLine(Format::kJson, "T", Level::kInfo, "exporter", "listening", {{"port", "19736"}}),
      R"({"time":"T","level":"info","component":"exporter","msg":"listening","port":"19736"})");
}

TEST(LogTest, ParsesLevelsAndFormats) {
  EXPECT_EQ(parseLevel("debug"), Level::kDebug);
  EXPECT_EQ(parseLevel("loud"), std::nullopt);
  EXPECT_EQ(parseFormat("json"), Format::kJson);
  EXPECT_EQ(parseFormat("xml"), std::nullopt);
}

std::vector<std::string>* g_lines = nullptr;

TEST(LogTest, LevelFiltersEvents) {
  std::vector<std::string> lines;
  g_lines = &lines;
  setSink([](std::string_view l) { g_lines->emplace_back(l); });
  setLevel(Level::kWarn);
  info("t", "hidden");
  warn("t", "shown");
  setLevel(Level::kInfo);
  setSink(nullptr);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("msg=shown"), std::string::npos);
}

}  // namespace
}  // namespace fabricwatch::core::log
