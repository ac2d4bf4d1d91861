#include "core/log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <thread>

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

TEST(LogTest, CaptureStderrTakesWhatALibraryPrints) {
  // As libibverbs does: fprintf(stderr) and a raw write(2) both land in the capture.
  std::string got = captureStderr([] {
    std::fprintf(stderr, "libibverbs: Warning: couldn't open config directory '%s'.\n", "/x");
    ssize_t n = ::write(2, "raw\n", 4);
    (void)n;
  });
  EXPECT_EQ(got, "libibverbs: Warning: couldn't open config directory '/x'.\nraw\n");
  // Bounded, and stderr is stderr again afterwards (a second capture starts empty).
  EXPECT_EQ(captureStderr([] { std::fprintf(stderr, "0123456789"); }, 4), "0123");
  EXPECT_EQ(captureStderr([] {}), "");
}

TEST(LogTest, LinesFromOtherThreadsWaitForACapture) {
  std::string lines;
  setSink(nullptr);
  std::string got;
  std::thread other;
  got = captureStderr([&] {
    // Another thread logs while the capture runs: its line must not be captured.
    other = std::thread([] { warn("test", "from another thread"); });
    std::fprintf(stderr, "inside\n");
  });
  other.join();
  EXPECT_EQ(got, "inside\n");
}

}  // namespace
}  // namespace fabricwatch::core::log
