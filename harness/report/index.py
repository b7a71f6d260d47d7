"""results/index.html: every run under a results directory, INVALID first, grouped by
configuration, with its verdict, Kafka release, counts and anomalies, links to its report
and zip, filters kept in the URL, paging, and the trend plots of the last `analyze`."""

from __future__ import annotations

import html
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from harness.report.index_glance import GLANCE_STYLE, glance_table, newest_first, newest_line
from harness.report.index_script import DEFAULT_PER_PAGE, OTHER_WORDS, PER_PAGE_CHOICES, script
from harness.report.page_markup import STYLE, VERDICT_COLOURS
from harness.report.plots.images import TREND_PLOTS
from harness.results import (
    LOST_ACKS_SECTIONS,
    RESULTS,
    RESULTS_SHAPE,
    TEST,
    TEST_SHAPE,
    list_runs,
    printable,
    read_shaped,
)
from harness.verdicts import DURATION, INCOMPLETE_WORD, run_verdict
from workloads.names import STORED_WORKLOADS

INDEX = "index.html"
FILTERS = ("verdict", "kafka", "metadata", "workload", "store", "nemesis", "config")
"""The row fields a select filters on; a nemesis filter matches every run with that fault."""
GROUP_BY = ("kafka", "metadata", "workload", "store", "nemesis", "config")
"""What makes runs comparable, as the analysis groups them."""
NO_VERDICT = "NONE"
RANK = {"INVALID": 0, "UNKNOWN": 1, INCOMPLETE_WORD: 2, "VALID": 3, NO_VERDICT: 4}
"""The order runs and groups are listed in: what needs a look first; a folder with no
verdict (a run still going, or broken) last."""
SET_CHECK_KINDS = {"unexpected_count": "unexpected", "duplicated_count": "duplicate"}
"""The lost-acks counts the anomalies cell names, by the queue checker's name for each
kind: a queue run's cell said "2 duplicated; 2 duplicate", one kind in two words."""
INDEX_STYLE = """
tr.run[hidden],details[hidden]{display:none}select,input{margin-right:1em}
body{max-width:none}.scroll{overflow-x:auto}details{margin:.4em 0}
summary{cursor:pointer;padding:.2em 0}td{white-space:nowrap}td:nth-child(7){white-space:normal;
min-width:14em}
summary .v,td.v a{color:#fff;padding:0 .4em;border-radius:.2em;font-weight:bold;
text-decoration:none}#count{font-size:1.2em;font-weight:bold}
a.v{color:#fff;padding:0 .4em;border-radius:.2em;font-weight:bold;text-decoration:none}
#glance caption{caption-side:bottom;text-align:left;font-size:.85em;color:#555}
"""


def _anomalies(results: dict[str, Any]) -> str:
    parts = []
    lin = results.get("linearizable") or {}
    failures = lin.get("failures") or []
    bad = sum(1 for f in failures if f.get("valid") is False)
    if bad:
        parts.append(f"{bad} key{'s' if bad != 1 else ''} not linearizable")
    unknown = len(failures) - bad
    if unknown:
        parts.append(f"{unknown} key{'s' if unknown != 1 else ''} unknown")
    queue = results.get("queue")
    judged = queue.get("kinds") if isinstance(queue, dict) else None
    for section in LOST_ACKS_SECTIONS:
        counts = results.get(section) or {}
        for field, kind in SET_CHECK_KINDS.items():
            # One name per kind: the queue checker's, which judged it where it ran.
            if counts.get(field) and not (isinstance(judged, dict) and kind in judged):
                parts.append(f"{counts[field]} {kind}")
    parts += _kinds(queue)
    if "error" in results:
        parts.append(f"error: {results['error']}")
    return "; ".join(parts)


