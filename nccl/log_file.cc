#include "nccl/log_file.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace fabricwatch::nccl {

std::string readLogHeadTail(int fd, size_t head, size_t tail) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return "";
  auto readAt = [&](off_t off, size_t len) {
    std::string buf(len, '\0');
    size_t got = 0;
    while (got < len) {
      ssize_t n = ::pread(fd, buf.data() + got, len - got, off + static_cast<off_t>(got));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    buf.resize(got);
    return buf;
  };
  auto size = static_cast<size_t>(st.st_size);
  if (size <= head + tail) return readAt(0, size);
  std::string first = readAt(0, head);
  first.erase(first.rfind('\n') + 1);  // whole lines (npos + 1 == 0 clears a line-less head)
  std::string last = readAt(static_cast<off_t>(size - tail), tail);
  size_t nl = last.find('\n');
  last.erase(0, nl == std::string::npos ? last.size() : nl + 1);
  return first + last;
}

std::string expandDebugFileName(std::string_view pattern, std::string_view hostname,
                                std::string_view pid) {
  std::string host(hostname.substr(0, hostname.find('.')));
  for (char& c : host) {
    if (c == '%' || c == '/') c = '-';
  }
  std::string out;
  for (size_t i = 0; i < pattern.size() && out.size() < 4096; ++i) {
    if (pattern[i] != '%' || i + 1 == pattern.size()) {
      out += pattern[i];
      continue;
    }
    char c = pattern[++i];
    if (c == '%')
      out += '%';
    else if (c == 'h')
      out += host;
    else if (c == 'p')
      out += pid;
    else
      out += std::string("%") + c;
  }
  return out;
}

int openInProcessRoot(const std::string& root_dir, const std::string& cwd_dir,
                      const std::string& path) {
  bool absolute = !path.empty() && path[0] == '/';
  int dir = ::open((absolute ? root_dir : cwd_dir).c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return -1;
  open_how how{};
  how.flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
  how.resolve = (absolute ? RESOLVE_IN_ROOT : RESOLVE_BENEATH) | RESOLVE_NO_MAGICLINKS;
  std::string rel = absolute ? path.substr(1) : path;
  int fd = static_cast<int>(::syscall(SYS_openat2, dir, rel.c_str(), &how, sizeof how));
  if (fd < 0 && errno == ENOSYS) {
    // Before Linux 5.6: no ".." at all, and no symlink as the last component.
    bool dotdot = rel == ".." || rel.rfind("../", 0) == 0 ||
                  rel.find("/../") != std::string::npos ||
                  (rel.size() >= 3 && rel.compare(rel.size() - 3, 3, "/..") == 0);
    if (dotdot) {
      errno = EXDEV;
      fd = -1;
    } else {
      fd = ::openat(dir, rel.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
    }
  }
  int saved = errno;
  ::close(dir);
  errno = saved;
  return fd;
}

}  // namespace fabricwatch::nccl
