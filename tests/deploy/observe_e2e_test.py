#!/usr/bin/env python3
"""End to end with real components: five `fabricwatch serve` instances on copies of the fixture
roots (p5_efa, ib_ndr, broken, roce_v2, erdma) with the peer mesh and the fabric probe (tcp
provider) on, a real Prometheus
scraping them every second with the shipped rules, a real Alertmanager, and a webhook receiver
run here. The test

1. runs every dashboard query and template-variable query (variables substituted) and every
   recording rule against that Prometheus, and fails if one never returns data;
2. injects faults (a port DOWN, a link error counter rising, a flapping link, EFA retransmits,
   a GPU link at x8, a job's NCCL log without GPUDirect RDMA, a policy violation, failed
   config and policy reloads,
   a peer cut off, a missed secret rotation, a broken discovery file, a pending member, a fabric
   probe without a provider, a node whose fabric latency rises and bandwidth falls and whose
   fabric probes fail and, when a private network namespace is available, a DNS failure),
   asserts through Prometheus' HTTP
   API and the webhook that the matching alerts fire, repairs, and asserts they resolve;
3. checks that every alert fired at some point, except those that need a state no live
   instance here can be put in (listed in NOT_REPRODUCED with why; promtool tests cover
   them). Likewise the dashboard queries that need a GPU (NCCL bandwidth) are listed one by
   one in NEEDS_GPU; a listed query that does return data, or names no panel, is an error.

Time: the shipped rules run 60 times faster: in a copy of the rule files, every `for:` and
every range selector in minutes or hours is divided by 60 (`for: 5m` -> `for: 5s`,
`[10m]` -> `[10s]`); alerts.yml promises to write durations that way and check_deploy.py
checks it. Prometheus scrapes and evaluates every second.

Isolation: when it can, the test re-executes itself in a private network and mount namespace
(`unshare --net --mount`): only loopback exists there, so no DNS query can leave the machine,
and /etc/hosts is a file of the test's, through which it breaks and repairs a peer's name.
Without that (no root, FW_TEST_NO_NETNS=1) it runs on the host's loopback with IP literals as
node names and skips the DNS fault. Every process it starts dies with it (PR_SET_PDEATHSIG)
and is stopped in a finally block; storage and configuration live in a temporary directory.

Usage: observe_e2e_test.py [--keep]   (FW_BINARY, FW_SOURCE_DIR as for the other e2e tests)
"""
import glob
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import lab_tools
from lab_tools import Webhook, free_port, matches

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.environ.get("FW_SOURCE_DIR", os.path.normpath(os.path.join(HERE, "../..")))
BINARY = os.environ.get("FW_BINARY", os.path.join(SOURCE, "build/fabricwatch"))
INSIDE = "FW_OBSERVE_E2E_INSIDE"
SCALE = 60  # the rules run this many times faster
DEADLINE = float(os.environ.get("FW_OBSERVE_E2E_DEADLINE", "150"))  # seconds per wait (ASan, load)
# The rule files the test loads, as a Prometheus installation does (docs/alerts.md).
RULE_FILES = ("recording.yml", "alerts.yml", "localisation.yml")
NOT_REPRODUCED = {
    "FabricwatchAbsent": "needs Prometheus to have no fabricwatch target at all",
    # Localisation needs at least 3 witnesses fine with others (docs/fleet.md). Of the three
    # healthy instances, ib and erdma are reloaded during the faults, and a reload starts a
    # new mesh whose members are pending until they answer: they never probe the stopped roce
    # again, which leaves it one witness (measured: broken alone, 1 of 1 failing). p5's
    # FabricwatchNodeCutOff is reproduced: p5 re-probes the peers it fails.
    "FabricwatchNodeUnreachable": "needs 3 witnesses of the stopped roce; ib and erdma are "
                                  "reloaded during the faults and probe only members that "
                                  "answered since",
    "FabricwatchNodeRailUnreachable": "needs 3 witnesses on one rail besides the faulted "
                                      "nodes, and a rail that fails on one node alone",
    "FabricwatchPairUnreachable": "needs one path that fails while both ends reach 2 others",
    "FabricwatchNodeRailSlow": "needs 3 witnesses whose other pairs on a rail are not slow, "
                               "measuring one node slow there",
    "FabricwatchNodeRailBandwidthLow": "needs 3 witnesses whose other pairs on a rail are not "
                                       "low, measuring one node low there",
    "FabricwatchSwitchSuspect": "needs `leaf` topology labels and most nodes of one leaf "
                                "suspect; the lab's nodes share no switch",
    "FabricwatchRailPlaneSuspect": "needs a rail that fails on most pairs while tcp works",
    "FabricwatchRailSwitchSuspect": "needs `leaf` topology labels and one rail dark on most "
                                    "nodes of one leaf",
    "FabricwatchSnapshotStale": "needs a wedged pipeline behind a live HTTP server",
    # A source fails only by a run that hangs past its timeout; since issue 13 nothing in a
    # host root can make one hang (a FIFO or other non-regular file is refused at open, a read
    # error at most). SchedulerTest covers the timeout and the recovery.
    "FabricwatchSourceFailing": "needs a source run that hangs; host files cannot make one",
    "FabricwatchNcclBusbwBelowFloor": "needs GPUs: NCCL's bandwidth exists only after NCCL "
                                      "ran on them",
}
# Recording rules that may return no data here, for the reasons above (they are not required
# to, and not faulted when they do).
RECORDS_NOT_REPRODUCED = {
    "peer_node_rail:fabricwatch_localisation_rail_unreachable:suspect":
        "as FabricwatchNodeRailUnreachable",
    "instance_peer:fabricwatch_localisation_pair_unreachable:suspect":
        "as FabricwatchPairUnreachable",
    "peer_node:fabricwatch_localisation_unreachable:suspect": "as FabricwatchNodeUnreachable",
    "peer_node_rail:fabricwatch_localisation_rail_slow:suspect": "as FabricwatchNodeRailSlow",
    # Latency series exist only for pairs the fabric kind measured in its latest run; the lab
    # measures few, and under the sanitizers (CI's ASan stage, stop 29) none that these two
    # records need was in view in the whole run.
    "peer_node_rail:fabricwatch_localisation_rail_slow_witness_probers:count":
        "needs a prober with fabric latency measured to a peer and its other pairs on the rail",
    "peer_node_rail:fabricwatch_localisation_rail_slow_witness_probers_slow:sum":
        "as peer_node_rail:fabricwatch_localisation_rail_slow_witness_probers:count",
    "peer_node_rail:fabricwatch_localisation_rail_bandwidth_low:suspect":
        "as FabricwatchNodeRailBandwidthLow",
    "peer_node_rail:fabricwatch_localisation_rail_bandwidth_witness_probers_low:sum":
        "needs a witness whose pair is under 60% of the rail's best",
    "peer_node:fabricwatch_topology_leaf:info": "the lab's nodes have no `leaf` label",
    "cluster_leaf:fabricwatch_topology_nodes:count": "as peer_node:fabricwatch_topology_leaf:info",
    "cluster_leaf:fabricwatch_localisation_nodes_suspect:count": "as FabricwatchSwitchSuspect",
    "cluster_leaf:fabricwatch_localisation_switch:suspect": "as FabricwatchSwitchSuspect",
    "cluster_rail:fabricwatch_localisation_rail_plane:suspect": "as FabricwatchRailPlaneSuspect",
    "cluster_leaf_rail:fabricwatch_localisation_rail_switch:suspect":
        "as FabricwatchRailSwitchSuspect",
    "cluster_leaf_rail:fabricwatch_localisation_rail_probers:count":
        "as peer_node:fabricwatch_topology_leaf:info",
    "cluster_leaf_rail:fabricwatch_localisation_rail_dark:count":
        "as peer_node:fabricwatch_topology_leaf:info",
    "cluster_leaf_rail:fabricwatch_localisation_rail_probers_elsewhere:count":
        "as peer_node:fabricwatch_topology_leaf:info",
    "cluster_leaf_rail:fabricwatch_localisation_rail_dark_elsewhere:count":
        "as peer_node:fabricwatch_topology_leaf:info",
    # Switch names from LLDP (docs/fleet.md, "Switch names"): the lab runs no lldpd, so no NIC
    # has a neighbour; the promtool LLDP cases cover them.
    "instance_rail:fabricwatch_topology_rail_switch:info": "no lldpd in the lab",
    "instance:fabricwatch_topology_other_switches:info": "no lldpd in the lab",
    "instance:fabricwatch_topology_leaf_switch:info": "no lldpd in the lab",
    "cluster_leaf_rail_switch:fabricwatch_topology_nodes:count":
        "no lldpd in the lab, and no `leaf` label",
    "cluster_leaf_rail_switch:fabricwatch_topology_nodes:max1h":
        "as cluster_leaf_rail_switch:fabricwatch_topology_nodes:count",
    "cluster_leaf_switch:fabricwatch_topology_nodes:count":
        "no lldpd in the lab, and no `leaf` label",
    "cluster_leaf_switch:fabricwatch_topology_nodes:max1h":
        "as cluster_leaf_switch:fabricwatch_topology_nodes:count",
}
# Dashboard queries that cannot return data on a machine without a GPU, named one by one
# (dashboard, panel title, refId): NCCL measures bandwidth only on GPUs. Every other NCCL
# query (the jobs' own NCCL verdicts, the runs' outcomes and transports) is run for real: the
# probe child ends "unavailable" here, after a real unique-id exchange between two instances.
NEEDS_GPU = {
    ("performance.json", "NCCL bus bandwidth between nodes (worst pair)", "A"):
        "fabricwatch_probe_nccl_peer_busbw_bytes_per_second: a run that measured",
    ("performance.json", "NCCL local all-reduce bus bandwidth (worst node)", "A"):
        "fabricwatch_nccl_probe_busbw_bytes_per_second: a run that measured",
}
# NCCL probes on two instances (the child's test mode makes broken's crash): their runs with
# peers, the runs they serve and broken's failing local run are real data for the panels
# and alerts.
NCCL_PROBES = """\
[probes.nccl]
enabled = true
run_at_start = true
interval = "4s"
timeout = "3s"
sizes = ["1MiB"]
"""
NODE_CONFIG = {
    "ib": NCCL_PROBES,
    "broken": NCCL_PROBES + '[probes.nccl.env]\nFABRICWATCH_NCCL_PROBE_TEST_MODE = "crash"\n',
}
# Instances: name, fixture, expected (derived) resource group.
NODES = [("p5", "p5_efa", "efa"), ("ib", "ib_ndr", "infiniband"),
         ("broken", "broken", "infiniband"), ("roce", "roce_v2", "roce"),
         ("erdma", "erdma", "erdma")]
