#pragma once
// Pure parsers for /sys/class/infiniband text: "4: ACTIVE"-style enums, link rates, GIDs and
// the device kind (driver family).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fabricwatch::facts {

struct CodeName {
  int64_t code = 0;
  std::string name;
};
// "4: ACTIVE" -> {4, "ACTIVE"}, "7: unspecified" -> {7, "unspecified"}; nullopt when malformed.
std::optional<CodeName> parseCodeName(std::string_view text);

// "400 Gb/sec (4X NDR)" -> 400, "2.5 Gb/sec (1X SDR)" -> 2.5; nullopt when malformed.
std::optional<double> parseRateGbps(std::string_view text);

// A port counter's text that says the counter does not exist: "N/A (no PMA)". iWARP devices
// (i40iw, irdma) and some RoCE ports have no Performance Management Agent, and the kernel
// prints this for each of their counters/ files. Such a counter is absent, not a read error.
bool isUnavailableCounter(std::string_view text);

// "0000:0000:...:0000" (unused GID table entry).
bool isZeroGid(std::string_view gid);

// The device family: from the PCI driver when known (mlx5_core, efa, erdma, irdma, bnxt_en),
// else from the name (mlx5_0, efa_0, erdma_0, irdma0, bnxt_re0, rxe0, siw0; rdmap* is EFA only
// with Amazon's PCI vendor 0x1d0f). One of mlx5|efa|erdma|irdma|bnxt_re|rxe|siw|other.
std::string rdmaKind(std::string_view name, std::optional<std::string_view> driver,
                     std::optional<int64_t> pci_vendor);

}  // namespace fabricwatch::facts
