#pragma once
// Text from hosts, workloads and logs is untrusted: before it reaches a metric label or JSON it
// must be valid UTF-8 without control characters.

#include <string>
#include <string_view>

namespace fabricwatch::core {

// s with every byte that is not part of a well-formed UTF-8 sequence, and every control
// character, replaced by '?', cut to at most max_bytes (never inside a sequence).
std::string sanitizeUtf8(std::string_view s, size_t max_bytes = std::string::npos);

// Whether s is well-formed UTF-8 without NUL: what a Prometheus label value and a JSON string
// need (other control characters are escaped by both formats).
bool isValidUtf8(std::string_view s);
// Makes s valid in place: every byte outside a well-formed sequence, and NUL, becomes U+FFFD.
// Returns whether it changed anything. The boundary where facts and labels enter a snapshot
// (core/scheduler.cc) applies it once, and counts it.
bool makeValidUtf8(std::string& s);

// s for a message a person reads (a diagnostic, a log field): at most max_bytes of it, quoted,
// with quotes, backslashes, control characters and invalid bytes escaped (\n, \x00 ...), so
// that what an input holds can neither garble a terminal nor make one line of a log huge. A
// cut value ends in "..." and says how long it was.
std::string quoteForDisplay(std::string_view s, size_t max_bytes = 200);
// The same without the quotes (quotes and backslashes as they are): for a whole message or a
// line of a file shown under a diagnostic (tabs kept when keep_tabs).
std::string escapeForDisplay(std::string_view s, size_t max_bytes, bool keep_tabs = false);

}  // namespace fabricwatch::core
