#include "facts/verbs_check.h"

#include <cstdio>
#include <map>

namespace fabricwatch::facts {
namespace {

std::string str(const core::Value& v, const char* key) {
  const core::Value* x = v.find(key);
  return x && x->isString() ? x->asString() : "";
}

const core::Value* findByName(const core::Value& list, const char* key, const std::string& name) {
  if (!list.isList()) return nullptr;
  for (const auto& e : list.asList())
    if (str(e, key) == name) return &e;
  return nullptr;
}

const core::Value* findPort(const core::Value& dev, uint32_t port) {
  const core::Value* ports = dev.find("ports");
  if (!ports || !ports->isList()) return nullptr;
  for (const auto& p : ports->asList()) {
    const core::Value* n = p.find("port");
    if (n && n->isInt() && n->asInt() == static_cast<int64_t>(port)) return &p;
  }
  return nullptr;
}

// "400 Gb/sec (4X NDR)" -> "4X NDR"; "" when there is no parenthesis.
std::string rateLabel(const std::string& rate) {
  auto open = rate.find('('), close = rate.find(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return "";
  return rate.substr(open + 1, close - open - 1);
}

}  // namespace

std::string verbsPortStateName(int s) {
  static const char* kNames[] = {"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"};
  return s >= 0 && s <= 5 ? kNames[s] : "state " + std::to_string(s);
}

std::string verbsPhysStateName(int s) {
  static const char* kNames[] = {"",
                                 "Sleep",
                                 "Polling",
                                 "Disabled",
                                 "PortConfigurationTraining",
                                 "LinkUp",
                                 "LinkErrorRecovery",
                                 "Phy Test"};
  return s >= 1 && s <= 7 ? kNames[s] : "phys_state " + std::to_string(s);
}

int verbsMtuBytes(int mtu) { return mtu >= 1 && mtu <= 5 ? 128 << mtu : 0; }

std::string verbsWidthName(int w) {
  switch (w) {
    case 1:
      return "1X";
    case 2:
      return "4X";
    case 4:
      return "8X";
    case 8:
      return "12X";
    case 16:
      return "2X";
    default:
      return "width " + std::to_string(w);
  }
}

namespace {
struct Speed {
  int code;
  const char* name;
  double gbps;  // per lane, as the kernel's rate_show counts it
};
constexpr Speed kSpeeds[] = {{1, "SDR", 2.5}, {2, "DDR", 5},   {4, "QDR", 10},  {8, "FDR10", 10},
                             {16, "FDR", 14}, {32, "EDR", 25}, {64, "HDR", 50}, {128, "NDR", 100}};
int lanes(int w) {
  switch (w) {
    case 1:
      return 1;
    case 2:
      return 4;
    case 4:
      return 8;
    case 8:
      return 12;
    case 16:
      return 2;
    default:
      return 0;
  }
}
}  // namespace

std::string verbsSpeedName(int s) {
  for (const auto& sp : kSpeeds)
    if (sp.code == s) return sp.name;
  return "speed " + std::to_string(s);
}

double verbsRateGbps(int width, int speed) {
  for (const auto& sp : kSpeeds)
    if (sp.code == speed) return sp.gbps * lanes(width);
  return 0;
}

std::string verbsLinkLayerName(int l) {
  switch (l) {
    case 1:
      return "InfiniBand";
    case 2:
      return "Ethernet";
    default:
      return "Unknown";  // what sysfs prints for it (EFA), so that the two compare
  }
}

std::string verbsNodeTypeName(int t) {
  static const char* kNames[] = {"",     "CA",    "switch",    "router",
                                 "RNIC", "usNIC", "usNIC UDP", "unspecified"};
  return t >= 1 && t <= 7 ? kNames[t] : "node_type " + std::to_string(t);
}

std::string verbsGuid(uint64_t g) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%04x:%04x:%04x:%04x", static_cast<unsigned>(g >> 48),
                static_cast<unsigned>((g >> 32) & 0xffff),
                static_cast<unsigned>((g >> 16) & 0xffff), static_cast<unsigned>(g & 0xffff));
  return buf;
}

