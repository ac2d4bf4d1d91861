#include "policy/resource_group.h"

#include "core/host_fs.h"

namespace fabricwatch::policy {
namespace {

std::string stringOrEmpty(const core::Value& v, std::string_view key) {
  const core::Value* f = v.find(key);
  return f && f->isString() ? f->asString() : std::string();
}

}  // namespace

std::string deriveResourceGroup(const core::Value& facts) {
  const core::Value* devs = facts.findPath("rdma.devices");
  if (!devs || !devs->isList() || devs->asList().empty()) return "none";
  bool efa = false, ib = false, roce = false, erdma = false;
  for (const auto& d : devs->asList()) {
    std::string kind = stringOrEmpty(d, "kind");
    efa = efa || kind == "efa";
    erdma = erdma || kind == "erdma";
    const core::Value* ports = d.find("ports");
    if (!ports || !ports->isList()) continue;
    for (const auto& p : ports->asList()) {
      std::string ll = stringOrEmpty(p, "link_layer");
      ib = ib || ll == "InfiniBand";
      roce = roce || (ll == "Ethernet" && kind != "erdma" && kind != "efa");
    }
  }
  if (efa) return "efa";
  if (ib) return "infiniband";
  if (roce) return "roce";
  if (erdma) return "erdma";
  return "none";
}

std::optional<std::string> parseLabelFile(std::string_view text) {
  std::string_view whole = core::trim(text);
  if (!whole.empty() && whole.find_first_of("=\n \t") == std::string_view::npos)
    return std::string(whole);
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    std::string_view line = core::trim(
        text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start));
    start = nl == std::string_view::npos ? text.size() : nl + 1;
    auto eq = line.find('=');
    if (eq == std::string_view::npos || core::trim(line.substr(0, eq)) != kResourceGroupLabel)
      continue;
    std::string_view v = core::trim(line.substr(eq + 1));
    if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
    if (!v.empty()) return std::string(v);
  }
  return std::nullopt;
}

ResourceGroup resolveResourceGroup(const ResourceGroupInputs& in, const core::Value& facts) {
  if (!in.flag.empty()) return {in.flag, "flag"};
  if (!in.env.empty()) return {in.env, "env"};
  if (!in.config.empty()) return {in.config, "config"};
  if (auto g = parseLabelFile(in.label_file_text)) return {*g, "label-file"};
  return {deriveResourceGroup(facts), "derived"};
}

}  // namespace fabricwatch::policy
