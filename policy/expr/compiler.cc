#include <re2/re2.h>

#include <algorithm>

#include "policy/expr/eval.h"
#include "policy/expr/expr.h"
#include "policy/expr/parser.h"

// The compiler: resolves names (comprehension variables to slots), macros and functions, checks the
// static types it can know (literals, operators, function results), folds constant subexpressions
// and precompiles literal regexes. Facts are dynamically typed, so most checks on them happen at
// evaluation.

namespace fabricwatch::policy::expr {
namespace {

struct CompileFailure {
  ExprError error;
};

struct Typed {
  NodePtr node;
  TypeMask type = kTDyn;
};

TypeMask maskOf(const RVal& v) {
  switch (v.t) {
    case VT::kNull:
      return kTNull;
    case VT::kBool:
      return kTBool;
    case VT::kInt:
      return kTInt;
    case VT::kDouble:
      return kTDouble;
    case VT::kString:
      return kTString;
    case VT::kList:
      return kTList;
    case VT::kMap:
      return kTMap;
    case VT::kSemver:
      return kTSemver;
    case VT::kError:
      return kTDyn;
  }
  return kTDyn;
}

bool holdsSemver(const RVal& v) {
  if (v.t == VT::kSemver) return true;
  if (v.t == VT::kList && v.rlist) {
    for (const RVal& e : *v.rl) {
      if (holdsSemver(e)) return true;
    }
  }
  return false;
}

bool isSemverStringPair(TypeMask a, TypeMask b) {
  return (a == kTSemver && b == kTString) || (a == kTString && b == kTSemver);
}

const char* kSemverTypeHint =
    "cannot compare semver with string; convert the string with semver(\"...\")";

bool isConst(const Typed& t) { return t.node->constant() != nullptr; }

class Compiler {
 public:
  explicit Compiler(const CompileOptions& opts) : opts_(opts) {}

  Typed compile(const Ast& a) {
    switch (a.kind) {
      case AstKind::kLiteral: {
        auto n = std::make_unique<ConstNode>(a.pos, a.literal);
        TypeMask t = maskOf(*n->constant());
        return {std::move(n), t};
      }
      case AstKind::kIdent:
        return ident(a);
      case AstKind::kSelect: {
        Typed o = compile(*a.args[0]);
        if (!(o.type & kTMap)) {
          fail(a.pos, "cannot select field '" + a.name + "' from " + typeMaskName(o.type));
        }
        bool k = isConst(o);
        return fold(k, {makeSelect(a.pos, std::move(o.node), a.name), kTDyn});
      }
      case AstKind::kIndex: {
        Typed o = compile(*a.args[0]);
        Typed i = compile(*a.args[1]);
        if (!(o.type & (kTMap | kTList))) fail(a.pos, "cannot index " + typeMaskName(o.type));
        if (o.type == kTList && !(i.type & kTNum)) {
          fail(a.args[1]->pos, "list index must be an int, not " + typeMaskName(i.type));
        }
        if (o.type == kTMap && !(i.type & kTString)) {
          fail(a.args[1]->pos, "map keys are strings, not " + typeMaskName(i.type));
        }
        bool k = isConst(o) && isConst(i);
        return fold(k, {makeIndex(a.pos, std::move(o.node), std::move(i.node)), kTDyn});
      }
      case AstKind::kCall:
        return call(a);
      case AstKind::kList: {
        std::vector<NodePtr> elems;
        bool k = true;
        for (const auto& e : a.args) {
          Typed t = compile(*e);
          k = k && isConst(t);
          elems.push_back(std::move(t.node));
        }
        return fold(k, {makeList(a.pos, std::move(elems)), kTList});
      }
      case AstKind::kMap: {
        std::vector<NodePtr> kv;
        bool k = true;
        for (size_t i = 0; i < a.args.size(); ++i) {
          Typed t = compile(*a.args[i]);
          if (i % 2 == 0 && !(t.type & kTString)) {
            fail(a.args[i]->pos, "map keys must be strings, not " + typeMaskName(t.type));
          }
          k = k && isConst(t);
          kv.push_back(std::move(t.node));
        }
        return fold(k, {makeMap(a.pos, std::move(kv)), kTMap});
      }
      case AstKind::kUnary: {
        Typed o = compile(*a.args[0]);
        bool k = isConst(o);
        if (a.name == "!") {
          if (!(o.type & kTBool)) fail(a.pos, unaryError("!", o.type));
          return fold(k, {makeNot(a.pos, std::move(o.node)), kTBool});
        }
        if (!(o.type & kTNum)) fail(a.pos, unaryError("-", o.type));
        TypeMask t = o.type & kTNum;
        return fold(k, {makeNeg(a.pos, std::move(o.node)), t});
      }
      case AstKind::kBinary:
        return binary(a);
      case AstKind::kTernary: {
        Typed c = compile(*a.args[0]);
        Typed t = compile(*a.args[1]);
        Typed e = compile(*a.args[2]);
        if (!(c.type & kTBool)) {
          fail(a.args[0]->pos, "condition of '?:' must be bool, got " + typeMaskName(c.type));
        }
        bool k = isConst(c) && isConst(t) && isConst(e);
        TypeMask type = t.type | e.type;
        return fold(
            k, {makeTernary(a.pos, std::move(c.node), std::move(t.node), std::move(e.node)), type});
      }
    }
    fail(a.pos, "internal error: unknown syntax node");
  }

