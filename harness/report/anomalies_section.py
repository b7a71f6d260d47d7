"""report.html's Anomalies section and its grey Allowed anomalies section: per invalid
key the failing op and its drawings, or the queue checker's first cases of each kind."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

from checkers.queue import case_words
from harness.report.counterexamples.cycles import cycle_svg
from harness.report.counterexamples.timeline import narrow_file
from harness.report.counterexamples.viewer import key_anchor
from harness.report.page_markup import escaped, html_table
from harness.report.plots.images import IMAGE
from harness.report.queue_section import following_kinds

CASES_SHOWN = 3


def anomalies_html(results: dict[str, Any], drawings: dict[str, list[Path]], folder: Path) -> str:
    """Takes results.json's body, the counterexample drawings by key and the run folder.
    Returns the Anomalies section's body: the cases that make the history invalid, or a
    sentence saying why there are none."""
    if isinstance(queue := results.get("queue"), dict):
        allowed = _allowed_count(queue)
        below = (
            f'<p class="note">{allowed} found that Kafka allows: <a href="#allowed">below the '
            "plots</a>, in grey.</p>"
            if allowed
            else ""
        )
        found = _cases(queue, allowed=False)
        if not found:
            return (
                "<p>None that makes the history invalid.</p>"
                if allowed
                else "<p>No anomaly was found.</p>"
            ) + below
        return found + below
    if "linearizable" not in results:
        if any(isinstance(results.get(s), dict) for s in ("groups", "share")):
            return "<p>None here: the Groups section below has the group checks' findings.</p>"
        return "<p>None: no check of this run looks for anomalies.</p>"
    failures = results["linearizable"].get("failures", [])
    if not failures:
        return "<p>No key was found non-linearizable.</p>"
    parts = []
    for failure in failures:
        key = str(failure.get("key"))
        if failure.get("valid") is not False:
            parts.append(
                f"<h3>key {escaped(key)}: unknown</h3><p>{escaped(failure.get('cause', ''))}</p>"
            )
            continue
        parts.append(f"<h3 class=fail>key {escaped(key)}: not linearizable</h3>")
        parts.append(f"<p>{escaped(failure.get('message', ''))}</p>")
        rows = [
            ("failing op", _op_text(failure.get("op"))),
            ("last ok op before it", _op_text(failure.get("previous_ok"))),
        ]
        parts.append(html_table(rows))
        for path in drawings.get(key, []):
            if path.suffix == IMAGE:  # at its own size: text shrunk to fit 800 px is unreadable
                parts.append(f'<div class="cx">{_still(path, key)}</div>')
            else:
                how = "compressed time; hover an op for its states, click to pin"
                rel = path.relative_to(folder).as_posix()
                href = f"{quote(rel)}#{key_anchor(failure.get('key'))}"
                link = f'<a href="{html.escape(href)}">{html.escape(rel)}</a>'
                parts.append(f"<p>interactive timeline ({how}; every invalid key): {link}</p>")
    return "".join(parts)


def _still(path: Path, key: str) -> str:
    """Returns a still's image; with its narrow twin, when drawn, as what a page under
    60em wide shows (the ops nearest the failing one, readable without a sideways scroll)."""
    img = f'<img src="{html.escape(quote(path.name))}" alt="counterexample {escaped(key)}">'
    if not (narrow := narrow_file(path)).exists():
        return img
    source = f'<source media="(max-width: 60em)" srcset="{html.escape(quote(narrow.name))}">'
    return f"<picture>{source}{img}</picture>"


def _op_text(op: Any) -> str:
    """An op in words, with its times in test seconds when it has them."""
    if not isinstance(op, dict):
        return "none"
    said = f"{op.get('text', op)} (history index {op.get('index')})"
    if not isinstance(op.get("call"), int):
        return said
    ret = "never returned" if op.get("ret") is None else f"returned {op['ret'] / 1e9:.6f} s"
    return f"{said}: invoked {op['call'] / 1e9:.6f} s, {ret}"


def allowed_html(results: dict[str, Any]) -> str:
    """Takes results.json's body. Returns the section of the anomalies found that do not
    make a history invalid (G0 under Kafka's transactions: found, and not a fault), in
    grey, for below the plots: first come the problems; "" when none was found."""
    queue = results.get("queue")
    if not isinstance(queue, dict) or not (table := _cases(queue, allowed=True)):
        return ""
    return (
        '<h2 id="allowed">Allowed anomalies</h2><div class="allowed"><p>Found and reported, '
        "never a reason for INVALID: Kafka's guarantees allow them.</p>" + table + "</div>"
    )


def _allowed_count(queue: dict[str, Any]) -> int:
    return sum(
        int(found.get("count", 0))
        for found in queue.get("kinds", {}).values()
        if found.get("count") and not found.get("invalidating")
    )


def _cases(queue: dict[str, Any], allowed: bool) -> str:
    """Returns the first cases of each kind found that makes a history invalid (allowed:
    of each that does not), in the checker's words, a dependency cycle also drawn; ""
    when none was found."""
    rows = []
    following = following_kinds(queue)
    for kind, found in queue.get("kinds", {}).items():
        if allowed == bool(found.get("invalidating")):
            continue
        cases = found.get("cases", [])
        said = f"{kind} (allowed)" if allowed else kind
        if kind in following:  # a consequence, said under its cause
            said += " (follows from the lost writes)"
        cell = "<td>" if allowed else "<td class=fail>"
        for case in cases[:CASES_SHOWN]:
            words = f"<pre>{escaped(_case_words(kind, case))}</pre>"
            drawing = cycle_svg(case, allowed=allowed) if isinstance(case, dict) else None
            rows.append(f"<tr>{cell}{escaped(said)}</td><td>{words}{drawing or ''}</td></tr>")
        if (more := found.get("count", len(cases)) - min(len(cases), CASES_SHOWN)) > 0:
            kept = "" if len(cases) >= found["count"] else f", the first {len(cases)}"
            rows.append(
                f"<tr><td>{escaped(kind)}</td><td>and {more} more (results.json{kept})</td></tr>"
            )
    if not rows:
        return ""
    return "<table><tr><th>anomaly</th><th>case</th></tr>" + "".join(rows) + "</table>"


def _case_words(kind: str, case: Any) -> str:
    # The checker's own words for a case; a case of another shape (an older results.json)
    # as it is: the page must never fail on the words, the run's verdict is written first.
    try:
        return case_words(kind, case)
    except Exception:
        return json.dumps(case, default=str)