# Series that are opt-in (docs/metrics.md, "Series budget") but drawn by some panels: the EFA
# throughput panels read EFA byte counters, the PCIe table NIC widths and link speeds (the table of
# docs/dashboards.md, which check_deploy.py keeps complete; no alert reads an opt-in series). The
# p5 and ib instances turn them on, as an operator who wants those panels does.
OPT_IN = {
    "p5": """[collect.sources.rdma]
extra_metrics = ['fabricwatch_rdma_port_hw_stat_total{stat="tx_bytes"}',
                 'fabricwatch_rdma_port_hw_stat_total{stat="rx_bytes"}',
                 'fabricwatch_rdma_port_hw_stat_total{stat="rdma_read_bytes"}',
                 'fabricwatch_rdma_port_hw_stat_total{stat="rdma_write_bytes"}']
""",
    "ib": """[collect.sources.gpu]
extra_metrics = ["*"]
""",
}
SECRET = "observe-e2e-secret-0123456789abcdef"
ROTATED_SECRET = "observe-e2e-rotated-0123456789abcdef"
# Rules that compare a node's fabric measurements with its own best: on a loaded 2-core machine
# the healthy loopback fabric of this test swings by more than their factors (a preemption in a
# probe is milliseconds against microseconds), so after the repair they may go pending again.
# For these the test asks that the alert resolved (Prometheus and the webhook) once after the
# repair, not that it stays inactive.
MEASURED_AGAINST_OWN_BEST = {"FabricwatchFabricLatencyHigh", "FabricwatchFabricBandwidthLow",
                             "FabricwatchFabricProbeFailing"}
GRAFANA_INTERVALS = {"__rate_interval": "10s", "__interval": "2s", "__range": "1m"}

