#include "gpu/gpu_holders.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
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

}  // namespace

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
    if (fd_dir < 0) continue;  // gone, or a kernel thread; EACCES without CAP_SYS_PTRACE
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
    if (std::find(opts.ignore_comms.begin(), opts.ignore_comms.end(), comm) !=
        opts.ignore_comms.end())
      continue;
    if (out.holders.size() < opts.max_holders)
      out.holders.push_back(GpuHolder{std::stoll(e->d_name), comm, device});
    else
      break;  // enough to say the GPUs are busy
  }
  ::closedir(d);
  ::close(proc_fd);
  return out;
}

}  // namespace fabricwatch::gpu