def _kinds(queue: Any) -> list[str]:
    # The queue and transaction kinds found: those that make the run invalid first, the
    # ones Kafka allows or the run ignored after them, said so.
    kinds = queue.get("kinds") if isinstance(queue, dict) else None
    if not isinstance(kinds, dict):
        return []
    found = [
        (kind, about)
        for kind, about in sorted(kinds.items())
        if isinstance(about, dict) and isinstance(about.get("count"), int) and about["count"]
    ]
    following = _following(queue)  # after the lost writes they follow from, said so
    bad = [(kind, about) for kind, about in found if about.get("invalidating")]
    causes = [f"{about['count']} {kind}" for kind, about in bad if kind not in following]
    causes += [
        f"{about['count']} {kind} (from the loss)" for kind, about in bad if kind in following
    ]
    allowed = [f"{about['count']} {kind}" for kind, about in found if not about.get("invalidating")]
    return causes + ([f"allowed: {', '.join(allowed)}"] if allowed else [])


def _following(queue: dict[str, Any]) -> dict[str, str]:
    from checkers.queue import follows_from_loss  # a queue run's only

    try:
        return follows_from_loss(queue)
    except Exception:  # an older results.json's shape: its kinds are listed alike
        return {}


def _lost(results: dict[str, Any]) -> str:
    for section in LOST_ACKS_SECTIONS:
        counts = results.get(section)
        if isinstance(counts, dict) and "lost_count" in counts:
            return f"{counts['lost_count']} of {counts.get('ack_count', '?')}"
    return ""


def run_entry(root: Path, run: str, reason: str | None) -> dict[str, Any]:
    """Takes a results directory, a run id and why its folder cannot be read (None when
    it can). Returns what the index shows of that run."""
    folder = root / run
    entry = {
        "run": printable(run),
        "report": _report_link(folder, run),
        "zip": relative_url(f"{run}.zip"),
        **_config(folder),
    }
    results, problem = (None, reason) if reason else read_shaped(folder / RESULTS, RESULTS_SHAPE)
    if results is None:
        return entry | {"verdict": NO_VERDICT, "ops": "", "lost": "", "anomalies": problem}
    stats = results.get("stats") or {}
    ops = f"{stats['count']} ({stats.get('ok', 0)} ok)" if "count" in stats else ""
    verdict = run_verdict(results)
    stopped = results[DURATION].get("reason", "") if verdict == INCOMPLETE_WORD else ""
    return entry | {
        "verdict": verdict,
        "ops": ops,
        "lost": _lost(results),
        "anomalies": "; ".join(part for part in (stopped, _anomalies(results)) if part),
    }


def _config(folder: Path) -> dict[str, str]:
    # What ran, from test.json when it has the shape the index reads, else blanks; the
    # workload and nemesis named as the analysis names them.
    test, _ = read_shaped(folder / TEST, TEST_SHAPE)
    spec = (test or {}).get("spec") or {}
    versions = (test or {}).get("versions") or {}
    faults = [*(spec.get("nemesis") or [])]
    if spec.get("crash_clients") is not None:
        faults.append("crash-clients")
    return {
        "started": (test or {}).get("started") or "",
        # Runs from before KRaft record neither: they ran 3.9 on ZooKeeper.
        "kafka": spec.get("kafka_version") or versions.get("kafka") or "",
        "metadata": spec.get("metadata") or ("zookeeper" if test else ""),
        "workload": _workload(spec),
        "store": (spec.get("store") or "") if spec.get("workload") in STORED_WORKLOADS else "",
        "nemesis": ",".join(faults) or "none",
        "config": spec.get("kafka_config") or "",
    }


def _workload(spec: dict[str, Any]) -> str:
    # What a reader needs to tell runs apart: transactions and their client, and a consumer
    # group with its protocol (classic or KIP-848's consumer).
    words = [str(spec.get("workload") or "")]
    if spec.get("txn") is True:
        words += ["txn", "java"] if spec.get("client") == "java" else ["txn"]
    if spec.get("consumer_group") is True:
        words += ["group", str(spec.get("group_protocol") or "classic")]
    return "-".join(words)


def _report_link(folder: Path, run: str) -> str:
    return relative_url(f"{run}/report.html" if (folder / "report.html").is_file() else f"{run}/")


