#include <re2/re2.h>

#include "policy/expr/eval.h"

// Function calls and the comprehension macros (all, exists, exists_one, map, filter).

namespace fabricwatch::policy::expr {
namespace {

#define FW_STEP(c)                               \
  do {                                           \
    if (!(c).step()) return (c).costError(pos_); \
  } while (0)

constexpr size_t kMaxArgs = 4;

class CallNode : public Node {
 public:
  CallNode(Position pos, const FunctionDef* fn, std::vector<NodePtr> args)
      : Node(pos), fn_(fn), args_(std::move(args)) {}
  RVal eval(Ctx& c) const override {
    FW_STEP(c);
    RVal vals[kMaxArgs];
    for (size_t i = 0; i < args_.size(); ++i) {
      vals[i] = args_[i]->eval(c);
      if (vals[i].isError()) return vals[i];
    }
    return fn_->impl(c, pos_, vals, args_.size());
  }

 private:
  const FunctionDef* fn_;
  std::vector<NodePtr> args_;
};

class MatchesConstNode : public Node {
 public:
  MatchesConstNode(Position pos, NodePtr target, std::shared_ptr<const re2::RE2> re)
      : Node(pos), target_(std::move(target)), re_(std::move(re)) {}
  RVal eval(Ctx& c) const override {
    FW_STEP(c);
    RVal s = target_->eval(c);
    if (s.isError()) return s;
    if (s.t != VT::kString) {
      return c.error(pos_, std::string("no matching overload for 'matches' applied to (") +
                               typeName(s) + ", string)");
    }
    if (!c.step(1 + s.s->size() / 16)) return c.costError(pos_);
    return RVal::boolean(RE2::PartialMatch(*s.s, *re_));
  }

 private:
  NodePtr target_;
  std::shared_ptr<const re2::RE2> re_;
};

class MacroNode : public Node {
 public:
  MacroNode(Position pos, MacroKind kind, NodePtr range, int slot, NodePtr predicate,
            NodePtr transform)
      : Node(pos),
        kind_(kind),
        range_(std::move(range)),
        slot_(slot),
        pred_(std::move(predicate)),
        transform_(std::move(transform)) {}

  RVal eval(Ctx& c) const override {
    FW_STEP(c);
    RVal range = range_->eval(c);
    if (range.isError()) return range;
    if (range.t == VT::kList) {
      size_t n = listSize(range);
      if (!range.rlist) {
        const auto& l = range.v->asList();
        return loop(c, n, [&](size_t i) { return fromValue(l[i]); });
      }
      return loop(c, n, [&](size_t i) { return (*range.rl)[i]; });
    }
    if (range.t == VT::kMap) {
      // Comprehensions over a map iterate its keys.
      const auto& m = range.v->asMap();
      auto it = m.begin();
      return loop(c, m.size(), [&](size_t) { return RVal::str(&(it++)->first); });
    }
    return c.error(pos_, std::string(name()) + "() needs a list or a map, not " + typeName(range));
  }

 private:
  const char* name() const {
    switch (kind_) {
      case MacroKind::kAll:
        return "all";
      case MacroKind::kExists:
        return "exists";
      case MacroKind::kExistsOne:
        return "exists_one";
      case MacroKind::kMap:
        return "map";
      case MacroKind::kFilter:
        return "filter";
    }
    return "?";
  }

  RVal notBool(Ctx& c, const RVal& v) const {
    return c.error(pred_->pos(),
                   std::string("predicate of ") + name() + "() must be bool, got " + typeName(v));
  }

  template <typename At>
  RVal loop(Ctx& c, size_t n, At at) const {
    RVal& var = c.slots[slot_];
    switch (kind_) {
      case MacroKind::kAll:
      case MacroKind::kExists: {
        const bool decisive = kind_ == MacroKind::kExists;
        RVal err;
        for (size_t i = 0; i < n; ++i) {
          if (!c.step()) return c.costError(pos_);
          var = at(i);
          RVal p = pred_->eval(c);
          if (p.t == VT::kBool) {
            if (p.b == decisive) return p;
            continue;
          }
          if (c.aborted) return p;
          if (!err.isError()) err = p.isError() ? p : notBool(c, p);
        }
        return err.isError() ? err : RVal::boolean(!decisive);
      }
      case MacroKind::kExistsOne: {
        int64_t count = 0;
        for (size_t i = 0; i < n; ++i) {
          if (!c.step()) return c.costError(pos_);
          var = at(i);
          RVal p = pred_->eval(c);
          if (p.isError()) return p;
          if (p.t != VT::kBool) return notBool(c, p);
          count += p.b ? 1 : 0;
        }
        return RVal::boolean(count == 1);
      }
      case MacroKind::kMap:
      case MacroKind::kFilter: {
        RList* out = c.newList();
        for (size_t i = 0; i < n; ++i) {
          if (!c.step()) return c.costError(pos_);
          var = at(i);
          if (pred_) {
            RVal p = pred_->eval(c);
            if (p.isError()) return p;
            if (p.t != VT::kBool) return notBool(c, p);
            if (!p.b) continue;
          }
          if (transform_) {
            RVal v = transform_->eval(c);
            if (v.isError()) return v;
            out->push_back(v);
          } else {
            out->push_back(var);
          }
        }
        return RVal::list(out);
      }
    }
    return RVal();
  }

  MacroKind kind_;
  NodePtr range_;
  int slot_;
  NodePtr pred_;
  NodePtr transform_;
};

}  // namespace

NodePtr makeCall(Position pos, const FunctionDef* fn, std::vector<NodePtr> args) {
  if (args.size() > kMaxArgs) return nullptr;
  return std::make_unique<CallNode>(pos, fn, std::move(args));
}

NodePtr makeMatchesConst(Position pos, NodePtr target, std::shared_ptr<const re2::RE2> re) {
  return std::make_unique<MatchesConstNode>(pos, std::move(target), std::move(re));
}

NodePtr makeMacro(Position pos, MacroKind kind, NodePtr range, int slot, NodePtr predicate,
                  NodePtr transform) {
  return std::make_unique<MacroNode>(pos, kind, std::move(range), slot, std::move(predicate),
                                     std::move(transform));
}

}  // namespace fabricwatch::policy::expr
