"""The metric names and matcher labels a PromQL expression selects, for the reference checks
(check_deploy.py). A tokenizer, not a parser: it knows PromQL's functions, aggregations,
keywords and label-list clauses well enough to tell a metric name from everything else."""
import re

AGGREGATIONS = {"sum", "min", "max", "avg", "group", "stddev", "stdvar", "count",
                "count_values", "bottomk", "topk", "quantile", "limitk", "limit_ratio"}
# Keywords followed by a parenthesised list of label names.
LABEL_LIST_KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right"}
OPERATOR_KEYWORDS = {"and", "or", "unless", "bool", "atan2"}
LITERALS = {"inf", "nan"}

# Grafana's built-in intervals become a duration; template variables only occur inside
# label matcher strings and become a placeholder.
GRAFANA_INTERVALS = re.compile(
    r"\$(__rate_interval|__interval|__range)\b|\$\{(__rate_interval|__interval|__range)\}")
GRAFANA_VARIABLE = re.compile(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)|\[\[(\w+)\]\]")

TOKEN = re.compile(r"""
    (?P<ws>\s+|\#[^\n]*)
  | (?P<str>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)
  | (?P<num>(?:0x[0-9a-fA-F]+|[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)(?:[smhdwy]|ms)*)
  | (?P<id>[a-zA-Z_:][a-zA-Z0-9_:]*)
  | (?P<op>=~|!~|!=|==|<=|>=|[-+*/%^<>=(){}\[\],@])
""", re.VERBOSE)


def grafana_variables(expr):
    """Names of the template variables an expression uses (built-in intervals excluded)."""
    rest = GRAFANA_INTERVALS.sub("", expr)
    return {next(g for g in m.groups() if g) for m in GRAFANA_VARIABLE.finditer(rest)}


def substitute_for_parsing(expr):
    expr = GRAFANA_INTERVALS.sub("5m", expr)
    return GRAFANA_VARIABLE.sub("x", expr)


def tokens(expr):
    out, pos = [], 0
    while pos < len(expr):
        m = TOKEN.match(expr, pos)
        if not m:
            raise ValueError(f"cannot tokenize at {expr[pos:pos + 20]!r} in {expr!r}")
        pos = m.end()
        if m.lastgroup != "ws":
            out.append((m.lastgroup, m.group()))
    return out


def _skip_group(toks, i, open_, close):
    """toks[i] is `open_`; returns the index after its matching `close`."""
    depth = 0
    while i < len(toks):
        if toks[i] == ("op", open_):
            depth += 1
        elif toks[i] == ("op", close):
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError(f"unbalanced {open_}")


def _matchers(toks, i):
    """toks[i] is '{'; returns (label names, {label: value of = matchers}, index after '}')."""
    labels, equal = set(), {}
    i += 1
    while toks[i] != ("op", "}"):
        kind, text = toks[i]
        if kind in ("id", "str") and i + 2 < len(toks) and toks[i + 1][0] == "op" \
                and toks[i + 1][1] in ("=", "!=", "=~", "!~"):
            name = text if kind == "id" else text[1:-1]
            labels.add(name)
            if toks[i + 1][1] == "=" and toks[i + 2][0] == "str":
                equal[name] = toks[i + 2][1][1:-1]
            i += 3
        else:
            i += 1
    return labels, equal, i + 1


def selectors(expr):
    """[(metric name, set of label names in its matchers)] for every vector selector."""
    toks = tokens(substitute_for_parsing(expr))
    out, i = [], 0
    while i < len(toks):
        kind, text = toks[i]
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        if kind == "id" and text in LABEL_LIST_KEYWORDS:
            i = _skip_group(toks, i + 1, "(", ")") if nxt == ("op", "(") else i + 1
        elif kind == "id" and (text in AGGREGATIONS or text in OPERATOR_KEYWORDS
                               or text.lower() in LITERALS or text == "offset"):
            i += 1
        elif kind == "id" and nxt == ("op", "("):
            i += 1  # a function call
        elif kind == "id":
            labels, i = set(), i + 1
            if nxt == ("op", "{"):
                labels, _, i = _matchers(toks, i)
            out.append((text, labels))
        elif (kind, text) == ("op", "{"):
            labels, equal, i = _matchers(toks, i)
            if "__name__" not in equal:
                raise ValueError(f"a selector without a metric name in {expr!r}")
            out.append((equal["__name__"], labels - {"__name__"}))
        elif (kind, text) == ("op", "["):
            i = _skip_group(toks, i, "[", "]")
        else:
            i += 1
    return out
