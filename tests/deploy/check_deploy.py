#!/usr/bin/env python3
"""Reference checks for deploy/prometheus and deploy/grafana, run by CTest:

- every metric name a rule or a dashboard query (or template variable) selects is a family
  in docs/metrics.md (histogram series by their family), a recording rule of
  deploy/prometheus/recording.yml, or Prometheus' own `up`; and every label a selector
  matches on is one of that family's documented labels or a target label;
- every alert has summary, description and a runbook_url that is an anchor of docs/alerts.md
  (and docs/alerts.md documents no alert that does not exist), no external URLs, a `for:` of
  at least 5 minutes written in whole minutes or hours, and a severity label;
- every alert has a promtool test that expects it to fire and one that expects it not to;
- every dashboard variable a query uses is defined, every panel uses the datasource variable;
- no rule selects a family that is opt-in everywhere (docs/metrics.md, "Series budget"), and a
  panel that does is listed in docs/dashboards.md's table of panels that need opt-in series
  (whose rows name panels that exist).

Exit status 0 when all hold; otherwise each problem is printed and the status is 1.
"""
import json
import pathlib
import re
import sys

import yaml

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import promql_names  # noqa: E402

ROOT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else
                    pathlib.Path(__file__).resolve().parent.parent.parent)
PROM = ROOT / "deploy/prometheus"
RULE_FILES = [PROM / "recording.yml", PROM / "alerts.yml", PROM / "localisation.yml"]
PROMTOOL_TESTS = sorted((ROOT / "tests/deploy/promtool").glob("*.yml"))
DASHBOARDS = sorted((ROOT / "deploy/grafana/dashboards").glob("*.json"))
TARGET_LABELS = {"cluster", "job", "instance"}
# Series Prometheus itself writes for every target.
PROMETHEUS_SERIES = {"up": set()}
GRAFANA_BUILTINS = {"__rate_interval", "__interval", "__range"}
# `for:` durations the end-to-end test can scale (minutes become seconds).
DURATION = re.compile(r"^(\d+h)?(\d+m)?$")

problems = []


def problem(msg):
    problems.append(msg)


def documented_families():
    """{name: (type, labels)} from the tables of docs/metrics.md."""
    row = re.compile(r"^\| `([a-zA-Z_:][a-zA-Z0-9_:]*)` \| (\w+) \|([^|]*)\|", re.M)
    text = (ROOT / "docs/metrics.md").read_text(encoding="utf-8")
    out = {}
    for name, kind, labels in row.findall(text):
        out[name] = (kind, {l.strip() for l in labels.split(",") if l.strip()})
    if not out:
        problem("docs/metrics.md: no metric table found")
    return out


def wholly_optional_families():
    """The families docs/metrics.md's optional-metrics table declares opt-in for every series
    (not one counter of a family selected by `stat`, not "other ... have it by default")."""
    text = (ROOT / "docs/metrics.md").read_text(encoding="utf-8")
    m = re.search(r"<!-- optional-metrics:begin -->(.*)<!-- optional-metrics:end -->", text, re.S)
    if not m:
        problem("docs/metrics.md: no optional-metrics table")
        return set()
    row = re.compile(r"^\| `[^`]+` \| `([a-z_:][a-z0-9_:]*)` \|([^|]*)\|([^|]*)\|", re.M)
    return {name for name, by, adds in row.findall(m.group(1))
            if not by.strip() and "by default" not in adds}


def opt_in_panels():
    """{(dashboard file, panel title)} from docs/dashboards.md's opt-in-panels table."""
    text = (ROOT / "docs/dashboards.md").read_text(encoding="utf-8")
    m = re.search(r"<!-- opt-in-panels:begin -->(.*)<!-- opt-in-panels:end -->", text, re.S)
    if not m:
        problem("docs/dashboards.md: no opt-in-panels table")
        return set()
    return set(re.findall(r"^\| `([^`]+\.json)` \| ([^|]+?) \|", m.group(1), re.M))


def selected_names(expr):
    try:
        return {name for name, _ in promql_names.selectors(expr)}
    except ValueError:
        return set()  # check_expr reports it


