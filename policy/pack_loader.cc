#include "policy/pack_loader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include "core/host_fs.h"
#include "core/yaml_fields.h"
#include "core/yaml_load.h"
#include "policy/expr_position.h"

namespace fabricwatch::policy {
namespace {

bool validName(const std::string& s) {
  static const std::regex kName("[a-z0-9]([a-z0-9._-]*[a-z0-9])?");
  return s.size() <= 128 && std::regex_match(s, kName);
}

bool validIdentifier(const std::string& s) {
  static const std::regex kIdent("[A-Za-z_][A-Za-z0-9_]*");
  return std::regex_match(s, kIdent);
}

// One file's pack documents, with positioned problems.
class Loader {
 public:
  Loader(std::string_view text, std::string_view file, const FactRoots& roots, PackLoadResult& out)
      : text_(text), file_(file), roots_(roots), out_(out) {}

  void load() {
    core::YamlDocuments loaded = core::loadYamlDocuments(text_);
    if (loaded.error) {
      report(loaded.error->line, loaded.error->column, loaded.error->message);
      return;
    }
    PackSet packs;
    for (const auto& doc : loaded.docs) {
      if (doc.IsNull()) continue;
      if (auto p = pack(doc)) packs.push_back(std::move(*p));
    }
    if (problems_ == 0) {
      for (auto& p : packs) out_.packs.push_back(std::move(p));
    }
  }

 private:
  using Fields = core::YamlFields;

  void report(int line, int col, std::string msg) {
    ++problems_;
    out_.problems.push_back(
        core::Diagnostic{file_, line, col, std::move(msg), core::lineOf(text_, line)});
  }
  void report(const YAML::Node& n, std::string msg) {
    report(n.Mark().line + 1, n.Mark().column + 1, std::move(msg));
  }
  SourcePos posOf(const YAML::Node& n) const {
    return SourcePos{file_, n.Mark().line + 1, n.Mark().column + 1};
  }

  // The fields of a mapping, checked against the known and required names.
  std::optional<Fields> fields(const YAML::Node& n, const std::string& what,
                               std::initializer_list<std::string_view> known,
                               std::initializer_list<std::string_view> required) {
    return core::yamlFields(
        n, what, known, required,
        [this](const YAML::Node& at, std::string msg) { report(at, std::move(msg)); });
  }

  std::optional<std::string> str(const Fields& f, std::string_view key, const std::string& what) {
    auto it = f.find(key);
    if (it == f.end()) return std::nullopt;
    if (!it->second.IsScalar()) {
      report(it->second, what + "." + std::string(key) + " must be a string");
      return std::nullopt;
    }
    return it->second.Scalar();
  }

  std::optional<CompiledExpr> expression(const YAML::Node& n, const std::string& what,
                                         bool workload, bool variables = true) {
    if (!n.IsScalar() || n.Scalar().empty()) {
      report(n, what + " must be a non-empty expression string");
      return std::nullopt;
    }
    const std::string& src = n.Scalar();
    auto compiled = expr::compile(src, packExprOptions(roots_, workload, variables));
    if (auto* err = std::get_if<expr::ExprError>(&compiled)) {
      auto [line, col] =
          mapScalarPosition(text_, static_cast<size_t>(n.Mark().pos), n.Mark().line + 1,
                            n.Mark().column + 1, src, err->pos.line, err->pos.column);
      report(line, col, what + ": " + err->message);
      return std::nullopt;
    }
    return CompiledExpr{src, posOf(n),
                        std::get<std::shared_ptr<const expr::Program>>(std::move(compiled))};
  }

  std::optional<Pack> pack(const YAML::Node& doc) {
    size_t before = problems_;
    auto top = fields(doc, "document", {"apiVersion", "kind", "metadata", "spec"},
                      {"apiVersion", "kind", "metadata", "spec"});
    if (!top) return std::nullopt;
    Pack p;
    p.pos = posOf(doc);
    p.fact_roots = roots_;
    if (auto v = str(*top, "apiVersion", "document"); v && *v != "fabricwatch.io/v1")
      report(top->at("apiVersion"),
             "unsupported apiVersion \"" + *v + "\" (want fabricwatch.io/v1)");
    if (auto k = str(*top, "kind", "document"); k && *k != "PolicyPack")
      report(top->at("kind"), "unsupported kind \"" + *k + "\" (want PolicyPack)");
    if (top->count("metadata")) metadata(top->at("metadata"), p);
    if (top->count("spec")) spec(top->at("spec"), p);
    if (problems_ != before) return std::nullopt;
    return p;
  }

