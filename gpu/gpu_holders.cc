#include "gpu/gpu_holders.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>

#include "core/host_fs.h"
#include "core/utf8.h"

namespace fabricwatch::gpu {
namespace {

// A pid: digits, few enough for std::stoll (a /proc under --path.rootfs may name anything).
bool numeric(const char* s) {
  if (!*s || std::strlen(s) > 10) return false;
  for (; *s; ++s) {
    if (!std::isdigit(static_cast<unsigned char>(*s))) return false;
  }
  return true;
}

std::string readComm(int proc_fd, const char* pid) {
  std::string p = std::string(pid) + "/comm";
  int err = 0;
  int fd = core::openRegular(proc_fd, p.c_str(), err);
  if (fd < 0) return "";
  char buf[64];
  ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  std::string s(buf, n > 0 ? static_cast<size_t>(n) : 0);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return core::sanitizeUtf8(s, 64);
}

// The parent of `pid` as the /proc at proc_fd names it; nullopt when unreadable.
std::optional<int64_t> readParent(int proc_fd, const char* pid) {
  std::string p = std::string(pid) + "/stat";
  int err = 0;
  int fd = core::openRegular(proc_fd, p.c_str(), err);
  if (fd < 0) return std::nullopt;
  char buf[512];
  ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  if (n <= 0) return std::nullopt;
  return parentPid(std::string_view(buf, static_cast<size_t>(n)));
}

constexpr size_t kCommBytes = 15;  // TASK_COMM_LEN - 1

}  // namespace

const std::vector<std::string>& monitoringProcesses() {
  static const std::vector<std::string> names = {"nvidia-persistenced", "nv-hostengine",
                                                 "dcgm-exporter", "dcgmi", "nvidia-smi"};
  return names;
}

bool commMatches(std::string_view comm, std::string_view name) {
  return !name.empty() && (comm == name || comm == name.substr(0, kCommBytes));
}

std::optional<std::string> checkProcessName(const std::string& name) {
  if (name.empty()) return "process name must not be empty";
  if (name.size() > 64) return "process name \"" + name.substr(0, 20) + "...\" is over 64 bytes";
  for (unsigned char c : name)
    if (c < 0x20 || c == 0x7f || c == '/')
      return "process name \"" + core::sanitizeUtf8(name, 64) +
             "\" must be a name as /proc/PID/comm shows it (no '/' or control characters)";
  return std::nullopt;
}

std::optional<int64_t> parentPid(std::string_view stat) {
  size_t close = stat.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view rest = stat.substr(close + 1);  // " S 1234 ..."
  size_t i = 0;
  auto skipSpaces = [&] {
    while (i < rest.size() && rest[i] == ' ') ++i;
  };
  skipSpaces();
  while (i < rest.size() && rest[i] != ' ') ++i;  // the state
  skipSpaces();
  int64_t ppid = 0;
  auto [end, ec] = std::from_chars(rest.data() + i, rest.data() + rest.size(), ppid);
  if (ec != std::errc() || end == rest.data() + i) return std::nullopt;
  return ppid;
}

pid_t selfPid(const std::string& rootfs) {
  if (rootfs.empty() || rootfs == "/") return ::getpid();
  std::string link = rootfs + "/proc/self";
  char buf[32];
  ssize_t n = ::readlink(link.c_str(), buf, sizeof buf - 1);
  if (n <= 0) return ::getpid();
  int64_t pid = 0;
  auto [end, ec] = std::from_chars(buf, buf + n, pid);
  if (ec != std::errc() || end != buf + n || pid <= 0 || pid > INT32_MAX) return ::getpid();
  return static_cast<pid_t>(pid);
}

bool isGpuDevice(std::string_view t) {
  constexpr std::string_view kPrefix = "/dev/nvidia";
  if (t.substr(0, kPrefix.size()) != kPrefix) return false;
  std::string_view rest = t.substr(kPrefix.size());
  if (rest == "-uvm") return true;
  return !rest.empty() && std::all_of(rest.begin(), rest.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
  });
}

