#!/usr/bin/env python3
"""deploy/alertmanager/alertmanager.yml, checked by the real tools:

1. `amtool check-config` accepts it;
2. a real Alertmanager (prometheus-alertmanager) loaded with it, sent one cause per level and
   symptoms of that cause and of other nodes (POST /api/v2/alerts, the way Prometheus sends
   them), inhibits exactly the symptoms of each cause: GET /api/v2/alerts must report every
   one of them inhibited and every other alert active.

Exit status 0 when all hold, 1 otherwise (77, skipped, when the tools are not installed and
FW_REQUIRE does not name tools).
"""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

from lab_tools import free_port, required

ROOT = pathlib.Path(os.environ.get("FW_SOURCE_DIR") or
                    pathlib.Path(__file__).resolve().parent.parent.parent)
CONFIG = ROOT / "deploy/alertmanager/alertmanager.yml"
DEADLINE = 30

# (labels, inhibited?) Symptoms carry the labels alerts.yml gives them, causes those of
# localisation.yml.
C = {"cluster": "lab"}
ALERTS = [
    # n07 is down: its peers' symptoms about it go, those about n08 stay.
    ({**C, "alertname": "FabricwatchNodeUnreachable", "peer_node": "n07"}, False),
    ({**C, "alertname": "FabricwatchPeerUnreachable", "peer": "10.0.0.7:19737",
      "peer_node": "n07"}, True),
    ({**C, "alertname": "FabricwatchNcclProbeFailing", "job": "fabricwatch",
      "instance": "n01:19736", "peer": "10.0.0.7:19737", "peer_node": "n07"}, True),
    ({**C, "alertname": "FabricwatchNodeRailUnreachable", "peer_node": "n07", "rail": "1"},
     True),
    ({**C, "alertname": "FabricwatchPeerUnreachable", "peer": "10.0.0.8:19737",
      "peer_node": "n08"}, False),
    # The same node name in another cluster is another node.
    ({"cluster": "other", "alertname": "FabricwatchPeerUnreachable", "peer": "10.0.0.7:19737",
      "peer_node": "n07"}, False),
    # n12 is cut off: others' symptoms about it, and its own, go.
    ({**C, "alertname": "FabricwatchNodeCutOff", "job": "fabricwatch", "instance": "n12:19736",
      "peer_node": "n12"}, False),
    ({**C, "alertname": "FabricwatchPeerUnreachable", "peer": "10.0.0.12:19737",
      "peer_node": "n12"}, True),
    ({**C, "alertname": "FabricwatchNodeIsolated", "job": "fabricwatch",
      "instance": "n12:19736"}, True),
    ({**C, "alertname": "FabricwatchFabricProbeFailing", "job": "fabricwatch",
      "instance": "n12:19736"}, True),
    ({**C, "alertname": "FabricwatchFabricProbeFailing", "job": "fabricwatch",
      "instance": "n13:19736"}, False),
    # One pair, n03 -> n15: the peer symptom for n15 and n03's NCCL run with n15 go; n04's
    # NCCL run with n15 stays.
    ({**C, "alertname": "FabricwatchPairUnreachable", "job": "fabricwatch",
      "instance": "n03:19736", "peer": "10.0.0.15:19737", "peer_node": "n15"}, False),
    ({**C, "alertname": "FabricwatchPeerUnreachable", "peer": "10.0.0.15:19737",
      "peer_node": "n15"}, True),
    ({**C, "alertname": "FabricwatchNcclProbeFailing", "job": "fabricwatch",
      "instance": "n03:19736", "peer": "10.0.0.15:19737", "peer_node": "n15"}, True),
    ({**C, "alertname": "FabricwatchNcclProbeFailing", "job": "fabricwatch",
      "instance": "n04:19736", "peer": "10.0.0.15:19737", "peer_node": "n15"}, False),
    # leaf-3 is down: the node alerts below it (they carry its leaf) go, a node alert below
    # leaf-4 stays.
    ({**C, "alertname": "FabricwatchSwitchSuspect", "leaf": "leaf-3"}, False),
    ({**C, "alertname": "FabricwatchNodeUnreachable", "peer_node": "n21", "leaf": "leaf-3"},
     True),
    ({**C, "alertname": "FabricwatchNodeCutOff", "job": "fabricwatch", "instance": "n22:19736",
      "peer_node": "n22", "leaf": "leaf-3"}, True),
    ({**C, "alertname": "FabricwatchNodeUnreachable", "peer_node": "n23", "leaf": "leaf-4"},
     False),
    # Rail 5's plane: the rail alerts on rail 5 go, one on rail 6 stays.
    ({**C, "alertname": "FabricwatchRailPlaneSuspect", "rail": "5"}, False),
    ({**C, "alertname": "FabricwatchNodeRailUnreachable", "peer_node": "n24", "rail": "5"},
     True),
    ({**C, "alertname": "FabricwatchNodeRailSlow", "peer_node": "n24", "rail": "6"}, False),
    # leaf-5's rail-2 switch: rail 2 alerts below leaf-5 go; rail 3 below it, and rail 2 below
    # leaf-6, stay.
    ({**C, "alertname": "FabricwatchRailSwitchSuspect", "leaf": "leaf-5", "rail": "2"}, False),
    ({**C, "alertname": "FabricwatchNodeRailUnreachable", "peer_node": "n30", "leaf": "leaf-5",
      "rail": "2"}, True),
    ({**C, "alertname": "FabricwatchNodeRailSlow", "peer_node": "n31", "leaf": "leaf-5",
      "rail": "2"}, True),
    ({**C, "alertname": "FabricwatchNodeRailUnreachable", "peer_node": "n31", "leaf": "leaf-5",
      "rail": "3"}, False),
    ({**C, "alertname": "FabricwatchNodeRailUnreachable", "peer_node": "n32", "leaf": "leaf-6",
      "rail": "2"}, False),
    # Rail 4 of n40 is low in bandwidth: the probers' FabricwatchFabricBandwidthLow whose
    # lowest pair is that rail go, and n40's own (its target labels); another prober's low
    # bandwidth to n40 on rail 0, and one without a pair, stay. Rail 7's plane silences a
    # bandwidth alert on rail 7, leaf-3's switch one below it.
    ({**C, "alertname": "FabricwatchNodeRailBandwidthLow", "job": "fabricwatch",
      "instance": "n40:19736", "peer_node": "n40", "rail": "4"}, False),
    ({**C, "alertname": "FabricwatchFabricBandwidthLow", "job": "fabricwatch",
      "instance": "n41:19736", "peer_node": "n40", "rail": "4"}, True),
    ({**C, "alertname": "FabricwatchFabricBandwidthLow", "job": "fabricwatch",
      "instance": "n40:19736"}, True),
    ({**C, "alertname": "FabricwatchFabricBandwidthLow", "job": "fabricwatch",
      "instance": "n42:19736", "peer_node": "n40", "rail": "0"}, False),
    ({**C, "alertname": "FabricwatchFabricBandwidthLow", "job": "fabricwatch",
      "instance": "n43:19736"}, False),
    ({**C, "alertname": "FabricwatchRailPlaneSuspect", "rail": "7"}, False),
    ({**C, "alertname": "FabricwatchNodeRailBandwidthLow", "job": "fabricwatch",
      "instance": "n44:19736", "peer_node": "n44", "rail": "7"}, True),
    ({**C, "alertname": "FabricwatchNodeRailBandwidthLow", "job": "fabricwatch",
      "instance": "n25:19736", "peer_node": "n25", "leaf": "leaf-3", "rail": "1"}, True),
    # A rail cause silences nothing of its own node's other rails or its tcp symptoms.
    ({**C, "alertname": "FabricwatchNodeRailUnreachable", "peer_node": "n18", "rail": "3"},
     False),
    ({**C, "alertname": "FabricwatchPeerUnreachable", "peer": "10.0.0.18:19737",
      "peer_node": "n18"}, False),
]


