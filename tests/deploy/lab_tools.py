"""Helpers the python checks of deploy/ share: whether CI requires a tool, a free loopback port,
the shipped rules with shorter durations, a webhook receiver for Alertmanager, the processes a
test starts, Prometheus' HTTP API."""
import ctypes
import http.server
import json
import os
import random
import re
import signal
import socket
import subprocess
import threading
import time
import urllib.parse
import urllib.request


def required(need):
    """Whether FW_REQUIRE names `need` (or all): then a missing tool fails instead of skipping."""
    listed = os.environ.get("FW_REQUIRE", "").split(",")
    return need in listed or "all" in listed


def _ephemeral_low():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
        return low if low > 2048 else 32768
    except (OSError, ValueError, IndexError):
        return 32768


_ports_given = set()
_port_rng = random.Random()  # seeded from the OS: two tests' processes start apart


def free_port():
    """A loopback port free now, below the kernel's ephemeral range and never handed out
    before in this process. A port from bind(0) is in that range: the kernel may give it again
    at once to any bind(0) or connect(), and a sibling daemon's libfabric endpoint took one
    before the daemon meant to listen there did (observe e2e, "cannot listen on ...: Address
    already in use"). Below the range only another free_port() could collide (as
    tests/support/tcp_client.cc's freePort())."""
    low, high = 10000, _ephemeral_low() - 1
    for _ in range(500):
        port = _port_rng.randint(low, high)
        if port in _ports_given:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _ports_given.add(port)
        return port
    raise RuntimeError(f"no free loopback port in [{low}, {high}]")


def matches(labels, want):
    """Whether the label set `labels` has every label of `want` with its value."""
    return all(labels.get(k) == v for k, v in want.items())


# --- the shipped rules, faster ------------------------------------------------------------------
# The end-to-end tests load deploy/prometheus's rule files with every `for:`, `keep_firing_for:`
# and range selector in minutes or hours divided by `scale` (`for: 5m` -> `for: 5s` at 60);
# alerts.yml promises to write durations that way and check_deploy.py checks it.

def scale_duration(d, scale):
    m = re.fullmatch(r"(?:(\d+)h)?(?:(\d+)m)?", d)
    if not m or not any(m.groups()):
        raise ValueError(f"cannot scale duration {d!r}")
    return f"{(int(m.group(1) or 0) * 3600 + int(m.group(2) or 0) * 60) // scale}s"


def scaled_rules(text, scale):
    text = re.sub(r"(?m)^(\s+(?:for|keep_firing_for): )(\S+)$",
                  lambda m: m.group(1) + scale_duration(m.group(2), scale), text)
    return re.sub(r"\[(\d+[hm])\]", lambda m: "[" + scale_duration(m.group(1), scale) + "]", text)


class Webhook:
    """Alertmanager's webhook receiver on 127.0.0.1: keeps every (status, labels, arrival time
    by time.monotonic()) notified."""

    def __init__(self):
        self.events = []
        self.lock = threading.Lock()
        hook = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                n = int(self.headers.get("Content-Length", "0"))
                doc = json.loads(self.rfile.read(n) or b"{}")
                now = time.monotonic()
                with hook.lock:
                    for a in doc.get("alerts", []):
                        hook.events.append((a["status"], a["labels"], now))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def seen(self, status, labels, since=0):
        return self.first(status, labels, since) is not None

    def first(self, status, labels, since=0):
        """The arrival time of the first such notification at or after mark `since`, or None."""
        with self.lock:
            return next((t for s, l, t in self.events[since:]
                         if s == status and matches(l, labels)), None)

    def since(self, mark):
        with self.lock:
            return list(self.events[mark:])

    def mark(self):
        with self.lock:
            return len(self.events)

    def close(self):
        self.server.shutdown()
        self.server.server_close()


# --- processes and HTTP APIs --------------------------------------------------------------------

_libc = ctypes.CDLL(None, use_errno=True)


def die_with_parent(sig=signal.SIGKILL):
    """preexec_fn: the child gets `sig` when this process dies (PR_SET_PDEATHSIG)."""
    _libc.prctl(1, sig)


class Processes:
    """Everything a test starts, each with its output in LOGDIR/NAME.log; stop() ends them all."""

    def __init__(self, logdir):
        self.logdir = logdir
        self.procs = {}

    def start(self, name, argv, env=None):
        with open(os.path.join(self.logdir, name + ".log"), "wb") as logf:
            p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=logf,
                                 stderr=subprocess.STDOUT, env=env, preexec_fn=die_with_parent)
        self.procs[name] = p
        return p

    def log_text(self, name):
        try:
            with open(os.path.join(self.logdir, name + ".log"), "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def exited(self, expected=()):
        """(name, status) of the first process that ended and is not in `expected`, or None."""
        for name, p in self.procs.items():
            if name not in expected and p.poll() is not None:
                return name, p.returncode
        return None

    def stop(self):
        for p in self.procs.values():
            if p.poll() is None:
                try:
                    p.send_signal(signal.SIGCONT)
                    p.terminate()
                except ProcessLookupError:
                    pass
        end = time.monotonic() + 5
        for p in self.procs.values():
            try:
                p.wait(max(0.1, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def http_json(url, body=None, timeout=10):
    req = urllib.request.Request(url, data=None if body is None else json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read().decode("utf-8") or "null")


class PrometheusApi:
    def __init__(self, base):
        self.base = base

    def api(self, path, **params):
        url = self.base + path + ("?" + urllib.parse.urlencode(params, doseq=True)
                                  if params else "")
        doc = http_json(url)
        if doc.get("status") != "success":
            raise RuntimeError(f"{url}: {doc}")
        return doc["data"]

    def query(self, expr):
        return self.api("/api/v1/query", query=expr)["result"]

    def alerts(self):
        return self.api("/api/v1/alerts")["alerts"]
