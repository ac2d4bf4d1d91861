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

bool isUnavailableCounter(std::string_view text) { return core::trim(text).substr(0, 3) == "N/A"; }

bool isZeroGid(std::string_view gid) {
  gid = core::trim(gid);
  if (gid.empty()) return true;
  for (char c : gid) {
    if (c != '0' && c != ':') return false;
  }
  return true;
}

std::string rdmaKind(std::string_view name, std::optional<std::string_view> driver,
                     std::optional<int64_t> pci_vendor) {
  if (driver) {
    if (*driver == "mlx5_core") return "mlx5";
    if (*driver == "efa") return "efa";
    if (*driver == "erdma") return "erdma";
    if (*driver == "irdma") return "irdma";
    if (*driver == "bnxt_en") return "bnxt_re";
  }
  auto starts = [&](std::string_view p) { return name.substr(0, p.size()) == p; };
  if (starts("mlx5_")) return "mlx5";
  if (starts("efa_")) return "efa";
  if (starts("rdmap") && pci_vendor == 0x1d0f) return "efa";
  if (starts("erdma")) return "erdma";
  if (starts("irdma")) return "irdma";
  if (starts("bnxt_re")) return "bnxt_re";
  if (starts("rxe")) return "rxe";
  if (starts("siw")) return "siw";
  return "other";
}

}  // namespace fabricwatch::facts
