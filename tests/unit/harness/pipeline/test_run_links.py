"""summary.md's sections on single runs (harness.pipeline.run_links) and on trends
(harness.pipeline.summary, trend_plots), from rows as the analysis collects them: no Spark."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import pytest

from harness.pipeline import run_links, trend_plots
from harness.pipeline.run_links import Previous, new_section, read_previous, write_previous
from harness.pipeline.summary import latency_by_workload, trend_lines
from harness.pipeline.trend_plots import Trends

CONFIG = {
    "kafka_version": "3.9.1",
    "metadata": "zookeeper",
    "workload": "kv",
    "store": "linearizable",
    "nemesis": "kill-leader",
    "kafka_config": "safe",
}


def run(name: str, verdict: str = "VALID", **fields: Any) -> dict[str, Any]:
    return {"run": name, "verdict": verdict, **CONFIG, **fields}


RUNS = [
    run("kv/20261125T100000"),
    run("kv/20261126T100000", "INVALID", nonlinearizable_keys=2),
    run("queue/20261126T090000", "INVALID", lost=3, anomalies="G1a:1", workload="queue"),
    run("kv/20261126T110000", "INCOMPLETE"),
]
NOW = datetime.datetime(2026, 11, 26, 12, 0, 5, tzinfo=datetime.UTC)


def test_the_record_of_the_last_analysis_round_trips(tmp_path: Path) -> None:
    assert read_previous(tmp_path) is None
    write_previous(tmp_path, RUNS[:2], NOW)
    assert read_previous(tmp_path) == Previous(
        "2026-11-26T12:00:05Z", frozenset({"kv/20261125T100000", "kv/20261126T100000"})
    )
    assert [p.name for p in tmp_path.iterdir()] == [run_links.STATE]
    # A record that cannot be read is no record: every run is taken as seen first now.
    for body in ("{", '{"at": 1}', "[]", '{"at": "x", "runs": 5}'):
        (tmp_path / run_links.STATE).write_text(body)
        assert read_previous(tmp_path) is None, body


def test_the_first_analysis_says_so() -> None:
    lines = new_section(RUNS, None, Path("results"), Path("results/analysis"))
    assert lines[0] == "## New since the last analysis"
    assert lines[2].startswith("First analysis of this output folder (no last-analysis.json")
    assert not [line for line in lines if line.startswith("- ")]


def test_new_runs_the_invalid_first_then_all_newest_first() -> None:
    previous = Previous("2026-11-25T12:00:00Z", frozenset({"kv/20261125T100000", "gone/1"}))
    lines = new_section(RUNS, previous, Path("results"), Path("results/analysis"))
    text = "\n".join(lines)
    assert (
        "3 new runs since the last analysis (2026-11-25T12:00:00Z, 2 runs), 2 of them INVALID"
        in text
    )
    invalid, every = text.split("New runs:")
    assert invalid.count("\n- [") == 2 and every.count("\n- [") == 3
    assert (
        every.index("20261126T110000")
        < every.index("20261126T100000")
        < every.index("20261126T090000")
    )
    assert (
        "- [queue/20261126T090000](../queue/20261126T090000/report.html) INVALID: "
        "3.9.1-zookeeper/queue/linearizable/kill-leader/safe (3 lost, G1a:1)"
    ) in invalid
    assert "INCOMPLETE: 3.9.1-zookeeper/kv/" in every
    assert run_links.new_line(RUNS, previous) == (
        "3 new since the last analysis (2026-11-25T12:00:00Z), 2 of them INVALID"
    )
    assert run_links.new_line(RUNS, None) == "first analysis into this folder: no run marked new"
    same = Previous("2026-11-26T12:00:00Z", frozenset(r["run"] for r in RUNS))
    assert new_section(RUNS, same, Path("r"), Path("r/a"))[2] == (
        "No new run since the last analysis (2026-11-26T12:00:00Z, 4 runs)."
    )


def test_many_new_runs_are_counted_past_the_first_ones() -> None:
    many = [run(f"kv/2026112{i // 100}T{i:06d}") for i in range(run_links.NEW_SHOWN + 7)]
    lines = new_section(many, Previous("t", frozenset()), Path("r"), Path("r/a"))
    assert sum(line.startswith("- [") for line in lines) == run_links.NEW_SHOWN
    assert "- ... and 7 more (runs.csv)" in lines


def test_every_invalid_run_is_linked_from_wherever_the_summary_is(tmp_path: Path) -> None:
    root = tmp_path / "results"
    lines = run_links.invalid_section(RUNS, root, root / "analysis")
    assert lines[2] == "2 of 4 runs, newest first, each linked to its report:"
    links = [line for line in lines if line.startswith("- [")]
    assert links[0].startswith("- [kv/20261126T100000](../kv/20261126T100000/report.html)")
    assert links[0].endswith("(2 non-linearizable keys)")
    elsewhere = run_links.invalid_section(RUNS, root, tmp_path / "out" / "deep")
    assert "](../../results/kv/20261126T100000/report.html)" in elsewhere[4]
    none = run_links.invalid_section(RUNS[:1], root, root / "analysis")
    assert none[2] == "None of the 1 runs is INVALID."


def test_a_run_id_is_escaped_in_the_link_and_its_text() -> None:
    odd = run("kv [1] %41/20261126T100000", "INVALID")
    (line,) = [x for x in run_links.invalid_section([odd], Path("r"), Path("r/a")) if "- [" in x]
    assert line.startswith(
        "- [kv \\[1\\] %41/20261126T100000](../kv%20%5B1%5D%20%2541/20261126T100000/report.html)"
    )


def test_latency_is_a_table_per_workload() -> None:
    rows = [
        {**CONFIG, "runs": 3, "p50_ms": 12.5, "p95_ms": 40.0, "p99_ms": 90.0},
        {**CONFIG, "workload": "queue", "runs": 2, "p50_ms": 250.0, "p95_ms": 900.0},
        {**CONFIG, "kafka_version": "4.4.0", "metadata": "kraft", "runs": 1, "p50_ms": 9.0},
    ]
    text = "\n".join(latency_by_workload(rows))
    kv, queue = text.split("### kv")[1].split("### queue")
    assert "| 3.9.1-zookeeper | kv/linearizable/kill-leader/safe | 3 | 12.5 | 40 | 90 |" in kv
    assert "| 4.4.0-kraft | kv/linearizable/kill-leader/safe | 1 | 9 |  |  |" in kv
    assert "250" not in kv and "| 3.9.1-zookeeper | queue/" in queue
    assert latency_by_workload([]) == []


DAY1, DAY2 = datetime.date(2026, 11, 25), datetime.date(2026, 11, 26)


def _by_config(*days: datetime.date) -> list[dict[str, Any]]:
    return [{**CONFIG, "day": d, "invalid_rate": 0.5, "lost_mean": 1.0} for d in days]


def _by_workload(*days: datetime.date) -> list[dict[str, Any]]:
    return [
        {"workload": w, "nemesis": "kill-leader", "day": d, "p50_ms": 1.0, "p95_ms": 2.0}
        | {"p99_ms": 3.0}
        for d in days
        for w in ("kv", "queue")
    ]


def test_no_trend_plot_with_one_day_and_the_older_ones_are_removed(tmp_path: Path) -> None:
    # The older analyses' (PNG) and this one's (SVG) alike.
    older = ("latency.png", "latency-register.png", "invalid-rate.png", "lost-writes.svg")
    for old in (*older, "summary.md"):
        (tmp_path / old).write_text("an earlier analysis's")
    trends = trend_plots.draw(_by_config(DAY1), _by_workload(DAY1), tmp_path)
    assert trends == Trends([DAY1], [])
    assert [p.name for p in tmp_path.iterdir()] == ["summary.md"]
    assert trend_lines(trends) == [
        "No trend plot: the runs that count in the rates all started on 2026-11-25; "
        "a trend needs runs of at least 2 days."
    ]
    assert trend_lines(Trends([], [])) == ["No trend plot: no run counts in the rates."]


@pytest.mark.parametrize("days", [(DAY1, DAY2), (DAY1, DAY1 + datetime.timedelta(days=40))])
def test_trend_plots_with_two_days_latency_one_per_workload(
    tmp_path: Path, days: tuple[datetime.date, ...]
) -> None:
    trends = trend_plots.draw(_by_config(*days), _by_workload(*days), tmp_path)
    assert trends.plots == [
        "invalid-rate.svg",
        "lost-writes.svg",
        "latency-kv.svg",
        "latency-queue.svg",
    ]
    assert all((tmp_path / name).stat().st_size > 1000 for name in trends.plots)
    assert trend_lines(trends)[2] == "![latency-kv](latency-kv.svg)"
    assert trend_plots.latency_file("a/b c") == "latency-a_b_c.svg"
