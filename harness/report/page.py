"""report.html: the one page a person reads first, with the verdict, the options, the
plots, each counterexample, the nemesis timeline and links to every file of the run.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from checkers.groups import expansion_lines, group_lines, share_lines
from checkers.queue import case_words, effect, follows_from_loss
from harness.cluster.config import PROFILES
from harness.report.counterexamples.cycles import cycle_svg
from harness.report.counterexamples.viewer import key_anchor
from harness.report.explain import explain_points, explanation_html
from harness.report.groups_section import groups_html
from harness.report.header import header_html
from harness.report.nemesis_table import story_table, time_zero
from harness.report.plots.images import IMAGE, LAG_FILE, OFFSETS_GLOB, RUN_PLOTS, UNSEEN_FILE
from harness.report.release_rows import release_rows
from harness.report.replicas_section import replicas_html, replicas_line
from harness.report.zip_link import zip_link
from harness.verdicts import run_verdict, verdict_word

LAG_PLOTS = (
    (
        LAG_FILE,
        "realtime lag",
        "Per consumer, how long its polls were behind the log: from when the first offset "
        "it had not read was known to exist to the poll's invocation (Jepsen's realtime "
        "lag, a lower bound); below, by how many offsets.",
    ),
    (UNSEEN_FILE, "unseen messages", "Acknowledged sends no poll had received yet."),
)
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


def _e(value: Any) -> str:
    return html.escape(value if isinstance(value, str) else json.dumps(value, default=repr))


def _table(rows: Sequence[Sequence[Any]], head: Sequence[str] | None = None) -> str:
    out = ["<table>"]
    if head:
        out.append("<tr>" + "".join(f"<th>{_e(h)}</th>" for h in head) + "</tr>")
    out += ["<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>" for row in rows]
    return "".join(out) + "</table>"


def _link(folder: Path, path: Path) -> str:
    rel = path.relative_to(folder).as_posix()
    return f'<a href="{html.escape(quote(rel))}">{html.escape(rel)}</a>'


def _anomalies(results: dict[str, Any], drawings: dict[str, list[Path]], folder: Path) -> str:
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
            parts.append(f"<h3>key {_e(key)}: unknown</h3><p>{_e(failure.get('cause', ''))}</p>")
            continue
        parts.append(f"<h3 class=fail>key {_e(key)}: not linearizable</h3>")
        parts.append(f"<p>{_e(failure.get('message', ''))}</p>")
        rows = [
            ("failing op", _op_text(failure.get("op"))),
            ("last ok op before it", _op_text(failure.get("previous_ok"))),
        ]
        parts.append(_table(rows))
        for path in drawings.get(key, []):
            if path.suffix == IMAGE:  # at its own size: text shrunk to fit 800 px is unreadable
                img = f'<img src="{html.escape(quote(path.name))}" alt="counterexample {_e(key)}">'
                parts.append(f'<div class="cx">{img}</div>')
            else:
                how = "compressed time; hover an op for its states, click to pin"
                rel = path.relative_to(folder).as_posix()
                href = f"{quote(rel)}#{key_anchor(failure.get('key'))}"
                link = f'<a href="{html.escape(href)}">{html.escape(rel)}</a>'
                parts.append(f"<p>interactive timeline ({how}; every invalid key): {link}</p>")
    return "".join(parts)


def queue_lines(queue: dict[str, Any]) -> list[str]:
    """Takes the queue checker's section. Returns "N acknowledged, M lost (P%)", a line per
    anomaly kind found, with its count and what it does to the verdict, and one for the
    kinds not found."""
    if "error" in queue:
        return [f"the queue checker failed: {queue['error']}"]
    acked, lost = queue.get("acknowledged", 0), queue.get("lost", 0)
    share = f"{100 * lost / acked:.1f}%" if acked else "n/a"
    lines = [f"{acked} acknowledged, {lost} lost ({share})"]
    if isinstance(txns := queue.get("transactions"), dict):
        lines.append(
            f"transactions: {txns.get('committed')} committed, {txns.get('aborted')} aborted, "
            f"{txns.get('unknown')} unknown"
        )
    kinds = queue.get("kinds", {})
    found = {kind: entry for kind, entry in kinds.items() if entry.get("count")}
    following = _following(queue)
    for kind, entry in found.items():
        said = effect(
            kind,
            invalidating=bool(entry.get("invalidating")),
            ignored=bool(entry.get("ignored")),
        )
        cause = f"; follows from the lost writes: {following[kind]}" if kind in following else ""
        lines.append(f"{kind}: {entry['count']} ({said}{cause})")
    if len(kinds) > len(found):
        other = "other " if found else ""
        lines.append(f"no case of the {len(kinds) - len(found)} {other}anomaly kinds")
    return lines


def _queue(results: dict[str, Any], folder: Path) -> str:
    queue = results.get("queue")
    if not isinstance(queue, dict):
        return ""
    items = "".join(f"<li>{_e(line)}</li>" for line in queue_lines(queue))
    drawn = sorted(folder.glob(OFFSETS_GLOB))
    plots = "".join(f'<img src="{html.escape(p.name)}" alt="{html.escape(p.stem)}">' for p in drawn)
    return (
        f"<h2>Queue</h2><ul>{items}</ul>"
        + "".join(
            f'<h3>{_e(title)}</h3><img src="{name}" alt="{name}"><p>{_e(caption)}</p>'
            for name, title, caption in LAG_PLOTS
            if (folder / name).exists()
        )
        + offsets_line(queue, len(drawn))
        + plots
    )


def offsets_line(queue: dict[str, Any], drawn: int) -> str:
    """Takes the queue checker's section and how many offsets plots the run drew (one per
    partition with an anomaly). Returns a heading and a line saying how many partitions
    had none and so are not drawn ("" when the section does not count its partitions)."""
    total = queue.get("partitions")
    if not isinstance(total, int) or "error" in queue:
        return ""
    none = total - drawn
    if not drawn:
        said = f"No offsets plot: none of the {total} partitions had an anomaly that counts"
        return f"<h3>offsets</h3><p>{said} against the run.</p>"
    which = "the partition" if drawn == 1 else f"each of the {drawn} partitions"
    rest = "" if none <= 0 else f"; the other {none} had none and are not drawn"
    said = (
        f"The message at each offset, for {which} with an anomaly that counts against the "
        f"run, zoomed around its anomalies{rest}."
    )
    return f"<h3>offsets</h3><p>{_e(said)}</p>"


CASES_SHOWN = 3


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
    following = _following(queue)
    for kind, found in queue.get("kinds", {}).items():
        if allowed == bool(found.get("invalidating")):
            continue
        cases = found.get("cases", [])
        said = f"{kind} (allowed)" if allowed else kind
        if kind in following:  # a consequence, said under its cause
            said += " (follows from the lost writes)"
        cell = "<td>" if allowed else "<td class=fail>"
        for case in cases[:CASES_SHOWN]:
            words = f"<pre>{_e(_case_words(kind, case))}</pre>"
            drawing = cycle_svg(case, allowed=allowed) if isinstance(case, dict) else None
            rows.append(f"<tr>{cell}{_e(said)}</td><td>{words}{drawing or ''}</td></tr>")
        if (more := found.get("count", len(cases)) - min(len(cases), CASES_SHOWN)) > 0:
            kept = "" if len(cases) >= found["count"] else f", the first {len(cases)}"
            rows.append(
                f"<tr><td>{_e(kind)}</td><td>and {more} more (results.json{kept})</td></tr>"
            )
    if not rows:
        return ""
    return "<table><tr><th>anomaly</th><th>case</th></tr>" + "".join(rows) + "</table>"


def _following(queue: dict[str, Any]) -> dict[str, str]:
    # The kinds that follow from the lost writes; none for a section of an older shape.
    try:
        return follows_from_loss(queue)
    except Exception:
        return {}


def _case_words(kind: str, case: Any) -> str:
    # The checker's own words for a case; a case of another shape (an older results.json)
    # as it is: the page must never fail on the words, the run's verdict is written first.
    try:
        return case_words(kind, case)
    except Exception:
        return json.dumps(case, default=str)


RECOVERY_ROWS = 40


def _seconds(value: Any) -> str:
    return "never" if value is None else f"{value:g} s"


def recovery_lines(recovery: dict[str, Any]) -> list[str]:
    """Takes the recovery section. Returns a line per fault: the median and worst time
    to a new leader, to the first ok op, to the first that completed before the heal, and
    to the first ok op after the heal (a time a run's results do not have is left out)."""
    lines = []
    for fault, times in recovery.get("summary", {}).items():
        said = []
        for name, words in (
            ("new_leader_s", "new leader"),
            ("first_ok_s", "first ok op"),
            ("in_fault_s", "served in the fault"),
            ("after_heal_s", "after the heal"),
        ):
            if name not in times:
                continue
            t = times[name]
            never = f", never in {t['never']}" if t.get("never") else ""
            said.append(
                f"{words} {_seconds(t.get('median'))} (worst {_seconds(t.get('worst'))}{never})"
            )
        lines.append(f"{fault}, {times.get('partitions')} partitions taken: " + "; ".join(said))
    return lines


def _recovery(results: dict[str, Any]) -> str:
    recovery = results.get("recovery")
    if not isinstance(recovery, dict) or not recovery.get("partitions"):
        return ""
    rows = [
        (
            f"{r['start']:g}",
            r["fault"],
            r["node"] or "",
            r["partition"],
            f"{r['new_leader'] or ''} {_seconds(r['new_leader_s'])}",
            _seconds(r["first_ok_s"]),
            _seconds(r.get("in_fault_s")),
            ", ".join(f"{p}: {t:g} s" for p, t in r["first_ok_by_client"].items()),
            _seconds(r["after_heal_s"]),
            r["failed"],
            r["timed_out"],
        )
        for r in recovery["partitions"][:RECOVERY_ROWS]
    ]
    head = [
        "t (s)",
        "fault",
        "broker",
        "partition",
        "new leader after",
        "first ok op after",
        "completed in the fault",
        "each client's first ok op",
        "first ok after the heal",
        "failed",
        "timed out",
    ]
    items = "".join(f"<li>{_e(line)}</li>" for line in recovery_lines(recovery))
    return (
        "<h2>Recovery</h2><p>For each fault and each partition whose leader it took: the time "
        "from the fault's start until the cluster named another leader, until an op "
        "invoked after the start on that partition succeeded, and from the heal until one "
        f"did again; the ops invoked meanwhile that failed or timed out.</p><ul>{items}</ul>"
        + _table(rows, head)
    )


def _section_summary(name: str, section: dict[str, Any]) -> str:
    word = verdict_word(section.get("valid"))
    if name == "linearizable":
        return f"{word} over {section.get('keys', 0)} keys"
    if name == "queue":
        return f"{word}: {queue_lines(section)[0]}"
    if "lost_count" in section:
        return f"{word}: {section['ack_count']} acknowledged, {section['lost_count']} lost"
    said = {"groups": group_lines, "share": share_lines, "expansion": expansion_lines}.get(name)
    return f"{word}: {said(section)[0].split(': ', 1)[-1]}" if said else word


def _op_text(op: Any) -> str:
    """An op in words, with its times in test seconds when it has them."""
    if not isinstance(op, dict):
        return "none"
    said = f"{op.get('text', op)} (history index {op.get('index')})"
    if not isinstance(op.get("call"), int):
        return said
    ret = "never returned" if op.get("ret") is None else f"returned {op['ret'] / 1e9:.6f} s"
    return f"{said}: invoked {op['call'] / 1e9:.6f} s, {ret}"


def _final(final: dict[str, Any]) -> str:
    if not final:
        return "not reached"
    health = (
        f"full ISR again after {final.get('seconds')} s"
        if final.get("healthy")
        else f"no full ISR within {final.get('seconds')} s: {final.get('partitions')}"
    )
    missing = final.get("missing") or []
    read = final.get("read", 0)
    reads = f"{read} final read{'' if read == 1 else 's'} ok" + (
        f", never read: {missing}" if missing else ""
    )
    recount = final.get("recount")
    return f"{health}; {reads}" + (f"; {recount_line(recount)}" if recount else "")


def _cluster(spec: dict[str, Any]) -> str:
    if spec.get("db") == "nats":
        servers = f"NATS {spec.get('nats_version', '?')}, {spec.get('brokers', '?')} servers"
        kv = spec.get("workload") == "kv"
        reads = f", kv reads: {spec.get('nats_kv_reads')}" if kv else ""
        return f"{servers}, sync {spec.get('nats_sync', '?')}{reads}"
    name = spec.get("kafka_config")
    profile = PROFILES.get(name) if isinstance(name, str) else None
    settings = ""
    if profile is not None:
        unclean = "with" if profile.unclean_leader_election else "no"
        flush = "every write fsynced" if profile.fsync_every_write else "fsync left to the OS"
        settings = (
            f": min.insync.replicas={profile.min_insync_replicas}, {unclean} unclean leader "
            f"election, {flush}"
        )
    return (
        f"Kafka {spec.get('kafka_version', '?')} on {spec.get('metadata', '?')}, "
        f"{spec.get('brokers', '?')} brokers, {name or '?'}{settings}"
    )


def write_report(
    folder: Path,
    test: dict[str, Any],
    results: dict[str, Any],
    drawings: dict[str, list[Path]],
    nemesis_invoked: Sequence[float] | None = None,
    unplotted: dict[str, str] | None = None,
) -> Path:
    """Takes a run folder, its test.json and results.json bodies, the counterexample
    drawings by key, the nemesis ops' invoke times from the history (None: estimated
    from results.json) and the plots left undrawn with nothing to show, each with why.
    Writes report.html there and returns its path."""
    spec = test.get("spec", {})
    word = run_verdict(results)
    stats = results.get("stats", {})
    summary = [
        (
            "operations",
            f"{stats.get('count', 0)}: {stats.get('ok', 0)} ok, "
            f"{stats.get('fail', 0)} fail, {stats.get('info', 0)} info",
        )
    ]
    for section in ("linearizable", "queue", "lost-acks", "groups", "share"):
        if section == "lost-acks" and isinstance(results.get("queue"), dict):
            continue  # its counts are the queue row's, and its verdict the queue's
        if isinstance(results.get(section), dict):
            summary.append((section, _section_summary(section, results[section])))
    if isinstance(results.get("replicas"), dict):
        summary.append(("replicas", replicas_line(results["replicas"])))
    summary.append(("final phase", _final(results.get("final", {}))))
    summary.append(("cluster", _cluster(spec)))
    summary += release_rows(results.get("release"))
    # An interruption is said by the explanation: its INCOMPLETE line, or a sentence.
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.name != "report.html")
    plots = "".join(_plot(folder, name, (unplotted or {}).get(name)) for name in RUN_PLOTS)
    colour = VERDICT_COLOURS[word]
    sentences = explanation_html(explain_points(results, spec))
    nemesis = story_table(results.get("nemesis", {}), nemesis_invoked, time_zero(test))
    page = f"""<!doctype html><html><head><meta charset="utf-8">
<title>{_e(spec.get("name", "run"))}: {word}</title><style>{STYLE}</style></head><body>
<h1>{_e(spec.get("name", "run"))} <span class="v" style="background:{colour}">{word}</span>
{zip_link(folder)}</h1>
{header_html(folder, test, results)}
<div id="explanation" style="border-color:{colour}">{sentences}</div>
{_table(summary)}
<h2 id="anomalies">Anomalies</h2>{_anomalies(results, drawings, folder)}
<h2>Plots</h2>{plots or "<p>No plot (no completed operation).</p>"}
{allowed_html(results)}
<h2 id="nemesis">Nemesis</h2>{nemesis}
{_recovery(results)}
{_queue(results, folder)}
{replicas_html(results)}
{groups_html(results, folder)}
<h2>Options</h2>{_table(sorted(spec.items()))}
<h2>Versions</h2>{_table(sorted(test.get("versions", {}).items()))}
<h2>Files</h2><ul>{"".join(f"<li>{_link(folder, p)}</li>" for p in files)}</ul>
</body></html>
"""
    path = folder / "report.html"
    path.write_text(page, encoding="utf-8")
    return path


def _plot(folder: Path, name: str, undrawn: str | None) -> str:
    if (folder / name).exists():
        return f'<h3>{name}</h3><img src="{name}" alt="{name}">'
    return f"<p>{name} not drawn: {_e(undrawn)}.</p>" if undrawn else ""


def recount_line(counted: dict[str, Any]) -> str:
    """Returns the line a person reads about the recount."""
    if not counted["complete"]:
        why = counted["errors"] or "see recount.json"
        return f"recount from the brokers' disks incomplete: {why}"
    line = (
        f"recount from the brokers' disks: {counted['acknowledged']} acknowledged, "
        f"{counted['lost']} lost"
    )
    if "agrees" in counted:
        line += (
            ", the same sends the checker found"
            if counted["agrees"]
            else f"; the checker found {counted['checker_lost']}: they DISAGREE (recount.json)"
        )
    if not counted["replicas_agree"]:
        line += "; a replica holds records the leader does not"
    return line
