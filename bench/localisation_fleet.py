"""The synthetic fleet of bench/localisation_bench.py: the probe rounds of N daemons on a
leaf/spine fabric, with faults planted at every level of deploy/prometheus/localisation.yml, and
what the daemons would export (docs/fleet.md, "At scale")."""
import random

TYPICAL = 0.00001    # a rail pair's one-way latency: 10 us (as tests/deploy/promtool's)
SLOW = 0.0002        # a degraded NIC's: 200 us
BEST = 2.4e10        # a rail pair's bandwidth: 24 GB/s (as tests/deploy/promtool's)
LOW = 6e9            # a NIC trained at a quarter of its width
BW_EVERY = 30        # a bandwidth round every 30 rounds (5 minutes), at a phase per node
BW_PEERS = 2         # peers a rail in one bandwidth round (the default byte budget)
PER_LEAF = 32        # nodes below one leaf switch
LEVELS = ("node", "cut_off", "rail", "pair", "slow", "bw", "switch", "plane")


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


def name(x):
    return f"node-{x:05d}"


def inst(x):
    return f"{name(x)}:19736"


def addr(x):
    return f"10.{x >> 16 & 255}.{x >> 8 & 255}.{x & 255}:19737"


def leaf(x):
    return f"leaf-{x // PER_LEAF:04d}"


