#include "policy/nccl_facts.h"

#include <charconv>
#include <cstdlib>

namespace fabricwatch::policy {

namespace {

std::string entryText(const NcclListEntry& e) {
  return e.port < 0 ? e.name : e.name + ":" + std::to_string(e.port);
}

const core::Value::List* listAt(const core::Value& facts, std::string_view path) {
  const core::Value* v = facts.findPath(path);
  return v && v->isList() ? &v->asList() : nullptr;
}

std::string stringField(const core::Value& v, std::string_view key) {
  const core::Value* f = v.find(key);
  return f && f->isString() ? f->asString() : std::string();
}

// Calls fn(device name, device, port, port number) for every port of every named RDMA device.
template <typename Fn>
void forEachRdmaPort(const core::Value& facts, Fn fn) {
  const auto* devs = listAt(facts, "rdma.devices");
  if (!devs) return;
  for (const auto& d : *devs) {
    std::string dev = stringField(d, "name");
    const core::Value* dp = d.find("ports");
    if (dev.empty() || !dp || !dp->isList()) continue;
    for (const auto& p : dp->asList()) {
      const core::Value* num = p.find("port");
      fn(dev, d, p, num && num->isInt() ? static_cast<int>(num->asInt()) : -1);
    }
  }
}

void annotateIfname(core::Value& setting, const core::Value& facts) {
  const core::Value* value = setting.find("value");
  if (!value || !value->isString()) return;
  NcclList list = parseNcclList(value->asString());
  core::Value matched = core::Value::list(), up = core::Value::list(),
              unmatched = core::Value::list();
  std::vector<std::string> names;
  if (const auto* ifs = listAt(facts, "net.interfaces")) {
    for (const auto& i : *ifs) {
      std::string name = stringField(i, "name");
      if (name.empty()) continue;
      names.push_back(name);
      if (!ncclSelects(list, name)) continue;
      matched.push(name);
      if (stringField(i, "operstate") == "up") up.push(name);
    }
  }
  if (!list.exclude) {
    for (const auto& e : list.entries) {
      bool any = false;
      for (const auto& n : names) any = any || ncclEntryMatches(list, e, n, -1);
      if (!any) unmatched.push(entryText(e));
    }
  }
  setting["matched"] = std::move(matched);
  setting["matched_up"] = std::move(up);
  setting["unmatched"] = std::move(unmatched);
}

void annotateHca(core::Value& setting, const core::Value& facts) {
  const core::Value* value = setting.find("value");
  if (!value || !value->isString()) return;
  NcclList list = parseNcclList(value->asString());
  core::Value matched = core::Value::list(), ports = core::Value::list(),
              unmatched = core::Value::list();
  struct Named {
    std::string device;
    int port;
  };
  std::vector<Named> all;
  forEachRdmaPort(facts,
                  [&](const std::string& dev, const core::Value&, const core::Value& p, int port) {
                    all.push_back({dev, port});
                    if (!ncclSelects(list, dev, port)) return;
                    matched.push(dev + ":" + std::to_string(port));
                    core::Value entry = p;
                    entry["device"] = dev;
                    ports.push(std::move(entry));
                  });
  if (!list.exclude) {
    for (const auto& e : list.entries) {
      bool any = false;
      for (const auto& n : all) any = any || ncclEntryMatches(list, e, n.device, n.port);
      if (!any) unmatched.push(entryText(e));
    }
  }
  setting["matched"] = std::move(matched);
  setting["ports"] = std::move(ports);
  setting["unmatched"] = std::move(unmatched);
}

// NCCL_IB_GID_INDEX against the ports NCCL would open in the same scope: those NCCL_IB_HCA
// selects (every port when it is unset) that are ACTIVE, as NCCL skips the others. Adds `index`
// (when the value is an integer; negative means NCCL picks the GID itself, 2.21 and later) and
// `ports`: per port its device, number, link layer, device node type and, when the table
// entry at the index is in use, `gid` (index, address, type, ndev).
void annotateGidIndex(core::Value& setting, const core::Value* hca, const core::Value& facts) {
  const core::Value* value = setting.find("value");
  if (!value || !value->isString()) return;
  std::string_view text = value->asString();
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  int64_t index = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), index);
  bool numeric = ec == std::errc() && end == text.data() + text.size() && !text.empty();
  if (numeric) setting["index"] = index;
  const core::Value* hca_value = hca ? hca->find("value") : nullptr;
  NcclList list = parseNcclList(hca_value && hca_value->isString() ? hca_value->asString() : "");
  core::Value ports = core::Value::list();
  forEachRdmaPort(
      facts, [&](const std::string& dev, const core::Value& d, const core::Value& p, int port) {
        if (!ncclSelects(list, dev, port) || stringField(p, "state") != "ACTIVE") return;
        core::Value entry = core::Value::map();
        entry["device"] = dev;
        entry["port"] = port;
        if (const auto* ll = p.find("link_layer")) entry["link_layer"] = *ll;
        if (const auto* nt = d.find("node_type")) entry["node_type"] = *nt;
        const core::Value* gids = p.find("gids");
        if (numeric && gids && gids->isList()) {
          for (const auto& g : gids->asList()) {
            const core::Value* i = g.find("index");
            if (i && i->isInt() && i->asInt() == index) entry["gid"] = g;
          }
        }
        ports.push(std::move(entry));
      });
  setting["ports"] = std::move(ports);
}

void annotateSettings(core::Value* settings, const core::Value& facts) {
  if (!settings || !settings->isMap()) return;
  auto& m = settings->asMap();
  if (auto it = m.find("NCCL_IB_GID_INDEX"); it != m.end() && it->second.isMap()) {
    auto hca = m.find("NCCL_IB_HCA");
    annotateGidIndex(it->second, hca == m.end() ? nullptr : &hca->second, facts);
  }
  if (auto it = m.find("NCCL_SOCKET_IFNAME"); it != m.end() && it->second.isMap())
    annotateIfname(it->second, facts);
  if (auto it = m.find("NCCL_IB_HCA"); it != m.end() && it->second.isMap())
    annotateHca(it->second, facts);
}

}  // namespace

void annotateNccl(core::Value& facts) {
  if (!facts.isMap()) return;
  // Annotations read net and rdma and write under nccl and workloads only: map nodes are
  // stable, so reading through `view` while writing elsewhere is safe.
  const core::Value& view = facts;
  auto& m = facts.asMap();
  if (auto it = m.find("nccl"); it != m.end() && it->second.isMap()) {
    auto& nm = it->second.asMap();
    if (auto s = nm.find("settings"); s != nm.end()) annotateSettings(&s->second, view);
  }
  if (auto it = m.find("workloads"); it != m.end() && it->second.isList()) {
    for (auto& w : it->second.asList()) {
      if (!w.isMap()) continue;
      auto& wm = w.asMap();
      if (auto s = wm.find("nccl"); s != wm.end()) annotateSettings(&s->second, view);
    }
  }
}

void prepareFacts(core::Value& facts, const std::string& resource_group) {
  if (!facts.isMap()) facts = core::Value::map();
  facts["resource_group"] = resource_group;
  annotateNccl(facts);
}

}  // namespace fabricwatch::policy
