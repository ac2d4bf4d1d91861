#!/usr/bin/env python3
"""The names docs/architecture.md gives in backticks exist in the tree: a file or folder path
(`core/scheduler.{h,cc}`, `loader.cc`, `probes/kinds/*`) must be there, a C++ name (`Scheduler`,
`KindRegistration::config`, `enterSnapshot`, `http::HttpServer`) must be defined or used in the
code. Flags, configuration keys, metric names, commands and values are not names of the tree and
are left alone. A page that names a renamed or deleted thing fails here."""
import fnmatch
import glob
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../.."))
CODE_DIRS = ["core", "config", "nccl", "gpu", "facts", "probes", "policy", "http", "exporter",
             "tests", "bench", "cmake", "deploy", "scripts"]
FILE_EXT = (".h", ".cc", ".in", ".py", ".sh", ".md", ".toml", ".yaml", ".yml", ".css", ".cmake",
            ".txt", ".json", ".mjs")


def tree_files():
    files = []
    for d in CODE_DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, d)):
            dirnames[:] = [x for x in dirnames if x not in ("node_modules", "fixtures", "corpus")]
            for f in filenames:
                files.append(os.path.relpath(os.path.join(dirpath, f), ROOT))
    return files


def expand_braces(s):
    m = re.search(r"\{([^{}]*)\}", s)
    if not m:
        return [s]
    return [x for alt in m.group(1).split(",") for x in expand_braces(s[:m.start()] + alt + s[m.end():])]


def main():
    page = open(os.path.join(ROOT, "docs/architecture.md"), encoding="utf-8").read()
    files = tree_files()
    basenames = {os.path.basename(f) for f in files}
    # What the build writes (embedded_packs.cc, a benchmark's binary) is named in a CMakeLists.
    cmake = "".join(open(os.path.join(ROOT, f), encoding="utf-8").read() for f in files
                    if os.path.basename(f) == "CMakeLists.txt")
    code = ""
    for f in files:
        if f.endswith((".h", ".cc", ".in")):
            code += open(os.path.join(ROOT, f), encoding="utf-8", errors="replace").read() + "\n"
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", code))
    problems, checked = [], 0
    for span in sorted(set(re.findall(r"`([^`\n]+)`", page))):
        s = span.strip()
        if (s.startswith(("-", "[", "$", "/", "http", "fabricwatch_", "../")) or " " in s
                or s.startswith("fabricwatch ") or re.fullmatch(r"[a-z0-9_]+(\.[a-z0-9_*<>]+)+", s)
                and not s.endswith(FILE_EXT)):
            continue  # a flag, a table, a shell line, a path on the host, a metric, a key
        path_like = "/" in s or s.endswith(FILE_EXT)
        if path_like:
            s = s.rstrip("/")
            found = False
            for cand in expand_braces(s):
                if glob.glob(os.path.join(ROOT, cand)) or glob.glob(os.path.join(ROOT, "*", cand)):
                    found = True
                elif "/" not in cand and fnmatch.filter(basenames, cand):
                    found = True
                elif os.path.exists(os.path.join(ROOT, cand + ".cc")):
                    found = True  # a binary the build makes from that source
                elif "/" not in cand and cand in cmake:
                    found = True
            checked += 1
            if not found:
                problems.append(f"`{span}`: no such file or folder in the tree")
            continue
        ident = re.fullmatch(r"(?:[A-Za-z_][A-Za-z0-9_]*::)*([A-Za-z_][A-Za-z0-9_]*)(\(\))?", s)
        if not ident or not re.search(r"[A-Z]|\(\)|::|[a-z][A-Z]", s):
            continue  # a lower-case word: a value, a key part, a provider name
        checked += 1
        for part in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", s):
            if part not in words:
                problems.append(f"`{span}`: {part} is named nowhere in the code")
                break
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"architecture names: {checked} names of docs/architecture.md are in the tree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