ERRORS_PACK = """\
apiVersion: fabricwatch.io/v1
kind: PolicyPack
metadata:
  name: e2e-errors
  description: A rule that cannot be evaluated (it reads a fact no node has).
spec:
  match:
    resourceGroups: ["*"]
  rules:
    - id: reads-a-missing-fact
      severity: warning
      expression: 'kernel.no_such_fact == 1'
      message: "never shown"
      remediation: "none"
"""
INVALID_PACK = """\
apiVersion: fabricwatch.io/v1
kind: PolicyPack
metadata:
  name: e2e-invalid
spec:
  rules:
    - id: no-expression
      severity: sometimes
"""


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


class Failure(Exception):
    pass


# --- processes -------------------------------------------------------------------------------

def _stop_with_parent():
    lab_tools.die_with_parent(signal.SIGTERM)  # the namespaced run cleans up on SIGTERM


class Processes(lab_tools.Processes):
    """Everything the test starts; stop() ends them all, even stopped (SIGSTOP) ones."""

    def check_running(self):
        ended = self.exited()
        if ended:
            name, status = ended
            raise Failure(f"{name} exited with {status}:\n{self.log_text(name)[-3000:]}")


def wait_for(what, predicate, timeout=DEADLINE, interval=0.5, procs=None):
    """Polls predicate() until it returns a true value; raises Failure at the deadline."""
    end = time.monotonic() + timeout
    last = None
    while True:
        if procs:
            procs.check_running()
        try:
            last = predicate()
            if last:
                return last
        except (urllib.error.URLError, ConnectionError, OSError) as e:
            last = e
        if time.monotonic() > end:
            raise Failure(f"timed out after {timeout:.0f}s waiting for {what} (last: {last!r})")
        time.sleep(interval)


# --- HTTP ------------------------------------------------------------------------------------

def http_get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.status, r.read().decode("utf-8")


class Prometheus(lab_tools.PrometheusApi):
    """lab_tools' API client on 127.0.0.1:PORT, failing the test (Failure) on a bad answer."""

    def __init__(self, port):
        super().__init__(f"http://127.0.0.1:{port}")

    def api(self, path, **params):
        try:
            return super().api(path, **params)
        except RuntimeError as e:
            raise Failure(str(e)) from None

    def label_values(self, label, match=None):
        params = {"match[]": [match]} if match else {}
        return self.api(f"/api/v1/label/{label}/values", **params)


def scale_duration(d):
    return lab_tools.scale_duration(d, SCALE)


def scaled_rules(text):
    return lab_tools.scaled_rules(text, SCALE)


# --- dashboards ------------------------------------------------------------------------------

def regex_escape(v):
    return re.sub(r"([\\.+*?()|\[\]{}^$])", r"\\\1", v)


def substitute(expr, values):
    for name, value in GRAFANA_INTERVALS.items():
        expr = expr.replace("${" + name + "}", value).replace("$" + name, value)

    def one(m):
        name = m.group(1) or m.group(2)
        if name not in values:
            raise Failure(f"undefined variable ${name} in {expr}")
        return values[name]
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", one, expr)


def variable_values(prom, var, assigned):
    """The values a query variable offers given the earlier ones, as Grafana would format
    them in a query, plus its All value."""
    m = re.fullmatch(r"\s*label_values\((?:(.*),)?\s*(\w+)\s*\)\s*", var["query"], re.S)
    selector = substitute(m.group(1), assigned) if m.group(1) else None
    raw = prom.label_values(m.group(2), selector)
    regexy = var.get("multi") or var.get("includeAll")
    values = [regex_escape(v) if regexy else v for v in raw]
    if var.get("includeAll"):
        values.append(var.get("allValue", ".*"))
    return raw, values


def combinations(prom, variables, problems, where):
    """Every assignment of the query variables (Grafana's cascade), depth first."""
    def rec(i, assigned):
        if i == len(variables):
            yield dict(assigned)
            return
        v = variables[i]
        raw, values = variable_values(prom, v, assigned)
        if not raw:
            problems.add(f"{where}: variable {v['name']} ({v['query']}) returns no values "
                         f"with {assigned}")
        for value in values:
            assigned[v["name"]] = value
            yield from rec(i + 1, assigned)
        assigned.pop(v["name"], None)
    return rec(0, {})


def sweep_dashboards(prom, satisfied, problems):
    """Runs every panel query with every variable assignment until it returns data; adds the
    (dashboard, panel, refId) that did to `satisfied`."""
    total = 0
    for path in sorted(glob.glob(os.path.join(SOURCE, "deploy/grafana/dashboards/*.json"))):
        d = json.load(open(path))
        name = os.path.basename(path)
        variables = [v for v in d["templating"]["list"] if v["type"] == "query"]
        targets = [(p["id"], t) for p in d["panels"] for t in p.get("targets", [])]
        total += len(targets)
        todo = [(pid, t) for pid, t in targets if (name, pid, t["refId"]) not in satisfied]
        for combo in itertools.islice(combinations(prom, variables, problems, name), 400):
            if not todo:
                break
            left = []
            for pid, t in todo:
                if prom.query(substitute(t["expr"], combo)):
                    satisfied.add((name, pid, t["refId"]))
                else:
                    left.append((pid, t))
            todo = left
    return total


def sweep_rules(prom, satisfied):
    groups = prom.api("/api/v1/rules")["groups"]
    records = [r["name"] for g in groups for r in g["rules"] if r["type"] == "recording"]
    for name in records:
        if name not in satisfied and prom.query(name):
            satisfied.add(name)
    return records


# --- the lab ---------------------------------------------------------------------------------

