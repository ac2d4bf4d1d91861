#include "policy/expr/lexer.h"

#include <cctype>
#include <charconv>
#include <cstdlib>

namespace fabricwatch::policy::expr {
namespace {

class Lexer {
 public:
  Lexer(std::string_view src, std::vector<Token>* out, ExprError* err, size_t max_tokens,
        size_t max_nodes)
      : src_(src), out_(out), err_(err), max_tokens_(max_tokens), max_nodes_(max_nodes) {}

  bool run() {
    while (true) {
      skipSpaceAndComments();
      Token t;
      t.pos = pos();
      if (i_ >= src_.size()) {
        t.kind = Tok::kEnd;
        out_->push_back(std::move(t));
        return true;
      }
      if (out_->size() >= max_tokens_) return fail(t.pos, exprTooLargeMessage(max_nodes_));
      if (!next(&t)) return false;
      out_->push_back(std::move(t));
    }
  }

 private:
  Position pos() const { return Position{line_, static_cast<int>(i_ - line_start_) + 1}; }
  char peek(size_t k = 0) const { return i_ + k < src_.size() ? src_[i_ + k] : '\0'; }
  void advance() {
    if (src_[i_] == '\n') {
      ++line_;
      line_start_ = i_ + 1;
    }
    ++i_;
  }
  bool fail(Position p, std::string msg) {
    err_->pos = p;
    err_->message = std::move(msg);
    return false;
  }

  void skipSpaceAndComments() {
    while (i_ < src_.size()) {
      char c = src_[i_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
        advance();
      } else if (c == '/' && peek(1) == '/') {
        while (i_ < src_.size() && src_[i_] != '\n') advance();
      } else {
        break;
      }
    }
  }

  static bool isIdentStart(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  }
  static bool isDigit(char c) { return c >= '0' && c <= '9'; }

  bool next(Token* t) {
    char c = peek();
    if ((c == 'r' || c == 'R') && (peek(1) == '"' || peek(1) == '\'')) {
      advance();
      return string(t, true);
    }
    if ((c == 'b' || c == 'B') && (peek(1) == '"' || peek(1) == '\'')) {
      return fail(t->pos, "bytes literals are not supported");
    }
    if (isIdentStart(c)) {
      size_t start = i_;
      while (i_ < src_.size() && (isIdentStart(src_[i_]) || isDigit(src_[i_]))) advance();
      t->text = std::string(src_.substr(start, i_ - start));
      if (t->text == "true") {
        t->kind = Tok::kTrue;
      } else if (t->text == "false") {
        t->kind = Tok::kFalse;
      } else if (t->text == "null") {
        t->kind = Tok::kNull;
      } else if (t->text == "in") {
        t->kind = Tok::kIn;
      } else {
        t->kind = Tok::kIdent;
      }
      return true;
    }
    if (isDigit(c) || (c == '.' && isDigit(peek(1)))) return number(t);
    if (c == '"' || c == '\'') return string(t, false);
    auto one = [&](Tok k) {
      t->kind = k;
      t->text = std::string(1, c);
      advance();
      return true;
    };
    auto two = [&](Tok k) {
      t->kind = k;
      t->text = std::string(src_.substr(i_, 2));
      advance();
      advance();
      return true;
    };
    switch (c) {
      case '(':
        return one(Tok::kLParen);
      case ')':
        return one(Tok::kRParen);
      case '[':
        return one(Tok::kLBracket);
      case ']':
        return one(Tok::kRBracket);
      case '{':
        return one(Tok::kLBrace);
      case '}':
        return one(Tok::kRBrace);
      case '.':
        return one(Tok::kDot);
      case ',':
        return one(Tok::kComma);
      case ':':
        return one(Tok::kColon);
      case '?':
        return one(Tok::kQuestion);
      case '+':
        return one(Tok::kPlus);
      case '-':
        return one(Tok::kMinus);
      case '*':
        return one(Tok::kStar);
      case '/':
        return one(Tok::kSlash);
      case '%':
        return one(Tok::kPercent);
      case '!':
        return peek(1) == '=' ? two(Tok::kNotEq) : one(Tok::kNot);
      case '<':
        return peek(1) == '=' ? two(Tok::kLessEq) : one(Tok::kLess);
      case '>':
        return peek(1) == '=' ? two(Tok::kGreaterEq) : one(Tok::kGreater);
      case '=':
        if (peek(1) == '=') return two(Tok::kEq);
        return fail(t->pos, "unexpected '=' (did you mean '=='?)");
      case '&':
        if (peek(1) == '&') return two(Tok::kAnd);
        return fail(t->pos, "unexpected '&' (did you mean '&&'?)");
      case '|':
        if (peek(1) == '|') return two(Tok::kOr);
        return fail(t->pos, "unexpected '|' (did you mean '||'?)");
      default:
        break;
    }
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
      return fail(t->pos, "unexpected character");
    }
    return fail(t->pos, std::string("unexpected character '") + c + "'");
  }

