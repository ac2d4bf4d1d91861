#pragma once
// Renderings of the facts document: JSON (the API, `facts --format json`) and YAML (humans).

#include <chrono>
#include <string>
#include <string_view>

#include "core/value.h"

namespace fabricwatch::core {

// indent < 0: compact, one line. indent >= 0: pretty, that many spaces per level.
std::string toJson(const Value& v, int indent = -1);
std::string toYaml(const Value& v);

// A time as the API and the facts document show it: "2026-11-30T07:49:03Z" (UTC, seconds).
std::string rfc3339(std::chrono::system_clock::time_point t);
// Appends s as a JSON string literal (quotes included) to out.
void appendJsonString(std::string& out, std::string_view s);

}  // namespace fabricwatch::core