class Node:
    def __init__(self, lab, name, fixture, group, index):
        self.name, self.group = name, group
        self.node_name = f"fw-{name}" if lab.netns else f"127.0.0.{10 + index}"
        self.root = os.path.join(lab.tmp, "roots", name)
        shutil.copytree(os.path.join(SOURCE, "tests/fixtures", fixture), self.root,
                        symlinks=True)
        self.dir = os.path.join(lab.tmp, "nodes", name)
        os.makedirs(os.path.join(self.dir, "policies"))
        self.config = os.path.join(self.dir, "fabricwatch.toml")
        self.peers_file = os.path.join(self.dir, "peers")
        self.secret = os.path.join(self.dir, "secret")
        write(self.secret, SECRET + "\n")
        self.peer_port = free_port()
        self.peer_address = f"127.0.0.1:{self.peer_port}"
        self.web_port = None
        self.instance = None
        self.process = None
        # The fabric probe's sizes (erdma's fault edits them in its configuration text).
        self.latency_size, self.bandwidth_size, self.bandwidth_window = "64B", "64KiB", 4

    def config_text(self):
        return f"""\
[web]
listen_address = "127.0.0.1:0"
[host]
rootfs = "{self.root}"
[collect]
interval = "1s"
timeout = "500ms"
[peer]
node_name = "{self.node_name}"
listen_address = "{self.peer_address}"
secret_file = "{self.secret}"
[probe]
interval = "1s"
peers_file = "{self.peers_file}"
grace_period = "2s"
# 7 pings, not the default 210: a probe fits its 200 ms with room on a loaded machine, and a
# round's 20 measured pings (4 peers) are often all clean of a preemption, so the node's best
# latency is the loopback's, not the scheduler's (erdma's fault below).
[probes.fabric]
enabled = true
provider = "tcp"
warmup = 2
iterations = 5
latency_size = "{self.latency_size}"
bandwidth_interval = "1s"
bandwidth_size = "{self.bandwidth_size}"
bandwidth_window = {self.bandwidth_window}
bandwidth_bytes = "512KiB"
timeout = "200ms"
# The responder holds back a member (by source address) whose session was never driven; every
# node of this lab is 127.0.0.1, so one stopped node (roce) or one late first message on a
# loaded machine held back every prober for 30 s, and the repaired fabric alerts did not
# resolve. The backoff itself is tested in FabricKindTest.
serve_backoff = "0s"
[policy]
paths = ["{os.path.join(self.dir, 'policies')}"]
reload_interval = "1s"
# A repaired violation stays recovering for the hold (5m by default) before it clears, and its
# alert with it; the repair phase waits 90 s, so the hold here is short. The hold itself is
# tested in ServePolicyE2ETest and the promtool flapping case.
violation_hold = "10s"
# The rdma-counters pack judges counters over this window: the ib faults raise counters, and
# their rates must fall back within the repair phase too.
counter_window = "10s"
[collect.sources.workloads]
enabled = true
""" + NODE_CONFIG.get(self.name, "") + OPT_IN.get(self.name, "")

    def sysfs(self, device, rel):
        return os.path.join(os.path.realpath(
            os.path.join(self.root, "sys/class/infiniband", device)), rel)

    def pci_device(self, address):
        found = glob.glob(os.path.join(self.root, "sys/devices/**", address), recursive=True)
        if not found:
            raise Failure(f"{self.name}: no PCI device {address} in the fixture")
        return found[0]


def write(path, text):
    """Rewrites a file in place (same inode: kept sysfs descriptors and bind mounts see it)."""
    with open(path, "w") as f:
        f.write(text)


def replace_each(text, *pairs):
    """text with every (old, new) replaced; each old must occur exactly once."""
    for old, new in pairs:
        if text.count(old) != 1:
            raise Failure(f"{old!r} occurs {text.count(old)} times in the configuration")
        text = text.replace(old, new)
    return text


def read(path):
    with open(path) as f:
        return f.read()


class Bumper:
    """Raises counters in fixture files every half second while a fault lasts."""

    def __init__(self):
        self.paths = []
        self.stop_event = threading.Event()
        self.thread = None

    def add(self, path, step):
        self.paths.append((path, step))

    def start(self):
        def run():
            while not self.stop_event.wait(0.5):
                for path, step in self.paths:
                    write(path, f"{int(read(path).strip() or 0) + step}\n")
        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def stop(self):
        self.stop_event.set()
        if self.thread:
            self.thread.join()