  bool number(Token* t) {
    size_t start = i_;
    if (peek() == '0' && (peek(1) == 'x' || peek(1) == 'X')) {
      advance();
      advance();
      size_t hstart = i_;
      while (i_ < src_.size() && std::isxdigit(static_cast<unsigned char>(src_[i_]))) advance();
      if (i_ == hstart) return fail(t->pos, "malformed hexadecimal literal");
      auto [p, ec] = std::from_chars(src_.data() + hstart, src_.data() + i_, t->int_value, 16);
      if (ec != std::errc() || t->int_value > (uint64_t{1} << 63)) {
        return fail(t->pos, "integer literal out of range");
      }
      t->kind = Tok::kInt;
      if (peek() == 'u' || peek() == 'U') advance();
      t->text = std::string(src_.substr(start, i_ - start));
      return checkEnd(t);
    }
    bool is_double = false;
    while (isDigit(peek())) advance();
    if (peek() == '.' && isDigit(peek(1))) {
      is_double = true;
      advance();
      while (isDigit(peek())) advance();
    }
    if (peek() == 'e' || peek() == 'E') {
      size_t k = 1;
      if (peek(1) == '+' || peek(1) == '-') k = 2;
      if (isDigit(peek(k))) {
        is_double = true;
        for (size_t j = 0; j < k; ++j) advance();
        while (isDigit(peek())) advance();
      } else {
        return fail(pos(), "malformed exponent");
      }
    }
    t->text = std::string(src_.substr(start, i_ - start));
    if (is_double) {
      t->kind = Tok::kDouble;
      t->double_value = std::strtod(t->text.c_str(), nullptr);
      return checkEnd(t);
    }
    auto [p, ec] = std::from_chars(t->text.data(), t->text.data() + t->text.size(), t->int_value);
    if (ec != std::errc() || t->int_value > (uint64_t{1} << 63)) {
      return fail(t->pos, "integer literal out of range");
    }
    t->kind = Tok::kInt;
    if (peek() == 'u' || peek() == 'U') advance();  // uint literals are plain ints here
    return checkEnd(t);
  }

  bool checkEnd(Token* t) {
    if (isIdentStart(peek()) || isDigit(peek())) {
      return fail(pos(), "unexpected character after number");
    }
    return true;
  }

