#pragma once
// libibverbs' view of the RDMA devices as facts (verbs.*), and its cross-check against what
// the rdma source reads from sysfs (rdma.devices): both come from the kernel, through two
// interfaces, and a disagreement means one of them is stale or wrong for the job (a device in
// sysfs that libibverbs cannot open: no /dev/infiniband in the container, no provider library;
// a port whose state or rate differs; a GID that is not where sysfs says). Pure functions.

#include <string>
#include <vector>

#include "core/value.h"
#include "facts/verbs_query.h"

namespace fabricwatch::facts {

// Names as sysfs and ibv_devinfo write them.
std::string verbsPortStateName(int state);        // "ACTIVE"
std::string verbsPhysStateName(int state);        // "LinkUp"
int verbsMtuBytes(int mtu);                       // 5 -> 4096; 0 when unknown
std::string verbsWidthName(int width);            // 2 -> "4X"
std::string verbsSpeedName(int speed);            // 128 -> "NDR"
double verbsRateGbps(int width, int speed);       // 4X NDR -> 400 (what sysfs' rate says)
std::string verbsLinkLayerName(int layer);        // "InfiniBand", "Ethernet", "Unknown"
std::string verbsNodeTypeName(int type);          // "CA", "RNIC" ...
std::string verbsGuid(uint64_t guid);             // "0c42:a103:00b4:9a5c", as sysfs' node_guid
std::string verbsGidAddress(const uint8_t* raw);  // "fe80:0000:...", as sysfs' gids/N
std::string verbsGidTypeName(int type);  // sysfs' words: "IB/RoCE v1", "RoCE v2"; "" unknown

struct Disagreement {
  std::string device;
  int port = 0;       // 0: the device itself
  std::string field;  // device, port, state, phys_state, link_layer, rate, lid, sm_lid, gid,
                      // gid_type, fw_ver, node_guid
  std::string verbs, sysfs;
};
// Every field both sides have, compared. `rdma_devices`: the rdma source's rdma.devices.
std::vector<Disagreement> crossCheck(const VerbsQuery& q, const core::Value& rdma_devices);

// The verbs document: devices (an empty list where libibverbs lists none), disagreements,
// what libibverbs printed.
core::Value verbsFacts(const VerbsQuery& q, const std::vector<Disagreement>& d);

}  // namespace fabricwatch::facts