std::string verbsGidAddress(const uint8_t* raw) {
  std::string out;
  char buf[8];
  for (int i = 0; i < 16; i += 2) {
    std::snprintf(buf, sizeof buf, "%s%02x%02x", i ? ":" : "", raw[i], raw[i + 1]);
    out += buf;
  }
  return out;
}

std::string verbsGidTypeName(int t) {
  switch (t) {
    case 0:
    case 1:
      return "IB/RoCE v1";
    case 2:
      return "RoCE v2";
    default:
      return "";
  }
}

std::vector<Disagreement> crossCheck(const VerbsQuery& q, const core::Value& rdma_devices) {
  std::vector<Disagreement> out;
  auto add = [&](const std::string& dev, int port, std::string field, std::string verbs,
                 std::string sysfs) {
    if (verbs != sysfs)
      out.push_back({dev, port, std::move(field), std::move(verbs), std::move(sysfs)});
  };
  // Devices sysfs has and libibverbs does not list (no uverbs device in this container, no
  // provider library), and the other way round.
  if (rdma_devices.isList()) {
    for (const auto& s : rdma_devices.asList()) {
      std::string name = str(s, "name");
      bool listed = false;
      for (const auto& d : q.devices) listed = listed || d.name == name;
      if (!listed) add(name, 0, "device", "absent", "present");
    }
  }
  for (const auto& d : q.devices) {
    const core::Value* s = findByName(rdma_devices, "name", d.name);
    if (!s) {
      add(d.name, 0, "device", "present", "absent");
      continue;
    }
    if (!d.error.empty()) continue;  // libibverbs could not open it: nothing to compare
    if (const auto fw = str(*s, "fw_ver"); !fw.empty()) add(d.name, 0, "fw_ver", d.fw_ver, fw);
    if (const auto guid = str(*s, "node_guid"); !guid.empty())
      add(d.name, 0, "node_guid", verbsGuid(d.node_guid), guid);
    for (const auto& p : d.ports) {
      const core::Value* sp = findPort(*s, p.port);
      int port = static_cast<int>(p.port);
      if (!sp) {
        add(d.name, port, "port", "present", "absent");
        continue;
      }
      if (!p.error.empty()) continue;
      if (auto st = str(*sp, "state"); !st.empty())
        add(d.name, port, "state", verbsPortStateName(p.state), st);
      if (auto ps = str(*sp, "phys_state"); !ps.empty())
        add(d.name, port, "phys_state", verbsPhysStateName(p.phys_state), ps);
      if (auto ll = str(*sp, "link_layer"); !ll.empty())
        add(d.name, port, "link_layer", verbsLinkLayerName(p.link_layer), ll);
      if (auto rate = rateLabel(str(*sp, "rate")); !rate.empty())
        add(d.name, port, "rate",
            verbsWidthName(p.active_width) + " " + verbsSpeedName(p.active_speed), rate);
      for (const char* key : {"lid", "sm_lid"}) {
        const core::Value* v = sp->find(key);
        if (v && v->isInt())
          add(d.name, port, key, std::to_string(key[0] == 'l' ? p.lid : p.sm_lid),
              std::to_string(v->asInt()));
      }
      // GIDs: each entry in use on either side, by index.
      std::map<int64_t, std::pair<std::string, std::string>> sysfs_gids;  // address, type
      if (const core::Value* gids = sp->find("gids"); gids && gids->isList())
        for (const auto& g : gids->asList()) {
          const core::Value* i = g.find("index");
          if (i && i->isInt()) sysfs_gids[i->asInt()] = {str(g, "address"), str(g, "type")};
        }
      for (const auto& g : p.gids) {
        auto it = sysfs_gids.find(g.index);
        std::string where = std::to_string(port) + "/" + std::to_string(g.index);
        std::string addr = verbsGidAddress(g.raw);
        if (it == sysfs_gids.end()) {
          out.push_back({d.name, port, "gid", addr + " at " + std::to_string(g.index), "unused"});
          continue;
        }
        add(d.name, port, "gid", addr + " at " + std::to_string(g.index),
            it->second.first + " at " + std::to_string(g.index));
        auto type = verbsGidTypeName(g.type);
        if (!type.empty() && !it->second.second.empty())
          add(d.name, port, "gid_type", type + " at " + std::to_string(g.index),
              it->second.second + " at " + std::to_string(g.index));
        sysfs_gids.erase(it);
      }
      for (const auto& [index, g] : sysfs_gids)
        out.push_back({d.name, port, "gid", "unused", g.first + " at " + std::to_string(index)});
    }
  }
  return out;
}

