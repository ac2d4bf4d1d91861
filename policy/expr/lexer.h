#pragma once
// Tokenizer for the expression language (CEL lexical grammar: decimal/hex ints, doubles, quoted,
// triple-quoted and raw strings, // comments). Pure: text in, tokens or a positioned error out.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "policy/expr/expr.h"

namespace fabricwatch::policy::expr {

enum class Tok {
  kEnd,
  kInt,  // int_value holds the magnitude (up to 2^63 so that -9223372036854775808 parses)
  kDouble,
  kString,
  kIdent,
  kTrue,
  kFalse,
  kNull,
  kIn,
  kLParen,
  kRParen,
  kLBracket,
  kRBracket,
  kLBrace,
  kRBrace,
  kDot,
  kComma,
  kColon,
  kQuestion,
  kPlus,
  kMinus,
  kStar,
  kSlash,
  kPercent,
  kNot,
  kLess,
  kLessEq,
  kGreater,
  kGreaterEq,
  kEq,
  kNotEq,
  kAnd,
  kOr,
};

struct Token {
  Tok kind = Tok::kEnd;
  Position pos;
  std::string text;  // identifier name, decoded string literal, or the raw token
  uint64_t int_value = 0;
  double double_value = 0;
};

// Tokens ending with a kEnd token; false and *error on a lexical error, or past max_tokens
// (the size bound: exprTooLargeMessage(max_nodes), at the first token past it).
bool tokenize(std::string_view source, std::vector<Token>* tokens, ExprError* error,
              size_t max_tokens = SIZE_MAX, size_t max_nodes = kMaxExprNodes);

const char* tokName(Tok t);

}  // namespace fabricwatch::policy::expr
