#include "facts/workload_parse.h"

#include <cctype>

#include "facts/host_parse.h"

namespace fabricwatch::facts {
namespace {

std::string_view baseName(std::string_view p) {
  size_t s = p.rfind('/');
  return s == std::string_view::npos ? p : p.substr(s + 1);
}

// "2.21.5" at the start of v: digits and single dots, no trailing dot; 0 when none.
size_t dottedNumber(std::string_view v) {
  size_t n = 0;
  while (n < v.size() && (std::isdigit(static_cast<unsigned char>(v[n])) ||
                          (v[n] == '.' && n > 0 && v[n - 1] != '.'))) {
    ++n;
  }
  while (n > 0 && v[n - 1] == '.') --n;
  return n;
}

bool isVersionChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' ||
         c == '+';
}

bool isHex(std::string_view s) {
  for (char c : s) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return !s.empty();
}

}  // namespace

MappedLibraries parseMappedLibraries(std::string_view maps) {
  MappedLibraries out;
  for (auto line : splitLines(maps)) {
    size_t slash = line.find(" /");
    if (slash == std::string_view::npos) continue;
    std::string_view path = line.substr(slash + 1);
    while (!path.empty() && path.back() == ' ') path.remove_suffix(1);
    std::string_view base = baseName(path);
    auto set = [&](std::optional<std::string>& slot) {
      if (!slot) slot = std::string(path);
    };
    if (base.rfind("libnccl-net", 0) == 0) {
      set(out.nccl_net_plugin);
    } else if (base.rfind("libnccl.so", 0) == 0) {
      set(out.nccl);
    } else if (base.rfind("libfabric.so", 0) == 0) {
      set(out.libfabric);
    } else if (base.rfind("libc.so.6", 0) == 0 || base.rfind("libc-2.", 0) == 0) {
      set(out.libc);
    } else if (base.rfind("libcudart.so", 0) == 0 || base.rfind("libcudart-", 0) == 0) {
      set(out.cudart);  // libcudart-<hash>.so.12: the copy older torch wheels bundled
    }
  }
  return out;
}

bool isFabricVariable(std::string_view name) {
  for (std::string_view p : {"NCCL_", "FI_", "UCX_"}) {
    if (name.substr(0, p.size()) == p) return true;
  }
  for (std::string_view n : {"LD_LIBRARY_PATH", "LD_PRELOAD", "OPAL_PREFIX", "NVIDIA_GDRCOPY",
                             "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES"}) {
    if (name == n) return true;
  }
  return false;
}

std::vector<std::pair<std::string, std::string>> parseEnviron(std::string_view environ,
                                                              bool (*keep)(std::string_view)) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t start = 0;
  while (start < environ.size()) {
    size_t end = environ.find('\0', start);
    if (end == std::string_view::npos) end = environ.size();
    std::string_view kv = environ.substr(start, end - start);
    size_t eq = kv.find('=');
    if (eq != std::string_view::npos && eq > 0 && keep(kv.substr(0, eq))) {
      out.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    }
    start = end + 1;
  }
  return out;
}

CgroupIdentity parseCgroupIdentity(std::string_view cgroup) {
  CgroupIdentity id;
  for (auto line : splitLines(cgroup)) {
    size_t kube = line.find("kubepods");
    if (kube == std::string_view::npos) continue;
    // Path components after "kubepods".
    std::string_view rest = line.substr(kube);
    size_t start = 0;
    while (start < rest.size()) {
      size_t slash = rest.find('/', start);
      if (slash == std::string_view::npos) slash = rest.size();
      std::string_view comp = rest.substr(start, slash - start);
      start = slash + 1;
      // systemd: kubepods-burstable-pod<uid with _>.slice; cgroupfs: pod<uid>
      if (size_t pp = comp.rfind("pod");
          pp != std::string_view::npos && !id.pod_uid && (pp == 0 || comp[pp - 1] == '-')) {
        std::string_view uid = comp.substr(pp + 3);
        if (uid.size() > 6 && uid.substr(uid.size() - 6) == ".slice") uid.remove_suffix(6);
        std::string u(uid);
        for (char& c : u) {
          if (c == '_') c = '-';
        }
        if (u.size() == 36) id.pod_uid = u;
        continue;
      }
      std::string_view c = comp;
      if (c.size() > 6 && c.substr(c.size() - 6) == ".scope") c.remove_suffix(6);
      size_t dash = c.rfind('-');
      std::string_view hex = dash == std::string_view::npos ? c : c.substr(dash + 1);
      if (hex.size() == 64 && isHex(hex)) id.container_id = std::string(hex);
    }
    if (id.pod_uid || id.container_id) break;
  }
  return id;
}

