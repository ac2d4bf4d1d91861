#pragma once
// The status page's CSS (exporter/status_page.css), compiled in at build time as one line.

#include <string_view>

namespace fabricwatch::exporter {

extern const std::string_view kStatusPageStyle;

}  // namespace fabricwatch::exporter
