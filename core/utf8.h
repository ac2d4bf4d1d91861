#pragma once
// Text from hosts, workloads and logs is untrusted: before it reaches a metric label or JSON it
// must be valid UTF-8 without control characters.

#include <string>
#include <string_view>

namespace fabricwatch::core {

// s with every byte that is not part of a well-formed UTF-8 sequence, and every control
// character, replaced by '?', cut to at most max_bytes (never inside a sequence).
std::string sanitizeUtf8(std::string_view s, size_t max_bytes = std::string::npos);

}  // namespace fabricwatch::core
