"""A small leaf/spine fabric of Linux network namespaces with a fabricwatch daemon on each node,
for leafspine_e2e_test.py.

The test runs in a network namespace of its own (`unshare --net`), the hub, which holds every
switch as a Linux bridge:

- three networks, each one bridge per leaf and one spine bridge joined to each leaf's bridge by
  a veth pair (the uplink): the peer channel (the tcp kind, eth0 on the nodes, 10.60.0.0/24)
  and two rails (the fabric kind's tcp provider, eth1 on 10.61.0.0/24 and eth2 on
  10.62.0.0/24), so that one rail of one leaf, or a whole leaf, can go down;
- a monitoring network that no fault touches (mon0, 10.69.0.0/24, one bridge with the hub's
  address 10.69.0.254), over which Prometheus, in the hub, scrapes the daemons, as an
  out-of-band management network does.

Node i (1..12) is namespace PREFIX-nI, below leaf 1 + (i - 1) // 6, with address 10.6X.0.i on
each network. Namespaces are named after the test's pid and deleted at the end (and, on the
next run, when the pid that named them is gone); links and bridges live in the hub and the
node namespaces and go with them.
"""
import os
import re
import signal
import subprocess

LEAVES = 2
PER_LEAF = 6
NODES = LEAVES * PER_LEAF
# network: (node interface, subnet's first three octets)
NETS = {"p": ("eth0", "10.60.0"), "r0": ("eth1", "10.61.0"), "r1": ("eth2", "10.62.0")}
RAILS = ("0", "1")  # the fabric kind's rail label; rail R is network "rR"
MON = ("mon0", "10.69.0")
HUB_MON = MON[1] + ".254"
WEB_PORT, PEER_PORT = 19736, 19737
PREFIX = f"fwls{os.getpid()}"