class Lab:
    def __init__(self, tmp, netns):
        self.tmp, self.netns = tmp, netns
        self.procs = Processes(tmp)
        self.nodes = {}
        self.webhook = None
        self.prom = None
        self.seen_firing = set()
        self.bumper = None

    # setup -----------------------------------------------------------------------------------

    def start(self):
        if self.netns:
            self.setup_namespace()
        for i, (name, fixture, group) in enumerate(NODES):
            self.nodes[name] = Node(self, name, fixture, group, i)
        members = "".join(n.peer_address + "\n" for n in self.nodes.values())
        for n in self.nodes.values():
            write(n.peers_file, members)
            write(n.config, n.config_text())
            n.process = self.procs.start(n.name, [BINARY, "serve", "--config.file=" + n.config])
        for n in self.nodes.values():
            line = wait_for(f"{n.name} to listen", lambda: re.search(
                r"msg=listening.* port=(\d+)", self.procs.log_text(n.name)), procs=self.procs)
            n.web_port = int(line.group(1))
            n.instance = f"127.0.0.1:{n.web_port}"
        self.webhook = Webhook()
        am_port, prom_port = free_port(), free_port()
        self.start_alertmanager(am_port)
        self.start_prometheus(prom_port, am_port)
        self.prom = Prometheus(prom_port)
        for n in self.nodes.values():
            wait_for(f"{n.name} /readyz", lambda: http_get(
                f"http://{n.instance}/readyz")[0] == 200, procs=self.procs)
        wait_for("Prometheus to scrape all five instances", lambda: len(self.prom.query(
            'up{job="fabricwatch"} == 1')) == len(self.nodes), procs=self.procs)
        self.check_rules_loaded()
        # A node's group comes with its first complete collection, which a loaded machine may
        # not have finished by the first scrape (its group is "none" until then).
        groups = {}

        def groups_derived():
            groups.clear()
            groups.update({r["metric"]["instance"]: r["metric"]["resource_group"]
                           for r in self.prom.query("fabricwatch_resource_group_info")})
            return all(groups.get(n.instance) == n.group for n in self.nodes.values())
        try:
            wait_for("each instance's resource group", groups_derived, procs=self.procs)
        except Failure:
            for n in self.nodes.values():
                if groups.get(n.instance) != n.group:
                    raise Failure(f"{n.name}: resource group {groups.get(n.instance)}, expected "
                                  f"{n.group} (the fault plan relies on the fixtures' groups)")
            raise

    def setup_namespace(self):
        subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
        self.hosts = os.path.join(self.tmp, "hosts")
        self.hosts_text = "127.0.0.1 localhost\n" + "".join(
            f"127.0.0.1 fw-{name}\n" for name, _, _ in NODES)
        write(self.hosts, self.hosts_text)
        resolv = os.path.join(self.tmp, "resolv.conf")
        write(resolv, "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n")
        for src, dst in ((self.hosts, "/etc/hosts"), (resolv, "/etc/resolv.conf")):
            subprocess.run(["mount", "--bind", src, dst], check=True)

    def start_alertmanager(self, port):
        cfg = os.path.join(self.tmp, "alertmanager.yml")
        write(cfg, json.dumps({
            "route": {"receiver": "webhook", "group_by": ["..."], "group_wait": "1s",
                      "group_interval": "1s", "repeat_interval": "1h"},
            "receivers": [{"name": "webhook", "webhook_configs": [
                {"url": f"http://127.0.0.1:{self.webhook.port}/", "send_resolved": True}]}],
        }))
        self.start_service("alertmanager", port, [
            "prometheus-alertmanager", "--config.file=" + cfg,
            "--storage.path=" + os.path.join(self.tmp, "alertmanager-data"),
            "--cluster.listen-address=", "--log.level=warn"])

    def start_prometheus(self, port, am_port):
        rules = []
        for f in RULE_FILES:
            dst = os.path.join(self.tmp, "rules", f)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            write(dst, scaled_rules(read(os.path.join(SOURCE, "deploy/prometheus", f))))
            rules.append(dst)
        cfg = os.path.join(self.tmp, "prometheus.yml")
        write(cfg, json.dumps({
            "global": {"scrape_interval": "1s", "scrape_timeout": "1s",
                       "evaluation_interval": "1s"},
            "rule_files": rules,
            "alerting": {"alertmanagers": [{"static_configs": [
                {"targets": [f"127.0.0.1:{am_port}"]}]}]},
            "scrape_configs": [{"job_name": "fabricwatch", "static_configs": [
                {"targets": [n.instance for n in self.nodes.values()],
                 "labels": {"cluster": "e2e"}}]}],
        }))
        self.start_service("prometheus", port, [
            "prometheus", "--config.file=" + cfg,
            "--storage.tsdb.path=" + os.path.join(self.tmp, "prometheus-data"),
            "--rules.alert.resend-delay=1s", "--log.level=warn"])

    def start_service(self, name, port, argv):
        """Prometheus or Alertmanager on 127.0.0.1:port, once it answers /-/ready."""
        self.procs.start(name, argv + [f"--web.listen-address=127.0.0.1:{port}"])
        wait_for(f"{name} to be ready", lambda: http_get(
            f"http://127.0.0.1:{port}/-/ready")[0] == 200, procs=self.procs)

    def check_rules_loaded(self):
        groups = self.prom.api("/api/v1/rules")["groups"]
        loaded = {r["name"]: r for g in groups for r in g["rules"]}
        shipped = re.findall(r"(?m)^\s+- (?:alert|record): (\S+)$", "".join(
            read(os.path.join(SOURCE, "deploy/prometheus", f))
            for f in RULE_FILES))
        if sorted(loaded) != sorted(shipped):
            raise Failure(f"Prometheus loaded {sorted(loaded)}, the files hold {sorted(shipped)}")
        shipped_for = dict(re.findall(r"(?ms)^\s+- alert: (\S+)$.*?^\s+for: (\S+)$", "".join(
            read(os.path.join(SOURCE, "deploy/prometheus", f)) for f in RULE_FILES)))
        for name, d in shipped_for.items():
            want = int(scale_duration(d)[:-1])
            if loaded[name]["duration"] != want:
                raise Failure(f"{name}: runs with for {loaded[name]['duration']}s, not {want}s")
        self.alert_names = sorted(shipped_for)

    # expectations ----------------------------------------------------------------------------

    def firing(self, want):
        firing = [a["labels"] for a in self.prom.alerts() if a["state"] == "firing"]
        self.seen_firing.update(labels["alertname"] for labels in firing)
        return any(matches(labels, want) for labels in firing)

    def active(self, want):
        return any(matches(a["labels"], want) for a in self.prom.alerts())

    def wait_firing(self, expectations, since=0):
        """Waits until every expected alert fires in Prometheus and reached the webhook (since:
        the webhook's mark() at the injection). An alert measured against its node's own best
        may swing back to pending on this loaded machine after it fired: for those, the
        webhook's firing notification since the injection is enough (only a firing alert
        reaches Alertmanager)."""
        missing = []

        def fired(w):
            if w["alertname"] in MEASURED_AGAINST_OWN_BEST:
                self.firing({})  # keeps seen_firing current
                if not self.webhook.seen("firing", w, since):
                    return False
                self.seen_firing.add(w["alertname"])
                return True
            return self.firing(w) and self.webhook.seen("firing", w)

        def done():
            missing[:] = [w for w in expectations if not fired(w)]
            return not missing
        try:
            wait_for("alerts to fire and reach the webhook", done, procs=self.procs)
        except Failure as e:
            raise Failure(f"{e}\nnot firing (Prometheus and webhook): {missing}\n"
                          f"Prometheus alerts: {self.alert_summary()}\n"
                          + self.history(missing))

    def history(self, missing):
        """The last 40 s of each missing alert's inputs (one sample a second), so that a
        failure says whether the condition never held or kept breaking off its `for`."""
        out = []
        for w in missing:
            inst = w.get("instance")
            if not inst or not w["alertname"].startswith("FabricwatchFabric"):
                continue
            inputs = ([f'fabricwatch_probe_fabric_peer_bandwidth_bytes_per_second{{instance="{inst}"}}',
                       f'instance:fabricwatch_probe_fabric_bandwidth:min{{instance="{inst}"}}']
                      if "Bandwidth" in w["alertname"] else
                      [f'fabricwatch_probe_fabric_peer_latency_seconds{{instance="{inst}",quantile="0.99"}}',
                       f'instance:fabricwatch_probe_fabric_latency_p99:max{{instance="{inst}"}}'])
            for q in inputs + [f'ALERTS{{alertname="{w["alertname"]}",instance="{inst}"}}']:
                end = time.time()
                try:
                    data = self.prom.api("/api/v1/query_range", query=q, start=end - 40, end=end,
                                         step=1)
                except Failure as err:
                    out.append(f"{q}: {err}")
                    continue
                for series in data["result"]:
                    points = " ".join(f"{float(t) - end:+.0f}s={v}" for t, v in series["values"])
                    out.append(f"{q} {series['metric']}: {points}")
        return "\n".join(out)

    def wait_resolved(self, expectations, since):
        """since: the webhook's mark() at the repair."""
        left, resolved = [], []

        def done():
            self.firing({})  # keeps seen_firing current
            for w in expectations:
                if w not in resolved and not self.active(w) and self.webhook.seen(
                        "resolved", w, since):
                    resolved.append(w)
            left[:] = [w for w in expectations if w not in resolved or (
                w["alertname"] not in MEASURED_AGAINST_OWN_BEST and self.active(w))]
            return not left
        try:
            wait_for("alerts to resolve and reach the webhook as resolved", done,
                     procs=self.procs)
        except Failure as e:
            raise Failure(f"{e}\nstill active or not resolved at the webhook: {left}\n"
                          f"Prometheus alerts: {self.alert_summary()}")

    def alert_summary(self):
        return sorted(f"{a['labels']['alertname']}{{{a['labels'].get('instance', '')}}}"
                      f"={a['state']}" for a in self.prom.alerts())

    # faults ----------------------------------------------------------------------------------

    def rotate_secret(self):
        """Rotates the peer secret on every node but p5, and waits until the rotated nodes
        have taken each other (roce included) back as active members."""
        others = [n for n in self.nodes.values() if n.name != "p5"]
        for n in others:
            before = self.procs.log_text(n.name).count("configuration reloaded")
            write(n.secret, ROTATED_SECRET + "\n")
            n.process.send_signal(signal.SIGHUP)
            wait_for(f"{n.name} to reload", lambda: self.procs.log_text(n.name).count(
                "configuration reloaded") > before, procs=self.procs)
        roce = self.nodes["roce"].peer_address

        def roce_active(n):
            doc = json.loads(http_get(f"http://{n.instance}/api/v1/peers")[1])
            return any(m["address"] == roce and m["state"] == "active" for m in doc["members"])
        wait_for("the rotated nodes to take roce back as an active member", lambda: all(
            roce_active(n) for n in others if n.name != "roce"), procs=self.procs)


    def faults(self):
        """[(description, inject, repair, expected alerts)]"""
        p5, ib, broken, roce, erdma = (self.nodes[n] for n in
                                       ("p5", "ib", "broken", "roce", "erdma"))
        bumper = Bumper()
        out = []

        def fault(what, inject, repair, *expected):
            out.append((what, inject, repair, list(expected)))

        def swap(path, new):
            old = read(path)
            return (lambda: write(path, new)), (lambda: write(path, old))

        # p5 (EFA)
        fault("p5: port rdmap19s0/1 DOWN", *swap(p5.sysfs("rdmap19s0", "ports/1/state"),
                                                 "1: DOWN\n"),
              {"alertname": "FabricwatchRdmaPortNotActive", "instance": p5.instance,
               "device": "rdmap19s0"},
              {"alertname": "FabricwatchCriticalViolation", "instance": p5.instance,
               "rule": "rdma-ports-active"})
        fault("p5: GPU 0000:17:00.0 at x8",
              *swap(os.path.join(p5.pci_device("0000:17:00.0"), "current_link_width"), "8\n"),
              {"alertname": "FabricwatchGpuPcieLinkWidthDegraded", "instance": p5.instance,
               "pci_address": "0000:17:00.0"})
        bumper.add(p5.sysfs("rdmap20s0", "ports/1/hw_counters/retrans_pkts"), 100)
        bumper.add(p5.sysfs("rdmap20s0", "ports/1/hw_counters/unresponsive_remote_events"), 1)
        fault("p5: EFA retransmits and unresponsive remotes on rdmap20s0",
              lambda: None, lambda: None,
              {"alertname": "FabricwatchEfaRetransmits", "instance": p5.instance,
               "device": "rdmap20s0"},
              {"alertname": "FabricwatchEfaUnresponsiveRemote", "instance": p5.instance,
               "device": "rdmap20s0"})

        # p5's training job: its own NCCL log now shows RoCE without GPUDirect RDMA.
        job_log = os.path.join(p5.root, "containers/trainer/var/log/nccl/trainer-0.17.log")
        fault("p5: the job's NCCL log shows GPUDirect RDMA off",
              *swap(job_log, read(os.path.join(SOURCE, "tests/fixtures/nccl_logs/gdr_disabled.log"))),
              {"alertname": "FabricwatchNcclWithoutGpuDirectRdma", "instance": p5.instance,
               "source": "workload"})

        # The secret rotation (rotate_secret()) missed p5: it reaches none of its peers.
        fault("p5: missed the secret rotation", lambda: None, lambda: (
                  write(p5.secret, ROTATED_SECRET + "\n"), p5.process.send_signal(signal.SIGHUP)),
              {"alertname": "FabricwatchNodeIsolated", "instance": p5.instance},
              {"alertname": "FabricwatchNodeCutOff", "instance": p5.instance,
               "peer_node": p5.node_name})

        # ib (InfiniBand). The physical state fault is injected here: the EFA driver reports
        # LinkUp whatever the link does, so EFA ports serve no physical state by default.
        fault("ib: mlx5_2/1 ACTIVE but LinkErrorRecovery",
              *swap(ib.sysfs("mlx5_2", "ports/1/phys_state"), "6: LinkErrorRecovery\n"),
              {"alertname": "FabricwatchRdmaPortPhysicalStateNotLinkUp",
               "instance": ib.instance, "device": "mlx5_2"})
        bumper.add(ib.sysfs("mlx5_0", "ports/1/counters/symbol_error"), 7)
        bumper.add(ib.sysfs("mlx5_1", "ports/1/counters/link_downed"), 1)
        fault("ib: symbol errors on mlx5_0, mlx5_1 flapping", lambda: None, lambda: None,
              {"alertname": "FabricwatchRdmaPortErrorsIncreasing", "instance": ib.instance,
               "device": "mlx5_0", "stat": "symbol_error"},
              {"alertname": "FabricwatchRdmaLinkFlapping", "instance": ib.instance,
               "device": "mlx5_1"})
        modules = os.path.join(ib.root, "proc/modules")
        fault("ib: ib_uverbs unloaded",
              *swap(modules, "".join(l for l in read(modules).splitlines(True)
                                     if not l.startswith("ib_uverbs "))),
              {"alertname": "FabricwatchCriticalViolation", "instance": ib.instance,
               "rule": "ib-uverbs-loaded"})
        errors_pack = os.path.join(ib.dir, "policies/e2e-errors.yaml")
        fault("ib: a pack that cannot be evaluated",
              lambda: write(errors_pack, ERRORS_PACK), lambda: os.remove(errors_pack),
              {"alertname": "FabricwatchPolicyEvaluationErrors", "instance": ib.instance,
               "pack": "e2e-errors"})

        # roce: cut off
        fault("roce: stopped (SIGSTOP)", lambda: roce.process.send_signal(signal.SIGSTOP),
              lambda: roce.process.send_signal(signal.SIGCONT),
              {"alertname": "FabricwatchDown", "instance": roce.instance},
              {"alertname": "FabricwatchPeerUnreachable", "peer": roce.peer_address})

        # broken: its discovery file disappears
        moved = broken.peers_file + ".away"
        fault("broken: peers file removed", lambda: os.rename(broken.peers_file, moved),
              lambda: os.rename(moved, broken.peers_file),
              {"alertname": "FabricwatchPeerDiscoveryFailing", "instance": broken.instance})

        # The fabric probe (tcp provider on every node; a 200 ms timeout, so that it still
        # has room in a 1 s round when another kind waits on the stopped roce). ib: reloaded
        # with provider efa, which has no device here. erdma: reloaded with one 32 MiB ping and
        # 16 B bandwidth messages one at a time: its latency rises and its bandwidth falls
        # against its own best; its probes of roce (stopped), p5 (another secret) and ib (no
        # endpoint) fail. Its bests are those before the fault, which on a loaded 2-core
        # machine can measure the scheduler more than the loopback: with 20 pings a peer, the
        # worst peer's p99 of 64 B pings was a preemption in every round (1-2 ms; 3.6-4 ms
        # under ASan, where the 32 MiB ping, 10-21 ms one way, straddled 5x that and the alert
        # never held its `for`: CI of e8de5b9), hence 5 pings a peer above. With a core busy,
        # 8 MiB pings (7-21 ms one way) straddled 5x a preempted best, as 4 KiB bandwidth
        # messages (1-190 MB/s) straddled half the 64 KiB windows' best. So the fault is one
        # 32 MiB ping and 64 windows of one 16 B message (the smallest the schema allows: up to
        # 1.5 MB/s, where 64 B messages reached 5.7 MB/s under ASan, above half of that build's
        # 64 KiB best), with a 1 s timeout (a 32 MiB round trip takes hundreds of ms on a
        # loaded machine) in 3 s rounds (so that the exclusive fabric kind still has room for
        # its timeout after the others). The alerts read the latest measurement of their last
        # minutes, so a probe that times out or a round that had no room for broken leaves no
        # gap. erdma's reload must land before its invalid configuration below (which then
        # keeps this one running).
        def reload(node, edit):
            def apply():
                before = self.procs.log_text(node.name).count("configuration reloaded")
                write(node.config, edit(node.config_text()))
                node.process.send_signal(signal.SIGHUP)
                wait_for(f"{node.name} to reload", lambda: self.procs.log_text(node.name).count(
                    "configuration reloaded") > before, procs=self.procs)
            return apply

        fault("ib: fabric provider efa (no device)",
              reload(ib, lambda t: t.replace('provider = "tcp"', 'provider = "efa"')),
              reload(ib, lambda t: t),
              {"alertname": "FabricwatchFabricProbeUnavailable", "instance": ib.instance,
               "reason": "fi_getinfo: No data available"})
        fault("erdma: fabric latency up, bandwidth down, probes failing",
              reload(erdma, lambda t: replace_each(
                  t, ('latency_size = "64B"', 'latency_size = "32MiB"'),
                  ("iterations = 5", "iterations = 1"), ("warmup = 2", "warmup = 0"),
                  ('[probe]\ninterval = "1s"', '[probe]\ninterval = "3s"'),
                  ('timeout = "200ms"', 'timeout = "1s"'),
                  ('bandwidth_size = "64KiB"', 'bandwidth_size = "16B"'),
                  ("bandwidth_window = 4", "bandwidth_window = 1"),
                  ('bandwidth_bytes = "512KiB"', 'bandwidth_bytes = "1KiB"'))),
              lambda: None,  # erdma's configuration repair below reloads the original
              {"alertname": "FabricwatchFabricLatencyHigh", "instance": erdma.instance},
              {"alertname": "FabricwatchFabricBandwidthLow", "instance": erdma.instance},
              {"alertname": "FabricwatchFabricProbeFailing", "instance": erdma.instance})

        # erdma: reloads, a source, a member that never answers
        good_config = erdma.config_text()
        fault("erdma: invalid configuration reloaded",
              lambda: (write(erdma.config, good_config + "[collect\n"),
                       erdma.process.send_signal(signal.SIGHUP)),
              lambda: (write(erdma.config, good_config),
                       erdma.process.send_signal(signal.SIGHUP)),
              {"alertname": "FabricwatchConfigReloadFailed", "instance": erdma.instance})
        invalid_pack = os.path.join(erdma.dir, "policies/e2e-invalid.yaml")
        fault("erdma: an invalid pack", lambda: write(invalid_pack, INVALID_PACK),
              lambda: os.remove(invalid_pack),
              {"alertname": "FabricwatchPolicyReloadFailed", "instance": erdma.instance})
        members = read(erdma.peers_file)
        fault("erdma: a listed member that never answers",
              *swap(erdma.peers_file, members + f"127.0.0.1:{free_port()}\n"),
              {"alertname": "FabricwatchPeersPending", "instance": erdma.instance})

        if self.netns:
            fault("fw-ib's name no longer resolves",
                  lambda: write(self.hosts, self.hosts_text.replace("127.0.0.1 fw-ib\n", "")),
                  lambda: write(self.hosts, self.hosts_text),
                  {"alertname": "FabricwatchPeerDnsFailures", "instance": broken.instance})
        return out, bumper

    def standing(self):
        """Alerts the unrepaired fixtures (broken, roce's memlock limit and its job over
        sockets, broken's crashing NCCL probe) fire all along; checked at the end, since roce
        is stopped during the faults."""
        b, r = self.nodes["broken"].instance, self.nodes["roce"].instance
        return [dict(alertname="Fabricwatch" + name, instance=instance, **labels)
                for name, instance, labels in [
                    ("NcclOverSocket", r, {"source": "workload"}),
                    ("NcclProbeFailing", b, {"probe": "local"}),
                    ("RdmaPortNotActive", b, {"device": "mlx5_3"}),
                    ("CriticalViolation", b, {"rule": "gpudirect-rdma"}),
                    ("CriticalViolation", r, {"rule": "memlock-sufficient"}),
                    ("WarningViolation", b, {"rule": "ib-port-rate"}),
                    ("RdmaPortRateDegraded", b, {"device": "mlx5_5"}),
                    ("NicPcieLinkDegraded", b, {"device": "mlx5_6"})]]


