#include <limits>

#include "policy/expr/eval.h"

// Evaluation nodes for names, selection, operators and literals. Every node charges one cost step
// before doing anything, so once the limit is passed every further node fails too: a cost error can
// never be absorbed by && or ||.

namespace fabricwatch::policy::expr {
namespace {

#define FW_STEP(c)                               \
  do {                                           \
    if (!(c).step()) return (c).costError(pos_); \
  } while (0)

std::string overloadError(const std::string& op, const RVal& a, const RVal& b) {
  return "no matching overload for '" + op + "' applied to (" + typeName(a) + ", " + typeName(b) +
         ")";
}

bool semverVsString(const RVal& a, const RVal& b) {
  return (a.t == VT::kSemver && b.t == VT::kString) || (a.t == VT::kString && b.t == VT::kSemver);
}

const char* kSemverValueHint =
    "cannot compare semver with string; convert the string with semver(\"...\")";

class GlobalNode : public Node {
 public:
  GlobalNode(Position pos, std::string name) : Node(pos), name_(std::move(name)) {}
  RVal eval(Ctx& c) const override {
    FW_STEP(c);
    const core::Value* v = c.activation->lookup(name_);
    if (v == nullptr) return c.error(pos_, "undeclared reference to '" + name_ + "'");
    return fromValue(*v);
  }

 private:
  std::string name_;
};

class LocalNode : public Node {
 public:
  LocalNode(Position pos, int slot) : Node(pos), slot_(slot) {}
  RVal eval(Ctx& c) const override {
    FW_STEP(c);
    return c.slots[slot_];
  }
  int slot() const { return slot_; }

 private:
  int slot_;
};

class SelectNode : public Node {
 public:
  SelectNode(Position pos, NodePtr operand, std::string field, bool test_only)
      : Node(pos), operand_(std::move(operand)), field_(std::move(field)), test_only_(test_only) {
    if (auto* local = dynamic_cast<const LocalNode*>(operand_.get())) slot_ = local->slot();
  }
  RVal eval(Ctx& c) const override {
    FW_STEP(c);
    RVal o;
    if (slot_ >= 0) {
      // `d.name` inside a comprehension: read the variable here, charging its step, to save a
      // virtual call on the hottest path.
      FW_STEP(c);
      o = c.slots[slot_];
    } else {
      o = operand_->eval(c);
      if (o.isError()) return o;
    }
    if (o.t != VT::kMap) {
      return c.error(pos_, std::string("cannot select field '") + field_ + "' from " + typeName(o));
    }
    const core::Value* f = findField(*o.v, field_);
    if (test_only_) return RVal::boolean(f != nullptr);
    if (f == nullptr) return c.error(pos_, "no such key: '" + field_ + "'");
    return fromValue(*f);
  }

 private:
  NodePtr operand_;
  std::string field_;
  bool test_only_;
  int slot_ = -1;
};

class IndexNode : public Node {
 public:
  IndexNode(Position pos, NodePtr operand, NodePtr index)
      : Node(pos), operand_(std::move(operand)), index_(std::move(index)) {}
  RVal eval(Ctx& c) const override {
    FW_STEP(c);
    RVal o = operand_->eval(c);
    if (o.isError()) return o;
    RVal k = index_->eval(c);
    if (k.isError()) return k;
    if (o.t == VT::kMap) {
      if (k.t != VT::kString) {
        return c.error(pos_, std::string("map keys are strings, not ") + typeName(k));
      }
      const core::Value* f = findField(*o.v, *k.s);
      if (f == nullptr) return c.error(pos_, "no such key: '" + *k.s + "'");
      return fromValue(*f);
    }
    if (o.t == VT::kList) {
      int64_t i;
      if (k.t == VT::kInt) {
        i = k.i;
      } else if (k.t == VT::kDouble && k.d == static_cast<double>(static_cast<int64_t>(k.d))) {
        i = static_cast<int64_t>(k.d);
      } else {
        return c.error(pos_, std::string("list index must be an int, not ") + typeName(k));
      }
      size_t n = listSize(o);
      if (i < 0 || static_cast<uint64_t>(i) >= n) {
        return c.error(
            pos_, "index out of range: " + std::to_string(i) + " (size " + std::to_string(n) + ")");
      }
      return listAt(o, static_cast<size_t>(i));
    }
    return c.error(pos_, overloadError("[]", o, k));
  }

