#pragma once
// What libibverbs (rdma-core) says about the RDMA devices it can open: device and port
// attributes from the kernel's uverbs interface (ibv_query_device, ibv_query_port), and the
// GID table through ibv_query_gid_ex (ibv_query_gid where the kernel lacks the newer ioctl).
// A thin reader: it fills plain structs; verbs_check.h names, renders and compares them.
// libibverbs prints warnings to stderr (no provider library for a device, a low memlock
// limit); they are captured (core::log::captureStderr) and returned, not printed.

#include <cstdint>
#include <string>
#include <vector>

namespace fabricwatch::facts {

struct VerbsGid {
  uint32_t index = 0;
  uint8_t raw[16] = {};
  int type = -1;  // enum ibv_gid_type: 0 IB, 1 RoCE v1, 2 RoCE v2; -1 unknown (ibv_query_gid)
};

struct VerbsPort {
  uint32_t port = 0;
  int state = 0;                    // enum ibv_port_state: 1 DOWN .. 5 ACTIVE_DEFER
  int phys_state = 0;               // 1 Sleep .. 7 Phy Test, as in sysfs
  int active_mtu = 0, max_mtu = 0;  // enum ibv_mtu: 1 (256) .. 5 (4096)
  int active_width = 0;             // IBV_WIDTH_*: 1 1X, 2 4X, 4 8X, 8 12X, 16 2X
  int active_speed =
      0;               // IBV_SPEED_*: 1 SDR, 2 DDR, 4 QDR, 8 FDR10, 16 FDR, 32 EDR, 64 HDR, 128 NDR
  int link_layer = 0;  // IBV_LINK_LAYER_*: 0 unspecified, 1 InfiniBand, 2 Ethernet
  uint32_t lid = 0, sm_lid = 0;
  int gid_table_len = 0;
  std::string gid_query;       // the call that read the GIDs: ibv_query_gid_ex or ibv_query_gid
  std::vector<VerbsGid> gids;  // entries in use (non-zero)
  std::string error;           // ibv_query_port failed: why
};

struct VerbsDevice {
  std::string name;
  int node_type = 0;  // enum ibv_node_type: 1 CA, 2 switch, 3 router, 4 RNIC, 5 usNIC ...
  std::string fw_ver;
  uint64_t node_guid = 0;  // host order
  uint32_t vendor_id = 0, vendor_part_id = 0;
  int phys_port_cnt = 0;
  std::vector<VerbsPort> ports;
  std::string error;  // ibv_open_device or ibv_query_device failed: why
};

struct VerbsQuery {
  bool listed = false;  // ibv_get_device_list answered (with devices or none)
  std::string error;    // it did not: why
  std::string note;     // why there are no devices, when libibverbs says (no RDMA in the kernel)
  std::vector<VerbsDevice> devices;
  std::vector<std::string> warnings;  // lines libibverbs printed
};

// Lists and queries every device (at most 64, each at most 32 ports and 256 GID entries).
VerbsQuery queryVerbs();

}  // namespace fabricwatch::facts
