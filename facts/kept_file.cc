#include "facts/kept_file.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>

namespace fabricwatch::facts {
namespace {

std::atomic<size_t> g_kept{0};
constexpr size_t kUnset = SIZE_MAX;
std::atomic<size_t> g_limit{kUnset};

size_t defaultLimit() {
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return 16384;
  return std::min<size_t>(rl.rlim_cur / 4, 16384);
}

bool takeSlot() {
  size_t limit = keptFileLimit();
  if (g_kept.fetch_add(1, std::memory_order_relaxed) < limit) return true;
  g_kept.fetch_sub(1, std::memory_order_relaxed);
  return false;
}

void giveSlot() { g_kept.fetch_sub(1, std::memory_order_relaxed); }

bool isMissing(int err) { return err == ENOENT || err == ENOTDIR; }

}  // namespace

void setKeptFileLimit(size_t limit) { g_limit.store(limit, std::memory_order_relaxed); }

size_t keptFileLimit() {
  size_t limit = g_limit.load(std::memory_order_relaxed);
  if (limit == kUnset) {
    size_t d = defaultLimit();
    // The first caller sets it; a racing one reads what the first set.
    g_limit.compare_exchange_strong(limit, d, std::memory_order_relaxed);
    limit = g_limit.load(std::memory_order_relaxed);
  }
  return limit;
}

size_t keptFiles() { return g_kept.load(std::memory_order_relaxed); }

size_t raiseOpenFileLimit() {
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0) return 0;
  if (rl.rlim_cur < rl.rlim_max) {
    rlimit raised = rl;
    raised.rlim_cur = rl.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) rl = raised;
  }
  return rl.rlim_cur == RLIM_INFINITY ? SIZE_MAX : static_cast<size_t>(rl.rlim_cur);
}

std::optional<FileId> fileId(const DirReader& dir, std::string_view rel) {
  struct stat st;
  if (dir.fd() < 0 || ::fstatat(dir.fd(), std::string(rel).c_str(), &st, 0) != 0) {
    return std::nullopt;
  }
  return FileId{st.st_dev, st.st_ino};
}

KeptFile::KeptFile(const DirReader& dir, std::string_view rel) : path_(dir.realPath(rel)) {
  host_offset_ = path_.size() - joinPath(dir.hostPath(), rel).size();
  if (dir.fd() < 0) return;  // the directory is missing, so is the file
  open(dir.fd(), std::string(rel).c_str());
}

KeptFile::KeptFile(const core::HostFs& fs, std::string_view host_path) : path_(fs.path(host_path)) {
  host_offset_ = path_.size() - host_path.size();
  open(AT_FDCWD, path_.c_str());
}

void KeptFile::open(int dirfd, const char* rel) {
  if (!takeSlot()) {
    state_ = State::kByPath;
    return;
  }
  int err = 0;
  fd_ = core::openRegular(dirfd, rel, err);
  if (fd_ >= 0) {
    state_ = State::kOpen;
    return;
  }
  giveSlot();
  // Any other failure (EACCES ...) is reported by the reads, which try again.
  state_ = isMissing(err) ? State::kMissing : State::kByPath;
}

void KeptFile::close() {
  if (fd_ < 0) return;
  ::close(fd_);
  fd_ = -1;
  giveSlot();
}

KeptFile::~KeptFile() { close(); }

KeptFile::KeptFile(KeptFile&& o) noexcept
    : path_(std::move(o.path_)), host_offset_(o.host_offset_), fd_(o.fd_), state_(o.state_) {
  o.fd_ = -1;
  o.state_ = State::kMissing;
}

KeptFile& KeptFile::operator=(KeptFile&& o) noexcept {
  if (this != &o) {
    close();
    path_ = std::move(o.path_);
    host_offset_ = o.host_offset_;
    fd_ = o.fd_;
    state_ = o.state_;
    o.fd_ = -1;
    o.state_ = State::kMissing;
  }
  return *this;
}

int KeptFile::readAll(int fd, std::string& out) const {
  char buf[4096];
  off_t off = 0;
  while (out.size() < (1 << 16)) {
    ssize_t n = ::pread(fd, buf, sizeof buf, off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    off += n;
    // sysfs returns an attribute in one read, and a short read of a file is its end: this
    // saves the second pread() that would only return 0.
    if (static_cast<size_t>(n) < sizeof buf) break;
  }
  return 0;
}

int KeptFile::readByPath(std::string& out) {
  int err = 0;
  int fd = core::openRegular(AT_FDCWD, path_.c_str(), err);
  if (fd < 0) return err;
  err = readAll(fd, out);
  ::close(fd);
  return err;
}

std::optional<std::string> KeptFile::line(FactReader& r, bool quiet_einval) {
  std::string text;
  int err = 0;
  switch (state_) {
    case State::kMissing:
      return std::nullopt;
    case State::kOpen:
      err = readAll(fd_, text);
      // The device went away under a kept descriptor (sysfs answers ENODEV from then on):
      // whatever now has the path, if anything, is read afresh.
      if (err == ENODEV) {
        close();
        state_ = State::kByPath;
        text.clear();
        err = readByPath(text);
      }
      break;
    case State::kByPath:
      err = readByPath(text);
      break;
  }
  if (isMissing(err)) return std::nullopt;
  if (err != 0) {
    if (!(quiet_einval && err == EINVAL))
      r.error(std::string(hostPath()) + ": " + core::readErrorText(err));
    return std::nullopt;
  }
  if (!r.charge(text.size(), hostPath())) return std::nullopt;
  return std::string(core::trim(text));
}

std::optional<int64_t> KeptFile::integer(FactReader& r, bool quiet_einval) {
  auto l = line(r, quiet_einval);
  if (!l) return std::nullopt;
  auto v = parseInteger(*l);
  if (!v) r.error(std::string(hostPath()) + ": not an integer: \"" + l->substr(0, 40) + "\"");
  return v;
}

}  // namespace fabricwatch::facts
