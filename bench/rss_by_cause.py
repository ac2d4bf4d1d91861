#!/usr/bin/env python3
"""Resident memory of a process by cause, from /proc/PID/smaps (bench/compare.sh runs it).

  rss_by_cause.py PID BINARY PREFIX

Prints PREFIX.rss.CAUSE_kb<TAB>KB lines (binary, libraries, heap, thread_stacks, main_stack,
other) and PREFIX.lib.NAME_kb<TAB>KB for each shared library. Thread stacks: anonymous rw
mappings right above a 4 KiB guard (glibc's pthread stacks); heap: [heap] and the other anonymous
mappings (malloc's arenas and large blocks); binary: BINARY's own file mappings (the link
followed); libraries: the other files.
"""
import collections
import os
import re
import sys

pid, binary, prefix = sys.argv[1:4]
binary = os.path.realpath(binary)
maps, cur = [], None
for line in open(f"/proc/{pid}/smaps", encoding="utf-8"):
    m = re.match(r"([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)", line)
    if m:
        cur = {"lo": int(m[1], 16), "hi": int(m[2], 16), "perm": m[3], "path": m[4], "rss": 0}
        maps.append(cur)
    elif line.startswith("Rss:"):
        cur["rss"] = int(line.split()[1])
out = {"binary": 0, "libraries": 0, "heap": 0, "thread_stacks": 0, "main_stack": 0, "other": 0}
libs = collections.Counter()
for i, m in enumerate(maps):
    p = m["path"]
    prev = maps[i - 1] if i else None
    if p.startswith("/"):
        if p == binary:
            out["binary"] += m["rss"]
        else:
            out["libraries"] += m["rss"]
            libs[os.path.basename(p).split(".so")[0]] += m["rss"]
    elif p == "[heap]":
        out["heap"] += m["rss"]
    elif p == "[stack]":
        out["main_stack"] += m["rss"]
    elif p == "" and prev and prev["hi"] == m["lo"] and prev["perm"].startswith("---") \
            and prev["hi"] - prev["lo"] == 4096 and m["perm"].startswith("rw"):
        out["thread_stacks"] += m["rss"]
    elif p == "":
        out["heap"] += m["rss"]
    else:
        out["other"] += m["rss"]
for k, v in out.items():
    print(f"{prefix}.rss.{k}_kb\t{v}")
for k, v in libs.items():
    print(f"{prefix}.lib.{k}_kb\t{v}")