def known_labels(name, families, recorded):
    """The labels a selector of `name` may match on, or None when the name is unknown."""
    if name in recorded or name in PROMETHEUS_SERIES:
        return None if name not in PROMETHEUS_SERIES else PROMETHEUS_SERIES[name] | TARGET_LABELS
    if name in families:
        return families[name][1] | TARGET_LABELS
    for suffix, extra in (("_bucket", {"le"}), ("_sum", set()), ("_count", set())):
        base = name[:-len(suffix)]
        if name.endswith(suffix) and families.get(base, ("",))[0] == "histogram":
            return families[base][1] | TARGET_LABELS | extra
    return False


def check_expr(expr, where, families, recorded):
    try:
        sels = promql_names.selectors(expr)
    except ValueError as e:
        problem(f"{where}: {e}")
        return
    if not sels:
        problem(f"{where}: selects no metric: {expr}")
    for name, labels in sels:
        allowed = known_labels(name, families, recorded)
        if allowed is False:
            problem(f"{where}: `{name}` is not in docs/metrics.md nor a recording rule")
        elif allowed is not None and labels - allowed:
            problem(f"{where}: `{name}` has no label(s) {sorted(labels - allowed)} "
                    f"(docs/metrics.md: {sorted(allowed - TARGET_LABELS)})")


def check_label_values(query, where, families, recorded):
    """Grafana's label_values(SELECTOR, LABEL) / label_values(LABEL)."""
    m = re.fullmatch(r"\s*label_values\((?:(.*),)?\s*(\w+)\s*\)\s*", query, re.S)
    if not m:
        problem(f"{where}: only label_values() variable queries are supported: {query}")
        return
    selector, label = m.group(1), m.group(2)
    if selector is None:
        return
    check_expr(selector, where, families, recorded)
    for name, _ in promql_names.selectors(selector):
        allowed = known_labels(name, families, recorded)
        if allowed and label not in allowed:
            problem(f"{where}: `{name}` has no label `{label}`")


def load_rules():
    groups = []
    for f in RULE_FILES:
        groups += [(f.name, g) for g in yaml.safe_load(f.read_text(encoding="utf-8"))["groups"]]
    return groups


def minutes(d):
    m = DURATION.match(d)
    if not m or not (m.group(1) or m.group(2)):
        return None
    return int((m.group(1) or "0h")[:-1]) * 60 + int((m.group(2) or "0m")[:-1])


def check_rules(groups, families, recorded):
    alerts = {}
    optional = wholly_optional_families()
    for fname, g in groups:
        for r in g["rules"]:
            name = r.get("record") or r.get("alert")
            check_expr(r["expr"], f"{fname}: {name}", families, recorded)
            for n in sorted(selected_names(r["expr"]) & optional):
                problem(f"{fname}: {name}: `{n}` is opt-in (docs/metrics.md, \"Series budget\"): "
                        "a default install would never evaluate this rule")
            for d in re.findall(r"\[([^\]]+)\]", r["expr"]):
                if minutes(d.split(":")[0]) is None:
                    problem(f"{fname}: {name}: range [{d}] is not in whole minutes or hours "
                            "(the end-to-end test scales them)")
            if "alert" in r:
                alerts[name] = (fname, r)
    for name, (fname, r) in alerts.items():
        where = f"{fname}: {name}"
        f = minutes(str(r.get("for", "")))
        if f is None or f < 5:
            problem(f"{where}: `for:` must be at least 5m in whole minutes or hours, "
                    f"not {r.get('for')!r}")
        if "keep_firing_for" in r and minutes(str(r["keep_firing_for"])) is None:
            problem(f"{where}: `keep_firing_for:` must be in whole minutes or hours (the "
                    f"end-to-end test scales it), not {r['keep_firing_for']!r}")
        if r.get("labels", {}).get("severity") not in ("critical", "warning", "info"):
            problem(f"{where}: needs a severity label (critical, warning or info)")
        ann = r.get("annotations", {})
        for key in ("summary", "description", "runbook_url"):
            if not ann.get(key):
                problem(f"{where}: no {key} annotation")
        if ann.get("runbook_url") != f"docs/alerts.md#{name.lower()}":
            problem(f"{where}: runbook_url must be docs/alerts.md#{name.lower()}")
        for key, value in ann.items():
            if "://" in value:
                problem(f"{where}: annotation {key} holds a URL; runbooks live in docs/alerts.md")
    return alerts