std::optional<std::string> findGlibcVersion(std::string_view bytes) {
  constexpr std::string_view kLib = "GNU C Library";
  constexpr std::string_view kRelease = "release version ";
  size_t pos = 0;
  while ((pos = bytes.find(kLib, pos)) != std::string_view::npos) {
    size_t end = bytes.find_first_of(std::string_view("\n\0", 2), pos);
    std::string_view line = bytes.substr(pos, end == std::string_view::npos ? 200 : end - pos);
    size_t r = line.find(kRelease);
    if (r != std::string_view::npos) {
      std::string_view v = line.substr(r + kRelease.size());
      size_t n = 0;
      while (n < v.size() && (std::isdigit(static_cast<unsigned char>(v[n])) || v[n] == '.')) ++n;
      // A number that runs to the end of the buffer may be cut off by a chunk boundary.
      bool complete = n < v.size() || end != std::string_view::npos;
      while (n > 0 && v[n - 1] == '.') --n;
      if (n > 0 && complete) return std::string(v.substr(0, n));
    }
    pos += kLib.size();
  }
  return std::nullopt;
}

std::optional<NcclBanner> findNcclBanner(std::string_view bytes) {
  constexpr std::string_view kBanner = "NCCL version ";
  size_t pos = 0;
  while ((pos = bytes.find(kBanner, pos)) != std::string_view::npos) {
    pos += kBanner.size();
    std::string_view v = bytes.substr(pos, 64);
    size_t n = dottedNumber(v);
    // "NCCL version %s" and prose are no banner; a version is at least major.minor.
    if (n == 0 || v.substr(0, n).find('.') == std::string_view::npos) continue;
    size_t end = n;
    while (end < v.size() && isVersionChar(v[end])) ++end;
    if (end == v.size()) continue;  // cut at the buffer's end (or 64 bytes of letters)
    NcclBanner b{std::string(v.substr(0, n)), std::nullopt};
    std::string_view rest = v.substr(n, end - n);
    if (size_t c = rest.find("+cuda"); c != std::string_view::npos) {
      std::string_view cv = rest.substr(c + 5);
      if (size_t m = dottedNumber(cv); m > 0) b.cuda = std::string(cv.substr(0, m));
    } else if (v.substr(end).rfind(" compiled with CUDA ", 0) == 0) {
      std::string_view cv = v.substr(end + 20);
      size_t m = dottedNumber(cv);
      if (m > 0 && m < cv.size()) b.cuda = std::string(cv.substr(0, m));
    }
    return b;
  }
  return std::nullopt;
}

std::optional<std::string> findOfiNcclVersion(std::string_view bytes) {
  constexpr std::string_view kInit = "Initializing aws-ofi-nccl ";
  size_t pos = 0;
  while ((pos = bytes.find(kInit, pos)) != std::string_view::npos) {
    pos += kInit.size();
    std::string_view v = bytes.substr(pos, 64);
    size_t end = 0;
    while (end < v.size() && isVersionChar(v[end])) ++end;
    if (end == v.size() || dottedNumber(v) == 0) continue;
    return std::string(v.substr(0, end));
  }
  return std::nullopt;
}

std::optional<std::string> libraryNameVersion(std::string_view prefix, std::string_view path) {
  std::string_view base = baseName(path);
  if (base.size() <= prefix.size() || base.substr(0, prefix.size()) != prefix) return std::nullopt;
  std::string_view v = base.substr(prefix.size());
  if (dottedNumber(v) != v.size() || v.find('.') == std::string_view::npos) return std::nullopt;
  return std::string(v);
}

std::optional<std::string> cudaRuntimeFromDistInfo(std::string_view entry) {
  constexpr std::string_view kName = "nvidia_cuda_runtime", kSuffix = ".dist-info";
  if (entry.size() <= kName.size() + kSuffix.size() || entry.substr(0, kName.size()) != kName ||
      entry.substr(entry.size() - kSuffix.size()) != kSuffix) {
    return std::nullopt;
  }
  std::string_view rest = entry.substr(kName.size(), entry.size() - kName.size() - kSuffix.size());
  if (rest.rfind("_cu", 0) == 0) {  // _cu12
    size_t d = 3;
    while (d < rest.size() && std::isdigit(static_cast<unsigned char>(rest[d]))) ++d;
    if (d == 3) return std::nullopt;
    rest.remove_prefix(d);
  }
  if (rest.empty() || rest.front() != '-') return std::nullopt;
  rest.remove_prefix(1);
  size_t n = dottedNumber(rest);
  if (n == 0 || n != rest.size() || rest.find('.') == std::string_view::npos) return std::nullopt;
  return std::string(rest);
}

}  // namespace fabricwatch::facts