  void metadata(const YAML::Node& n, Pack& p) {
    auto f = fields(n, "metadata", {"name", "description"}, {"name"});
    if (!f) return;
    if (auto name = str(*f, "name", "metadata")) {
      if (!validName(*name))
        report(f->at("name"),
               "pack name \"" + *name + "\" must be lower-case letters, digits, '-', '.' or '_'");
      p.name = *name;
    }
    if (auto d = str(*f, "description", "metadata")) p.description = *d;
  }

  void spec(const YAML::Node& n, Pack& p) {
    auto f = fields(n, "spec", {"match", "variables", "rules"}, {"rules"});
    if (!f) return;
    if (f->count("match")) match(f->at("match"), p);
    if (f->count("variables")) variables(f->at("variables"), p);
    if (f->count("rules")) rules(f->at("rules"), p);
  }

  void match(const YAML::Node& n, Pack& p) {
    auto f = fields(n, "spec.match", {"resourceGroups", "expression"}, {});
    if (!f) return;
    if (auto it = f->find("resourceGroups"); it != f->end()) {
      if (!it->second.IsSequence()) {
        report(it->second, "spec.match.resourceGroups must be a list of globs");
      } else {
        for (const auto& g : it->second) {
          if (!g.IsScalar() || g.Scalar().empty())
            report(g, "a resource-group glob must be a non-empty string");
          else
            p.resource_groups.push_back(g.Scalar());
        }
      }
    }
    if (auto it = f->find("expression"); it != f->end())
      p.match_expression =
          expression(it->second, "spec.match.expression", false, /*variables=*/false);
  }

  void variables(const YAML::Node& n, Pack& p) {
    if (!n.IsSequence()) {
      report(n, "spec.variables must be a list");
      return;
    }
    std::map<std::string, SourcePos> seen;
    for (const auto& item : n) {
      auto f = fields(item, "variable", {"name", "expression"}, {"name", "expression"});
      if (!f) continue;
      auto name = str(*f, "name", "variable");
      if (!name) continue;
      if (!validIdentifier(*name)) {
        report(f->at("name"), "variable name \"" + *name + "\" must be an identifier");
        continue;
      }
      if (auto s = seen.find(*name); s != seen.end()) {
        report(f->at("name"), "duplicate variable \"" + *name + "\" (first defined at line " +
                                  std::to_string(s->second.line) + ")");
        continue;
      }
      seen[*name] = posOf(f->at("name"));
      if (!f->count("expression")) continue;
      if (auto e = expression(f->at("expression"), "variable \"" + *name + "\" expression", false))
        p.variables.push_back(Variable{*name, std::move(*e)});
    }
  }

  void rules(const YAML::Node& n, Pack& p) {
    if (!n.IsSequence()) {
      report(n, "spec.rules must be a list");
      return;
    }
    std::map<std::string, int> seen;
    for (const auto& item : n) {
      auto f = fields(
          item, "rule",
          {"id", "description", "severity", "subject", "expression", "message", "messageExpression",
           "unknownWhen", "unknownMessage", "unknownMessageExpression", "remediation"},
          {"id", "severity", "expression", "remediation"});
      if (!f) continue;
      Rule r;
      r.pos = posOf(item);
      auto id = str(*f, "id", "rule");
      if (id) {
        if (!validName(*id))
          report(f->at("id"),
                 "rule id \"" + *id + "\" must be lower-case letters, digits, '-', '.' or '_'");
        if (auto s = seen.find(*id); s != seen.end())
          report(f->at("id"), "duplicate rule id \"" + *id + "\" (first defined at line " +
                                  std::to_string(s->second) + ")");
        else
          seen[*id] = f->at("id").Mark().line + 1;
        r.id = *id;
      }
      std::string what = "rule \"" + r.id + "\"";
      if (auto sev = str(*f, "severity", "rule")) {
        if (auto s = parseSeverity(*sev))
          r.severity = *s;
        else
          report(f->at("severity"),
                 what + ": unknown severity \"" + *sev + "\" (use critical, warning or info)");
      }
      if (auto subj = str(*f, "subject", "rule")) {
        if (*subj == "node")
          r.subject = Subject::kNode;
        else if (*subj == "workload")
          r.subject = Subject::kWorkload;
        else
          report(f->at("subject"),
                 what + ": unknown subject \"" + *subj + "\" (use node or workload)");
      }
      bool wl = r.subject == Subject::kWorkload;
      if (auto d = str(*f, "description", "rule")) r.description = *d;
      if (auto m = str(*f, "message", "rule")) r.message = *m;
      if (auto rem = str(*f, "remediation", "rule")) {
        if (rem->find_first_not_of(" \t\n") == std::string::npos)
          report(f->at("remediation"), what + ": remediation must say what to do");
        r.remediation = *rem;
      }
      if (f->count("expression")) {
        if (auto e = expression(f->at("expression"), what + " expression", wl))
          r.expression = std::move(*e);
      }
      if (f->count("messageExpression"))
        r.message_expression =
            expression(f->at("messageExpression"), what + " messageExpression", wl);
      if (f->count("unknownWhen"))
        r.unknown_when = expression(f->at("unknownWhen"), what + " unknownWhen", wl);
      if (auto m = str(*f, "unknownMessage", "rule")) r.unknown_message = *m;
      if (f->count("unknownMessageExpression"))
        r.unknown_message_expression =
            expression(f->at("unknownMessageExpression"), what + " unknownMessageExpression", wl);
      if (!f->count("unknownWhen") &&
          (f->count("unknownMessage") || f->count("unknownMessageExpression")))
        report(f->count("unknownMessage") ? f->at("unknownMessage")
                                          : f->at("unknownMessageExpression"),
               what + ": an unknown message needs unknownWhen");
      p.rules.push_back(std::move(r));
    }
  }

