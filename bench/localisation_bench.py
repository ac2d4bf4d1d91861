#!/usr/bin/env python3
"""Fleet localisation (docs/fleet.md) on a synthetic fleet, evaluated by Prometheus itself.

    bench/localisation_bench.py [--nodes 1000] [--rails 8] [--k 8] [--seed 21] [--keep]

Simulates the probe rounds of N daemons (the mesh's ring selection of probes/mesh/selection.cc
over a seeded ring order, k peers a round, the peers that failed last round probed again) and
serves what they would export, as one scrape target whose series carry each daemon's target
labels (honor_labels): the tcp kind's pairs of the last two rounds, the fabric kind's pairs of
the latest round on every rail (at most k peers, failing ones first) and
fabricwatch_peer_self_info. Three rounds pass per scrape (10 s rounds, 30 s scrapes). Faults
are planted at every level on disjoint nodes (nodes down, cut off, one rail of a node, single
broken paths) and 1% of all other probes fail at random. A real Prometheus scrapes it every
30 s and evaluates the shipped rules every 30 s; once the alerts' `for:` (5 minutes) has run
out, the bench prints, per level, precision and recall of the suspect records and of the
firing alerts against the planted faults, the localisation's recorded series per node and
each rule group's evaluation time.

Needs prometheus (Debian's prometheus package). Takes about 7 minutes.
"""
import argparse
import http.server
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RULES = [os.path.join(ROOT, "deploy/prometheus", f)
         for f in ("recording.yml", "alerts.yml", "localisation.yml")]
LEVELS = ("node", "cut_off", "rail", "pair")
ALERT_OF = {"node": "FabricwatchNodeUnreachable", "cut_off": "FabricwatchNodeCutOff",
            "rail": "FabricwatchNodeRailUnreachable", "pair": "FabricwatchPairUnreachable"}


