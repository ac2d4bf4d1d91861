"""The fleet fabric dashboard: what the localisation rules (deploy/prometheus/localisation.yml,
docs/fleet.md) blame, level by level, the evidence behind a chosen node, and each rail's
matrix of pairs. It reads the rules' series, so it needs localisation.yml loaded."""
from dashboard_kit import (C, IN_GROUP, CLUSTER_VAR, GROUP_VAR, q, query_var, stat, table,
                           timeseries, row, mappings, thresholds, dashboard)

# The resource group of a node named by peer_node (the series about a probed node carry its
# mesh name, not its instance): its fabricwatch_peer_self_info joined to its group.
NODE_GROUP = ("* on (cluster, peer_node) group_left (resource_group) "
              "max by (cluster, peer_node, resource_group) "
              "(fabricwatch_peer_self_info{" + C + "} " + IN_GROUP + ")")
CUT_OFF = "instance:fabricwatch_localisation_cut_off:suspect"
UNREACHABLE = "peer_node:fabricwatch_localisation_unreachable:suspect"
RAIL = "peer_node_rail:fabricwatch_localisation_rail_unreachable:suspect"
PAIR = "instance_peer:fabricwatch_localisation_pair_unreachable:suspect"
RAIL_SLOW = "peer_node_rail:fabricwatch_localisation_rail_slow:suspect"
RAIL_BW = "peer_node_rail:fabricwatch_localisation_rail_bandwidth_low:suspect"
SWITCH = "cluster_leaf:fabricwatch_localisation_switch:suspect"
PLANE = "cluster_rail:fabricwatch_localisation_rail_plane:suspect"
RAIL_SWITCH = "cluster_leaf_rail:fabricwatch_localisation_rail_switch:suspect"
NODE = 'cluster=~"$cluster", peer_node="$node"'

NODE_VAR = query_var("node", "Node (suspect or not)",
                     'label_values(fabricwatch_peer_self_info{cluster=~"$cluster"}, peer_node)',
                     include_all=False)
RAIL_VAR = query_var("rail", "Rail",
                     'label_values(fabricwatch_probe_fabric_peer_rail_up{cluster=~"$cluster"}, '
                     'rail)', include_all=False)


def level(expr, name):
    return f'label_replace({expr}, "level", "{name}", "", "")'


