#include "facts/pci_parse.h"

#include <cctype>
#include <charconv>

#include "core/host_fs.h"

namespace fabricwatch::facts {

std::optional<double> parsePcieSpeed(std::string_view text) {
  text = core::trim(text);
  size_t gt = text.find(" GT/s");
  if (gt == std::string_view::npos || gt == 0) return std::nullopt;
  double v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + gt, v);
  if (ec != std::errc() || p != text.data() + gt) return std::nullopt;
  return v;
}

bool isPciAddress(std::string_view s) {
  // dddd:bb:dd.f
  if (s.size() != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.') return false;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9, 11}) {
    if (!std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

std::vector<std::string> pciBridges(std::string_view link_target) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= link_target.size()) {
    size_t slash = link_target.find('/', start);
    if (slash == std::string_view::npos) slash = link_target.size();
    std::string_view part = link_target.substr(start, slash - start);
    if (isPciAddress(part)) parts.emplace_back(part);
    start = slash + 1;
  }
  if (!parts.empty()) parts.pop_back();  // the function itself
  return parts;
}

std::optional<std::string> pciProximity(const std::vector<std::string>& a,
                                        const std::vector<std::string>& b) {
  size_t common = 0;
  while (common < a.size() && common < b.size() && a[common] == b[common]) ++common;
  if (common >= 2) return "pci_switch";
  if (common == 1) return "root_port";
  return std::nullopt;
}

std::optional<std::string> pciDevicePath(std::string_view link_target) {
  constexpr std::string_view kPrefix = "../../../devices/";
  if (link_target.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  std::string_view rest = link_target.substr(kPrefix.size());
  while (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  if (rest.empty()) return std::nullopt;
  size_t start = 0;
  while (start <= rest.size()) {
    size_t slash = rest.find('/', start);
    if (slash == std::string_view::npos) slash = rest.size();
    std::string_view part = rest.substr(start, slash - start);
    if (part.empty() || part == "." || part == "..") return std::nullopt;
    start = slash + 1;
  }
  return "/sys/devices/" + std::string(rest);
}

std::vector<std::string> pciPathBridges(const std::vector<std::string>& a,
                                        const std::vector<std::string>& b) {
  size_t common = 0;
  while (common < a.size() && common < b.size() && a[common] == b[common]) ++common;
  std::vector<std::string> out(a.begin() + static_cast<std::ptrdiff_t>(common), a.end());
  out.insert(out.end(), b.begin() + static_cast<std::ptrdiff_t>(common), b.end());
  return out;
}

std::vector<std::string> acsRedirects(uint16_t control) {
  std::vector<std::string> out;
  if (control & (1u << 2)) out.emplace_back("RR");
  if (control & (1u << 3)) out.emplace_back("CR");
  if (control & (1u << 4)) out.emplace_back("UF");
  return out;
}

core::Value pcieValue(const PcieLinkText& t) {
  core::Value v = core::Value::map();
  auto width = [](std::optional<int64_t> w) { return w && *w > 0 ? w : std::nullopt; };
  auto cw = width(t.current_width), mw = width(t.max_width);
  if (cw) v["current_width"] = *cw;
  if (mw) v["max_width"] = *mw;
  std::optional<double> cs, ms;
  if (t.current_speed && (cs = parsePcieSpeed(*t.current_speed))) {
    v["current_speed"] = *t.current_speed;
    v["current_speed_gts"] = *cs;
  }
  if (t.max_speed && (ms = parsePcieSpeed(*t.max_speed))) {
    v["max_speed"] = *t.max_speed;
    v["max_speed_gts"] = *ms;
  }
  if (cw && mw && cs && ms) v["degraded"] = *cw < *mw || *cs < *ms;
  return v;
}

}  // namespace fabricwatch::facts
