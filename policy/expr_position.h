#pragma once
// Maps a position inside an expression (as the expression compiler reports it) back to the
// YAML file it was written in, for plain, single-quoted, double-quoted and block (| and >)
// scalars. The scalar starts at `start` (byte offset of its first token: quote, indicator or
// first character), as yaml-cpp's Mark reports it.

#include <string_view>
#include <utility>

namespace fabricwatch::policy {

// Returns the 1-based (line, column) in `file_text` of the 1-based (line, column) inside the
// scalar's value `value`. Falls back to the scalar's start when the mapping runs out.
std::pair<int, int> mapScalarPosition(std::string_view file_text, size_t start, int start_line,
                                      int start_column, std::string_view value, int expr_line,
                                      int expr_column);

}  // namespace fabricwatch::policy
