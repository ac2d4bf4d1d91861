#pragma once
// Values derived from host files or directories, derived again only when the file changes: its
// identity, size or modification time. dpkg replaces its status database (megabytes on a GPU
// node) by rename on every change, and installing a library adds an entry to its directory,
// which changes the directory's mtime; between changes, a stat() replaces the read and parse.

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/host_fs.h"

namespace fabricwatch::facts {

struct FileStamp {
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = 0;
  int64_t mtime_ns = 0;
  bool operator==(const FileStamp&) const = default;
};

// nullopt when the path does not exist (or cannot be looked at).
std::optional<FileStamp> fileStamp(const core::HostFs& fs, std::string_view host_path);

template <typename T>
class StampedCache {
 public:
  // The value for host_path: the cached one while the file is unchanged, else make() ->
  // std::optional<T>. nullptr when the file is missing or make() fails (a failure is not
  // cached: it is tried again, and its error counted again, next time). Read under another
  // host root, the cache starts afresh.
  template <typename Make>
  const T* get(const core::HostFs& fs, std::string_view host_path, Make&& make) {
    if (fs.root() != root_) {
      entries_.clear();
      root_ = fs.root();
    }
    std::optional<FileStamp> stamp = fileStamp(fs, host_path);
    auto it = entries_.find(host_path);
    if (!stamp) {
      if (it != entries_.end()) entries_.erase(it);
      return nullptr;
    }
    if (it != entries_.end() && it->second.stamp == *stamp) return &it->second.value;
    std::optional<T> value = make();
    if (!value) {
      if (it != entries_.end()) entries_.erase(it);
      return nullptr;
    }
    if (it == entries_.end()) it = entries_.emplace(std::string(host_path), Entry{}).first;
    it->second = Entry{*stamp, std::move(*value)};
    return &it->second.value;
  }

 private:
  struct Entry {
    FileStamp stamp;
    T value;
  };
  std::string root_;  // the host root the entries were read under
  std::map<std::string, Entry, std::less<>> entries_;
};

}  // namespace fabricwatch::facts
