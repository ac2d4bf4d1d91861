#!/usr/bin/env python3
"""Fleet localisation (docs/fleet.md) on a synthetic fleet, evaluated by Prometheus itself.

    bench/localisation_bench.py [--nodes 1000] [--rails 8] [--k 8] [--seed 21]
                                [--interval 30] [--wait 450] [--keep] [--churn SCRAPES]

Simulates the probe rounds of N daemons on a leaf/spine fabric (bench/localisation_fleet.py:
the mesh's ring selection, k peers a round, failing peers probed again, 32 nodes per leaf) and
serves what they would export, as one scrape target whose series carry each daemon's target
labels (honor_labels): the tcp kind's pairs of the last two rounds, the fabric kind's pairs of
the latest round on every rail (at most k peers, failing ones first) with their latency,
fabricwatch_peer_self_info and fabricwatch_topology_info{leaf}. interval / 10 s rounds pass per
scrape (10 s rounds). Faults are planted at every level the rules have, on disjoint nodes and
rails (localisation_fleet.Fleet), plus 1% random probe failures and latency jitter; the
leaves go down after two scrapes, so that the rules have seen their nodes' `leaf`. A real
Prometheus scrapes it every interval and evaluates the shipped rules as often; after --wait
seconds the bench prints, per level, precision and recall of the suspect records and of the
firing alerts against the planted faults, after the shipped Alertmanager inhibitions
(deploy/alertmanager/alertmanager.yml's inhibit_rules, applied here to the firing alerts: what
the rules and the inhibitions together leave for a person), the alerts left that are not a
cause's, the localisation's recorded series per node, and each rule group's evaluation time
(/api/v1/rules' evaluationTime, every evaluation during the wait: median and max), the slowest
rules and the CPU seconds Prometheus used per cycle.

Why live scraping rather than backfilling (`promtool tsdb create-blocks-from openmetrics`):
the alerts' `for:` and ALERTS exist only where Prometheus's rule manager evaluates the rules
over wall-clock time, and `create-blocks-from rules` evaluates recording rules only, one range
query per rule, which measures neither alerts nor one evaluation cycle. A Prometheus started on
backfilled blocks evaluates its rules at the present, so the blocks would have to end in the
future, where the head (without an out-of-order window) refuses the rules' own samples. Live,
1,000 nodes fit this 2-core, 24 GiB machine; 10,000 nodes (1.36 million series, 224 MB a
scrape, simulated and rendered in about 5 s in the background between scrapes) do not: the
pair series rotate with the ring selection, nearly all of a scrape's series are new in the
next, and Prometheus's head reached the machine's memory after about 8 minutes (docs/fleet.md,
"At scale"). Backfilled blocks would hold the same churned series; not tried. Rule groups
whose evaluation outlasts the interval skip iterations, which lengthens the wait.

Needs prometheus (Debian's prometheus package) and python3-yaml. 1,000 nodes: --wait 450 for
the 5-minute alerts, --wait 1050 for FabricwatchNodeRailSlow's 15 minutes, about 1,500 for
FabricwatchNodeRailBandwidthLow (its suspect needs 3 probers' bandwidth rounds, every 5
minutes, then 15 minutes).
"""
import argparse
import http.server
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

import yaml

from localisation_fleet import LEVELS, Fleet, leaf, name

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RULES = [os.path.join(ROOT, "deploy/prometheus", f)
         for f in ("recording.yml", "alerts.yml", "localisation.yml")]
ALERTMANAGER = os.path.join(ROOT, "deploy/alertmanager/alertmanager.yml")
ALERT_OF = {"node": "FabricwatchNodeUnreachable", "cut_off": "FabricwatchNodeCutOff",
            "rail": "FabricwatchNodeRailUnreachable", "pair": "FabricwatchPairUnreachable",
            "slow": "FabricwatchNodeRailSlow", "bw": "FabricwatchNodeRailBandwidthLow",
            "switch": "FabricwatchSwitchSuspect",
            "plane": "FabricwatchRailPlaneSuspect"}
