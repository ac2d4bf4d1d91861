#include "facts/software_source.h"

#include "core/snapshot.h"
#include "facts/fact_reader.h"
#include "facts/software_parse.h"

namespace fabricwatch::facts {
namespace {

const char* const kLibDirs[] = {"/opt/amazon/efa/lib",
                                "/opt/amazon/efa/lib64",
                                "/usr/lib/x86_64-linux-gnu",
                                "/usr/lib/aarch64-linux-gnu",
                                "/usr/lib64",
                                "/usr/lib",
                                "/usr/local/lib",
                                "/usr/local/cuda/lib64"};
const char* const kOfiNcclDirs[] = {"/opt/amazon-efa-ofi/lib", "/opt/amazon/ofi-nccl/lib",
                                    "/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu",
                                    "/opt/aws-ofi-nccl/lib"};

std::optional<std::string> fromPackages(const std::vector<std::string>& pkgs,
                                        std::string_view name) {
  for (const auto& p : pkgs) {
    if (auto v = packageVersion(name, p)) return v;
  }
  return std::nullopt;
}

const std::vector<std::string> kNoNames;

}  // namespace

const std::vector<std::string>& SoftwareSource::list(FactReader& r, const char* dir) {
  const auto* names = listings_.get(r.fs(), dir, [&] { return std::optional(r.list(dir)); });
  return names ? *names : kNoNames;
}

std::optional<std::pair<std::string, std::string>> SoftwareSource::findVersionedLib(
    FactReader& r, std::string_view prefix) {
  for (const char* dir : kLibDirs) {
    for (const auto& n : list(r, dir)) {
      if (auto v = versionAfter(prefix, n)) return std::pair{*v, joinPath(dir, n)};
    }
  }
  return std::nullopt;
}

core::Collection SoftwareSource::collect(const core::CollectContext& ctx) {
  core::HostFs fs(ctx.rootfs);
  core::Collection c;
  FactReader r(fs, c);
  core::Value sw = core::Value::map();
  const DpkgVersions* dpkg = dpkg_.get(fs, "/var/lib/dpkg/status", [&]() {
    auto t = r.text("/var/lib/dpkg/status", 64 << 20);
    return t ? std::optional(parseDpkgStatus(*t)) : std::nullopt;
  });
  auto deb = [&](std::string_view name) -> std::optional<std::string> {
    if (!dpkg) return std::nullopt;
    if (auto it = dpkg->find(name); it != dpkg->end()) return it->second;
    return std::nullopt;
  };

  EfaInstall efa_pkgs;
  core::Value efa = core::Value::map();
  if (r.exists("/opt/amazon/efa")) efa["path"] = "/opt/amazon/efa";
  if (auto t = r.text("/opt/amazon/efa_installed_packages")) {
    efa_pkgs = parseEfaInstalledPackages(*t);
    if (efa_pkgs.installer_version) efa["installer_version"] = *efa_pkgs.installer_version;
    core::Value pl = core::Value::list();
    for (const auto& p : efa_pkgs.packages) pl.push(p);
    efa["packages"] = std::move(pl);
  }
  if (auto v = r.line("/sys/module/efa/version")) efa["driver_version"] = *v;
  if (efa.size() > 0) sw["efa"] = std::move(efa);
  if (r.exists("/opt/amazon-efa-ofi")) sw["efa_ofi_dir"] = "/opt/amazon-efa-ofi";

  core::Value lf = core::Value::map();
  if (auto lib = findVersionedLib(r, "libfabric.so.")) {
    lf["library_version"] = lib->first;
    lf["path"] = lib->second;
  }
  if (auto v = fromPackages(efa_pkgs.packages, "libfabric-aws")) {
    lf["version"] = *v;
  } else if (auto d = deb("libfabric1")) {
    lf["version"] = *d;
  }
  if (lf.size() > 0) sw["libfabric"] = std::move(lf);

  core::Value nccl = core::Value::map();
  if (auto lib = findVersionedLib(r, "libnccl.so.")) {
    nccl["version"] = lib->first;
    nccl["path"] = lib->second;
  }
  if (auto d = deb("libnccl2")) nccl["package_version"] = *d;
  if (nccl.size() > 0) sw["nccl"] = std::move(nccl);

  core::Value ofi = core::Value::map();
  for (const char* dir : kOfiNcclDirs) {
    for (const auto& n : list(r, dir)) {
      if (n.rfind("libnccl-net", 0) == 0 && n.find(".so") != std::string::npos) {
        ofi["path"] = joinPath(dir, n);
        break;
      }
    }
    if (ofi.size() > 0) break;
  }
  if (auto v = fromPackages(efa_pkgs.packages, "aws-ofi-nccl")) {
    ofi["version"] = *v;
  } else if (auto v = fromPackages(efa_pkgs.packages, "libnccl-ofi")) {
    ofi["version"] = *v;
  } else if (auto d = deb("aws-ofi-nccl")) {
    ofi["version"] = *d;
  }
  if (ofi.size() > 0) sw["aws_ofi_nccl"] = std::move(ofi);

  if (auto v = fromPackages(efa_pkgs.packages, "rdma-core")) {
    sw["rdma_core"] = core::Value::map({{"version", *v}});
  } else if (auto d = deb("rdma-core")) {
    sw["rdma_core"] = core::Value::map({{"version", *d}});
  }
  if (auto v = r.line("/sys/module/erdma/version")) {
    sw["erdma"] = core::Value::map({{"driver_version", *v}});
  }
  if (auto v = r.line("/sys/module/mlx5_core/version")) {
    sw["mlx5"] = core::Value::map({{"driver_version", *v}});
  }
  c.facts["software"] = std::move(sw);
  return c;
}

void SoftwareSource::renderMetrics(const core::Snapshot& snapshot,
                                   core::MetricFamilies& out) const {
  const core::Value* sw = snapshot.facts.find("software");
  if (!sw || !sw->isMap()) return;
  auto f = core::gaugeFamily("fabricwatch_software_info",
                             "Fabric software found on the host, by component and version "
                             "(constant 1).");
  for (const auto& [component, v] : sw->asMap()) {
    if (!v.isMap()) continue;
    for (const char* key : {"version", "installer_version", "driver_version"}) {
      const auto* ver = v.find(key);
      if (!ver || !ver->isString()) continue;
      std::string comp = component;
      if (std::string_view(key) != "version")
        comp += std::string_view(key) == "installer_version" ? "_installer" : "_driver";
      core::addSample(f, {{"component", comp}, {"version", ver->asString()}}, 1);
    }
  }
  if (!f.metric.empty()) out.push_back(std::move(f));
}

}  // namespace fabricwatch::facts
