#pragma once
// Small string_view helpers of the NCCL log parser and verdict (internal to nccl/).

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fabricwatch::nccl::text {

using sv = std::string_view;

inline bool startsWith(sv s, sv p) { return s.substr(0, p.size()) == p; }
inline bool contains(sv s, sv p) { return s.find(p) != sv::npos; }
inline bool isDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// Strips what isspace() calls space (the daemon keeps the C locale: space, \t, \n, \v, \f,
// \r). core::trim takes space, tab, CR and LF only; pasted logs may carry \v or \f.
inline sv trimSpace(sv s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// The leading integer of s ("12, opcode" -> 12); nullopt without one.
inline std::optional<int64_t> toInt(sv s) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p == s.data()) return std::nullopt;
  return v;
}

// The integer that follows `key` in s ("nranks 16" -> 16).
inline std::optional<int64_t> intAfter(sv s, sv key) {
  size_t p = s.find(key);
  if (p == sv::npos) return std::nullopt;
  sv rest = trimSpace(s.substr(p + key.size()));
  size_t n = 0;
  while (n < rest.size() && (isDigit(rest[n]) || (n == 0 && rest[n] == '-'))) ++n;
  return toInt(rest.substr(0, n));
}

// The integer just before `key` ("16 nvls channels" with key " nvls channels" -> 16).
inline std::optional<int64_t> intBefore(sv s, sv key) {
  size_t p = s.find(key);
  if (p == sv::npos) return std::nullopt;
  size_t b = p;
  while (b > 0 && isDigit(s[b - 1])) --b;
  return b == p ? std::nullopt : toInt(s.substr(b, p - b));
}

// The text after `key` up to the first of `stops` (or the end), trimmed.
inline sv between(sv s, sv key, sv stops) {
  size_t p = s.find(key);
  if (p == sv::npos) return {};
  sv rest = s.substr(p + key.size());
  return trimSpace(rest.substr(0, rest.find_first_of(stops)));
}

inline std::string lower(sv s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// 12040 -> "12.4" (CUDA's encoding: 1000 * major + 10 * minor).
inline std::string cudaVersion(int64_t v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

// "2.21.5" or "2.4" -> {2, 21}; nullopt when s is not a version.
inline std::optional<std::pair<int, int>> majorMinor(sv s) {
  auto major = toInt(s);
  size_t dot = s.find('.');
  if (!major || dot == sv::npos) return std::nullopt;
  auto minor = toInt(s.substr(dot + 1));
  if (!minor) return std::nullopt;
  return std::make_pair(static_cast<int>(*major), static_cast<int>(*minor));
}

}  // namespace fabricwatch::nccl::text
