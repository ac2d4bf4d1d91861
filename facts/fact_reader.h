#pragma once
// Thin reads of host files for fact sources, with the "absent is not zero" rule built in: a
// missing file yields nullopt silently; a file that exists but cannot be read or parsed yields
// nullopt and counts one read error on the source's Collection.
//
// Bounded: files open without blocking and only regular files are read (core/host_fs.h);
// listings return at most core::kMaxDirEntries names; and one collection reads at most
// kCollectionBudget bytes (file text and listed names together), so that a host root with a
// huge directory or huge files costs a bounded amount of memory. A cut listing and a spent
// budget count a read error and are recorded in Collection::truncated.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/host_fs.h"
#include "core/source.h"

namespace fabricwatch::facts {

class FactReader {
 public:
  static constexpr size_t kCollectionBudget = 64 << 20;

  FactReader(const core::HostFs& fs, core::Collection& c, size_t budget = kCollectionBudget)
      : fs_(fs), c_(c), budget_(budget) {}

  // Whole file. `quiet_einval`: sysfs answers EINVAL for attributes that do not apply right now
  // (speed of a link that is down, type of an unused GID); that is absence, not an error.
  std::optional<std::string> text(std::string_view path, size_t max_bytes = 1 << 20,
                                  bool quiet_einval = false);
  // Whole file, surrounding whitespace trimmed.
  std::optional<std::string> line(std::string_view path, bool quiet_einval = false);
  // A decimal (or 0x-prefixed hex) integer; unparsable text counts an error.
  std::optional<int64_t> integer(std::string_view path, bool quiet_einval = false);
  // The last component of a symbolic link's target ("../../../0000:17:00.0" -> "0000:17:00.0").
  std::optional<std::string> linkName(std::string_view path) const;

  // At most max_entries names; a cut listing is reported (see above).
  std::vector<std::string> list(std::string_view path, size_t max_entries = core::kMaxDirEntries);
  // Charges `bytes` read or listed to the collection's budget; false (and, the first time, the
  // cut reported at `path`) once it is spent: the caller leaves the fact absent.
  bool charge(size_t bytes, std::string_view path);
  // A reader for a part of this collection read on another thread: it records into `part`, a
  // collection of its own, and may read half of what this reader has left of its budget.
  // merge() then adds part's errors and cuts to this reader's collection and gives back what
  // it did not read, so that the two together stay within the one budget.
  FactReader share(core::Collection& part);
  void merge(FactReader& part);
  bool exists(std::string_view path) const { return fs_.exists(path); }
  const core::HostFs& fs() const { return fs_; }
  core::Collection& collection() { return c_; }
  void error(std::string msg) { c_.addError(std::move(msg)); }

 private:
  const core::HostFs& fs_;
  core::Collection& c_;
  size_t budget_;
  size_t spent_ = 0;
  bool over_ = false;
};

// An open directory of the host, for sources that read many files below one directory (a
// device's ports and counters): each read is one openat() relative to it instead of a walk of
// the whole path through the root and the sysfs symlinks again. Same absent/error rules.
class DirReader {
 public:
  DirReader(FactReader& r, std::string host_path);
  ~DirReader();
  DirReader(DirReader&& o) noexcept;
  DirReader& operator=(DirReader&&) = delete;
  DirReader(const DirReader&) = delete;

  bool isOpen() const { return fd_ >= 0; }
  const std::string& hostPath() const { return host_path_; }
  int fd() const { return fd_; }
  // The host root this directory is read under (--path.rootfs).
  const std::string& root() const { return r_->fs().root(); }
  // `rel` below this directory as a path on this machine (--path.rootfs included).
  std::string realPath(std::string_view rel) const;
  DirReader sub(std::string_view rel) const;

  std::optional<std::string> line(std::string_view rel, bool quiet_einval = false) const;
  std::optional<int64_t> integer(std::string_view rel, bool quiet_einval = false) const;
  std::vector<std::string> list(std::string_view rel = {},
                                size_t max_entries = core::kMaxDirEntries) const;
  FactReader& reader() const { return *r_; }
  bool exists(std::string_view rel) const;
  std::optional<std::string> linkName(std::string_view rel) const;
  std::optional<std::string> linkTarget(std::string_view rel) const;

 private:
  DirReader(FactReader& r, std::string host_path, int fd)
      : r_(&r), host_path_(std::move(host_path)), fd_(fd) {}
  FactReader* r_;
  std::string host_path_;
  int fd_ = -1;
  mutable bool listed_ = false;  // fd_'s offset has moved: list() rewinds it first
};

// "42", "-1", "0x1a" -> value; nullopt when the text is not wholly an integer of int64's range.
std::optional<int64_t> parseInteger(std::string_view text);
// "18446744073709551615", "0x1a" -> value: the kernel prints counters and rlimits as unsigned
// 64-bit numbers. nullopt when the text is not wholly one.
std::optional<uint64_t> parseUnsigned(std::string_view text);
std::string joinPath(std::string_view dir, std::string_view name);

}  // namespace fabricwatch::facts
