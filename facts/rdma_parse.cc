#include "facts/rdma_parse.h"

#include <charconv>

#include "core/host_fs.h"
#include "facts/fact_reader.h"

namespace fabricwatch::facts {

std::optional<CodeName> parseCodeName(std::string_view text) {
  text = core::trim(text);
  size_t colon = text.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  auto code = parseInteger(text.substr(0, colon));
  if (!code) return std::nullopt;
  std::string_view name = core::trim(text.substr(colon + 1));
  if (name.empty()) return std::nullopt;
  return CodeName{*code, std::string(name)};
}

std::optional<double> parseRateGbps(std::string_view text) {
  text = core::trim(text);
  size_t sp = text.find(" Gb/sec");
  if (sp == std::string_view::npos || sp == 0) return std::nullopt;
  double v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + sp, v);
  if (ec != std::errc() || p != text.data() + sp) return std::nullopt;
  return v;
}

std::optional<int64_t> roceActiveMtu(int64_t netdev_mtu) {
  constexpr int64_t kRoceHeaders = 40 + 8 + 12 + 4 + 28 + 4;
  for (int64_t mtu : {4096, 2048, 1024, 512, 256}) {
    if (netdev_mtu - kRoceHeaders >= mtu) return mtu;
  }
  return std::nullopt;
}

bool isUnavailableCounter(std::string_view text) { return core::trim(text).substr(0, 3) == "N/A"; }

bool isZeroGid(std::string_view gid) {
  gid = core::trim(gid);
  if (gid.empty()) return true;
  for (char c : gid) {
    if (c != '0' && c != ':') return false;
  }
  return true;
}

bool rateIsMeasured(std::optional<int64_t> state_code, std::optional<int64_t> phys_state_code) {
  constexpr int64_t kDown = 1, kLinkUp = 5;
  if (phys_state_code) return *phys_state_code == kLinkUp;
  return !state_code || *state_code != kDown;
}

std::optional<std::string> ueventValue(std::string_view text, std::string_view key) {
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = core::trim(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (line.size() > key.size() && line.substr(0, key.size()) == key && line[key.size()] == '=')
      return std::string(core::trim(line.substr(key.size() + 1)));
  }
  return std::nullopt;
}

std::string rdmaKind(std::string_view name, const RdmaHardware& hw) {
  if (hw.driver) {
    const std::string& d = *hw.driver;
    if (d == "mlx5_core") return "mlx5";
    if (d == "efa") return "efa";
    if (d == "erdma") return "erdma";
    if (d == "irdma") return "irdma";
    if (d == "bnxt_en") return "bnxt_re";
  }
  if (hw.vendor == 0x1d0f) return "efa";  // Amazon's only RDMA function; ENA has none
  if (hw.vendor == 0x1ded) return "erdma";
  if (hw.vendor == 0x14e4) return "bnxt_re";
  if (hw.has_device) return "other";
  auto starts = [&](std::string_view p) { return name.substr(0, p.size()) == p; };
  if (starts("rxe")) return "rxe";
  if (starts("siw")) return "siw";
  return "other";
}

}  // namespace fabricwatch::facts
