#pragma once
// A subset of CEL (the Common Expression Language of Kubernetes ValidatingAdmissionPolicy),
// evaluated over the facts document. Parse and check once with compile(); evaluate many times,
// from any thread. Evaluation never throws and is bounded by a cost limit.
//
// docs/policy-language.md specifies the language.

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/value.h"

namespace fabricwatch::policy::expr {

// 1-based position inside the expression text.
struct Position {
  int line = 1;
  int column = 1;
};

struct ExprError {
  Position pos;
  std::string message;
};

// The bound on an expression's compiled size: syntax nodes (each literal, name, operator, call,
// list and map element). A policy list of 50,000 strings fits; a 3.3 MB list (over 200,000
// elements) took 125 MB to load before the bound and is now refused before it is built
// (docs/security.md, "Round three"). The lexer stops at 4 tokens per node.
inline constexpr size_t kMaxExprNodes = 50000;

// The error of an expression over max_nodes, at the token where the bound was reached.
std::string exprTooLargeMessage(size_t max_nodes);

struct CompileOptions {
  // Top-level identifiers the expression may use (e.g. "rdma", "memory", "variables", "workload").
  // Empty: any identifier is accepted and resolved at evaluation time.
  std::vector<std::string> identifiers;
  size_t max_nodes = kMaxExprNodes;  // the compiled size's bound (kMaxExprNodes)
};

// The names visible to one evaluation. Values are borrowed: they must outlive evaluate().
class Activation {
 public:
  void bind(std::string name, const core::Value* value) { names_[std::move(name)] = value; }
  const core::Value* lookup(std::string_view name) const {
    auto it = names_.find(name);
    return it == names_.end() ? nullptr : it->second;
  }

 private:
  std::map<std::string, const core::Value*, std::less<>> names_;
};

struct EvalOptions {
  uint64_t cost_limit = 1'000'000;  // abstract steps; exceeding it is an evaluation error
};

struct EvalResult {
  core::Value value;              // meaningful when ok()
  std::vector<ExprError> errors;  // non-empty on failure (no such key, type mismatch, cost ...)
  uint64_t cost = 0;
  bool ok() const { return errors.empty(); }
};

class Program {
 public:
  virtual ~Program() = default;
  virtual EvalResult evaluate(const Activation& activation, const EvalOptions& opts = {}) const = 0;
  virtual const std::string& source() const = 0;
  // The kinds the compiler knows the result can have, '|'-separated ("bool", "int|double", "list"),
  // or "dyn" when it depends on the facts. A loader can reject a rule that can never be a bool.
  virtual std::string resultType() const { return "dyn"; }
};

using CompileResult = std::variant<std::shared_ptr<const Program>, ExprError>;
CompileResult compile(std::string_view source, const CompileOptions& opts = {});

}  // namespace fabricwatch::policy::expr
