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

// Issue 13: diagnostics printed raw binary bytes and newlines of the offending input to the
// terminal, and a 100 MB bad value became a 200 MB line. Messages and snippets are escaped and
// cut; the caret still points at the column.
TEST(DiagnosticTest, EchoedInputIsEscapedAndCut) {
  Diagnostic bin{"p.yaml", 1, 7, "bad value \"\x1b[2J\xff\"", "name: \x1b[2J\xff end"};
  std::string f = bin.format();
  EXPECT_EQ(f,
            "p.yaml:1:7: bad value \"\\x1b[2J\\xff\"\n"
            "    name: \\x1b[2J\\xff end\n"
            "          ^");
  std::string huge(100 << 20, 'v');
  Diagnostic big{"c.toml", 1, 5000, "bad duration \"" + huge + "\"", "x = \"" + huge + "\""};
  std::string g = big.format();
  EXPECT_LT(g.size(), 2000u);
  EXPECT_NE(g.find("bytes)"), std::string::npos) << "says how much was cut";
  // The caret sits under the column, past the leading "..." of the window.
  size_t snippet = g.find("\n    ") + 5, caret = g.rfind("\n    ") + 5;
  EXPECT_EQ(g.substr(snippet, 3), "...");
  EXPECT_EQ(g.size() - caret, 3 + 60 + 1u);
  Diagnostic nl{"f", 2, 0, "line one\nline two", ""};
  EXPECT_EQ(nl.format(), "f:2: line one\\nline two");
}

}  // namespace
}  // namespace fabricwatch::core