GpuScan scanGpuHolders(const std::string& rootfs, const GpuScanOptions& opts) {
  GpuScan out;
  std::string proc = (rootfs == "/" ? std::string() : rootfs) + "/proc";
  int proc_fd = ::open(proc.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (proc_fd < 0) {
    out.complete = false;
    return out;
  }
  DIR* d = ::fdopendir(::dup(proc_fd));
  if (!d) {
    ::close(proc_fd);
    out.complete = false;
    return out;
  }
  std::string self = std::to_string(opts.self);
  while (dirent* e = ::readdir(d)) {
    if (!numeric(e->d_name) || e->d_name == self) continue;
    if (out.processes_scanned >= opts.max_processes) {
      out.complete = false;
      break;
    }
    ++out.processes_scanned;
    std::string fds = std::string(e->d_name) + "/fd";
    int fd_dir = ::openat(proc_fd, fds.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd_dir < 0) {  // gone, or a kernel thread; EACCES without CAP_SYS_PTRACE
      if (errno == EACCES || errno == EPERM) ++out.unreadable;
      continue;
    }
    DIR* fdd = ::fdopendir(fd_dir);
    if (!fdd) {
      ::close(fd_dir);
      continue;
    }
    size_t seen = 0;
    std::string device;
    while (dirent* f = ::readdir(fdd)) {
      if (f->d_name[0] == '.') continue;
      if (++seen > opts.max_fds_per_process) {
        out.complete = false;
        break;
      }
      char target[256];
      ssize_t n = ::readlinkat(::dirfd(fdd), f->d_name, target, sizeof target - 1);
      if (n <= 0) continue;
      target[n] = '\0';
      if (isGpuDevice(target)) {
        device = target;
        break;
      }
    }
    ::closedir(fdd);
    if (device.empty()) continue;
    std::string comm = readComm(proc_fd, e->d_name);
    if (std::any_of(opts.ignore_comms.begin(), opts.ignore_comms.end(),
                    [&](const std::string& n) { return commMatches(comm, n); }))
      continue;
    // This daemon's own children (the NCCL probe's, named "exe" after /proc/self/exe).
    if (opts.self > 0 && readParent(proc_fd, e->d_name) == opts.self) continue;
    if (out.holders.size() < opts.max_holders)
      out.holders.push_back(GpuHolder{std::stoll(e->d_name), comm, device});
    else
      break;  // enough to say the GPUs are busy
  }
  ::closedir(d);
  ::close(proc_fd);
  return out;
}

GpuScan scanForJobs(const std::string& rootfs, const std::vector<std::string>& ignore) {
  GpuScanOptions so;
  so.self = selfPid(rootfs);
  so.ignore_comms = ignore;
  return scanGpuHolders(rootfs, so);
}

std::string busyReason(const GpuScan& scan) {
  if (scan.holders.empty()) return "";
  const auto& h = scan.holders.front();
  return "the GPUs are in use: " + h.comm + " (pid " + std::to_string(h.pid) + ") holds " +
         h.device;
}

core::Value holdersValue(const std::vector<GpuHolder>& hs) {
  core::Value list = core::Value::list();
  for (const auto& h : hs)
    list.push(core::Value::map({{"pid", h.pid}, {"comm", h.comm}, {"device", h.device}}));
  return list;
}

std::shared_ptr<const GpuScan> JobWatch::current(Clock::time_point now) {
  {
    std::lock_guard lock(mu_);
    if (latest_ && now - taken_ < max_age_ && now >= taken_) return latest_;
  }
  // Scanned outside the lock, so that latest() never waits for a scan.
  auto scan = std::make_shared<const GpuScan>(scanForJobs(rootfs_, ignore_));
  std::lock_guard lock(mu_);
  latest_ = scan;
  taken_ = now;
  return scan;
}

std::shared_ptr<const GpuScan> JobWatch::latest(Clock::time_point now) {
  std::lock_guard lock(mu_);
  if (!latest_ || now - taken_ >= 2 * max_age_) return nullptr;
  return latest_;
}

}  // namespace fabricwatch::gpu
