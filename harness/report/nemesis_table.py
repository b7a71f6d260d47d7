"""The nemesis story as report.html's table: a row per op and step with its test time,
wall time when known, words, error and the JSON it was read from.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from harness.report.nemesis_story import Row, estimated_invokes, only_expected, story


def time_zero(test: dict[str, Any]) -> datetime | None:
    """Takes test.json's body. Returns the wall-clock time of t = 0 (`t0`, ISO 8601), or
    None when it is not recorded (runs before it was)."""
    t0 = test.get("t0")
    if not isinstance(t0, str):
        return None
    try:
        at = datetime.fromisoformat(t0)
    except ValueError:
        return None
    return at if at.tzinfo else at.replace(tzinfo=UTC)


def story_table(
    section: dict[str, Any], invoked: Sequence[float] | None, t0: datetime | None
) -> str:
    """Takes results.json's nemesis section, the ops' invoke times (None: estimated from
    the section) and the wall time of t = 0 (None: unknown). Returns the story as an HTML
    table: a row per op and step, broker log lines marked, the JSON behind a details."""
    ops = section.get("ops", [])
    if not ops:
        return "<p>No fault was injected.</p>"
    rows = story(ops, estimated_invokes(section) if invoked is None else invoked)
    when = "" if t0 is None else f"; wall time is UTC, t = 0 at {t0:%H:%M:%S.%f}"[:-3]
    head = ["t (s)", *(["wall (UTC)"] if t0 else []), "what happened", "error", "recorded"]
    return (
        "<p>Each nemesis op from its invoke to its return, in test seconds, and the steps a "
        "fault recorded as it went; partition leaders and ISRs as read when the op "
        "returned, and where they had changed by the next op, as it found them"
        f"{html.escape(when)}.</p><table><tr>"
        + "".join(f"<th>{h}</th>" for h in head)
        + "</tr>"
        + "".join(_story_row(row, t0) for row in rows)
        + "</table>"
    )


def _story_row(row: Row, t0: datetime | None) -> str:
    span = f"{row.start:.1f}" if row.stop is None else f"{row.start:.1f} - {row.stop:.1f}"
    wall = [] if t0 is None else [f"{t0 + timedelta(seconds=row.start):%H:%M:%S.%f}"[:-5]]
    marked = "".join(f"<pre><mark>{_h(line)}</mark></pre>" for line in row.log_lines)
    raw = json.dumps(row.raw, indent=1, default=repr)
    cells = [
        f"<td>{_h(span)}</td>",
        *(f"<td>{w}</td>" for w in wall),
        f'<td class="said">{_h(row.words)}{marked}</td>',
        f'<td class="{"note" if only_expected(row.error) else "fail"}">{_h(row.error)}</td>',
        f"<td><details><summary>JSON</summary><pre>{_h(raw)}</pre></details></td>",
    ]
    kind = ' class="step"' if row.stop is None else ""
    return f"<tr{kind}>" + "".join(cells) + "</tr>"


def _h(text: str) -> str:
    return html.escape(text)
