#include "probes/kinds/nccl/probe_run.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "core/child_process.h"
#include "core/own_environment.h"
#include "core/utf8.h"
#include "core/value_format.h"
#include "nccl/log_file.h"

extern char** environ;

namespace fabricwatch::probes::nccl {
namespace {

std::string readLog(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return "";
  std::string out = fabricwatch::nccl::readLogHeadTail(fd);
  ::close(fd);
  return out;
}

std::string lastLine(const std::string& output) {
  std::string_view o = output;
  while (!o.empty() && o.back() == '\n') o.remove_suffix(1);
  size_t nl = o.rfind('\n');
  return core::sanitizeUtf8(o.substr(nl == std::string_view::npos ? 0 : nl + 1), 300);
}

}  // namespace

std::vector<std::string> childEnvironment(const RunSettings& s, const std::string& log) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv = *e;
    // NCCL's log settings are the probe's own; every other variable (NCCL_* from the DaemonSet,
    // LD_LIBRARY_PATH, CUDA_VISIBLE_DEVICES ...) passes through, unless the config sets it or
    // it is the daemon's own (the fabric probe's provider sizes, core/own_environment.h): the
    // child stands in for a job, which would not have them.
    std::string_view key = kv.substr(0, kv.find('='));
    if (key.rfind("NCCL_DEBUG", 0) == 0 || s.env.count(std::string(key)) ||
        core::isOwnVariable(key))
      continue;
    env.emplace_back(kv);
  }
  for (const auto& [k, v] : s.env) env.push_back(k + "=" + v);
  env.push_back("NCCL_DEBUG=INFO");
  env.push_back("NCCL_DEBUG_SUBSYS=INIT,NET,GRAPH,ENV,TUNING");
  env.push_back("NCCL_DEBUG_FILE=" + log);
  return env;
}

RunSettings runSettings(const NcclConfig& c) {
  RunSettings s;
  s.timeout = c.timeout;
  s.sizes = c.sizes;
  s.warmup = c.warmup;
  s.iterations = c.iterations;
  s.nccl_library = c.nccl_library;
  s.cudart_library = c.cudart_library;
  s.env = c.env;
  s.log_dir = c.log_dir;
  s.skip_when_busy = c.skip_when_busy;
  s.ignore_processes = c.ignore_processes;
  return s;
}

ChildRequest baseRequest(const RunSettings& s) {
  ChildRequest req;
  req.sizes = s.sizes;
  req.warmup = s.warmup;
  req.iterations = s.iterations;
  req.nccl_library = s.nccl_library;
  if (!s.cudart_library.empty()) req.cudart_libraries = {s.cudart_library};
  req.parent = ::getpid();
  return req;
}

