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

// Whether a port's rate file tells its link rate. A link that has not trained still has a rate
// file, with a placeholder in it (10 Gb/sec (4X SDR) on a DOWN InfiniBand port, 40 Gb/sec (4X
// QDR) on a disabled RoCE one): only a physical state of LinkUp, or with no physical state
// known a logical state other than DOWN, makes it a rate. Codes as in state and phys_state.
bool rateIsMeasured(std::optional<int64_t> state_code, std::optional<int64_t> phys_state_code);

// The RDMA MTU of a RoCE port whose net device has MTU `netdev_mtu`: what the kernel reports as
// the port's active_mtu (iboe_get_mtu in include/rdma/ib_addr.h): the largest of 4096, 2048,
// 1024, 512 and 256 that fits in the net device's MTU less 96 bytes of RoCE v2 headers (GRH 40,
// UDP 8, BTH 12, XRC 4, AtomicETH 28, ICRC 4). So 4096 needs a net device MTU of 4192 or more;
// the Ethernet default of 1500 gives 1024. nullopt below 352 (the kernel's 0: no valid MTU).
std::optional<int64_t> roceActiveMtu(int64_t netdev_mtu);

// A port counter's text that says the counter does not exist: "N/A (no PMA)". iWARP devices
// (i40iw, irdma) and some RoCE ports have no Performance Management Agent, and the kernel
// prints this for each of their counters/ files. Such a counter is absent, not a read error.
bool isUnavailableCounter(std::string_view text);

// "0000:0000:...:0000" (unused GID table entry).
bool isZeroGid(std::string_view gid);

// The value of KEY in a uevent file ("DRIVER=efa\nPCI_SLOT_NAME=0000:10:1b.0\n"), or nullopt.
std::optional<std::string> ueventValue(std::string_view text, std::string_view key);

// What a device's class entry says about the hardware behind it (its device/: the PCI
// function), from which its kind is told.
struct RdmaHardware {
  bool has_device = false;            // the class entry has a device/
  std::optional<std::string> driver;  // device/driver's name, else DRIVER= in device/uevent
  std::optional<int64_t> vendor;      // device/vendor
};

// The device family, from its hardware: the driver (mlx5_core, efa, erdma, irdma, bnxt_en),
// else a PCI vendor that makes one RDMA family only (0x1d0f Amazon: EFA; 0x1ded Alibaba:
// eRDMA; 0x14e4 Broadcom: bnxt_re). Never from the name of a device with a device/: EFA devices
// are efa_N or rdmapNNNsM by kernel and udev rules, and any device can be renamed. Software
// devices (rxe, siw) have no device/ at all, and only they are told by their name. One of
// mlx5|efa|erdma|irdma|bnxt_re|rxe|siw|other.
std::string rdmaKind(std::string_view name, const RdmaHardware& hw);

}  // namespace fabricwatch::facts
