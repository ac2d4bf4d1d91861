#!/usr/bin/env python3
"""`fabricwatch diagnose` against a real Prometheus evaluating deploy/prometheus/localisation.yml.

A six-node fleet's per-pair series (every node probes the other five on tcp and on fabric rails
0 and 1) are served to Prometheus as a fabricwatch daemon would export them, with two faults:
n4 answers nobody (its probers fail it, it reaches them), and rail 1 of n2 is down. Prometheus
serves its API over TLS with basic auth (its own --web.config.file). Checked:

1. diagnose names exactly n4 (node_unreachable, 5 of 5 probers), n2 rail 1 (node_rail, 5 of
   5) and n3 rail 0 (node_rail_slow, 5 of 5), text and JSON, exit 1, with the alerts' state;
2. without credentials, with a wrong CA, or against a Prometheus without the rules, it exits 2
   and says why; a cluster with no series exits 2 too (nothing can be vouched for);
3. with the faults repaired, it says nothing is suspect and exits 0.

Exit status 0 when all hold, 1 otherwise (77, skipped, when prometheus or openssl is missing
and FW_REQUIRE does not name tools).
"""
import http.server
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

from lab_tools import free_port, required

ROOT = pathlib.Path(os.environ.get("FW_SOURCE_DIR") or
                    pathlib.Path(__file__).resolve().parent.parent.parent)
BINARY = os.environ.get("FW_BINARY") or str(ROOT / "build/fabricwatch")
NODES = [f"n{i}" for i in range(1, 7)]
RAILS = ["0", "1"]
USER, PASSWORD = "ops", "prom-pass"
# bcrypt of PASSWORD (cost 10), as Prometheus's web configuration takes it: python's crypt
# module makes a fresh one where it still exists (gone in 3.13), else this one.
FIXED_HASH = "$2b$10$mo9wjeP1I78pTa.I2IS28uZIO6C1ihgihZ9s.gowxiUfUlRtSc/KC"
DEADLINE = 60


class Fleet:
    """The series of six daemons, as one exposition (Prometheus keeps their labels)."""

    def __init__(self):
        self.down_node = "n4"       # nobody reaches it; it reaches everyone
        self.down_rail = ("n2", "1")
        self.slow_rail = ("n3", "0")  # 200 us where the rail's pairs take 10 us, both ways

    def exposition(self):
        lines = []
        for prober in NODES:
            inst = f'job="fabricwatch",instance="{prober}:19736"'
            lines.append(f'fabricwatch_peer_self_info{{{inst},peer_node="{prober}"}} 1')
            for peer in NODES:
                if peer == prober:
                    continue
                pl = f'{inst},peer="10.0.0.{peer[1:]}:19737",peer_node="{peer}"'
                up = 0 if peer == self.down_node else 1
                lines.append(f"fabricwatch_probe_tcp_peer_up{{{pl}}} {up}")
                for rail in RAILS:
                    rup = 0 if peer == self.down_node or (peer, rail) == self.down_rail else 1
                    lines.append(f'fabricwatch_probe_fabric_peer_rail_up{{{pl},rail="{rail}"}} {rup}')
                    slow = self.slow_rail in ((peer, rail), (prober, rail))
                    if rup:
                        lines.append(f'fabricwatch_probe_fabric_peer_rail_latency_seconds'
                                     f'{{{pl},rail="{rail}"}} {2e-4 if slow else 1e-5}')
            lines.append(f"fabricwatch_probe_fabric_available{{{inst}}} 1")
        return "\n".join(lines) + "\n"


