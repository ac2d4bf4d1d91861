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

core::Collection KernelSource::collect(const core::CollectContext& ctx) {
  core::HostFs fs(ctx.rootfs);
  core::Collection c;
  FactReader r(fs, c);
  core::Value kernel = core::Value::map();
  for (auto [key, file] : {std::pair{"release", "/proc/sys/kernel/osrelease"},
                           std::pair{"hostname", "/proc/sys/kernel/hostname"}}) {
    if (auto v = r.line(file)) kernel[key] = *v;
  }
  if (auto t = r.text("/proc/modules")) {
    core::Value mods = core::Value::list();
    for (auto& m : parseModules(*t)) mods.push(std::move(m));
    kernel["modules"] = std::move(mods);
    // The directory is created by the peer-memory patch that MLNX_OFED and some distribution
    // kernels carry; its absence on a host whose modules are readable is a fact too.
    kernel["memory_peers"] = r.exists("/sys/kernel/mm/memory_peers");
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
                               "loaded (1) or not (0).");
    for (std::string_view m : watchedModules()) {
      bool loaded = std::any_of(mods->asList().begin(), mods->asList().end(),
                                [&](const core::Value& v) { return v.asString() == m; });
      core::addSample(f, {{"module", std::string(m)}}, loaded);
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
