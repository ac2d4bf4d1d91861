#include "facts/nccl_source.h"

#include "facts/fact_reader.h"

namespace fabricwatch::facts {

core::Value ncclConfigFileValue(const std::string& path, const std::vector<ConfEntry>& entries) {
  core::Value list = core::Value::list();
  for (const auto& e : entries) {
    list.push(core::Value::map({{"key", e.key}, {"value", e.value}, {"line", e.line}}));
  }
  return core::Value::map({{"path", path}, {"entries", std::move(list)}});
}

void addSettings(core::Value& settings, const std::string& path,
                 const std::vector<ConfEntry>& entries) {
  for (const auto& e : entries) {
    // NCCL sets each variable from a file only when it is not set yet, and reads the file top
    // down: the first line for a key wins within a file.
    if (settings.find(e.key)) continue;
    settings[e.key] =
        core::Value::map({{"value", e.value}, {"source", path + ":" + std::to_string(e.line)}});
  }
}

core::Collection NcclSource::collect(const core::CollectContext& ctx) {
  core::HostFs fs(ctx.rootfs);
  core::Collection c;
  FactReader r(fs, c);
  core::Value files = core::Value::list();
  core::Value settings = core::Value::map();
  const std::string path = "/etc/nccl.conf";
  if (auto t = r.text(path)) {
    auto entries = parseNcclConf(*t);
    addSettings(settings, path, entries);
    files.push(ncclConfigFileValue(path, entries));
  }
  c.facts["nccl"] =
      core::Value::map({{"config_files", std::move(files)}, {"settings", std::move(settings)}});
  return c;
}

}  // namespace fabricwatch::facts