def check_runbooks(alerts):
    text = (ROOT / "docs/alerts.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^### (Fabricwatch\w+)\s*$", text, re.M))
    for name in sorted(set(alerts) - documented):
        problem(f"docs/alerts.md: no section '### {name}' (the runbook_url anchor)")
    for name in sorted(documented - set(alerts)):
        problem(f"docs/alerts.md: '### {name}' documents an alert that does not exist")


def check_promtool_coverage(alerts):
    fires, silent = set(), set()
    for f in PROMTOOL_TESTS:
        doc = yaml.safe_load(f.read_text(encoding="utf-8"))
        for t in doc.get("tests", []):
            for a in t.get("alert_rule_test", []):
                (fires if a.get("exp_alerts") else silent).add(a["alertname"])
    for name in sorted(set(alerts) - fires):
        problem(f"tests/deploy/promtool: no test expects {name} to fire")
    for name in sorted(set(alerts) - silent):
        problem(f"tests/deploy/promtool: no test expects {name} to stay silent")
    for name in sorted((fires | silent) - set(alerts)):
        problem(f"tests/deploy/promtool: tests an alert that does not exist: {name}")


def check_dashboards(families, recorded):
    uids = {}
    optional = wholly_optional_families()
    listed = opt_in_panels()
    seen = set()
    if len(DASHBOARDS) < 4:
        problem("deploy/grafana/dashboards: expected the four dashboards")
    for path in DASHBOARDS:
        d = json.loads(path.read_text(encoding="utf-8"))
        name = path.name
        if d["uid"] in uids:
            problem(f"{name}: uid {d['uid']} is also {uids[d['uid']]}'s")
        uids[d["uid"]] = name
        variables = {v["name"]: v for v in d["templating"]["list"]}
        for required in ("datasource", "cluster", "group"):
            if required not in variables:
                problem(f"{name}: no template variable {required}")
        for v in variables.values():
            if v["type"] == "query":
                check_label_values(v["query"], f"{name}: variable {v['name']}", families,
                                   recorded)
        titles = [p["title"] for p in d["panels"]]
        for t in sorted({t for t in titles if titles.count(t) > 1}):
            problem(f"{name}: two panels are titled {t!r}")
        for p in d["panels"]:
            where = f"{name}: panel {p['title']!r}"
            seen.add((name, p["title"]))
            if p["type"] in ("row", "text"):
                continue
            opt = set().union(*[selected_names(t["expr"]) for t in p.get("targets", [])]) & optional
            if opt and (name, p["title"]) not in listed:
                problem(f"{where}: draws opt-in {sorted(opt)}: list it in docs/dashboards.md's "
                        "table of panels that need opt-in series")
            if not p.get("targets"):
                problem(f"{where}: no query")
            for t in [p] + p.get("targets", []):
                if t.get("datasource") != {"type": "prometheus", "uid": "${datasource}"}:
                    problem(f"{where}: datasource must be the ${{datasource}} variable")
            for t in p.get("targets", []):
                used = promql_names.grafana_variables(t["expr"])
                for v in sorted(used - set(variables) - GRAFANA_BUILTINS):
                    problem(f"{where}: uses undefined variable ${v}")
                check_expr(t["expr"], where, families, recorded)
    for dash, title in sorted(listed - seen):
        problem(f"docs/dashboards.md: opt-in panel {title!r} is not a panel of {dash}")


def main():
    families = documented_families()
    groups = load_rules()
    recorded = {r["record"] for _, g in groups for r in g["rules"] if "record" in r}
    alerts = check_rules(groups, families, recorded)
    check_runbooks(alerts)
    check_promtool_coverage(alerts)
    check_dashboards(families, recorded)
    for p in problems:
        print(p)
    print(f"checked {len(alerts)} alerts, {len(recorded)} recording rules, "
          f"{len(DASHBOARDS)} dashboards: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