def serve_fleet(fleet):
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = fleet.exposition().encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                self.wfile.write(body)
            except OSError:
                pass  # a Prometheus stopped mid-scrape at teardown

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def start_prometheus(tmp, name, target, rules, web_config=None):
    port = free_port()
    cfg = pathlib.Path(tmp, f"{name}.yml")
    rule_files = [str(ROOT / "deploy/prometheus/localisation.yml")] if rules else []
    cfg.write_text(json.dumps({
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": rule_files,
        "scrape_configs": [{"job_name": "fleet", "honor_labels": True,
                            "static_configs": [{"targets": [target]}]}],
    }))
    args = ["prometheus", f"--config.file={cfg}", f"--storage.tsdb.path={tmp}/{name}-data",
            f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"]
    if web_config:
        args.append(f"--web.config.file={web_config}")
    return port, subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def diagnose(*args):
    r = subprocess.run([BINARY, "diagnose", *args], capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout, r.stderr


def main():
    prometheus, openssl = shutil.which("prometheus"), shutil.which("openssl")
    if not prometheus or not openssl:
        msg = "prometheus and openssl are needed (scripts/dev installs them)"
        if required("tools"):
            print(f"FAIL: {msg}")
            return 1
        print(f"SKIP: {msg}")
        return 77
    tmp = tempfile.mkdtemp(prefix="fw-diagnose-")
    procs = []
    problems = []

    def check(cond, what):
        if not cond:
            problems.append(what)
            print(f"FAIL: {what}")
        return cond

    try:
        # A server certificate for 127.0.0.1, and Prometheus's web configuration with it and a user.
        crt, key = f"{tmp}/prom.crt", f"{tmp}/prom.key"
        subprocess.run([openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt",
                        "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj",
                        "/CN=prometheus", "-addext", "subjectAltName=IP:127.0.0.1",
                        "-keyout", key, "-out", crt], check=True, capture_output=True)
        other_crt = f"{tmp}/other.crt"
        subprocess.run([openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt",
                        "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj",
                        "/CN=other", "-keyout", f"{tmp}/other.key", "-out", other_crt],
                       check=True, capture_output=True)
        pw_hash = password_hash()
        web = pathlib.Path(tmp, "web.yml")
        web.write_text(f"tls_server_config:\n  cert_file: {crt}\n  key_file: {key}\n"
                       f"basic_auth_users:\n  {USER}: '{pw_hash}'\n")
        pw_file = pathlib.Path(tmp, "password")
        pw_file.write_text(PASSWORD + "\n")

        fleet = Fleet()
        exporter = serve_fleet(fleet)
        target = f"127.0.0.1:{exporter.server_address[1]}"
        port, prom = start_prometheus(tmp, "rules", target, True, web)
        procs.append(prom)
        bare_port, bare = start_prometheus(tmp, "bare", target, False)
        procs.append(bare)
        url = f"https://127.0.0.1:{port}"
        auth = [f"--prometheus.url={url}", f"--prometheus.ca-file={crt}",
                f"--prometheus.username={USER}", f"--prometheus.password-file={pw_file}"]

        # Until the rules have evaluated both suspects.
        deadline = time.monotonic() + DEADLINE
        while True:
            rc, out, err = diagnose(*auth, "--format=json")
            # The alert rules run after the recording rules: wait for every suspect's alert too.
            suspects = json.loads(out)["suspects"] if rc == 1 else []
            if len(suspects) >= 3 and all(s.get("alert_state") for s in suspects):
                break
            if time.monotonic() > deadline or prom.poll() is not None:
                check(False, f"no diagnosis within {DEADLINE} s: rc {rc}, {out} {err}")
                return 1
            time.sleep(1)
        doc = json.loads(out)
        got = sorted((s["level"], s.get("node"), s.get("rail"), s["failing"], s.get("witnesses"))
                     for s in doc["suspects"])
        check(got == [("node_rail", "n2", "1", 5, 5), ("node_rail_slow", "n3", "0", 5, 5),
                      ("node_unreachable", "n4", None, 5, 5)], f"suspects {got}")
        check(doc["nodes"] == 6, f"nodes {doc['nodes']}")
        check(all(s.get("alert_state") == "pending" for s in doc["suspects"]),
              f"alert states {[s.get('alert_state') for s in doc['suspects']]}")
        check(doc["suspects"][0]["severity"] == "critical", "the rail (critical) comes first")
        rc, text, _ = diagnose(*auth)
        check(rc == 1, f"text exit {rc}")
        check("5 of 5 probers fail to reach n2 on rail 1" in text and
              "5 of 5 probers fail to reach n4" in text, f"text:\n{text}")
        print(text)

        # What cannot be vouched for exits 2, saying why.
        rc, _, err = diagnose(f"--prometheus.url={url}", f"--prometheus.ca-file={crt}")
        check(rc == 2 and "HTTP 401" in err, f"no credentials: {rc} {err}")
        rc, _, err = diagnose(*auth[:1], f"--prometheus.ca-file={other_crt}", *auth[2:])
        check(rc == 2 and "certificate" in err.lower(), f"wrong CA: {rc} {err}")
        rc, _, err = diagnose(f"--prometheus.url=http://127.0.0.1:{bare_port}")
        check(rc == 2 and "does not evaluate fabricwatch's localisation rules" in err,
              f"no rules: {rc} {err}")
        rc, _, err = diagnose(*auth, "--prometheus.cluster=elsewhere")
        check(rc == 2 and "holds no fabricwatch_peer_self_info" in err, f"no series: {rc} {err}")
        rc, _, err = diagnose("--prometheus.url=ftp://127.0.0.1/")
        check(rc == 2 and "http:// or https://" in err, f"ftp: {rc} {err}")

        # Repaired: nothing suspect once the rules see it.
        fleet.down_node, fleet.down_rail, fleet.slow_rail = None, None, None
        deadline = time.monotonic() + DEADLINE
        while True:
            rc, out, err = diagnose(*auth)
            if rc == 0 or time.monotonic() > deadline:
                break
            time.sleep(1)
        check(rc == 0 and "nothing suspect among 6 nodes" in out, f"repaired: {rc} {out} {err}")
        if not problems:
            print("PASS: diagnose names n4, n2's rail 1 and n3's slow rail 0, refuses what it "
                  "cannot vouch for, and clears after the repair")
        return 1 if problems else 0
    finally:
        for p in procs:
            p.terminate()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(tmp, ignore_errors=True)


def password_hash():
    try:
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import crypt  # deprecated in 3.11, gone in 3.13
        return crypt.crypt(PASSWORD, crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1 << 10))
    except ImportError:
        return FIXED_HASH


if __name__ == "__main__":
    sys.exit(main())
