"""The alerts that tests/deploy/promtool/generate-localisation-tests expects, written out as
deploy/prometheus/localisation.yml renders them (promtool compares annotations whole), and the
naming of the synthetic fleet's nodes that both share."""

CLUSTER = "lab"


def node(i):
    return f"n{i:02d}"


def instance(i):
    return f"{node(i)}:19736"


def address(i):
    return f"10.0.0.{i}:19737"


def unreachable(j, failing, witnesses, leaf_label=None):
    labels = {"severity": "warning", "cluster": CLUSTER, "peer_node": node(j)}
    if leaf_label:
        labels["leaf"] = leaf_label
    return {"labels": labels,
            "annotations": {
                "summary": f"{failing} of {witnesses} probers fail to reach {node(j)}",
                "description": (
                    f"For 5 minutes, {failing} of the nodes that probe {node(j)} and reach their "
                    f"other peers have failed to reach its fabricwatch peer channel: the node is "
                    f"down, fabricwatch is not running there, or its inbound traffic is blocked. "
                    f"Its per-peer FabricwatchPeerUnreachable is inhibited while this fires."),
                "runbook_url": "docs/alerts.md#fabricwatchnodeunreachable"}}


def cut_off(i, failing, witnesses):
    return {"labels": {"severity": "warning", "cluster": CLUSTER, "job": "fabricwatch",
                       "instance": instance(i), "peer_node": node(i)},
            "annotations": {
                "summary": f"{node(i)} fails to reach {failing} of {witnesses} peers that "
                           f"others reach",
                "description": (
                    f"For 5 minutes, {instance(i)} has failed to reach {failing} of the peers it "
                    f"probed, while the other nodes that probe those peers reach them: its own "
                    f"network, NIC, routes or copy of the peer secret is the cause, not the "
                    f"peers. The per-peer symptoms it causes are inhibited while this fires."),
                "runbook_url": "docs/alerts.md#fabricwatchnodecutoff"}}


def rail_unreachable(j, rail, failing, witnesses, leaf_label=None):
    labels = {"severity": "critical", "cluster": CLUSTER, "peer_node": node(j), "rail": str(rail)}
    if leaf_label:
        labels["leaf"] = leaf_label
    return {"labels": labels,
            "annotations": {
                "summary": f"{failing} of {witnesses} probers fail to reach {node(j)} on rail "
                           f"{rail}",
                "description": (
                    f"For 5 minutes, {failing} of the nodes whose rail {rail} reaches their other "
                    f"peers have failed to measure fabric latency to {node(j)} on rail {rail}, "
                    f"while the node answers on the network: its NIC, cable or switch port of "
                    f"that rail is the cause. Jobs using the rail fail or fall back."),
                "runbook_url": "docs/alerts.md#fabricwatchnoderailunreachable"}}


def rail_slow(j, rail, slow, witnesses, typical):
    return {"labels": {"severity": "warning", "cluster": CLUSTER, "peer_node": node(j),
                       "rail": str(rail)},
            "annotations": {
                "summary": f"{slow} of {witnesses} probers measure {node(j)} on rail {rail} at "
                           f"over 4x the rail's typical latency",
                "description": (
                    f"For 15 minutes, {slow} of the nodes whose other pairs on rail {rail} are "
                    f"not slow have measured a median one-way latency to {node(j)} on that rail "
                    f"of over 4 times the rail's typical (its median over the cluster's pairs, "
                    f"{typical}): its NIC, cable or switch port of that rail is degraded (a "
                    f"lower trained rate, errors and retransmits), not down. Jobs over the rail "
                    f"run at its pace."),
                "runbook_url": "docs/alerts.md#fabricwatchnoderailslow"}}


def switch(name, suspect, nodes, lldp=None):
    """lldp: (switch, nodes reporting it), where the leaf's nodes name it by LLDP."""
    said = f" By LLDP, {lldp[1]} of its nodes are cabled to switch {lldp[0]}." if lldp else ""
    return {"labels": {"severity": "critical", "cluster": CLUSTER, "leaf": name},
            "annotations": {
                "summary": (f"Switch {lldp[0]} of leaf {name}: " if lldp else "") +
                           f"{suspect} of the {nodes} nodes below leaf {name} are unreachable or "
                           f"cut off",
                "description": (
                    f"For 5 minutes, {suspect} nodes below leaf switch {name} (the `leaf` "
                    f"topology label), more than half of them, have been unreachable or cut off "
                    f"at once: the switch, its uplinks or its power is the cause, not the nodes. "
                    f"Their node alerts are inhibited while this fires.{said}"),
                "runbook_url": "docs/alerts.md#fabricwatchswitchsuspect"}}


