#include "config/toml_ascii.h"

#include <gtest/gtest.h>

#include "config/loader.h"

namespace fabricwatch::config {
namespace {

// toml++ 3.3 reaches __builtin_unreachable() on a non-ASCII character in a key (config_fuzz
// under UBSan: tests/fuzz/corpus/config_fuzz/non_ascii_table_header); such text is refused
// before toml++ sees it.
TEST(TomlAsciiTest, ANonAsciiCharacterInAKeyIsAPositionedProblem) {
  LoadResult r = loadConfig("[collect]\ninterv\xc3\xa1l = \"5s\"\n", "f.toml");
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.problems[0].line, 2);
  EXPECT_EQ(r.problems[0].column, 7);
  EXPECT_NE(r.problems[0].message.find("non-ASCII"), std::string::npos);
  auto header = nonAsciiOutsideStrings("# ok\n[collect\xc4\xbd]\n", "f.toml");
  ASSERT_TRUE(header);
  EXPECT_EQ(header->line, 2);
  EXPECT_EQ(header->column, 9);
}

TEST(TomlAsciiTest, StringsAndCommentsMayHoldAnyText) {
  for (std::string_view text : {
           "# caf\xc3\xa9\n[web]\nlisten_address = \":19736\" # \xe2\x9c\x93\n",
           "a = \"caf\xc3\xa9 \\\" \xc3\xa9\"\nb = 'caf\xc3\xa9'\n",
           "a = \"\"\"\nl\xc3\xadne \"quoted\" \\\"\"\"\n\xc3\xa9\"\"\"\nb = '''\n\xc3\xa9 '' "
           "\n'''\n",
       }) {
    SCOPED_TRACE(text);
    auto d = nonAsciiOutsideStrings(text, "f.toml");
    EXPECT_FALSE(d) << d->message << " at " << d->line << ":" << d->column;
  }
  // toml++ classifies the first character after a line-ending backslash with the function that
  // reaches __builtin_unreachable() (config_fuzz's second finding).
  for (std::string_view text :
       {"a = \"\"\"x\\\n   \xc3\xa9 y\"\"\"\n", "a = \"\"\"x\\ \xc3\xa9\"\"\"\n"}) {
    SCOPED_TRACE(text);
    auto d = nonAsciiOutsideStrings(text, "f.toml");
    ASSERT_TRUE(d);
    EXPECT_NE(d->message.find("line-ending backslash"), std::string::npos);
  }
  EXPECT_FALSE(nonAsciiOutsideStrings("a = \"\"\"x\\\n   y \xc3\xa9\"\"\"\n", "f.toml"));
  // A quote inside a bare value opens no string: toml++ reads the value character by character
  // (config_fuzz's third finding).
  auto bare = nonAsciiOutsideStrings("[collect]\ninterval = 9\"99\xc7\xb4\"\n", "f.toml");
  ASSERT_TRUE(bare);
  EXPECT_EQ(bare->column, 16);
  EXPECT_TRUE(nonAsciiOutsideStrings("l = 0=\"9=-\xcc\x9ass\n", "f.toml"));
  // Quoted keys, array items on their own lines and dotted keys are strings.
  EXPECT_FALSE(
      nonAsciiOutsideStrings("\"k\xc3\xa9\" = 1\na = [ # c\n  \"\xc3\xa9\",\n  '\xc3\xa9' "
                             "]\nb.\"\xc3\xa9\".c = {d=\"\xc3\xa9\"}\n",
                             "f.toml"));
  // After a string closes, the check resumes.
  auto after = nonAsciiOutsideStrings("a = \"x\" \xc3\xa9\n", "f.toml");
  ASSERT_TRUE(after);
  EXPECT_EQ(after->column, 9);
}

}  // namespace
}  // namespace fabricwatch::config
