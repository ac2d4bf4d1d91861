#include "config/toml_ascii.h"

#include <string>

namespace fabricwatch::config {

std::optional<core::Diagnostic> nonAsciiOutsideStrings(std::string_view text,
                                                       std::string_view file) {
  enum class In { kCode, kComment, kBasic, kLiteral, kMultiBasic, kMultiLiteral } in = In::kCode;
  auto at = [&](size_t i, std::string_view s) { return text.substr(i, s.size()) == s; };
  int line = 1;
  int column = 0;         // characters (UTF-8 lead bytes) since the line began
  bool trimming = false;  // after a line-ending backslash in a """ string
  // A quote opens a string only where a string can begin: first on its line (a quoted key, an
  // array's next line), after a line's first = or an = inside { } (a value), or after [ , { .
  // (an item, a key, a dotted key). Elsewhere it is part of a bare value (`9"9`, `0="9`), which
  // toml++ reads character by character.
  char prev = '\n';
  bool seen_equals = false;  // this line's key/value = (outside braces) is behind
  int braces = 0;
  auto problem = [&](std::string message) {
    core::Diagnostic d;
    d.file = std::string(file);
    d.line = line;
    d.column = column;
    d.message = std::move(message);
    d.snippet = core::lineOf(text, line);
    return d;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if ((c & 0xC0) != 0x80) ++column;
    if (c == '\n') {
      ++line;
      column = 0;
      if (in == In::kCode || in == In::kComment) {
        prev = '\n';
        seen_equals = false;
      }
      // Comments and one-line strings end with their line (an unterminated string is
      // toml++'s error to report).
      if (in == In::kComment || in == In::kBasic || in == In::kLiteral) in = In::kCode;
      continue;
    }
    switch (in) {
      case In::kCode: {
        if (c >= 0x80) {
          return problem(
              "a non-ASCII character outside a string or a comment (TOML keys and values "
              "other than strings are ASCII)");
        }
        if (c == ' ' || c == '\t' || c == '\r') break;
        if (c == '#') {
          in = In::kComment;
          break;
        }
        bool opener = prev == '\n' || prev == '[' || prev == ',' || prev == '{' || prev == '.' ||
                      (prev == '=' && (braces > 0 || !seen_equals));
        if (prev == '=' && braces == 0) seen_equals = true;
        if (c == '{') ++braces;
        if (c == '}' && braces > 0) --braces;
        prev = static_cast<char>(c);
        if (!opener) break;
        if (at(i, "\"\"\"")) {
          in = In::kMultiBasic;
          i += 2;
          column += 2;
        } else if (at(i, "'''")) {
          in = In::kMultiLiteral;
          i += 2;
          column += 2;
        } else if (c == '"') {
          in = In::kBasic;
        } else if (c == '\'') {
          in = In::kLiteral;
        }
        break;
      }
      case In::kComment:
        break;
      case In::kBasic:
      case In::kMultiBasic:
        // toml++ classifies the first character after a line-ending backslash's whitespace
        // with the same function.
        if (trimming) {
          if (c == ' ' || c == '\t' || c == '\r') break;
          trimming = false;
          if (c >= 0x80) {
            return problem(
                "a non-ASCII character right after a line-ending backslash (toml++ 3.3 cannot "
                "read it there: begin the continued text with an ASCII character)");
          }
        }
        if (in == In::kMultiBasic && c == '\\' && i + 1 < text.size() &&
            (text[i + 1] == ' ' || text[i + 1] == '\t' || text[i + 1] == '\r' ||
             text[i + 1] == '\n')) {
          trimming = true;
        } else if (c == '\\' && i + 1 < text.size() && text[i + 1] != '\n') {
          ++i;  // an escaped character (ASCII, or a lead byte counted by the next turn's check)
          if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++column;
        } else if (in == In::kBasic && c == '"') {
          in = In::kCode;
        } else if (in == In::kMultiBasic && at(i, "\"\"\"")) {
          in = In::kCode;
          i += 2;
          column += 2;
        }
        break;
      case In::kLiteral:
        if (c == '\'') in = In::kCode;
        break;
      case In::kMultiLiteral:
        if (at(i, "'''")) {
          in = In::kCode;
          i += 2;
          column += 2;
        }
        break;
    }
  }
  return std::nullopt;
}

}  // namespace fabricwatch::config
