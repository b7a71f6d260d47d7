"""What every page of the report shares: its stylesheet, the verdicts' colours, and a
value escaped for HTML or a list of rows made a table."""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from typing import Any

VERDICT_COLOURS = {
    "VALID": "#2ca02c",
    "INVALID": "#d62728",
    "UNKNOWN": "#ff7f0e",
    "INCOMPLETE": "#7f7f7f",
}
STYLE = """
body{font-family:system-ui,sans-serif;margin:2em;max-width:75em;color:#222}
h1 .v{padding:.1em .5em;border-radius:.3em;color:#fff}h1 .zip{font-size:.45em}
table{border-collapse:collapse;margin:.5em 0;display:block;overflow-x:auto;max-width:100%}
td,th{border:1px solid #ccc;padding:.2em .6em;
text-align:left;vertical-align:top;font-size:.9em}img{max-width:100%;border:1px solid #eee}
svg{max-width:100%;height:auto}.cx{overflow-x:auto}.cx img{max-width:none}
code{font-size:.9em}.fail{color:#d62728}.note{color:#666}pre{white-space:pre-wrap;margin:0 0 .5em}
#explanation{border-left:.4em solid;padding:.1em 1em;margin:0 0 1em;font-size:1.05em}
#explanation p{margin:.4em 0}#explanation p.lead{font-weight:600}
#explanation ul{margin:.2em 0 .4em;padding-left:1.3em}#explanation li{margin:.15em 0}
tr.step td.said{padding-left:1.5em}
.allowed,.allowed td{color:#777}
mark{background:#fff3b0}details pre{max-height:20em;overflow:auto;font-size:.8em}
p.header{color:#555;margin:-.5em 0 .3em}pre.rerun{background:#f6f6f6;padding:.3em .6em}
"""


def escaped(value: Any) -> str:
    """Takes a string, or any value to be shown as JSON. Returns it escaped for HTML."""
    return html.escape(value if isinstance(value, str) else json.dumps(value, default=repr))


def html_table(rows: Sequence[Sequence[Any]], head: Sequence[str] | None = None) -> str:
    """Takes rows of cells and an optional heading row. Returns an HTML table of them,
    each cell escaped."""
    out = ["<table>"]
    if head:
        out.append("<tr>" + "".join(f"<th>{escaped(h)}</th>" for h in head) + "</tr>")
    out += ["<tr>" + "".join(f"<td>{escaped(c)}</td>" for c in row) + "</tr>" for row in rows]
    return "".join(out) + "</table>"
