#include "facts/kernel_source.h"

#include <algorithm>

#include "core/host_fs.h"
#include "core/snapshot.h"
#include "facts/fact_reader.h"
#include "facts/host_parse.h"

namespace fabricwatch::facts {

const std::vector<std::string_view>& watchedModules() {
  static const std::vector<std::string_view> kModules = {
      "nvidia",    "nvidia_peermem", "nv_peer_mem", "gdrdrv", "ib_core", "ib_uverbs", "rdma_ucm",
      "mlx5_core", "mlx5_ib",        "efa",         "erdma",  "irdma",   "bnxt_re"};
  return kModules;
}

namespace {

// How the IOMMU treats DMA: each group's type (/sys/kernel/iommu_groups/N/type, kernels 5.11
// and later: "identity" in passthrough, "DMA" or "DMA-FQ" when it translates, "blocked",
// "unmanaged" for a group handed to VFIO), counted by type, and the IOMMU parameters of the
// kernel command line. The directory exists on every kernel built with IOMMU support, empty
// where there is no IOMMU (most virtual machines); null without it, so that the fact is absent.
core::Value readIommu(FactReader& r) {
  DirReader groups(r, "/sys/kernel/iommu_groups");
  if (!groups.isOpen()) return nullptr;
  core::Value iommu = core::Value::map();
  int64_t count = 0;
  core::Value types = core::Value::map();
  for (const auto& n : groups.list()) {
    if (n.empty() || n.find_first_not_of("0123456789") != std::string::npos) continue;
    ++count;
    if (auto type = groups.line(n + "/type")) {
      core::Value& c = types[*type];
      c = (c.isInt() ? c.asInt() : 0) + 1;
    }
  }
  iommu["groups"] = count;
  iommu["types"] = std::move(types);
  if (auto cmdline = r.line("/proc/cmdline")) {
    core::Value params = core::Value::list();
    for (auto p : parseIommuParameters(*cmdline)) params.push(std::string(p));
    iommu["cmdline"] = std::move(params);
  }
  return iommu;
}

}  // namespace

core::Collection KernelSource::collect(const core::CollectContext& ctx) {
  core::HostFs fs(ctx.rootfs);
  core::Collection c;
  FactReader r(fs, c);
  core::Value kernel = core::Value::map();
  for (auto [key, file] : {std::pair{"release", "/proc/sys/kernel/osrelease"},
                           std::pair{"hostname", "/proc/sys/kernel/hostname"}}) {
    if (auto v = r.line(file)) kernel[key] = *v;
  }
  std::vector<std::string> loaded;
  if (auto t = r.text("/proc/modules")) {
    loaded = parseModules(*t);
    core::Value mods = core::Value::list();
    for (const auto& m : loaded) mods.push(m);
    kernel["modules"] = std::move(mods);
    // The directory is created by the peer-memory patch that MLNX_OFED and some distribution
    // kernels carry; its absence on a host whose modules are readable is a fact too.
    kernel["memory_peers"] = r.exists("/sys/kernel/mm/memory_peers");
  }
  // A module built into the kernel is not in /proc/modules; /sys/module has a directory for it
  // all the same, without the initstate that every loadable module has.
  if (DirReader sys_module(r, "/sys/module"); sys_module.isOpen()) {
    core::Value builtin = core::Value::list();
    for (std::string_view m : watchedModules()) {
      std::string name(m);
      if (std::find(loaded.begin(), loaded.end(), name) != loaded.end()) continue;
      if (sys_module.exists(name) && !sys_module.exists(name + "/initstate")) builtin.push(name);
    }
    kernel["builtin_modules"] = std::move(builtin);
  }
  // ib_uverbs creates this class when it starts (loaded or built in), and a uverbsN in it for
  // each RDMA device a process can open.
  if (DirReader verbs(r, "/sys/class/infiniband_verbs"); verbs.isOpen()) {
    std::vector<std::string> names;
    for (auto& n : verbs.list())
      if (n.rfind("uverbs", 0) == 0) names.push_back(std::move(n));
    std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
      return a.size() != b.size() ? a.size() < b.size() : a < b;  // uverbs2 before uverbs10
    });
    core::Value list = core::Value::list();
    for (auto& n : names) list.push(std::move(n));
    kernel["uverbs_devices"] = std::move(list);
  }
  if (core::Value iommu = readIommu(r); !iommu.isNull()) kernel["iommu"] = std::move(iommu);
  if (kernel.size() == 0) {
    // Nothing of the kernel's is readable (a host root without /proc, such as a tree of sysfs
    // testdata): no fact to report, and an empty kernel object would read as "no module is
    // loaded". The source fails, and says why.
    c.failed = true;
    c.errors.push_back(
        "no kernel facts in the host root: /proc/sys/kernel, /proc/modules, /sys/module and "
        "/sys/class/infiniband_verbs are all missing");
    return c;
  }
  c.facts["kernel"] = std::move(kernel);
  return c;
}

void KernelSource::renderMetrics(const core::Snapshot& snapshot, core::MetricFamilies& out) const {
  if (const core::Value* release = snapshot.facts.findPath("kernel.release");
      release && release->isString()) {
    auto f =
        core::gaugeFamily("fabricwatch_kernel_info", "Kernel release of the node (constant 1).");
    core::addSample(f, {{"release", release->asString()}}, 1);
    out.push_back(std::move(f));
  }
  if (const core::Value* mods = snapshot.facts.findPath("kernel.modules"); mods && mods->isList()) {
    auto f = core::gaugeFamily("fabricwatch_kernel_module_loaded",
                               "Whether a kernel module that matters for RDMA or GPUDirect is "
                               "loaded or built into the kernel (1) or not (0).");
    const core::Value* builtin = snapshot.facts.findPath("kernel.builtin_modules");
    auto listed = [&](const core::Value* list, std::string_view m) {
      return list && list->isList() &&
             std::any_of(list->asList().begin(), list->asList().end(),
                         [&](const core::Value& v) { return v.isString() && v.asString() == m; });
    };
    for (std::string_view m : watchedModules()) {
      core::addSample(f, {{"module", std::string(m)}}, listed(mods, m) || listed(builtin, m));
    }
    out.push_back(std::move(f));
  }
  if (const core::Value* mp = snapshot.facts.findPath("kernel.memory_peers"); mp && mp->isBool()) {
    auto f = core::gaugeFamily("fabricwatch_kernel_memory_peers",
                               "1 when /sys/kernel/mm/memory_peers exists (peer-memory support).");
    core::addSample(f, {}, mp->asBool());
    out.push_back(std::move(f));
  }
}

}  // namespace fabricwatch::facts