def run(lab):
    t0 = time.monotonic()
    lab.start()
    log(f"5 instances, Prometheus and Alertmanager up ({time.monotonic() - t0:.1f}s); "
        f"{'private network namespace' if lab.netns else 'host loopback, no DNS fault'}")
    problems = set()
    panels_ok, records_ok = set(), set()
    # Rates need two samples in their windows.
    wait_for("two scrapes", lambda: lab.prom.query(
        'count(count_over_time(up{job="fabricwatch"}[10s]) >= 3) == 5'), procs=lab.procs)
    total = sweep_dashboards(lab.prom, panels_ok, problems)
    records = sweep_rules(lab.prom, records_ok)
    log(f"baseline: {len(panels_ok)}/{total} panel queries and {len(records_ok)}/"
        f"{len(records)} recording rules return data")

    log("rotate the peer secret on every node but p5")
    lab.rotate_secret()
    faults, bumper = lab.faults()
    lab.bumper = bumper  # stopped in main() too: a failed run must not bump removed files
    injected = lab.webhook.mark()
    for what, inject, _, _ in faults:
        log(f"inject: {what}")
        inject()
    bumper.start()
    expected = [w for f in faults for w in f[3]]
    lab.wait_firing(expected, injected)
    log(f"all {len(expected)} injected alerts fire and reached the webhook "
        f"({time.monotonic() - t0:.1f}s)")
    sweep_dashboards(lab.prom, panels_ok, problems)
    sweep_rules(lab.prom, records_ok)
    log(f"with the faults: {len(panels_ok)}/{total} panel queries and {len(records_ok)}/"
        f"{len(records)} recording rules have returned data")

    bumper.stop()
    repaired = lab.webhook.mark()
    for what, _, repair, _ in faults:
        log(f"repair: {what}")
        repair()
    lab.wait_resolved(expected, repaired)
    log(f"all injected alerts resolved, in Prometheus and at the webhook "
        f"({time.monotonic() - t0:.1f}s)")
    lab.wait_firing(lab.standing())
    log(f"the {len(lab.standing())} alerts of the unrepaired fixtures fire "
        f"({time.monotonic() - t0:.1f}s)")

    exempt = dict(NEEDS_GPU)
    for path in sorted(glob.glob(os.path.join(SOURCE, "deploy/grafana/dashboards/*.json"))):
        d = json.load(open(path))
        name = os.path.basename(path)
        for p in d["panels"]:
            for t in p.get("targets", []):
                key = (name, p["title"], t["refId"])
                if (name, p["id"], t["refId"]) in panels_ok:
                    if key in exempt:
                        problems.add(f"{name}: panel {p['title']!r} query {t['refId']} is in "
                                     "NEEDS_GPU but returned data: take it off the list")
                elif key in exempt:
                    log(f"needs a GPU, not run for data here: {name} {p['title']!r} "
                        f"{t['refId']} ({exempt[key]})")
                else:
                    problems.add(f"{name}: panel {p['title']!r} query "
                                 f"{t['refId']} never returned data: {t['expr']}")
                exempt.pop(key, None)
    for key in exempt:
        problems.add(f"NEEDS_GPU names {key}, which no dashboard has")
    for r in records:
        if r in RECORDS_NOT_REPRODUCED:
            log(f"not required here: recording rule {r} ({RECORDS_NOT_REPRODUCED[r]}; "
                f"{'it did' if r in records_ok else 'it did not'} return data)")
        elif r not in records_ok:
            problems.add(f"recording rule {r} never returned data")
    not_reproduced = dict(NOT_REPRODUCED)
    if not lab.netns:
        not_reproduced["FabricwatchPeerDnsFailures"] = "no private network namespace"
    for name in lab.alert_names:
        if name not in lab.seen_firing and name not in not_reproduced:
            problems.add(f"alert {name} never fired")
    for name, why in not_reproduced.items():
        log(f"not reproduced here: {name} ({why}); its promtool test covers it")
    if problems:
        raise Failure("\n".join(sorted(problems)))
    log(f"PASS in {time.monotonic() - t0:.1f}s: {len(panels_ok)} panel queries, "
        f"{len(records_ok)} recording rules, {len(lab.seen_firing)} alerts fired")


