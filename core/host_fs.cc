#include "core/host_fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

namespace fabricwatch::core {

HostFs::HostFs(std::string root) : root_(std::move(root)) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
}

std::string HostFs::path(std::string_view host_path) const {
  if (root_ == "/") return std::string(host_path);
  std::string out = root_;
  if (host_path.empty() || host_path.front() != '/') out += '/';
  out += host_path;
  return out;
}

std::string readErrorText(int err) {
  if (err == kNotRegularFile) return "not a regular file (a FIFO, socket or device is not read)";
  return std::strerror(err);
}

int openRegular(int dirfd, const char* path, int& err) {
  int fd = ::openat(dirfd, path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    err = errno;
    return -1;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    err = errno;
    ::close(fd);
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    err = S_ISDIR(st.st_mode) ? EISDIR : kNotRegularFile;
    ::close(fd);
    return -1;
  }
  return fd;
}

Result<std::string> readRegularFile(const std::string& path, size_t max_bytes) {
  int err = 0;
  int fd = openRegular(AT_FDCWD, path.c_str(), err);
  if (fd < 0) return Error{readErrorText(err)};
  std::string text;
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      err = errno;
      ::close(fd);
      return Error{readErrorText(err)};
    }
    if (n == 0) break;
    if (text.size() + static_cast<size_t>(n) > max_bytes) {
      ::close(fd);
      return Error{"larger than " + std::to_string(max_bytes) + " bytes"};
    }
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return text;
}

HostFs::Read HostFs::read(std::string_view host_path, size_t max_bytes) const {
  Read r;
  std::string p = path(host_path);
  int err = 0;
  int fd = openRegular(AT_FDCWD, p.c_str(), err);
  if (fd < 0) {
    if (err == ENOENT || err == ENOTDIR) return r;
    r.status = ReadStatus::kError;
    r.error = readErrorText(err);
    return r;
  }
  char buf[4096];
  while (r.text.size() < max_bytes) {
    ssize_t n = ::read(fd, buf, std::min(sizeof buf, max_bytes - r.text.size()));
    if (n < 0) {
      if (errno == EINTR) continue;
      r.status = ReadStatus::kError;
      r.error = std::strerror(errno);
      ::close(fd);
      return r;
    }
    if (n == 0) break;
    r.text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  r.status = ReadStatus::kOk;
  return r;
}

std::optional<std::string> HostFs::readTrimmed(std::string_view host_path) const {
  Read r = read(host_path);
  if (r.status != ReadStatus::kOk) return std::nullopt;
  return std::string(trim(r.text));
}

std::vector<std::string> listDir(int dirfd, size_t max_entries, bool* truncated) {
  std::vector<std::string> names;
  if (truncated) *truncated = false;
  // getdents64 on the caller's descriptor rather than opendir(): fdopendir() would cost a
  // second openat() (to leave the caller's offset alone), an fstat(), two fcntl() and a close()
  // per listing, and a first collection on a p5 node lists about a hundred directories.
  constexpr size_t kBuffer = 32 << 10;  // glibc's readdir() buffer
  std::unique_ptr<char[]> buf(new char[kBuffer]);
  while (true) {
    ssize_t n = ::getdents64(dirfd, buf.get(), kBuffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (ssize_t off = 0; off < n;) {
      const auto* e = reinterpret_cast<const dirent64*>(buf.get() + off);
      off += e->d_reclen;
      std::string_view name = e->d_name;
      if (name == "." || name == "..") continue;
      if (names.size() >= max_entries) {
        if (truncated) *truncated = true;
        std::sort(names.begin(), names.end());
        return names;
      }
      names.emplace_back(name);
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> HostFs::list(std::string_view host_path, size_t max_entries,
                                      bool* truncated) const {
  if (truncated) *truncated = false;
  int fd = ::open(path(host_path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return {};
  auto names = listDir(fd, max_entries, truncated);
  ::close(fd);
  return names;
}

bool HostFs::exists(std::string_view host_path) const {
  struct stat st;
  return ::stat(path(host_path).c_str(), &st) == 0;
}

std::optional<std::string> HostFs::readLink(std::string_view host_path) const {
  char buf[4096];
  ssize_t n = ::readlink(path(host_path).c_str(), buf, sizeof buf - 1);
  if (n < 0) return std::nullopt;
  return std::string(buf, static_cast<size_t>(n));
}

std::string_view trim(std::string_view s) {
  const char* ws = " \t\r\n";
  size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

}  // namespace fabricwatch::core
