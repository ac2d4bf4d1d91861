#pragma once
// Policy packs: what a correct node looks like for a set of resource groups, as data. A pack
// matches nodes (resource-group globs, an optional expression), defines variables, and holds
// rules; each rule is an expression that must be true, evaluated for the node or for each
// workload process. Every expression is compiled once, at load (pack_loader.h).

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "policy/expr/expr.h"

namespace fabricwatch::policy {

// The top-level names a pack's expressions may start from: the facts' roots, which the binary's
// sources declare (probes/registry.h, factRoots; the engine has no list of its own), and the
// engine's: resource_group, and variables where variables are visible.
using FactRoots = std::vector<std::string>;
FactRoots withEngineRoots(const FactRoots& source_roots);

enum class Severity { kInfo = 0, kWarning = 1, kCritical = 2 };
std::optional<Severity> parseSeverity(std::string_view s);
const char* severityName(Severity s);

// What a rule is evaluated for: the node once, or each entry of facts.workloads.
enum class Subject { kNode, kWorkload };
const char* subjectName(Subject s);

// Where an item was written, 1-based.
struct SourcePos {
  std::string file;
  int line = 0;
  int column = 0;
};

struct CompiledExpr {
  std::string text;
  SourcePos pos;
  std::shared_ptr<const expr::Program> program;
};

struct Variable {
  std::string name;
  CompiledExpr expr;
};

struct Rule {
  std::string id;
  std::string description;
  Severity severity = Severity::kWarning;
  Subject subject = Subject::kNode;
  CompiledExpr expression;
  std::string message;                             // static message (may be empty)
  std::optional<CompiledExpr> message_expression;  // wins over `message` when it yields a string
  // When the expression is false and this is true, the rule's inputs are missing and it cannot
  // judge the subject: the result is unknown (counted, reported, not a violation). Evaluated
  // only on a false result, so a rule that holds on what is known still passes.
  std::optional<CompiledExpr> unknown_when;
  std::string unknown_message;                             // what is missing (may be empty)
  std::optional<CompiledExpr> unknown_message_expression;  // wins over `unknown_message`
  std::string remediation;
  SourcePos pos;
};

struct Pack {
  std::string name;
  std::string description;
  SourcePos pos;
  std::vector<std::string> resource_groups;  // globs; empty matches every group
  std::optional<CompiledExpr> match_expression;
  std::vector<Variable> variables;
  std::vector<Rule> rules;
  FactRoots fact_roots;  // the sources' roots it was compiled against: what evaluation binds
};

using PackSet = std::vector<Pack>;

// fnmatch-style glob: '*' any run, '?' one character, '[...]' a class.
bool globMatch(std::string_view pattern, std::string_view s);
// True when the pack's resource-group globs admit the group.
bool matchesGroup(const Pack& pack, std::string_view resource_group);

}  // namespace fabricwatch::policy
