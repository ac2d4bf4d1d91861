#include "policy/expr/parser.h"

#include <set>

#include "policy/expr/lexer.h"

namespace fabricwatch::policy::expr {
namespace {

// CEL reserves these words; they cannot name identifiers or fields.
const std::set<std::string, std::less<>> kReserved = {
    "as",  "break", "const",   "continue",  "else",   "for", "function", "if",   "import",
    "let", "loop",  "package", "namespace", "return", "var", "void",     "while"};

struct SyntaxError {
  ExprError error;
};

class Parser {
 public:
  Parser(std::vector<Token> tokens, size_t max_nodes)
      : toks_(std::move(tokens)), max_nodes_(max_nodes) {}

  std::unique_ptr<Ast> parseAll() {
    auto e = expr();
    if (cur().kind != Tok::kEnd) fail(cur().pos, std::string("unexpected ") + describe(cur()));
    return e;
  }

 private:
  const Token& cur() const { return toks_[i_]; }
  const Token& ahead(size_t k) const { return toks_[std::min(i_ + k, toks_.size() - 1)]; }
  bool at(Tok k) const { return cur().kind == k; }
  const Token& take() {
    const Token& t = toks_[i_];
    if (i_ + 1 < toks_.size()) ++i_;
    return t;
  }
  [[noreturn]] void fail(Position p, std::string msg) {
    throw SyntaxError{ExprError{p, std::move(msg)}};
  }
  static std::string describe(const Token& t) {
    switch (t.kind) {
      case Tok::kIdent:
        return "identifier '" + t.text + "'";
      case Tok::kInt:
      case Tok::kDouble:
        return "number " + t.text;
      case Tok::kString:
        return "string literal";
      default:
        return tokName(t.kind);
    }
  }
  const Token& expect(Tok k) {
    if (!at(k)) {
      fail(cur().pos, std::string("expected ") + tokName(k) + ", found " + describe(cur()));
    }
    return take();
  }

  std::unique_ptr<Ast> node(AstKind kind, Position pos, std::string name = {}) {
    if (++nodes_ > max_nodes_) fail(pos, exprTooLargeMessage(max_nodes_));
    auto n = std::make_unique<Ast>();
    n->kind = kind;
    n->pos = pos;
    n->name = std::move(name);
    return n;
  }
  void add(Ast* parent, std::unique_ptr<Ast> child) {
    parent->height = std::max(parent->height, child->height + 1);
    if (parent->height > kMaxAstHeight) {
      fail(parent->pos,
           "expression is nested too deeply (limit " + std::to_string(kMaxAstHeight) + ")");
    }
    parent->args.push_back(std::move(child));
  }

  // Guards the recursion of the grammar itself (parentheses, lists, calls).
  struct DepthGuard {
    Parser* p;
    explicit DepthGuard(Parser* parser, Position pos) : p(parser) {
      if (++p->depth_ > kMaxAstHeight) {
        p->fail(pos,
                "expression is nested too deeply (limit " + std::to_string(kMaxAstHeight) + ")");
      }
    }
    ~DepthGuard() { --p->depth_; }
  };

  std::unique_ptr<Ast> binary(std::unique_ptr<Ast> lhs, const Token& op, std::unique_ptr<Ast> rhs) {
    auto n = node(AstKind::kBinary, op.pos, op.text);
    add(n.get(), std::move(lhs));
    add(n.get(), std::move(rhs));
    return n;
  }

  std::unique_ptr<Ast> expr() {
    DepthGuard g(this, cur().pos);
    auto cond = conditionalOr();
    if (!at(Tok::kQuestion)) return cond;
    const Token& q = take();
    auto n = node(AstKind::kTernary, q.pos, "?:");
    add(n.get(), std::move(cond));
    add(n.get(), conditionalOr());
    expect(Tok::kColon);
    add(n.get(), expr());
    return n;
  }

  std::unique_ptr<Ast> conditionalOr() {
    auto lhs = conditionalAnd();
    while (at(Tok::kOr)) {
      const Token& op = take();
      lhs = binary(std::move(lhs), op, conditionalAnd());
    }
    return lhs;
  }

  std::unique_ptr<Ast> conditionalAnd() {
    auto lhs = relation();
    while (at(Tok::kAnd)) {
      const Token& op = take();
      lhs = binary(std::move(lhs), op, relation());
    }
    return lhs;
  }

  static bool isRelop(Tok k) {
    return k == Tok::kLess || k == Tok::kLessEq || k == Tok::kGreater || k == Tok::kGreaterEq ||
           k == Tok::kEq || k == Tok::kNotEq || k == Tok::kIn;
  }

  std::unique_ptr<Ast> relation() {
    auto lhs = addition();
    while (isRelop(cur().kind)) {
      const Token& op = take();
      lhs = binary(std::move(lhs), op, addition());
    }
    return lhs;
  }

  std::unique_ptr<Ast> addition() {
    auto lhs = multiplication();
    while (at(Tok::kPlus) || at(Tok::kMinus)) {
      const Token& op = take();
      lhs = binary(std::move(lhs), op, multiplication());
    }
    return lhs;
  }

  std::unique_ptr<Ast> multiplication() {
    auto lhs = unary();
    while (at(Tok::kStar) || at(Tok::kSlash) || at(Tok::kPercent)) {
      const Token& op = take();
      lhs = binary(std::move(lhs), op, unary());
    }
    return lhs;
  }