 private:
  NodePtr operand_;
  NodePtr index_;
};

class NotNode : public Node {
 public:
  NotNode(Position pos, NodePtr operand) : Node(pos), operand_(std::move(operand)) {}
  RVal eval(Ctx& c) const override {
    FW_STEP(c);
    RVal o = operand_->eval(c);
    if (o.isError()) return o;
    if (o.t != VT::kBool) {
      return c.error(pos_,
                     std::string("no matching overload for '!' applied to (") + typeName(o) + ")");
    }
    return RVal::boolean(!o.b);
  }

 private:
  NodePtr operand_;
};

class NegNode : public Node {
 public:
  NegNode(Position pos, NodePtr operand) : Node(pos), operand_(std::move(operand)) {}
  RVal eval(Ctx& c) const override {
    FW_STEP(c);
    RVal o = operand_->eval(c);
    if (o.isError()) return o;
    if (o.t == VT::kInt) {
      if (o.i == std::numeric_limits<int64_t>::min()) return c.error(pos_, "integer overflow");
      return RVal::integer(-o.i);
    }
    if (o.t == VT::kDouble) return RVal::dbl(-o.d);
    return c.error(pos_,
                   std::string("no matching overload for '-' applied to (") + typeName(o) + ")");
  }

 private:
  NodePtr operand_;
};

enum class Op { kAdd, kSub, kMul, kDiv, kMod, kLt, kLe, kGt, kGe, kEq, kNe, kIn };

class BinaryNode : public Node {
 public:
  BinaryNode(Position pos, Op op, std::string text, NodePtr lhs, NodePtr rhs)
      : Node(pos), op_(op), text_(std::move(text)), lhs_(std::move(lhs)), rhs_(std::move(rhs)) {
    const RVal* k = rhs_->constant();
    if ((op_ == Op::kEq || op_ == Op::kNe) && k != nullptr && k->t == VT::kString)
      const_str_ = k->s;
  }

  RVal eval(Ctx& c) const override {
    FW_STEP(c);
    RVal a = lhs_->eval(c);
    if (a.isError()) return a;
    if (const_str_ != nullptr && a.t == VT::kString) {
      // `x.state == "ACTIVE"`: the common comparison with a string literal, charged the same.
      FW_STEP(c);
      return RVal::boolean((*a.s == *const_str_) == (op_ == Op::kEq));
    }
    RVal b = rhs_->eval(c);
    if (b.isError()) return b;
    if (a.t == VT::kInt && b.t == VT::kInt) {
      // Counts and sizes: the common case, without the generic dispatch below.
      switch (op_) {
        case Op::kLt:
          return RVal::boolean(a.i < b.i);
        case Op::kLe:
          return RVal::boolean(a.i <= b.i);
        case Op::kGt:
          return RVal::boolean(a.i > b.i);
        case Op::kGe:
          return RVal::boolean(a.i >= b.i);
        case Op::kEq:
          return RVal::boolean(a.i == b.i);
        case Op::kNe:
          return RVal::boolean(a.i != b.i);
        default:
          break;
      }
    }
    switch (op_) {
      case Op::kAdd:
      case Op::kSub:
      case Op::kMul:
      case Op::kDiv:
      case Op::kMod:
        return arith(c, a, b);
      case Op::kEq:
      case Op::kNe: {
        if (semverVsString(a, b)) return c.error(pos_, kSemverValueHint);
        bool eq = equals(a, b);
        return RVal::boolean(op_ == Op::kEq ? eq : !eq);
      }
      case Op::kIn:
        return in(c, a, b);
      default: {
        std::optional<int> o = order(a, b);
        if (!o) {
          if (semverVsString(a, b)) return c.error(pos_, kSemverValueHint);
          return c.error(pos_, overloadError(text_, a, b));
        }
        switch (op_) {
          case Op::kLt:
            return RVal::boolean(*o < 0);
          case Op::kLe:
            return RVal::boolean(*o <= 0);
          case Op::kGt:
            return RVal::boolean(*o > 0);
          default:
            return RVal::boolean(*o >= 0);
        }
      }
    }
  }

