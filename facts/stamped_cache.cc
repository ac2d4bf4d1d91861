#include "facts/stamped_cache.h"

#include <sys/stat.h>

namespace fabricwatch::facts {

std::optional<FileStamp> fileStamp(const core::HostFs& fs, std::string_view host_path) {
  struct stat st;
  if (::stat(fs.path(host_path).c_str(), &st) != 0) return std::nullopt;
  return FileStamp{st.st_dev, st.st_ino, st.st_size,
                   static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

}  // namespace fabricwatch::facts
