#include "core/utf8.h"

namespace fabricwatch::core {
namespace {

// Length of the well-formed UTF-8 sequence at s[i] (RFC 3629: no overlongs, no surrogates, at
// most U+10FFFF), or 0.
size_t sequenceLength(std::string_view s, size_t i) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  auto cont = [&](size_t k) { return i + k < s.size() && (b(k) & 0xC0) == 0x80; };
  unsigned char c = b(0);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if (c == 0xE0 && b(1) < 0xA0) return 0;  // overlong
    if (c == 0xED && b(1) > 0x9F) return 0;  // surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xF0 && b(1) < 0x90) return 0;  // overlong
    if (c == 0xF4 && b(1) > 0x8F) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

}  // namespace

std::string sanitizeUtf8(std::string_view s, size_t max_bytes) {
  std::string out;
  out.reserve(std::min(s.size(), max_bytes));
  for (size_t i = 0; i < s.size();) {
    size_t n = sequenceLength(s, i);
    size_t take = n == 0 ? 1 : n;
    if (out.size() + (n == 0 ? 1 : n) > max_bytes) break;
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '\t')
      out += ' ';
    else if (n == 0 || (n == 1 && (c < 0x20 || c == 0x7f)))
      out += '?';
    else
      out.append(s.substr(i, n));
    i += take;
  }
  return out;
}

bool isValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    if (s[i] == '\0') return false;
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    size_t n = sequenceLength(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

bool makeValidUtf8(std::string& s) {
  if (isValidUtf8(s)) return false;
  std::string out;
  out.reserve(s.size() + 8);
  for (size_t i = 0; i < s.size();) {
    size_t n = s[i] == '\0' ? 0 : sequenceLength(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
      ++i;
    } else {
      out.append(s, i, n);
      i += n;
    }
  }
  s = std::move(out);
  return true;
}

namespace {

// Appends at most max_bytes of s: valid multi-byte characters as they are, control characters
// and invalid bytes escaped (\n, \t, \xNN), quotes and backslashes too when `quoted`. Tabs stay
// tabs when `keep_tabs` (a snippet's caret line lines up under them). Returns the bytes of s
// consumed (never half a character).
size_t appendEscaped(std::string& out, std::string_view s, size_t max_bytes, bool quoted,
                     bool keep_tabs) {
  static const char* kHex = "0123456789abcdef";
  size_t i = 0;
  while (i < s.size() && i < max_bytes) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : sequenceLength(s, i);
    if (n > 1) {
      if (i + n > max_bytes) break;
      out.append(s.substr(i, n));
      i += n;
      continue;
    }
    if (quoted && (c == '"' || c == '\\')) {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += keep_tabs ? "\t" : "\\t";
    } else if (c < 0x20 || c >= 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
    ++i;
  }
  return i;
}

std::string cutNote(size_t consumed, size_t size) {
  return consumed < size ? "... (" + std::to_string(size) + " bytes)" : "";
}

}  // namespace

std::string quoteForDisplay(std::string_view s, size_t max_bytes) {
  std::string out = "\"";
  size_t used = appendEscaped(out, s, max_bytes, /*quoted=*/true, /*keep_tabs=*/false);
  out += '"';
  return out + cutNote(used, s.size());
}

std::string escapeForDisplay(std::string_view s, size_t max_bytes, bool keep_tabs) {
  std::string out;
  size_t used = appendEscaped(out, s, max_bytes, /*quoted=*/false, keep_tabs);
  return out + cutNote(used, s.size());
}

}  // namespace fabricwatch::core