def required(need):
    """FW_REQUIRE (tests/support/require.h) names what may not be missing here: CI's list."""
    listed = os.environ.get("FW_REQUIRE", "").split(",")
    return need in listed or "all" in listed


def reexec_in_namespace():
    """Runs this script again in a private network and mount namespace; returns its exit
    status, or None when namespaces are not available here (1 when FW_REQUIRE names netns)."""
    if os.environ.get("FW_TEST_NO_NETNS") == "1" or not shutil.which("unshare"):
        return None
    probe = subprocess.run(["unshare", "--net", "--mount", "true"], capture_output=True)
    if probe.returncode != 0:
        why = probe.stderr.decode().strip()
        if required("netns"):
            print(f"FAIL: FW_REQUIRE names netns, but no private namespaces here ({why})")
            return 1
        log(f"no private namespaces ({why}): host loopback")
        return None
    env = dict(os.environ, **{INSIDE: "1"})
    p = subprocess.Popen(["unshare", "--net", "--mount", "--propagation", "private",
                          sys.executable, os.path.abspath(__file__)] + sys.argv[1:],
                         env=env, preexec_fn=_stop_with_parent)
    try:
        return p.wait()
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def main():
    for tool in ("prometheus", "prometheus-alertmanager"):
        if not shutil.which(tool):
            print(f"FAIL: {tool} is not installed (scripts/dev installs it)")
            return 1
    if not os.access(BINARY, os.X_OK):
        print(f"FAIL: no fabricwatch binary at {BINARY}")
        return 1
    if os.environ.get(INSIDE) != "1":
        status = reexec_in_namespace()
        if status is not None:
            return status
    netns = os.environ.get(INSIDE) == "1"
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    tmp = tempfile.mkdtemp(prefix="fw-observe-e2e-")
    lab = Lab(tmp, netns)
    try:
        run(lab)
        return 0
    except Failure as e:
        print(f"FAIL: {e}")
        for name in lab.procs.procs:
            print(f"--- {name} log (tail) ---\n{lab.procs.log_text(name)[-2000:]}")
        return 1
    finally:
        if lab.bumper:
            lab.bumper.stop()
        lab.procs.stop()
        if lab.webhook:
            lab.webhook.close()
        if "--keep" in sys.argv:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
