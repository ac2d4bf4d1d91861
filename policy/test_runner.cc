#include "policy/test_runner.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <ostream>

#include "core/host_fs.h"
#include "core/yaml_fields.h"
#include "core/yaml_load.h"
#include "policy/evaluator.h"
#include "policy/nccl_facts.h"
#include "policy/pack_loader.h"
#include "policy/yaml_value.h"

namespace fabricwatch::policy {
namespace {

namespace fs = std::filesystem;

struct Expected {
  std::string pack, rule, subject = "node", severity, message;
  bool has_message = false;
};

struct TestCase {
  std::string name;
  int line = 0;
  std::string resource_group;
  core::Value facts;
  std::string facts_file;
  std::string rootfs;
  std::vector<Expected> expected;
  std::vector<Expected> expected_unknown;
};

// Test files and facts files: regular files of at most 16 MiB (never a FIFO that would block).
std::optional<std::string> readFile(const std::string& path) {
  auto text = core::readRegularFile(path, 16 << 20);
  if (!text) return std::nullopt;
  return std::move(*text);
}

class TestFile {
 public:
  TestFile(std::string path, std::string text) : path_(std::move(path)), text_(std::move(text)) {}

  bool parse() {
    core::YamlDocument loaded = core::loadYamlDocument(text_);
    if (loaded.error) {
      report(loaded.error->line, loaded.error->column, loaded.error->message);
      return false;
    }
    const YAML::Node& doc = loaded.doc;
    auto top =
        fields(doc, "test file", {"apiVersion", "kind", "packs", "tests"}, {"kind", "tests"});
    if (!top) return false;
    if (auto it = top->find("kind"); it != top->end() && it->second.Scalar() != "PolicyTest")
      report(it->second, "unsupported kind \"" + it->second.Scalar() + "\" (want PolicyTest)");
    if (auto it = top->find("apiVersion");
        it != top->end() && it->second.Scalar() != "fabricwatch.io/v1")
      report(it->second, "unsupported apiVersion \"" + it->second.Scalar() + "\"");
    if (auto it = top->find("packs"); it != top->end()) {
      if (!it->second.IsSequence()) report(it->second, "packs must be a list of paths");
      for (const auto& p : it->second) packs.push_back(resolve(p.Scalar()));
    } else {
      packs.push_back(fs::path(path_).parent_path().string().empty()
                          ? "."
                          : fs::path(path_).parent_path().string());
    }
    if (auto it = top->find("tests"); it != top->end()) {
      if (!it->second.IsSequence()) report(it->second, "tests must be a list");
      for (const auto& t : it->second) testCase(t);
    }
    return problems.empty();
  }

  std::vector<std::string> packs;
  std::vector<TestCase> cases;
  std::vector<core::Diagnostic> problems;
  const std::string& path() const { return path_; }

 private:
  using Fields = core::YamlFields;

  std::string resolve(const std::string& rel) const {
    if (rel.empty() || rel[0] == '/') return rel;
    return (fs::path(path_).parent_path() / rel).lexically_normal().string();
  }
  void report(int line, int col, std::string msg) {
    problems.push_back(
        core::Diagnostic{path_, line, col, std::move(msg), core::lineOf(text_, line)});
  }
  void report(const YAML::Node& n, std::string msg) {
    report(n.Mark().line + 1, n.Mark().column + 1, std::move(msg));
  }

  std::optional<Fields> fields(const YAML::Node& n, const std::string& what,
                               std::initializer_list<std::string_view> known,
                               std::initializer_list<std::string_view> required) {
    return core::yamlFields(
        n, what, known, required,
        [this](const YAML::Node& at, std::string msg) { report(at, std::move(msg)); });
  }

  static std::string scalar(const Fields& f, std::string_view k) {
    auto it = f.find(k);
    return it != f.end() && it->second.IsScalar() ? it->second.Scalar() : std::string();
  }

