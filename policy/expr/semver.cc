#include "policy/expr/semver.h"

#include <limits>

namespace fabricwatch::policy::expr {

std::optional<Semver> parseSemver(std::string_view text) {
  Semver v;
  v.text = std::string(text);
  size_t i = 0;
  if (i < text.size() && (text[i] == 'v' || text[i] == 'V')) ++i;
  while (true) {
    if (i >= text.size() || text[i] < '0' || text[i] > '9') break;
    int64_t n = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      if (n > (std::numeric_limits<int64_t>::max() - 9) / 10) return std::nullopt;
      n = n * 10 + (text[i] - '0');
      ++i;
    }
    v.numbers.push_back(n);
    // A dot continues the numeric part only when a digit follows it.
    if (i + 1 < text.size() && text[i] == '.' && text[i + 1] >= '0' && text[i + 1] <= '9') {
      ++i;
      continue;
    }
    break;
  }
  if (v.numbers.empty()) return std::nullopt;
  v.rest = std::string(text.substr(i));
  return v;
}

int compareSemver(const Semver& a, const Semver& b) {
  size_t n = std::max(a.numbers.size(), b.numbers.size());
  for (size_t i = 0; i < n; ++i) {
    int64_t x = i < a.numbers.size() ? a.numbers[i] : 0;
    int64_t y = i < b.numbers.size() ? b.numbers[i] : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  int c = a.rest.compare(b.rest);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

}  // namespace fabricwatch::policy::expr
