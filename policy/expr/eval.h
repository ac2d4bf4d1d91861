#pragma once
// The compiled form of an expression: a tree of evaluation nodes built once by the compiler and
// walked by every evaluation. Nodes are immutable; all per-evaluation state lives in Ctx.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "policy/expr/functions.h"
#include "policy/expr/runtime.h"

namespace re2 {
class RE2;
}

namespace fabricwatch::policy::expr {

class Node {
 public:
  explicit Node(Position pos) : pos_(pos) {}
  virtual ~Node() = default;
  virtual RVal eval(Ctx& c) const = 0;
  // A constant node's value (literals and folded constants); nullptr otherwise.
  virtual const RVal* constant() const { return nullptr; }
  Position pos() const { return pos_; }

 protected:
  Position pos_;
};
using NodePtr = std::unique_ptr<Node>;

// A literal or folded constant; owns the storage its RVal points into.
class ConstNode : public Node {
 public:
  ConstNode(Position pos, core::Value v);
  ConstNode(Position pos, Semver v);
  RVal eval(Ctx& c) const override;
  const RVal* constant() const override { return &val_; }
  const core::Value& value() const { return value_; }

 private:
  core::Value value_;
  std::unique_ptr<Semver> semver_;
  RVal val_;
};

NodePtr makeGlobal(Position pos, std::string name);
NodePtr makeLocal(Position pos, int slot);
NodePtr makeSelect(Position pos, NodePtr operand, std::string field);
NodePtr makeHas(Position pos, NodePtr operand, std::string field);
NodePtr makeIndex(Position pos, NodePtr operand, NodePtr index);
NodePtr makeNot(Position pos, NodePtr operand);
NodePtr makeNeg(Position pos, NodePtr operand);
// op: one of + - * / % < <= > >= == != in
NodePtr makeBinary(Position pos, const std::string& op, NodePtr lhs, NodePtr rhs);
NodePtr makeAnd(Position pos, NodePtr lhs, NodePtr rhs);
NodePtr makeOr(Position pos, NodePtr lhs, NodePtr rhs);
NodePtr makeTernary(Position pos, NodePtr cond, NodePtr then, NodePtr otherwise);
NodePtr makeList(Position pos, std::vector<NodePtr> elements);
NodePtr makeMap(Position pos, std::vector<NodePtr> keys_and_values);
NodePtr makeCall(Position pos, const FunctionDef* fn, std::vector<NodePtr> args);
NodePtr makeMatchesConst(Position pos, NodePtr target, std::shared_ptr<const re2::RE2> re);

enum class MacroKind { kAll, kExists, kExistsOne, kMap, kFilter };
// transform is only for kMap (filter may be set for the three-argument map(x, p, t)).
NodePtr makeMacro(Position pos, MacroKind kind, NodePtr range, int slot, NodePtr predicate,
                  NodePtr transform);

}  // namespace fabricwatch::policy::expr