 private:
  RVal arith(Ctx& c, const RVal& a, const RVal& b) const {
    if (a.t == VT::kInt && b.t == VT::kInt) {
      int64_t r;
      switch (op_) {
        case Op::kAdd:
          if (__builtin_add_overflow(a.i, b.i, &r)) return c.error(pos_, "integer overflow");
          return RVal::integer(r);
        case Op::kSub:
          if (__builtin_sub_overflow(a.i, b.i, &r)) return c.error(pos_, "integer overflow");
          return RVal::integer(r);
        case Op::kMul:
          if (__builtin_mul_overflow(a.i, b.i, &r)) return c.error(pos_, "integer overflow");
          return RVal::integer(r);
        case Op::kDiv:
          if (b.i == 0) return c.error(pos_, "division by zero");
          if (a.i == std::numeric_limits<int64_t>::min() && b.i == -1) {
            return c.error(pos_, "integer overflow");
          }
          return RVal::integer(a.i / b.i);
        default:
          if (b.i == 0) return c.error(pos_, "modulus by zero");
          if (b.i == -1) return RVal::integer(0);
          return RVal::integer(a.i % b.i);
      }
    }
    if (a.isNumber() && b.isNumber() && op_ != Op::kMod) {
      double x = a.num(), y = b.num();
      switch (op_) {
        case Op::kAdd:
          return RVal::dbl(x + y);
        case Op::kSub:
          return RVal::dbl(x - y);
        case Op::kMul:
          return RVal::dbl(x * y);
        default:
          if (y == 0) return c.error(pos_, "division by zero");
          return RVal::dbl(x / y);
      }
    }
    if (op_ == Op::kAdd && a.t == VT::kString && b.t == VT::kString) {
      if (!c.step(1 + (a.s->size() + b.s->size()) / 16)) return c.costError(pos_);
      return c.newString(*a.s + *b.s);
    }
    if (op_ == Op::kAdd && a.t == VT::kList && b.t == VT::kList) {
      size_t na = listSize(a), nb = listSize(b);
      if (!c.step(1 + na + nb)) return c.costError(pos_);
      RList* out = c.newList();
      out->reserve(na + nb);
      for (size_t i = 0; i < na; ++i) out->push_back(listAt(a, i));
      for (size_t i = 0; i < nb; ++i) out->push_back(listAt(b, i));
      return RVal::list(out);
    }
    return c.error(pos_, overloadError(text_, a, b));
  }

  RVal in(Ctx& c, const RVal& a, const RVal& b) const {
    if (b.t == VT::kList) {
      size_t n = listSize(b);
      if (!c.step(n)) return c.costError(pos_);
      for (size_t i = 0; i < n; ++i) {
        RVal e = listAt(b, i);
        if (semverVsString(a, e)) return c.error(pos_, kSemverValueHint);
        if (equals(a, e)) return RVal::boolean(true);
      }
      return RVal::boolean(false);
    }
    if (b.t == VT::kMap) {
      if (a.t != VT::kString) return RVal::boolean(false);
      return RVal::boolean(findField(*b.v, *a.s) != nullptr);
    }
    return c.error(pos_, overloadError("in", a, b));
  }

  Op op_;
  std::string text_;
  NodePtr lhs_;
  NodePtr rhs_;
  const std::string* const_str_ = nullptr;
};

// CEL's commutative, error-absorbing logic: false && error == false, true || error == true.
class LogicNode : public Node {
 public:
  LogicNode(Position pos, bool is_and, NodePtr lhs, NodePtr rhs)
      : Node(pos), is_and_(is_and), lhs_(std::move(lhs)), rhs_(std::move(rhs)) {}
  RVal eval(Ctx& c) const override {
    FW_STEP(c);
    const bool decisive = !is_and_;  // the operand value that decides the result
    RVal a = lhs_->eval(c);
    if (a.t == VT::kBool && a.b == decisive) return a;
    if (a.t != VT::kBool && !a.isError()) a = notBool(c, a);
    if (c.aborted) return a;
    RVal b = rhs_->eval(c);
    if (b.t == VT::kBool && b.b == decisive) return b;
    if (b.t != VT::kBool && !b.isError()) b = notBool(c, b);
    if (a.isError()) return a;
    return b;
  }

 private:
  RVal notBool(Ctx& c, const RVal& v) const {
    return c.error(pos_, std::string("operands of '") + (is_and_ ? "&&" : "||") +
                             "' must be bool, got " + typeName(v));
  }

  bool is_and_;
  NodePtr lhs_;
  NodePtr rhs_;
};

class TernaryNode : public Node {
 public:
  TernaryNode(Position pos, NodePtr cond, NodePtr then, NodePtr otherwise)
      : Node(pos), cond_(std::move(cond)), then_(std::move(then)), else_(std::move(otherwise)) {}
  RVal eval(Ctx& c) const override {
    FW_STEP(c);
    RVal k = cond_->eval(c);
    if (k.isError()) return k;
    if (k.t != VT::kBool) {
      return c.error(pos_, std::string("condition of '?:' must be bool, got ") + typeName(k));
    }
    return k.b ? then_->eval(c) : else_->eval(c);
  }

