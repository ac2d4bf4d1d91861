#!/usr/bin/env python3
"""Fleet localisation end to end on a leaf/spine fabric (docs/fleet.md, "Tests"): twelve
`fabricwatch serve` daemons (the build's binary) in network namespaces, 2 leaves of 6 nodes,
each node on a peer-channel network and two rails cabled through one bridge per leaf and
network with a spine bridge per network between the leaves (leafspine_lab.py), its `leaf`
topology label set, the tcp kind on the peer channel and the fabric kind (libfabric's tcp
provider) on both rails; a real Prometheus with the shipped rules (recording.yml, alerts.yml,
localisation.yml; every `for:`, `keep_firing_for:` and range 30 times shorter) scraping them over a monitoring
network no fault touches, a real Alertmanager with the shipped inhibit_rules and a webhook
receiver here.

Faults, one at a time, each repaired and everything resolved before the next:
  1. a node killed                       -> FabricwatchNodeUnreachable naming it
  2. one rail's NIC of one node down     -> FabricwatchNodeRailUnreachable naming node and rail
  3. one rail of one leaf down           -> FabricwatchRailSwitchSuspect naming leaf and rail
  4. a whole leaf down (all 3 bridges)   -> FabricwatchSwitchSuspect naming the leaf
  5. a slow rail link (tc tbf)           -> FabricwatchNodeRailSlow naming node and rail
  6. a node that missed a secret rotation -> FabricwatchNodeCutOff naming it
For each: the cause's alert reaches the webhook (the time is printed); every other alert that
reaches Alertmanager is inhibited (GET /api/v2/alerts) and never reaches the webhook, except
the few that the shipped rules leave uninhibited by design (UNINHIBITED, printed when seen);
the listed symptoms are there and inhibited; after the repair no symptom reaches the webhook
(the causes' keep_firing_for outlasts them), the cause's alert reaches the webhook as
resolved, Alertmanager holds no alert and Prometheus none firing. Every wait polls
what Prometheus and Alertmanager report; the deadlines only bound a failure.

Usage: leafspine_e2e_test.py [--keep]   FW_BINARY, FW_SOURCE_DIR as for the other e2e tests;
FW_LEAFSPINE_FAULTS=1,2,4 runs some faults only. Needs root for the namespaces: exits 77
(skipped) without them unless FW_REQUIRE names netns.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

import yaml

import leafspine_lab as lab
from lab_tools import (PrometheusApi, Processes, Webhook, die_with_parent, free_port, http_json,
                       matches, required, scaled_rules)

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.environ.get("FW_SOURCE_DIR", os.path.normpath(os.path.join(HERE, "../..")))
BINARY = os.environ.get("FW_BINARY", os.path.join(SOURCE, "build/fabricwatch"))
INSIDE = "FW_LEAFSPINE_E2E_INSIDE"
# The rules run 30 times faster (`for: 5m` -> 10 s, five probe rounds of 2 s): a fault's first
# round or two, in which some pairs still show their state from before, stay well inside a
# `for:` (at 60 times, 5 s against 4 s of two rounds, transients of that kind went pending).
SCALE = 30
DEADLINE = float(os.environ.get("FW_LEAFSPINE_DEADLINE", "120"))  # per wait: bounds failures only
PROBE_INTERVAL = "2s"
RULE_FILES = ("recording.yml", "alerts.yml", "localisation.yml")
SECRET = "leafspine-e2e-secret-0123456789abcdef"
ROTATED = "leafspine-e2e-rotated-0123456789abcdef"
# Alertmanager's route here (the shipped file's is a placeholder): one group per alert, so that
# each alert's own time to the webhook is measured; group_wait lets a cause that fires an
# evaluation or two after its symptoms (other rule groups) arrive before they are notified.
ROUTE = {"receiver": "webhook", "group_by": ["..."], "group_wait": "5s",
         "group_interval": "2s", "repeat_interval": "1h"}
# Alerts that compare a node's fabric latency or bandwidth with its own best: on a loaded 2-core
# machine a healthy veth swings past their factors (a preemption is milliseconds against
# microseconds), so they may fire or stay firing whatever the fault. They are reported, but the
# test waits for neither their silence nor their resolution.
OWN_BEST = {"FabricwatchFabricLatencyHigh", "FabricwatchFabricBandwidthLow"}
# Alerts the shipped rules and inhibitions leave uninhibited by design (docs/fleet.md): they may
# reach the webhook during a fault; the test prints them.
UNINHIBITED = {
    "FabricwatchDown": "Prometheus cannot scrape the node: a second, true fact (docs/fleet.md)",
    "FabricwatchFabricLatencyHigh": "per prober, against its own best; not inhibited",
    "FabricwatchFabricBandwidthLow": "per prober, against its own best; not inhibited",
    "FabricwatchFabricProbeFailing": "per prober; inhibited only for a cut-off node",
}


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


class Failure(Exception):
    pass


def text(path):
    with open(path) as f:
        return f.read()


class Test:
    def __init__(self, tmp):
        self.tmp = tmp
        self.procs = Processes(tmp)
        self.fabric = lab.Fabric()
        self.webhook = None
        self.prom = None
        self.am = None
        self.nodes = {}
        self.killed = set()  # daemons stopped on purpose

    # waiting -------------------------------------------------------------------------------

    def wait_for(self, what, predicate, timeout=DEADLINE, interval=0.5, details=None):
        end = time.monotonic() + timeout
        last = None
        while True:
            gone = self.procs.exited(self.killed)
            if gone:
                raise Failure(f"{gone[0]} exited with {gone[1]}:\n"
                              f"{self.procs.log_text(gone[0])[-3000:]}")
            try:
                last = predicate()
                if last:
                    return last
            except (OSError, ValueError, RuntimeError) as e:
                last = e
            if time.monotonic() > end:
                try:
                    extra = details() if details else ""
                except (OSError, ValueError, RuntimeError) as e:
                    extra = f"\n(Prometheus or Alertmanager did not answer: {e!r})"
                raise Failure(f"timed out after {timeout:.0f}s waiting for {what} "
                              f"(last: {last!r}){extra}")
            time.sleep(interval)

    # setup ---------------------------------------------------------------------------------

    def start(self):
        self.fabric.build()
        os.makedirs(os.path.join(self.tmp, "nodes"))
        with open(os.path.join(self.tmp, "nodes", "peers"), "w") as f:
            f.write("".join(f"{lab.NETS['p'][1]}.{i}:{lab.PEER_PORT}\n"
                            for i in range(1, lab.NODES + 1)))
        for i in range(1, lab.NODES + 1):
            d = lab.Daemon(self.fabric, self.procs, BINARY, i, os.path.join(self.tmp, "nodes"),
                           PROBE_INTERVAL)
            d.write_config(SECRET)
            d.start()
            self.nodes[d.name] = d
        self.webhook = Webhook()
        am_port, prom_port = free_port(), free_port()
        self.start_alertmanager(am_port)
        self.start_prometheus(prom_port, am_port)
        self.prom = PrometheusApi(f"http://127.0.0.1:{prom_port}")
        self.am = f"http://127.0.0.1:{am_port}"
        self.check_rules_loaded()

    def start_alertmanager(self, port):
        shipped = yaml.safe_load(text(os.path.join(SOURCE, "deploy/alertmanager/alertmanager.yml")))
        cfg = os.path.join(self.tmp, "alertmanager.yml")
        with open(cfg, "w") as f:
            json.dump({"route": ROUTE, "inhibit_rules": shipped["inhibit_rules"],
                       "receivers": [{"name": "webhook", "webhook_configs": [{
                           "url": f"http://127.0.0.1:{self.webhook.port}/",
                           "send_resolved": True}]}]}, f)
        self.start_service("alertmanager", port, [
            "prometheus-alertmanager", "--config.file=" + cfg,
            "--storage.path=" + os.path.join(self.tmp, "alertmanager-data"),
            "--cluster.listen-address=", "--log.level=warn"])

    def start_prometheus(self, port, am_port):
        rules = []
        for name in RULE_FILES:
            dst = os.path.join(self.tmp, "rules", name)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            with open(dst, "w") as f:
                f.write(scaled_rules(text(os.path.join(SOURCE, "deploy/prometheus", name)), SCALE))
            rules.append(dst)
        cfg = os.path.join(self.tmp, "prometheus.yml")
        with open(cfg, "w") as f:
            json.dump({
                "global": {"scrape_interval": "1s", "scrape_timeout": "1s",
                           "evaluation_interval": "1s"},
                "rule_files": rules,
                "alerting": {"alertmanagers": [{"static_configs": [
                    {"targets": [f"127.0.0.1:{am_port}"]}]}]},
                "scrape_configs": [{"job_name": "fabricwatch", "static_configs": [
                    {"targets": [d.instance for d in self.nodes.values()],
                     "labels": {"cluster": "leafspine"}}]}],
            }, f)
        self.start_service("prometheus", port, [
            "prometheus", "--config.file=" + cfg,
            "--storage.tsdb.path=" + os.path.join(self.tmp, "prometheus-data"),
            "--rules.alert.resend-delay=1s", "--log.level=warn"])

    def start_service(self, name, port, argv):
        self.procs.start(name, argv + [f"--web.listen-address=127.0.0.1:{port}"])
        self.wait_for(f"{name} to be ready", lambda: http_json_ok(
            f"http://127.0.0.1:{port}/-/ready"))

    def check_rules_loaded(self):
        groups = self.prom.api("/api/v1/rules")["groups"]
        loaded = {r["name"]: r for g in groups for r in g["rules"]}
        causes = yaml.safe_load(text(os.path.join(SOURCE, "deploy/prometheus/localisation.yml")))
        self.causes = {r["alert"] for g in causes["groups"] for r in g["rules"] if "alert" in r}
        for name in self.causes:
            if name not in loaded:
                raise Failure(f"Prometheus did not load {name}")
        self.loaded = loaded

    # what Prometheus and Alertmanager say --------------------------------------------------

    def am_alerts(self):
        return http_json(self.am + "/api/v2/alerts")

    def healthy(self):
        """Every node scraped, every member active, every pair up on tcp and both rails,
        every node's leaf known to the rules, nothing suspect, no alert anywhere. Sets
        self.unhealthy to what is not."""
        q = self.prom.query
        n = lab.NODES
        wanted = [(f'count(up{{job="fabricwatch"}} == 1) == {n}', "a node not scraped"),
                  (f'count(fabricwatch_peer_members{{state="active"}} == {n - 1}) == {n}',
                   "a node with members not active"),
                  (f'count(peer_node:fabricwatch_topology_leaf:info) == {n}',
                   "a node's leaf not recorded"),
                  (f'count(fabricwatch_probe_tcp_peer_up == 1) >= {n * (n - 1)}',
                   "tcp pairs missing")]
        wanted += [(f'count(fabricwatch_probe_fabric_peer_rail_up{{rail="{r}"}} == 1) >= {n}',
                    f"rail {r} pairs missing") for r in lab.RAILS]
        unwanted = [('fabricwatch_probe_tcp_peer_up == 0', "tcp pairs failing"),
                    ('fabricwatch_probe_fabric_peer_rail_up == 0', "rail pairs failing"),
                    ('{__name__=~".+:fabricwatch_localisation_.+:suspect"}', "suspects")]
        self.unhealthy = ([why for expr, why in wanted if not q(expr)] +
                          [f"{why}: {[describe(r['metric']) for r in q(expr)][:4]}"
                           for expr, why in unwanted if q(expr)])
        if self.active_alerts():
            self.unhealthy.append("alerts")
        return not self.unhealthy

    def active_alerts(self):
        """Alerts firing in Prometheus, cause alerts pending there, alerts in Alertmanager,
        except OWN_BEST."""
        prom = [a["labels"] for a in self.prom.alerts() if a["state"] == "firing" or
                a["labels"]["alertname"] in self.causes]
        return [l for l in prom + [a["labels"] for a in self.am_alerts()]
                if l["alertname"] not in OWN_BEST]

    def alert_summary(self):
        fmt = describe
        prom = sorted(f"{fmt(a['labels'])}={a['state']}" for a in self.prom.alerts())
        am = sorted(f"{fmt(a['labels'])}={a['status']['state']}" for a in self.am_alerts())
        return (f"\nPrometheus: {prom}\nAlertmanager: {am}\nnot healthy: "
                f"{getattr(self, 'unhealthy', '')}")

    # one fault -------------------------------------------------------------------------------

    def run_fault(self, number, title, inject, repair, expected, symptoms=(), allow_down=()):
        """expected: label sets of the cause alerts; symptoms: label sets that must be in
        Alertmanager, inhibited; allow_down: instances whose FabricwatchDown is expected."""
        log(f"fault {number}: {title}")
        mark = self.webhook.mark()
        t0 = time.monotonic()
        inject()
        extra = []  # uninhibited-by-design alerts seen at the webhook

        def allowed(labels):
            name = labels["alertname"]
            if any(matches(labels, w) for w in expected):
                return True
            if name == "FabricwatchDown":
                return labels.get("instance") in allow_down
            return name in UNINHIBITED

        elsewhere = set()  # other cause alerts active in Prometheus meanwhile (explained or not)
        leaked = []  # symptoms that reached the webhook after the repair
        repaired = [float("inf")]  # the webhook's mark at the repair

        def check_webhook():
            for a in self.prom.alerts():
                labels = a["labels"]
                if labels["alertname"] in self.causes and not any(
                        matches(labels, w) for w in expected):
                    elsewhere.add((describe(labels), a["state"]))
            for k, (status, labels, _) in enumerate(self.webhook.since(mark)):
                if status != "firing":
                    continue
                if not allowed(labels) and mark + k >= repaired[0]:
                    # Un-inhibited once the cause resolved, before it resolved itself: the
                    # causes' keep_firing_for is there to prevent it (docs/fleet.md, "After
                    # the repair"); counted, and failed at the end of the run.
                    if labels not in leaked:
                        leaked.append(labels)
                    continue
                if not allowed(labels):
                    raise Failure(f"fault {number}: the webhook got {labels['alertname']} "
                                  f"{json.dumps(labels, sort_keys=True)}, neither the cause "
                                  f"nor inhibited{self.alert_summary()}")
                if labels not in extra and not any(matches(labels, w) for w in expected):
                    extra.append(labels)

        def arrived():
            check_webhook()
            return all(self.webhook.seen("firing", w, mark) for w in expected)
        # A cause whose evidence breaks off for an evaluation starts its `for:` again (the slow
        # rail's grey-failure level, against the noise of a loaded machine): its deadline
        # allows four more of them.
        longest = max(self.loaded[w["alertname"]]["duration"] for w in expected)
        self.wait_for(f"fault {number}: {expected} at the webhook", arrived,
                      timeout=DEADLINE + 4 * longest, details=self.alert_summary)
        times = [self.webhook.first("firing", w, mark) - t0 for w in expected]
        log(f"fault {number}: cause at the webhook after {max(times):.1f}s")

        def inhibited():
            check_webhook()
            present = self.am_alerts()
            for a in present:
                labels, state = a["labels"], a["status"]
                if any(matches(labels, w) for w in expected) or labels["alertname"] in UNINHIBITED:
                    continue
                if not state["inhibitedBy"]:
                    return False
            return all(any(matches(a["labels"], s) and a["status"]["inhibitedBy"]
                           for a in present) for s in symptoms)
        self.wait_for(f"fault {number}: every other alert in Alertmanager inhibited",
                      inhibited, details=self.alert_summary)
        suppressed = sorted({a["labels"]["alertname"] for a in self.am_alerts()
                             if a["status"]["inhibitedBy"]})
        log(f"fault {number}: inhibited in Alertmanager: {', '.join(suppressed) or 'none'}")

        t1 = time.monotonic()
        repair_mark = repaired[0] = self.webhook.mark()
        repair()

        # When the cause stopped firing in Prometheus, and when anything else it explains
        # (not OWN_BEST, not UNINHIBITED) was last seen firing there: the hold's margin.
        cause_gone, symptom_seen = [None], [None]

        def resolved():
            check_webhook()
            now = time.monotonic()
            firing = [a["labels"] for a in self.prom.alerts() if a["state"] == "firing"]
            if any(not any(matches(l, w) for w in expected) and l["alertname"] not in OWN_BEST
                   and l["alertname"] not in UNINHIBITED for l in firing):
                symptom_seen[0] = now
            if cause_gone[0] is None and not any(matches(l, w) for l in firing for w in expected):
                cause_gone[0] = now
            fired = [l for s, l, _ in self.webhook.since(mark)
                     if s == "firing" and l["alertname"] not in OWN_BEST]
            if not all(self.webhook.seen("resolved", l, repair_mark) for l in fired):
                return False
            return not self.active_alerts()
        self.wait_for(f"fault {number}: everything to resolve after the repair", resolved,
                      details=self.alert_summary)
        resolve_time = time.monotonic() - t1
        margin = None if symptom_seen[0] is None else cause_gone[0] - symptom_seen[0]
        log(f"fault {number}: resolved at the webhook {resolve_time:.1f}s after the repair; "
            f"the cause stopped firing {cause_gone[0] - t1:.1f}s after it, "
            + ("no symptom fired after the repair" if margin is None else
               f"its symptoms {symptom_seen[0] - t1:.1f}s after it (the hold's margin: "
               f"{margin:+.1f}s)"))
        self.wait_for(f"fault {number}: a healthy fleet again", self.healthy,
                      details=self.alert_summary)
        check_webhook()
        for what, state in sorted(elsewhere):
            log(f"fault {number}: also {state} in Prometheus (inhibited or gone before the "
                f"webhook): {what}")
        for labels in leaked:
            log(f"fault {number}: after the repair, a symptom reached the webhook before it "
                f"resolved: {describe(labels)}")
        for labels in extra:
            log(f"fault {number}: uninhibited by design, reached the webhook: "
                f"{labels['alertname']} {labels.get('instance', '')} "
                f"({UNINHIBITED.get(labels['alertname'], 'the culprit')})")
        return max(times), resolve_time, leaked, margin

    # the faults ------------------------------------------------------------------------------

    def restart(self, d):
        d.start()
        self.wait_for(f"{d.name} to be scraped again", lambda: self.prom.query(
            f'up{{instance="{d.instance}"}} == 1'))

    def faults(self):
        """[(number, title, inject, repair, expected, symptoms, allow_down)]"""
        n = self.nodes
        C = {"cluster": "leafspine"}
        out = []

        killed = n["n03"]

        def kill():
            self.killed.add(killed.log_name())
            killed.kill()
        out.append((1, "n03 killed", kill, lambda: self.restart(killed),
                    [{**C, "alertname": "FabricwatchNodeUnreachable", "peer_node": "n03",
                      "leaf": "leaf-1"}],
                    [{**C, "alertname": "FabricwatchPeerUnreachable", "peer_node": "n03"}],
                    (killed.instance,)))
        out.append((2, "n08's rail 0 NIC (eth1) down",
                    lambda: self.fabric.set_node_link(8, "r0", False),
                    lambda: self.fabric.set_node_link(8, "r0", True),
                    [{**C, "alertname": "FabricwatchNodeRailUnreachable", "peer_node": "n08",
                      "rail": "0", "leaf": "leaf-2"}], (), ()))
        out.append((3, "leaf-1's rail 1 switch down (its bridge cut from its nodes)",
                    lambda: self.fabric.set_leaf(1, ["r1"], False),
                    lambda: self.fabric.set_leaf(1, ["r1"], True),
                    [{**C, "alertname": "FabricwatchRailSwitchSuspect", "leaf": "leaf-1",
                      "rail": "1"}], (), ()))
        out.append((4, "leaf-2 down (its peer-channel and both rail bridges)",
                    lambda: self.fabric.set_leaf(2, list(lab.NETS), False),
                    lambda: self.fabric.set_leaf(2, list(lab.NETS), True),
                    [{**C, "alertname": "FabricwatchSwitchSuspect", "leaf": "leaf-2"}],
                    [{**C, "alertname": "FabricwatchPeerUnreachable", "peer_node": "n09"}], ()))
        out.append((5, "n10's rail 0 link slow (tbf 1mbit on eth1)",
                    lambda: self.fabric.slow_link(10, "r0", "1mbit"),
                    lambda: self.fabric.unslow_link(10, "r0"),
                    [{**C, "alertname": "FabricwatchNodeRailSlow", "peer_node": "n10",
                      "rail": "0", "leaf": "leaf-2"}], (), ()))
        cut = n["n05"]
        out.append((6, "n05 missed a secret rotation", lambda: self.rotate(cut),
                    lambda: self.reload(cut, ROTATED),
                    [{**C, "alertname": "FabricwatchNodeCutOff", "peer_node": "n05",
                      "leaf": "leaf-1"}],
                    [{**C, "alertname": "FabricwatchNodeIsolated", "instance": cut.instance}],
                    ()))
        return out

    def observe_fault(self, number, title, inject, repair, missing):
        """A fault whose cause alert the shipped rules do not have yet: says what reaches the
        webhook instead, repairs, waits for everything to resolve; returns the failure."""
        log(f"fault {number}: {title} (the rules have no {missing}: what fires instead)")
        mark, t0 = self.webhook.mark(), time.monotonic()
        inject()
        causes = lambda: [l for st, l, _ in self.webhook.since(mark)
                          if st == "firing" and l["alertname"] in self.causes]
        self.wait_for(f"fault {number}: a cause alert at the webhook", causes,
                      details=self.alert_summary)
        log(f"fault {number}: first cause at the webhook after {time.monotonic() - t0:.1f}s")
        self.wait_for(f"fault {number}: Alertmanager to process its alerts", lambda: all(
            a["status"]["state"] != "unprocessed" for a in self.am_alerts()))
        got = sorted({describe(l) for st, l, _ in self.webhook.since(mark) if st == "firing"})
        summary = self.alert_summary()
        log(f"fault {number}: at the webhook: {got}{summary}")
        repair_mark = self.webhook.mark()
        repair()
        self.wait_for(f"fault {number}: everything to resolve after the repair", lambda: all(
            self.webhook.seen("resolved", l, repair_mark) for st, l, _ in
            self.webhook.since(mark) if st == "firing" and l["alertname"] not in OWN_BEST)
            and not self.active_alerts(), details=self.alert_summary)
        self.wait_for(f"fault {number}: a healthy fleet again", self.healthy,
                      details=self.alert_summary)
        return (f"fault {number} ({title}): the shipped rules have no {missing}; the webhook "
                f"got {got}")

    def reload(self, d, secret):
        before = self.procs.log_text(d.log_name()).count("configuration reloaded")
        d.reload(secret)
        self.wait_for(f"{d.name} to reload", lambda: self.procs.log_text(
            d.log_name()).count("configuration reloaded") > before)

    def rotate(self, missed):
        """Every node but `missed` takes a new secret (SIGHUP); `missed` keeps the old one."""
        others = [d for d in self.nodes.values() if d is not missed]
        for d in others:
            self.reload(d, ROTATED)


def describe(labels):
    keep = ("peer_node", "instance", "leaf", "rail", "peer")
    return labels.get("alertname", labels.get("__name__", "")) + "{" + ",".join(
        f"{k}={labels[k]}" for k in keep if k in labels) + "}"


def http_json_ok(url):
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status == 200
    except OSError:
        return False


def run(t):
    started = time.monotonic()
    t.start()
    t.wait_for("a healthy fleet (every pair up on tcp and both rails, nothing suspect)",
               t.healthy, timeout=DEADLINE, details=t.alert_summary)
    log(f"fleet healthy {time.monotonic() - started:.1f}s after the start")
    chosen = os.environ.get("FW_LEAFSPINE_FAULTS")
    chosen = {int(x) for x in chosen.split(",")} if chosen else None
    results, failures, leaks = [], [], []
    for number, title, inject, repair, expected, symptoms, allow_down in t.faults():
        if chosen and number not in chosen:
            continue
        missing = [w["alertname"] for w in expected if w["alertname"] not in t.loaded]
        if missing:
            failures.append(t.observe_fault(number, title, inject, repair, missing))
            continue
        fire, resolve, leaked, margin = t.run_fault(number, title, inject, repair, expected,
                                                    symptoms, allow_down)
        results.append((number, title, fire, resolve, leaked, margin))
    for number, title, fire, resolve, leaked, margin in results:
        log(f"fault {number} ({title}): at the webhook {fire:.1f}s after the fault, "
            f"resolved {resolve:.1f}s after the repair"
            + ("" if margin is None else f", the cause outlasting its symptoms by {margin:.1f}s")
            + (f", {len(leaked)} symptom(s) notified after the repair" if leaked else ""))
        leaks += [f"fault {number} ({title}): after the repair the webhook got "
                  f"{describe(labels)}, uninhibited before it resolved" for labels in leaked]
    failures += leaks
    if failures:
        raise Failure("\n".join(failures))
    log(f"PASS in {time.monotonic() - started:.1f}s")


def reexec_in_namespace():
    env = dict(os.environ, **{INSIDE: "1"})
    p = subprocess.Popen(["unshare", "--net", sys.executable, os.path.abspath(__file__)]
                         + sys.argv[1:], env=env,
                         preexec_fn=lambda: die_with_parent(signal.SIGTERM))
    try:
        return p.wait()
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def main():
    for tool in ("prometheus", "prometheus-alertmanager"):
        if not shutil.which(tool):
            print(f"{'FAIL' if required('tools') else 'SKIP'}: {tool} is not installed "
                  f"(scripts/dev installs it)")
            return 1 if required("tools") else 77
    if not os.access(BINARY, os.X_OK):
        print(f"FAIL: no fabricwatch binary at {BINARY}")
        return 1
    if os.environ.get(INSIDE) != "1":
        why = lab.unavailable_reason()
        if why:
            print(f"{'FAIL' if required('netns') else 'SKIP'}: {why}")
            return 1 if required("netns") else 77
        return reexec_in_namespace()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    tmp = tempfile.mkdtemp(prefix="fw-leafspine-e2e-")
    t = Test(tmp)
    try:
        run(t)
        return 0
    except Failure as e:
        print(f"FAIL: {e}")
        for name in t.procs.procs:
            print(f"--- {name} log (tail) ---\n{t.procs.log_text(name)[-1500:]}")
        return 1
    finally:
        t.procs.stop()
        t.fabric.destroy()
        if t.webhook:
            t.webhook.close()
        if "--keep" in sys.argv:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
