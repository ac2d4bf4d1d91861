// The shipped packs as the binary holds them (data written at build time) against the same
// files loaded from YAML now, as any pack file is (the guard against yaml-cpp's LoadAll loop
// included, as fw_embed_packs loads them): every field and position.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "policy/embedded_pack.h"
#include "policy/pack_loader.h"
#include "tests/support/paths.h"
#include "tests/support/registry.h"

namespace fabricwatch::policy {
namespace {

std::string posText(const SourcePos& p) {
  return p.file + ":" + std::to_string(p.line) + ":" + std::to_string(p.column);
}

void expectSameExpr(const CompiledExpr& a, const CompiledExpr& b, const std::string& what) {
  EXPECT_EQ(a.text, b.text) << what;
  EXPECT_EQ(posText(a.pos), posText(b.pos)) << what;
  EXPECT_TRUE(a.program && b.program) << what;
}

void expectSameOptional(const std::optional<CompiledExpr>& a, const std::optional<CompiledExpr>& b,
                        const std::string& what) {
  ASSERT_EQ(a.has_value(), b.has_value()) << what;
  if (a) expectSameExpr(*a, *b, what);
}

TEST(ShippedPacksTest, EmbeddedDataIsWhatTheYamlLoads) {
  std::string dir = testing::sourceDir() + "/config/policies";
  std::vector<std::string> paths = packFiles({dir});
  ASSERT_FALSE(paths.empty());
  std::vector<std::string> names, texts;
  for (const auto& p : paths) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    names.push_back("config/policies/" + std::filesystem::path(p).filename().string());
    texts.push_back(s.str());
  }
  std::vector<PackText> files;
  for (size_t i = 0; i < names.size(); ++i) files.push_back({names[i], texts[i]});
  PackLoadResult want = loadPackTexts(files, testing::factRoots());
  ASSERT_TRUE(want.ok()) << core::formatAll(want.problems);
  PackLoadResult got = loadEmbeddedPacks(testing::factRoots());
  ASSERT_TRUE(got.ok()) << core::formatAll(got.problems);

  ASSERT_EQ(got.packs.size(), want.packs.size());
  for (size_t i = 0; i < want.packs.size(); ++i) {
    const Pack& w = want.packs[i];
    const Pack& g = got.packs[i];
    EXPECT_EQ(g.name, w.name);
    EXPECT_EQ(g.description, w.description) << w.name;
    EXPECT_EQ(posText(g.pos), posText(w.pos)) << w.name;
    EXPECT_EQ(g.resource_groups, w.resource_groups) << w.name;
    expectSameOptional(g.match_expression, w.match_expression, w.name + " match");
    ASSERT_EQ(g.variables.size(), w.variables.size()) << w.name;
    for (size_t v = 0; v < w.variables.size(); ++v) {
      EXPECT_EQ(g.variables[v].name, w.variables[v].name) << w.name;
      expectSameExpr(g.variables[v].expr, w.variables[v].expr, w.name + " " + w.variables[v].name);
    }
    ASSERT_EQ(g.rules.size(), w.rules.size()) << w.name;
    for (size_t r = 0; r < w.rules.size(); ++r) {
      const Rule& wr = w.rules[r];
      const Rule& gr = g.rules[r];
      std::string what = w.name + "/" + wr.id;
      EXPECT_EQ(gr.id, wr.id) << what;
      EXPECT_EQ(gr.description, wr.description) << what;
      EXPECT_EQ(gr.severity, wr.severity) << what;
      EXPECT_EQ(gr.subject, wr.subject) << what;
      EXPECT_EQ(gr.message, wr.message) << what;
      EXPECT_EQ(gr.remediation, wr.remediation) << what;
      EXPECT_EQ(posText(gr.pos), posText(wr.pos)) << what;
      expectSameExpr(gr.expression, wr.expression, what + " expression");
      expectSameOptional(gr.message_expression, wr.message_expression, what + " message");
      expectSameOptional(gr.unknown_when, wr.unknown_when, what + " unknownWhen");
      EXPECT_EQ(gr.unknown_message, wr.unknown_message) << what;
      expectSameOptional(gr.unknown_message_expression, wr.unknown_message_expression,
                         what + " unknownMessageExpression");
    }
  }
}

TEST(ShippedPacksTest, AnExpressionThatDoesNotCompileIsPositioned) {
  EmbeddedRule rules[] = {{"r",
                           "",
                           Severity::kCritical,
                           Subject::kNode,
                           EmbeddedExpr{true, "has(workload.env)", {12, 19}},
                           "",
                           EmbeddedExpr{},
                           EmbeddedExpr{},
                           "",
                           EmbeddedExpr{},
                           "fix it",
                           {10, 7}}};
  EmbeddedPack packs[] = {
      {"config/policies/x.yaml", "x", "", {1, 1}, {}, EmbeddedExpr{}, {}, rules}};
  PackLoadResult r = packsFromEmbedded(packs, testing::factRoots());
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_TRUE(r.packs.empty());
  EXPECT_EQ(r.problems[0].file, "config/policies/x.yaml");
  EXPECT_EQ(r.problems[0].line, 12);
  EXPECT_EQ(r.problems[0].column, 19);
}

TEST(ShippedPacksTest, WorkloadRulesSeeTheWorkload) {
  EmbeddedRule rules[] = {{"r",
                           "",
                           Severity::kInfo,
                           Subject::kWorkload,
                           EmbeddedExpr{true, "has(workload.env)", {3, 4}},
                           "",
                           EmbeddedExpr{},
                           EmbeddedExpr{},
                           "",
                           EmbeddedExpr{},
                           "fix it",
                           {2, 3}}};
  EmbeddedPack packs[] = {{"x.yaml", "x", "", {1, 1}, {}, EmbeddedExpr{}, {}, rules}};
  PackLoadResult r = packsFromEmbedded(packs, testing::factRoots());
  ASSERT_TRUE(r.ok()) << core::formatAll(r.problems);
  ASSERT_EQ(r.packs.size(), 1u);
  EXPECT_EQ(r.packs[0].rules[0].subject, Subject::kWorkload);
  EXPECT_EQ(posText(r.packs[0].rules[0].pos), "x.yaml:2:3");
}

}  // namespace
}  // namespace fabricwatch::policy
