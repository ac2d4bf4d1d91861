#include "core/utf8.h"

#include <gtest/gtest.h>

#include "core/value.h"
#include "core/value_format.h"

namespace fabricwatch::core {
namespace {

TEST(Utf8Test, ValidityIsWellFormedUtf8WithoutNul) {
  EXPECT_TRUE(isValidUtf8("mlx5_0"));
  EXPECT_TRUE(isValidUtf8("gr\xc3\xbc\xc3\x9f \xe2\x82\xac \xf0\x9f\x98\x80 tab\tnewline\n"));
  EXPECT_FALSE(isValidUtf8("bad\xff\xfename"));
  EXPECT_FALSE(isValidUtf8(std::string("nul\0x", 5)));
  EXPECT_FALSE(isValidUtf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(isValidUtf8("\xed\xa0\x80"));      // a surrogate
  EXPECT_FALSE(isValidUtf8("\xf4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(isValidUtf8("cut \xe2\x82"));      // a sequence cut short
}

TEST(Utf8Test, InvalidBytesBecomeReplacementCharacters) {
  std::string s = "bad\xff\xfename";
  EXPECT_TRUE(makeValidUtf8(s));
  EXPECT_EQ(s, "bad\xef\xbf\xbd\xef\xbf\xbdname");
  EXPECT_TRUE(isValidUtf8(s));
  std::string ok = "fine\n";
  EXPECT_FALSE(makeValidUtf8(ok));
  EXPECT_EQ(ok, "fine\n");
}

TEST(Utf8Test, FactsTreesAreMadeValidKeysIncludedAndCounted) {
  Value v = Value::map();
  v["net"]["interfaces"].push(Value::map({{"name", "eth\xff"}, {"mtu", 9000}}));
  v["net"]["interfaces"].push(Value::map({{"name", "eth1"}}));
  v["nccl"]["settings"]["KEY\xfe"] = Value::map({{"value", "ok"}});
  EXPECT_EQ(makeStringsValidUtf8(v), 2u);
  std::string json = toJson(v);
  EXPECT_TRUE(isValidUtf8(json)) << json;
  EXPECT_EQ(v.findPath("net.interfaces")->asList()[0].find("name")->asString(), "eth\xef\xbf\xbd");
  EXPECT_NE(v.findPath("nccl.settings")->find("KEY\xef\xbf\xbd"), nullptr);
  EXPECT_EQ(makeStringsValidUtf8(v), 0u) << "valid strings are left alone";
}

// Issue 13: diagnostics echoed raw bytes and newlines to the terminal, and a 100 MB value made a
// 200 MB log line. What is echoed is quoted, escaped and cut.
TEST(Utf8Test, QuoteForDisplayEscapesAndCuts) {
  EXPECT_EQ(quoteForDisplay("5 parsecs"), "\"5 parsecs\"");
  EXPECT_EQ(quoteForDisplay("a\"b\\c\nd\te\x1b[31m"), "\"a\\\"b\\\\c\\nd\\te\\x1b[31m\"");
  EXPECT_EQ(quoteForDisplay("bad\xff\xfename"), "\"bad\\xff\\xfename\"");
  EXPECT_EQ(quoteForDisplay("gr\xc3\xbc\xc3\x9f"), "\"gr\xc3\xbc\xc3\x9f\"");
  std::string huge(100 << 20, 'x');
  std::string q = quoteForDisplay(huge, 16);
  EXPECT_EQ(q, "\"xxxxxxxxxxxxxxxx\"... (104857600 bytes)");
  // A multi-byte character is never cut in half.
  EXPECT_EQ(quoteForDisplay("ab\xe2\x82\xac", 3), "\"ab\"... (5 bytes)");
}

}  // namespace
}  // namespace fabricwatch::core