RECORD_OF = {
    "node": ("peer_node:fabricwatch_localisation_unreachable:suspect",
             lambda m: m["peer_node"]),
    "cut_off": ("instance:fabricwatch_localisation_cut_off:suspect", lambda m: m["instance"]),
    "rail": ("peer_node_rail:fabricwatch_localisation_rail_unreachable:suspect",
             lambda m: (m["peer_node"], m["rail"])),
    "pair": ("instance_peer:fabricwatch_localisation_pair_unreachable:suspect",
             lambda m: (m["instance"], m["peer_node"])),
    "slow": ("peer_node_rail:fabricwatch_localisation_rail_slow:suspect",
             lambda m: (m["peer_node"], m["rail"])),
    "bw": ("peer_node_rail:fabricwatch_localisation_rail_bandwidth_low:suspect",
           lambda m: (m["peer_node"], m["rail"])),
    "switch": ("cluster_leaf:fabricwatch_localisation_switch:suspect", lambda m: m["leaf"]),
    "plane": ("cluster_rail:fabricwatch_localisation_rail_plane:suspect", lambda m: m["rail"])}


class Exporter(threading.Thread):
    """Serves the fleet on /metrics. The next scrape's text is made in the background as soon
    as a scrape is served (its rounds, then its rendering), so a scrape of 10,000 nodes is not
    held up by Python; the leaves fail from the third scrape on."""

    def __init__(self, fleet, rounds_per_scrape):
        super().__init__(daemon=True)
        self.fleet, self.rounds = fleet, rounds_per_scrape
        self.scrapes, self.size, self.render_s = 0, 0, 0.0
        self.body, self.cond = None, threading.Condition()
        exporter = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                with exporter.cond:
                    exporter.cond.wait_for(lambda: exporter.body is not None)
                    body, exporter.body = exporter.body, None
                    exporter.scrapes += 1
                    exporter.cond.notify_all()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.produce, daemon=True).start()

    def produce(self):
        while True:
            t = time.monotonic()
            if self.scrapes >= 2:
                self.fleet.leaves_fail()
            for _ in range(self.rounds):
                self.fleet.step()
            body = self.fleet.exposition().encode()
            with self.cond:
                self.render_s, self.size = time.monotonic() - t, len(body)
                self.body = body
                self.cond.notify_all()
                self.cond.wait_for(lambda: self.body is None)

    def run(self):
        self.server.serve_forever()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def api(base, path, http_timeout=120, **params):
    url = f"{base}{path}?{urllib.parse.urlencode(params)}"
    with urllib.request.urlopen(url, timeout=http_timeout) as r:
        doc = json.load(r)
    if doc.get("status") != "success":
        raise RuntimeError(f"{url}: {doc}")
    return doc["data"]


def query(base, q):
    return api(base, "/api/v1/query", query=q)["result"]


