// docs/configuration.md documents every key the loader accepts, and nothing it does not.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "config/loader.h"
#include "tests/support/paths.h"

namespace fabricwatch::config {
namespace {

std::set<std::string> documentedKeys() {
  std::ifstream in(testing::sourceDir() + "/docs/configuration.md");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  // Key rows of the tables: "| `a.b.c` | ...".
  std::set<std::string> keys;
  std::regex row(R"(\n\| `([a-z_*]+(\.[a-z_*]+)+)` \|)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), row); it != std::sregex_iterator();
       ++it) {
    keys.insert((*it)[1]);
  }
  return keys;
}

TEST(ConfigDocsTest, EveryKeyIsDocumentedAndEveryDocumentedKeyExists) {
  std::set<std::string> documented = documentedKeys();
  ASSERT_FALSE(documented.empty());
  std::set<std::string> known;
  for (const auto& k : knownKeys()) known.insert(k);
  for (const auto& k : known)
    EXPECT_TRUE(documented.count(k)) << k << " is missing from docs/configuration.md";
  for (const auto& k : documented)
    EXPECT_TRUE(known.count(k)) << k << " is documented but the loader does not accept it";
}

}  // namespace
}  // namespace fabricwatch::config
