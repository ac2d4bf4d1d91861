#pragma once
// `fabricwatch diagnose`: the culprits the fleet localisation rules (deploy/prometheus/
// localisation.yml, docs/fleet.md) name in a Prometheus, with their evidence and what to do.
// Nothing is inferred here: the rules decide, in the Prometheus that evaluates them; this reads
// their suspects and evidence series and the state of their alerts, and words them for a
// person (text) or a program (JSON).

#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "fleet/prometheus_api.h"

namespace fabricwatch::fleet {

struct Suspect {
  std::string level;  // switch, rail_switch, rail_plane, node_cut_off, node_unreachable, node_rail,
                      // node_rail_slow, node_rail_bandwidth, pair (docs/fleet.md)
  std::string alert;  // the alert that fires for it: FabricwatchNodeUnreachable ...
  std::string severity;
  std::string cluster, leaf, node, instance, rail, peer;  // what the suspect's series name
  double failing = 0;               // the evidence: witnesses (or peers) that fail ...
  std::optional<double> witnesses;  // ... of these (pairs have none)
  std::string alert_state;          // firing, pending, or empty (no alert yet)
  std::optional<double> since;      // Unix time the alert became active
  std::string summary;              // "12 of 13 probers fail to reach node-17 on rail 3"
  std::string advice;               // what to look at

  // A switch level's switch as the nodes below it name it by LLDP (the one most of them report;
  // empty where none does), and how many of them report it.
  std::string switch_name;
  std::optional<double> switch_nodes;
};

struct Diagnosis {
  std::string prometheus;         // the URL asked
  double time = 0;                // Unix time of the answer
  std::vector<Suspect> suspects;  // most severe first
  size_t nodes = 0;               // nodes whose fabricwatch_peer_self_info Prometheus holds
};

// What diagnose asks, by name: each level's suspects and evidence, the localisation alerts'
// state and the number of nodes seen. A cluster, when given, selects one (the `cluster` label).
struct LevelQueries {
  std::string name, promql;
};
std::vector<LevelQueries> diagnosisQueries(const std::string& cluster);

// Pure: the answers to diagnosisQueries() (by name; a missing one is empty) -> the suspects.
std::vector<Suspect> suspectsFrom(
    const std::vector<std::pair<std::string, std::vector<Sample>>>& answers);

// Asks the Prometheus behind `api`: checks that it evaluates the localisation rules (unless
// told not to), runs the queries, builds the diagnosis.
core::Result<Diagnosis> diagnose(const PrometheusApi& api, const std::string& cluster,
                                 bool require_rules);

std::string renderText(const Diagnosis& d);
std::string renderJson(const Diagnosis& d);

}  // namespace fabricwatch::fleet
