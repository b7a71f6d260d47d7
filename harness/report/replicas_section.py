"""The replicas' agreement in words: the summary's line, report.html's section (per node,
per partition, each offset where they differ) and the sentences that explain an
invalid verdict, all drawn from results.json's `replicas` section (checkers'
check_replicas, harness/run/replica_check.py).
"""

from __future__ import annotations

import html
from typing import Any

Section = dict[str, Any]
CASES_SHOWN = 5


def replicas_line(section: Section) -> str:
    """Takes the replicas section. Returns it in one line: whether the replicas hold the
    same records below the high watermark, which differ where, what each lacks of the
    acknowledged sends, and whether the three counts of lost sends agree."""
    if "error" in section:
        return f"replica comparison failed: {section['error']}"
    below = section.get("divergent_below_hw", 0)
    nodes: dict[str, Section] = section.get("nodes", {})
    said = f"replicas compared offset by offset in {section.get('partitions_checked')} partitions: "
    if below:
        who = ", ".join(
            f"{n} at {e['divergent_below_hw']}" for n, e in nodes.items() if e["divergent_below_hw"]
        )
        said += f"they DIFFER below the high watermark at {below} offsets ({who})"
    elif section.get("valid") is True and not section.get("behind_out_of_isr"):
        said += "the same records below the high watermark"
    elif section.get("valid") is True:
        said += "the in-sync replicas hold the same records below the high watermark"
    else:
        said += "no difference found, but a replica or a high watermark was unknown"
    lacking = [f"{n} {e['lacks_acked']}" for n, e in nodes.items() if e.get("lacks_acked")]
    if lacking:
        said += f"; acknowledged sends each lacks: {', '.join(lacking)}"
    if behind := section.get("behind_out_of_isr"):
        out = [
            f"{n} in partition {p}"
            for p, e in section.get("partitions", {}).items()
            for n, r in e.get("replicas", {}).items()
            if r.get("in_isr") is False
        ]
        said += f"; {behind} offsets below it missing or other on replicas out of the ISR"
        said += f" ({', '.join(out)}): behind, not divergent" if out else ": behind"
    if above := section.get("divergent_above_hw"):
        said += f"; {above} offsets differ above it"
    return said + _counts_words(section.get("lost_counted_by"))


def _counts_words(counted: Any) -> str:
    if not isinstance(counted, dict):
        return ""
    others = [f"{who} {counted[who]}" for who in ("lost_acks", "recount") if who in counted]
    if not others:
        return ""
    agree = "the same sends" if counted.get("same_sends") else "they DISAGREE"
    return f"; lost on every replica {counted.get('replicas')}, {', '.join(others)}: {agree}"


def replica_sentences(section: Section) -> list[str]:
    """Takes an invalid replicas section. Returns why, in a sentence per partition whose
    replicas differ below the high watermark (its first offset), and what the protocol
    promised."""
    said = []
    for p, entry in section.get("partitions", {}).items():
        cases = entry.get("divergences") or []
        if not cases:
            continue
        first = cases[0]
        held = ", ".join(f"{n} {_value(v)}" for n, v in first["held"].items())
        said.append(
            f"The replicas of partition {p} differ at {entry['divergent_below_hw']} offsets "
            f"below its high watermark {entry['high_watermark']}: at offset "
            f"{first['offset']} {held} ({', '.join(first['diverge'])} out of step)."
        )
    if said:
        said.append(
            "Every in-sync replica must hold every record below the high watermark at the "
            "same offset, and a replica that differs here was in sync when the disks were "
            "read: a replica serves what another does not."
        )
    return said


def replicas_html(results: Section) -> str:
    """Takes results.json's body. Returns report.html's Replicas section ("" when the run
    compared none)."""
    section = results.get("replicas")
    if not isinstance(section, dict):
        return ""
    head = f"<h2 id=replicas>Replicas</h2><p>{_e(replicas_line(section))}.</p>"
    if "error" in section:
        return head
    nodes = [
        (n, e.get("divergent_below_hw"), e.get("lacks_acked"), ", ".join(map(str, e["partitions"])))
        for n, e in section.get("nodes", {}).items()
    ]
    rows = []
    for p, entry in section.get("partitions", {}).items():
        counts = "; ".join(
            f"{n}: {r['records']} records to {r['log_end']}, lacks {r['lacks_acked']}"
            for n, r in entry.get("replicas", {}).items()
        )
        cases = "; ".join(
            f"offset {c['offset']}: " + ", ".join(f"{n} {_value(v)}" for n, v in c["held"].items())
            for c in (entry.get("divergences") or [])[:CASES_SHOWN]
        )
        rows.append(
            (
                p,
                entry.get("high_watermark"),
                entry.get("leader") or "",
                counts,
                entry.get("divergent_below_hw"),
                cases,
                entry.get("lost"),
            )
        )
    return (
        head + "<p>Each replica's log as its disk holds it after the final heal and drain, "
        "offset by offset below the high watermark the drain read to (replicas.json has "
        "every partition in full).</p>"
        + _table(nodes, ["node", "offsets out of step", "acknowledged sends lacking", "partitions"])
        + _table(
            rows,
            [
                "partition",
                "high watermark",
                "leader",
                "each replica",
                "offsets that differ",
                "first cases",
                "lost on every replica",
            ],
        )
    )


def _value(value: Any) -> str:
    return "nothing" if value is None else f"holds {value}"


def _e(text: str) -> str:
    return html.escape(text)


def _table(rows: list[tuple[Any, ...]], head: list[str]) -> str:
    cells = "".join(
        "<tr>" + "".join(f"<td>{_e('' if c is None else str(c))}</td>" for c in row) + "</tr>"
        for row in rows
    )
    return "<table><tr>" + "".join(f"<th>{_e(h)}</th>" for h in head) + f"</tr>{cells}</table>"