def targets(pos, n, rnd, k):
    """probes/mesh/selection.cc, SelectionRing::targets."""
    others = n - 1
    m = 1 << (others - 1).bit_length() if others > 1 else 1
    base = ((rnd % m) * (k % m)) % m
    out = []
    for j in range(min(k, others)):
        raw = (base + j) % m
        offset = 1 + (raw if raw < others else raw - m // 2)
        t = (pos + offset) % n
        if t not in out:
            out.append(t)
    return out


class Fleet:
    """N daemons' probe results, round by round: the ring selection of each round, and the
    peers that failed in the previous round probed again (up to k more), as PeerProber does."""

    def __init__(self, n, rails, k, seed):
        self.n, self.rails, self.k = n, rails, k
        self.rng = random.Random(seed)
        self.order = list(range(n))
        self.rng.shuffle(self.order)     # ring order, as the hashes would give
        self.round = 1_000_003
        self.prev = {a: {} for a in range(n)}    # prober -> {peer: up} of the previous round
        self.cur = {a: {} for a in range(n)}
        self.rail_cur = {a: {} for a in range(n)}  # prober -> {(peer, rail): up}, latest run
        # Faults on disjoint nodes.
        nodes = list(range(n))
        self.rng.shuffle(nodes)
        per = max(1, n // 200)
        self.down = set(nodes[:per])
        self.cut = set(nodes[per:2 * per])
        self.rail_bad = {(x, self.rng.randrange(rails)) for x in nodes[2 * per:4 * per]}
        faulted = set(nodes[:4 * per])
        # Pairs that the ring selects in every round (offset 1 of each round's offsets is
        # not fixed, so draw among all ordered pairs of healthy nodes: a broken path between
        # two nodes stays broken whoever's turn it is to probe it).
        healthy = [x for x in range(n) if x not in faulted]
        self.pair_bad = set()
        while len(self.pair_bad) < 2 * per:
            a, b = self.rng.sample(healthy, 2)
            self.pair_bad.add((a, b))

    def tcp_up(self, a, b):
        if b in self.down or a in self.cut or b in self.cut or (a, b) in self.pair_bad:
            return 0
        return 0 if self.rng.random() < 0.01 else 1

    def rail_up(self, a, b, r):
        if b in self.down or a in self.cut or b in self.cut:
            return 0
        if (a, r) in self.rail_bad or (b, r) in self.rail_bad:
            return 0
        return 0 if self.rng.random() < 0.01 else 1

    def step(self):
        self.round += 1
        nxt = {}
        for pos in range(self.n):
            a = self.order[pos]
            peers = [self.order[t] for t in targets(pos, self.n, self.round, self.k)]
            again = [b for b, up in self.cur[a].items() if not up and b not in peers]
            peers += again[:self.k]
            nxt[a] = {b: self.tcp_up(a, b) for b in peers}
            rails = {(b, r): self.rail_up(a, b, r) for b in peers for r in range(self.rails)}
            failing = [b for b in peers if any(not rails[(b, r)] for r in range(self.rails))]
            kept = (failing + [b for b in peers if b not in failing])[:self.k]
            self.rail_cur[a] = {(b, r): rails[(b, r)] for b in kept for r in range(self.rails)}
        self.prev, self.cur = self.cur, nxt

    def exposition(self):
        """What N daemons serve, as one text (honor_labels keeps their target labels)."""
        out = ["# TYPE fabricwatch_peer_self_info gauge",
               "# TYPE fabricwatch_probe_tcp_peer_up gauge",
               "# TYPE fabricwatch_probe_fabric_peer_rail_up gauge"]
        for a in range(self.n):
            if a in self.down:
                continue
            t = f'cluster="bench",job="fabricwatch",instance="{inst(a)}"'
            out.append(f'fabricwatch_peer_self_info{{{t},peer_node="{name(a)}"}} 1')
            pairs = dict(self.prev[a])
            pairs.update(self.cur[a])
            for b, up in pairs.items():
                out.append(f'fabricwatch_probe_tcp_peer_up{{{t},peer="{addr(b)}",'
                           f'peer_node="{name(b)}"}} {up}')
            for (b, r), up in self.rail_cur[a].items():
                out.append(f'fabricwatch_probe_fabric_peer_rail_up{{{t},peer="{addr(b)}",'
                           f'peer_node="{name(b)}",rail="{r}"}} {up}')
        return ("\n".join(out) + "\n").encode()


def name(x):
    return f"node-{x:05d}"


def inst(x):
    return f"{name(x)}:19736"


def addr(x):
    return f"10.{x >> 16 & 255}.{x >> 8 & 255}.{x & 255}:19737"


class Exporter(threading.Thread):
    """Serves the fleet on /metrics; each scrape runs the rounds since the last one (a 10 s
    probe interval, a 30 s scrape interval: three rounds)."""

    def __init__(self, fleet, rounds_per_scrape):
        super().__init__(daemon=True)
        self.fleet, self.rounds = fleet, rounds_per_scrape
        self.scrapes, self.bytes, self.lock = 0, 0, threading.Lock()
        exporter = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                with exporter.lock:
                    for _ in range(exporter.rounds):
                        exporter.fleet.step()
                    body = exporter.fleet.exposition()
                    exporter.scrapes += 1
                    exporter.bytes = len(body)
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]

    def run(self):
        self.server.serve_forever()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def api(base, path, **params):
    url = f"{base}{path}?{urllib.parse.urlencode(params)}"
    with urllib.request.urlopen(url, timeout=60) as r:
        doc = json.load(r)
    if doc.get("status") != "success":
        raise RuntimeError(f"{url}: {doc}")
    return doc["data"]


def query(base, q):
    return api(base, "/api/v1/query", query=q)["result"]


def cpu_seconds(pid):
    """User and system time of a process, from /proc (less bent by a loaded machine than the
    wall time Prometheus reports per rule group)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def score(found, truth):
    hit = len(found & truth)
    p = hit / len(found) if found else 1.0
    r = hit / len(truth) if truth else 1.0
    return p, r, len(found), len(truth)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--rails", type=int, default=8)
    ap.add_argument("--k", type=int, default=8)
    ap.add_argument("--seed", type=int, default=21)
    ap.add_argument("--wait", type=float, default=390, help="seconds of rule evaluation")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--without-localisation", action="store_true",
                    help="load recording.yml and alerts.yml only: the baseline for CPU time")
    args = ap.parse_args()
    if not shutil.which("prometheus"):
        sys.exit("prometheus is not installed")
    tmp = tempfile.mkdtemp(prefix="fw-localisation-bench-")
    t0 = time.monotonic()
    fleet = Fleet(args.nodes, args.rails, args.k, args.seed)
    exporter = Exporter(fleet, rounds_per_scrape=3)
    fleet.step()
    body = fleet.exposition()
    series = body.count(b"\n") - 3
    print(f"fleet: {args.nodes} nodes, k = {args.k}, {args.rails} rails: {series} series "
          f"({series / args.nodes:.1f} per node, {len(body) / 1e6:.1f} MB a scrape); planted "
          f"{len(fleet.down)} down, {len(fleet.cut)} cut off, {len(fleet.rail_bad)} rails, "
          f"{len(fleet.pair_bad)} pairs; 1% of other probes fail")
    exporter.start()
    cfg = os.path.join(tmp, "prometheus.yml")
    with open(cfg, "w") as f:
        json.dump({"global": {"scrape_interval": "30s", "scrape_timeout": "25s",
                              "evaluation_interval": "30s"},
                   "rule_files": RULES[:2] if args.without_localisation else RULES,
                   "scrape_configs": [{"job_name": "fleet", "honor_labels": True,
                                       "static_configs": [{"targets": [
                                           f"127.0.0.1:{exporter.port}"]}]}]}, f)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    prom = subprocess.Popen(["prometheus", f"--config.file={cfg}",
                             f"--storage.tsdb.path={os.path.join(tmp, 'data')}",
                             f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"])
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
        print(f"Prometheus up; scraping and evaluating every 30 s for {args.wait:.0f}s")
        time.sleep(args.wait)
        truth = {"node": {name(x) for x in fleet.down},
                 "cut_off": {inst(x) for x in fleet.cut},
                 "rail": {(name(x), str(r)) for x, r in fleet.rail_bad},
                 "pair": {(inst(a), name(b)) for a, b in fleet.pair_bad}}
        records = {
            "node": ("peer_node:fabricwatch_localisation_unreachable:suspect",
                     lambda m: m["peer_node"]),
            "cut_off": ("instance:fabricwatch_localisation_cut_off:suspect",
                        lambda m: m["instance"]),
            "rail": ("peer_node_rail:fabricwatch_localisation_rail_unreachable:suspect",
                     lambda m: (m["peer_node"], m["rail"])),
            "pair": ("instance_peer:fabricwatch_localisation_pair_unreachable:suspect",
                     lambda m: (m["instance"], m["peer_node"]))}
        cpu = cpu_seconds(prom.pid) - cpu0
        elapsed = time.monotonic() - began
        print(f"after {elapsed:.0f}s, {exporter.scrapes} scrapes: Prometheus used {cpu:.1f} CPU "
              f"seconds ({cpu / (elapsed / 30):.2f} per 30 s scrape and evaluation cycle)")
        if args.without_localisation:
            return 0
        print("level     suspects now: precision recall (found/planted)   "
              "alerts firing: precision recall (found/planted)")
        for level in LEVELS:
            rec, key = records[level]
            now_found = {key(s["metric"]) for s in query(base, rec)}
            firing = {key(s["metric"]) for s in query(
                base, f'ALERTS{{alertname="{ALERT_OF[level]}",alertstate="firing"}}')}
            p1, r1, f1, t1 = score(now_found, truth[level])
            p2, r2, f2, t2 = score(firing, truth[level])
            print(f"{level:8}  {p1:.3f} {r1:.3f} ({f1}/{t1})"
                  f"{'':22}{p2:.3f} {r2:.3f} ({f2}/{t2})")
        recorded = query(base, 'count({__name__=~"[a-z_]+:fabricwatch_(probe_tcp_peers|'
                               'probe_tcp_probers|probe_fabric_peer_rails|localisation)[a-z_]*:'
                               '[a-z]+"})')
        n_rec = float(recorded[0]["value"][1]) if recorded else 0
        print(f"localisation series: {n_rec:.0f} ({n_rec / args.nodes:.1f} per node)")
        print("load average (1, 5, 15 min): " + ", ".join(f"{x:.1f}" for x in os.getloadavg())
              + f" on {os.cpu_count()} cores")
        for g in api(base, "/api/v1/rules")["groups"]:
            if not g["name"].startswith("fabricwatch-localisation"):
                continue
            print(f"group {g['name']}: last evaluation {g['evaluationTime']:.3f}s")
            for r in sorted(g["rules"], key=lambda r: -r["evaluationTime"])[:6]:
                print(f"  {r['evaluationTime']:.3f}s {r['name']}")
    finally:
        prom.terminate()
        prom.wait()
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"command: bench/localisation_bench.py --nodes {args.nodes} --rails {args.rails} "
          f"--k {args.k} --seed {args.seed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