 private:
  [[noreturn]] void fail(Position pos, std::string msg) {
    throw CompileFailure{ExprError{pos, std::move(msg)}};
  }

  static std::string unaryError(const char* op, TypeMask t) {
    return std::string("no matching overload for '") + op + "' applied to (" + typeMaskName(t) +
           ")";
  }

  Typed ident(const Ast& a) {
    for (int i = static_cast<int>(scope_.size()) - 1; i >= 0; --i) {
      if (scope_[i] == a.name) return {makeLocal(a.pos, i), kTDyn};
    }
    if (!opts_.identifiers.empty() && std::find(opts_.identifiers.begin(), opts_.identifiers.end(),
                                                a.name) == opts_.identifiers.end()) {
      fail(a.pos, "undeclared reference to '" + a.name + "'");
    }
    return {makeGlobal(a.pos, a.name), kTDyn};
  }

  // A node whose operands are all constants is evaluated once, now; its errors are compile errors.
  Typed fold(bool all_const, Typed t) {
    if (!all_const) return t;
    Ctx c;
    Activation empty;
    RegexCache regexes;
    c.activation = &empty;
    c.limit = 1'000'000;
    c.regexes = &regexes;
    RVal r = t.node->eval(c);
    if (r.isError()) fail(r.e->pos, r.e->message);
    if (r.t == VT::kSemver) return {std::make_unique<ConstNode>(t.node->pos(), *r.sv), kTSemver};
    if (holdsSemver(r)) return t;  // a list of versions stays computed so it keeps its kind
    auto n = std::make_unique<ConstNode>(t.node->pos(), toValue(r));
    TypeMask type = maskOf(*n->constant());
    return {std::move(n), type};
  }

