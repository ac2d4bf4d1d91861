#pragma once
// Reads files of the host through one root path (--path.rootfs), so that any fixture tree can
// stand in for a real host. Absent is not an error; unreadable is (callers count it).
//
// Nothing a host holds can block or swamp the reader. Files are opened with O_NONBLOCK and
// O_NOCTTY, and anything but a regular file is refused ("not a regular file"): sysfs attributes
// and /proc files are regular files, so a FIFO where one belongs (opening it would wait for a
// writer for good) or a device is read as an error, never waited on. Reads are bounded in
// bytes and directory listings in entries; a listing cut at its bound says so.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace fabricwatch::core {

// An error code beside the errno values: the path is a FIFO, socket or device.
inline constexpr int kNotRegularFile = 100000;
// strerror(err), or what kNotRegularFile means.
std::string readErrorText(int err);

// Opens `path` (relative to `dirfd`, or absolute with AT_FDCWD) for reading without ever
// blocking, refusing anything but a regular file. Returns the descriptor, or -1 with `err` set.
int openRegular(int dirfd, const char* path, int& err);

// Entries a directory listing returns at most, unless the caller asks for another bound.
inline constexpr size_t kMaxDirEntries = 4096;

// A file of the operator's (configuration, policy packs, the peer secret, a peers file): read
// whole, refused when it is not a regular file or larger than max_bytes. The error says why
// (the caller names the file).
Result<std::string> readRegularFile(const std::string& path, size_t max_bytes);

class HostFs {
 public:
  explicit HostFs(std::string root = "/");

  // "/sys/class/net" -> "<root>/sys/class/net".
  std::string path(std::string_view host_path) const;

  enum class ReadStatus { kOk, kMissing, kError };
  struct Read {
    ReadStatus status = ReadStatus::kMissing;
    std::string text;
    std::string error;  // errno text when status is kError
  };
  // Reads a whole file (sysfs files are small; max_bytes bounds anything else).
  Read read(std::string_view host_path, size_t max_bytes = 1 << 20) const;
  // The file's content with surrounding whitespace trimmed, or nullopt if absent/unreadable.
  std::optional<std::string> readTrimmed(std::string_view host_path) const;
  // Names in a directory, sorted; empty when it does not exist. At most max_entries of them
  // (which ones is up to the file system's order); *truncated says whether there were more.
  std::vector<std::string> list(std::string_view host_path, size_t max_entries = kMaxDirEntries,
                                bool* truncated = nullptr) const;
  bool exists(std::string_view host_path) const;
  // The target of a symbolic link, or nullopt.
  std::optional<std::string> readLink(std::string_view host_path) const;

  const std::string& root() const { return root_; }

 private:
  std::string root_;
};

// The entries of an open directory, sorted, at most max_entries; *truncated says whether there
// were more. Empty when it cannot be read. Read from the descriptor's current offset, which it
// moves (the caller passes a directory it has just opened, or rewinds it); dirfd is not closed.
std::vector<std::string> listDir(int dirfd, size_t max_entries, bool* truncated = nullptr);

std::string_view trim(std::string_view s);

}  // namespace fabricwatch::core
