#include "fleet/diagnosis.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

namespace fabricwatch::fleet {
namespace {

constexpr const char* kRuleGroup = "fabricwatch-localisation";
constexpr const char* kAlerts =
    "FabricwatchSwitchSuspect|FabricwatchRailSwitchSuspect|FabricwatchRailPlaneSuspect|"
    "FabricwatchNodeCutOff|"
    "FabricwatchNodeUnreachable|FabricwatchNodeRailUnreachable|FabricwatchNodeRailSlow|"
    "FabricwatchNodeRailBandwidthLow|FabricwatchPairUnreachable";

// One level of localisation.yml: its suspect series, the series of its evidence's whole (the
// witnesses), the labels that name a suspect, its alert, and for a switch the series that name
// it by LLDP (one per switch its nodes report, valued by how many do).
struct Level {
  const char* level;
  const char* suspect;
  const char* whole;  // null: the level has no count of witnesses (a pair)
  const char* on;     // the labels that name one suspect
  const char* alert;
  const char* severity;
  const char* lldp = nullptr;
};
constexpr Level kLevels[] = {
    {"switch", "cluster_leaf:fabricwatch_localisation_switch:suspect",
     "cluster_leaf:fabricwatch_topology_nodes:count", "cluster, leaf", "FabricwatchSwitchSuspect",
     "critical", "cluster_leaf_switch:fabricwatch_topology_nodes:max1h"},
    {"rail_switch", "cluster_leaf_rail:fabricwatch_localisation_rail_switch:suspect",
     "cluster_leaf_rail:fabricwatch_localisation_rail_probers:count", "cluster, leaf, rail",
     "FabricwatchRailSwitchSuspect", "critical",
     "cluster_leaf_rail_switch:fabricwatch_topology_nodes:max1h"},
    {"rail_plane", "cluster_rail:fabricwatch_localisation_rail_plane:suspect", nullptr,
     "cluster, rail", "FabricwatchRailPlaneSuspect", "critical"},
    {"node_cut_off", "instance:fabricwatch_localisation_cut_off:suspect",
     "instance:fabricwatch_localisation_tcp_witness_peers:count", "cluster, job, instance",
     "FabricwatchNodeCutOff", "warning"},
    {"node_unreachable", "peer_node:fabricwatch_localisation_unreachable:suspect",
     "peer_node:fabricwatch_localisation_tcp_witness_probers:count", "cluster, peer_node",
     "FabricwatchNodeUnreachable", "warning"},
    {"node_rail", "peer_node_rail:fabricwatch_localisation_rail_unreachable:suspect",
     "peer_node_rail:fabricwatch_localisation_rail_witness_probers:count",
     "cluster, peer_node, rail", "FabricwatchNodeRailUnreachable", "critical"},
    {"node_rail_slow", "peer_node_rail:fabricwatch_localisation_rail_slow:suspect",
     "peer_node_rail:fabricwatch_localisation_rail_slow_witness_probers:count",
     "cluster, peer_node, rail", "FabricwatchNodeRailSlow", "warning"},
    {"node_rail_bandwidth", "peer_node_rail:fabricwatch_localisation_rail_bandwidth_low:suspect",
     "peer_node_rail:fabricwatch_localisation_rail_bandwidth_witness_probers:count",
     "cluster, peer_node, rail", "FabricwatchNodeRailBandwidthLow", "warning"},
    {"pair", "instance_peer:fabricwatch_localisation_pair_unreachable:suspect", nullptr,
     "cluster, job, instance, peer", "FabricwatchPairUnreachable", "warning"},
};

std::vector<std::string> onLabels(const char* on) {
  std::vector<std::string> out;
  std::stringstream in(on);
  for (std::string l; std::getline(in, l, ',');) {
    l.erase(0, l.find_first_not_of(' '));
    out.push_back(l);
  }
  return out;
}

std::string keyOf(const Sample& s, const char* on) {
  std::string key;
  for (const auto& l : onLabels(on)) {
    auto it = s.labels.find(l);
    key += (it == s.labels.end() ? "" : it->second) + '\x1f';
  }
  return key;
}

std::string labelOf(const Sample& s, const std::string& name) {
  auto it = s.labels.find(name);
  return it == s.labels.end() ? "" : it->second;
}

std::string promqlString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string count(double v) {
  std::ostringstream o;
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15)
    o << static_cast<long long>(v);
  else
    o << v;
  return o.str();
}

// A Unix time as ISO 8601; "unknown" for what no clock gives (NaN, infinities, before 1970 or
// past 9999: Prometheus answers with whatever a series holds, and a cast would be undefined).
std::string isoTime(double t) {
  if (!std::isfinite(t) || t < 0 || t > 253402300799.0) return "unknown";
  std::time_t s = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

void word(Suspect& s) {
  std::string of = s.witnesses ? count(s.failing) + " of " + count(*s.witnesses) : count(s.failing);
  const std::string& node = s.node.empty() ? s.instance : s.node;
  const std::string by = s.switch_name.empty() ? "" : ", " + s.switch_name + " by LLDP";
  if (s.level == "switch") {
    s.summary =
        (s.switch_name.empty() ? "" : "switch " + s.switch_name + " of leaf " + s.leaf + ": ") +
        of + " nodes below leaf " + s.leaf + " are unreachable or cut off";
    s.advice = "the leaf switch " + s.leaf + (by.empty() ? "" : by + ",") +
               " itself: its power, its uplinks to the spine, its configuration; the node "
               "alerts below it are its symptoms";
  } else if (s.level == "rail_switch") {
    s.summary = (s.switch_name.empty() ? ""
                                       : "rail " + s.rail + " switch " + s.switch_name +
                                             " of leaf " + s.leaf + ": ") +
                "rail " + s.rail + " reaches no peer on " + of + " nodes below leaf " + s.leaf +
                " that measure it, and works elsewhere";
    s.advice = "the switch of rail " + s.rail + " for leaf " + s.leaf + by +
               " (in a rail-optimised fabric, the rail's own leaf switch): its power, its "
               "uplinks, its ports to these nodes; the nodes' rail alerts are its symptoms";
  } else if (s.level == "rail_plane") {
    s.summary = "rail " + s.rail + " fails on " + count(std::round(s.failing * 100)) +
                "% of the cluster's measured pairs";
    s.advice =
        "the rail's switches or plane: its spine, its subnet manager (InfiniBand), a "
        "fabric-wide setting (PFC, MTU, a firmware roll-out), not one node";
  } else if (s.level == "node_cut_off") {
    s.summary = node + " fails to reach " + of + " peers that others reach";
    s.advice =
        "the node itself is the cause, not its peers: its network interfaces and routes, its "
        "NICs, a firewall on it, or its copy of the peer secret (a wrong one fails every peer); "
        "run `fabricwatch check` there and read its fabricwatch log";
  } else if (s.level == "node_unreachable") {
    s.summary = of + " probers fail to reach " + node;
    s.advice = "is " + node +
               " up, and fabricwatch running there? Is its inbound traffic on the peer port "
               "blocked (a security group, a NetworkPolicy, a host firewall)?";
  } else if (s.level == "node_rail") {
    s.summary = of + " probers fail to reach " + node + " on rail " + s.rail;
    s.advice = "the NIC of rail " + s.rail + " on " + node +
               ", its cable or its switch port: the port's state and rate (`fabricwatch facts` "
               "there, rdma section), the switch's view of the port; jobs using the rail fail "
               "or fall back to slower paths";
  } else if (s.level == "node_rail_slow") {
    s.summary = of + " probers measure " + node + " on rail " + s.rail +
                " at over 4x the rail's typical latency";
    s.advice = "the NIC of rail " + s.rail + " on " + node +
               " is degraded, not down: its trained rate and width, its PCIe link, its error "
               "and retransmit counters, congestion (PFC pauses, ECN marks), then the cable and "
               "the switch port; jobs with ranks there run at its pace";
  } else if (s.level == "node_rail_bandwidth") {
    s.summary = of + " probers measure " + node + " on rail " + s.rail +
                " at under 60% of the rail's best bandwidth";
    s.advice = "the NIC of rail " + s.rail + " on " + node +
               " moves less than its peers', and is not down: its trained rate and width, its "
               "PCIe link (a slot trained at x8 halves it), its error and retransmit counters, "
               "congestion (PFC pauses), then the cable and the switch port; jobs with ranks "
               "there run at its pace";
  } else {
    s.summary = s.instance + " cannot reach " + node + " (" + s.peer +
                "), while both reach their other peers";
    s.advice =
        "the path between the two: a route, an ACL, a firewall rule or a security group "
        "that one of them has and the others lack";
  }
}

int rank(const Suspect& s) {
  for (size_t i = 0; i < std::size(kLevels); ++i)
    if (s.level == kLevels[i].level) return static_cast<int>(i);
  return 99;
}

}  // namespace

std::vector<LevelQueries> diagnosisQueries(const std::string& cluster) {
  std::string sel = cluster.empty() ? "" : "cluster=" + promqlString(cluster);
  auto with = [&](const char* metric) { return std::string(metric) + "{" + sel + "}"; };
  std::vector<LevelQueries> out;
  for (const auto& l : kLevels) {
    out.push_back({l.level, with(l.suspect)});
    if (l.whole)
      out.push_back({std::string(l.level) + ":whole",
                     with(l.whole) + " and on (" + l.on + ") " + with(l.suspect)});
    if (l.lldp)
      out.push_back({std::string(l.level) + ":lldp",
                     with(l.lldp) + " and on (" + l.on + ") " + with(l.suspect)});
  }
  std::string alerts =
      std::string("alertname=~\"") + kAlerts + "\"" + (sel.empty() ? "" : ", " + sel);
  out.push_back({"alerts", "ALERTS{" + alerts + "}"});
  out.push_back({"alerts_since", "ALERTS_FOR_STATE{" + alerts + "}"});
  out.push_back({"nodes", "count(" + with("fabricwatch_peer_self_info") + ")"});
  return out;
}

std::vector<Suspect> suspectsFrom(
    const std::vector<std::pair<std::string, std::vector<Sample>>>& answers) {
  std::map<std::string, const std::vector<Sample>*> by_name;
  for (const auto& [name, samples] : answers) by_name[name] = &samples;
  auto answer = [&](const std::string& name) -> const std::vector<Sample>& {
    static const std::vector<Sample> none;
    auto it = by_name.find(name);
    return it == by_name.end() ? none : *it->second;
  };
  std::vector<Suspect> out;
  for (const auto& l : kLevels) {
    std::map<std::string, double> whole, since;
    std::map<std::string, std::string> state;
    std::map<std::string, std::pair<std::string, double>> named;  // the most reported switch
    if (l.whole)
      for (const auto& s : answer(std::string(l.level) + ":whole")) whole[keyOf(s, l.on)] = s.value;
    if (l.lldp)
      for (const auto& s : answer(std::string(l.level) + ":lldp")) {
        std::string name = labelOf(s, "switch");
        if (name.empty() || !std::isfinite(s.value)) continue;
        auto [it, fresh] = named.try_emplace(keyOf(s, l.on), name, s.value);
        if (!fresh && (s.value > it->second.second ||
                       (s.value == it->second.second && name < it->second.first)))
          it->second = {name, s.value};
      }
    for (const auto& s : answer("alerts"))
      if (labelOf(s, "alertname") == l.alert) state[keyOf(s, l.on)] = labelOf(s, "alertstate");
    for (const auto& s : answer("alerts_since"))
      if (labelOf(s, "alertname") == l.alert) since[keyOf(s, l.on)] = s.value;
    for (const auto& s : answer(l.level)) {
      Suspect x;
      x.level = l.level;
      x.alert = l.alert;
      x.severity = l.severity;
      x.cluster = labelOf(s, "cluster");
      x.node = labelOf(s, "peer_node");
      x.instance = labelOf(s, "instance");
      x.rail = labelOf(s, "rail");
      x.leaf = labelOf(s, "leaf");
      x.peer = labelOf(s, "peer");
      x.failing = s.value;
      std::string key = keyOf(s, l.on);
      if (auto it = whole.find(key); it != whole.end()) x.witnesses = it->second;
      if (auto it = state.find(key); it != state.end()) x.alert_state = it->second;
      if (auto it = since.find(key); it != since.end()) x.since = it->second;
      if (auto it = named.find(key); it != named.end()) {
        x.switch_name = it->second.first;
        x.switch_nodes = it->second.second;
      }
      word(x);
      out.push_back(std::move(x));
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const Suspect& a, const Suspect& b) {
    if ((a.severity == "critical") != (b.severity == "critical")) return a.severity == "critical";
    if (rank(a) != rank(b)) return rank(a) < rank(b);
    return std::tie(a.cluster, a.leaf, a.node, a.instance, a.rail, a.peer) <
           std::tie(b.cluster, b.leaf, b.node, b.instance, b.rail, b.peer);
  });
  return out;
}

core::Result<Diagnosis> diagnose(const PrometheusApi& api, const std::string& cluster,
                                 bool require_rules) {
  if (require_rules) {
    auto groups = api.ruleGroups();
    if (!groups) return groups.error();
    if (std::find(groups->begin(), groups->end(), kRuleGroup) == groups->end())
      return core::Error{api.url() +
                         " does not evaluate fabricwatch's localisation rules (rule "
                         "group " +
                         kRuleGroup +
                         " of deploy/prometheus/localisation.yml): load "
                         "them there, or point --prometheus.url at the Prometheus or ruler that "
                         "does (--prometheus.require-rules=false skips this check)"};
  }
  Diagnosis d;
  d.prometheus = api.url();
  d.time = static_cast<double>(std::time(nullptr));
  std::vector<std::pair<std::string, std::vector<Sample>>> answers;
  for (const auto& q : diagnosisQueries(cluster)) {
    auto r = api.query(q.promql);
    if (!r) return core::Error{q.promql + ": " + r.error().message};
    answers.emplace_back(q.name, std::move(*r));
  }
  for (const auto& [name, samples] : answers)
    if (name == "nodes" && !samples.empty()) d.nodes = static_cast<size_t>(samples[0].value);
  if (d.nodes == 0)
    return core::Error{api.url() + " holds no fabricwatch_peer_self_info" +
                       (cluster.empty() ? "" : " in cluster " + promqlString(cluster)) +
                       ": it scrapes no fabricwatch daemon with the peer mesh on, so nothing "
                       "can be vouched for"};
  d.suspects = suspectsFrom(answers);
  return d;
}

std::string renderText(const Diagnosis& d) {
  std::ostringstream o;
  o << "fabricwatch diagnose: ";
  if (d.suspects.empty())
    o << "nothing suspect";
  else
    o << d.suspects.size() << (d.suspects.size() == 1 ? " suspect" : " suspects");
  o << " among " << d.nodes << " nodes (" << d.prometheus << ", " << isoTime(d.time) << ")\n";
  for (const auto& s : d.suspects) {
    o << "\n" << s.severity << "  " << s.level << "  ";
    if (s.level == "pair")
      o << s.instance << " -> " << (s.node.empty() ? s.peer : s.node);
    else if (s.level == "switch")
      o << "leaf " << s.leaf << (s.switch_name.empty() ? "" : " switch " + s.switch_name);
    else if (s.level == "rail_switch")
      o << "leaf " << s.leaf << " rail " << s.rail
        << (s.switch_name.empty() ? "" : " switch " + s.switch_name);
    else if (s.level == "rail_plane")
      o << "rail " << s.rail;
    else
      o << (s.node.empty() ? s.instance : s.node) << (s.rail.empty() ? "" : " rail " + s.rail);
    if (!s.cluster.empty()) o << "  (cluster " << s.cluster << ")";
    o << "\n  " << s.summary << "\n  alert " << s.alert << ": "
      << (s.alert_state.empty() ? "not raised (the rules have not held it for its for: yet)"
                                : s.alert_state);
    if (s.since) o << " since " << isoTime(*s.since);
    o << "\n  what to do: " << s.advice << "\n";
  }
  return o.str();
}

std::string renderJson(const Diagnosis& d) {
  using nlohmann::json;
  json doc = {{"prometheus", d.prometheus}, {"time", isoTime(d.time)}, {"nodes", d.nodes}};
  json list = json::array();
  for (const auto& s : d.suspects) {
    json j = {{"level", s.level},     {"severity", s.severity}, {"alert", s.alert},
              {"failing", s.failing}, {"summary", s.summary},   {"advice", s.advice}};
    for (auto [k, v] : {std::pair{"cluster", &s.cluster},
                        {"leaf", &s.leaf},
                        {"node", &s.node},
                        {"instance", &s.instance},
                        {"rail", &s.rail},
                        {"peer", &s.peer}})
      if (!v->empty()) j[k] = *v;
    if (!s.switch_name.empty()) j["switch"] = s.switch_name;
    if (s.switch_nodes) j["switch_nodes"] = *s.switch_nodes;
    if (s.witnesses) j["witnesses"] = *s.witnesses;
    if (!s.alert_state.empty()) j["alert_state"] = s.alert_state;
    if (s.since) j["since"] = isoTime(*s.since);
    list.push_back(std::move(j));
  }
  doc["suspects"] = std::move(list);
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace fabricwatch::fleet
