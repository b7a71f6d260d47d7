"""The trend plots of `analyze`: invalid rate and lost writes per configuration over time,
and the ok ops' latency quantiles per nemesis over time. Inputs are small collected rows."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # no display here; must precede pyplot
import matplotlib.pyplot as plt
from matplotlib.axes import Axes

Row = dict[str, Any]


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
    if series:
        ax.legend(fontsize=6, loc="best")
    else:
        ax.text(0.5, 0.5, "no data", transform=ax.transAxes, ha="center")


def _save(fig: Any, path: Path) -> Path:
    fig.autofmt_xdate()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def config_trends(rows: Sequence[Row], out: Path) -> list[Path]:
    """Takes rows of (configuration, day, invalid_rate, lost_mean). Draws invalid-rate.png
    and lost-writes.png into out; returns their paths."""
    written = []
    for value, name, title in (
        ("invalid_rate", "invalid-rate.png", "invalid rate per configuration (runs of the day)"),
        ("lost_mean", "lost-writes.png", "lost acknowledged writes per run (mean of the day)"),
    ):
        fig, ax = plt.subplots(figsize=(9, 4))
        _lines(ax, rows, config_label, value, title)
        written.append(_save(fig, out / name))
    return written


def latency_trends(rows: Sequence[Row], out: Path) -> Path:
    """Takes rows of (nemesis, day, p50_ms, p95_ms, p99_ms). Draws latency.png (one panel
    per quantile) into out; returns its path."""
    fig, axes = plt.subplots(1, 3, figsize=(12, 4), sharex=True)
    for ax, q in zip(axes, ("p50_ms", "p95_ms", "p99_ms"), strict=True):
        _lines(ax, rows, lambda r: str(r["nemesis"]), q, f"ok latency {q[:3]} (ms) per nemesis")
    return _save(fig, out / "latency.png")