def cpu_seconds(pid):
    """User and system time of a process, from /proc."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def score(found, truth):
    hit = len(found & truth)
    p = hit / len(found) if found else 1.0
    r = hit / len(truth) if truth else 1.0
    return p, r, len(found), len(truth)


def matcher(text):
    m = re.fullmatch(r'\s*(\w+)\s*(=~|!~|!=|=)\s*"(.*)"\s*', text)
    if not m:
        raise ValueError(f"{ALERTMANAGER}: matcher {text!r} not understood")
    label, op, value = m.groups()
    if op in ("=~", "!~"):
        rx = re.compile(value)
        return lambda a: bool(rx.fullmatch(a.get(label, ""))) == (op == "=~")
    return lambda a: (a.get(label, "") == value) == (op == "=")


def inhibit(alerts):
    """The firing alerts that the shipped inhibit_rules leave (Alertmanager's semantics: a
    firing source inhibits a target with the same values of `equal`, an absent label equal to
    itself, and an alert matching both sides of a rule does not inhibit itself)."""
    with open(ALERTMANAGER) as f:
        rules = yaml.safe_load(f)["inhibit_rules"]
    left = []
    for t in alerts:
        muted = False
        for rule in rules:
            src = [matcher(m) for m in rule["source_matchers"]]
            tgt = [matcher(m) for m in rule["target_matchers"]]
            if not all(m(t) for m in tgt):
                continue
            eq = rule.get("equal", [])
            for s in alerts:
                if s is t or not all(m(s) for m in src):
                    continue
                if all(m(t) for m in src) and all(m(s) for m in tgt):
                    continue
                if all(s.get(label, "") == t.get(label, "") for label in eq):
                    muted = True
                    break
            if muted:
                break
        if not muted:
            left.append(t)
    return left


def recorded_names():
    with open(RULES[2]) as f:
        doc = yaml.safe_load(f)
    return [r["record"] for g in doc["groups"] for r in g["rules"] if "record" in r]


class RuleTimes:
    """Every evaluation of every rule group, from /api/v1/rules, polled during the wait."""

    def __init__(self):
        self.groups = {}    # name -> {lastEvaluation: evaluationTime}
        self.rules = {}     # (group, rule) -> {lastEvaluation: evaluationTime}

    def poll(self, base):
        for g in api(base, "/api/v1/rules")["groups"]:
            if g["lastEvaluation"].startswith("0001"):
                continue
            self.groups.setdefault(g["name"], {})[g["lastEvaluation"]] = g["evaluationTime"]
            for r in g["rules"]:
                self.rules.setdefault((g["name"], r["name"]), {})[r["lastEvaluation"]] = \
                    r["evaluationTime"]

    @staticmethod
    def stats(evals):
        # The first evaluations see an empty or half-filled TSDB: leave them out where there
        # are enough.
        xs = [v for _, v in sorted(evals.items())]
        xs = xs[2:] if len(xs) > 4 else xs
        return statistics.median(xs), max(xs), len(xs)


def report(base, fleet, nodes, times, names):
    truth = fleet.truth()
    found = {}
    for level in LEVELS:
        rec, key = RECORD_OF[level]
        found[level] = {key(s["metric"]) for s in query(base, rec)}
    # What a switch or a rail plane explains is not left for a person on its own: drop the
    # node-level suspects below a suspect leaf and the rail suspects on a suspect plane (the
    # records' counterpart of the inhibitions).
    leaf_of = {name(x): leaf(x) for x in range(nodes)}
    inst_leaf = {f"{name(x)}:19736": leaf(x) for x in range(nodes)}
    sw, pl = found["switch"], found["plane"]
    found["node"] = {x for x in found["node"] if leaf_of.get(x) not in sw}
    found["cut_off"] = {x for x in found["cut_off"] if inst_leaf.get(x) not in sw}
    for level in ("rail", "slow", "bw"):
        found[level] = {x for x in found[level] if leaf_of.get(x[0]) not in sw and x[1] not in pl}
    firing = [s["metric"] for s in query(base, 'ALERTS{alertstate="firing"}')]
    left = inhibit(firing)
    print(f"alerts firing: {len(firing)}; left after the inhibitions: {len(left)}")
    print(f"{'level':8}  {'suspects now: precision recall (found/planted)':48}  "
          "alerts left: precision recall (found/planted)")
    for level in LEVELS:
        key = RECORD_OF[level][1]
        got = {key(a) for a in left if a["alertname"] == ALERT_OF[level]}
        p1, r1, f1, t1 = score(found[level], truth[level])
        p2, r2, f2, t2 = score(got, truth[level])
        print(f"{level:8}  {f'{p1:.3f} {r1:.3f} ({f1}/{t1})':48}  {p2:.3f} {r2:.3f} ({f2}/{t2})")
    causes = set(ALERT_OF.values())
    others = {}
    for a in left:
        if a["alertname"] not in causes:
            others[a["alertname"]] = others.get(a["alertname"], 0) + 1
    print(f"other alerts left: {others or 'none'}")
    recorded = query(base, f'count({{__name__=~"{"|".join(re.escape(n) for n in names)}"}})')
    n_rec = float(recorded[0]["value"][1]) if recorded else 0
    print(f"localisation recorded series: {n_rec:.0f} ({n_rec / nodes:.1f} per node)")
    total = 0.0
    for g, evals in sorted(times.groups.items()):
        med, mx, cnt = RuleTimes.stats(evals)
        if g.startswith("fabricwatch-localisation"):
            total += med
        print(f"group {g}: evaluation median {med:.3f}s, max {mx:.3f}s ({cnt} evaluations)")
    print(f"localisation groups, one cycle (sum of medians): {total:.3f}s")
    slow = sorted(((RuleTimes.stats(e)[0], r) for (g, r), e in times.rules.items()
                   if g == "fabricwatch-localisation"), reverse=True)
    for med, r in slow[:10]:
        print(f"  {med:.3f}s {r}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--rails", type=int, default=8)
    ap.add_argument("--k", type=int, default=8)
    ap.add_argument("--seed", type=int, default=21)
    ap.add_argument("--interval", type=int, default=30, help="scrape and evaluation, seconds")
    ap.add_argument("--wait", type=float, default=450, help="seconds of rule evaluation")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--without-localisation", action="store_true",
                    help="load recording.yml and alerts.yml only: the baseline for CPU time")
    ap.add_argument("--churn", type=int, metavar="SCRAPES",
                    help="no Prometheus: count the distinct pair series over SCRAPES scrapes")
    args = ap.parse_args()
    if args.churn:
        fleet = Fleet(args.nodes, args.rails, args.k, args.seed)
        seen = set()
        for s in range(1, args.churn + 1):
            for _ in range(max(1, args.interval // 10)):
                fleet.step()
            now = fleet.keys()
            seen |= now
            print(f"scrape {s} ({s * args.interval} s): {len(now)} pair series, "
                  f"{len(seen)} distinct so far")
        return 0
    if not shutil.which("prometheus"):
        sys.exit("prometheus is not installed")
    tmp = tempfile.mkdtemp(prefix="fw-localisation-bench-")
    names = recorded_names()    # what Prometheus loads, read now
    fleet = Fleet(args.nodes, args.rails, args.k, args.seed)
    exporter = Exporter(fleet, rounds_per_scrape=max(1, args.interval // 10))
    with exporter.cond:
        exporter.cond.wait_for(lambda: exporter.body is not None)
    series = exporter.body.count(b"\n") - 6
    print(f"fleet: {args.nodes} nodes, k = {args.k}, {args.rails} rails: {series} series "
          f"({series / args.nodes:.1f} per node, {exporter.size / 1e6:.1f} MB a scrape, "
          f"{exporter.render_s:.1f}s to simulate and render); {fleet.summary()}", flush=True)
    exporter.start()
    cfg = os.path.join(tmp, "prometheus.yml")
    iv = f"{args.interval}s"
    with open(cfg, "w") as f:
        json.dump({"global": {"scrape_interval": iv, "scrape_timeout": f"{args.interval - 5}s",
                              "evaluation_interval": iv},
                   "rule_files": RULES[:2] if args.without_localisation else RULES,
                   "scrape_configs": [{"job_name": "fleet", "honor_labels": True,
                                       "static_configs": [{"targets": [
                                           f"127.0.0.1:{exporter.port}"]}]}]}, f)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    prom = subprocess.Popen(["prometheus", f"--config.file={cfg}",
                             f"--storage.tsdb.path={os.path.join(tmp, 'data')}",
                             f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn",
                             # A rule's query is bounded by the query timeout (2 minutes by
                             # default): a slow cycle must be measured, not cut short.
                             "--query.timeout=1h"])
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(base + "/-/ready", timeout=5) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if prom.poll() is not None or time.monotonic() > deadline:
                sys.exit("Prometheus did not become ready")
            time.sleep(1)
        began = time.monotonic()
        cpu0 = cpu_seconds(prom.pid)
        print(f"Prometheus up; scraping and evaluating every {iv} for {args.wait:.0f}s",
              flush=True)
        times = RuleTimes()
        while time.monotonic() - began < args.wait:
            time.sleep(min(10, max(0, args.wait - (time.monotonic() - began))))
            times.poll(base)
        cpu = cpu_seconds(prom.pid) - cpu0
        elapsed = time.monotonic() - began
        print(f"after {elapsed:.0f}s, {exporter.scrapes} scrapes (last rendered in "
              f"{exporter.render_s:.1f}s): Prometheus used {cpu:.1f} CPU seconds "
              f"({cpu / (elapsed / args.interval):.2f} per {iv} scrape and evaluation cycle)")
        print("load average (1, 5, 15 min): " + ", ".join(f"{x:.1f}" for x in os.getloadavg())
              + f" on {os.cpu_count()} cores", flush=True)
        if not args.without_localisation:
            report(base, fleet, args.nodes, times, names)
    finally:
        prom.terminate()
        prom.wait()
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"command: bench/localisation_bench.py --nodes {args.nodes} --rails {args.rails} "
          f"--k {args.k} --seed {args.seed} --interval {args.interval} --wait {args.wait:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
