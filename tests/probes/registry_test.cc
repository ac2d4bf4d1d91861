// The one list (probes/registry.h) against what depends on it: every configuration key is
// documented where its owner says, every kind's printed defaults are its struct's, every source
// declares the fact roots it fills, and the frame ranges lie apart.
#include "probes/registry.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "config/loader.h"
#include "core/snapshot.h"
#include "tests/facts/fixture_facts.h"
#include "tests/support/paths.h"
#include "tests/support/registry.h"

namespace fabricwatch::probes {
namespace {

// Key rows of a page's tables: "| `a.b.c` | ...".
std::set<std::string> documentedKeys(const std::string& page) {
  std::ifstream in(testing::sourceDir() + "/" + page);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  std::set<std::string> keys;
  std::regex row(R"(\n\| `([a-z_*]+(\.[a-z_*]+)+)` \|)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), row); it != std::sregex_iterator();
       ++it)
    keys.insert((*it)[1]);
  return keys;
}

// docs/configuration.md documents the daemon's own keys; a kind's keys are on the page its
// registration names (the built-in kinds: configuration.md too). No page documents a key that
// does not exist.
TEST(RegistryTest, EveryKeyIsDocumentedWhereItsOwnerSays) {
  std::map<std::string, std::string> page_of_table;
  for (const auto& k : probeKinds()) {
    ASSERT_FALSE(k.docs.empty()) << k.name << " names no docs page";
    if (!k.config.name.empty()) page_of_table[k.config.name] = k.docs;
  }
  std::map<std::string, std::set<std::string>> pages;
  std::set<std::string> known;
  auto schema = configSchema();
  for (const auto& t : schema->tables()) {
    auto it = page_of_table.find(t.name);
    std::string page = it == page_of_table.end() ? "docs/configuration.md" : it->second;
    if (!pages.count(page)) pages[page] = documentedKeys(page);
    for (const auto& k : t.keys) {
      known.insert(k.path);
      EXPECT_TRUE(pages[page].count(k.path)) << k.path << " is missing from " << page;
    }
  }
  for (const auto& [page, keys] : pages)
    for (const auto& k : keys)
      EXPECT_TRUE(known.count(k)) << k << " is documented in " << page << " but is no key";
}

// `fabricwatch config default` prints each kind's table as its registration gives it: that text
// loads, sets every key of the table, and gives the struct's own defaults.
TEST(RegistryTest, EveryKindsPrintedDefaultsAreItsDefaults) {
  auto schema = configSchema();
  for (const auto& t : schema->tables()) {
    if (t.defaults.empty()) continue;
    auto r = config::loadConfig(t.defaults, t.name + " defaults", testing::kindLoadOptions());
    ASSERT_TRUE(r.ok()) << core::formatAll(r.problems);
    EXPECT_TRUE(r.config.tables == config::Config{}.tables) << t.name << ": not the defaults";
    for (const auto& k : t.keys) {
      std::string key = k.path.substr(t.name.size() + 1);
      if (key.find('*') != std::string::npos) continue;  // env.*: a table of names, none set
      EXPECT_NE(t.defaults.find("\n" + key + " = "), std::string::npos)
          << k.path << " is missing from its table's printed defaults";
    }
  }
}

// What a source returns lies under the roots it declares, which is all that policies may name.
TEST(RegistryTest, EverySourceDeclaresTheRootsItFills) {
  std::map<std::string, std::vector<std::string>> roots;
  for (const auto& s : sources()) roots[s.name] = s.fact_roots;
  for (const auto& fixture : facts::fixtureRoots()) {
    for (auto& src : makeNodeSources()) {
      core::Collection c = src->collect({testing::fixture(fixture)});
      for (const auto& [root, value] : c.facts.asMap()) {
        const auto& declared = roots[std::string(src->name())];
        EXPECT_NE(std::find(declared.begin(), declared.end(), root), declared.end())
            << src->name() << " fills " << root << " on " << fixture << " but does not declare it";
      }
    }
  }
  auto all = factRoots();
  for (const char* r : {"kernel", "rdma", "limits", "workloads", "node", "probes"})
    EXPECT_NE(std::find(all.begin(), all.end(), r), all.end()) << r;
}

TEST(RegistryTest, FrameRangesLieApart) {
  EXPECT_EQ(checkFrameRanges(probeKinds()), std::nullopt);
  KindRegistration channel;
  channel.name = "early";
  channel.frames = {8, 4};
  EXPECT_EQ(checkFrameRanges({channel}),
            "probe kind early's frame types 8-11 overlap the channel's (1-15)");
}

}  // namespace
}  // namespace fabricwatch::probes
