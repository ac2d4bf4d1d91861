#pragma once
// The shipped packs in compiled form. The build loads config/policies/*.yaml once with the same
// loader as any pack (a problem in a shipped pack fails the build, positioned FILE:LINE:COL) and
// writes what it loaded as constant data (policy/pack_codegen.h); at run time the packs are
// built from that data and only their expressions are compiled. Parsing the YAML was a third of
// `fabricwatch check`'s CPU on a p5 node (yaml-cpp's scanner, and a node tree per document),
// paid again by every Slurm prolog; the data keeps every position a loaded pack has.

#include <span>
#include <string_view>

#include "policy/pack.h"

namespace fabricwatch::policy {

struct EmbeddedPos {
  int line = 0;
  int column = 0;
};

struct EmbeddedExpr {
  bool present = false;
  std::string_view text;
  EmbeddedPos pos;
};

struct EmbeddedVariable {
  std::string_view name;
  EmbeddedExpr expr;
};

struct EmbeddedRule {
  std::string_view id;
  std::string_view description;
  Severity severity;
  Subject subject;
  EmbeddedExpr expression;
  std::string_view message;
  EmbeddedExpr message_expression;
  EmbeddedExpr unknown_when;
  std::string_view unknown_message;
  EmbeddedExpr unknown_message_expression;
  std::string_view remediation;
  EmbeddedPos pos;
};

struct EmbeddedPack {
  std::string_view file;  // "config/policies/aws-efa.yaml"
  std::string_view name;
  std::string_view description;
  EmbeddedPos pos;
  std::span<const std::string_view> resource_groups;
  EmbeddedExpr match_expression;
  std::span<const EmbeddedVariable> variables;
  std::span<const EmbeddedRule> rules;
};

// The shipped packs, in load order (generated at build time).
std::span<const EmbeddedPack> embeddedPacks();

// Builds the packs from their data, compiling the expressions as the loader does. The build
// compiled them already, so a problem here means the data and the compiler disagree; it is
// reported at the expression's position all the same.
struct PackLoadResult;
PackLoadResult packsFromEmbedded(std::span<const EmbeddedPack> packs, const FactRoots& roots);

}  // namespace fabricwatch::policy
