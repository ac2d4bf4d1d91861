#include "facts/workload_versions.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "core/host_fs.h"

namespace fabricwatch::facts {
namespace {

// "/opt/conda/lib/python3.10/site-packages/nvidia/cuda_runtime/lib/libcudart.so.12" ->
// "/opt/conda/lib/python3.10/site-packages"; empty when the library is not in a pip tree.
std::string sitePackages(std::string_view path) {
  for (std::string_view dir : {"/site-packages/", "/dist-packages/"}) {
    if (size_t at = path.find(dir); at != std::string_view::npos)
      return std::string(path.substr(0, at + dir.size() - 1));
  }
  return "";
}

}  // namespace

bool scanFile(FactReader& r, const std::string& host_path, size_t max_bytes,
              const std::function<bool(std::string_view)>& done) {
  std::string p = r.fs().path(host_path);
  int err = 0;
  int fd = core::openRegular(AT_FDCWD, p.c_str(), err);
  if (fd < 0) {
    if (err != ENOENT && err != ENOTDIR) r.error(host_path + ": " + core::readErrorText(err));
    return false;
  }
  constexpr size_t kChunk = 64 * 1024, kOverlap = 256;
  std::string buf;
  size_t total = 0;
  char chunk[kChunk];
  while (total < max_bytes) {
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    total += static_cast<size_t>(n);
    buf.append(chunk, static_cast<size_t>(n));
    if (done(buf)) break;
    if (buf.size() > kOverlap) buf.erase(0, buf.size() - kOverlap);
  }
  ::close(fd);
  return true;
}

template <typename Make>
WorkloadVersions::Found WorkloadVersions::cached(FactReader& r, const std::string& host_path,
                                                 Make&& make) {
  if (r.fs().root() != root_) {
    entries_.clear();
    used_.clear();
    root_ = r.fs().root();
  }
  std::optional<FileStamp> stamp = fileStamp(r.fs(), host_path);
  if (!stamp) return {};
  Key key{stamp->dev, stamp->ino, stamp->size, stamp->mtime_ns};
  if (auto u = used_.find(key); u != used_.end()) return u->second;
  auto it = entries_.find(key);
  Found found = it != entries_.end() ? it->second : make();
  used_.emplace(key, found);
  return found;
}

void WorkloadVersions::endCollection() {
  entries_ = std::move(used_);
  used_.clear();
}

void WorkloadVersions::add(FactReader& r, const std::string& root, const MappedLibraries& libs,
                           core::Value& w) {
  if (libs.nccl) {
    Found banner = cached(r, root + *libs.nccl, [&] {
      Found f;
      scanFile(r, root + *libs.nccl, kMaxScanBytes, [&](std::string_view b) {
        auto found = findNcclBanner(b);
        if (found) f = Found{found->version, found->cuda};
        return found.has_value();
      });
      return f;
    });
    // The library's own banner over its file name: a copy may have been renamed.
    auto version = banner.version ? banner.version : libraryNameVersion("libnccl.so.", *libs.nccl);
    if (version) w["nccl_version"] = *version;
    if (banner.extra) w["nccl_cuda_version"] = *banner.extra;
  }
  if (libs.cudart) {
    auto version = libraryNameVersion("libcudart.so.", *libs.cudart);
    if (std::string site = sitePackages(*libs.cudart); !version && !site.empty()) {
      version = cached(r, root + site, [&] {
                  Found f;
                  for (const auto& n : r.list(root + site)) {
                    if ((f.version = cudaRuntimeFromDistInfo(n))) break;
                  }
                  return f;
                }).version;
    }
    if (version) w["cuda_runtime_version"] = *version;
  }
  if (libs.nccl_net_plugin) {
    Found ofi = cached(r, root + *libs.nccl_net_plugin, [&] {
      Found f;
      scanFile(r, root + *libs.nccl_net_plugin, kMaxScanBytes, [&](std::string_view b) {
        f.version = findOfiNcclVersion(b);
        return f.version.has_value();
      });
      return f;
    });
    if (ofi.version) {
      w["net_plugin"] = core::Value::map({{"name", "aws-ofi-nccl"}, {"version", *ofi.version}});
    }
  }
  if (libs.libfabric) {
    if (auto v = libraryNameVersion("libfabric.so.", *libs.libfabric))
      w["libfabric_library_version"] = *v;
  }
}

}  // namespace fabricwatch::facts