 private:
  NodePtr cond_, then_, else_;
};

class ListNode : public Node {
 public:
  ListNode(Position pos, std::vector<NodePtr> elements)
      : Node(pos), elements_(std::move(elements)) {}
  RVal eval(Ctx& c) const override {
    FW_STEP(c);
    RList* out = c.newList();
    out->reserve(elements_.size());
    for (const auto& e : elements_) {
      RVal v = e->eval(c);
      if (v.isError()) return v;
      out->push_back(v);
    }
    return RVal::list(out);
  }

 private:
  std::vector<NodePtr> elements_;
};

class MapNode : public Node {
 public:
  MapNode(Position pos, std::vector<NodePtr> kv) : Node(pos), kv_(std::move(kv)) {}
  RVal eval(Ctx& c) const override {
    FW_STEP(c);
    core::Value::Map m;
    for (size_t i = 0; i + 1 < kv_.size(); i += 2) {
      RVal k = kv_[i]->eval(c);
      if (k.isError()) return k;
      if (k.t != VT::kString) {
        return c.error(kv_[i]->pos(), std::string("map keys must be strings, not ") + typeName(k));
      }
      RVal v = kv_[i + 1]->eval(c);
      if (v.isError()) return v;
      if (!m.emplace(*k.s, toValue(v)).second) {
        return c.error(kv_[i]->pos(), "duplicate map key '" + *k.s + "'");
      }
    }
    RVal r;
    r.t = VT::kMap;
    r.v = c.newValue(core::Value(std::move(m)));
    return r;
  }

 private:
  std::vector<NodePtr> kv_;
};

}  // namespace

ConstNode::ConstNode(Position pos, core::Value v) : Node(pos), value_(std::move(v)) {
  val_ = fromValue(value_);
}

ConstNode::ConstNode(Position pos, Semver v)
    : Node(pos), semver_(std::make_unique<Semver>(std::move(v))) {
  val_ = RVal::semver(semver_.get());
}

RVal ConstNode::eval(Ctx& c) const {
  FW_STEP(c);
  return val_;
}

NodePtr makeGlobal(Position pos, std::string name) {
  return std::make_unique<GlobalNode>(pos, std::move(name));
}
NodePtr makeLocal(Position pos, int slot) { return std::make_unique<LocalNode>(pos, slot); }
NodePtr makeSelect(Position pos, NodePtr operand, std::string field) {
  return std::make_unique<SelectNode>(pos, std::move(operand), std::move(field), false);
}
NodePtr makeHas(Position pos, NodePtr operand, std::string field) {
  return std::make_unique<SelectNode>(pos, std::move(operand), std::move(field), true);
}
NodePtr makeIndex(Position pos, NodePtr operand, NodePtr index) {
  return std::make_unique<IndexNode>(pos, std::move(operand), std::move(index));
}
NodePtr makeNot(Position pos, NodePtr operand) {
  return std::make_unique<NotNode>(pos, std::move(operand));
}
NodePtr makeNeg(Position pos, NodePtr operand) {
  return std::make_unique<NegNode>(pos, std::move(operand));
}
NodePtr makeBinary(Position pos, const std::string& op, NodePtr lhs, NodePtr rhs) {
  static const std::pair<const char*, Op> kOps[] = {
      {"+", Op::kAdd}, {"-", Op::kSub}, {"*", Op::kMul}, {"/", Op::kDiv},
      {"%", Op::kMod}, {"<", Op::kLt},  {"<=", Op::kLe}, {">", Op::kGt},
      {">=", Op::kGe}, {"==", Op::kEq}, {"!=", Op::kNe}, {"in", Op::kIn}};
  for (const auto& [text, o] : kOps) {
    if (op == text) return std::make_unique<BinaryNode>(pos, o, op, std::move(lhs), std::move(rhs));
  }
  return nullptr;
}
NodePtr makeAnd(Position pos, NodePtr lhs, NodePtr rhs) {
  return std::make_unique<LogicNode>(pos, true, std::move(lhs), std::move(rhs));
}
NodePtr makeOr(Position pos, NodePtr lhs, NodePtr rhs) {
  return std::make_unique<LogicNode>(pos, false, std::move(lhs), std::move(rhs));
}
NodePtr makeTernary(Position pos, NodePtr cond, NodePtr then, NodePtr otherwise) {
  return std::make_unique<TernaryNode>(pos, std::move(cond), std::move(then), std::move(otherwise));
}
NodePtr makeList(Position pos, std::vector<NodePtr> elements) {
  return std::make_unique<ListNode>(pos, std::move(elements));
}
NodePtr makeMap(Position pos, std::vector<NodePtr> keys_and_values) {
  return std::make_unique<MapNode>(pos, std::move(keys_and_values));
}

}  // namespace fabricwatch::policy::expr
