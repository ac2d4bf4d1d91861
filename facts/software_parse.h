#pragma once
// Pure parsers for fabric-software configuration and inventory: NCCL config files
// (KEY=VALUE lines with their positions), dpkg's status database, the EFA installer's package
// list, and library file names that carry versions (libnccl.so.2.21.5).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabricwatch::facts {

struct ConfEntry {
  std::string key;
  std::string value;
  int64_t line = 0;  // 1-based
};
// NCCL's format: one KEY=VALUE per line, '#' starts a comment line, blank lines skipped; keys
// and values are trimmed. Lines without '=' are skipped.
std::vector<ConfEntry> parseNcclConf(std::string_view text);

// /var/lib/dpkg/status -> {package: version} for installed packages.
using DpkgVersions = std::map<std::string, std::string, std::less<>>;
DpkgVersions parseDpkgStatus(std::string_view text);

struct EfaInstall {
  std::optional<std::string> installer_version;
  std::vector<std::string> packages;  // "libfabric-aws-1.22.0amzn4.0-1.amzn2023"
};
// /opt/amazon/efa_installed_packages.
EfaInstall parseEfaInstalledPackages(std::string_view text);

// The version in a package file name: ("libfabric-aws", "libfabric-aws-1.22.0amzn4.0-1.amzn2023")
// -> "1.22.0amzn4.0"; also "_" separators (deb names). nullopt when the name does not match.
std::optional<std::string> packageVersion(std::string_view package, std::string_view token);

// "libnccl.so.2.21.5" with prefix "libnccl.so." -> "2.21.5"; nullopt unless the rest is a
// dotted number.
std::optional<std::string> versionAfter(std::string_view prefix, std::string_view file_name);

}  // namespace fabricwatch::facts
