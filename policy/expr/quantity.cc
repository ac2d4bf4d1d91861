#include "policy/expr/quantity.h"

#include <cmath>
#include <cstdint>
#include <limits>

namespace fabricwatch::policy::expr {
namespace {

using Wide = __int128;
constexpr Wide kLimit = static_cast<Wide>(std::numeric_limits<int64_t>::max());

std::string bad(std::string_view text, std::string_view why) {
  return "invalid quantity '" + std::string(text) + "': " + std::string(why);
}

}  // namespace

std::variant<int64_t, double, std::string> parseQuantity(std::string_view text) {
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
  Wide mantissa = 0;
  int digits = 0;
  int frac = 0;
  bool seen_dot = false;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c == '.' && !seen_dot) {
      seen_dot = true;
      continue;
    }
    if (c < '0' || c > '9') break;
    if (mantissa != 0 || c != '0') ++digits;
    if (digits > 30) return bad(text, "too many digits");
    mantissa = mantissa * 10 + (c - '0');
    if (seen_dot) ++frac;
  }
  size_t number_end = i;
  bool any_digit = false;
  for (size_t j = 0; j < number_end; ++j) any_digit |= text[j] >= '0' && text[j] <= '9';
  if (!any_digit) return bad(text, "expected a number");

  std::string_view suffix = text.substr(number_end);
  int exp10 = 0;
  int exp2 = 0;
  bool fractional_unit = false;  // n, u, m
  if (suffix.empty()) {
  } else if (suffix.size() == 2 && suffix[1] == 'i') {
    const std::string_view units = "KMGTPE";
    size_t k = units.find(suffix[0]);
    if (k == std::string_view::npos) return bad(text, "unknown suffix");
    exp2 = 10 * static_cast<int>(k + 1);
  } else if (suffix.size() == 1) {
    switch (suffix[0]) {
      case 'n':
        exp10 = -9;
        fractional_unit = true;
        break;
      case 'u':
        exp10 = -6;
        fractional_unit = true;
        break;
      case 'm':
        exp10 = -3;
        fractional_unit = true;
        break;
      case 'k':
        exp10 = 3;
        break;
      case 'M':
        exp10 = 6;
        break;
      case 'G':
        exp10 = 9;
        break;
      case 'T':
        exp10 = 12;
        break;
      case 'P':
        exp10 = 15;
        break;
      case 'E':
        exp10 = 18;
        break;
      default:
        return bad(text, "unknown suffix");
    }
  } else if (suffix[0] == 'e' || suffix[0] == 'E') {
    size_t j = 1;
    bool neg_exp = false;
    if (j < suffix.size() && (suffix[j] == '+' || suffix[j] == '-')) neg_exp = suffix[j++] == '-';
    if (j >= suffix.size()) return bad(text, "expected an exponent");
    int e = 0;
    for (; j < suffix.size(); ++j) {
      if (suffix[j] < '0' || suffix[j] > '9') return bad(text, "bad exponent");
      e = e * 10 + (suffix[j] - '0');
      if (e > 100) return bad(text, "exponent out of range");
    }
    exp10 = neg_exp ? -e : e;
  } else {
    return bad(text, "unknown suffix");
  }
  (void)fractional_unit;

  int scale = exp10 - frac;
  Wide value = mantissa;
  for (int k = 0; k < exp2; ++k) {
    value *= 2;
    if (value > kLimit * 1000000000000LL) return bad(text, "out of range");
  }
  if (value == 0) return int64_t{0};
  if (scale >= 0) {
    for (int k = 0; k < scale; ++k) {
      value *= 10;
      if (value > kLimit) return bad(text, "out of range");
    }
    if (value > kLimit) return bad(text, "out of range");
    return static_cast<int64_t>(negative ? -value : value);
  }
  Wide divisor = 1;
  bool exact = true;
  for (int k = 0; k < -scale; ++k) {
    if (divisor > kLimit * 1000000000000LL) {
      exact = false;
      break;
    }
    divisor *= 10;
  }
  if (exact && value % divisor == 0) {
    Wide q = value / divisor;
    if (q > kLimit) return bad(text, "out of range");
    return static_cast<int64_t>(negative ? -q : q);
  }
  double d = static_cast<double>(value) * std::pow(10.0, scale);
  return negative ? -d : d;
}

}  // namespace fabricwatch::policy::expr
