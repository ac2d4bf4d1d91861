#include "facts/topology_parse.h"

#include <algorithm>
#include <cctype>

#include "config/topology_labels.h"
#include "core/utf8.h"

namespace fabricwatch::facts {

namespace {

// Adds name=value (an empty value removes the label), or says why not.
std::optional<std::string> setLabel(TopologyLabels& out, const std::string& name,
                                    std::string_view value) {
  auto problem = config::topologyLabelNameProblem(name);
  if (!problem) problem = config::topologyLabelValueProblem(value);
  if (!problem && !value.empty() && !out.labels.count(name) &&
      out.labels.size() >= config::kMaxTopologyLabels)
    problem = "at most " + std::to_string(config::kMaxTopologyLabels) + " topology labels";
  if (problem) return problem;
  if (value.empty())
    out.labels.erase(name);
  else
    out.labels[name] = std::string(value);
  return std::nullopt;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> topologyLabelsFromFile(
    std::string_view text, const std::vector<std::string>& prefixes,
    std::vector<std::string>* problems) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    std::string_view line =
        text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    start = nl == std::string_view::npos ? text.size() : nl + 1;
    size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view key = line.substr(0, eq), value = line.substr(eq + 1);
    auto prefix = std::find_if(prefixes.begin(), prefixes.end(),
                               [&](const std::string& p) { return key.rfind(p, 0) == 0; });
    if (prefix == prefixes.end()) continue;
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
      value = value.substr(1, value.size() - 2);
    if (value.find_first_of("\\\"") != std::string_view::npos) {
      problems->push_back(core::escapeForDisplay(key, 80) + ": a quoted or escaped value");
      continue;
    }
    std::string name(key.substr(key.rfind('/') + 1));
    for (char& c : name) {
      if (c == '-' || c == '.') c = '_';
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    out.emplace_back(std::move(name), std::string(value));
  }
  return out;
}

TopologyLabels resolveTopologyLabels(
    const std::map<std::string, std::string, std::less<>>& configured,
    const std::vector<std::string>& environment,
    const std::vector<std::pair<std::string, std::string>>& from_file) {
  TopologyLabels out;
  out.labels = configured;
  for (const auto& [name, value] : from_file)
    if (auto problem = setLabel(out, name, value))
      out.problems.push_back("labels file: " + *problem);
  for (const auto& entry : environment) {
    std::string_view e(entry);
    if (e.rfind(config::kTopologyEnvPrefix, 0) != 0) continue;
    size_t eq = e.find('=');
    if (eq == std::string_view::npos) continue;
    std::string var(e.substr(0, eq));
    std::string_view value = e.substr(eq + 1);
    std::string name(
        e.substr(config::kTopologyEnvPrefix.size(), eq - config::kTopologyEnvPrefix.size()));
    for (char& c : name)
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (auto problem = setLabel(out, name, value))
      out.problems.push_back(core::escapeForDisplay(var, 80) + ": " + *problem);
  }
  return out;
}

std::optional<std::string> subnetPrefixOfGid(std::string_view gid) {
  if (gid.size() != 39) return std::nullopt;
  std::string out;
  for (size_t i = 0; i < gid.size(); ++i) {
    char c = gid[i];
    if (i % 5 == 4) {
      if (c != ':') return std::nullopt;
    } else if (!std::isxdigit(static_cast<unsigned char>(c))) {
      return std::nullopt;
    }
  }
  out = std::string(gid.substr(0, 19));
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

core::Value nicFacts(const TopologyNic& nic) {
  core::Value v = core::Value::map();
  if (!nic.device.empty()) {
    v["device"] = nic.device;
    v["port"] = nic.port;
  }
  if (!nic.interface.empty()) v["interface"] = nic.interface;
  if (!nic.link_layer.empty()) v["link_layer"] = nic.link_layer;
  if (nic.subnet_prefix) v["subnet_prefix"] = *nic.subnet_prefix;
  if (nic.lid) v["lid"] = *nic.lid;
  if (nic.sm_lid) v["sm_lid"] = *nic.sm_lid;
  if (nic.lldp_known || !nic.neighbors.empty()) {
    core::Value list = core::Value::list();
    for (const auto& n : nic.neighbors) {
      core::Value m = core::Value::map();
      m["switch"] = n.chassis_name;
      m["switch_id"] = n.chassis_id;
      m["switch_id_subtype"] = n.chassis_id_subtype;
      m["switch_port"] = n.port_id;
      m["switch_port_subtype"] = n.port_id_subtype;
      m["switch_port_descr"] = n.port_descr;
      list.push(std::move(m));
    }
    v["neighbors"] = std::move(list);
  }
  return v;
}

std::vector<TopologyNic> joinLldp(std::vector<TopologyNic> nics, const LldpAnswer* lldp) {
  std::sort(nics.begin(), nics.end(), [](const TopologyNic& a, const TopologyNic& b) {
    return a.device != b.device ? a.device < b.device : a.port < b.port;
  });
  if (!lldp) return nics;
  std::vector<TopologyNic> only_lldp;
  for (const auto& li : lldp->interfaces) {
    auto it = std::find_if(nics.begin(), nics.end(), [&](const TopologyNic& n) {
      return !n.interface.empty() && n.interface == li.name;
    });
    TopologyNic* nic = nullptr;
    if (it != nics.end()) {
      nic = &*it;
    } else {
      if (li.neighbors.empty()) continue;  // an interface lldpd listens on, with no one there
      only_lldp.push_back(TopologyNic{});
      nic = &only_lldp.back();
      nic->interface = li.name;
    }
    nic->lldp_known = true;
    nic->neighbors = li.neighbors;
  }
  std::sort(only_lldp.begin(), only_lldp.end(),
            [](const TopologyNic& a, const TopologyNic& b) { return a.interface < b.interface; });
  for (auto& n : only_lldp) nics.push_back(std::move(n));
  return nics;
}

}  // namespace fabricwatch::facts
