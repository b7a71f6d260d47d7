"""summary.md: the analysis in a page a person reads, from the small collected tables."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness.pipeline.trend_plots import (
    MIN_DAYS,
    Trends,
    cluster_label,
    config_label,
    test_label,
)
from harness.report.plots.images import IMAGE

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
            "invalid rate (95% CI)": _rate(r),
        }
        for r in aggregates
    ]


def _rate(row: Row) -> str:
    # No rate for a configuration whose every run was incomplete.
    if row["invalid_rate"] is None:
        return "n/a"
    return (
        f"{row['invalid_rate']:.2f} ({row['invalid_rate_low']:.2f}-{row['invalid_rate_high']:.2f})"
    )


def _windows(figures: Sequence[Row]) -> list[Row]:
    return [{"configuration": config_label(r), **r} for r in figures]


def render(
    runs: int,
    aggregates: Sequence[Row],
    figures: Sequence[Row],
    recovery: Sequence[Row],
    broken: Sequence[Row],
    about_runs: Sequence[str],
    trends: Trends,
) -> str:
    """Takes the count of runs analysed, the aggregates, the fault-window figures, the
    recovery figures (harness.pipeline.recovery), the broken runs, the sections on single
    runs (harness.pipeline.run_links) and the trend plots drawn. Returns summary.md's
    text."""
    invalid = sum(r["invalid"] for r in aggregates)
    incomplete = sum(r.get("incomplete") or 0 for r in aggregates)
    lines = [
        "# Analysis of the runs",
        "",
        f"{runs} runs analysed in {len(aggregates)} configurations; {invalid} invalid; "
        + (f"{incomplete} incomplete (left out of the rates); " if incomplete else "")
        + f"{len(broken)} run folders left out (listed below).",
        "",
        *about_runs,
        "## Per configuration",
        "",
        *markdown_table(
            _configs(aggregates),
            (
                "configuration",
                "runs",
                "invalid",
                "unknown",
                "incomplete",
                "invalid rate (95% CI)",
                "lost_mean",
                "lost_max",
            ),
        ),
        "",
        "Lost: acknowledged writes absent from the final reads, per run (blank: the workload",
        "does not count them).",
        "",
        *latency_by_workload(aggregates),
        *side_by_side(aggregates, figures, recovery),
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
        *trend_lines(trends),
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


def latency_by_workload(aggregates: Sequence[Row]) -> list[str]:
    """Takes the aggregates. Returns a latency table per workload, a row per cluster and
    test: a queue's sends and a kv store's reads are not one population."""
    lines = ["## Latency per workload", ""]
    for workload in sorted({str(r["workload"]) for r in aggregates}):
        rows = [
            {"cluster": cluster_label(r), "test": test_label(r), **r}
            for r in aggregates
            if str(r["workload"]) == workload
        ]
        columns = ("cluster", "test", "runs", "p50_ms", "p95_ms", "p99_ms")
        lines += [f"### {workload}", "", *markdown_table(rows, columns), ""]
    if len(lines) == 2:
        return []
    return [*lines, "Latencies of ok ops (ms), over the runs of a row that count in the rates.", ""]


def trend_lines(trends: Trends) -> list[str]:
    """Takes the trend plots drawn. Returns their images, or why there are none."""
    if trends.plots:
        return [f"![{name.removesuffix(IMAGE)}]({name})" for name in trends.plots]
    if not trends.days:
        return ["No trend plot: no run counts in the rates."]
    days = ", ".join(str(day) for day in trends.days)
    return [
        f"No trend plot: the runs that count in the rates all started on {days}; a trend "
        f"needs runs of at least {MIN_DAYS} days."
    ]


SIDE_TEST = ("workload", "store", "nemesis")
"""A row of the side-by-side table: what ran, apart from the system and its config."""


def _side_column(row: Row) -> str:
    """Returns a side-by-side column: the cluster and its config, e.g. 4.4.0-kraft safe
    or 2.12.1-nats always (a NATS run's config is its sync profile)."""
    return f"{cluster_label(row)} {row['kafka_config']}"


def _outcome(row: Row, inside: Row | None, recovered: Row | None) -> str:
    """Returns one cell: verdicts, writes lost of those acknowledged, non-linearizable
    keys, service while its fault was in force, the first ok op after each heal, and
    throughput outside the faults."""
    text = f"{row['runs']} runs: {row['invalid']} invalid, {row['unknown']} unknown"
    if row.get("incomplete"):
        text += f" ({row['incomplete']} incomplete apart)"
    if row.get("lost_total") is not None:
        acked = row.get("acknowledged_total")
        text += f"; {row['lost_total']}" + (f"/{acked}" if acked is not None else "") + " lost"
    if row.get("nonlinearizable_keys"):
        text += f"; {row['nonlinearizable_keys']} non-linearizable keys"
    if inside is not None and None not in (inside["ok_per_s_inside"], inside["error_rate_inside"]):
        text += (
            f"; in faults {inside['ok_per_s_inside']:g} ok/s, "
            f"{100 * inside['error_rate_inside']:.0f}% errors"
        )
    if recovered is not None:
        text += "; " + _after_heal(recovered)
    if inside is not None and inside.get("ok_per_s_outside") is not None:
        text += f"; outside faults {inside['ok_per_s_outside']:g} ok/s"
    return text


def _after_heal(recovered: Row) -> str:
    """Returns the first ok op after each heal: median and worst over the fault windows,
    and how many windows had none before the run ended."""
    median, worst = recovered.get("after_heal_s_median"), recovered.get("after_heal_s_worst")
    never = recovered.get("after_heal_s_never") or 0
    if median is None:
        return f"no ok op after any of {never} heals"
    text = f"first ok op {median:g} s after the heal (worst {worst:g} s"
    return text + (f", none after {never})" if never else ")")


def side_by_side(
    aggregates: Sequence[Row], figures: Sequence[Row], recovery: Sequence[Row] = ()
) -> list[str]:
    """Takes the aggregates, fault-window figures and recovery figures. Returns a table
    with a row per test (workload, store, fault) and a column per cluster and config (a
    Kafka release, metadata mode and profile; a NATS release and sync profile), or
    nothing when the runs are all of one column."""
    columns = sorted({_side_column(r) for r in aggregates})
    if len(columns) < 2:
        return []

    def key(row: Row) -> tuple[Any, ...]:
        return (_side_column(row), *(row[k] for k in SIDE_TEST))

    inside = {key(f): f for f in figures if f["fault"] == f["nemesis"]}
    recovered = {key(r): r for r in recovery if r["fault"] == r["nemesis"]}
    cells: dict[tuple[Any, ...], Row] = {}
    for r in aggregates:
        test = tuple(r[k] for k in SIDE_TEST)
        row = cells.setdefault(test, {"test": "/".join(map(str, test))})
        row[_side_column(r)] = _outcome(r, inside.get(key(r)), recovered.get(key(r)))
    rows = [cells[t] for t in sorted(cells, key=lambda t: tuple(map(str, t)))]
    return [
        "## Side by side",
        "",
        *markdown_table(rows, ("test", *columns)),
        "",
        "Lost: acknowledged writes absent from the final reads, over all runs, of those",
        "acknowledged. In faults: ok ops per second and the share of completions that were",
        "not ok while the test's one fault was in force (blank for a test of several",
        "faults). After the heal: the time from each heal to the first ok op on the partition",
        "or stream the fault took (recovery.csv), median and worst over the windows. Outside",
        "faults: ok ops per second outside every fault window.",
        "",
    ]
