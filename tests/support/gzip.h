#pragma once
// Inflating what a gzip'd response carries, as a client that reads one member does.

#include <optional>
#include <string>

namespace fabricwatch::testing {

// Inflates exactly one gzip member that must span all of `data` (nothing after its trailer,
// which is what a client that reads one member sees); nullopt otherwise.
std::optional<std::string> gunzipOneMember(const std::string& data);

}  // namespace fabricwatch::testing
