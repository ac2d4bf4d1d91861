#include "facts/software_parse.h"

#include <cctype>

#include "core/host_fs.h"
#include "facts/host_parse.h"

namespace fabricwatch::facts {

std::vector<ConfEntry> parseNcclConf(std::string_view text) {
  std::vector<ConfEntry> out;
  int64_t n = 0;
  for (auto raw : splitLines(text)) {
    ++n;
    std::string_view line = core::trim(raw);
    if (line.empty() || line.front() == '#') continue;
    size_t eq = line.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    out.push_back({std::string(core::trim(line.substr(0, eq))),
                   std::string(core::trim(line.substr(eq + 1))), n});
  }
  return out;
}

DpkgVersions parseDpkgStatus(std::string_view text) {
  DpkgVersions out;
  std::string pkg, version;
  bool installed = false;
  auto flush = [&] {
    if (!pkg.empty() && installed && !version.empty()) out[pkg] = version;
    pkg.clear();
    version.clear();
    installed = false;
  };
  for (auto line : splitLines(text)) {
    if (line.empty()) {
      flush();
      continue;
    }
    auto field = [&](std::string_view name) -> std::optional<std::string_view> {
      if (line.size() > name.size() && line.substr(0, name.size()) == name &&
          line[name.size()] == ':') {
        return core::trim(line.substr(name.size() + 1));
      }
      return std::nullopt;
    };
    if (auto v = field("Package")) pkg = *v;
    if (auto v = field("Version")) version = *v;
    if (auto v = field("Status"))
      installed = v->find("installed") != std::string_view::npos &&
                  v->find("not-installed") == std::string_view::npos;
  }
  flush();
  return out;
}

EfaInstall parseEfaInstalledPackages(std::string_view text) {
  EfaInstall out;
  constexpr std::string_view kVersion = "# EFA installer version:";
  for (auto raw : splitLines(text)) {
    std::string_view line = core::trim(raw);
    if (line.substr(0, kVersion.size()) == kVersion) {
      out.installer_version = std::string(core::trim(line.substr(kVersion.size())));
      continue;
    }
    if (line.empty() || line.front() == '#') continue;
    for (auto f : splitFields(line)) out.packages.emplace_back(f);
  }
  return out;
}

std::optional<std::string> packageVersion(std::string_view package, std::string_view token) {
  if (token.size() <= package.size() + 1 || token.substr(0, package.size()) != package) {
    return std::nullopt;
  }
  char sep = token[package.size()];
  std::string_view rest = token.substr(package.size() + 1);
  if ((sep != '-' && sep != '_') || rest.empty() ||
      !std::isdigit(static_cast<unsigned char>(rest.front()))) {
    return std::nullopt;
  }
  size_t end = rest.find_first_of(sep == '-' ? "-" : "_");
  return std::string(rest.substr(0, end));
}

std::optional<std::string> versionAfter(std::string_view prefix, std::string_view file_name) {
  if (file_name.size() <= prefix.size() || file_name.substr(0, prefix.size()) != prefix) {
    return std::nullopt;
  }
  std::string_view v = file_name.substr(prefix.size());
  bool digit = false;
  for (char c : v) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      digit = true;
    } else if (c != '.' || !digit) {
      return std::nullopt;
    } else {
      digit = false;
    }
  }
  if (!digit) return std::nullopt;
  return std::string(v);
}

}  // namespace fabricwatch::facts
