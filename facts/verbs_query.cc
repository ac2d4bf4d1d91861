#include "facts/verbs_query.h"

#include <dlfcn.h>
#include <endian.h>
#include <infiniband/verbs.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>

#include "core/log.h"

namespace fabricwatch::facts {
namespace {

constexpr int kMaxDevices = 64;
constexpr uint32_t kMaxPorts = 32;
constexpr int kMaxGids = 256;

// libibverbs is opened when the verbs source first runs, not linked: linked, it and libnl-route-3
// and libnl-3 (which it needs) were mapped and relocated by every start of fabricwatch, a
// `check` in a prolog included, and held 0.6 MiB of the daemon's resident pages, while the source
// only queries devices on a host root. A node without libibverbs reports it as the query's error.
struct Ibv {
  decltype(&::ibv_get_device_list) get_device_list = nullptr;
  decltype(&::ibv_free_device_list) free_device_list = nullptr;
  decltype(&::ibv_get_device_name) get_device_name = nullptr;
  decltype(&::ibv_get_device_guid) get_device_guid = nullptr;
  decltype(&::ibv_open_device) open_device = nullptr;
  decltype(&::ibv_close_device) close_device = nullptr;
  decltype(&::ibv_query_device) query_device = nullptr;
  decltype(&::ibv_query_port) query_port_compat = nullptr;  // the exported (compat) entry point
  decltype(&::ibv_query_gid) query_gid = nullptr;
  decltype(&::_ibv_query_gid_ex) query_gid_ex = nullptr;
  std::string error;  // why it could not be loaded
};

template <typename F>
void bind(void* lib, const char* name, F& fn, std::string& error) {
  fn = reinterpret_cast<F>(::dlsym(lib, name));
  if (!fn && error.empty()) error = std::string("libibverbs.so.1 has no ") + name;
}

const Ibv& loadIbv() {
  static const Ibv loaded = [] {
    Ibv i;
    void* lib = ::dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* why = ::dlerror();
      i.error = std::string("cannot load libibverbs: ") + (why ? why : "dlopen failed");
      return i;
    }
    // Never closed: the providers it loads stay referenced for the life of the process.
    bind(lib, "ibv_get_device_list", i.get_device_list, i.error);
    bind(lib, "ibv_free_device_list", i.free_device_list, i.error);
    bind(lib, "ibv_get_device_name", i.get_device_name, i.error);
    bind(lib, "ibv_get_device_guid", i.get_device_guid, i.error);
    bind(lib, "ibv_open_device", i.open_device, i.error);
    bind(lib, "ibv_close_device", i.close_device, i.error);
    bind(lib, "ibv_query_device", i.query_device, i.error);
    bind(lib, "ibv_query_port", i.query_port_compat, i.error);
    bind(lib, "ibv_query_gid", i.query_gid, i.error);
    bind(lib, "_ibv_query_gid_ex", i.query_gid_ex, i.error);
    return i;
  }();
  return loaded;
}

// verbs.h's inline ibv_query_port through the loaded library: the context's extended op when
// the provider has one, else the exported call with the compat layout.
int queryPort(const Ibv& i, ibv_context* ctx, uint8_t port, ibv_port_attr* attr) {
  if (verbs_context* v = verbs_get_ctx_op(ctx, query_port))
    return v->query_port(ctx, port, attr, sizeof(*attr));
  std::memset(attr, 0, sizeof(*attr));
  return i.query_port_compat(ctx, port, reinterpret_cast<_compat_ibv_port_attr*>(attr));
}

bool zero(const uint8_t* g) {
  return std::all_of(g, g + 16, [](uint8_t b) { return b == 0; });
}

void queryGids(const Ibv& ibv, ibv_context* ctx, VerbsPort& p) {
  int n = std::min(p.gid_table_len, kMaxGids);
  p.gid_query = "ibv_query_gid_ex";
  for (int i = 0; i < n; ++i) {
    VerbsGid g;
    g.index = static_cast<uint32_t>(i);
    ibv_gid_entry e{};
    int rc =
        p.gid_query == "ibv_query_gid_ex" ? ibv.query_gid_ex(ctx, p.port, i, &e, 0, sizeof(e)) : -1;
    if (rc == 0) {
      std::memcpy(g.raw, e.gid.raw, 16);
      g.type = static_cast<int>(e.gid_type);
    } else if (rc == EOPNOTSUPP || rc == ENOSYS || p.gid_query == "ibv_query_gid") {
      // A kernel without the GID-table ioctl: the older call, which has no type.
      p.gid_query = "ibv_query_gid";
      ibv_gid gid{};
      if (ibv.query_gid(ctx, static_cast<uint8_t>(p.port), i, &gid) != 0) continue;
      std::memcpy(g.raw, gid.raw, 16);
    } else {
      continue;  // ENODATA / EINVAL: an entry not in use
    }
    if (!zero(g.raw)) p.gids.push_back(g);
  }
}

VerbsDevice queryDevice(const Ibv& ibv, ibv_device* dev) {
  VerbsDevice d;
  d.name = ibv.get_device_name(dev);
  d.node_type = static_cast<int>(dev->node_type);
  d.node_guid = be64toh(ibv.get_device_guid(dev));
  ibv_context* ctx = ibv.open_device(dev);
  if (!ctx) {
    d.error = std::string("ibv_open_device: ") + std::strerror(errno);
    return d;
  }
  ibv_device_attr attr{};
  if (int rc = ibv.query_device(ctx, &attr); rc != 0) {
    d.error = std::string("ibv_query_device: ") + std::strerror(rc);
    ibv.close_device(ctx);
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
    if (int rc = queryPort(ibv, ctx, static_cast<uint8_t>(port), &pa); rc != 0) {
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
    queryGids(ibv, ctx, p);
    d.ports.push_back(std::move(p));
  }
  ibv.close_device(ctx);
  return d;
}

}  // namespace

VerbsQuery queryVerbs() {
  VerbsQuery q;
  const Ibv& ibv = loadIbv();
  if (!ibv.error.empty()) {
    q.error = ibv.error;
    return q;
  }
  std::string printed = core::log::captureStderr([&] {
    int n = 0;
    errno = 0;
    ibv_device** list = ibv.get_device_list(&n);
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
    for (int i = 0; i < std::min(n, kMaxDevices); ++i)
      q.devices.push_back(queryDevice(ibv, list[i]));
    ibv.free_device_list(list);
  });
  std::istringstream lines(printed);
  for (std::string line; std::getline(lines, line) && q.warnings.size() < 16;)
    if (!line.empty()) q.warnings.push_back(line);
  return q;
}

}  // namespace fabricwatch::facts