def http(url, body=None):
    req = urllib.request.Request(url, data=None if body is None else json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=5) as r:
        return r.status, r.read()


def main():
    tools = [shutil.which("amtool"), shutil.which("prometheus-alertmanager")]
    if not all(tools):
        msg = "amtool and prometheus-alertmanager are needed (scripts/dev installs them)"
        if required("tools"):
            print(f"FAIL: {msg}")
            return 1
        print(f"SKIP: {msg}")
        return 77
    check = subprocess.run([tools[0], "check-config", str(CONFIG)], capture_output=True,
                           text=True)
    print(check.stdout.strip())
    if check.returncode != 0:
        print(f"FAIL: amtool check-config {CONFIG}: {check.stderr.strip()}")
        return 1

    tmp = tempfile.mkdtemp(prefix="fw-alertmanager-")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    am = subprocess.Popen([tools[1], f"--config.file={CONFIG}", f"--storage.path={tmp}",
                           f"--web.listen-address=127.0.0.1:{port}", "--cluster.listen-address=",
                           "--log.level=warn"])
    try:
        deadline = time.monotonic() + DEADLINE
        while True:
            try:
                if http(base + "/-/ready")[0] == 200:
                    break
            except OSError:
                pass
            if am.poll() is not None or time.monotonic() > deadline:
                print("FAIL: Alertmanager did not become ready")
                return 1
            time.sleep(0.2)
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        http(base + "/api/v2/alerts", [{"labels": labels, "startsAt": now,
                                        "annotations": {"summary": "test"}}
                                       for labels, _ in ALERTS])
        # Inhibition is computed when the API is read; the alerts are there once accepted.
        want = {json.dumps(labels, sort_keys=True): inhibited for labels, inhibited in ALERTS}
        while True:
            got = {json.dumps(a["labels"], sort_keys=True): bool(a["status"]["inhibitedBy"])
                   for a in json.loads(http(base + "/api/v2/alerts")[1])}
            if got == want or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        problems = []
        for key, inhibited in want.items():
            if key not in got:
                problems.append(f"not in Alertmanager: {key}")
            elif got[key] != inhibited:
                problems.append(f"{'not ' if inhibited else ''}inhibited, expected "
                                f"{'' if inhibited else 'not '}to be: {key}")
        for p in problems:
            print(f"FAIL: {p}")
        if problems:
            return 1
        print(f"PASS: {sum(want.values())} symptoms inhibited by their causes, "
              f"{len(want) - sum(want.values())} other alerts active")
        return 0
    finally:
        am.terminate()
        am.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
