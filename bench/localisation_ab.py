#!/usr/bin/env python3
"""Two versions of deploy/prometheus/localisation.yml's rules, timed on the same data.

    bench/localisation_ab.py DATA_DIR OLD.yml NEW.yml [--rounds 2]

DATA_DIR is the TSDB a bench/localisation_bench.py --keep run left (its `data` folder). A
Prometheus is started on it with no scrape and no rules, and each recording rule of the
group fabricwatch-localisation of each file is run, in the group's order, as an instant query
`count(expr)` at the head's last sample (count: so that the answer is not the cost), OLD then
NEW, --rounds times. Every rule reads the recorded series that the bench's run wrote, so the
two versions must record the same names (NEW may add some: the bench must have run NEW). It
prints each rule's evaluation time (the engine's evalTotalTime) and each version's sum: the
cost of one cycle of the group, compared under the same load, on the same series.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

import yaml

from localisation_bench import api, free_port


def rules(path):
    with open(path) as f:
        doc = yaml.safe_load(f)
    group = next(g for g in doc["groups"] if g["name"] == "fabricwatch-localisation")
    return [(r["record"], r["expr"]) for r in group["rules"] if "record" in r]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="fw-localisation-ab-")
    cfg = os.path.join(tmp, "prometheus.yml")
    with open(cfg, "w") as f:
        f.write("global: {}\n")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    prom = subprocess.Popen(["prometheus", f"--config.file={cfg}",
                             f"--storage.tsdb.path={args.data}", "--query.timeout=1h",
                             f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"])
    try:
        for _ in range(600):
            try:
                with urllib.request.urlopen(base + "/-/ready", timeout=5) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(1)
        at = api(base, "/api/v1/status/tsdb", http_timeout=3600)["headStats"]["maxTime"] / 1000
        versions = {"old": rules(args.old), "new": rules(args.new)}
        sums = {"old": [], "new": []}
        for rnd in range(args.rounds):
            for v in ("old", "new"):
                total = 0.0
                for name, expr in versions[v]:
                    t0 = time.monotonic()
                    doc = api(base, "/api/v1/query", http_timeout=3600, query=f"count({expr})",
                              time=f"{at:.3f}", stats="all")
                    wall = time.monotonic() - t0
                    t = doc.get("stats", {}).get("timings", {}).get("evalTotalTime", wall)
                    n = doc["result"][0]["value"][1] if doc["result"] else "0"
                    total += t
                    print(f"round {rnd + 1} {v} {t:8.3f}s {n:>8} series  {name}", flush=True)
                sums[v].append(total)
                print(f"round {rnd + 1} {v}: one cycle {total:.3f}s", flush=True)
        for v in ("old", "new"):
            print(f"{v}: " + ", ".join(f"{x:.2f}s" for x in sums[v]) + " per cycle")
        print("load average (1, 5, 15 min): "
              + ", ".join(f"{x:.1f}" for x in os.getloadavg()) + f" on {os.cpu_count()} cores")
    finally:
        prom.terminate()
        prom.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