  void testCase(const YAML::Node& n) {
    auto f = fields(n, "test",
                    {"name", "resourceGroup", "facts", "factsFile", "rootfs", "expectedViolations",
                     "expectedUnknown"},
                    {"name"});
    if (!f) return;
    TestCase tc;
    tc.line = n.Mark().line + 1;
    tc.name = scalar(*f, "name");
    tc.resource_group = scalar(*f, "resourceGroup");
    int sources = 0;
    if (auto it = f->find("facts"); it != f->end()) {
      ++sources;
      tc.facts = yamlToValue(it->second);
      if (!tc.facts.isMap()) report(it->second, "facts must be a mapping (the facts document)");
    }
    if (auto it = f->find("factsFile"); it != f->end()) {
      ++sources;
      tc.facts_file = resolve(it->second.Scalar());
    }
    if (auto it = f->find("rootfs"); it != f->end()) {
      ++sources;
      tc.rootfs = resolve(it->second.Scalar());
    }
    if (sources != 1)
      report(n, "test \"" + tc.name + "\" needs exactly one of facts, factsFile, rootfs");
    expectedList(*f, "expectedViolations", "expected violation", tc.expected);
    expectedList(*f, "expectedUnknown", "expected unknown result", tc.expected_unknown);
    cases.push_back(std::move(tc));
  }

  void expectedList(const Fields& f, const char* key, const char* what,
                    std::vector<Expected>& out) {
    auto it = f.find(key);
    if (it == f.end()) return;
    if (!it->second.IsSequence() && !it->second.IsNull())
      report(it->second, std::string(key) + " must be a list");
    for (const auto& e : it->second) {
      auto ef =
          fields(e, what, {"pack", "rule", "subject", "severity", "message"}, {"pack", "rule"});
      if (!ef) continue;
      Expected x;
      x.pack = scalar(*ef, "pack");
      x.rule = scalar(*ef, "rule");
      if (ef->count("subject")) x.subject = scalar(*ef, "subject");
      x.severity = scalar(*ef, "severity");
      if (ef->count("message")) {
        x.message = scalar(*ef, "message");
        x.has_message = true;
      }
      if (!x.severity.empty() && !parseSeverity(x.severity))
        report(ef->at("severity"), "unknown severity \"" + x.severity + "\"");
      out.push_back(std::move(x));
    }
  }

  std::string path_;
  std::string text_;
};

bool matches(const Expected& e, const Finding& f) {
  return e.pack == f.pack && e.rule == f.rule &&
         (e.subject == f.subject || e.subject == f.subject_label) &&
         (e.severity.empty() || e.severity == severityName(f.severity)) &&
         (!e.has_message || e.message == f.message);
}

std::string describe(const Expected& e) {
  std::string s =
      e.pack + "/" + e.rule + " " + (e.severity.empty() ? "" : e.severity + " ") + e.subject;
  if (e.has_message) s += ": " + e.message;
  return s;
}

std::string describe(const Finding& f) {
  return f.pack + "/" + f.rule + " " + severityName(f.severity) + " " + f.subject + ": " +
         f.message;
}

// Pairs what was expected with what was produced: "-" expected and not produced, "+" (or "?"
// for unknown results) produced and not expected.
void compare(const std::vector<Expected>& expected, const std::vector<Finding>& produced,
             const std::string& kind, std::vector<std::string>& diff) {
  std::vector<bool> used(produced.size(), false);
  for (const auto& e : expected) {
    bool found = false;
    for (size_t i = 0; i < produced.size() && !found; ++i) {
      if (used[i] || !matches(e, produced[i])) continue;
      used[i] = found = true;
    }
    if (!found) diff.push_back("  - " + kind + describe(e));
  }
  for (size_t i = 0; i < produced.size(); ++i)
    if (!used[i]) diff.push_back((kind.empty() ? "  + " : "  ? ") + kind + describe(produced[i]));
}

std::vector<std::string> collectTestFiles(const std::vector<std::string>& paths,
                                          std::vector<core::Diagnostic>& problems) {
  std::vector<std::string> files;
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<std::string> dir;
      for (const auto& e : fs::recursive_directory_iterator(p, ec))
        if (e.is_regular_file(ec) && isPolicyTestFile(e.path().string()))
          dir.push_back(e.path().string());
      std::sort(dir.begin(), dir.end());
      if (dir.empty())
        problems.push_back(
            core::Diagnostic{p, 0, 0, "no policy test files (*_test.yaml) here", ""});
      files.insert(files.end(), dir.begin(), dir.end());
    } else if (!fs::exists(p, ec)) {
      problems.push_back(core::Diagnostic{p, 0, 0, "no such file or directory", ""});
    } else {
      files.push_back(p);
    }
  }
  return files;
}

}  // namespace

