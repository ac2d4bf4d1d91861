"""The pieces every fabricwatch dashboard is made of (deploy/grafana/generate-dashboards): the
shared selectors and the group join, the template variables, panel builders and the layout."""

DS = {"type": "prometheus", "uid": "${datasource}"}
C = 'cluster=~"$cluster"'
G = 'cluster=~"$cluster", resource_group=~"$group"'
N = 'cluster=~"$cluster", instance="$instance"'
JOB = 'job=~"(.+/)?fabricwatch"'
# Joins a node's resource group onto any fabricwatch series and keeps the selected groups.
IN_GROUP = ("* on (cluster, job, instance) group_left (resource_group) "
            "instance:fabricwatch_resource_group:info{" + G + "}")
ERROR_STATS = ("symbol_error|port_rcv_errors|link_downed|link_error_recovery|"
               "local_link_integrity_errors|excessive_buffer_overrun_errors|"
               "port_rcv_remote_physical_errors|port_xmit_discards")
PORT_STATES = {"1": "DOWN", "2": "INIT", "3": "ARMED", "4": "ACTIVE", "5": "ACTIVE_DEFER"}
PHYS_STATES = {"1": "Sleep", "2": "Polling", "3": "Disabled", "4": "Training", "5": "LinkUp",
               "6": "LinkErrorRecovery", "7": "PhyTest"}
NCCL_LOCAL_STATES = {"0": "waiting", "1": "ok", "2": "skipped", "3": "unavailable", "4": "failed",
                     "5": "timeout", "6": "crashed"}
NCCL_PEER_STATES = {"1": "ok", "2": "skipped", "3": "unavailable", "4": "failed", "5": "timeout",
                    "6": "crashed", "7": "declined", "8": "unreachable", "9": "lost"}
HIDDEN_COLUMNS = ["Time", "__name__", "job", "cluster"]


# --- template variables ---------------------------------------------------------------------

def datasource_var():
    return {"name": "datasource", "label": "Data source", "type": "datasource",
            "query": "prometheus", "current": {}, "hide": 0, "refresh": 1, "regex": "",
            "options": []}


def query_var(name, label, query, include_all=True, multi=False):
    v = {"name": name, "label": label, "type": "query", "datasource": DS,
         "query": query, "definition": query, "refresh": 2, "sort": 1, "regex": "",
         "current": {}, "options": [], "hide": 0, "includeAll": include_all, "multi": multi}
    if include_all:
        v["allValue"] = ".*"
    return v


CLUSTER_VAR = query_var("cluster", "Cluster", "label_values(fabricwatch_build_info, cluster)")
GROUP_VAR = query_var(
    "group", "Resource group",
    'label_values(fabricwatch_resource_group_info{cluster=~"$cluster"}, resource_group)',
    multi=True)
INSTANCE_VAR = query_var(
    "instance", "Node",
    "label_values(instance:fabricwatch_resource_group:info{" + G + "}, instance)",
    include_all=False)


# --- panels ---------------------------------------------------------------------------------

def q(expr, legend="", instant=False, table=False, heatmap=False):
    t = {"datasource": DS, "expr": " ".join(expr.split()), "legendFormat": legend,
         "range": not instant, "instant": instant}
    if table:
        t["format"] = "table"
    if heatmap:
        t["format"] = "heatmap"
    return t


def mappings(states):
    return [{"type": "value", "options": {k: {"text": v} for k, v in states.items()}}]


def thresholds(*steps):
    """steps: (value, color) pairs after the base color."""
    base, *rest = steps
    return {"mode": "absolute",
            "steps": [{"color": base, "value": None}] +
                     [{"color": c, "value": v} for v, c in rest]}


OK_BAD = thresholds("green", (1, "red"))


def panel(kind, title, targets, w=12, h=8, description="", unit=None, defaults=None,
          options=None, transformations=None, overrides=None):
    d = dict(defaults or {})
    if unit:
        d["unit"] = unit
    p = {"type": kind, "title": title, "description": description, "datasource": DS,
         "gridPos": {"w": w, "h": h},
         "targets": [dict(t, refId=chr(ord("A") + i)) for i, t in enumerate(targets)],
         "fieldConfig": {"defaults": d, "overrides": overrides or []},
         "options": options or {}}
    if transformations:
        p["transformations"] = transformations
    return p


