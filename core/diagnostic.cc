#include "core/diagnostic.h"

namespace fabricwatch::core {

std::string Diagnostic::format() const {
  std::string out = file;
  if (line > 0) {
    out += ':' + std::to_string(line);
    if (column > 0) out += ':' + std::to_string(column);
  }
  out += ": " + message;
  if (!snippet.empty()) {
    out += "\n    " + snippet;
    if (column > 0) {
      out += "\n    ";
      // Keep tabs so the caret lines up under tab-indented text.
      for (int i = 0; i < column - 1 && i < static_cast<int>(snippet.size()); ++i) {
        out += snippet[static_cast<size_t>(i)] == '\t' ? '\t' : ' ';
      }
      out += '^';
    }
  }
  return out;
}

std::string lineOf(std::string_view text, int line) {
  if (line <= 0) return {};
  size_t start = 0;
  for (int l = 1; l < line; ++l) {
    start = text.find('\n', start);
    if (start == std::string_view::npos) return {};
    ++start;
  }
  size_t end = text.find('\n', start);
  std::string_view s =
      text.substr(start, end == std::string_view::npos ? text.size() - start : end - start);
  if (!s.empty() && s.back() == '\r') s.remove_suffix(1);
  return std::string(s);
}

std::string formatAll(const std::vector<Diagnostic>& diags) {
  std::string out;
  for (const auto& d : diags) out += d.format() + "\n";
  return out;
}

}  // namespace fabricwatch::core
