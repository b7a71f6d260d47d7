"""summary.md: the analysis in a page a person reads, from the small collected tables."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness.pipeline.trend_plots import config_label

Row = dict[str, Any]
BROKEN_SHOWN = 50


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:g}"
    return str(value).replace("|", "\\|")


def markdown_table(rows: Sequence[Row], columns: Sequence[str]) -> list[str]:
    """Takes rows and the columns to show. Returns a Markdown table's lines."""
    lines = ["| " + " | ".join(columns) + " |", "|" + " --- |" * len(columns)]
    lines += ["| " + " | ".join(_cell(r.get(c)) for c in columns) + " |" for r in rows]
    return lines


def _configs(aggregates: Sequence[Row]) -> list[Row]:
    return [
        {
            "configuration": config_label(r),
            **r,
            "invalid rate (95% CI)": f"{r['invalid_rate']:.2f} "
            f"({r['invalid_rate_low']:.2f}-{r['invalid_rate_high']:.2f})",
        }
        for r in aggregates
    ]


def _windows(figures: Sequence[Row]) -> list[Row]:
    return [{"configuration": config_label(r), **r} for r in figures]


def render(
    runs: int, aggregates: Sequence[Row], figures: Sequence[Row], broken: Sequence[Row]
) -> str:
    """Takes the count of runs analysed, the aggregates, the fault-window figures and the
    broken runs. Returns summary.md's text."""
    invalid = sum(r["invalid"] for r in aggregates)
    lines = [
        "# Analysis of the runs",
        "",
        f"{runs} runs analysed in {len(aggregates)} configurations; {invalid} invalid; "
        f"{len(broken)} run folders left out (listed below).",
        "",
        "## Per configuration",
        "",
        *markdown_table(
            _configs(aggregates),
            (
                "configuration",
                "runs",
                "invalid",
                "unknown",
                "invalid rate (95% CI)",
                "lost_mean",
                "lost_max",
                "p50_ms",
                "p95_ms",
                "p99_ms",
            ),
        ),
        "",
        "Lost: acknowledged writes absent from the final reads, per run (blank: the workload",
        "does not count them). Latencies are of ok ops, over every run of the configuration.",
        "",
        "## Inside fault windows against outside",
        "",
        *markdown_table(
            _windows(figures),
            (
                "configuration",
                "fault",
                "windows",
                "seconds_inside",
                "ok_per_s_inside",
                "error_rate_inside",
                "ok_per_s_outside",
                "error_rate_outside",
            ),
        ),
        "",
        "## Trends",
        "",
        "![invalid rate](invalid-rate.png)",
        "![lost writes](lost-writes.png)",
        "![latency](latency.png)",
        "",
        "## Run folders left out",
        "",
    ]
    if not broken:
        lines.append("None.")
    lines += [f"- `{b['run']}`: {b['reason']}" for b in broken[:BROKEN_SHOWN]]
    if len(broken) > BROKEN_SHOWN:
        lines.append(f"- ... and {len(broken) - BROKEN_SHOWN} more (broken.csv)")
    return "\n".join(lines) + "\n"
