#pragma once
// HTML text for the status page: every value that reaches the page passes through htmlEscape,
// which also keeps the page valid UTF-8 whatever a host, a peer or a pack put into a string.

#include <string>
#include <string_view>

namespace fabricwatch::exporter {

// Escapes & < > " ' for text and attribute values, replaces each byte of an invalid UTF-8
// sequence with U+FFFD and control characters other than tab and newline with U+FFFD.
std::string htmlEscape(std::string_view s);

}  // namespace fabricwatch::exporter
