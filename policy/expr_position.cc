#include "policy/expr_position.h"

#include <vector>

namespace fabricwatch::policy {
namespace {

struct FilePos {
  int line;
  int column;
};

// Walks the raw scalar text and records, for each character of the scalar's value, where it
// was written. Line breaks inside a flow scalar fold to one value character (a space) and the
// next line's indentation is skipped.
class Walker {
 public:
  Walker(std::string_view text, size_t pos, int line, int column)
      : text_(text), pos_(pos), line_(line), column_(column) {}

  bool done() const { return pos_ >= text_.size(); }
  char peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  FilePos here() const { return {line_, column_}; }
  void advance(size_t n = 1) {
    for (size_t i = 0; i < n && pos_ < text_.size(); ++i) {
      if (text_[pos_] == '\n') {
        ++line_;
        column_ = 1;
      } else {
        ++column_;
      }
      ++pos_;
    }
  }
  void skipBlanks() {
    while (peek() == ' ' || peek() == '\t') advance();
  }

 private:
  std::string_view text_;
  size_t pos_;
  int line_;
  int column_;
};

std::vector<FilePos> mapFlow(Walker& w, char quote) {
  std::vector<FilePos> out;
  if (quote) w.advance();  // the opening quote
  while (!w.done()) {
    char c = w.peek();
    if (quote == '\'' && c == '\'') {
      if (w.peek(1) != '\'') break;
      out.push_back(w.here());
      w.advance(2);
      continue;
    }
    if (quote == '"' && c == '"') break;
    if (quote == '"' && c == '\\') {
      out.push_back(w.here());
      char e = w.peek(1);
      size_t len = e == 'x' ? 4 : e == 'u' ? 6 : e == 'U' ? 10 : 2;
      w.advance(len);
      continue;
    }
    if (c == '\n') {
      out.push_back(w.here());
      w.advance();
      w.skipBlanks();
      continue;
    }
    if (!quote && (c == '#' || (c == ':' && (w.peek(1) == ' ' || w.peek(1) == '\n')))) break;
    out.push_back(w.here());
    w.advance();
  }
  return out;
}

std::vector<FilePos> mapBlock(Walker& w) {
  std::vector<FilePos> out;
  while (!w.done() && w.peek() != '\n') w.advance();  // the indicator line
  w.advance();
  int indent = -1;
  while (!w.done()) {
    int col = 0;
    while (w.peek() == ' ' && (indent < 0 || col < indent)) {
      w.advance();
      ++col;
    }
    if (w.peek() == '\n') {  // a blank line is one value character
      out.push_back(w.here());
      w.advance();
      continue;
    }
    if (indent < 0) indent = col;
    if (col < indent) break;  // the scalar has ended
    while (!w.done() && w.peek() != '\n') {
      out.push_back(w.here());
      w.advance();
    }
    out.push_back(w.here());  // the line break
    w.advance();
  }
  return out;
}

}  // namespace

std::pair<int, int> mapScalarPosition(std::string_view text, size_t start, int start_line,
                                      int start_column, std::string_view value, int expr_line,
                                      int expr_column) {
  // The offset of (expr_line, expr_column) in the value.
  size_t offset = 0;
  for (int l = 1; l < expr_line && offset < value.size(); ++offset)
    if (value[offset] == '\n') ++l;
  offset += static_cast<size_t>(expr_column > 0 ? expr_column - 1 : 0);

  if (start >= text.size()) return {start_line, start_column};
  Walker w(text, start, start_line, start_column);
  char first = text[start];
  std::vector<FilePos> map;
  if (first == '|' || first == '>')
    map = mapBlock(w);
  else
    map = mapFlow(w, first == '\'' || first == '"' ? first : '\0');
  if (map.empty()) return {start_line, start_column};
  if (offset >= map.size()) {
    // Just past the end (an error at end of input): one column after the last character.
    const FilePos& last = map.back();
    return {last.line, last.column + static_cast<int>(offset - map.size()) + 1};
  }
  return {map[offset].line, map[offset].column};
}

}  // namespace fabricwatch::policy