def rail_switch(name, rail, dark, nodes, lldp=None):
    """lldp: (switch, nodes reporting it), where the leaf's nodes name it by LLDP."""
    said = (f" By LLDP, rail {rail} of {lldp[1]} of its nodes is cabled to switch {lldp[0]}."
            if lldp else "")
    return {"labels": {"severity": "critical", "cluster": CLUSTER, "leaf": name,
                       "rail": str(rail)},
            "annotations": {
                "summary": (f"Rail {rail} switch {lldp[0]} of leaf {name}: rail" if lldp else
                            "Rail") +
                           f" {rail} reaches no peer on {dark} of the {nodes} nodes below leaf "
                           f"{name} that measure it, and works elsewhere",
                "description": (
                    f"For 5 minutes, rail {rail} of {dark} nodes below leaf {name}, more than half "
                    f"of them, has reached none of its peers, while the rail works on the "
                    f"cluster's other leaves: the leaf's switch for rail {rail} (or its uplinks) "
                    f"is the cause, not the nodes. Their rail alerts are inhibited while this "
                    f"fires; jobs using the rail there fail or fall back.{said}"),
                "runbook_url": "docs/alerts.md#fabricwatchrailswitchsuspect"}}


def rail_plane(rail, share):
    return {"labels": {"severity": "critical", "cluster": CLUSTER, "rail": str(rail)},
            "annotations": {
                "summary": f"Rail {rail} fails on {share} of the cluster's measured pairs",
                "description": (
                    f"For 5 minutes, more than half of the fabric probes on rail {rail} have "
                    f"failed across the cluster while the peer channel reaches most peers: the "
                    f"rail's switches or plane (a spine, a subnet manager, a fabric-wide "
                    f"setting) is the cause, not one node. Jobs using the rail fail or fall "
                    f"back."),
                "runbook_url": "docs/alerts.md#fabricwatchrailplanesuspect"}}


def pair(i, j):
    return {"labels": {"severity": "warning", "cluster": CLUSTER, "job": "fabricwatch",
                       "instance": instance(i), "peer": address(j), "peer_node": node(j)},
            "annotations": {
                "summary": f"{instance(i)} cannot reach {node(j)} ({address(j)}), while both "
                           f"reach their other peers",
                "description": (
                    f"For 5 minutes, {instance(i)} has failed to reach the fabricwatch peer "
                    f"channel of {node(j)} at {address(j)}, while it reaches most of its other "
                    f"peers and most of {node(j)}'s other probers reach it: the path between the "
                    f"two (a route, an ACL, a firewall rule) is the cause."),
                "runbook_url": "docs/alerts.md#fabricwatchpairunreachable"}}


def peer_unreachable(j, failing):
    return {"labels": {"severity": "warning", "cluster": CLUSTER, "peer": address(j),
                       "peer_node": node(j)},
            "annotations": {
                "summary": f"fabricwatch peer {node(j)} ({address(j)}) is unreachable",
                "description": (
                    f"{failing} node(s) have failed to reach the fabricwatch peer channel of "
                    f"{node(j)} at {address(j)} in every probe for 5 minutes."),
                "runbook_url": "docs/alerts.md#fabricwatchpeerunreachable"}}


def rail_bandwidth_low(j, rail, low, witnesses, best, leaf_label=None):
    labels = {"severity": "warning", "cluster": CLUSTER, "job": "fabricwatch",
              "instance": instance(j), "peer_node": node(j), "rail": str(rail)}
    if leaf_label:
        labels["leaf"] = leaf_label
    return {"labels": labels,
            "annotations": {
                "summary": f"{low} of {witnesses} probers measure {node(j)} on rail {rail} at "
                           f"under 60% of the rail's best bandwidth",
                "description": (
                    f"For 15 minutes, {low} of the nodes whose other pairs on rail {rail} are "
                    f"not low have measured bandwidth to {node(j)} on that rail, in their "
                    f"bandwidth rounds of the last 20 minutes, under 60% of the rail's best (the "
                    f"90th percentile over the cluster's pairs, {best}B/s): its NIC, cable, "
                    f"switch port or PCIe link of that rail is degraded (a lower trained rate or "
                    f"width, errors and retransmits), not down. Jobs over the rail run at its "
                    f"pace."),
                "runbook_url": "docs/alerts.md#fabricwatchnoderailbandwidthlow"}}
