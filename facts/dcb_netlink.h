#pragma once
// Priority flow control (PFC) of a net device as the kernel's DCB netlink interface answers it:
// RTM_GETDCB with DCB_CMD_IEEE_GET, whose DCB_ATTR_IEEE nest carries DCB_ATTR_IEEE_PFC (struct
// ieee_pfc: the priorities with PFC on, and per priority the PFC frames sent and received). It
// is what mlnx_qos and lldptool read; no sysfs file shows it (MLNX_OFED's qos/ has trust,
// dscp2prio, buffers and rate limits, not PFC). Asked in-process and read-only: a get needs no
// capability. The answer speaks for this process's network namespace.

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/value.h"

namespace fabricwatch::facts {

struct DcbPfc {
  // Whether the device answers DCB: false where it has no DCB operations (veth, virtio, bonds)
  // or the kernel is built without CONFIG_DCB (EOPNOTSUPP either way); false too when the
  // question failed otherwise (`error` says how: no such device, a timeout ...).
  bool supported = false;
  bool has_pfc = false;  // the answer carried DCB_ATTR_IEEE_PFC (drivers without ieee_getpfc don't)
  uint8_t pfc_cap = 0;   // how many traffic classes may have PFC on at once
  uint8_t pfc_en = 0;    // bit P: PFC on for priority P
  std::array<uint64_t, 8> requests{};     // PFC frames sent per priority (mlx5: tx_pause)
  std::array<uint64_t, 8> indications{};  // PFC frames received per priority (mlx5: rx_pause)
  std::string error;
};

// The largest answer read; a longer one (never seen: an IEEE_GET answer with a full DSCP APP
// table is about 2 KiB) is an error, not a partial parse.
inline constexpr size_t kDcbAnswerMax = 32 * 1024;

// Parses the netlink messages of one answer (as recv() returned them) to the request numbered
// `seq`: an RTM_GETDCB message, or an NLMSG_ERROR. Pure; any length or layout is safe.
DcbPfc parseDcbAnswer(std::string_view bytes, uint32_t seq);

// The request for `ifname` numbered `seq`, as sent.
std::string dcbIeeeGetRequest(const std::string& ifname, uint32_t seq);

// One NETLINK_ROUTE socket for a collection's questions, each bounded by `timeout`.
class DcbQuery {
 public:
  explicit DcbQuery(std::chrono::milliseconds timeout = std::chrono::milliseconds(200));
  ~DcbQuery();
  DcbQuery(const DcbQuery&) = delete;
  DcbQuery& operator=(const DcbQuery&) = delete;

  DcbPfc pfc(const std::string& ifname);

 private:
  int fd_ = -1;
  std::string open_error_;
  uint32_t seq_ = 0;
  std::chrono::milliseconds timeout_;
};

// net.interfaces[].pfc: {supported, error} or {supported, capable, enabled, pause_sent,
// pause_received}, the maps keyed by priority "0" ... "7" (docs/facts.md).
core::Value pfcFact(const DcbPfc& p);

}  // namespace fabricwatch::facts
