#include "facts/verbs_source.h"

#include <sys/stat.h>

#include <map>

#include "core/snapshot.h"
#include "facts/verbs_check.h"
#include "facts/verbs_query.h"

namespace fabricwatch::facts {

std::optional<std::string> differentSysfs(const std::string& rootfs) {
  const std::string live = "/sys/class/infiniband";
  std::string root = rootfs == "/" ? live : rootfs + live;
  if (root == live) return std::nullopt;
  struct stat a {
  }, b{};
  bool has_root = ::stat(root.c_str(), &a) == 0, has_live = ::stat(live.c_str(), &b) == 0;
  if (!has_root && !has_live) return std::nullopt;  // no devices on either: nothing differs
  if (has_root && has_live && a.st_dev == b.st_dev && a.st_ino == b.st_ino) return std::nullopt;
  return "libibverbs reads this machine's " + live + ", not the host root's";
}

core::Collection VerbsSource::collect(const core::CollectContext& ctx) {
  core::Collection c;
  core::Value v = core::Value::map();
  if (auto why = differentSysfs(ctx.rootfs)) {
    v["compared"] = false;
    v["reason"] = *why;
    c.facts["verbs"] = std::move(v);
    return c;
  }
  VerbsQuery q = queryVerbs();
  // The rdma source's view, read now; its read errors are the rdma source's to count.
  core::Collection sysfs = sysfs_.collect(ctx);
  const core::Value* rdma = sysfs.facts.findPath("rdma.devices");
  std::vector<Disagreement> dis;
  if (q.listed) dis = crossCheck(q, rdma ? *rdma : core::Value::list());
  v = verbsFacts(q, dis);
  v["compared"] = q.listed;
  if (!q.error.empty()) c.addError(q.error);
  c.facts["verbs"] = std::move(v);
  return c;
}

void VerbsSource::renderMetrics(const core::Snapshot& snapshot, core::MetricFamilies& out) const {
  const core::Value* v = snapshot.facts.find("verbs");
  const core::Value* compared = v ? v->find("compared") : nullptr;
  if (!compared || !compared->isBool() || !compared->asBool()) return;
  auto devices = core::gaugeFamily("fabricwatch_verbs_devices",
                                   "RDMA devices libibverbs lists (0 where the kernel has none).");
  const core::Value* list = v->find("devices");
  core::addSample(devices, {},
                  list && list->isList() ? static_cast<double>(list->asList().size()) : 0);
  out.push_back(std::move(devices));
  auto mtu = core::gaugeFamily("fabricwatch_verbs_port_active_mtu_bytes",
                               "Active MTU of an RDMA port, as libibverbs queries it.");
  if (list && list->isList()) {
    for (const auto& d : list->asList()) {
      const core::Value* ports = d.find("ports");
      const core::Value* name = d.find("name");
      if (!ports || !ports->isList() || !name) continue;
      for (const auto& p : ports->asList()) {
        const core::Value* port = p.find("port");
        const core::Value* m = p.find("active_mtu");
        if (port && m && m->isInt() && m->asInt() > 0)
          core::addSample(mtu,
                          {{"device", name->asString()}, {"port", std::to_string(port->asInt())}},
                          static_cast<double>(m->asInt()));
      }
    }
  }
  if (!mtu.metric.empty()) out.push_back(std::move(mtu));
  auto dis = core::gaugeFamily(
      "fabricwatch_verbs_disagreements",
      "Fields on which libibverbs and sysfs disagree, by field (device, port, state, phys_state, "
      "link_layer, rate, lid, sm_lid, gid, gid_type, fw_ver, node_guid); 0 when they agree.");
  std::map<std::string, int> by_field;
  for (const char* f : {"device", "port", "state", "phys_state", "link_layer", "rate", "lid",
                        "sm_lid", "gid", "gid_type", "fw_ver", "node_guid"})
    by_field[f] = 0;
  if (const core::Value* dl = v->find("disagreements"); dl && dl->isList())
    for (const auto& d : dl->asList())
      if (const core::Value* f = d.find("field");
          f && f->isString() && by_field.count(f->asString()))
        ++by_field[f->asString()];
  for (const auto& [f, n] : by_field) core::addSample(dis, {{"field", f}}, n);
  out.push_back(std::move(dis));
}

}  // namespace fabricwatch::facts
