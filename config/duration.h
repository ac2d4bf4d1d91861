#pragma once
// Prometheus-style durations: "500ms", "30s", "1m30s", "2h". Units: ms, s, m, h, d.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace fabricwatch::config {

std::optional<std::chrono::milliseconds> parseDuration(std::string_view text);
std::string formatDuration(std::chrono::milliseconds d);

}  // namespace fabricwatch::config