core::Value verbsFacts(const VerbsQuery& q, const std::vector<Disagreement>& dis) {
  core::Value v = core::Value::map();
  if (!q.error.empty()) v["error"] = q.error;
  if (!q.note.empty()) v["note"] = q.note;
  core::Value devices = core::Value::list();
  for (const auto& d : q.devices) {
    core::Value dv = core::Value::map();
    dv["name"] = d.name;
    dv["node_type"] = verbsNodeTypeName(d.node_type);
    dv["node_guid"] = verbsGuid(d.node_guid);
    if (!d.error.empty()) {
      dv["error"] = d.error;
      devices.push(std::move(dv));
      continue;
    }
    dv["fw_ver"] = d.fw_ver;
    dv["vendor_id"] = static_cast<int64_t>(d.vendor_id);
    dv["vendor_part_id"] = static_cast<int64_t>(d.vendor_part_id);
    dv["phys_port_cnt"] = d.phys_port_cnt;
    core::Value ports = core::Value::list();
    for (const auto& p : d.ports) {
      core::Value pv = core::Value::map();
      pv["port"] = static_cast<int64_t>(p.port);
      if (!p.error.empty()) {
        pv["error"] = p.error;
        ports.push(std::move(pv));
        continue;
      }
      pv["state"] = verbsPortStateName(p.state);
      pv["phys_state"] = verbsPhysStateName(p.phys_state);
      pv["active_mtu"] = verbsMtuBytes(p.active_mtu);
      pv["max_mtu"] = verbsMtuBytes(p.max_mtu);
      pv["active_width"] = verbsWidthName(p.active_width);
      pv["active_speed"] = verbsSpeedName(p.active_speed);
      pv["rate_gbps"] = verbsRateGbps(p.active_width, p.active_speed);
      pv["link_layer"] = verbsLinkLayerName(p.link_layer);
      pv["lid"] = static_cast<int64_t>(p.lid);
      pv["sm_lid"] = static_cast<int64_t>(p.sm_lid);
      pv["gid_table_len"] = p.gid_table_len;
      pv["gid_query"] = p.gid_query;
      core::Value gids = core::Value::list();
      for (const auto& g : p.gids) {
        core::Value gv = core::Value::map();
        gv["index"] = static_cast<int64_t>(g.index);
        gv["address"] = verbsGidAddress(g.raw);
        if (auto t = verbsGidTypeName(g.type); !t.empty()) gv["type"] = t;
        gids.push(std::move(gv));
      }
      pv["gids"] = std::move(gids);
      ports.push(std::move(pv));
    }
    dv["ports"] = std::move(ports);
    devices.push(std::move(dv));
  }
  v["devices"] = std::move(devices);
  core::Value dl = core::Value::list();
  for (const auto& d : dis) {
    core::Value e = core::Value::map(
        {{"device", d.device}, {"field", d.field}, {"verbs", d.verbs}, {"sysfs", d.sysfs}});
    if (d.port) e["port"] = d.port;
    dl.push(std::move(e));
  }
  v["disagreements"] = std::move(dl);
  core::Value w = core::Value::list();
  for (const auto& line : q.warnings) w.push(line);
  v["warnings"] = std::move(w);
  return v;
}

}  // namespace fabricwatch::facts