TestSummary runPolicyTests(const std::vector<std::string>& paths, const FactsProvider& provider,
                           const FactRoots& roots, std::ostream& out) {
  TestSummary sum;
  for (const auto& path : collectTestFiles(paths, sum.problems)) {
    ++sum.files;
    auto text = readFile(path);
    if (!text) {
      sum.problems.push_back(core::Diagnostic{path, 0, 0, "cannot read test file", ""});
      continue;
    }
    TestFile tf(path, *text);
    if (!tf.parse()) {
      for (auto& d : tf.problems) sum.problems.push_back(std::move(d));
      continue;
    }
    PackLoadResult packs = loadPackPaths(tf.packs, roots);
    if (!packs.ok()) {
      for (auto& d : packs.problems) sum.problems.push_back(std::move(d));
      continue;
    }
    for (auto& tc : tf.cases) {
      ++sum.tests;
      std::string where = path + ":" + std::to_string(tc.line) + ": " + tc.name;
      std::vector<std::string> diff;
      core::Value facts = tc.facts;
      if (!tc.facts_file.empty()) {
        auto ft = readFile(tc.facts_file);
        try {
          if (!ft) throw std::runtime_error("cannot read " + tc.facts_file);
          core::YamlDocument fd = core::loadYamlDocument(*ft);
          if (fd.error)
            throw std::runtime_error(tc.facts_file + ":" + std::to_string(fd.error->line) + ":" +
                                     std::to_string(fd.error->column) + ": " + fd.error->message);
          facts = yamlToValue(fd.doc);
        } catch (const std::exception& e) {
          diff.push_back("  ! facts file: " + std::string(e.what()));
        }
      } else if (!tc.rootfs.empty()) {
        if (!provider) {
          diff.push_back(
              "  ! rootfs tests need fact collection (run them with fabricwatch policy test)");
        } else if (auto r = provider(tc.rootfs); r.ok()) {
          facts = std::move(r.value());
        } else {
          diff.push_back("  ! collecting facts from " + tc.rootfs + ": " + r.error().message);
        }
      }
      if (diff.empty()) {
        std::string group = tc.resource_group;
        if (group.empty()) {
          const auto* g = facts.find("resource_group");
          group = g && g->isString() ? g->asString() : "";
        }
        prepareFacts(facts, group);
        Evaluation ev = evaluate(packs.packs, facts, group);
        compare(tc.expected, ev.violations, "", diff);
        compare(tc.expected_unknown, ev.unknown, "unknown ", diff);
        for (const auto& err : ev.errors)
          diff.push_back("  ! error " + err.pack + "/" + err.rule + " " + err.subject + ": " +
                         err.message);
      }
      if (diff.empty()) {
        ++sum.passed;
        out << "ok    " << where << "\n";
      } else {
        ++sum.failed;
        out << "FAIL  " << where << "\n"
            << "  (- expected, not produced; + produced, not expected; ? unknown result not "
               "expected; ! error)\n";
        for (const auto& d : diff) out << d << "\n";
      }
    }
  }
  return sum;
}

}  // namespace fabricwatch::policy
