// docs/metrics.md is the reference for every metric family: this test scrapes the real binary
// on fixture roots and checks each family's name, type, labels and help against it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "tests/support/daemon.h"
#include "tests/support/paths.h"
#include "tests/support/temp_dir.h"

namespace fabricwatch::testing {
namespace {

struct Family {
  std::string type;
  std::string help;
  std::set<std::string> labels;
};

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::map<std::string, Family> documented() {
  std::map<std::string, Family> out;
  std::string text = readFile(sourceDir() + "/docs/metrics.md");
  std::regex row(R"(\n\| `([a-zA-Z_:][a-zA-Z0-9_:]*)` \| (\w+) \|([^|]*)\| (.*) \|)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), row); it != std::sregex_iterator();
       ++it) {
    Family f;
    f.type = (*it)[2];
    f.help = (*it)[4];
    std::stringstream labels((*it)[3].str());
    std::string l;
    while (std::getline(labels, l, ',')) {
      l.erase(0, l.find_first_not_of(' '));
      l.erase(l.find_last_not_of(' ') + 1);
      if (!l.empty()) f.labels.insert(l);
    }
    out[(*it)[1]] = f;
  }
  return out;
}

// Families in an exposition: HELP/TYPE lines and the label names of their samples.
std::map<std::string, Family> served(const std::string& text) {
  std::map<std::string, Family> out;
  std::stringstream in(text);
  std::string line;
  std::regex help(R"(# HELP (\S+) (.*))"), type(R"(# TYPE (\S+) (\S+))"),
      label(R"(([a-zA-Z_][a-zA-Z0-9_]*)=")");
  std::string current;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_match(line, m, help)) {
      current = m[1];
      out[current].help = m[2];
    } else if (std::regex_match(line, m, type)) {
      out[m[1]].type = m[2];
    } else if (!line.empty() && line[0] != '#' && !current.empty()) {
      auto brace = line.find('{');
      if (brace == std::string::npos) continue;
      std::string labels = line.substr(brace, line.find('}') - brace);
      for (auto it = std::sregex_iterator(labels.begin(), labels.end(), label);
           it != std::sregex_iterator(); ++it) {
        std::string name = (*it)[1];
        if (name != "le" && name != "quantile") out[current].labels.insert(name);
      }
    }
  }
  return out;
}

// The roots scraped: a minimal one, plus every fixture root the repository has.
std::vector<std::string> roots(const TempDir& minimal) {
  std::vector<std::string> out = {minimal.path()};
  std::string fixtures = sourceDir() + "/tests/fixtures";
  if (std::filesystem::exists(fixtures)) {
    for (const auto& e : std::filesystem::directory_iterator(fixtures)) {
      if (e.is_directory() && std::filesystem::exists(e.path() / "sys"))
        out.push_back(e.path().string());
    }
  }
  return out;
}

TEST(MetricsDocsE2ETest, EveryServedFamilyIsDocumentedExactly) {
  auto docs = documented();
  ASSERT_FALSE(docs.empty());
  TempDir minimal;
  minimal.write("proc/sys/kernel/osrelease", "6.1.0\n");
  std::set<std::string> seen;
  for (const auto& root : roots(minimal)) {
    auto d = startDaemon({"--path.rootfs=" + root});
    ASSERT_GT(d.port, 0) << d.process->stderrText();
    ASSERT_TRUE(d.waitForStatus("/readyz", 200)) << root;
    d.get("/metrics");  // the second scrape also carries the HTTP request metrics
    auto m = d.get("/metrics");
    ASSERT_TRUE(m);
    for (const auto& [name, f] : served(m->body)) {
      seen.insert(name);
      auto it = docs.find(name);
      if (it == docs.end()) {
        ADD_FAILURE() << "`" << name << "` (" << f.type << ") is served on " << root
                      << " but missing from docs/metrics.md";
        continue;
      }
      EXPECT_EQ(it->second.type, f.type) << name;
      EXPECT_EQ(it->second.help, f.help) << name;
      for (const auto& l : f.labels)
        EXPECT_TRUE(it->second.labels.count(l)) << name << " label " << l << " is not documented";
    }
  }
  EXPECT_TRUE(seen.count("fabricwatch_build_info"));
}

}  // namespace
}  // namespace fabricwatch::testing
