#pragma once
// The versions a training process's own libraries say of themselves, for the rules that judge
// which versions work together (pack nccl, docs/policies.md): its NCCL (from the file name
// libnccl.so.2.21.5, else the banner NCCL compiles in), the CUDA that NCCL was built for, its
// CUDA runtime (libcudart.so.12.4.127, else a pip wheel's dist-info in site-packages), its net
// plugin's identity and version (aws-ofi-nccl's "Initializing aws-ofi-nccl 1.13.2-aws") and its
// libfabric's library version (libfabric.so.1.25.0). Files are read through /proc/PID/root,
// at most kMaxScanBytes each, and remembered by their identity (device, inode, size, mtime): the
// eight ranks of a pod map one libnccl, which costs one bounded read, not one per rank and
// collection.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>

#include "core/value.h"
#include "facts/fact_reader.h"
#include "facts/stamped_cache.h"
#include "facts/workload_parse.h"

namespace fabricwatch::facts {

// Reads host_path in 64 KiB chunks (the last 256 bytes kept across chunks, so that a string cut
// by a chunk boundary is seen whole in the next) until done(buffer) says so or max_bytes are
// read. False when the file is missing (silently) or cannot be opened (an error counted).
bool scanFile(FactReader& r, const std::string& host_path, size_t max_bytes,
              const std::function<bool(std::string_view)>& done);

class WorkloadVersions {
 public:
  // NCCL's banner lies about 2 MiB into a 218 MiB libnccl.so.2 (2.28.9); glibc's near the end
  // of a 2 MiB libc.
  static constexpr size_t kMaxScanBytes = 16 << 20;

  // Sets w's nccl_version, nccl_cuda_version, cuda_runtime_version, net_plugin {name,
  // version} and libfabric_library_version where the libraries tell them; `root` is
  // "/proc/PID/root".
  void add(FactReader& r, const std::string& root, const MappedLibraries& libs, core::Value& w);
  // Forgets the files not looked at since the previous call (processes that exited).
  void endCollection();

  struct Found {
    std::optional<std::string> version;
    std::optional<std::string> extra;  // NCCL: the CUDA it was built for
  };

 private:
  template <typename Make>
  Found cached(FactReader& r, const std::string& host_path, Make&& make);

  using Key = std::tuple<dev_t, ino_t, off_t, int64_t>;
  std::string root_;
  std::map<Key, Found> entries_, used_;  // the previous collection's, this one's
};

}  // namespace fabricwatch::facts