  Typed binary(const Ast& a) {
    Typed l = compile(*a.args[0]);
    Typed r = compile(*a.args[1]);
    bool k = isConst(l) && isConst(r);
    const std::string& op = a.name;
    auto mismatch = [&] {
      fail(a.pos, "no matching overload for '" + op + "' applied to (" + typeMaskName(l.type) +
                      ", " + typeMaskName(r.type) + ")");
    };
    if (op == "&&" || op == "||") {
      if (!(l.type & kTBool))
        fail(a.args[0]->pos, "operands of '" + op + "' must be bool, got " + typeMaskName(l.type));
      if (!(r.type & kTBool))
        fail(a.args[1]->pos, "operands of '" + op + "' must be bool, got " + typeMaskName(r.type));
      NodePtr n = op == "&&" ? makeAnd(a.pos, std::move(l.node), std::move(r.node))
                             : makeOr(a.pos, std::move(l.node), std::move(r.node));
      return fold(k, {std::move(n), kTBool});
    }
    TypeMask result = 0;
    if (op == "+" || op == "-" || op == "*" || op == "/" || op == "%") {
      TypeMask num_l = l.type & kTNum, num_r = r.type & kTNum;
      if (num_l && num_r) {
        if ((num_l & kTInt) && (num_r & kTInt)) result |= kTInt;
        if (op != "%" && ((num_l & kTDouble) || (num_r & kTDouble))) result |= kTDouble;
      }
      if (op == "+" && (l.type & kTString) && (r.type & kTString)) result |= kTString;
      if (op == "+" && (l.type & kTList) && (r.type & kTList)) result |= kTList;
      if (!result) mismatch();
    } else if (op == "in") {
      if (!(r.type & (kTList | kTMap))) mismatch();
      result = kTBool;
    } else {
      if (isSemverStringPair(l.type, r.type)) fail(a.pos, kSemverTypeHint);
      if (op != "==" && op != "!=") {
        bool ok = ((l.type & kTNum) && (r.type & kTNum)) ||
                  ((l.type & kTString) && (r.type & kTString)) ||
                  ((l.type & kTBool) && (r.type & kTBool)) ||
                  ((l.type & kTSemver) && (r.type & kTSemver));
        if (!ok) mismatch();
      }
      result = kTBool;
    }
    return fold(k, {makeBinary(a.pos, op, std::move(l.node), std::move(r.node)), result});
  }

  Typed call(const Ast& a) {
    static const std::pair<const char*, MacroKind> kMacros[] = {
        {"all", MacroKind::kAll},
        {"exists", MacroKind::kExists},
        {"exists_one", MacroKind::kExistsOne},
        {"map", MacroKind::kMap},
        {"filter", MacroKind::kFilter}};
    if (!a.method && a.name == "has") {
      if (a.args.size() != 1 || a.args[0]->kind != AstKind::kSelect) {
        fail(a.pos,
             "has() takes one field selection, e.g. has(a.b); for a key that is not an "
             "identifier write \"key\" in a");
      }
      const Ast& sel = *a.args[0];
      Typed o = compile(*sel.args[0]);
      if (!(o.type & kTMap)) {
        fail(sel.pos, "cannot select field '" + sel.name + "' from " + typeMaskName(o.type));
      }
      bool k = isConst(o);
      return fold(k, {makeHas(a.pos, std::move(o.node), sel.name), kTBool});
    }
    if (a.method) {
      for (const auto& [name, kind] : kMacros) {
        if (a.name == name) return macro(a, kind);
      }
    }
    const FunctionDef* fn = findFunction(a.name);
    if (fn == nullptr) {
      if (a.name == "has") fail(a.pos, "has() is not a method; write has(a.b)");
      for (const auto& [name, kind] : kMacros) {
        if (a.name == name)
          fail(a.pos, std::string(name) + "() is a macro: write list." + name + "(x, ...)");
      }
      fail(a.pos, "unknown function '" + a.name + "'");
    }
    std::vector<Typed> args;
    for (const auto& e : a.args) args.push_back(compile(*e));
    TypeMask result = 0;
    bool arity_ok = false;
    for (const Overload& o : fn->overloads) {
      if (o.params.size() != args.size()) continue;
      arity_ok = true;
      bool ok = true;
      for (size_t i = 0; i < args.size(); ++i) ok = ok && (args[i].type & o.params[i]);
      if (ok) result |= o.result;
    }
    if (!arity_ok) {
      std::string counts;
      for (const Overload& o : fn->overloads) {
        std::string n = std::to_string(o.params.size() - (a.method ? 1 : 0));
        if (counts.find(n) == std::string::npos) counts += (counts.empty() ? "" : " or ") + n;
      }
      fail(a.pos, "function '" + a.name + "' takes " + counts + " argument(s), got " +
                      std::to_string(args.size() - (a.method ? 1 : 0)));
    }
    if (!result) {
      std::string types;
      for (size_t i = 0; i < args.size(); ++i)
        types += (i ? ", " : "") + typeMaskName(args[i].type);
      fail(a.pos, "no matching overload for '" + a.name + "' applied to (" + types + ")");
    }
    bool k = true;
    for (const auto& t : args) k = k && isConst(t);
    if (a.name == std::string("matches") && isConst(args[1])) {
      // A literal pattern compiles once, here, and its errors point at the pattern.
      const RVal* pat = args[1].node->constant();
      RE2::Options ro;
      ro.set_log_errors(false);
      auto re = std::make_shared<const re2::RE2>(*pat->s, ro);
      if (!re->ok()) {
        fail(args[1].node->pos(), "invalid regular expression '" + *pat->s + "': " + re->error());
      }
      bool target_const = isConst(args[0]);
      return fold(target_const,
                  {makeMatchesConst(a.pos, std::move(args[0].node), std::move(re)), kTBool});
    }
    std::vector<NodePtr> nodes;
    for (auto& t : args) nodes.push_back(std::move(t.node));
    return fold(k, {makeCall(a.pos, fn, std::move(nodes)), result});
  }

