#pragma once
// TOML allows non-ASCII text only in strings and comments. toml++ 3.3 (Debian 12's) reaches
// __builtin_unreachable() on some non-ASCII characters elsewhere (is_non_ascii_horizontal_
// whitespace, for U+00A1..U+0499 among others: found by config_fuzz under UBSan), which is
// undefined behaviour in the daemon's config and reload path. So the text is checked first, and
// such a character is the configuration problem it would be anyway, with its position.

#include <optional>
#include <string_view>

#include "core/diagnostic.h"

namespace fabricwatch::config {

// The first non-ASCII byte outside TOML strings and comments, as a positioned problem.
std::optional<core::Diagnostic> nonAsciiOutsideStrings(std::string_view text,
                                                       std::string_view file);

}  // namespace fabricwatch::config
