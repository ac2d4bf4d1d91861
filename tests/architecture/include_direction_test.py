#!/usr/bin/env python3
"""Fails on an #include that runs back up the layers of docs/architecture.md's "Modules" table.

The table's "depends on" column is the rule: a file in folder F may include headers of F itself,
of the folders that F's row names (`probes/kinds/*` names every kind; "everything above", every
folder of an earlier row) and of what those depend on in turn. So the page cannot drift from the code either: a folder in the
tree that the table lacks, or a row for a folder that is gone, fails too.
"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../.."))
CODE_TOP = ["core", "config", "nccl", "gpu", "facts", "probes", "policy", "http", "fleet",
            "exporter"]


def table_rows():
    text = open(os.path.join(ROOT, "docs/architecture.md"), encoding="utf-8").read()
    section = text.split("## Modules", 1)[1]
    rows = []
    for line in section.splitlines():
        m = re.match(r"\| `([a-z/]+)/` \|", line)
        if m:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            rows.append((m.group(1), cells[-1]))
    return rows


def code_folders():
    """Folders holding .cc/.h files under the code roots, by their longest row match later."""
    out = set()
    for top in CODE_TOP:
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            if any(f.endswith((".cc", ".h")) for f in files):
                out.add(os.path.relpath(dirpath, ROOT))
    return out


def main():
    rows = table_rows()
    folders = [f for f, _ in rows]
    problems = []
    allowed = {}
    for i, (folder, deps) in enumerate(rows):
        ok = {folder}
        if "everything above" in deps:
            ok.update(folders[:i])
        for token in re.split(r"[,;]\s*", deps):
            token = token.strip()
            if token.endswith("/*"):
                ok.update(f for f in folders if f.startswith(token[:-1]))
            elif token in folders:
                ok.add(token)
        allowed[folder] = ok
    # A layer may use everything its layers below use: the closure of the rows' dependencies.
    changed = True
    while changed:
        changed = False
        for folder in folders:
            more = set().union(*(allowed[d] for d in allowed[folder])) - allowed[folder]
            if more:
                allowed[folder] |= more
                changed = True
    present = code_folders()
    for f in sorted(present - set(folders)):
        problems.append(f"{f}/ holds code but has no row in docs/architecture.md's Modules table")
    for f in folders:
        if f.split("/")[0] in CODE_TOP and f not in present:
            problems.append(f"docs/architecture.md's Modules table has a row for {f}/, which holds no code")

    def folder_of(path):
        best = None
        for f in folders:
            if (path + "/").startswith(f + "/") and (best is None or len(f) > len(best)):
                best = f
        return best

    include = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
    for f in sorted(present):
        owner = folder_of(f)
        if owner is None:
            continue
        for name in os.listdir(os.path.join(ROOT, f)):
            if not name.endswith((".cc", ".h")):
                continue
            path = os.path.join(f, name)
            for n, line in enumerate(open(os.path.join(ROOT, path), encoding="utf-8"), 1):
                m = include.match(line)
                if not m:
                    continue
                target = folder_of(os.path.dirname(m.group(1)))
                if target is None or target in allowed[owner]:
                    continue
                problems.append(f"{path}:{n}: includes {m.group(1)} ({target}/), which {owner}/ may not "
                                f"depend on (docs/architecture.md, Modules)")
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"include direction: {len(present)} folders, every include runs down the layers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
