"""Extract metric and label names from PromQL expressions.

A small lexer, not a parser: Prometheus itself checks that the expressions
parse (check_dashboards.py sends them to a real server); this module only
finds which identifiers are metric names and which are label names, so that
they can be compared with the names our telemetry produces.
"""
import re

KEYWORDS = {
    # aggregations
    "sum", "min", "max", "avg", "group", "stddev", "stdvar", "count",
    "count_values", "bottomk", "topk", "quantile", "limitk", "limit_ratio",
    # modifiers and set operators
    "by", "without", "on", "ignoring", "group_left", "group_right", "bool",
    "offset", "and", "or", "unless", "atan2",
    # numbers
    "inf", "nan",
}
LABEL_LIST_KW = {"by", "without", "on", "ignoring", "group_left",
                 "group_right"}

TOKEN = re.compile(r"""
    (?P<ws>\s+|\#[^\n]*)
  | (?P<str>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)
  | (?P<dur>\d+(?:\.\d+)?(?:ms|s|m|h|d|w|y)(?:\d+(?:ms|s|m|h|d|w|y))*\b)
  | (?P<num>0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<ident>[a-zA-Z_:][a-zA-Z0-9_:]*)
  | (?P<op>=~|!~|!=|==|<=|>=|[-+*/%^<>=(){}\[\],@:])
""", re.X)


class PromQLError(ValueError):
    pass


def tokens(expr):
    pos = 0
    out = []
    while pos < len(expr):
        m = TOKEN.match(expr, pos)
        if not m:
            raise PromQLError(f"cannot lex at {expr[pos:pos + 20]!r}")
        pos = m.end()
        kind = m.lastgroup
        if kind != "ws":
            out.append((kind, m.group()))
    return out


def unquote(s):
    if s[0] == "`":
        return s[1:-1]
    return bytes(s[1:-1], "utf-8").decode("unicode_escape")


def names(expr):
    """Return (selectors, labels): selectors is a list of
    (metric_name_or_None, [label names in its braces]); labels is the set
    of label names used in by/without/on/ignoring/group_* lists and in
    label_replace/label_join arguments."""
    toks = tokens(expr)
    selectors = []
    labels = set()
    i = 0
    n = len(toks)
    # Stack of open calls: (function name, argument index).
    calls = []
    while i < n:
        kind, text = toks[i]
        nxt = toks[i + 1] if i + 1 < n else (None, None)
        if kind == "ident" and text.lower() in LABEL_LIST_KW \
                and nxt == ("op", "("):
            j = i + 2
            while j < n and toks[j] != ("op", ")"):
                if toks[j][0] == "ident":
                    labels.add(toks[j][1])
                elif toks[j] != ("op", ","):
                    raise PromQLError(f"odd token in label list: {toks[j]}")
                j += 1
            i = j + 1
            continue
        if kind == "ident" and nxt == ("op", "("):
            calls.append([text, 0])
            i += 2
            continue
        if kind == "op" and text == "(":
            calls.append([None, 0])
        elif kind == "op" and text == ")":
            if calls:
                calls.pop()
        elif kind == "op" and text == ",":
            if calls:
                calls[-1][1] += 1
        elif kind == "str" and calls and calls[-1][0] in ("label_replace",
                                                          "label_join"):
            fn, arg = calls[-1]
            if arg == 1 or (fn == "label_replace" and arg == 3) or \
                    (fn == "label_join" and arg >= 3):
                name = unquote(text)
                if name:
                    labels.add(name)
        if (kind == "ident" and text.lower() not in KEYWORDS) or \
                (kind == "op" and text == "{"):
            metric = None
            if kind == "ident":
                metric = text
                if nxt == ("op", "{"):
                    i += 1
            if toks[i] == ("op", "{"):
                sel_labels = []
                j = i + 1
                while j < n and toks[j] != ("op", "}"):
                    if toks[j][0] == "ident" and j + 1 < n and \
                            toks[j + 1][1] in ("=", "!=", "=~", "!~"):
                        sel_labels.append(toks[j][1])
                    j += 1
                i = j
                selectors.append((metric, sel_labels))
            else:
                selectors.append((metric, []))
        i += 1
    return selectors, labels


def label_values_query(q):
    """Split a Grafana Prometheus variable query label_values(sel, label)
    or label_values(label) into (selector or None, label)."""
    m = re.fullmatch(r"\s*label_values\(\s*(?:(.*\S)\s*,\s*)?"
                     r"([a-zA-Z_][a-zA-Z0-9_]*)\s*\)\s*", q, re.S)
    if not m:
        return None
    return m.group(1), m.group(2)
