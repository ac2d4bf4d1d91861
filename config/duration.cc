#include "config/duration.h"

#include <cctype>
#include <cstdint>

namespace fabricwatch::config {

std::optional<std::chrono::milliseconds> parseDuration(std::string_view s) {
  if (s.empty()) return std::nullopt;
  if (s == "0") return std::chrono::milliseconds(0);
  int64_t total = 0;
  size_t i = 0;
  while (i < s.size()) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return std::nullopt;
    int64_t n = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      n = n * 10 + (s[i] - '0');
      if (n > 1'000'000'000) return std::nullopt;
      ++i;
    }
    size_t u = i;
    while (i < s.size() && std::isalpha(static_cast<unsigned char>(s[i]))) ++i;
    std::string_view unit = s.substr(u, i - u);
    int64_t ms_per;
    if (unit == "ms")
      ms_per = 1;
    else if (unit == "s")
      ms_per = 1000;
    else if (unit == "m")
      ms_per = 60'000;
    else if (unit == "h")
      ms_per = 3'600'000;
    else if (unit == "d")
      ms_per = 86'400'000;
    else
      return std::nullopt;
    total += n * ms_per;
  }
  return std::chrono::milliseconds(total);
}

std::string formatDuration(std::chrono::milliseconds d) {
  int64_t ms = d.count();
  if (ms == 0) return "0s";
  std::string out;
  auto take = [&](int64_t per, const char* unit) {
    if (ms >= per) {
      out += std::to_string(ms / per) + unit;
      ms %= per;
    }
  };
  take(3'600'000, "h");
  take(60'000, "m");
  take(1000, "s");
  take(1, "ms");
  return out;
}

}  // namespace fabricwatch::config