  std::unique_ptr<Ast> unary() {
    if (at(Tok::kMinus) && ahead(1).kind == Tok::kInt && ahead(2).kind != Tok::kDot &&
        ahead(2).kind != Tok::kLBracket) {
      // A negative literal: lets -9223372036854775808 be written.
      const Token& minus = take();
      const Token& num = take();
      if (num.int_value > (uint64_t{1} << 63)) fail(num.pos, "integer literal out of range");
      auto n = node(AstKind::kLiteral, minus.pos);
      n->literal = core::Value(static_cast<int64_t>(-static_cast<__int128>(num.int_value)));
      return n;
    }
    // Prefix operators are collected iteratively so that a long run of them cannot recurse.
    std::vector<const Token*> ops;
    while (at(Tok::kMinus) || at(Tok::kNot)) {
      ops.push_back(&take());
      if (ops.size() > static_cast<size_t>(kMaxAstHeight)) {
        fail(ops.back()->pos,
             "expression is nested too deeply (limit " + std::to_string(kMaxAstHeight) + ")");
      }
    }
    auto operand = member();
    for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
      auto n = node(AstKind::kUnary, (*it)->pos, (*it)->text);
      add(n.get(), std::move(operand));
      operand = std::move(n);
    }
    return operand;
  }

  std::vector<std::unique_ptr<Ast>> exprList(Tok close) {
    std::vector<std::unique_ptr<Ast>> out;
    if (at(close)) return out;
    while (true) {
      out.push_back(expr());
      if (!at(Tok::kComma)) break;
      take();
      if (at(close)) break;  // trailing comma
    }
    return out;
  }

  void checkName(const Token& t) {
    if (kReserved.count(t.text)) fail(t.pos, "reserved identifier '" + t.text + "'");
  }

  std::unique_ptr<Ast> member() {
    auto operand = primary();
    while (true) {
      if (at(Tok::kDot)) {
        take();
        if (!at(Tok::kIdent)) {
          fail(cur().pos, "expected a field or method name after '.', found " + describe(cur()));
        }
        const Token& name = take();
        checkName(name);
        if (at(Tok::kLParen)) {
          take();
          auto n = node(AstKind::kCall, name.pos, name.text);
          n->method = true;
          add(n.get(), std::move(operand));
          for (auto& a : exprList(Tok::kRParen)) add(n.get(), std::move(a));
          expect(Tok::kRParen);
          operand = std::move(n);
        } else {
          auto n = node(AstKind::kSelect, name.pos, name.text);
          add(n.get(), std::move(operand));
          operand = std::move(n);
        }
      } else if (at(Tok::kLBracket)) {
        const Token& lb = take();
        auto n = node(AstKind::kIndex, lb.pos, "[]");
        add(n.get(), std::move(operand));
        add(n.get(), expr());
        expect(Tok::kRBracket);
        operand = std::move(n);
      } else {
        return operand;
      }
    }
  }

  std::unique_ptr<Ast> primary() {
    const Token& t = cur();
    switch (t.kind) {
      case Tok::kInt: {
        take();
        if (t.int_value > static_cast<uint64_t>(INT64_MAX))
          fail(t.pos, "integer literal out of range");
        auto n = node(AstKind::kLiteral, t.pos);
        n->literal = core::Value(static_cast<int64_t>(t.int_value));
        return n;
      }
      case Tok::kDouble: {
        take();
        auto n = node(AstKind::kLiteral, t.pos);
        n->literal = core::Value(t.double_value);
        return n;
      }
      case Tok::kString: {
        take();
        auto n = node(AstKind::kLiteral, t.pos);
        n->literal = core::Value(t.text);
        return n;
      }
      case Tok::kTrue:
      case Tok::kFalse: {
        take();
        auto n = node(AstKind::kLiteral, t.pos);
        n->literal = core::Value(t.kind == Tok::kTrue);
        return n;
      }
      case Tok::kNull: {
        take();
        return node(AstKind::kLiteral, t.pos);
      }
      case Tok::kDot:
      case Tok::kIdent: {
        if (t.kind == Tok::kDot) take();  // leading dot: root-scoped name, same thing here
        const Token& name = expect(Tok::kIdent);
        checkName(name);
        if (at(Tok::kLParen)) {
          take();
          auto n = node(AstKind::kCall, name.pos, name.text);
          for (auto& a : exprList(Tok::kRParen)) add(n.get(), std::move(a));
          expect(Tok::kRParen);
          return n;
        }
        return node(AstKind::kIdent, name.pos, name.text);
      }
      case Tok::kLParen: {
        take();
        auto e = expr();
        expect(Tok::kRParen);
        return e;
      }
      case Tok::kLBracket: {
        take();
        auto n = node(AstKind::kList, t.pos, "[]");
        for (auto& a : exprList(Tok::kRBracket)) add(n.get(), std::move(a));
        expect(Tok::kRBracket);
        return n;
      }
      case Tok::kLBrace: {
        take();
        auto n = node(AstKind::kMap, t.pos, "{}");
        while (!at(Tok::kRBrace)) {
          add(n.get(), expr());
          expect(Tok::kColon);
          add(n.get(), expr());
          if (!at(Tok::kComma)) break;
          take();
        }
        expect(Tok::kRBrace);
        return n;
      }
      default:
        fail(t.pos, "unexpected " + describe(t));
    }
  }

  std::vector<Token> toks_;
  size_t i_ = 0;
  int depth_ = 0;
  size_t max_nodes_;
  size_t nodes_ = 0;
};

}  // namespace

std::unique_ptr<Ast> parse(std::string_view source, ExprError* error, size_t max_nodes) {
  std::vector<Token> tokens;
  size_t max_tokens = max_nodes > (SIZE_MAX - 8) / 4 ? SIZE_MAX : 4 * max_nodes + 8;
  if (!tokenize(source, &tokens, error, max_tokens, max_nodes)) return nullptr;
  try {
    return Parser(std::move(tokens), max_nodes).parseAll();
  } catch (const SyntaxError& e) {
    *error = e.error;
    return nullptr;
  }
}

}  // namespace fabricwatch::policy::expr
