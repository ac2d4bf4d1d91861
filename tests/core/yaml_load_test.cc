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

// yaml-cpp 0.7's LoadAll loops forever, allocating, on a document that starts with a token no
// node starts with (a top-level ','); YAML::Load returns null for it and ignores the rest
// (policy_pack_fuzz's finding, tests/fuzz/corpus/policy_pack_fuzz/loadall_stray_flow_end.yaml).
TEST(YamlLoadTest, ADocumentStartingWithAStrayFlowTokenIsAPositionedError) {
  struct Case {
    const char* text;
    int line, column;
    const char* token;
  };
  for (const Case& c :
       {Case{", x]\nb: 1\n", 1, 1, "','"}, Case{",\n", 1, 1, "','"},
        Case{"a: 1\n--- ,\nb: 2\n", 2, 5, "','"}, Case{"# pack\n---\n\n  , [x]\n", 4, 3, "','"}}) {
    SCOPED_TRACE(c.text);
    YamlDocuments all = loadYamlDocuments(c.text);
    ASSERT_TRUE(all.error);
    EXPECT_EQ(all.error->line, c.line);
    EXPECT_EQ(all.error->column, c.column);
    EXPECT_NE(all.error->message.find(std::string("cannot start with ") + c.token),
              std::string::npos)
        << all.error->message;
    EXPECT_TRUE(all.docs.empty());
  }
  // The single-document reader refuses a first document that consumes nothing, and still reads
  // a first document whose successors are broken (YAML::Load reads one document).
  YamlDocument first = loadYamlDocument("--- ,\nname: x\n");
  ASSERT_TRUE(first.error);
  EXPECT_EQ(first.error->line, 1);
  EXPECT_EQ(first.error->column, 5);
  YamlDocument ok = loadYamlDocument("a: 1\n--- ,\n");
  ASSERT_FALSE(ok.error) << ok.error->message;
  EXPECT_EQ(ok.doc["a"].as<int>(), 1);
}

}  // namespace
}  // namespace fabricwatch::core
