#include "facts/host_parse.h"

#include <arpa/inet.h>
#include <sys/resource.h>

#include "core/host_fs.h"
#include "facts/fact_reader.h"

namespace fabricwatch::facts {

std::vector<std::string_view> splitLines(std::string_view text) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    out.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

std::vector<std::string_view> splitFields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

std::map<std::string, uint64_t, std::less<>> parseMeminfo(std::string_view text) {
  std::map<std::string, uint64_t, std::less<>> out;
  for (auto line : splitLines(text)) {
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    auto f = splitFields(line.substr(colon + 1));
    if (f.empty()) continue;
    auto v = parseUnsigned(f[0]);
    if (!v) continue;
    out[std::string(line.substr(0, colon))] = (f.size() > 1 && f[1] == "kB") ? *v * 1024 : *v;
  }
  return out;
}

core::Value parseMemlock(std::string_view limits_text) {
  for (auto line : splitLines(limits_text)) {
    constexpr std::string_view kName = "Max locked memory";
    if (line.substr(0, kName.size()) != kName) continue;
    auto f = splitFields(line.substr(kName.size()));
    if (f.size() < 2) return nullptr;
    core::Value v = core::Value::map();
    // The kernel prints RLIM_INFINITY as "unlimited"; a limit read as a number equal to it (from
    // another writer of the same format) is unlimited too. Limits are u64: one above INT64_MAX
    // is a double (docs/facts.md), never clamped.
    auto put = [&](const char* unlimited_key, const char* bytes_key, std::string_view text) {
      auto n = parseUnsigned(text);
      bool unlimited = text == "unlimited" || n == static_cast<uint64_t>(RLIM_INFINITY);
      v[unlimited_key] = unlimited;
      if (n && !unlimited) v[bytes_key] = *n;
    };
    put("unlimited", "soft_bytes", f[0]);
    put("hard_unlimited", "hard_bytes", f[1]);
    return v;
  }
  return nullptr;
}

std::optional<BondMode> parseBondMode(std::string_view text) {
  auto f = splitFields(core::trim(text));
  if (f.size() != 2) return std::nullopt;
  auto code = parseInteger(f[1]);
  if (!code) return std::nullopt;
  return BondMode{std::string(f[0]), *code};
}

std::vector<std::string> parseModules(std::string_view text) {
  std::vector<std::string> out;
  for (auto line : splitLines(text)) {
    auto f = splitFields(line);
    if (!f.empty()) out.emplace_back(f[0]);
  }
  return out;
}

std::vector<Inet6Address> parseIfInet6(std::string_view text) {
  std::vector<Inet6Address> out;
  for (auto line : splitLines(text)) {
    auto f = splitFields(line);
    if (f.size() < 6 || f[0].size() != 32) continue;
    unsigned char bytes[16];
    bool ok = true;
    for (int i = 0; i < 16 && ok; ++i) {
      auto b = parseInteger("0x" + std::string(f[0].substr(i * 2, 2)));
      ok = b.has_value();
      if (ok) bytes[i] = static_cast<unsigned char>(*b);
    }
    char buf[INET6_ADDRSTRLEN];
    if (!ok || !inet_ntop(AF_INET6, bytes, buf, sizeof buf)) continue;
    out.push_back({std::string(f[5]), buf});
  }
  return out;
}

core::Value parseNvidiaDriverVersion(std::string_view text) {
  auto lines = splitLines(text);
  if (lines.empty()) return {};
  std::string_view first = lines.front();
  auto module = first.find("Kernel Module");
  if (first.find("NVRM version:") == std::string_view::npos || module == std::string_view::npos) {
    return {};
  }
  core::Value out = core::Value::map();
  out["open_kernel_module"] = first.find("Open Kernel Module") != std::string_view::npos;
  // The version is the first field after "Kernel Module" that starts with a digit and has a dot
  // ("for x86_64" comes before it in the open modules' line).
  for (auto field : splitFields(first.substr(module))) {
    if (!field.empty() && field[0] >= '0' && field[0] <= '9' &&
        field.find('.') != std::string_view::npos) {
      out["version"] = std::string(field);
      break;
    }
  }
  return out;
}

bool isFabricManagerComm(std::string_view comm) {
  comm = core::trim(comm);
  return comm == "nv-fabricmanage" || comm == "nv-fabricmanager";
}

std::vector<std::string_view> parseIommuParameters(std::string_view cmdline) {
  std::vector<std::string_view> out;
  for (auto p : splitFields(core::trim(cmdline))) {
    std::string_view name = p.substr(0, p.find('='));
    if (name == "iommu" || name.rfind("iommu.", 0) == 0 || name == "intel_iommu" ||
        name == "amd_iommu")
      out.push_back(p);
  }
  return out;
}

}  // namespace fabricwatch::facts
