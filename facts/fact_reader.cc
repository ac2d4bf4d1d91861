#include "facts/fact_reader.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

namespace fabricwatch::facts {

bool FactReader::charge(size_t bytes, std::string_view path) {
  if (over_) return false;
  spent_ += bytes;
  if (spent_ <= budget_) return true;
  over_ = true;
  c_.addTruncated(std::string(path), "the collection read more than its " +
                                         std::to_string(budget_ >> 20) +
                                         " MiB budget; what follows is absent");
  return false;
}

FactReader FactReader::share(core::Collection& part) {
  size_t half = over_ ? 0 : (budget_ - spent_) / 2;
  spent_ += half;  // set aside until merge()
  FactReader out(fs_, part, half);
  out.over_ = over_;
  return out;
}

void FactReader::merge(FactReader& part) {
  spent_ = spent_ - part.budget_ + std::min(part.spent_, part.budget_);
  if (part.over_) over_ = true;  // the cut is recorded in part's collection
  c_.addErrorsOf(std::move(part.c_));
}

std::vector<std::string> FactReader::list(std::string_view path, size_t max_entries) {
  bool truncated = false;
  auto names = fs_.list(path, max_entries, &truncated);
  if (truncated)
    c_.addTruncated(std::string(path), "more than " + std::to_string(max_entries) +
                                           " entries; only " + std::to_string(max_entries) +
                                           " are read");
  size_t bytes = 0;
  for (const auto& n : names) bytes += n.size() + 32;
  if (!charge(bytes, path)) return {};
  return names;
}

std::optional<std::string> FactReader::text(std::string_view path, size_t max_bytes,
                                            bool quiet_einval) {
  if (over_) return std::nullopt;
  core::HostFs::Read r = fs_.read(path, max_bytes);
  switch (r.status) {
    case core::HostFs::ReadStatus::kOk:
      if (!charge(r.text.size(), path)) return std::nullopt;
      return std::move(r.text);
    case core::HostFs::ReadStatus::kMissing:
      return std::nullopt;
    case core::HostFs::ReadStatus::kError:
      if (!(quiet_einval && r.error == std::strerror(EINVAL))) {
        c_.addError(std::string(path) + ": " + r.error);
      }
      return std::nullopt;
  }
  return std::nullopt;
}

std::optional<std::string> FactReader::line(std::string_view path, bool quiet_einval) {
  auto t = text(path, 1 << 16, quiet_einval);
  if (!t) return std::nullopt;
  return std::string(core::trim(*t));
}

std::optional<int64_t> FactReader::integer(std::string_view path, bool quiet_einval) {
  auto l = line(path, quiet_einval);
  if (!l) return std::nullopt;
  auto v = parseInteger(*l);
  if (!v) c_.addError(std::string(path) + ": not an integer: \"" + l->substr(0, 40) + "\"");
  return v;
}

std::optional<std::string> FactReader::linkName(std::string_view path) const {
  auto target = fs_.readLink(path);
  if (!target) return std::nullopt;
  std::string_view t = *target;
  while (!t.empty() && t.back() == '/') t.remove_suffix(1);
  size_t slash = t.rfind('/');
  return std::string(slash == std::string_view::npos ? t : t.substr(slash + 1));
}

namespace {

std::string_view baseName(std::string_view t) {
  while (!t.empty() && t.back() == '/') t.remove_suffix(1);
  size_t slash = t.rfind('/');
  return slash == std::string_view::npos ? t : t.substr(slash + 1);
}

std::string relPath(std::string_view rel) { return rel.empty() ? "." : std::string(rel); }

}  // namespace

DirReader::DirReader(FactReader& r, std::string host_path)
    : r_(&r), host_path_(std::move(host_path)) {
  fd_ = ::open(r.fs().path(host_path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd_ < 0 && errno != ENOENT && errno != ENOTDIR) {
    r.error(host_path_ + ": " + std::strerror(errno));
  }
}

DirReader::~DirReader() {
  if (fd_ >= 0) ::close(fd_);
}

DirReader::DirReader(DirReader&& o) noexcept
    : r_(o.r_), host_path_(std::move(o.host_path_)), fd_(o.fd_), listed_(o.listed_) {
  o.fd_ = -1;
}

std::string DirReader::realPath(std::string_view rel) const {
  return r_->fs().path(joinPath(host_path_, rel));
}

DirReader DirReader::sub(std::string_view rel) const {
  std::string path = joinPath(host_path_, rel);
  if (fd_ < 0) return DirReader(*r_, std::move(path), -1);
  int fd = ::openat(fd_, std::string(rel).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 && errno != ENOENT && errno != ENOTDIR) r_->error(path + ": " + std::strerror(errno));
  return DirReader(*r_, std::move(path), fd);
}

std::optional<std::string> DirReader::line(std::string_view rel, bool quiet_einval) const {
  if (fd_ < 0) return std::nullopt;
  int err = 0;
  int fd = core::openRegular(fd_, std::string(rel).c_str(), err);
  std::string text;
  if (fd < 0) {
    if (err == ENOENT || err == ENOTDIR) return std::nullopt;
  } else {
    char buf[4096];
    while (text.size() < (1 << 16)) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) err = errno;
      if (n <= 0) break;
      text.append(buf, static_cast<size_t>(n));
      // sysfs returns an attribute in one read, and a short read of a file is its end: this
      // saves the second read() that would only return 0.
      if (static_cast<size_t>(n) < sizeof buf) break;
    }
    ::close(fd);
  }
  if (err != 0) {
    if (!(quiet_einval && err == EINVAL))
      r_->error(joinPath(host_path_, rel) + ": " + core::readErrorText(err));
    return std::nullopt;
  }
  if (!r_->charge(text.size(), joinPath(host_path_, rel))) return std::nullopt;
  return std::string(core::trim(text));
}

