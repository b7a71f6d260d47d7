"""report.html's header: the facts a reader wants before the verdict's reasons (start,
duration, release, client, seed), the command that reruns the run, the link back."""

from __future__ import annotations

from pathlib import Path

from harness.report.header import header_facts, header_html

TEST = {
    "spec": {"kafka_version": "3.9.1", "metadata": "zookeeper", "seed": 42, "client": "java"},
    "versions": {"librdkafka": "2.16.0", "kafka_clients": "4.4.0"},
    "started": "2026-11-27T23:10:05+0000",
    "command": "harness run --workload queue --txn --client java --seed 42",
}
RESULTS = {"duration": {"planned_s": 60.0, "ran_s": 60.2, "complete": True}}


def test_the_facts_name_start_duration_release_client_and_seed() -> None:
    assert header_facts(TEST, RESULTS) == [
        "started 2026-11-27T23:10:05+0000",
        "60 s workload (its last ops returned at 60.2 s)",
        "Kafka 3.9.1 on zookeeper",
        "client java 4.4.0",
        "seed 42",
    ]


def test_a_workload_stopped_short_says_how_long_it_ran() -> None:
    stopped = {"duration": {"planned_s": 20.0, "ran_s": 7.7, "complete": False}}
    assert header_facts({}, stopped) == ["ran 7.7 s of 20 s", "client librdkafka"]


def test_files_that_hold_less_give_fewer_facts_not_an_error() -> None:
    assert header_facts({}, {"duration": {"ran_s": 3}}) == ["client librdkafka"]


def test_a_run_under_a_results_root_links_back_and_shows_its_rerun(tmp_path: Path) -> None:
    folder = tmp_path / "queue-txn-none" / "20261127T231005"
    folder.mkdir(parents=True)
    assert "all runs" not in header_html(folder, TEST, RESULTS)
    (tmp_path / "latest").symlink_to(folder.relative_to(tmp_path))
    said = header_html(folder, TEST, RESULTS)
    assert '<a id="all-runs" href="../../index.html">all runs</a>' in said
    rerun = "harness run --workload queue --txn --client java --seed 42"
    assert f'<pre class="rerun">{rerun}</pre>' in said


def test_what_the_files_say_is_escaped(tmp_path: Path) -> None:
    test = TEST | {"command": "harness run --name '<b>'", "started": "<i>"}
    said = header_html(tmp_path, test, RESULTS)
    assert "<b>" not in said and "<i>" not in said and "&lt;b&gt;" in said
