"""report.html: the one page a person reads first, with the verdict, the options, the
plots, each counterexample, the nemesis timeline and links to every file of the run.
Each section's HTML is made by its own module; this one puts them in order.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from harness.report.anomalies_section import allowed_html, anomalies_html
from harness.report.explain import explain_points, explanation_html
from harness.report.groups_section import groups_html
from harness.report.header import header_html
from harness.report.nemesis_table import story_table, time_zero
from harness.report.page_markup import STYLE, VERDICT_COLOURS, escaped, html_table
from harness.report.plots.images import RUN_PLOTS
from harness.report.queue_section import queue_html
from harness.report.recovery_section import RECOVERY_STYLE, recovery_html
from harness.report.replicas_section import replicas_html
from harness.report.summary_table import summary_rows
from harness.report.zip_link import zip_link
from harness.verdicts import run_verdict


def _link(folder: Path, path: Path) -> str:
    rel = path.relative_to(folder).as_posix()
    return f'<a href="{html.escape(quote(rel))}">{html.escape(rel)}</a>'


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
    summary = summary_rows(results, spec)
    # An interruption is said by the explanation: its INCOMPLETE line, or a sentence.
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.name != "report.html")
    plots = "".join(_plot(folder, name, (unplotted or {}).get(name)) for name in RUN_PLOTS)
    colour = VERDICT_COLOURS[word]
    sentences = explanation_html(explain_points(results, spec))
    nemesis = story_table(results.get("nemesis", {}), nemesis_invoked, time_zero(test))
    style = STYLE + RECOVERY_STYLE
    page = f"""<!doctype html><html><head><meta charset="utf-8">
<title>{escaped(spec.get("name", "run"))}: {word}</title><style>{style}</style></head><body>
<h1>{escaped(spec.get("name", "run"))} <span class="v" style="background:{colour}">{word}</span>
{zip_link(folder)}</h1>
{header_html(folder, test, results)}
<div id="explanation" style="border-color:{colour}">{sentences}</div>
{html_table(summary)}
<h2 id="anomalies">Anomalies</h2>{anomalies_html(results, drawings, folder)}
<h2>Plots</h2>{plots or "<p>No plot (no completed operation).</p>"}
{allowed_html(results)}
<h2 id="nemesis">Nemesis</h2>{nemesis}
{recovery_html(results)}
{queue_html(results, folder)}
{replicas_html(results)}
{groups_html(results, folder)}
<h2>Options</h2>{html_table(sorted(spec.items()))}
<h2>Versions</h2>{html_table(sorted(test.get("versions", {}).items()))}
<h2>Files</h2><ul>{"".join(f"<li>{_link(folder, p)}</li>" for p in files)}</ul>
</body></html>
"""
    path = folder / "report.html"
    path.write_text(page, encoding="utf-8")
    return path


def _plot(folder: Path, name: str, undrawn: str | None) -> str:
    if (folder / name).exists():
        return f'<h3>{name}</h3><img src="{name}" alt="{name}">'
    return f"<p>{name} not drawn: {escaped(undrawn)}.</p>" if undrawn else ""
