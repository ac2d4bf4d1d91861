#pragma once
// A sysfs attribute kept open between collections. sysfs builds an attribute's text anew on
// every read from offset 0, so re-reading a kept descriptor costs one pread() where a fresh
// read costs openat() + read() + close(). On a p5 node (32 EFA devices, about 600 changing
// attributes: port states, rates, GIDs, counters) that was most of a collection's time.
//
// Only for sysfs: a regular file replaced by rename (as editors and package managers do) would
// go on reading the old inode through a kept descriptor.
//
// Kept descriptors are capped for the whole process (setKeptFileLimit); past the cap a KeptFile
// opens its path for every read, as an ordinary read does, with the same results.

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "facts/fact_reader.h"

namespace fabricwatch::facts {

class KeptFile {
 public:
  KeptFile() = default;
  // `rel` below the open directory `dir`. A file that is missing now reads as absent for the
  // life of this object without another look: within one sysfs directory's life the set of
  // attributes is fixed. One that cannot be opened for another reason is retried on each read.
  KeptFile(const DirReader& dir, std::string_view rel);
  // The host path `host_path` (a full path walk; for files opened on demand).
  KeptFile(const core::HostFs& fs, std::string_view host_path);
  ~KeptFile();
  KeptFile(KeptFile&& o) noexcept;
  KeptFile& operator=(KeptFile&& o) noexcept;
  KeptFile(const KeptFile&) = delete;
  KeptFile& operator=(const KeptFile&) = delete;

  bool missing() const { return state_ == State::kMissing; }
  bool kept() const { return fd_ >= 0; }

  // The same rules as DirReader::line and ::integer: absent -> nullopt silently; unreadable ->
  // nullopt and one error counted on r's collection (EINVAL only unless quiet_einval).
  std::optional<std::string> line(FactReader& r, bool quiet_einval = false);
  std::optional<int64_t> integer(FactReader& r, bool quiet_einval = false);
  // The file's path on the host (--path.rootfs excluded), for messages.
  std::string_view hostPath() const { return std::string_view(path_).substr(host_offset_); }

 private:
  enum class State { kMissing, kOpen, kByPath };
  void open(int dirfd, const char* rel);
  void close();
  // Whole text from offset 0 into out; 0 or an errno.
  int readAll(int fd, std::string& out) const;
  int readByPath(std::string& out);

  std::string path_;        // on this machine: --path.rootfs included, to reopen by
  size_t host_offset_ = 0;  // where the host path starts in path_, for messages
  int fd_ = -1;
  State state_ = State::kMissing;
};

// The cap on kept descriptors of the process (0: keep none). By default it is a quarter of the
// RLIMIT_NOFILE soft limit at first use, at most 16384, so that the HTTP server and the peer mesh
// keep room.
void setKeptFileLimit(size_t limit);
size_t keptFileLimit();
size_t keptFiles();  // descriptors kept now

// Lifts the RLIMIT_NOFILE soft limit to the hard one (as Go's runtime does at start), so that
// the cap above is not the 1024 of a default service. Returns the soft limit now.
size_t raiseOpenFileLimit();

// Which file a directory entry is: device and inode number. sysfs gives each directory it
// creates a new inode number, so a device that is removed and added again under the same name
// has a new identity, and what was read of the old one is dropped.
struct FileId {
  dev_t dev = 0;
  ino_t ino = 0;
  bool operator==(const FileId&) const = default;
};
std::optional<FileId> fileId(const DirReader& dir, std::string_view rel);

}  // namespace fabricwatch::facts