def fleet_fabric():
    suspects = " or ".join([
        level(f"{SWITCH}{{{C}}}", "switch"),
        level(f"{RAIL_SWITCH}{{{C}}}", "rail switch of a leaf"),
        level(f"{PLANE}{{{C}}}", "rail plane"),
        level(f"{CUT_OFF}{{{C}}} {IN_GROUP}", "node cut off"),
        level(f"{UNREACHABLE}{{{C}}} {NODE_GROUP}", "node unreachable"),
        level(f"{RAIL}{{{C}}} {NODE_GROUP}", "rail of a node"),
        level(f"{RAIL_SLOW}{{{C}}} {NODE_GROUP}", "rail of a node slow"),
        level(f"{RAIL_BW}{{{C}}} {NODE_GROUP}", "rail of a node low in bandwidth"),
        level(f"{PAIR}{{{C}}} {IN_GROUP}", "pair"),
    ])
    return dashboard(
        "fabricwatch-fleet-fabric", "fabricwatch / Fleet fabric",
        "Which node, NIC (rail) or path the fleet's probes blame (the localisation rules), "
        "the evidence behind a node, and each rail's matrix of pairs.",
        [CLUSTER_VAR, GROUP_VAR, NODE_VAR, RAIL_VAR],
        [
            stat("Nodes in the mesh", f"count(fabricwatch_peer_self_info{{{C}}} {IN_GROUP})",
                 "Nodes whose fabricwatch reports its mesh name, in the selected groups.",
                 no_value="no mesh"),
            stat("Switches", f"count({SWITCH}{{{C}}}) or vector(0)",
                 "Leaf switches most of whose nodes are suspect at once (the `leaf` topology "
                 "label; all groups).", bad_at=1),
            stat("Rail switches", f"count({RAIL_SWITCH}{{{C}}}) or vector(0)",
                 "A leaf's switch for one rail: the rail reaches nothing on most of the leaf's "
                 "nodes and works on other leaves (all groups).", bad_at=1),
            stat("Rail planes", f"count({PLANE}{{{C}}}) or vector(0)",
                 "Rails that fail on most of the cluster's pairs while tcp works (all groups).",
                 bad_at=1),
            stat("Nodes cut off", f"count({CUT_OFF}{{{C}}} {IN_GROUP}) or vector(0)",
                 "Nodes that fail most of the peers others reach: their own network, NIC or "
                 "peer secret.", bad_at=1),
            stat("Nodes unreachable", f"count({UNREACHABLE}{{{C}}} {NODE_GROUP}) or vector(0)",
                 "Nodes most of whose witnesses fail to reach them: down, fabricwatch not "
                 "running, or inbound traffic blocked.", bad_at=1),
            stat("Rails of a node", f"count({RAIL}{{{C}}} {NODE_GROUP}) or vector(0)",
                 "(node, rail) pairs whose witnesses fail on that rail alone: a NIC, cable or "
                 "switch port.", bad_at=1),
            stat("Rails slow", f"count({RAIL_SLOW}{{{C}}} {NODE_GROUP}) or vector(0)",
                 "(node, rail) pairs most witnesses measure at over 4x the rail's typical "
                 "latency: degraded, not down (grey failure).", bad_at=1),
            stat("Rails low in bandwidth", f"count({RAIL_BW}{{{C}}} {NODE_GROUP}) or vector(0)",
                 "(node, rail) pairs most witnesses measure at under 60% of the rail's best "
                 "bandwidth over the last 20 minutes: degraded, not down (grey failure).",
                 bad_at=1),
            stat("Pairs", f"count({PAIR}{{{C}}} {IN_GROUP}) or vector(0)",
                 "Pairs that fail while both ends are fine with others: a route, ACL or "
                 "firewall rule.", bad_at=1),
            table("Suspects",
                  [q(suspects, instant=True, table=True)],
                  "Every suspect the rules name, at its level (a higher level drops the lower "
                  "suspects it explains); the value is the evidence: witnesses (or peers) "
                  "failing. `fabricwatch diagnose` prints the same with what to do.",
                  w=24, rename={"Value": "failing"}, hide=["resource_group"]),
            row("Evidence for a node"),
            timeseries("Probers of $node",
                       [q(f"peer_node:fabricwatch_localisation_tcp_witness_probers:count{{{NODE}}}",
                          "witnesses"),
                        q("peer_node:fabricwatch_localisation_tcp_witness_probers_failing:sum"
                          f"{{{NODE}}}", "witnesses failing")],
                       "Nodes that probe $node and reach most of their other peers (its "
                       "witnesses), and those of them that fail to reach it: unreachable at 3 or "
                       "more and more than half.", w=8),
            timeseries("Peers $node probes",
                       [q(f"instance:fabricwatch_localisation_tcp_witness_peers:count{{{C}}} "
                          f"* on (cluster, job, instance) group_left () "
                          f"fabricwatch_peer_self_info{{{NODE}}}", "peers others reach"),
                        q(f"instance:fabricwatch_localisation_tcp_witness_peers_failing:sum{{{C}}} "
                          f"* on (cluster, job, instance) group_left () "
                          f"fabricwatch_peer_self_info{{{NODE}}}", "of them failing")],
                       "The peers $node probed that their other probers reach, and those $node "
                       "fails: cut off at 3 or more and more than half.", w=8),
            timeseries("Rails of $node",
                       [q("peer_node_rail:fabricwatch_localisation_rail_witness_probers:count"
                          f"{{{NODE}}}", "rail {{rail}} witnesses"),
                        q("peer_node_rail:fabricwatch_localisation_rail_witness_probers_failing"
                          f":sum{{{NODE}}}", "rail {{rail}} failing")],
                       "Per rail, the probers whose same rail reaches most of their peers, and "
                       "those of them that fail on $node's rail.", w=8),
            row("Pairs on rail $rail"),
            table("Fabric reachability on rail $rail",
                  [q(f"max by (instance, peer_node) (fabricwatch_probe_fabric_peer_rail_up"
                     f"{{{C}, rail=\"$rail\"}} {IN_GROUP})", instant=True, table=True)],
                  "Rows: probing node (its instance); columns: probed node (its mesh name); 1 the fabric probe reached it on "
                  "this rail in the last round, 0 it did not. A column of 0s is the probed "
                  "node's NIC of this rail; a row of 0s the prober's.", w=24, h=10,
                  defaults={"mappings": mappings({"0": "down", "1": "up"}),
                            "thresholds": thresholds("red", (1, "green")),
                            "color": {"mode": "thresholds"},
                            "custom": {"cellOptions": {"type": "color-background"}}},
                  extra_transformations=[{"id": "groupingToMatrix",
                                          "options": {"rowField": "instance",
                                                      "columnField": "peer_node",
                                                      "valueField": "Value"}}]),
            timeseries("Fabric latency on rail $rail (worst pairs)",
                       [q(f"topk(10, max by (instance, peer_node) ("
                          f"fabricwatch_probe_fabric_peer_rail_latency_seconds{{{C}, "
                          f"rail=\"$rail\"}} {IN_GROUP}))",
                          "{{instance}} -> {{peer_node}}"),
                        q("max(cluster_rail:fabricwatch_probe_fabric_peer_rail_latency_seconds"
                          f":median{{{C}, rail=\"$rail\"}})", "the rail's typical (median)")],
                       "The ten pairs with the highest median one-way latency on this rail, and "
                       "the rail's typical: a slow NIC shows in one node's column; over 4x the "
                       "typical from most witnesses is FabricwatchNodeRailSlow.", unit="s",
                       w=24),
            timeseries("Fabric bandwidth on rail $rail (lowest pairs)",
                       [q(f"bottomk(10, min by (instance, peer_node) (last_over_time("
                          f"fabricwatch_probe_fabric_peer_rail_bandwidth_bytes_per_second{{{C}, "
                          f"rail=\"$rail\"}}[20m]) {IN_GROUP}))",
                          "{{instance}} -> {{peer_node}}"),
                        q("max(cluster_rail:fabricwatch_probe_fabric_peer_rail_bandwidth_bytes"
                          f"_per_second:p90{{{C}, rail=\"$rail\"}})", "the rail's best (p90)"),
                        q("max(cluster_rail:fabricwatch_localisation_rail_bandwidth_low_"
                          f"threshold:bytes_per_second{{{C}, rail=\"$rail\"}})",
                          "low under (60% of the best)")],
                       "The ten pairs with the lowest bandwidth on this rail in the last 20 "
                       "minutes (each prober measures 2 peers a rail every bandwidth round), the "
                       "rail's best and the line under which a pair is low: under it from most "
                       "witnesses is FabricwatchNodeRailBandwidthLow.", unit="Bps", w=24),
        ])
