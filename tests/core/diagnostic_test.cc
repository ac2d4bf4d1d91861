#include "core/diagnostic.h"

#include <gtest/gtest.h>

namespace fabricwatch::core {
namespace {

TEST(DiagnosticTest, FormatsPositionSnippetAndCaret) {
  Diagnostic d{"c.toml", 3, 12, "bad duration", "interval = \"5 parsecs\""};
  EXPECT_EQ(d.format(),
            "c.toml:3:12: bad duration\n    interval = \"5 parsecs\"\n               ^");
}

TEST(DiagnosticTest, OmitsUnknownPosition) {
  EXPECT_EQ((Diagnostic{"flag --x", 0, 0, "nope", ""}).format(), "flag --x: nope");
}

TEST(DiagnosticTest, LineOfFindsLinesAndHandlesCrlf) {
  EXPECT_EQ(lineOf("a\r\nb\nc", 1), "a");
  EXPECT_EQ(lineOf("a\r\nb\nc", 3), "c");
  EXPECT_EQ(lineOf("a\nb", 5), "");
}

}  // namespace
}  // namespace fabricwatch::core
