#include "probes/node/kernel_source.h"

#include "core/host_fs.h"
#include "core/snapshot.h"

namespace fabricwatch::probes::node {

core::Collection KernelSource::collect(const core::CollectContext& ctx) {
  core::HostFs fs(ctx.rootfs);
  core::Collection c;
  core::Value kernel = core::Value::map();
  for (auto [key, file] : {std::pair{"release", "/proc/sys/kernel/osrelease"},
                           std::pair{"hostname", "/proc/sys/kernel/hostname"}}) {
    auto r = fs.read(file, 4096);
    if (r.status == core::HostFs::ReadStatus::kOk) {
      kernel[key] = std::string(core::trim(r.text));
    } else if (r.status == core::HostFs::ReadStatus::kError) {
      c.addError(std::string(file) + ": " + r.error);
    }
  }
  c.facts["kernel"] = std::move(kernel);
  return c;
}

void KernelSource::renderMetrics(const core::Snapshot& snapshot, core::MetricFamilies& out) const {
  const core::Value* release = snapshot.facts.findPath("kernel.release");
  if (!release || !release->isString()) return;
  auto f = core::gaugeFamily("fabricwatch_kernel_info", "Kernel release of the node (constant 1).");
  core::addSample(f, {{"release", release->asString()}}, 1);
  out.push_back(std::move(f));
}

}  // namespace fabricwatch::probes::node
