#include "probes/nccl/nccl_probe_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "core/child_process.h"
#include "core/log.h"
#include "core/snapshot.h"
#include "core/utf8.h"
#include "core/value_format.h"
#include "probes/nccl/gpu_holders.h"
#include "probes/nccl/log_file.h"
#include "probes/nccl/log_parse.h"
#include "probes/nccl/log_verdict.h"
#include "probes/nccl/probe_protocol.h"

extern char** environ;

namespace fabricwatch::probes::nccl {
namespace {

// One heavy probe at a time in this process (the peer probe will take the same lock).
std::mutex& heavyProbeLock() {
  static std::mutex m;
  return m;
}

std::string readLog(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return "";
  std::string out = readLogHeadTail(fd);
  ::close(fd);
  return out;
}

std::vector<std::string> childEnvironment(const NcclProbeOptions& o, const std::string& log) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv = *e;
    // NCCL's log settings are the probe's own; every other variable (NCCL_* from the DaemonSet,
    // LD_LIBRARY_PATH, CUDA_VISIBLE_DEVICES ...) passes through, unless the config sets it.
    std::string_view key = kv.substr(0, kv.find('='));
    if (key.rfind("NCCL_DEBUG", 0) == 0 || o.env.count(std::string(key))) continue;
    env.emplace_back(kv);
  }
  for (const auto& [k, v] : o.env) env.push_back(k + "=" + v);
  env.push_back("NCCL_DEBUG=INFO");
  env.push_back("NCCL_DEBUG_SUBSYS=INIT,NET,GRAPH,ENV,TUNING");
  env.push_back("NCCL_DEBUG_FILE=" + log);
  return env;
}

core::Value holdersValue(const std::vector<GpuHolder>& hs) {
  core::Value list = core::Value::list();
  for (const auto& h : hs)
    list.push(core::Value::map({{"pid", h.pid}, {"comm", h.comm}, {"device", h.device}}));
  return list;
}

}  // namespace

int NcclProbeSource::stateCode(const std::string& s) {
  static const char* kStates[] = {"waiting", "ok",      "skipped", "unavailable",
                                  "failed",  "timeout", "crashed"};
  for (int i = 0; i < 7; ++i) {
    if (s == kStates[i]) return i;
  }
  return -1;
}

core::Collection NcclProbeSource::collect(const core::CollectContext& ctx) {
  core::Collection c;
  core::Value local;
  auto skipped = [&](const std::string& state, const std::string& reason) {
    // A run that did not run keeps the last run's results, with what happened this time.
    core::Value v = last_run_.isMap() ? last_run_ : core::Value::map();
    if (last_run_.isMap()) v["run_state"] = *last_run_.find("state");
    v["state"] = state;
    v["reason"] = reason;
    return v;
  };
  if (first_ && !opts_.run_at_start) {
    first_ = false;
    local = skipped("waiting",
                    "the first run is one interval after start (probe.nccl.run_at_start), so "
                    "that a fleet restarted together does not run NCCL at once");
  } else {
    first_ = false;
    std::unique_lock lock(heavyProbeLock(), std::try_to_lock);
    if (!lock.owns_lock()) {
      local = skipped("skipped", "another NCCL probe of this daemon is running");
    } else {
      GpuScan scan;
      if (opts_.skip_when_busy) {
        GpuScanOptions so;
        so.self = ::getpid();
        so.ignore_comms = opts_.ignore_processes;
        scan = scanGpuHolders(ctx.rootfs, so);
      }
      if (!scan.holders.empty()) {
        const auto& h = scan.holders.front();
        local = skipped("skipped", "the GPUs are in use: " + h.comm + " (pid " +
                                       std::to_string(h.pid) + ") holds " + h.device);
        local["gpu_holders"] = holdersValue(scan.holders);
      } else {
        local = run(ctx);
        last_run_ = local;
        local["run_state"] = *local.find("state");
      }
    }
  }
  c.facts.setPath("probes.nccl.local", std::move(local));
  return c;
}