class Fleet:
    """N daemons' probe results, round by round: the ring selection of each round (over a seeded
    ring order, as the hashes would give), and the peers that failed in the previous round probed
    again (up to k more), as PeerProber does. Node x is below leaf x // 32.

    Faults, on disjoint nodes and rails so that each level's truth is clear:
      - switch: whole leaves down (one per 5,000 nodes, at least one): their nodes export
        nothing and answer nothing, from the moment `leaves_fail()` is called (the rules must
        have seen the nodes' `leaf` before: fabricwatch_topology_info goes with them);
      - node: 0.5% of the other nodes down (nothing exported, nothing answered);
      - cut_off: 0.5% cut off (they reach no peer, no peer reaches them; they export);
      - rail: 1% with one rail down (every probe over it fails, both ways);
      - slow: 0.5% with one rail slow (200 us one way against 10 us);
      - bw: 0.5% with one rail low in bandwidth (6 GB/s against 24 GB/s), latency fine;
      - pair: twice as many broken single paths (one direction, tcp) as nodes down, between
        healthy nodes;
      - plane: one rail failing on 90% of all pairs (no node fault is on that rail).
    Everything else fails 1% of the time at random, and latency jitters by -30% to +60% with
    1% of samples tenfold (as the promtool noise case). Bandwidth: every 30 rounds, at a phase
    per node, the first 2 peers of the round on every rail, kept until the next such round,
    jittered by -30% to +10% with 1% of measurements at 30%; a pair whose latency failed has
    none."""

    def __init__(self, n, rails, k, seed):
        self.n, self.rails, self.k = n, rails, k
        self.rng = random.Random(seed)
        self.order = list(range(n))
        self.rng.shuffle(self.order)
        self.round = 1_000_003
        self.prev = {a: {} for a in range(n)}    # prober -> {peer: up} of the previous round
        self.cur = {a: {} for a in range(n)}
        self.rail_cur = {a: {} for a in range(n)}  # prober -> {(peer, rail): latency or None}
        self.bw_cur = {a: {} for a in range(n)}    # prober -> {(peer, rail): bytes/s}
        rng = self.rng
        self.plane = rng.randrange(rails)
        other_rails = [r for r in range(rails) if r != self.plane]
        n_leaves = (n + PER_LEAF - 1) // PER_LEAF
        full = [lf for lf in range(n_leaves) if (lf + 1) * PER_LEAF <= n]
        self.leaves_down = set(rng.sample(full, max(1, n // 5000)))
        self.leaf_nodes = {x for x in range(n) if x // PER_LEAF in self.leaves_down}
        self.leaves_failed = False
        nodes = [x for x in range(n) if x not in self.leaf_nodes]
        rng.shuffle(nodes)
        per = max(1, n // 200)
        self.down = set(nodes[:per])
        self.cut = set(nodes[per:2 * per])
        self.rail_bad = {(x, rng.choice(other_rails)) for x in nodes[2 * per:4 * per]}
        self.slow = {(x, rng.choice(other_rails)) for x in nodes[4 * per:5 * per]}
        self.bw_low = {(x, rng.choice(other_rails)) for x in nodes[5 * per:6 * per]}
        faulted = set(nodes[:6 * per]) | self.leaf_nodes
        healthy = [x for x in range(n) if x not in faulted]
        self.pair_bad = set()
        while len(self.pair_bad) < 2 * per:
            a, b = rng.sample(healthy, 2)
            self.pair_bad.add((a, b))
        # Label texts, made once.
        self.tgt = [f'cluster="bench",job="fabricwatch",instance="{inst(x)}"' for x in range(n)]
        self.peer = [f'peer="{addr(x)}",peer_node="{name(x)}"' for x in range(n)]

    def leaves_fail(self):
        self.leaves_failed = True

    def gone(self, x):
        """Exports nothing and answers nothing."""
        return x in self.down or (self.leaves_failed and x in self.leaf_nodes)

    def tcp_up(self, a, b):
        if self.gone(b) or a in self.cut or b in self.cut or (a, b) in self.pair_bad:
            return 0
        return 0 if self.rng.random() < 0.01 else 1

    def rail_latency(self, a, b, r):
        """The pair's one-way latency on rail r, None when the probe failed."""
        if self.gone(b) or a in self.cut or b in self.cut:
            return None
        if (a, r) in self.rail_bad or (b, r) in self.rail_bad:
            return None
        rnd = self.rng.random
        if r == self.plane and rnd() < 0.9:
            return None
        if rnd() < 0.01:
            return None
        base = SLOW if (a, r) in self.slow or (b, r) in self.slow else TYPICAL
        return base * (10 if rnd() < 0.01 else 0.7 + 0.9 * rnd())

    def step(self):
        self.round += 1
        nxt = {}
        rails = range(self.rails)
        for pos in range(self.n):
            a = self.order[pos]
            if self.gone(a):
                nxt[a] = {}
                self.rail_cur[a] = {}
                self.bw_cur[a] = {}
                continue
            peers = [self.order[t] for t in targets(pos, self.n, self.round, self.k)]
            again = [b for b, up in self.cur[a].items() if not up and b not in peers]
            peers += again[:self.k]
            nxt[a] = {b: self.tcp_up(a, b) for b in peers}
            lat = {(b, r): self.rail_latency(a, b, r) for b in peers for r in rails}
            failing = [b for b in peers if any(lat[(b, r)] is None for r in rails)]
            kept = (failing + [b for b in peers if b not in failing])[:self.k]
            self.rail_cur[a] = {(b, r): lat[(b, r)] for b in kept for r in rails}
            if (self.round + a) % BW_EVERY == 0:
                rnd = self.rng.random
                self.bw_cur[a] = {
                    (b, r): (LOW if (a, r) in self.bw_low or (b, r) in self.bw_low else BEST)
                    * (0.3 if rnd() < 0.01 else 0.7 + 0.4 * rnd())
                    for b in peers[:BW_PEERS] for r in rails if lat[(b, r)] is not None}
        self.prev, self.cur = self.cur, nxt

    def exposition(self, timestamp_ms=None):
        """What N daemons serve, as one text (honor_labels keeps their target labels). With a
        timestamp: one OpenMetrics sample per series at that time, for backfilling."""
        ts = "" if timestamp_ms is None else f" {timestamp_ms / 1000:.3f}"
        out = ["# TYPE fabricwatch_peer_self_info gauge",
               "# TYPE fabricwatch_topology_info gauge",
               "# TYPE fabricwatch_probe_tcp_peer_up gauge",
               "# TYPE fabricwatch_probe_fabric_peer_rail_up gauge",
               "# TYPE fabricwatch_probe_fabric_peer_rail_latency_seconds gauge",
               "# TYPE fabricwatch_probe_fabric_peer_rail_bandwidth_bytes_per_second gauge"]
        add = out.append
        for a in range(self.n):
            if self.gone(a):
                continue
            t = self.tgt[a]
            add(f'fabricwatch_peer_self_info{{{t},peer_node="{name(a)}"}} 1{ts}')
            add(f'fabricwatch_topology_info{{{t},leaf="{leaf(a)}"}} 1{ts}')
            pairs = dict(self.prev[a])
            pairs.update(self.cur[a])
            for b, up in pairs.items():
                add(f'fabricwatch_probe_tcp_peer_up{{{t},{self.peer[b]}}} {up}{ts}')
            for (b, r), lat in self.rail_cur[a].items():
                add(f'fabricwatch_probe_fabric_peer_rail_up{{{t},{self.peer[b]},rail="{r}"}} '
                    f'{0 if lat is None else 1}{ts}')
                if lat is not None:
                    add(f'fabricwatch_probe_fabric_peer_rail_latency_seconds{{{t},'
                        f'{self.peer[b]},rail="{r}"}} {lat:.4g}{ts}')
            for (b, r), bw in self.bw_cur[a].items():
                add(f'fabricwatch_probe_fabric_peer_rail_bandwidth_bytes_per_second{{{t},'
                    f'{self.peer[b]},rail="{r}"}} {bw:.4g}{ts}')
        return "\n".join(out) + "\n"

    def keys(self):
        """The identities of the pair series exposition() would serve now."""
        out = set()
        for a in range(self.n):
            if self.gone(a):
                continue
            pairs = dict(self.prev[a])
            pairs.update(self.cur[a])
            out.update(("tcp", a, b) for b in pairs)
            for (b, r), lat in self.rail_cur[a].items():
                out.add(("rail", a, b, r))
                if lat is not None:
                    out.add(("latency", a, b, r))
            out.update(("bandwidth", a, b, r) for b, r in self.bw_cur[a])
        return out

    def truth(self):
        """Per level, the keys of the planted faults, as the rules' series name them."""
        return {"node": {name(x) for x in self.down},
                "cut_off": {inst(x) for x in self.cut},
                "rail": {(name(x), str(r)) for x, r in self.rail_bad},
                "pair": {(inst(a), name(b)) for a, b in self.pair_bad},
                "slow": {(name(x), str(r)) for x, r in self.slow},
                "bw": {(name(x), str(r)) for x, r in self.bw_low},
                "switch": {f"leaf-{lf:04d}" for lf in self.leaves_down},
                "plane": {str(self.plane)}}

    def summary(self):
        return (f"planted {len(self.leaves_down)} leaves down ({len(self.leaf_nodes)} nodes), "
                f"{len(self.down)} nodes down, {len(self.cut)} cut off, {len(self.rail_bad)} "
                f"rails down, {len(self.slow)} rails slow, {len(self.bw_low)} rails low in bandwidth, "
                f"{len(self.pair_bad)} pairs, rail "
                f"{self.plane} failing on 90% of pairs; 1% of other probes fail")