def ip(*args, check=True):
    r = subprocess.run(["ip", *args], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {r.stderr.strip()}")
    return r


def unavailable_reason():
    """None when network namespaces and bridges can be made here, else why not."""
    if os.environ.get("FW_TEST_NO_NETNS"):
        return "FW_TEST_NO_NETNS is set"
    if os.geteuid() != 0:
        return "network namespaces need root (CAP_NET_ADMIN and CAP_SYS_ADMIN)"
    for tool in ("ip", "unshare", "tc"):
        if subprocess.run(["sh", "-c", f"command -v {tool}"], capture_output=True).returncode:
            return f"{tool} is not installed"
    probe = PREFIX + "probe"
    r = ip("netns", "add", probe, check=False)
    if r.returncode != 0:
        return "cannot create a network namespace: " + r.stderr.strip()
    r = ip("-n", probe, "link", "add", "b0", "type", "bridge", check=False)
    ip("netns", "del", probe, check=False)
    if r.returncode != 0:
        return "cannot create a bridge in a namespace: " + r.stderr.strip()
    return None


def remove_stale_namespaces():
    """Namespaces an earlier run left behind (killed before its cleanup), whose pid is gone."""
    for name in ip("netns", "list").stdout.split():
        m = re.fullmatch(r"fwls(\d+)n\d+", name)
        if m and not os.path.exists(f"/proc/{m.group(1)}"):
            ip("netns", "del", name, check=False)


def leaf_of(i):
    return 1 + (i - 1) // PER_LEAF


def node_name(i):
    return f"n{i:02d}"


def hub_port(i, net):
    """The hub's end of node i's link to network `net`: the switch port."""
    return f"h{i}{net}"


def uplink(leaf, net):
    """The leaf bridge's end of its uplink to the spine of `net`."""
    return f"u{leaf}{net}"


class Fabric:
    """The namespaces and the cabling; the faults are link states and qdiscs."""

    def __init__(self):
        self.namespaces = []

    def ns(self, i):
        return f"{PREFIX}n{i}"

    def address(self, i, net):
        return f"{NETS[net][1]}.{i}"

    def build(self):
        remove_stale_namespaces()
        ip("link", "set", "lo", "up")
        ip("link", "add", "bmon", "type", "bridge")
        ip("addr", "add", HUB_MON + "/24", "dev", "bmon")
        ip("link", "set", "bmon", "up")
        for net in NETS:
            ip("link", "add", f"s{net}", "type", "bridge")
            ip("link", "set", f"s{net}", "up")
            for leaf in range(1, LEAVES + 1):
                ip("link", "add", f"l{leaf}{net}", "type", "bridge")
                ip("link", "set", f"l{leaf}{net}", "up")
                ip("link", "add", uplink(leaf, net), "type", "veth", "peer", "name",
                   f"d{leaf}{net}")
                ip("link", "set", uplink(leaf, net), "master", f"l{leaf}{net}", "up")
                ip("link", "set", f"d{leaf}{net}", "master", f"s{net}", "up")
        for i in range(1, NODES + 1):
            ns = self.ns(i)
            ip("netns", "add", ns)
            self.namespaces.append(ns)
            ip("-n", ns, "link", "set", "lo", "up")
            links = [(net, dev, f"{prefix}.{i}", f"l{leaf_of(i)}{net}")
                     for net, (dev, prefix) in NETS.items()]
            links.append(("mon", MON[0], f"{MON[1]}.{i}", "bmon"))
            for net, dev, addr, bridge in links:
                ip("link", "add", hub_port(i, net), "type", "veth", "peer", "name", dev,
                   "netns", ns)
                ip("link", "set", hub_port(i, net), "master", bridge, "up")
                ip("-n", ns, "addr", "add", addr + "/24", "dev", dev)
                ip("-n", ns, "link", "set", dev, "up")

    def destroy(self):
        for ns in self.namespaces:
            ip("netns", "del", ns, check=False)
        self.namespaces = []

    # faults ------------------------------------------------------------------------------------

    def set_node_link(self, i, net, up):
        """Node i's own end of its link to `net` (its NIC), down or up."""
        ip("-n", self.ns(i), "link", "set", NETS[net][0], "up" if up else "down")

    def set_leaf(self, leaf, nets, up):
        """Every port of leaf `leaf`'s bridge of each of `nets`, its uplink included: the
        switch (or one rail's switch) dead or back."""
        state = "up" if up else "down"
        for net in nets:
            for i in range(1, NODES + 1):
                if leaf_of(i) == leaf:
                    ip("link", "set", hub_port(i, net), state)
            ip("link", "set", uplink(leaf, net), state)

    def slow_link(self, i, net, rate):
        """A token bucket on what node i sends on `net` that holds one frame: the link's MTU
        lowered to 576 and the bucket's burst 700 bytes, so that each ping or pong beyond the
        first waits for its tokens (size / rate) however sparse the traffic. (With a 1500-byte
        MTU the bucket holds eight probe packets, which covers most of a session.)"""
        dev = NETS[net][0]
        ip("-n", self.ns(i), "link", "set", dev, "mtu", "576")
        subprocess.run(["ip", "netns", "exec", self.ns(i), "tc", "qdisc", "add", "dev", dev,
                        "root", "tbf", "rate", rate, "burst", "700", "latency", "400ms"],
                       check=True, capture_output=True)

    def unslow_link(self, i, net):
        dev = NETS[net][0]
        subprocess.run(["ip", "netns", "exec", self.ns(i), "tc", "qdisc", "del", "dev", dev,
                        "root"], check=True, capture_output=True)
        ip("-n", self.ns(i), "link", "set", dev, "mtu", "1500")


def config_text(i, d, secret_file, peers_file, probe_interval):
    """Node i's fabricwatch.toml: the mesh on the peer channel, the fabric kind (tcp) on both
    rails by subnet, its leaf as a topology label, bandwidth off (localisation reads latency
    and reachability), no shipped packs (nothing of the host's own facts raises an alert)."""
    rails = ", ".join(f'"subnet:{NETS["r" + r][1]}.0/24"' for r in RAILS)
    return f"""\
[web]
listen_address = "{MON[1]}.{i}:{WEB_PORT}"
[collect]
interval = "5s"
timeout = "4s"
[peer]
node_name = "{node_name(i)}"
listen_address = "{NETS['p'][1]}.{i}:{PEER_PORT}"
secret_file = "{secret_file}"
[probe]
interval = "{probe_interval}"
peers_file = "{peers_file}"
grace_period = "30s"
# Topology groups by leaf (docs/peers.md, "With topology groups"), k = 16: all 5 leaf mates
# (k_in = 8) and, with their unused share, all 6 of the other leaf every round. Not fewer: a leaf
# is half of this fleet, which puts the rules' witnesses at exactly "half of the other peers",
# and once a leaf is dead its nodes, failed, are re-probed every round, so the other leaf's
# probers see all 6 of them; k = 8 failed the dead leaf, k = 10 once under load (docs/fleet.md,
# "Tests").
peers_per_round = 16
topology_label = "leaf"
topology_group = "leaf-{leaf_of(i)}"
# A node whose peers are all down ends its round in well under the 2 s interval (all 11 at
# once, each failing within 300 ms), so its series
# follow a fault within a round.
workers = 16
[probes.tcp]
connect_timeout = "300ms"
echo_timeout = "300ms"
[probes.dns]
enabled = false
[probes.fabric]
enabled = true
provider = "tcp"
rails = [{rails}]
warmup = 3
iterations = 20
bandwidth_interval = "0s"
# The kind probes one peer after another while the round has room for this timeout, each rail
# with an equal share of the time left (docs/peers.md): a node whose rail 1 switch is down
# spends up to 400 ms per peer on it and still measures it against 3-4 peers a round (the
# rail-switch level needs 2), and after a dead rail 0 the healthy rail 1 keeps ~200 ms (with
# 200 ms in all, 100 ms were too few under load). A rail slowed by the tbf fault takes 25-40 ms
# for its 23 pings.
timeout = "400ms"
# A responder holds back a member whose session was never driven (30 s by default); a node
# killed mid-session would be held back after its restart. FabricKindTest covers the backoff.
serve_backoff = "0s"
[topology]
lldpd_socket = ""
[topology.labels]
leaf = "leaf-{leaf_of(i)}"
[policy]
shipped = false
"""


class Daemon:
    """fabricwatch serve in node i's namespace."""

    def __init__(self, fabric, procs, binary, i, workdir, probe_interval):
        self.fabric, self.procs, self.binary, self.i = fabric, procs, binary, i
        self.name = node_name(i)
        self.leaf = f"leaf-{leaf_of(i)}"
        self.instance = f"{MON[1]}.{i}:{WEB_PORT}"
        self.peer = f"{NETS['p'][1]}.{i}:{PEER_PORT}"
        self.dir = os.path.join(workdir, self.name)
        os.makedirs(self.dir, exist_ok=True)
        self.secret = os.path.join(self.dir, "secret")
        self.config = os.path.join(self.dir, "fabricwatch.toml")
        self.peers_file = os.path.join(workdir, "peers")
        self.probe_interval = probe_interval
        self.process = None
        self.starts = 0

    def write_config(self, secret):
        with open(self.secret, "w") as f:
            f.write(secret + "\n")
        with open(self.config, "w") as f:
            f.write(config_text(self.i, self.dir, self.secret, self.peers_file,
                                self.probe_interval))

    def start(self):
        self.starts += 1
        self.process = self.procs.start(f"{self.name}.{self.starts}", [
            "ip", "netns", "exec", self.fabric.ns(self.i), self.binary, "serve",
            "--config.file=" + self.config])
        return self.process

    def log_name(self):
        return f"{self.name}.{self.starts}"

    def kill(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def reload(self, secret):
        with open(self.secret, "w") as f:
            f.write(secret + "\n")
        self.process.send_signal(signal.SIGHUP)
