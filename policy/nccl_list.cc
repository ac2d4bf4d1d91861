#include "policy/nccl_list.h"

#include <cstdlib>

namespace fabricwatch::policy {

NcclList parseNcclList(std::string_view v) {
  NcclList out;
  if (!v.empty() && v.front() == '^') {
    out.exclude = true;
    v.remove_prefix(1);
  }
  if (!v.empty() && v.front() == '=') {
    out.exact = true;
    v.remove_prefix(1);
  }
  size_t start = 0;
  while (start <= v.size()) {
    size_t comma = v.find(',', start);
    std::string_view item =
        v.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    NcclListEntry e;
    if (auto colon = item.find(':'); colon != std::string_view::npos) {
      e.name = std::string(item.substr(0, colon));
      e.port = std::atoi(std::string(item.substr(colon + 1)).c_str());
    } else {
      e.name = std::string(item);
    }
    if (!e.name.empty()) out.entries.push_back(std::move(e));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

bool ncclEntryMatches(const NcclList& list, const NcclListEntry& e, std::string_view name,
                      int port) {
  bool name_ok = list.exact ? name == e.name : name.substr(0, e.name.size()) == e.name;
  bool port_ok = e.port == -1 || port == -1 || e.port == port;
  return name_ok && port_ok;
}

bool ncclSelects(const NcclList& list, std::string_view name, int port) {
  bool hit = list.entries.empty();  // NCCL: an empty user list matches everything
  for (const auto& e : list.entries) hit = hit || ncclEntryMatches(list, e, name, port);
  return hit != list.exclude;
}

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
  if (const auto* devs = listAt(facts, "rdma.devices")) {
    for (const auto& d : *devs) {
      std::string dev = stringField(d, "name");
      const core::Value* dp = d.find("ports");
      if (dev.empty() || !dp || !dp->isList()) continue;
      for (const auto& p : dp->asList()) {
        const core::Value* num = p.find("port");
        int port = num && num->isInt() ? static_cast<int>(num->asInt()) : -1;
        all.push_back({dev, port});
        if (!ncclSelects(list, dev, port)) continue;
        matched.push(dev + ":" + std::to_string(port));
        core::Value entry = p;
        entry["device"] = dev;
        ports.push(std::move(entry));
      }
    }
  }
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

void annotateSettings(core::Value* settings, const core::Value& facts) {
  if (!settings || !settings->isMap()) return;
  auto& m = settings->asMap();
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