def stat(title, expr, description, unit=None, bad_at=None, no_value="0", text_mode="value",
         legend=""):
    d = {"noValue": no_value}
    if bad_at is not None:
        d["thresholds"] = thresholds("green", (bad_at, "red"))
        d["color"] = {"mode": "thresholds"}
    return panel("stat", title, [q(expr, legend=legend, instant=True)], w=4, h=4,
                 description=description, unit=unit, defaults=d,
                 options={"reduceOptions": {"calcs": ["lastNotNull"], "fields": "",
                                            "values": False},
                          "textMode": text_mode, "colorMode": "background",
                          "graphMode": "none"})


def timeseries(title, targets, description, unit=None, stack=False, w=12, h=8):
    custom = {"fillOpacity": 10, "showPoints": "never"}
    if stack:
        custom["stacking"] = {"mode": "normal", "group": "A"}
    return panel("timeseries", title, targets, w=w, h=h, description=description, unit=unit,
                 defaults={"custom": custom},
                 options={"legend": {"displayMode": "table", "placement": "bottom",
                                     "calcs": ["lastNotNull", "max"]},
                          "tooltip": {"mode": "multi", "sort": "desc"}})


def table(title, targets, description, w=12, h=8, merge=False, rename=None, overrides=None,
          defaults=None, extra_transformations=None, hide=()):
    """hide: columns (by their name before renaming) not shown, besides HIDDEN_COLUMNS."""
    tr = []
    if merge:
        tr.append({"id": "merge", "options": {}})
    tr.append({"id": "organize",
               "options": {"excludeByName": {c: True for c in HIDDEN_COLUMNS + list(hide)},
                           "renameByName": rename or {}}})
    tr += extra_transformations or []
    return panel("table", title, targets, w=w, h=h, description=description,
                 defaults=defaults, transformations=tr, overrides=overrides,
                 options={"showHeader": True, "cellHeight": "sm"})


def text(title, content, w=24, h=4):
    return {"type": "text", "title": title, "gridPos": {"w": w, "h": h},
            "options": {"mode": "markdown", "content": content}}


def row(title):
    return {"type": "row", "title": title, "collapsed": False, "panels": [],
            "gridPos": {"w": 24, "h": 1}}


def column_override(field, **props):
    """props by Grafana's property ids, `__` standing for the dot (custom__cellOptions)."""
    return {"matcher": {"id": "byName", "options": field},
            "properties": [{"id": k.replace("__", "."), "value": v} for k, v in props.items()]}


NODE_LINK = [{"title": "Node view",
              "url": "/d/fabricwatch-node/fabricwatch-node?${datasource:queryparam}"
                     "&${cluster:queryparam}&var-instance=${__value.raw}&${__url_time_range}"}]


def layout(panels):
    """Flows panels left to right in rows of 24 columns and numbers them."""
    x = y = row_h = 0
    for i, p in enumerate(panels, 1):
        w, h = p["gridPos"]["w"], p["gridPos"]["h"]
        if p["type"] == "row" or x + w > 24:
            x, y, row_h = 0, y + row_h, 0
        p["gridPos"].update(x=x, y=y)
        p["id"] = i
        x, row_h = x + w, max(row_h, h)
        if p["type"] == "row":
            x, y, row_h = 0, y + h, 0
    return panels


def dashboard(uid, title, description, variables, panels):
    return {
        "uid": uid, "title": title, "description": description,
        "tags": ["fabricwatch"], "editable": True, "graphTooltip": 1,
        "schemaVersion": 39, "version": 1, "refresh": "1m", "timezone": "",
        "time": {"from": "now-6h", "to": "now"},
        "annotations": {"list": []},
        "links": [{"title": "fabricwatch", "type": "dashboards", "tags": ["fabricwatch"],
                   "asDropdown": True, "includeVars": True, "keepTime": True}],
        "templating": {"list": [datasource_var()] + variables},
        "panels": layout(panels),
    }
