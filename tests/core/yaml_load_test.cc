#include "core/yaml_load.h"

#include <gtest/gtest.h>

#include <chrono>

namespace fabricwatch::core {
namespace {

// Nine levels of aliases, ten uses each: 10^9 scalars once expanded.
std::string anchorBomb(const std::string& indent) {
  std::string y = indent + "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'i'; ++c) {
    std::string prev(1, static_cast<char>(c - 1));
    y += indent + std::string(1, c) + ": &" + std::string(1, c) + " [";
    for (int i = 0; i < 10; ++i) y += (i ? ", *" : "*") + prev;
    y += "]\n";
  }
  return y;
}

TEST(YamlLoadTest, AnAnchorBombIsRefusedQuicklyWithAPosition) {
  auto start = std::chrono::steady_clock::now();
  YamlDocument d = loadYamlDocument(anchorBomb(""));
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(d.error);
  EXPECT_NE(d.error->message.find("more than 500000 nodes"), std::string::npos) << d.error->message;
  EXPECT_GE(d.error->line, 1);
  EXPECT_LT(took, std::chrono::seconds(5)) << "the check stops at its bound";
}

TEST(YamlLoadTest, DepthIsBounded) {
  std::string deep;
  for (int i = 0; i < 100; ++i) deep += "[";
  for (int i = 0; i < 100; ++i) deep += "]";
  YamlDocument d = loadYamlDocument(deep);
  ASSERT_TRUE(d.error);
  EXPECT_NE(d.error->message.find("deeper than 64"), std::string::npos) << d.error->message;
}

TEST(YamlLoadTest, OrdinaryDocumentsAndSyntaxErrors) {
  YamlDocuments ok = loadYamlDocuments("a: 1\n---\nb: [1, 2]\n");
  EXPECT_FALSE(ok.error);
  EXPECT_EQ(ok.docs.size(), 2u);
  // Aliases within the bound are fine.
  EXPECT_FALSE(loadYamlDocument("a: &x [1, 2]\nb: *x\n").error);
  YamlDocument bad = loadYamlDocument("a: [1, 2\nb: 3\n");
  ASSERT_TRUE(bad.error);
  EXPECT_NE(bad.error->message.find("YAML syntax error"), std::string::npos);
  EXPECT_GE(bad.error->line, 1);
}

}  // namespace
}  // namespace fabricwatch::core