  Typed macro(const Ast& a, MacroKind kind) {
    size_t want = kind == MacroKind::kMap ? 0 : 3;
    if ((want && a.args.size() != want) || (!want && a.args.size() != 3 && a.args.size() != 4)) {
      fail(a.pos, a.name + "() takes " + (want ? "2" : "2 or 3") +
                      " arguments: a variable name and an expression");
    }
    const Ast& var = *a.args[1];
    if (var.kind != AstKind::kIdent) {
      fail(var.pos, a.name + "() needs a variable name as its first argument");
    }
    Typed range = compile(*a.args[0]);
    if (!(range.type & (kTList | kTMap))) {
      fail(a.pos, a.name + "() needs a list or a map, not " + typeMaskName(range.type));
    }
    if (scope_.size() >= static_cast<size_t>(kMaxSlots)) {
      fail(a.pos, "comprehensions are nested too deeply (limit " + std::to_string(kMaxSlots) + ")");
    }
    int slot = static_cast<int>(scope_.size());
    scope_.push_back(var.name);
    Typed pred, transform;
    if (kind == MacroKind::kMap) {
      if (a.args.size() == 4) pred = compile(*a.args[2]);
      transform = compile(*a.args.back());
    } else {
      pred = compile(*a.args[2]);
    }
    scope_.pop_back();
    if (pred.node && !(pred.type & kTBool)) {
      fail(pred.node->pos(),
           "predicate of " + a.name + "() must be bool, got " + typeMaskName(pred.type));
    }
    TypeMask result = kind == MacroKind::kMap || kind == MacroKind::kFilter ? kTList : kTBool;
    return {makeMacro(a.pos, kind, std::move(range.node), slot, std::move(pred.node),
                      std::move(transform.node)),
            result};
  }

  const CompileOptions& opts_;
  std::vector<std::string> scope_;
};

class CompiledProgram : public Program {
 public:
  CompiledProgram(std::string source, NodePtr root, TypeMask type)
      : source_(std::move(source)), root_(std::move(root)), type_(type) {}

  EvalResult evaluate(const Activation& activation, const EvalOptions& opts) const override {
    Ctx c;
    c.activation = &activation;
    c.limit = opts.cost_limit;
    c.regexes = &regexes_;
    RVal r = root_->eval(c);
    EvalResult out;
    out.cost = c.cost;
    if (r.isError()) {
      out.errors.push_back(*r.e);
    } else {
      out.value = toValue(r);
    }
    return out;
  }
  const std::string& source() const override { return source_; }
  std::string resultType() const override { return typeMaskName(type_); }

 private:
  std::string source_;
  NodePtr root_;
  TypeMask type_;
  mutable RegexCache regexes_;
};

}  // namespace

CompileResult compile(std::string_view source, const CompileOptions& opts) {
  ExprError err;
  std::unique_ptr<Ast> ast = parse(source, &err, opts.max_nodes);
  if (!ast) return err;
  try {
    Typed t = Compiler(opts).compile(*ast);
    return std::shared_ptr<const Program>(
        std::make_shared<CompiledProgram>(std::string(source), std::move(t.node), t.type));
  } catch (const CompileFailure& f) {
    return f.error;
  }
}

}  // namespace fabricwatch::policy::expr
