#include "probes/node/verbs_query.h"

#include <endian.h>
#include <infiniband/verbs.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>

#include "core/log.h"

namespace fabricwatch::probes::node {
namespace {

constexpr int kMaxDevices = 64;
constexpr uint32_t kMaxPorts = 32;
constexpr int kMaxGids = 256;

bool zero(const uint8_t* g) {
  return std::all_of(g, g + 16, [](uint8_t b) { return b == 0; });
}

void queryGids(ibv_context* ctx, VerbsPort& p) {
  int n = std::min(p.gid_table_len, kMaxGids);
  p.gid_query = "ibv_query_gid_ex";
  for (int i = 0; i < n; ++i) {
    VerbsGid g;
    g.index = static_cast<uint32_t>(i);
    ibv_gid_entry e{};
    int rc = p.gid_query == "ibv_query_gid_ex" ? ibv_query_gid_ex(ctx, p.port, i, &e, 0) : -1;
    if (rc == 0) {
      std::memcpy(g.raw, e.gid.raw, 16);
      g.type = static_cast<int>(e.gid_type);
    } else if (rc == EOPNOTSUPP || rc == ENOSYS || p.gid_query == "ibv_query_gid") {
      // A kernel without the GID-table ioctl: the older call, which has no type.
      p.gid_query = "ibv_query_gid";
      ibv_gid gid{};
      if (ibv_query_gid(ctx, static_cast<uint8_t>(p.port), i, &gid) != 0) continue;
      std::memcpy(g.raw, gid.raw, 16);
    } else {
      continue;  // ENODATA / EINVAL: an entry not in use
    }
    if (!zero(g.raw)) p.gids.push_back(g);
  }
}

VerbsDevice queryDevice(ibv_device* dev) {
  VerbsDevice d;
  d.name = ibv_get_device_name(dev);
  d.node_type = static_cast<int>(dev->node_type);
  d.node_guid = be64toh(ibv_get_device_guid(dev));
  ibv_context* ctx = ibv_open_device(dev);
  if (!ctx) {
    d.error = std::string("ibv_open_device: ") + std::strerror(errno);
    return d;
  }
  ibv_device_attr attr{};
  if (int rc = ibv_query_device(ctx, &attr); rc != 0) {
    d.error = std::string("ibv_query_device: ") + std::strerror(rc);
    ibv_close_device(ctx);
    return d;
  }
  d.fw_ver = attr.fw_ver;
  d.vendor_id = attr.vendor_id;
  d.vendor_part_id = attr.vendor_part_id;
  d.phys_port_cnt = attr.phys_port_cnt;
  for (uint32_t port = 1; port <= std::min<uint32_t>(attr.phys_port_cnt, kMaxPorts); ++port) {
    VerbsPort p;
    p.port = port;
    ibv_port_attr pa{};
    if (int rc = ibv_query_port(ctx, static_cast<uint8_t>(port), &pa); rc != 0) {
      p.error = std::string("ibv_query_port: ") + std::strerror(rc);
      d.ports.push_back(std::move(p));
      continue;
    }
    p.state = static_cast<int>(pa.state);
    p.phys_state = pa.phys_state;
    p.active_mtu = static_cast<int>(pa.active_mtu);
    p.max_mtu = static_cast<int>(pa.max_mtu);
    p.active_width = pa.active_width;
    p.active_speed = pa.active_speed;
    p.link_layer = pa.link_layer;
    p.lid = pa.lid;
    p.sm_lid = pa.sm_lid;
    p.gid_table_len = pa.gid_tbl_len;
    queryGids(ctx, p);
    d.ports.push_back(std::move(p));
  }
  ibv_close_device(ctx);
  return d;
}

}  // namespace

VerbsQuery queryVerbs() {
  VerbsQuery q;
  std::string printed = core::log::captureStderr([&] {
    int n = 0;
    errno = 0;
    ibv_device** list = ibv_get_device_list(&n);
    if (!list && errno == ENOSYS) {
      // No /sys/class/infiniband_verbs: a kernel without the RDMA subsystem has no devices.
      q.listed = true;
      q.note = "the kernel has no RDMA devices (ibv_get_device_list: " +
               std::string(std::strerror(ENOSYS)) + ")";
      return;
    }
    if (!list) {
      q.error = std::string("ibv_get_device_list: ") + std::strerror(errno ? errno : EIO);
      return;
    }
    q.listed = true;
    for (int i = 0; i < std::min(n, kMaxDevices); ++i) q.devices.push_back(queryDevice(list[i]));
    ibv_free_device_list(list);
  });
  std::istringstream lines(printed);
  for (std::string line; std::getline(lines, line) && q.warnings.size() < 16;)
    if (!line.empty()) q.warnings.push_back(line);
  return q;
}

}  // namespace fabricwatch::probes::node
