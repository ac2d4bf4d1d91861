#pragma once
// Node-level NCCL configuration (nccl.*): /etc/nccl.conf parsed as KEY=VALUE with line numbers,
// so that policies can cite "/etc/nccl.conf:3", and the effective node-level settings.

#include <string>
#include <vector>

#include "core/source.h"
#include "core/value.h"
#include "facts/software_parse.h"

namespace fabricwatch::facts {

class NcclSource : public core::Source {
 public:
  std::string_view name() const override { return "nccl"; }
  core::Collection collect(const core::CollectContext& ctx) override;
};

// {path, entries: [{key, value, line}]} for one parsed file.
core::Value ncclConfigFileValue(const std::string& path, const std::vector<ConfEntry>& entries);
// Adds each entry to settings ({KEY: {value, source: "path:line"}}) unless already set, so that
// callers apply sources from the strongest to the weakest.
void addSettings(core::Value& settings, const std::string& path,
                 const std::vector<ConfEntry>& entries);

}  // namespace fabricwatch::facts
