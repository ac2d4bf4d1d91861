#include "probes/node/fact_reader.h"

#include <cerrno>
#include <charconv>
#include <cstring>

namespace fabricwatch::probes::node {

std::optional<std::string> FactReader::text(std::string_view path, size_t max_bytes,
                                            bool quiet_einval) {
  core::HostFs::Read r = fs_.read(path, max_bytes);
  switch (r.status) {
    case core::HostFs::ReadStatus::kOk:
      return std::move(r.text);
    case core::HostFs::ReadStatus::kMissing:
      return std::nullopt;
    case core::HostFs::ReadStatus::kError:
      if (!(quiet_einval && r.error == std::strerror(EINVAL))) {
        c_.addError(std::string(path) + ": " + r.error);
      }
      return std::nullopt;
  }
  return std::nullopt;
}

std::optional<std::string> FactReader::line(std::string_view path, bool quiet_einval) {
  auto t = text(path, 1 << 16, quiet_einval);
  if (!t) return std::nullopt;
  return std::string(core::trim(*t));
}

std::optional<int64_t> FactReader::integer(std::string_view path, bool quiet_einval) {
  auto l = line(path, quiet_einval);
  if (!l) return std::nullopt;
  auto v = parseInteger(*l);
  if (!v) c_.addError(std::string(path) + ": not an integer: \"" + l->substr(0, 40) + "\"");
  return v;
}

std::optional<std::string> FactReader::linkName(std::string_view path) const {
  auto target = fs_.readLink(path);
  if (!target) return std::nullopt;
  std::string_view t = *target;
  while (!t.empty() && t.back() == '/') t.remove_suffix(1);
  size_t slash = t.rfind('/');
  return std::string(slash == std::string_view::npos ? t : t.substr(slash + 1));
}

std::optional<int64_t> parseInteger(std::string_view text) {
  text = core::trim(text);
  int base = 10;
  bool negative = false;
  if (!text.empty() && text.front() == '-') {
    negative = true;
    text.remove_prefix(1);
  }
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text.remove_prefix(2);
  }
  if (text.empty()) return std::nullopt;
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v, base);
  if (ec != std::errc() || p != text.data() + text.size()) return std::nullopt;
  // Counters are unsigned 64-bit; values past int64 are clamped rather than wrapped negative.
  if (v > static_cast<uint64_t>(INT64_MAX)) v = INT64_MAX;
  return negative ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
}

std::string joinPath(std::string_view dir, std::string_view name) {
  std::string out(dir);
  if (out.empty() || out.back() != '/') out += '/';
  out += name;
  return out;
}

}  // namespace fabricwatch::probes::node
