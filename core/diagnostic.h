#pragma once
// A load-time problem in a configuration or policy file, positioned for humans and editors:
//   config.toml:12:11: bad duration "5 parsecs": ...
//       interval = "5 parsecs"
//                  ^

#include <string>
#include <string_view>
#include <vector>

namespace fabricwatch::core {

struct Diagnostic {
  std::string file;
  int line = 0;    // 1-based; 0 when unknown
  int column = 0;  // 1-based; 0 when unknown
  std::string message;
  std::string snippet;  // the offending source line, if known

  // "file:line:col: message", then the snippet and a caret line when a snippet is present.
  std::string format() const;
};

// The 1-based line of text, without its newline; empty if out of range.
std::string lineOf(std::string_view text, int line);
std::string formatAll(const std::vector<Diagnostic>& diags);

}  // namespace fabricwatch::core
