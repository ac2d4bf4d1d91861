#pragma once
// Recursive-descent parser for the CEL subset: tokens in, a syntax tree (Ast) or a positioned error
// out. Macros and function names are not resolved here; the compiler does that.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/value.h"
#include "policy/expr/expr.h"

namespace fabricwatch::policy::expr {

enum class AstKind {
  kLiteral,  // literal
  kIdent,    // name
  kSelect,   // args[0].name
  kIndex,    // args[0][args[1]]
  kCall,     // name(args...) or, when method, args[0].name(args[1..])
  kList,     // [args...]
  kMap,      // {args[0]: args[1], ...}
  kUnary,    // name in {"!", "-"} applied to args[0]
  kBinary,   // args[0] name args[1]; name is the operator text, including "&&", "||" and "in"
  kTernary,  // args[0] ? args[1] : args[2]
};

struct Ast {
  AstKind kind = AstKind::kLiteral;
  Position pos;  // the token that identifies the node (operator, field name, function name...)
  std::string name;
  core::Value literal;
  bool method = false;
  int height = 1;
  std::vector<std::unique_ptr<Ast>> args;
};

// Deeper syntax trees are rejected so that neither parsing nor evaluation can exhaust the stack.
inline constexpr int kMaxAstHeight = 200;

// nullptr and *error on a syntax error, or on a tree of more than max_nodes nodes (the lexer
// stops at 4 tokens per node first), positioned at the token where the bound was reached.
std::unique_ptr<Ast> parse(std::string_view source, ExprError* error,
                           size_t max_nodes = kMaxExprNodes);

}  // namespace fabricwatch::policy::expr
