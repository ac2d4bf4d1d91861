#include "facts/memory_source.h"

#include <limits>

#include "core/snapshot.h"
#include "facts/fact_reader.h"
#include "facts/host_parse.h"

namespace fabricwatch::facts {

core::Collection MemorySource::collect(const core::CollectContext& ctx) {
  core::HostFs fs(ctx.rootfs);
  core::Collection c;
  FactReader r(fs, c);
  core::Value memory = core::Value::map();
  core::Value huge = core::Value::map();
  std::map<std::string, uint64_t, std::less<>> mi;
  if (auto t = r.text("/proc/meminfo")) mi = parseMeminfo(*t);
  if (auto it = mi.find("MemTotal"); it != mi.end()) memory["mem_total_bytes"] = it->second;

  constexpr std::string_view kDir = "/sys/kernel/mm/hugepages";
  for (const auto& entry : r.list(kDir)) {
    // "hugepages-2048kB"
    constexpr std::string_view kPrefix = "hugepages-";
    if (entry.rfind(kPrefix, 0) != 0 || entry.size() < kPrefix.size() + 3) continue;
    std::string size = entry.substr(kPrefix.size());
    auto kb = parseInteger(std::string_view(size).substr(0, size.size() - 2));
    if (!kb || size.substr(size.size() - 2) != "kB") continue;
    core::Value h = core::Value::map();
    h["size_bytes"] = *kb * 1024;
    std::string dir = std::string(kDir) + "/" + entry + "/";
    for (auto [key, file] :
         {std::pair{"total", "nr_hugepages"}, std::pair{"free", "free_hugepages"},
          std::pair{"reserved", "resv_hugepages"}, std::pair{"surplus", "surplus_hugepages"}}) {
      if (auto v = r.integer(dir + file)) h[key] = *v;
    }
    huge[size] = std::move(h);
  }
  // Without sysfs (old kernels, restricted mounts) /proc/meminfo still has the default size.
  if (huge.size() == 0) {
    if (auto sz = mi.find("Hugepagesize"); sz != mi.end()) {
      core::Value h = core::Value::map();
      h["size_bytes"] = sz->second;
      for (auto [key, name] :
           {std::pair{"total", "HugePages_Total"}, std::pair{"free", "HugePages_Free"},
            std::pair{"reserved", "HugePages_Rsvd"}, std::pair{"surplus", "HugePages_Surp"}}) {
        if (auto it = mi.find(name); it != mi.end()) h[key] = it->second;
      }
      huge[std::to_string(sz->second / 1024) + "kB"] = std::move(h);
    }
  }
  if (huge.size() > 0) memory["hugepages"] = std::move(huge);
  c.facts["memory"] = std::move(memory);

  if (auto t = r.text("/proc/self/limits")) {
    core::Value ml = parseMemlock(*t);
    if (ml.isNull()) {
      r.error("/proc/self/limits: no \"Max locked memory\" line");
    } else {
      c.facts["limits"] = core::Value::map({{"memlock", std::move(ml)}});
    }
  }
  return c;
}

void MemorySource::renderMetrics(const core::Snapshot& snapshot, core::MetricFamilies& out) const {
  if (const auto* huge = snapshot.facts.findPath("memory.hugepages"); huge && huge->isMap()) {
    auto f = core::gaugeFamily("fabricwatch_memory_hugepages",
                               "Huge pages of one size, by state: total, free, reserved, surplus.");
    for (const auto& [size, h] : huge->asMap()) {
      const auto* bytes = h.find("size_bytes");
      if (!bytes) continue;
      for (const char* state : {"total", "free", "reserved", "surplus"}) {
        if (const auto* v = h.find(state)) {
          core::addSample(f, {{"size_bytes", std::to_string(bytes->asInt())}, {"state", state}},
                          v->asDouble());
        }
      }
    }
    if (!f.metric.empty()) out.push_back(std::move(f));
  }
  if (const auto* ml = snapshot.facts.findPath("limits.memlock"); ml && ml->isMap()) {
    auto f = core::gaugeFamily("fabricwatch_memlock_limit_bytes",
                               "RLIMIT_MEMLOCK of the fabricwatch process, soft and hard; +Inf "
                               "when unlimited.");
    constexpr double kInf = std::numeric_limits<double>::infinity();
    for (auto [limit, bytes, unl] : {std::tuple{"soft", "soft_bytes", "unlimited"},
                                     std::tuple{"hard", "hard_bytes", "hard_unlimited"}}) {
      const auto *b = ml->find(bytes), *u = ml->find(unl);
      if (u && u->isBool() && u->asBool()) {
        core::addSample(f, {{"limit", limit}}, kInf);
      } else if (b) {
        core::addSample(f, {{"limit", limit}}, b->asDouble());
      }
    }
    if (!f.metric.empty()) out.push_back(std::move(f));
  }
}

}  // namespace fabricwatch::facts