  static void appendUtf8(std::string* out, uint32_t cp) {
    if (cp < 0x80) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  bool hexDigits(int n, uint32_t* out) {
    uint32_t v = 0;
    for (int k = 0; k < n; ++k) {
      char c = peek();
      int d;
      if (c >= '0' && c <= '9') {
        d = c - '0';
      } else if (c >= 'a' && c <= 'f') {
        d = c - 'a' + 10;
      } else if (c >= 'A' && c <= 'F') {
        d = c - 'A' + 10;
      } else {
        return fail(pos(), "malformed escape sequence");
      }
      v = v * 16 + static_cast<uint32_t>(d);
      advance();
    }
    *out = v;
    return true;
  }

  bool escape(std::string* out) {
    Position p = pos();
    advance();  // backslash
    if (i_ >= src_.size()) return fail(p, "unterminated string literal");
    char c = peek();
    uint32_t cp = 0;
    switch (c) {
      case 'a':
        out->push_back('\a');
        break;
      case 'b':
        out->push_back('\b');
        break;
      case 'f':
        out->push_back('\f');
        break;
      case 'n':
        out->push_back('\n');
        break;
      case 'r':
        out->push_back('\r');
        break;
      case 't':
        out->push_back('\t');
        break;
      case 'v':
        out->push_back('\v');
        break;
      case '\\':
      case '\'':
      case '"':
      case '`':
      case '?':
        out->push_back(c);
        break;
      case 'x':
      case 'X':
        advance();
        if (!hexDigits(2, &cp)) return false;
        appendUtf8(out, cp);
        return true;
      case 'u':
        advance();
        if (!hexDigits(4, &cp)) return false;
        if (cp >= 0xD800 && cp < 0xE000) return fail(p, "invalid unicode code point");
        appendUtf8(out, cp);
        return true;
      case 'U':
        advance();
        if (!hexDigits(8, &cp)) return false;
        if (cp > 0x10FFFF || (cp >= 0xD800 && cp < 0xE000)) {
          return fail(p, "invalid unicode code point");
        }
        appendUtf8(out, cp);
        return true;
      default:
        if (c >= '0' && c <= '3') {
          for (int k = 0; k < 3; ++k) {
            if (peek() < '0' || peek() > '7') return fail(p, "malformed octal escape");
            cp = cp * 8 + static_cast<uint32_t>(peek() - '0');
            advance();
          }
          appendUtf8(out, cp);
          return true;
        }
        return fail(p, "invalid escape sequence");
    }
    advance();
    return true;
  }

  bool string(Token* t, bool raw) {
    char q = peek();
    bool triple = peek(1) == q && peek(2) == q;
    size_t qlen = triple ? 3 : 1;
    for (size_t k = 0; k < qlen; ++k) advance();
    t->kind = Tok::kString;
    while (true) {
      if (i_ >= src_.size()) return fail(t->pos, "unterminated string literal");
      char c = peek();
      if (c == q && (!triple || (peek(1) == q && peek(2) == q))) {
        for (size_t k = 0; k < qlen; ++k) advance();
        return true;
      }
      if (!triple && (c == '\n' || c == '\r')) {
        return fail(t->pos, "unterminated string literal");
      }
      if (c == '\\' && !raw) {
        if (!escape(&t->text)) return false;
        continue;
      }
      t->text.push_back(c);
      advance();
    }
  }

  std::string_view src_;
  std::vector<Token>* out_;
  ExprError* err_;
  size_t i_ = 0;
  int line_ = 1;
  size_t line_start_ = 0;
  size_t max_tokens_;
  size_t max_nodes_;
};

}  // namespace

std::string exprTooLargeMessage(size_t max_nodes) {
  return "expression is too large: over " + std::to_string(max_nodes) +
         " nodes, the bound on an expression's compiled size (kMaxExprNodes); split it, or match "
         "a long list with a regular expression or a variable per part";
}

bool tokenize(std::string_view source, std::vector<Token>* tokens, ExprError* error,
              size_t max_tokens, size_t max_nodes) {
  return Lexer(source, tokens, error, max_tokens, max_nodes).run();
}

const char* tokName(Tok t) {
  switch (t) {
    case Tok::kEnd:
      return "end of expression";
    case Tok::kInt:
      return "integer";
    case Tok::kDouble:
      return "double";
    case Tok::kString:
      return "string";
    case Tok::kIdent:
      return "identifier";
    case Tok::kTrue:
      return "'true'";
    case Tok::kFalse:
      return "'false'";
    case Tok::kNull:
      return "'null'";
    case Tok::kIn:
      return "'in'";
    case Tok::kLParen:
      return "'('";
    case Tok::kRParen:
      return "')'";
    case Tok::kLBracket:
      return "'['";
    case Tok::kRBracket:
      return "']'";
    case Tok::kLBrace:
      return "'{'";
    case Tok::kRBrace:
      return "'}'";
    case Tok::kDot:
      return "'.'";
    case Tok::kComma:
      return "','";
    case Tok::kColon:
      return "':'";
    case Tok::kQuestion:
      return "'?'";
    case Tok::kPlus:
      return "'+'";
    case Tok::kMinus:
      return "'-'";
    case Tok::kStar:
      return "'*'";
    case Tok::kSlash:
      return "'/'";
    case Tok::kPercent:
      return "'%'";
    case Tok::kNot:
      return "'!'";
    case Tok::kLess:
      return "'<'";
    case Tok::kLessEq:
      return "'<='";
    case Tok::kGreater:
      return "'>'";
    case Tok::kGreaterEq:
      return "'>='";
    case Tok::kEq:
      return "'=='";
    case Tok::kNotEq:
      return "'!='";
    case Tok::kAnd:
      return "'&&'";
    case Tok::kOr:
      return "'||'";
  }
  return "token";
}

}  // namespace fabricwatch::policy::expr