std::optional<int64_t> DirReader::integer(std::string_view rel, bool quiet_einval) const {
  auto l = line(rel, quiet_einval);
  if (!l) return std::nullopt;
  auto v = parseInteger(*l);
  if (!v) r_->error(joinPath(host_path_, rel) + ": not an integer: \"" + l->substr(0, 40) + "\"");
  return v;
}

std::vector<std::string> DirReader::list(std::string_view rel, size_t max_entries) const {
  if (fd_ < 0) return {};
  bool truncated = false;
  std::vector<std::string> names;
  if (rel.empty()) {
    // This directory's own descriptor: openat() is relative to it whatever its offset, so it
    // is listed in place (rewound when it was listed before) rather than opened again.
    if (listed_ && ::lseek(fd_, 0, SEEK_SET) != 0) return {};
    listed_ = true;
    names = core::listDir(fd_, max_entries, &truncated);
  } else {
    int fd = ::openat(fd_, std::string(rel).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return {};
    names = core::listDir(fd, max_entries, &truncated);
    ::close(fd);
  }
  std::string path = rel.empty() ? host_path_ : joinPath(host_path_, rel);
  if (truncated)
    r_->collection().addTruncated(path, "more than " + std::to_string(max_entries) +
                                            " entries; only " + std::to_string(max_entries) +
                                            " are read");
  size_t bytes = 0;
  for (const auto& n : names) bytes += n.size() + 32;
  if (!r_->charge(bytes, path)) return {};
  return names;
}

bool DirReader::exists(std::string_view rel) const {
  struct stat st;
  return fd_ >= 0 && ::fstatat(fd_, relPath(rel).c_str(), &st, 0) == 0;
}

std::optional<std::string> DirReader::linkTarget(std::string_view rel) const {
  if (fd_ < 0) return std::nullopt;
  char buf[4096];
  ssize_t n = ::readlinkat(fd_, std::string(rel).c_str(), buf, sizeof buf - 1);
  if (n < 0) return std::nullopt;
  return std::string(buf, static_cast<size_t>(n));
}

std::optional<std::string> DirReader::linkName(std::string_view rel) const {
  auto t = linkTarget(rel);
  if (!t) return std::nullopt;
  return std::string(baseName(*t));
}

std::optional<uint64_t> parseUnsigned(std::string_view text) {
  text = core::trim(text);
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text.remove_prefix(2);
  }
  if (text.empty()) return std::nullopt;
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v, base);
  if (ec != std::errc() || p != text.data() + text.size()) return std::nullopt;
  return v;
}

std::optional<int64_t> parseInteger(std::string_view text) {
  text = core::trim(text);
  bool negative = !text.empty() && text.front() == '-';
  if (negative) text.remove_prefix(1);
  auto v = parseUnsigned(text);
  // Out of range is not an integer of this kind: a u64 attribute is read with parseUnsigned.
  if (!v || *v > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
  return negative ? -static_cast<int64_t>(*v) : static_cast<int64_t>(*v);
}

std::string joinPath(std::string_view dir, std::string_view name) {
  std::string out(dir);
  if (out.empty() || out.back() != '/') out += '/';
  out += name;
  return out;
}

}  // namespace fabricwatch::facts
