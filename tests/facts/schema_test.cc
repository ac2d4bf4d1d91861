// docs/facts.md is the schema of the facts document: every path that any fixture root produces
// must be documented there with its type, and every documented path must be produced by some
// fixture, so that the document and its description never drift apart.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "facts/dcb_netlink.h"
#include "tests/facts/fixture_facts.h"
#include "tests/support/temp_dir.h"

namespace fabricwatch::facts {
namespace {

using Schema = std::map<std::string, std::string>;  // path -> type

// The rows of the table between <!-- NAME:begin --> and <!-- NAME:end -->.
Schema readTable(const std::string& doc, const std::string& name) {
  Schema out;
  size_t b = doc.find("<!-- " + name + ":begin -->");
  size_t e = doc.find("<!-- " + name + ":end -->");
  if (b == std::string::npos || e == std::string::npos) return out;
  std::istringstream in(doc.substr(b, e - b));
  std::string line;
  while (std::getline(in, line)) {
    // | `path` | type | unit | read from |
    size_t p1 = line.find('`'), p2 = line.find('`', p1 + 1);
    if (line.rfind("| `", 0) != 0 || p2 == std::string::npos) continue;
    size_t t1 = line.find('|', p2) + 1, t2 = line.find('|', t1);
    std::string type = line.substr(t1, t2 - t1);
    type.erase(0, type.find_first_not_of(' '));
    type.erase(type.find_last_not_of(' ') + 1);
    out[line.substr(p1 + 1, p2 - p1 - 1)] = type;
  }
  return out;
}

std::string typeName(const core::Value& v) {
  switch (v.kind()) {
    case core::Value::Kind::kBool:
      return "bool";
    case core::Value::Kind::kInt:
      return "int";
    case core::Value::Kind::kDouble:
      return "double";
    case core::Value::Kind::kString:
      return "string";
    case core::Value::Kind::kList:
      return "list";
    case core::Value::Kind::kMap:
      return "map";
    default:
      return "null";
  }
}

class Checker {
 public:
  Checker(Schema main, Schema pcie) : main_(std::move(main)), pcie_(std::move(pcie)) {}

  void walk(const core::Value& v, const std::string& path, const Schema& schema,
            const std::string& where) {
    if (!path.empty()) {
      auto it = schema.find(path);
      if (it != schema.end()) {
        used(schema, path);
        // An unsigned 64-bit value above INT64_MAX is a double in an `int` field (docs/facts.md).
        bool u64_above_int64 = it->second == "int" && v.isDouble() && v.asDouble() >= 0x1p63;
        if (!u64_above_int64) {
          EXPECT_EQ(it->second, typeName(v)) << where << ": " << path;
        }
      } else if (!v.isMap() || !hasChildren(schema, path)) {
        ADD_FAILURE() << where << ": " << path << " (" << typeName(v)
                      << ") is not documented in docs/facts.md";
      }
    }
    if (v.isList()) {
      for (const auto& e : v.asList()) walk(e, path + "[]", schema, where);
    } else if (v.isMap()) {
      if (!path.empty() && path.size() >= 5 && path.substr(path.size() - 5) == ".pcie") {
        for (const auto& [k, c] : v.asMap()) walk(c, k, pcie_, where + " " + path);
        return;
      }
      for (const auto& [k, c] : v.asMap()) {
        std::string exact = path.empty() ? k : path + "." + k;
        std::string wild = path + ".*";
        bool known = schema.count(exact) || hasChildren(schema, exact);
        bool use_exact = known || (!schema.count(wild) && !hasChildren(schema, wild));
        walk(c, use_exact ? exact : wild, schema, where);
      }
    }
  }

  // Rows that no fixture produced.
  std::vector<std::string> unused() const {
    std::vector<std::string> out;
    for (const auto* s : {&main_, &pcie_}) {
      for (const auto& [p, t] : *s) {
        if (!used_.count(tag(*s, p))) out.push_back(p);
      }
    }
    return out;
  }