  std::string_view text_;
  std::string file_;
  const FactRoots& roots_;
  PackLoadResult& out_;
  size_t problems_ = 0;
};

bool hasYamlExtension(const std::filesystem::path& p) {
  auto ext = p.extension().string();
  return ext == ".yaml" || ext == ".yml";
}

// Pack names must be unique within one set.
void checkUniqueNames(PackLoadResult& r) {
  std::map<std::string, const Pack*> seen;
  for (const auto& p : r.packs) {
    auto [it, fresh] = seen.emplace(p.name, &p);
    if (fresh) continue;
    const Pack& first = *it->second;
    r.problems.push_back(core::Diagnostic{p.pos.file, p.pos.line, p.pos.column,
                                          "duplicate pack name \"" + p.name +
                                              "\" (also defined at " + first.pos.file + ":" +
                                              std::to_string(first.pos.line) + ")",
                                          ""});
  }
}

}  // namespace

PackLoadResult loadPackText(std::string_view text, std::string_view file, const FactRoots& roots) {
  PackLoadResult r;
  Loader(text, file, roots, r).load();
  if (r.ok()) checkUniqueNames(r);
  if (!r.ok()) r.packs.clear();
  return r;
}

bool isPolicyTestFile(std::string_view path) {
  std::string name = std::filesystem::path(path).filename().string();
  for (std::string_view suffix : {"_test.yaml", "_test.yml", ".test.yaml", ".test.yml"}) {
    if (name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      return true;
  }
  return false;
}

std::vector<std::string> packFiles(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const auto& path : paths) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
      std::vector<std::string> dir;
      for (const auto& e : std::filesystem::directory_iterator(path, ec)) {
        if (e.is_regular_file(ec) && hasYamlExtension(e.path()) &&
            !isPolicyTestFile(e.path().string()))
          dir.push_back(e.path().string());
      }
      std::sort(dir.begin(), dir.end());
      files.insert(files.end(), dir.begin(), dir.end());
      continue;
    }
    files.push_back(path);
  }
  return files;
}

PackLoadResult loadPackPaths(const std::vector<std::string>& paths, const FactRoots& roots) {
  PackLoadResult all;
  for (const auto& f : packFiles(paths)) {
    auto text = core::readRegularFile(f, kMaxPackBytes);
    if (!text) {
      all.problems.push_back(
          core::Diagnostic{f, 0, 0, "cannot read policy file: " + text.error().message, ""});
      continue;
    }
    PackLoadResult r = loadPackText(*text, f, roots);
    for (auto& p : r.packs) all.packs.push_back(std::move(p));
    for (auto& d : r.problems) all.problems.push_back(std::move(d));
  }
  checkUniqueNames(all);
  if (!all.ok()) all.packs.clear();
  return all;
}

PackLoadResult loadPackTexts(const std::vector<PackText>& files, const FactRoots& roots) {
  PackLoadResult all;
  for (const auto& f : files) {
    PackLoadResult r = loadPackText(f.text, f.name, roots);
    for (auto& p : r.packs) all.packs.push_back(std::move(p));
    for (auto& d : r.problems) all.problems.push_back(std::move(d));
  }
  checkUniqueNames(all);
  if (!all.ok()) all.packs.clear();
  return all;
}

expr::CompileOptions packExprOptions(const FactRoots& roots, bool workload, bool variables) {
  expr::CompileOptions opts;
  for (const auto& r : withEngineRoots(roots)) {
    if (r == "variables" && !variables) continue;
    opts.identifiers.push_back(r);
  }
  if (workload) opts.identifiers.push_back("workload");
  return opts;
}

}  // namespace fabricwatch::policy
