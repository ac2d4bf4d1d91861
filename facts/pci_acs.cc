#include "facts/pci_acs.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "core/host_fs.h"
#include "facts/pci_parse.h"

namespace fabricwatch::facts {

std::string bridgeDir(const std::string& device_path, const std::string& bridge) {
  if (device_path.empty() || bridge.empty()) return "";
  std::string segment = "/" + bridge + "/";
  size_t at = device_path.find(segment);
  if (at == std::string::npos) return "";
  return device_path.substr(0, at + 1 + bridge.size());
}

core::Value readBridgeAcs(FactReader& r, const std::string& address, const std::string& dir) {
  core::Value b = core::Value::map({{"pci_address", address}});
  if (dir.empty()) return b;
  std::string path = joinPath(dir, "config");
  int err = 0;
  int fd = core::openRegular(AT_FDCWD, r.fs().path(path).c_str(), err);
  if (fd < 0) {
    if (err != ENOENT && err != ENOTDIR) r.error(path + ": " + core::readErrorText(err));
    return b;
  }
  // Only the dwords the capability list leads to are read: a whole 4 KiB configuration space
  // is a thousand configuration reads of the device.
  int read_err = 0;
  size_t bytes = 0;
  auto dword = [&](uint32_t offset) -> std::optional<uint32_t> {
    unsigned char buf[4];
    ssize_t n;
    do {
      n = ::pread(fd, buf, sizeof buf, static_cast<off_t>(offset));
    } while (n < 0 && errno == EINTR);
    if (n < 0) read_err = errno;
    if (n != static_cast<ssize_t>(sizeof buf)) return std::nullopt;
    bytes += sizeof buf;
    return uint32_t{buf[0]} | uint32_t{buf[1]} << 8 | uint32_t{buf[2]} << 16 |
           uint32_t{buf[3]} << 24;
  };
  AcsState acs = parseAcs(dword);
  ::close(fd);
  if (read_err != 0) {
    r.error(path + ": " + core::readErrorText(read_err));
    return b;
  }
  if (!r.charge(bytes, path)) return b;
  b["config_extended"] = acs.readable;
  if (!acs.readable) return b;
  b["acs_capability"] = acs.capability;
  core::Value redirect = core::Value::list();
  if (acs.capability) {
    b["acs_control"] = static_cast<int64_t>(acs.control);
    for (auto& c : acsRedirects(acs.control)) redirect.push(std::move(c));
  }
  b["acs_redirect"] = std::move(redirect);
  return b;
}

}  // namespace fabricwatch::facts
