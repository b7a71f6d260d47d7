"""The trend plots of `analyze`: invalid rate and lost writes per configuration over days,
and per workload the ok ops' latency quantiles per nemesis; none with under two days."""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # no display here; must precede pyplot
import matplotlib.dates as mdates
import matplotlib.pyplot as plt
from matplotlib.axes import Axes

from harness.report.plots.images import FIG_WIDTH, SMALL_FONT, TREND_PLOTS, save_figure

Row = dict[str, Any]
INVALID_RATE, LOST_WRITES, LATENCY = TREND_PLOTS
MIN_DAYS = 2
"""A trend joins the figures of days: with one day there is only a dot per series."""
DAY_TICKS = 8
OLD_PLOTS = ("latency.png", "invalid-rate.png", "lost-writes.png", "latency-*.png")
"""Written by older analyses (latency mixed over workloads, then PNG images): removed,
never shown again."""


TEST = ("workload", "store", "nemesis", "kafka_config")
"""What a test ran, apart from the cluster it ran on."""


def cluster_label(row: Row) -> str:
    """Returns the cluster a configuration ran on, e.g. 3.9.1-zookeeper."""
    return f"{row['kafka_version']}-{row['metadata']}"


def test_label(row: Row) -> str:
    """Returns what a configuration ran, e.g. kv/linearizable/kill-leader/safe."""
    return "/".join(str(row[k]) for k in TEST)


def config_label(row: Row) -> str:
    """Returns a configuration's short name, e.g.
    3.9.1-zookeeper/kv/linearizable/kill-leader/safe."""
    return f"{cluster_label(row)}/{test_label(row)}"


def latency_file(workload: str) -> str:
    """Returns the name of a workload's latency plot, e.g. latency-kv.svg (a character
    a file name or a URL would read otherwise as `_`)."""
    return LATENCY.replace("*", re.sub(r"[^A-Za-z0-9._-]", "_", workload))


@dataclass(frozen=True, slots=True)
class Trends:
    """The days the rated runs started on, and the plots drawn (file names, in order)."""

    days: list[datetime.date]
    plots: list[str]


def _lines(
    ax: Axes, rows: Sequence[Row], label: Callable[[Row], str], value: str, title: str
) -> None:
    series: dict[str, list[tuple[Any, float]]] = {}
    for row in rows:
        if row.get(value) is not None and row.get("day") is not None:
            series.setdefault(label(row), []).append((row["day"], float(row[value])))
    for name, points in sorted(series.items()):
        points.sort()
        ax.plot([d for d, _ in points], [v for _, v in points], marker="o", ms=3, label=name)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    _day_axis(ax, days_of(rows))
    if series:
        ax.legend(fontsize=SMALL_FONT, loc="best")
    else:
        ax.text(0.5, 0.5, "no data", transform=ax.transAxes, ha="center")


def _day_axis(ax: Axes, days: Sequence[datetime.date]) -> None:
    # A point is a day: at most DAY_TICKS ticks, on whole days, named by date (matplotlib's
    # own choice names hours), and half a day of margin so the first and last show.
    if not days:
        return
    every = max(1, -(-((days[-1] - days[0]).days + 1) // DAY_TICKS))
    ax.xaxis.set_major_locator(mdates.DayLocator(interval=every))  # type: ignore[no-untyped-call]
    ax.xaxis.set_major_formatter(mdates.DateFormatter("%Y-%m-%d"))  # type: ignore[no-untyped-call]
    # (As datetimes: a date less 12 hours is the same date.)
    first, last = (datetime.datetime.combine(d, datetime.time()) for d in (days[0], days[-1]))
    half = datetime.timedelta(hours=12)
    ax.set_xlim(first - half, last + half)  # type: ignore[arg-type]


def _save(fig: Any, path: Path) -> str:
    fig.autofmt_xdate()
    return save_figure(fig, path, tight=True).name


def days_of(rows: Iterable[Row]) -> list[datetime.date]:
    """Takes rows with a `day`. Returns the distinct days, in order."""
    return sorted({row["day"] for row in rows if row.get("day") is not None})


def remove_plots(out: Path) -> None:
    """Removes the trend plots an earlier analysis left in out, so that none is shown
    beside figures it was not drawn from."""
    for pattern in (*TREND_PLOTS, *OLD_PLOTS):
        for path in out.glob(pattern):
            path.unlink(missing_ok=True)


def draw(by_config: Sequence[Row], by_workload: Sequence[Row], out: Path) -> Trends:
    """Takes rows of (configuration, day, invalid_rate, lost_mean) and of (workload,
    nemesis, day, p50_ms, p95_ms, p99_ms). Removes the older plots, then, when the runs
    span at least MIN_DAYS days, draws the invalid rate, the lost writes and a latency
    plot per workload into out. Returns the days and the plots drawn."""
    remove_plots(out)
    days = days_of(by_config)
    if len(days) < MIN_DAYS:
        return Trends(days, [])
    plots = config_trends(by_config, out)
    workloads = sorted({str(r["workload"]) for r in by_workload})
    plots += [
        latency_trends([r for r in by_workload if r["workload"] == w], w, out) for w in workloads
    ]
    return Trends(days, plots)


def config_trends(rows: Sequence[Row], out: Path) -> list[str]:
    """Takes rows of (configuration, day, invalid_rate, lost_mean). Draws INVALID_RATE
    and LOST_WRITES into out; returns their names."""
    written = []
    for value, name, title in (
        ("invalid_rate", INVALID_RATE, "invalid rate per configuration (runs of the day)"),
        ("lost_mean", LOST_WRITES, "lost acknowledged writes per run (mean of the day)"),
    ):
        fig, ax = plt.subplots(figsize=(FIG_WIDTH, 4))
        _lines(ax, rows, config_label, value, title)
        written.append(_save(fig, out / name))
    return written


def latency_trends(rows: Sequence[Row], workload: str, out: Path) -> str:
    """Takes one workload's rows of (nemesis, day, p50_ms, p95_ms, p99_ms). Draws its
    latency plot (one panel per quantile, a line per nemesis) into out; returns its name."""
    fig, axes = plt.subplots(3, 1, figsize=(FIG_WIDTH, 9), sharex=True)
    for ax, q in zip(axes, ("p50_ms", "p95_ms", "p99_ms"), strict=True):
        title = f"{workload}: ok latency {q[:3]} (ms) per nemesis"
        _lines(ax, rows, lambda r: str(r["nemesis"]), q, title)
    return _save(fig, out / latency_file(workload))
