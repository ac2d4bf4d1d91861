#pragma once
// Reads files of the host through one root path (--path.rootfs), so that any fixture tree can
// stand in for a real host. Absent is not an error; unreadable is (callers count it).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabricwatch::core {

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
  // Names in a directory, sorted; empty when it does not exist.
  std::vector<std::string> list(std::string_view host_path) const;
  bool exists(std::string_view host_path) const;
  // The target of a symbolic link, or nullopt.
  std::optional<std::string> readLink(std::string_view host_path) const;

  const std::string& root() const { return root_; }

 private:
  std::string root_;
};

std::string_view trim(std::string_view s);

}  // namespace fabricwatch::core
