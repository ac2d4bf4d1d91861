#include "core/diagnostic.h"

#include <algorithm>

#include "core/utf8.h"

namespace fabricwatch::core {

namespace {

constexpr size_t kMaxMessageBytes = 1024;
constexpr size_t kSnippetBefore = 60;  // bytes of the line shown before the column
constexpr size_t kSnippetWidth = 160;  // bytes of the line shown in all

// Display width of escaped text: one column per character, tabs kept as tabs.
size_t columns(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

}  // namespace

std::string Diagnostic::format() const {
  // What a file holds is echoed only escaped and cut (a binary file's bytes or newlines must not
  // reach the terminal, and a 100 MB value must not become a 100 MB line).
  std::string out = escapeForDisplay(file, kMaxMessageBytes);
  if (line > 0) {
    out += ':' + std::to_string(line);
    if (column > 0) out += ':' + std::to_string(column);
  }
  out += ": " + escapeForDisplay(message, kMaxMessageBytes);
  if (!snippet.empty()) {
    // A window of the line around the column.
    size_t col = column > 0 ? static_cast<size_t>(column - 1) : 0;
    col = std::min(col, snippet.size());
    size_t start = col > kSnippetBefore ? col - kSnippetBefore : 0;
    while (start > 0 && start < snippet.size() && (snippet[start] & 0xC0) == 0x80) ++start;
    std::string_view window = std::string_view(snippet).substr(start, kSnippetWidth);
    size_t split = std::min(col - std::min(col, start), window.size());
    std::string before =
        (start > 0 ? "..." : "") + escapeForDisplay(window.substr(0, split), kSnippetWidth, true);
    std::string after = escapeForDisplay(window.substr(split), kSnippetWidth, true);
    out += "\n    " + before + after;
    if (start + window.size() < snippet.size()) out += "...";
    if (column > 0) {
      out += "\n    ";
      // Keep tabs so the caret lines up under tab-indented text.
      size_t pad = columns(before);
      for (size_t i = 0, c = 0; c < pad && i < before.size(); ++i) {
        if ((before[i] & 0xC0) == 0x80) continue;
        out += before[i] == '\t' ? '\t' : ' ';
        ++c;
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
