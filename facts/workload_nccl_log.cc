#include "facts/workload_nccl_log.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/utf8.h"
#include "facts/host_parse.h"
#include "facts/workload_parse.h"
#include "nccl/log_file.h"
#include "nccl/log_parse.h"
#include "nccl/log_verdict.h"

namespace fabricwatch::facts {
namespace {

bool isLogVariable(std::string_view n) { return n == "NCCL_DEBUG_FILE" || n == "HOSTNAME"; }

// The process's PID in its own PID namespace ("NSpid:\t4242\t17" -> "17"): what NCCL's %p is.
std::string namespacePid(FactReader& r, const std::string& pid) {
  auto status = r.text("/proc/" + pid + "/status");
  if (!status) return pid;
  for (auto line : splitLines(*status)) {
    if (line.rfind("NSpid:", 0) != 0) continue;
    auto fields = splitFields(line);
    if (fields.size() >= 2) return std::string(fields.back());
  }
  return pid;
}

}  // namespace

void addWorkloadNcclLog(FactReader& r, const std::string& pid, std::string_view environ,
                        core::Value& workload) {
  std::string pattern, hostname;
  for (auto& [k, v] : parseEnviron(environ, isLogVariable)) {
    (k == "HOSTNAME" ? hostname : pattern) = v;
  }
  if (pattern.empty()) return;
  std::string dir = "/proc/" + pid;
  // NCCL's %h is gethostname() in the process's UTS namespace: the pod's name, which the
  // runtime also puts in HOSTNAME and the container's /etc/hostname.
  if (hostname.empty()) {
    if (auto h = r.line(dir + "/root/etc/hostname")) hostname = *h;
  }
  std::string file = nccl::expandDebugFileName(pattern, hostname, namespacePid(r, pid));
  int fd = nccl::openInProcessRoot(r.fs().path(dir + "/root"), r.fs().path(dir + "/cwd"), file);
  if (fd < 0) {
    // Not written yet (NCCL creates it at its first log line), or the process is gone.
    if (errno != ENOENT && errno != ENOTDIR && errno != ESRCH)
      r.error(dir + " NCCL_DEBUG_FILE " + core::sanitizeUtf8(file, 256) + ": " +
              std::strerror(errno));
    return;
  }
  std::string text = nccl::readLogHeadTail(fd);
  ::close(fd);
  nccl::LogSummary s = nccl::parseNcclLog(text);
  core::Value v = nccl::factsValue(s, nccl::judge(s));
  v["file"] = core::sanitizeUtf8(file, 512);
  workload["nccl_log"] = std::move(v);
}

}  // namespace fabricwatch::facts
