#include "exporter/flags.h"

#include <gtest/gtest.h>

namespace fabricwatch::exporter {
namespace {

FlagSet makeFlags() {
  FlagSet f("usage: test");
  f.add("web.listen-address", "where", ":19736");
  f.add("format", "fmt", "json");
  f.addBool("help", "help");
  return f;
}

TEST(FlagsTest, ParsesEqualsAndSpaceForms) {
  FlagSet f = makeFlags();
  ASSERT_EQ(f.parse({"--web.listen-address=:1", "--format", "yaml", "pos"}), std::nullopt);
  EXPECT_EQ(f.get("web.listen-address"), ":1");
  EXPECT_EQ(f.get("format"), "yaml");
  EXPECT_EQ(f.positional(), std::vector<std::string>{"pos"});
}

TEST(FlagsTest, DefaultsApplyWhenUnset) {
  FlagSet f = makeFlags();
  ASSERT_EQ(f.parse({}), std::nullopt);
  EXPECT_FALSE(f.isSet("format"));
  EXPECT_EQ(f.get("format"), "json");
  EXPECT_FALSE(f.getBool("help"));
}

TEST(FlagsTest, RejectsUnknownAndIncompleteFlags) {
  EXPECT_EQ(makeFlags().parse({"--nope"}), "unknown flag --nope");
  EXPECT_EQ(makeFlags().parse({"--format"}), "flag --format needs a value");
  EXPECT_EQ(makeFlags().parse({"--help=maybe"}),
            "flag --help: expected true or false, got \"maybe\"");
}

TEST(FlagsTest, HelpListsFlagsWithDefaults) {
  std::string h = makeFlags().help();
  EXPECT_NE(h.find("--web.listen-address=VALUE"), std::string::npos);
  EXPECT_NE(h.find("(default: :19736)"), std::string::npos);
}

}  // namespace
}  // namespace fabricwatch::exporter