def relative_url(path: str) -> str:
    """Takes a relative path as the file system gave it. Returns it as a URL that can only
    be that path: `./` first and every byte but letters, digits, `/` and `_.-~`
    percent-encoded, so a folder named `javascript:alert(1)` or `//host` stays a folder,
    and a name that is not UTF-8 keeps its bytes."""
    return "./" + quote(path.encode("utf-8", "surrogateescape"), safe="/")


def _listed_order(entries: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    # INVALID first, then the verdicts that need a look; newest first within each (run
    # folders are named by their start time).
    return sorted(newest_first(entries), key=lambda e: RANK.get(e["verdict"], len(RANK)))


def group_runs(entries: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Takes run entries. Returns them grouped by configuration (GROUP_BY), each group in
    the listed order, the groups by their worst verdict and then their newest run."""
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for entry in _listed_order(entries):
        groups.setdefault(tuple(entry[k] for k in GROUP_BY), []).append(entry)
    # Each group's first entry is its worst and, among those, its newest: order by it.
    listed = _listed_order([g[0] for g in groups.values()])
    by_first = {id(g[0]): g for g in groups.values()}
    return [by_first[id(first)] for first in listed]


def count_line(entries: Sequence[dict[str, Any]]) -> str:
    """Takes run entries. Returns "3 of 10 INVALID, 1 INCOMPLETE", naming each other
    verdict that is not VALID when a run has it (the script says the same of the runs a
    filter shows)."""
    counts = {word: sum(1 for e in entries if e["verdict"] == word) for word in RANK}
    text = f"{counts['INVALID']} of {len(entries)} INVALID"
    return text + "".join(f", {counts[w]} {said}" for w, said in OTHER_WORDS if counts[w])


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _badge(word: str, inner: str, tag: str = "span") -> str:
    colour = VERDICT_COLOURS.get(word, "#7f7f7f")
    return f'<{tag} class="v" style="background:{colour}">{inner}</{tag}>'


def _row(entry: dict[str, Any], named: bool = False) -> str:
    # named: the run's test name is shown with its stamp (its group holds several tests).
    word = entry["verdict"]
    data = " ".join(f'data-{k}="{_e(entry[k])}"' for k in FILTERS)
    colour = VERDICT_COLOURS.get(word, "#7f7f7f")
    verdict = f'<td class="v"><a href="{_e(entry["report"])}" style="background:{colour}">'
    cells = [
        _e(entry["started"].replace("T", " ")[:19]),  # the offset is the machine's, not news
        _e(entry["kafka"]),
        _e(entry["metadata"]),
        _e(entry["ops"]),
        _e(entry["lost"]),
        _e(entry["anomalies"]),
        f'<a href="{_e(entry["report"])}" title="{_e(entry["run"])}">'
        f"{_e(entry['run'] if named else entry['run'].rsplit('/', 1)[-1])}</a>",
        f'<a href="{_e(entry["zip"])}" download>zip</a>',
    ]
    return (
        f'<tr class="run" {data}>{verdict}{_e(word)}</a></td>'
        + "".join(f"<td>{c}</td>" for c in cells)
        + "</tr>"
    )


HEAD = ("verdict", "started", "Kafka", "metadata", "ops", "lost", "anomalies", "run", "files")
"""The columns; the workload, store, nemesis and kafka config are the group's, in its heading."""


def _group(entries: Sequence[dict[str, Any]]) -> str:
    first = entries[0]
    what = " · ".join(_e(first[k]) for k in GROUP_BY if first[k])
    # Open when a run of it needs a look; a group of VALID runs is one line until asked.
    opened = " open" if first["verdict"] != "VALID" else ""
    head = "<tr>" + "".join(f"<th>{h}</th>" for h in HEAD) + "</tr>"
    # A configuration run under one test name: its stamp says which run; under several
    # (a hunt's and a plain run's), the name too.
    named = len({e["run"].rsplit("/", 1)[0] for e in entries}) > 1
    return (
        f"<details class=group{opened}><summary>{_badge(first['verdict'], first['verdict'])} "
        f"{what}: {_e(count_line(entries))} (<span class=shown>{len(entries)}</span> shown)"
        f'</summary><div class="scroll"><table>{head}'
        + "".join(_row(e, named) for e in entries)
        + "</table></div></details>"
    )


def _select(name: str, entries: Sequence[dict[str, Any]]) -> str:
    found = {e[name] for e in entries}
    if name == "nemesis":  # one option per fault: a run with several matches each
        found = {fault for e in entries for fault in e[name].split(",")}
    values = sorted(found, key=lambda v: (RANK.get(v, len(RANK)), v))
    options = "".join(f'<option value="{_e(v)}">{_e(v)}</option>' for v in values)
    select = f'<select data-filter="{name}"><option value="">all</option>{options}</select>'
    return f"<label>{name} {select}</label>"


def _controls(entries: Sequence[dict[str, Any]]) -> str:
    filters = "".join(_select(name, entries) for name in FILTERS)
    search = '<label>search <input id="q" type="search" size="12"></label>'
    per = "".join(
        f"<option{' selected' if c == DEFAULT_PER_PAGE else ''}>{c}</option>"
        for c in PER_PAGE_CHOICES
    )
    pager = (
        '<button id="prev" type="button">previous</button> <span id="page">page 1 of 1</span> '
        f'<button id="next" type="button">next</button> <label>runs a page <select id="per">'
        f'{per}</select></label> <button id="open" type="button">open all</button> '
        '<button id="shut" type="button">close all</button>'
    )
    return f"<p>{filters}{search}</p><p>{pager}</p>"


def _trends(root: Path, analysis: Path | None) -> str:
    if analysis is None or not analysis.is_dir():
        return "<p>No analysis yet: run <code>python -m harness analyze</code>.</p>"
    rel = Path(os.path.relpath(analysis.resolve(), root.resolve())).as_posix()
    drawn = [path.name for pattern in TREND_PLOTS for path in sorted(analysis.glob(pattern))]
    plots = [f'<img src="{_e(relative_url(f"{rel}/{name}"))}" alt="{_e(name)}">' for name in drawn]
    summary = (
        f'<p><a href="{_e(relative_url(f"{rel}/summary.md"))}">summary.md</a></p>'
        if (analysis / "summary.md").is_file()
        else ""
    )
    if summary and not plots:
        return summary + "<p>No trend plot (summary.md says why).</p>"
    return summary + "".join(plots)


def render_index(root: Path, entries: Sequence[dict[str, Any]], analysis: Path | None) -> str:
    """Takes a results directory, its run entries and the analysis folder. Returns
    index.html's text."""
    groups = "".join(_group(g) for g in group_runs(entries))
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>Runs</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,"><style>{STYLE}{INDEX_STYLE}{GLANCE_STYLE}</style></head><body>
<h1>Runs</h1><p id="count">{_e(count_line(entries))}</p>
{newest_line(entries)}{glance_table(entries, RANK)}
<p>Below, every run: INVALID first, then newest first; grouped by configuration and
release. Filters, search and page are kept in the address, so a reload or a link shows the
same runs. <code>harness serve</code> makes each run's zip.</p>{_controls(entries)}
<p id="none" hidden>No run matches these filters.</p>
<div id="groups">{groups}</div>
<h2>Trends</h2>{_trends(root, analysis)}
<script>{script()}</script></body></html>
"""


def write_index(results_dir: Path, analysis: Path | None = None) -> Path:
    """Takes a results directory (and the folder of its last analysis; default
    results_dir/analysis). Writes results_dir/index.html and returns its path."""
    root = Path(results_dir)
    analysis = analysis if analysis is not None else root / "analysis"
    listing = list_runs(root, skip=analysis)
    runs: list[tuple[str, str | None]] = [(run, None) for run in listing.complete]
    runs += [(broken.run, broken.reason) for broken in listing.broken]
    entries = [run_entry(root, run, reason) for run, reason in runs]
    path = root / INDEX
    tmp = path.with_name(INDEX + ".tmp")
    tmp.write_text(render_index(root, entries, analysis), encoding="utf-8")
    tmp.replace(path)
    return path
