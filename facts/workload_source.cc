#include "facts/workload_source.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

#include "core/snapshot.h"
#include "facts/fact_reader.h"
#include "facts/host_parse.h"
#include "facts/nccl_source.h"
#include "facts/workload_nccl_log.h"
#include "facts/workload_parse.h"
#include "facts/workload_versions.h"
#include "nccl/log_verdict.h"

namespace fabricwatch::facts {
namespace {

// Scans a (possibly large) libc for its version banner in chunks, so that a 2 MiB library
// never sits in memory whole.
std::optional<std::string> scanGlibc(FactReader& r, const std::string& host_path) {
  std::optional<std::string> found;
  scanFile(r, host_path, 16 << 20, [&](std::string_view b) {
    found = findGlibcVersion(b);
    return found.has_value();
  });
  return found;
}

bool isHome(std::string_view name) { return name == "HOME"; }

core::Value readWorkload(FactReader& r, const std::string& pid, const MappedLibraries& libs,
                         WorkloadVersions& versions) {
  std::string dir = "/proc/" + pid;
  core::Value w = core::Value::map();
  w["pid"] = *parseInteger(pid);
  if (auto comm = r.line(dir + "/comm")) w["comm"] = *comm;

  core::Value lib = core::Value::map();
  if (libs.nccl) lib["nccl"] = *libs.nccl;
  if (libs.libfabric) lib["libfabric"] = *libs.libfabric;
  if (libs.nccl_net_plugin) lib["nccl_net_plugin"] = *libs.nccl_net_plugin;
  if (libs.cudart) lib["cudart"] = *libs.cudart;
  w["libraries"] = std::move(lib);

  std::string root = dir + "/root";
  if (libs.libc) {
    if (auto v = scanGlibc(r, root + *libs.libc)) w["glibc_version"] = *v;
  }
  versions.add(r, root, libs, w);
  if (auto t = r.text(dir + "/limits")) {
    if (auto ml = parseMemlock(*t); !ml.isNull()) w["memlock"] = std::move(ml);
  }
  if (auto t = r.text(dir + "/cgroup")) {
    auto id = parseCgroupIdentity(*t);
    if (id.pod_uid) w["pod_uid"] = *id.pod_uid;
    if (id.container_id) w["container_id"] = *id.container_id;
  }

  core::Value settings = core::Value::map();
  if (auto environ = r.text(dir + "/environ")) {
    core::Value env = core::Value::map();
    std::string source = "workload " + pid + " environment";
    std::optional<std::string> conf_file;
    for (auto& [k, v] : parseEnviron(*environ, isFabricVariable)) {
      if (k.rfind("NCCL_", 0) == 0) {
        settings[k] = core::Value::map({{"value", v}, {"source", source}});
      }
      if (k == "NCCL_CONF_FILE") conf_file = v;
      env[k] = v;
    }
    w["env"] = std::move(env);
    addWorkloadNcclLog(r, pid, *environ, w);
    // NCCL reads NCCL_CONF_FILE, or else ~/.nccl.conf, then /etc/nccl.conf; each only sets
    // variables not set yet. The files are the ones in the process's own root file system.
    std::string home = "/root";
    if (auto h = parseEnviron(*environ, isHome); !h.empty()) home = h.front().second;
    std::vector<std::string> files = {conf_file ? *conf_file : home + "/.nccl.conf",
                                      "/etc/nccl.conf"};
    for (const auto& f : files) {
      if (auto t = r.text(root + f)) addSettings(settings, f, parseNcclConf(*t));
    }
  }
  w["nccl"] = std::move(settings);
  return w;
}

}  // namespace

core::Collection WorkloadSource::collect(const core::CollectContext& ctx) {
  core::HostFs fs(ctx.rootfs);
  core::Collection c;
  FactReader r(fs, c);
  std::vector<std::pair<int64_t, std::string>> pids;
  // /proc holds a directory per process: its bound is the largest process count worth reading
  // (a node runs a few thousand), well above the default per-directory bound.
  constexpr size_t kMaxProcEntries = 65536;
  for (const auto& n : r.list("/proc", kMaxProcEntries)) {
    if (n.find_first_not_of("0123456789") != std::string::npos) continue;
    if (auto p = parseInteger(n)) pids.emplace_back(*p, n);
  }
  std::sort(pids.begin(), pids.end());
  core::Value list = core::Value::list();
  for (const auto& [num, pid] : pids) {
    if (list.size() >= kMaxWorkloads) break;
    // A process that exits between the listing and the read is simply gone (ENOENT, or ESRCH
    // from a half-dead process); anything else, such as EACCES without CAP_SYS_PTRACE, is an
    // error, so that "no workloads" is never the silent result of missing permissions.
    auto maps = fs.read("/proc/" + pid + "/maps", 16 << 20);
    if (maps.status == core::HostFs::ReadStatus::kError && maps.error != std::strerror(ESRCH)) {
      r.error("/proc/" + pid + "/maps: " + maps.error);
    }
    if (maps.status != core::HostFs::ReadStatus::kOk) continue;
    MappedLibraries libs = parseMappedLibraries(maps.text);
    if (!libs.nccl && !libs.libfabric) continue;
    list.push(readWorkload(r, pid, libs, versions_));
  }
  versions_.endCollection();
  c.facts["workloads"] = std::move(list);
  return c;
}

void WorkloadSource::renderMetrics(const core::Snapshot& snapshot,
                                   core::MetricFamilies& out) const {
  const core::Value* wl = snapshot.facts.find("workloads");
  if (!wl || !wl->isList()) return;
  auto f = core::gaugeFamily("fabricwatch_workloads",
                             "Processes with libnccl or libfabric mapped (at most 64 reported).");
  core::addSample(f, {}, static_cast<double>(wl->size()));
  out.push_back(std::move(f));

  // Per node, not per process: the jobs' own NCCL verdicts counted by what NCCL chose, so that
  // "a job on this node runs NCCL over sockets" is one bounded series (at most 9 x 4).
  std::map<std::pair<std::string, std::string>, int> verdicts;
  for (const auto& w : wl->asList()) {
    const core::Value* log = w.find("nccl_log");
    if (!log || !log->isMap()) continue;
    const core::Value* t = log->find("inter_node_transport");
    const core::Value* g = log->find("gdr");
    ++verdicts[{nccl::transportLabel(t && t->isString() ? t->asString() : ""),
                nccl::gdrLabel(g && g->isString() ? g->asString() : "")}];
  }
  auto n = core::gaugeFamily(
      "fabricwatch_workload_nccl_logs",
      "Reported workloads whose own NCCL log (NCCL_DEBUG_FILE) was read, by what NCCL chose: "
      "inter_node_transport (ib, roce, efa, ofi, socket, collnet, other, none, unknown) and gdr "
      "(GPUDirect RDMA on, off, partial, unknown).");
  for (const auto& [k, count] : verdicts)
    core::addSample(n, {{"inter_node_transport", k.first}, {"gdr", k.second}}, count);
  if (!verdicts.empty()) out.push_back(std::move(n));
}

}  // namespace fabricwatch::facts
