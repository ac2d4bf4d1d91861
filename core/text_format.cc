#include "core/text_format.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>

namespace fabricwatch::core {

namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

// ostream's precision(max_digits10 - 1) with the default float field, as TextSerializer sets it.
constexpr int kPrecision = std::numeric_limits<double>::max_digits10 - 1;

template <typename Int>
void appendInteger(std::string& out, Int v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

// Appends `v` with each of `special` (a subset of backslash, double quote, newline) escaped:
// label values escape all three, help text backslash and newline.
void appendEscaped(std::string& out, std::string_view v, std::string_view special) {
  for (size_t i = v.find_first_of(special); i != std::string_view::npos;
       i = v.find_first_of(special)) {
    out.append(v.data(), i);
    out += '\\';
    out += v[i] == '\n' ? 'n' : v[i];
    v.remove_prefix(i + 1);
  }
  out.append(v);
}

void appendLabelValue(std::string& out, std::string_view v) { appendEscaped(out, v, "\\\"\n"); }
void appendHelp(std::string& out, std::string_view v) { appendEscaped(out, v, "\\\n"); }

// The name, suffix and label set of one sample line, up to the space before its value. An
// extra label (le, quantile) comes after the sample's own labels; `extra_value` is written as
// a sample value.
void appendHead(std::string& out, const MetricFamily& family, const ClientMetric& metric,
                std::string_view suffix = {}, std::string_view extra_name = {},
                double extra_value = 0) {
  out += family.name;
  out += suffix;
  if (!metric.label.empty() || !extra_name.empty()) {
    out += '{';
    bool first = true;
    for (const auto& l : metric.label) {
      if (!first) out += ',';
      first = false;
      out += l.name;
      out += "=\"";
      appendLabelValue(out, l.value);
      out += '"';
    }
    if (!extra_name.empty()) {
      if (!first) out += ',';
      out += extra_name;
      out += "=\"";
      appendSampleValue(out, extra_value);
      out += '"';
    }
    out += '}';
  }
  out += ' ';
}

void appendTail(std::string& out, const ClientMetric& metric) {
  if (metric.timestamp_ms != 0) {
    out += ' ';
    appendInteger(out, metric.timestamp_ms);
  }
  out += '\n';
}

void appendSimple(std::string& out, const MetricFamily& family, const ClientMetric& m, double v) {
  appendHead(out, family, m);
  appendSampleValue(out, v);
  appendTail(out, m);
}

// The _count and _sum lines that summaries and histograms both begin with.
void appendCountAndSum(std::string& out, const MetricFamily& family, const ClientMetric& m,
                       std::uint64_t count, double sum) {
  appendHead(out, family, m, "_count");
  appendInteger(out, count);
  appendTail(out, m);
  appendHead(out, family, m, "_sum");
  appendSampleValue(out, sum);
  appendTail(out, m);
}

void appendSummary(std::string& out, const MetricFamily& family, const ClientMetric& m) {
  const auto& s = m.summary;
  appendCountAndSum(out, family, m, s.sample_count, s.sample_sum);
  for (const auto& q : s.quantile) {
    appendHead(out, family, m, {}, "quantile", q.quantile);
    appendSampleValue(out, q.value);
    appendTail(out, m);
  }
}

void appendHistogram(std::string& out, const MetricFamily& family, const ClientMetric& m) {
  const auto& h = m.histogram;
  appendCountAndSum(out, family, m, h.sample_count, h.sample_sum);
  double last = -std::numeric_limits<double>::infinity();
  for (const auto& b : h.bucket) {
    appendHead(out, family, m, "_bucket", "le", b.upper_bound);
    last = b.upper_bound;
    appendInteger(out, b.cumulative_count);
    appendTail(out, m);
  }
  // The format requires an +Inf bucket; the sample count is its cumulative count.
  if (last != std::numeric_limits<double>::infinity()) {
    appendHead(out, family, m, "_bucket", "le", std::numeric_limits<double>::infinity());
    appendInteger(out, h.sample_count);
    appendTail(out, m);
  }
}

std::string_view typeName(MetricType t) {
  switch (t) {
    case MetricType::Counter:
      return "counter";
    case MetricType::Gauge:
      return "gauge";
    case MetricType::Summary:
      return "summary";
    case MetricType::Untyped:
      return "untyped";
    case MetricType::Histogram:
      return "histogram";
  }
  return {};
}

void appendFamily(std::string& out, const MetricFamily& family) {
  if (!family.help.empty()) {
    out += "# HELP ";
    out += family.name;
    out += ' ';
    appendHelp(out, family.help);
    out += '\n';
  }
  std::string_view type = typeName(family.type);
  if (type.empty()) return;  // not a MetricType: TextSerializer writes nothing for it either
  out += "# TYPE ";
  out += family.name;
  out += ' ';
  out += type;
  out += '\n';
  for (const auto& m : family.metric) {
    switch (family.type) {
      case MetricType::Counter:
        appendSimple(out, family, m, m.counter.value);
        break;
      case MetricType::Gauge:
        appendSimple(out, family, m, m.gauge.value);
        break;
      case MetricType::Untyped:
        appendSimple(out, family, m, m.untyped.value);
        break;
      case MetricType::Summary:
        appendSummary(out, family, m);
        break;
      case MetricType::Histogram:
        appendHistogram(out, family, m);
        break;
    }
  }
}

}  // namespace

void appendSampleValue(std::string& out, double value) {
  if (std::isnan(value)) {
    out += "Nan";
  } else if (std::isinf(value)) {
    out += value < 0 ? "-Inf" : "+Inf";
  } else {
    // to_chars' general format with a precision is printf's %.*g in the C locale, whatever
    // the process's locale: "1e+21", "1e-07", "0.1", and a counter at 2^60 as
    // "1.152921504606847e+18" (a counter's value is a double; past 16 digits it loses the last
    // ones, as it did before).
    char buf[32];
    auto r = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::general, kPrecision);
    out.append(buf, r.ptr);
  }
}

void appendTextFormat(std::string& out, const MetricFamilies& families) {
  for (const auto& f : families) appendFamily(out, f);
}

std::string textFormat(const MetricFamilies& families) {
  std::string out;
  appendTextFormat(out, families);
  return out;
}

}  // namespace fabricwatch::core
