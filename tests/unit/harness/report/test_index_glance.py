"""The index at a glance: the configuration x release table (worst configuration first,
releases in version order, each cell's count, INVALID count and newest verdict linked),
the newest run named, the anomalies cell for queue and transaction kinds, names that say
what ran, and a line when no run matches the filters."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from harness.cluster.layout import ClusterSpec
from harness.report.index import RANK, run_entry, write_index
from harness.report.index_glance import glance_table, newest_line
from harness.results import new_run_folder, write_test_json
from harness.spec import TestSpec
from tests.support.browser import Browser, chromium
from tests.support.run_folders import T0
from workloads.options import QueueOptions


def _entry(run: str, verdict: str, kafka: str, nemesis: str = "kill-leader") -> dict[str, Any]:
    metadata = "zookeeper" if kafka.startswith("3.") else "kraft"
    return {
        "run": run,
        "report": f"./{run}/report.html",
        "verdict": verdict,
        "kafka": kafka,
        "metadata": metadata,
        "workload": "queue",
        "store": "",
        "nemesis": nemesis,
        "config": "safe",
    }


ENTRIES = [
    _entry("queue-kill/20261127T100000", "VALID", "3.9.1"),
    _entry("queue-kill/20261127T110000", "INVALID", "3.9.1"),
    _entry("queue-kill/20261127T120000", "VALID", "3.9.1"),
    _entry("queue-kill/20261127T090000", "VALID", "4.4.0"),
    _entry("queue-kill/20261127T093000", "VALID", "10.0.0"),
    _entry("queue-pause/20261127T130000", "VALID", "3.9.1", "pause-leader"),
]


def _rows(table: str) -> list[list[str]]:
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", table)
    return [
        [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", r)]
        for r in rows
    ]


def test_one_row_per_configuration_worst_first_one_column_per_release_in_order() -> None:
    rows = _rows(glance_table(ENTRIES, RANK))
    assert rows[0] == ["configuration", "3.9.1 zookeeper", "4.4.0 kraft", "10.0.0 kraft"]
    assert rows[1] == [
        "queue · kill-leader · safe",
        "1 of 3 INVALID; newest VALID",
        "1 run; newest VALID",
        "1 run; newest VALID",
    ]
    assert rows[2] == ["queue · pause-leader · safe", "1 run; newest VALID", "", ""]


def test_a_cell_says_its_count_first_and_names_the_newest_runs_verdict_as_such() -> None:
    # "VALID 10 of 19 INVALID" read as a contradiction: the badge is the newest run's.
    runs = [_entry(f"q/20261127T{h:02}0000", "INVALID", "3.9.1") for h in range(10)]
    runs += [_entry(f"q/20261127T{h:02}0000", "VALID", "3.9.1") for h in range(10, 19)]
    cell = _rows(glance_table(runs, RANK))[1][1]
    assert cell == "10 of 19 INVALID; newest VALID"
    assert not re.match(r"\s*(VALID|INVALID|INCOMPLETE|UNKNOWN)\b", cell)


def test_each_cell_links_its_newest_run() -> None:
    table = glance_table(ENTRIES, RANK)
    newest = "./queue-kill/20261127T120000/report.html"
    assert re.search(
        rf'<td[^>]*>1 of 3 INVALID; newest <a class="v" href="{re.escape(newest)}"[^>]*>VALID</a>',
        table,
    )
    assert glance_table([], RANK) == "" and newest_line([]) == ""
    line = newest_line(ENTRIES)
    assert "./queue-pause/20261127T130000/report.html" in line and "pause-leader" in line


def _run(root: Path, spec: TestSpec, results: dict[str, Any]) -> str:
    folder = new_run_folder(root, spec.name, T0)
    write_test_json(folder, spec, T0)
    (folder / "results.json").write_text(json.dumps(results))
    return folder.relative_to(root).as_posix()


def test_the_anomalies_cell_names_queue_and_transaction_kinds(tmp_path: Path) -> None:
    kinds = {
        "G1c": {"count": 2, "invalidating": True},
        "G0": {"count": 1, "invalidating": False},
        "lost-write": {"count": 0, "invalidating": True},
        "odd": "not a kind",
    }
    spec = TestSpec(name="queue-txn", workload="queue", nemesis=())
    run = _run(tmp_path, spec, {"valid": False, "queue": {"kinds": kinds}})
    assert run_entry(tmp_path, run, None)["anomalies"] == "2 G1c; allowed: 1 G0"


def test_the_anomalies_cell_names_each_kind_once_in_the_queue_checkers_words(
    tmp_path: Path,
) -> None:
    set_check = {"lost_count": 0, "ack_count": 9, "duplicated_count": 2, "unexpected_count": 1}
    kinds = {"duplicate": {"count": 2, "invalidating": True}, "unexpected": {"count": 0}}
    spec = TestSpec(name="queue", workload="queue", nemesis=())
    both = _run(tmp_path, spec, {"valid": False, "lost-acks": set_check, "queue": {"kinds": kinds}})
    # Was "2 duplicated; 1 unexpected; 2 duplicate": the queue checker judged both kinds.
    assert run_entry(tmp_path, both, None)["anomalies"] == "2 duplicate"
    alone = _run(tmp_path, spec, {"valid": False, "lost-acks": set_check})
    assert run_entry(tmp_path, alone, None)["anomalies"] == "1 unexpected; 2 duplicate"


def test_names_say_what_ran_and_a_queue_has_no_store(tmp_path: Path) -> None:
    grouped = QueueOptions(consumer_group=True, group_protocol="consumer")
    spec = TestSpec(name="queue-group", workload="queue", nemesis=(), queue=grouped)
    entry = run_entry(tmp_path, _run(tmp_path, spec, {"valid": True}), None)
    assert (entry["workload"], entry["store"]) == ("queue-group-consumer", "")
    java = QueueOptions(txn=True, client="java")
    spec = TestSpec(name="queue-txn-java", workload="queue", nemesis=(), queue=java)
    assert run_entry(tmp_path, _run(tmp_path, spec, {"valid": True}), None)["workload"] == (
        "queue-txn-java"
    )
    spec = TestSpec(name="kv", workload="kv", store="local-read", nemesis=())
    assert run_entry(tmp_path, _run(tmp_path, spec, {"valid": True}), None)["store"] == (
        "local-read"
    )


@pytest.mark.skipif(chromium() is None, reason="chromium is not installed (make test installs it)")
def test_a_filter_that_matches_nothing_says_so(tmp_path: Path) -> None:
    root = tmp_path / "results"
    for version in ("3.9.1", "4.4.0"):
        cluster = ClusterSpec(kafka_version=version, metadata="kraft")
        _run(root, TestSpec(name=f"kv-{version}", cluster=cluster, nemesis=()), {"valid": True})
    index = write_index(root)
    with Browser(tmp_path / "profile", 1400, 900) as page:
        page.open(index.as_uri())
        assert page.evaluate("document.getElementById('none').hidden") is True
        assert page.evaluate("document.querySelectorAll('#glance tr').length") == 2
        page.open(index.as_uri() + "#q=no-such-run")
        assert page.evaluate("document.getElementById('none').hidden") is False
        assert page.evaluate("document.getElementById('count').textContent") == "0 of 0 INVALID"


RELEASES = ("3.9.1", "3.9.2", "4.0.0", "4.1.2", "4.2.2", "4.3.1", "4.4.0")
"""The seven releases of the 300-run index, whose table scrolled sideways at 800 px."""


@pytest.mark.skipif(chromium() is None, reason="chromium is not installed (make test installs it)")
def test_the_table_of_seven_releases_fits_at_1400_and_is_stacked_at_800(tmp_path: Path) -> None:
    from harness.report.index import INDEX_STYLE
    from harness.report.index_glance import GLANCE_STYLE
    from harness.report.page_markup import STYLE

    entries = [
        _entry(f"queue-{n}-{i}/20261127T1{i}0000", verdict, kafka, nemesis)
        for i, kafka in enumerate(RELEASES)
        for n, (verdict, nemesis) in enumerate(
            [("INVALID", "partition-power-loss"), ("VALID", "bump-clock-leader,strobe-clock-one")]
        )
    ]
    page = tmp_path / "index.html"
    head = '<meta name="viewport" content="width=device-width, initial-scale=1">'
    style = f"<style>{STYLE}{INDEX_STYLE}{GLANCE_STYLE}</style>"  # as render_index's page
    page.write_text(f"<!doctype html>{head}{style}{glance_table(entries, RANK)}")
    for width in (1400, 800):
        with Browser(tmp_path / f"profile-{width}", width, 900) as browser:
            browser.open(page.as_uri())
            sideways = "(t => t.scrollWidth - t.clientWidth)(document.getElementById('glance'))"
            assert browser.evaluate(sideways) <= 0, width
            assert browser.evaluate("document.documentElement.scrollWidth") <= width
            shown = "getComputedStyle(document.querySelector('#glance tr.head')).display"
            named = (
                "getComputedStyle(document.querySelector('#glance td[data-release]'), "
                "'::before').content"
            )
            if width == 800:  # stacked: no header row, each cell named by its release
                assert browser.evaluate(shown) == "none"
                assert browser.evaluate(named) == '"3.9.1 zookeeper: "'
            else:
                assert browser.evaluate(shown) != "none"
