#pragma once
// The Prometheus text exposition format (0.0.4) of metric families, appended to a string.
//
// fabricwatch's own writer rather than prometheus-cpp's TextSerializer, whose shared library
// was the one C++ library the binary linked, and so what kept libstdc++ shared
// (cmake/StaticDeps.cmake). prometheus-cpp stays as the data model (MetricFamily and
// ClientMetric are plain structs in its headers). The output is byte-identical to
// TextSerializer 1.0.1's for every family whose help has no backslash or newline: the same
// lines in the same order, numbers as an ostream with precision 16 in the classic locale writes
// them (printf's %.16g; NaN as "Nan", infinities as "+Inf" and "-Inf"), histograms as _count,
// _sum and cumulative _bucket lines with a trailing le="+Inf" bucket when the last bound is not
// +Inf. Where the two differ, this one follows the format's specification: help text escapes
// backslash and newline (TextSerializer writes it raw, which breaks the line).

#include <string>
#include <string_view>

#include "core/metrics.h"

namespace fabricwatch::core {

// Appends every family's HELP, TYPE and sample lines to `out`.
void appendTextFormat(std::string& out, const MetricFamilies& families);
std::string textFormat(const MetricFamilies& families);

// A sample value or an le/quantile bound as the format writes it: %.16g, "Nan", "+Inf", "-Inf".
void appendSampleValue(std::string& out, double value);

}  // namespace fabricwatch::core
