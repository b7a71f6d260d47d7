"""From a recorded history to a verdict: runs every checker of the run (each crash-safe),
writes results.json, the plots, the counterexamples and report.html, and says it in a
few lines for the terminal.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from checkers import (
    RUN_CHECKERS,
    UNKNOWN,
    Checked,
    CheckOptions,
    Reading,
    Result,
    analyse,
    availability_section,
    compose,
    merge_valid,
    section_of,
)
from checkers.groups import expansion_lines, group_lines, share_lines
from checkers.queue import LagPoint, QueueHistory, lag_points, worst_realtime_lag
from harness.report.explain import explain
from harness.report.nemesis_story import invoke_times
from harness.report.page import write_report
from harness.report.queue_section import queue_lines
from harness.report.recovery_section import recovery_lines
from harness.report.replicas_section import replicas_line
from harness.report.summary_table import recount_line
from harness.results import RESULTS, write_json
from harness.run.metadata_watch import read_samples
from harness.verdicts import DURATION, INCOMPLETE_WORD, painted, run_verdict
from history import History, HistoryError
from workloads.core import Workload

LOG = logging.getLogger("harness.run")
MAX_OFFSET_PLOTS = 16


@dataclass(frozen=True, slots=True)
class RunChecked:
    """A run's results (results.json's sections and top-level `valid`), what its checks
    read, and the queue consumers' realtime lag (empty for other histories): what the
    report draws from, so nothing reads the history again."""

    results: dict[str, Any]
    reading: Reading
    lag: list[LagPoint]


def check_run(history: History, workload: Workload, options: CheckOptions) -> RunChecked:
    """Takes a run's history, its workload and the options its spec gives the checks
    (CheckOptions.from_spec, as `harness check` of its folder takes them). Returns the
    results: top-level `valid` (the worst of the checkers') and one section per checker;
    a checker that crashes makes its section unknown, never invalid."""
    try:
        main = analyse(history, workload.model, options)
    except HistoryError as err:  # the run's own history: our bug, never a verdict
        main = Checked({"model": workload.model, "valid": UNKNOWN, "error": str(err)})
    results = run_sections(workload.model, main, history)
    lag: list[LagPoint] = []
    if main.reading.queue is not None and "error" not in results.get("queue", {}):
        try:  # the history read as a queue history: its polls can be timed
            lag = lag_points(history.events, main.reading.queue)
            names = main.reading.queue.names
            results["queue"]["worst_realtime_lag"] = worst_realtime_lag(lag, names)
        except Exception:  # a measure beside the verdict, never a reason to lose it
            LOG.exception("measuring the consumers' realtime lag failed")
    rest = compose(RUN_CHECKERS, history, options)
    results |= {name: section for name, section in rest.result.items() if name != "valid"}
    windows = results.get("nemesis", {}).get("windows")
    if windows and rest.reading.samples is not None:  # what the faults did to the clients
        results["availability"] = availability_section(windows, rest.reading.samples)
    valid = merge_valid(*(section["valid"] for section in results.values()))
    return RunChecked({"valid": valid, **results}, main.reading.joined(rest.reading), lag)


def run_sections(model: str, checked: Checked, history: History) -> dict[str, Result]:
    """Takes the workload's model, its check and the history. Returns the sections a run
    writes of it in results.json: the result under its model's section (section_of) and
    its sections beside; a queue's lost-acknowledged-writes view as `lost-acks`, with the
    queue's verdict (the drains' losses the queue checker judges, under the run's policy,
    and the polls' where no drain is final); a linearizability result with each key's
    verdict in `by_key`."""
    result = {k: v for k, v in checked.result.items() if k != "model"}
    sections: dict[str, Result] = {section_of(model): result, **checked.sections}
    if isinstance(result.get("lost_acks"), dict):
        sections["lost-acks"] = result.pop("lost_acks") | {"valid": result["valid"]}
    if section_of(model) == "linearizable":
        result["by_key"] = _verdicts_by_key(history, result)
    return sections


def _verdicts_by_key(history: History, lin: Result) -> dict[str, Any]:
    verdicts: dict[str, Any] = {str(op.key): True for op in history.ops}
    if "error" in lin:
        return dict.fromkeys(sorted(verdicts), "unknown")
    for failure in lin.get("failures", []):
        verdicts[str(failure.get("key"))] = failure.get("valid", "unknown")
    return dict(sorted(verdicts.items()))


def write_outputs(
    folder: Path, history: History, test: dict[str, Any], checked: RunChecked
) -> Path:
    """Writes results.json, the plots, each counterexample and report.html
    into folder, drawn from what the checks read. A drawing that fails is logged and left
    out; the verdict never is. Returns report.html's path."""
    results, reading = checked.results, checked.reading
    results["explanation"] = explain(results, test.get("spec", {}))
    write_json(folder / RESULTS, results)
    drawings: dict[str, list[Path]] = {}
    unplotted: dict[str, str] = {}  # a plot with nothing to show -> the sentence instead
    windows = results.get("nemesis", {}).get("windows", [])
    end, finished = 0.0, None
    try:
        from harness.report.counterexamples.timeline import render_counterexamples
        from harness.report.plots.axes import run_end, workload_end
        from harness.report.plots.images import LATENCY_FILE, METADATA_FILE, RATE_FILE
        from harness.report.plots.marks import anomaly_marks
        from harness.report.plots.perf import latency_plot, rate_plot

        samples = reading.samples or []
        end = run_end(history.events, windows)  # every time plot's x range: they line up
        finished = workload_end(results)  # the final phase after it, told apart on each
        try:
            marks = anomaly_marks(results, history.events, reading.queue)
        except Exception:  # the marks must not cost the plots they go on
            LOG.exception("finding the anomalies' times failed; the plots go without them")
            marks = []
        latency_plot(samples, windows, folder / LATENCY_FILE, end, marks, finished)
        recovered = results.get("recovery", {}).get("partitions", [])
        rate_plot(samples, windows, folder / RATE_FILE, recovered, end, marks, finished)
        failures = results.get("linearizable", {}).get("failures", [])
        drawings = render_counterexamples(failures, folder, windows=windows)
        queue = results.get("queue")
        if reading.queue is not None and isinstance(queue, dict) and "error" not in queue:
            times = (end, finished)  # every time plot's x range and the workload's end
            _queue_plots(folder, reading.queue, checked.lag, queue, windows, times, unplotted)
        if metadata := read_samples(folder):
            from harness.report.plots.metadata import metadata_plot, steady_leader

            if (leader := steady_leader(metadata)) is not None:
                unplotted[METADATA_FILE] = (
                    f"{leader} led the metadata in every sample and no voter fell behind"
                )
            else:
                metadata_plot(metadata, windows, folder / METADATA_FILE, end, finished)
    except Exception:  # a drawing must never cost the run its verdict
        LOG.exception("drawing the plots failed")
    try:  # report.html's Groups section: groups.svg, share-deliveries.svg
        from harness.report.plots.groups import draw_groups

        draw_groups(folder, results, reading.groups, reading.share, end, finished)
    except Exception:  # nor the other drawings
        LOG.exception("drawing the groups plots failed")
    return write_report(folder, test, results, drawings, invoke_times(history.events), unplotted)


def _queue_plots(
    folder: Path,
    history: QueueHistory,
    lag: Sequence[LagPoint],
    queue: dict[str, Any],
    windows: list[dict[str, Any]],
    times: tuple[float, float | None],
    unplotted: dict[str, str],
) -> None:
    end, finished = times
    from harness.report.plots.images import LAG_FILE, LOST_ACKS_FILE, UNSEEN_FILE, offsets_file
    from harness.report.plots.lag import draw_lag, unseen_plot
    from harness.report.plots.queue import anomaly_offsets, lost_acks_plot, offsets_plot, zoom

    if queue.get("lost"):
        lost_acks_plot(history, queue, windows, folder / LOST_ACKS_FILE, end, finished)
    else:  # the rate plot already shows the sends over time
        unplotted[LOST_ACKS_FILE] = (
            f"none of the {queue.get('acknowledged', 0):,} acknowledged sends was lost"
        )
    draw_lag(lag, windows, folder / LAG_FILE, end, finished)
    unseen_plot(queue, windows, folder / UNSEEN_FILE, end, finished)
    # Only the partitions with an anomaly, zoomed around it: the others' plots show a
    # straight line each, and pushed the anomalies' down the page.
    found = anomaly_offsets(history, queue)
    for p in sorted(found, key=repr)[:MAX_OFFSET_PLOTS]:
        offsets_plot(history, queue, p, folder / offsets_file(p), zoom(found[p]))


def queue_policy_lines(queue: dict[str, Any]) -> list[str]:
    """Takes the queue checker's section. Returns its losses judged both ways, and the
    kinds the run ignored, in a line each (none for a section without them)."""
    lines = []
    if "lost_from_polls" in queue:
        drains = queue["lost_from_drains"]
        by_drains = "no final drain" if drains is None else f"{drains} by the final drains"
        lines.append(f"lost writes: {queue['lost_from_polls']} from the polls alone, {by_drains}")
    if queue.get("ignored"):
        lines.append(f"ignored (reported, never invalid): {', '.join(queue['ignored'])}")
    return lines


def _keys(count: int) -> str:
    return f"{count} key" if count == 1 else f"{count} keys"


def summary_lines(results: dict[str, Any], report: Path, terminal: bool = False) -> list[str]:
    """Returns the few lines a person reads at the end of a run; on a terminal the verdict
    in its colour."""
    s = results.get("stats", {})
    lin = results.get("linearizable", {})
    word = run_verdict(results)
    # The explanation, last, says why a run is INCOMPLETE: the verdict line does only
    # when there is none.
    told = bool(results.get("explanation"))
    why = f" ({results[DURATION]['reason']})" if word == INCOMPLETE_WORD and not told else ""
    lines = [
        f"verdict: {painted(word, terminal)}{why}",
        f"  {s.get('count', 0)} ops: {s.get('ok', 0)} ok, {s.get('fail', 0)} fail, "
        f"{s.get('info', 0)} info"
        + (f"; {_keys(lin.get('keys', 0))} checked" if "linearizable" in results else ""),
    ]
    windows = results.get("nemesis", {}).get("windows", [])
    if windows:
        kinds: dict[str, int] = {}
        for w in windows:
            kinds[w["fault"]] = kinds.get(w["fault"], 0) + 1
        lines.append("  faults: " + ", ".join(f"{n} x {k}" for k, n in sorted(kinds.items())))
    if isinstance(results.get("recovery"), dict):
        lines += [f"  recovery, {line}" for line in recovery_lines(results["recovery"])]
    if isinstance(results.get("queue"), dict):
        # With an explanation, the counts only: it says the transactions and each kind.
        said = queue_lines(results["queue"])
        lines += [f"  {line}" for line in (said[:1] if told else said)]
        lines += [f"  {line}" for line in queue_policy_lines(results["queue"])]
    if isinstance(results.get("groups"), dict):
        lines += [f"  {line}" for line in group_lines(results["groups"])]
    if isinstance(results.get("share"), dict):
        lines += [f"  {line}" for line in share_lines(results["share"])]
    if isinstance(results.get("expansion"), dict):
        lines += [f"  {line}" for line in expansion_lines(results["expansion"])]
    if "error" in lin:
        lines.append(f"  the linearizability checker failed: {lin['error']}")
    for failure in lin.get("failures", [])[:5]:
        what = failure.get("message") or failure.get("cause") or "unknown"
        lines.append(f"  key {failure.get('key')}: {what}")
    if len(lin.get("failures", [])) > 5:
        lines.append(f"  ... and {len(lin['failures']) - 5} more keys (see the report)")
    final = results.get("final", {})
    if final and not final.get("healthy", True):
        lines.append("  after healing, the topic never had a full ISR again (see results.json)")
    if isinstance(final.get("recount"), dict):
        lines.append(f"  {recount_line(final['recount'])}")
    if isinstance(results.get("replicas"), dict):
        lines.append(f"  {replicas_line(results['replicas'])}")
    lines += [f"  {said}" for said in results.get("explanation", [])]
    lines.append(f"  report: {report}")
    return lines