  const Schema& main() const { return main_; }

 private:
  static bool hasChildren(const Schema& s, const std::string& path) {
    auto it = s.lower_bound(path + ".");
    return it != s.end() && it->first.rfind(path + ".", 0) == 0;
  }
  std::string tag(const Schema& s, const std::string& p) const {
    return (&s == &pcie_ ? "pcie:" : "") + p;
  }
  void used(const Schema& s, const std::string& p) { used_.insert(tag(s, p)); }

  Schema main_, pcie_;
  std::set<std::string> used_;
};

std::string readDoc() {
  std::ifstream in(testing::sourceDir() + "/docs/facts.md");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(SchemaTest, DocumentedTablesParse) {
  std::string doc = readDoc();
  ASSERT_FALSE(doc.empty());
  Schema main = readTable(doc, "schema");
  EXPECT_GT(main.size(), 100u);
  EXPECT_EQ(main["rdma.devices[].ports[].rate_gbps"], "double");
  EXPECT_EQ(readTable(doc, "schema-pcie").size(), 7u);
}

TEST(SchemaTest, FixtureFactsMatchTheDocumentedSchema) {
  std::string doc = readDoc();
  Checker check(readTable(doc, "schema"), readTable(doc, "schema-pcie"));
  for (const auto& name : fixtureRoots()) {
    auto f = collectFixture(name);
    check.walk(f.facts, "", check.main(), name);
  }
  // And this machine, seen through a root whose PID 1 shares this process's network namespace:
  // its real /sys, and net.host_network, which no fixture can tell.
  testing::TempDir live;
  char self[64];
  ssize_t n = ::readlink("/proc/self/ns/net", self, sizeof self);
  ASSERT_GT(n, 0);
  std::filesystem::create_directories(live.path() + "/proc/1/ns");
  std::filesystem::create_symlink(std::string(self, static_cast<size_t>(n)),
                                  live.path() + "/proc/1/ns/net");
  std::filesystem::create_symlink("/sys", live.path() + "/sys");
  check.walk(collectRoot(live.path()).facts, "", check.main(), "this machine");
  // And a DCB device's PFC answer, which neither a fixture root nor this machine has (PFC comes
  // from netlink only, and only from hardware): priority 4 on, as mlnx_qos --pfc leaves it.
  DcbPfc pfc;
  pfc.supported = pfc.has_pfc = true;
  pfc.pfc_cap = 8;
  pfc.pfc_en = 0x10;
  core::Value dcb = core::Value::map();
  core::Value iface = core::Value::map({{"name", "eth4"}, {"pfc", pfcFact(pfc)}});
  dcb.setPath("net.interfaces", core::Value::list());
  dcb["net"]["interfaces"].push(std::move(iface));
  check.walk(dcb, "", check.main(), "a DCB answer");
  for (const auto& p : check.unused()) {
    ADD_FAILURE() << "docs/facts.md documents " << p << " but no fixture produces it";
  }
}

TEST(SchemaTest, CheckerCatchesUndocumentedAndMistypedPaths) {
  Checker check({{"a", "map"}, {"a.b", "int"}, {"a.m.*", "string"}, {"a.m", "map"}}, {});
  core::Value v = core::Value::map();
  v.setPath("a.b", "not an int");
  v.setPath("a.m.anything", "ok");
  v.setPath("a.extra", 1);
  ::testing::TestPartResultArray failures;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
    check.walk(v, "", check.main(), "t");
  }
  ASSERT_EQ(failures.size(), 2);
  EXPECT_NE(std::string(failures.GetTestPartResult(0).message()).find("a.b"), std::string::npos);
  EXPECT_NE(std::string(failures.GetTestPartResult(1).message()).find("a.extra"),
            std::string::npos);
}

}  // namespace
}  // namespace fabricwatch::facts