core::Value NcclProbeSource::run(const core::CollectContext&) {
  auto started = std::chrono::system_clock::now();
  core::Value v = core::Value::map();
  v["last_run"] = core::rfc3339(started);
  v["last_run_timestamp_seconds"] =
      std::chrono::duration_cast<std::chrono::seconds>(started.time_since_epoch()).count();

  std::string dir_tmpl =
      (opts_.log_dir.empty() ? std::filesystem::temp_directory_path().string() : opts_.log_dir) +
      "/fabricwatch-nccl-XXXXXX";
  if (!::mkdtemp(dir_tmpl.data())) {
    v["state"] = "failed";
    v["reason"] = "cannot create the log directory " + dir_tmpl + ": " + std::strerror(errno);
    return v;
  }
  std::string log_path = dir_tmpl + "/nccl.log";

  ProbeRequest req;
  req.sizes = opts_.sizes;
  req.warmup = opts_.warmup;
  req.iterations = opts_.iterations;
  req.nccl_library = opts_.nccl_library;
  if (!opts_.cudart_library.empty()) req.cudart_libraries = {opts_.cudart_library};
  req.parent = ::getpid();

  core::ChildSpec spec;
  spec.exe = opts_.exe;
  spec.argv = {"fabricwatch", std::string(kProbeSubcommand)};
  spec.env = childEnvironment(opts_, log_path);
  spec.input = encodeRequest(req);
  spec.timeout = opts_.timeout;
  core::ChildResult child = core::runChild(spec);
  ProbeResult res = parseResult(child.result);

  std::string last_output;
  if (!child.output.empty()) {
    std::string_view o = child.output;
    while (!o.empty() && o.back() == '\n') o.remove_suffix(1);
    last_output = core::sanitizeUtf8(
        o.substr(o.rfind('\n') == std::string_view::npos ? 0 : o.rfind('\n') + 1), 300);
  }
  switch (child.outcome) {
    case core::ChildResult::Outcome::kExited:
      if (!res.state.empty()) {
        v["state"] = res.state;
        if (!res.reason.empty()) v["reason"] = res.reason;
      } else {
        v["state"] = "failed";
        v["reason"] = "the probe process " + child.describe() + " without a result" +
                      (last_output.empty() ? "" : ": " + last_output);
      }
      break;
    case core::ChildResult::Outcome::kSignaled:
      v["state"] = "crashed";
      v["reason"] = "the probe process was " + child.describe() +
                    (last_output.empty() ? "" : "; its last output: " + last_output);
      break;
    case core::ChildResult::Outcome::kTimedOut:
      v["state"] = "timeout";
      v["reason"] = "the probe process " + child.describe() + " (NCCL hung or was too slow)";
      break;
    case core::ChildResult::Outcome::kSpawnFailed:
      v["state"] = "failed";
      v["reason"] = "the probe process " + child.describe();
      break;
  }
  v["duration_seconds"] = child.seconds;
  if (!res.nccl_version.empty()) v["nccl_version"] = res.nccl_version;
  if (!res.cuda_driver_version.empty()) v["cuda_driver_version"] = res.cuda_driver_version;
  if (!res.cuda_runtime_version.empty()) v["cuda_runtime_version"] = res.cuda_runtime_version;
  if (res.gpus >= 0) v["gpus"] = res.gpus;
  if (res.ranks > 0) v["ranks"] = res.ranks;
  core::Value env = core::Value::map();
  for (const auto& [k, val] : opts_.env) env[k] = core::sanitizeUtf8(val, 200);
  v["env"] = std::move(env);

  // What NCCL itself said about the run: its choices, and the reason of a failure.
  std::string text = readLog(log_path);
  LogSummary summary = parseNcclLog(text);
  if (!text.empty()) v["log"] = factsValue(summary, judge(summary));
  std::error_code ec;
  std::filesystem::remove_all(dir_tmpl, ec);

  core::Value results = core::Value::list();
  for (const auto& r : res.results) {
    core::Value m = core::Value::map({{"size_bytes", r.bytes},
                                      {"time_us", r.time_us},
                                      {"algbw_gbps", r.algbw_gbps},
                                      {"busbw_gbps", r.busbw_gbps}});
    if (auto it = summary.allreduce_algorithms.find(r.bytes);
        it != summary.allreduce_algorithms.end())
      m["algorithm"] = it->second;
    results.push(std::move(m));
  }
  v["results"] = std::move(results);
  std::string state = v.find("state")->asString();
  if (state != "ok" && state != "unavailable")
    core::log::warn(
        "nccl_probe", "NCCL probe did not succeed",
        {{"state", state}, {"reason", v.find("reason") ? v.find("reason")->asString() : ""}});
  return v;
}

void NcclProbeSource::renderMetrics(const core::Snapshot& snapshot,
                                    core::MetricFamilies& out) const {
  const core::Value* local = snapshot.facts.findPath("probes.nccl.local");
  if (!local || !local->isMap()) return;
  const core::LabelPairs probe = {{"probe", "local"}};
  auto num = [&](std::string_view key) -> const core::Value* {
    const core::Value* v = local->find(key);
    return v && v->isNumber() ? v : nullptr;
  };
  if (const auto* s = local->find("state"); s && s->isString()) {
    auto f = core::gaugeFamily("fabricwatch_nccl_probe_state",
                               "The NCCL probe's last attempt: 0 waiting, 1 ok, 2 skipped (GPUs "
                               "busy), 3 unavailable (no NCCL, CUDA or GPU), 4 failed, 5 timeout, "
                               "6 crashed.");
    core::addSample(f, probe, stateCode(s->asString()));
    out.push_back(std::move(f));
  }
  if (const auto* t = num("last_run_timestamp_seconds")) {
    auto f = core::gaugeFamily("fabricwatch_nccl_probe_last_run_timestamp_seconds",
                               "When the last NCCL probe run started (Unix time).");
    core::addSample(f, probe, t->asDouble());
    out.push_back(std::move(f));
  }
  if (const auto* d = num("duration_seconds")) {
    auto f = core::gaugeFamily("fabricwatch_nccl_probe_duration_seconds",
                               "How long the last NCCL probe run took, child process included.");
    core::addSample(f, probe, d->asDouble());
    out.push_back(std::move(f));
  }
  const core::Value* results = local->find("results");
  if (!results || !results->isList() || results->size() == 0) return;
  auto bus = core::gaugeFamily("fabricwatch_nccl_probe_busbw_bytes_per_second",
                               "All-reduce bus bandwidth of the last NCCL probe run, per message "
                               "size: algbw x 2(n-1)/n as nccl-tests reports it.");
  auto alg = core::gaugeFamily("fabricwatch_nccl_probe_algbw_bytes_per_second",
                               "All-reduce algorithm bandwidth (bytes / time) of the last NCCL "
                               "probe run, per message size.");
  for (const auto& r : results->asList()) {
    const core::Value* size = r.find("size_bytes");
    const core::Value* b = r.find("busbw_gbps");
    const core::Value* a = r.find("algbw_gbps");
    if (!size || !size->isInt() || !b || !a || !b->isNumber() || !a->isNumber()) continue;
    core::LabelPairs l = {{"probe", "local"}, {"size_bytes", std::to_string(size->asInt())}};
    core::addSample(bus, l, b->asDouble() * 1e9);
    core::addSample(alg, l, a->asDouble() * 1e9);
  }
  out.push_back(std::move(bus));
  out.push_back(std::move(alg));
}

}  // namespace fabricwatch::probes::nccl
