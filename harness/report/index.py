"""results/index.html: every run under a results directory, newest first, with its
verdict, counts, lost writes and anomalies, a link to its report, filters by workload,
nemesis and verdict, and the trend plots of the last `analyze` when there are any.
"""

from __future__ import annotations

import html
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from harness.report.page import STYLE, VERDICT_COLOURS
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
from harness.verdicts import verdict_word

INDEX = "index.html"
TREND_PLOTS = ("invalid-rate.png", "lost-writes.png", "latency.png")
FILTERS = ("workload", "nemesis", "verdict")
SCRIPT = """
function applyFilters(){
  const chosen={};
  document.querySelectorAll('select[data-filter]').forEach(s=>{chosen[s.dataset.filter]=s.value;});
  let shown=0;
  document.querySelectorAll('tr.run').forEach(r=>{
    const ok=Object.keys(chosen).every(k=>!chosen[k]||r.dataset[k]===chosen[k]);
    r.hidden=!ok; if(ok){shown++;}
  });
  document.getElementById('shown').textContent=shown;
}
document.querySelectorAll('select[data-filter]').forEach(s=>s.addEventListener('change',applyFilters));
"""
INDEX_STYLE = "tr.run[hidden]{display:none}select{margin-right:1em}"


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
    for section in LOST_ACKS_SECTIONS:
        counts = results.get(section) or {}
        for kind in ("unexpected", "duplicated"):
            if counts.get(f"{kind}_count"):
                parts.append(f"{counts[f'{kind}_count']} {kind}")
    if "error" in results:
        parts.append(f"error: {results['error']}")
    return "; ".join(parts)


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
    entry = {"run": printable(run), "report": _report_link(folder, run), **_config(folder)}
    results, problem = (None, reason) if reason else read_shaped(folder / RESULTS, RESULTS_SHAPE)
    if results is None:
        return entry | {"verdict": "NONE", "ops": "", "lost": "", "anomalies": problem}
    stats = results.get("stats") or {}
    ops = f"{stats['count']} ({stats.get('ok', 0)} ok)" if "count" in stats else ""
    return entry | {
        "verdict": verdict_word(results["valid"]),
        "ops": ops,
        "lost": _lost(results),
        "anomalies": _anomalies(results),
    }


def _config(folder: Path) -> dict[str, str]:
    # What ran, from test.json when it has the shape the index reads, else blanks.
    test, _ = read_shaped(folder / TEST, TEST_SHAPE)
    spec = test["spec"] if test else {}
    return {
        "started": (test or {}).get("started") or "",
        "workload": spec.get("workload") or "",
        "store": spec.get("store") or "",
        "nemesis": ",".join(spec.get("nemesis") or []) or "none",
        "kafka_config": spec.get("kafka_config") or "",
    }


def _report_link(folder: Path, run: str) -> str:
    return relative_url(f"{run}/report.html" if (folder / "report.html").is_file() else f"{run}/")


def relative_url(path: str) -> str:
    """Takes a relative path as the file system gave it. Returns it as a URL that can only
    be that path: `./` first and every byte but letters, digits, `/` and `_.-~`
    percent-encoded, so a folder named `javascript:alert(1)` or `//host` stays a folder,
    and a name that is not UTF-8 keeps its bytes."""
    return "./" + quote(path.encode("utf-8", "surrogateescape"), safe="/")


def _newest_first(runs: Sequence[tuple[str, str | None]]) -> list[tuple[str, str | None]]:
    # Run folders are named by their start time, so the name orders them.
    return sorted(runs, key=lambda r: (r[0].split("/", 1)[1], r[0]), reverse=True)


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _row(entry: dict[str, Any]) -> str:
    word = entry["verdict"]
    colour = VERDICT_COLOURS.get(word, "#7f7f7f")
    data = " ".join(f'data-{k}="{_e(entry[k])}"' for k in FILTERS)
    cells = [
        f'<a href="{_e(entry["report"])}">{_e(entry["run"])}</a>',
        _e(entry["started"]),
        _e(entry["workload"]),
        _e(entry["store"]),
        _e(entry["nemesis"]),
        _e(entry["kafka_config"]),
        f'<b style="color:{colour}">{_e(word)}</b>',
        _e(entry["ops"]),
        _e(entry["lost"]),
        _e(entry["anomalies"]),
    ]
    return f'<tr class="run" {data}>' + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"


def _select(name: str, entries: Sequence[dict[str, Any]]) -> str:
    values = sorted({e[name] for e in entries})
    options = "".join(f'<option value="{_e(v)}">{_e(v)}</option>' for v in values)
    select = f'<select data-filter="{name}"><option value="">all</option>{options}</select>'
    return f"<label>{name} {select}</label>"


def _trends(root: Path, analysis: Path | None) -> str:
    if analysis is None or not analysis.is_dir():
        return "<p>No analysis yet: run <code>python -m harness analyze</code>.</p>"
    rel = Path(os.path.relpath(analysis.resolve(), root.resolve())).as_posix()
    plots = [
        f'<img src="{_e(relative_url(f"{rel}/{name}"))}" alt="{name}">'
        for name in TREND_PLOTS
        if (analysis / name).is_file()
    ]
    summary = (
        f'<p><a href="{_e(relative_url(f"{rel}/summary.md"))}">summary.md</a></p>'
        if (analysis / "summary.md").is_file()
        else ""
    )
    return summary + "".join(plots)


def render_index(root: Path, entries: Sequence[dict[str, Any]], analysis: Path | None) -> str:
    """Takes a results directory, its run entries (newest first) and the analysis folder.
    Returns index.html's text."""
    head: tuple[str, ...] = ("run", "started", "workload", "store", "nemesis", "kafka config")
    head += ("verdict", "ops", "lost", "anomalies")
    table = "<tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>"
    table += "".join(_row(e) for e in entries)
    filters = "".join(_select(name, entries) for name in FILTERS)
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>Runs</title>
<link rel="icon" href="data:,"><style>{STYLE}{INDEX_STYLE}</style></head><body>
<h1>Runs</h1><p><span id="shown">{len(entries)}</span> of {len(entries)} runs shown,
newest first.</p><p>{filters}</p><table>{table}</table>
<h2>Trends</h2>{_trends(root, analysis)}
<script>{SCRIPT}</script></body></html>
"""


def write_index(results_dir: Path, analysis: Path | None = None) -> Path:
    """Takes a results directory (and the folder of its last analysis; default
    results_dir/analysis). Writes results_dir/index.html and returns its path."""
    root = Path(results_dir)
    analysis = analysis if analysis is not None else root / "analysis"
    listing = list_runs(root, skip=analysis)
    runs: list[tuple[str, str | None]] = [(run, None) for run in listing.complete]
    runs += [(broken.run, broken.reason) for broken in listing.broken]
    entries = [run_entry(root, run, reason) for run, reason in _newest_first(runs)]
    path = root / INDEX
    tmp = path.with_name(INDEX + ".tmp")
    tmp.write_text(render_index(root, entries, analysis), encoding="utf-8")
    tmp.replace(path)
    return path