RunOutcome runProbe(const RunSettings& s, const ChildRequest& req, const RunHooks& hooks) {
  RunOutcome o;
  o.started = std::chrono::system_clock::now();
  std::string dir =
      (s.log_dir.empty() ? std::filesystem::temp_directory_path().string() : s.log_dir) +
      "/fabricwatch-nccl-XXXXXX";
  if (!::mkdtemp(dir.data())) {
    o.state = "failed";
    o.reason = "cannot create the log directory " + dir + ": " + std::strerror(errno);
    return o;
  }
  std::string log_path = dir + "/nccl.log";

  core::ChildSpec spec;
  spec.exe = s.exe;
  spec.argv = {"fabricwatch", std::string(kProbeSubcommand)};
  spec.env = childEnvironment(s, log_path);
  spec.input = encodeRequest(req);
  spec.timeout = hooks.timeout.count() > 0 ? hooks.timeout : s.timeout;
  spec.cancel = hooks.cancel;
  if (hooks.on_unique_id) {
    spec.on_result_line = [&](std::string_view line) {
      constexpr std::string_view kKey = "unique_id=";
      if (line.substr(0, kKey.size()) != kKey) return;
      ChildResult r = parseResult(line);  // validates it: 256 hex digits
      if (!r.unique_id.empty()) hooks.on_unique_id(r.unique_id);
    };
  }
  core::ChildResult child = core::runChild(spec);
  o.child = parseResult(child.result);
  o.seconds = child.seconds;

  std::string last_output = lastLine(child.output);
  switch (child.outcome) {
    case core::ChildResult::Outcome::kExited:
      if (!o.child.state.empty()) {
        o.state = o.child.state;
        o.reason = o.child.reason;
      } else {
        o.state = "failed";
        o.reason = "the probe process " + child.describe() + " without a result" +
                   (last_output.empty() ? "" : ": " + last_output);
      }
      break;
    case core::ChildResult::Outcome::kSignaled:
      o.state = "crashed";
      o.reason = "the probe process was " + child.describe() +
                 (last_output.empty() ? "" : "; its last output: " + last_output);
      break;
    case core::ChildResult::Outcome::kTimedOut:
      o.state = "timeout";
      o.reason = "the probe process " + child.describe() + " (NCCL hung or was too slow)";
      break;
    case core::ChildResult::Outcome::kCancelled:
      o.state = "cancelled";
      o.reason = "the probe process was " + child.describe();
      break;
    case core::ChildResult::Outcome::kSpawnFailed:
      o.state = "failed";
      o.reason = "the probe process " + child.describe();
      break;
  }

  // What NCCL itself said about the run: its choices, and the reason of a failure.
  std::string text = readLog(log_path);
  if (!text.empty()) {
    o.has_log = true;
    o.log = fabricwatch::nccl::parseNcclLog(text);
    o.verdict = judge(o.log);
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return o;
}

core::Value runFacts(const RunOutcome& o, const std::map<std::string, std::string>& env) {
  core::Value v = core::Value::map();
  v["last_run"] = core::rfc3339(o.started);
  v["last_run_timestamp_seconds"] =
      std::chrono::duration_cast<std::chrono::seconds>(o.started.time_since_epoch()).count();
  v["state"] = o.state;
  if (!o.reason.empty()) v["reason"] = o.reason;
  v["duration_seconds"] = o.seconds;
  const ChildResult& r = o.child;
  if (!r.nccl_version.empty()) v["nccl_version"] = r.nccl_version;
  if (!r.cuda_driver_version.empty()) v["cuda_driver_version"] = r.cuda_driver_version;
  if (!r.cuda_runtime_version.empty()) v["cuda_runtime_version"] = r.cuda_runtime_version;
  if (r.gpus >= 0) v["gpus"] = r.gpus;
  if (r.ranks > 0) v["ranks"] = r.ranks;
  if (r.device >= 0) v["device"] = r.device;
  core::Value ev = core::Value::map();
  for (const auto& [k, val] : env) ev[k] = core::sanitizeUtf8(val, 200);
  v["env"] = std::move(ev);
  if (o.has_log) v["log"] = factsValue(o.log, o.verdict);
  core::Value results = core::Value::list();
  for (const auto& s : r.results) {
    core::Value m = core::Value::map({{"size_bytes", s.bytes},
                                      {"time_us", s.time_us},
                                      {"algbw_gbps", s.algbw_gbps},
                                      {"busbw_gbps", s.busbw_gbps}});
    if (auto it = o.log.allreduce_algorithms.find(s.bytes); it != o.log.allreduce_algorithms.end())
      m["algorithm"] = it->second;
    results.push(std::move(m));
  }
  v["results"] = std::move(results);
  return v;
}

GpuScan scanForBusyGpus(const RunSettings& s, const std::string& rootfs) {
  if (!s.skip_when_busy) return {};
  return gpu::scanForJobs(rootfs, s.ignore_processes);
}

std::string uniqueIdFingerprint(const std::string& unique_id) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : unique_id) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace fabricwatch::probes::nccl
