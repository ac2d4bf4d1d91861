#include "core/value.h"

#include <gtest/gtest.h>

#include "core/value_format.h"

namespace fabricwatch::core {
namespace {

TEST(ValueTest, BuildsNestedDocumentsAndFindsPaths) {
  Value doc;
  doc.setPath("memory.hugepages.2048kB.total", 2560);
  doc["kernel"]["release"] = "6.1.0";
  doc["rdma"]["devices"].push(Value::map({{"name", "mlx5_0"}}));
  ASSERT_NE(doc.findPath("memory.hugepages.2048kB.total"), nullptr);
  EXPECT_EQ(doc.findPath("memory.hugepages.2048kB.total")->asInt(), 2560);
  EXPECT_EQ(doc.findPath("kernel.release")->asString(), "6.1.0");
  EXPECT_EQ(doc.findPath("kernel.missing"), nullptr);
  EXPECT_EQ(doc.findPath("kernel.release.deeper"), nullptr);
  EXPECT_EQ(doc["rdma"]["devices"].size(), 1u);
}

TEST(ValueTest, JsonIsCompactSortedAndEscaped) {
  Value v = Value::map(
      {{"b", 1}, {"a", "x\"y\n"}, {"c", Value::list()}, {"d", 1.5}, {"e", 2.0}, {"f", nullptr}});
  EXPECT_EQ(toJson(v), R"({"a":"x\"y\n","b":1,"c":[],"d":1.5,"e":2.0,"f":null})");
}

TEST(ValueTest, JsonPrettyPrints) {
  Value v = Value::map({{"a", Value(Value::List{1, 2})}});
  EXPECT_EQ(toJson(v, 2), "{\n  \"a\": [\n    1,\n    2\n  ]\n}");
}

TEST(ValueTest, JsonEscapesControlCharacters) {
  EXPECT_EQ(toJson(Value(std::string("a\x01z"))), "\"a\\u0001z\"");
}

TEST(ValueTest, YamlRendersMapsListsAndQuotedStrings) {
  Value v = Value::map(
      {{"devices", Value(Value::List{Value::map({{"name", "efa_0"}, {"ports", 1}}), Value(3)})},
       {"empty", Value::map()},
       {"true", "yes"}});
  EXPECT_EQ(toYaml(v),
            "devices:\n"
            "- name: \"efa_0\"\n"
            "  ports: 1\n"
            "- 3\n"
            "empty: {}\n"
            "\"true\": \"yes\"\n");
}

TEST(ValueTest, EqualityComparesDeeply) {
  EXPECT_EQ(Value::map({{"a", 1}}), Value::map({{"a", 1}}));
  EXPECT_FALSE(Value::map({{"a", 1}}) == Value::map({{"a", 2}}));
  EXPECT_FALSE(Value(1) == Value(1.0));
}

}  // namespace
}  // namespace fabricwatch::core
