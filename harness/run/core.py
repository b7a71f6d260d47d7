"""One test from start to verdict (Jepsen's core): results folder, cluster, topic,
nemesis, workload, teardown, final reads, checks and report, with every step that
breaks something undone again, also on ^C, SIGTERM or a crash.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import random
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from checkers import CheckOptions, merge_valid
from harness import signals
from harness.cluster.config import PROFILES
from harness.cluster.engine import docker_client
from harness.db import Database, KafkaDb, NatsDb, open_db
from harness.exit_codes import EXIT_CRASH, EXIT_INTERRUPTED, EXIT_UNKNOWN
from harness.progress import StatusLine
from harness.results import (
    HISTORY,
    RESULTS,
    TEST,
    add_to_test_json,
    new_run_folder,
    point_latest,
    utc_stamp,
    write_json,
    write_test_json,
)
from harness.run.cluster_facts import release_section, transaction_facts
from harness.run.completion import duration_section
from harness.run.final_phase import final_reads, wait_healthy
from harness.run.metadata_watch import MetadataWatch
from harness.run.recount import read_replicas, write_recount
from harness.run.recovery import recovery_section
from harness.run.replica_check import replica_section
from harness.run.run_log import run_logs
from harness.run.runner import Plan, Recorder, Runner, heal_all
from harness.run.split_brain import split_brain_section
from harness.run.verdict import check_run, summary_lines, write_outputs
from harness.run.watchdog import HANG_AFTER_S, watched
from harness.spec import TestSpec
from harness.verdicts import DURATION, exit_code, incomplete, run_verdict
from history import HistoryError, HistoryWriter, load
from kvstore import DEFAULT_TIMEOUTS
from kvstore.kafka_log import LIBRDKAFKA_OVERRIDES
from nemesis.expand import ADD_PARTITIONS
from nemesis.names import CLIENT_CLOCK_FAULTS
from nemesis.schedule import plan_faults
from workloads.core import Client, Context, PartitionCount
from workloads.registry import workload_for

LOG = logging.getLogger("harness.run")
CLUSTER_UP_TIMEOUT_S = 120.0


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """How one run ended: its folder, verdict (None if it broke or was cut short), exit code."""

    folder: Path
    valid: Any
    exit_code: int


CLIENT_CLOCKS = "client-clocks"
"""The run folder's folder of the Java clients' clock files."""


def client_clocks_folder(spec: TestSpec, folder: Path) -> Path | None:
    """Returns the folder of the Java clients' clock files, made in the run's folder, for
    a run with a client clock fault; else None."""
    if not any(n in CLIENT_CLOCK_FAULTS for n in spec.nemesis):
        return None
    clocks = folder / CLIENT_CLOCKS
    clocks.mkdir(parents=True, exist_ok=True)
    return clocks


class TestRun:
    """The state of one run while it goes: what has been made and must be undone."""

    __test__ = False  # not a pytest test class, despite its name

    def __init__(self, spec: TestSpec, folder: Path, line: StatusLine) -> None:
        self.spec = spec
        self.folder = folder
        self.line = line
        self.rng = random.Random(spec.seed)
        self.interrupts = signals.install()
        self.cluster: Database | None = None
        self.nemesis_set_up = False
        self.recorder: Recorder | None = None
        self.ran_s: float | None = None
        self.stopped_by: str | None = None
        """What stopped the run before its final reads, in words (None: nothing did)."""
        self.final: dict[str, Any] = {}
        self.on_disk: dict[str, Any] | None = None
        self.copies: dict[str, Any] | None = None
        """Each NATS server's copy of the stream, read from its disk after the final reads."""
        self.transactions: dict[str, Any] | None = None
        """The protocol each transactional client spoke, read after the final reads."""
        self.workload = workload_for(spec.db, spec.workload)
        clocks = client_clocks_folder(spec, folder)
        self.ctx = Context(
            bootstrap="",
            topic=spec.topic,
            kafka_config=PROFILES[spec.cluster.kafka_config].safety,
            store=spec.store,
            keys=spec.keys,
            partitions=spec.partitions,
            replication_factor=min(3, spec.cluster.brokers),
            timeouts=DEFAULT_TIMEOUTS,
            crash_clients=spec.crash_clients,
            queue=spec.queue,
            share=spec.share,
            nats=spec.nats,
            grown=PartitionCount(spec.keys) if ADD_PARTITIONS in spec.nemesis else None,
            client_clocks=str(clocks) if clocks is not None else None,
        )
        self.faults = plan_faults(
            spec.nemesis,
            spec.topic,
            spec.time_limit,
            spec.nemesis_interval,
            self.rng,
            group=self.workload.group(self.ctx),
            on_grown=self.ctx.grown.grew if self.ctx.grown is not None else None,
            client_clocks=clocks,
        )

    def set_up(self) -> None:
        """Builds the image if needed, starts a fresh cluster of the database the spec
        names (harness/db/) and creates the store topic."""
        spec = self.spec
        self.cluster = open_db(spec, docker_client())
        began = time.monotonic()
        self.cluster.set_up(self.line, CLUSTER_UP_TIMEOUT_S)
        self.ctx = dataclasses.replace(self.ctx, bootstrap=self.cluster.bootstrap_servers)
        facts = self.cluster.facts()
        add_to_test_json(self.folder, "cluster", facts)
        LOG.info("%s", self.cluster.summary(facts, time.monotonic() - began))
        self.line.update(f"creating topic {spec.topic}")
        self.workload.create_topics(self.cluster.admin(), self.ctx)
        LOG.info("topic %s created", spec.topic)
        self.nemesis_set_up = True  # teardown heals whatever a half-done setup broke
        self.faults.nemesis.setup(self.cluster)

    def open_client(self, client_id: str) -> Client:
        """Opens one of the workload's clients."""
        return self.workload.open_client(self.ctx, client_id)

    def run_workload(self, recorder: Recorder) -> None:
        """Runs the clients and the nemesis for the time limit."""
        assert self.nemesis_set_up
        spec = self.spec
        plan = Plan(
            time_limit=spec.time_limit,
            concurrency=spec.concurrency,
            rate=spec.rate,
            nemesis_interval=spec.nemesis_interval,
        )
        runner = Runner(
            plan,
            self.workload.ops(random.Random(self.rng.random()), self.ctx),
            self.open_client,
            self.faults.nemesis,
            self.faults.ops,
            recorder,
            self.rng,
        )
        assert self.cluster is not None
        started_ns = recorder.elapsed_ns()
        faults = ",".join(spec.nemesis) or "none"
        LOG.info(f"t={started_ns / 1e9:.3f} s workload started: {plan.words()}, nemesis {faults}")
        try:
            with MetadataWatch(self.cluster, self.folder, recorder.elapsed_ns, spec.topic):
                runner.run(self.line.update)
        finally:
            ended_ns = recorder.elapsed_ns()
            self.ran_s = (ended_ns - started_ns) / 1e9
            c = recorder.counts
            LOG.info(
                f"t={ended_ns / 1e9:.3f} s workload ended after {self.ran_s:.1f} s: "
                f"{c['ok']} ok, {c['fail']} fail, {c['info']} info"
            )

    def heal(self, recorder: Recorder | None) -> None:
        """Undoes every fault (recorded as a `heal` nemesis op when a history is open)."""
        if not self.nemesis_set_up:
            return
        self.line.update("healing: removing every fault")
        if recorder is not None:
            heal_all(self.faults, self.cluster, recorder)
        else:
            self.faults.heal(self.cluster)

    def finish(self, recorder: Recorder) -> None:
        """Waits for the topic to be whole again and reads every key once."""
        assert self.cluster is not None
        cut_short = self.interrupted
        self.line.update("waiting for every partition's full ISR")
        self.final = wait_healthy(self.cluster, self.spec.topic, cut_short)
        whole = "a full ISR" if self.final.get("healthy") else "no full ISR"
        LOG.info("%s after %s s of waiting", whole, self.final.get("seconds"))
        self.line.update("final reads")
        reads = self.workload.final_reads(self.ctx)
        self.final |= final_reads(reads, self.open_client, recorder, cut_short)
        missing = self.final.get("missing") or "none"
        LOG.info(f"final reads: {self.final.get('read')} ok, never read: {missing}")
        if isinstance(self.cluster, NatsDb) and not cut_short():
            # A split brain (nats-server#7567) outlives the heal: each server's own replica
            # and the leader it names, once the drains are done and nothing is written.
            self.line.update("asking every server what its replica holds")
            agreement = self.cluster.replica_agreement(self.spec.topic)
            self.final["replica_agreement"] = agreement
            LOG.info("replicas after the final reads: %s", agreement["states"] or "none")
            for finding in agreement["split_brain"]:
                LOG.warning("split brain: %s", finding)
            self.line.update("reading every server's copy of the stream from its disk")
            try:
                self.copies = self.cluster.stream_copies(self.spec.topic)
            except Exception:  # evidence beside the verdict, never a reason to lose the run
                LOG.exception("reading the servers' copies of the stream failed")
            else:
                held = {n: len(c) for n, c in self.copies["copies"].items()}
                LOG.info("copies of %s on disk: %s", self.copies["stream"], held)
        if self.spec.queue.txn and isinstance(self.cluster, KafkaDb):
            self.transactions = transaction_facts(self.cluster)
            LOG.info("transaction protocol: %s", self.transactions)
        # A grown topic is recounted whatever its workload: a share group's skip of a new
        # partition is a finding only if the skipped sends are on the brokers' disks.
        recount = self.workload.recount_from_disk or self.ctx.grown is not None
        if recount and not cut_short():
            self.line.update("recounting the topic from the brokers' disks")
            try:
                self.on_disk = read_replicas(self.cluster, self.spec.topic)
            except Exception:  # evidence beside the verdict, never a reason to lose the run
                LOG.exception("reading the topic from the brokers' disks failed")

    def tear_down(self) -> None:
        """Copies the nodes' logs and stops the cluster unless asked to leave it running."""
        if self.cluster is None:
            return
        self.line.update("copying node logs")
        try:
            self.cluster.copy_logs(self.folder / "nodes")
        except Exception:  # the logs are worth having, not worth a lost run
            LOG.exception("copying the node logs failed")
        if not self.spec.leave_cluster_running:
            self.line.update("stopping the cluster")
            self.cluster.tear_down()

    def interrupted(self) -> bool:
        """Returns whether ^C (or SIGTERM, SIGHUP) has arrived."""
        return self.interrupts.count > 0

    def note_interrupt(self, phase: str, recorder: Recorder | None) -> None:
        """Takes the phase an interrupt cut short. Keeps it as what stopped the run (the
        first one only) and says it in run.log with the history's time."""
        signal_name = self.interrupts.names[0] if self.interrupts.names else "SIGINT"
        if self.stopped_by is None:
            self.stopped_by = f"interrupted by {signal_name} {phase}"
        at = f"t={recorder.elapsed_ns() / 1e9:.3f} s " if recorder is not None else ""
        LOG.warning("%sinterrupted by %s %s", at, signal_name, phase)


def run_test(spec: TestSpec, results_root: Path, line: StatusLine, command: str = "") -> RunOutcome:
    """Runs one test end to end; command, when given, is the command line that runs it
    again (kept in test.json). Returns its folder, verdict and exit code (0 valid,
    1 invalid, 2 unknown, 130 interrupted, 255 when the run itself broke)."""
    started = time.time()
    folder = new_run_folder(results_root, spec.name, started)
    write_test_json(folder, spec, started, command)
    if LIBRDKAFKA_OVERRIDES:  # from the environment: this run is not the default one
        add_to_test_json(folder, "librdkafka_overrides", LIBRDKAFKA_OVERRIDES)
    point_latest(results_root, folder)
    with run_logs(folder), watched(folder, spec.time_limit + HANG_AFTER_S):
        LOG.info("run %s, seed %s: %s", spec.name, spec.seed, folder)
        try:
            run = TestRun(spec, folder, line)
            if (shortfall := run.faults.shortfall()) is not None:
                line.say(shortfall)
            outcome = _run(run)
        except Exception as err:  # a bug of ours: never exit 1, which means "invalid"
            LOG.error("internal error:\n%s", traceback.format_exc())
            line.say(f"harness run: internal error: {err!r} (traceback in {folder}/run.log)")
            outcome = RunOutcome(folder, None, EXIT_CRASH)
        LOG.info("exit %s", outcome.exit_code)
        update_index(results_root)
    return outcome


def update_index(results_root: Path) -> None:
    """Rebuilds results/index.html with this run in it; a failure costs only the page."""
    try:
        from harness.report.index import write_index

        write_index(results_root)
    except Exception:  # the run's own results are written; the index is a convenience
        LOG.exception("rebuilding %s/index.html failed", results_root)


def _run(run: TestRun) -> RunOutcome:
    broke: BaseException | None = None
    writer: HistoryWriter | None = None
    recorder: Recorder | None = None
    try:
        run.set_up()
        if run.interrupted():  # a handler's KeyboardInterrupt swallowed by a library
            raise KeyboardInterrupt
        # Opened once the cluster is up, so the history's clock starts with the workload.
        writer = HistoryWriter(run.folder / HISTORY)
        t0 = utc_stamp(time.time() - writer.elapsed_ns() / 1e9)
        add_to_test_json(run.folder, "t0", t0)
        LOG.info("t=0 of the history is %s", t0)
        recorder = Recorder(writer)
        run.run_workload(recorder)
    except KeyboardInterrupt:
        run.interrupts.count = max(1, run.interrupts.count)
        phase = "during the workload" if recorder is not None else "before the workload"
        run.note_interrupt(phase, recorder)
    except Exception as err:  # the run broke: still heal, keep the history, say why
        broke = err
        LOG.error("the run broke:\n%s", traceback.format_exc())
        if recorder is not None:
            run.stopped_by = f"broken by {type(err).__name__}"
    with signals.shielded():
        try:
            run.heal(recorder)
            if broke is None and not run.interrupted() and recorder is not None:
                run.finish(recorder)
            if run.interrupted() and recorder is not None and run.stopped_by is None:
                run.note_interrupt("after the workload, before its final reads", recorder)
        except Exception as err:
            broke = broke or err
            LOG.error("the final phase broke:\n%s", traceback.format_exc())
        finally:
            if writer is not None:
                writer.close()
            run.tear_down()
    return _conclude(run, broke)


def _conclude(run: TestRun, broke: BaseException | None) -> RunOutcome:
    line, folder = run.line, run.folder
    has_history = (folder / HISTORY).exists()
    unchecked: dict[str, Any] = {"valid": "unknown"}
    if has_history:
        unchecked[DURATION] = _duration(run)
    if run.interrupts.count >= 2:
        reason = "interrupted twice: healed and stopped, the history kept and not checked"
        _write_unchecked(folder, unchecked | {"interrupted": reason})
        line.say(f"{reason} ({folder})")
        return RunOutcome(folder, None, EXIT_INTERRUPTED)
    if broke is None and not has_history:
        line.say(f"interrupted before the workload started: cluster removed ({folder})")
        LOG.info("exit %s: interrupted before the workload started", EXIT_INTERRUPTED)
        return RunOutcome(folder, None, EXIT_INTERRUPTED)
    if broke is not None:
        line.say(f"the run broke: {type(broke).__name__}: {broke} (details in {folder}/run.log)")
        _write_unchecked(folder, unchecked | {"error": repr(broke)})
        return RunOutcome(folder, None, EXIT_CRASH)
    try:
        return _check_and_report(run)
    except KeyboardInterrupt:  # the containers are gone already: only the check is cut short
        reason = "interrupted while checking: the history is kept, not checked"
        _write_unchecked(folder, unchecked | {"interrupted": reason})
        line.say(f"{reason} ({folder})")
        return RunOutcome(folder, None, EXIT_INTERRUPTED)


def _duration(run: TestRun) -> dict[str, Any]:
    return duration_section(run.spec.time_limit, run.ran_s, run.stopped_by)


def _write_unchecked(folder: Path, results: dict[str, Any]) -> None:
    write_json(folder / RESULTS, results)
    LOG.warning("verdict %s, not checked: %s", run_verdict(results), results)


def _checked_what(run: TestRun) -> str:
    """Returns what the check reads, for the status line: the keys, or on NATS the queue's
    one stream (its --keys does not apply)."""
    if run.spec.db == "nats" and run.workload.model == "queue":
        return "the stream"
    return f"{run.spec.keys} keys"


def _check_and_report(run: TestRun) -> RunOutcome:
    line, folder = run.line, run.folder
    line.update(f"checking {_checked_what(run)}")
    try:
        history = load(folder / HISTORY)
    except HistoryError as err:
        line.say(f"the recorded history is unreadable: {err}")
        return RunOutcome(folder, None, EXIT_CRASH)
    options = CheckOptions.from_spec(run.spec.to_json(), time_limit=run.spec.check_time_limit)
    checked = check_run(history, run.workload, options)
    results = checked.results
    results["final"] = run.final
    try:
        windows = results.get("nemesis", {}).get("windows", [])
        results["recovery"] = recovery_section(history, windows, folder, run.spec)
    except Exception:  # evidence beside the verdict, never a reason to lose the run
        LOG.exception("computing the recovery times failed")
    if run.on_disk is not None:
        results["final"]["recount"] = _recount(folder, run.on_disk, results.get("lost-acks"))
    # The replicas are compared below the high watermarks the final drains read to: only
    # a workload that drains each partition (not the share group's one drain) has them.
    if run.on_disk is not None and run.workload.recount_from_disk:
        results["replicas"] = replica_section(folder, run.on_disk, results.get("lost-acks"))
        results["valid"] = merge_valid(results["valid"], results["replicas"]["valid"])
    if run.copies is not None:  # a split brain the servers' /jsz counts do not show
        results["split-brain"] = split_brain_section(run.copies)
        results["valid"] = merge_valid(results["valid"], results["split-brain"]["valid"])
    results[DURATION] = _duration(run)
    if run.stopped_by is not None:
        results["interrupted"] = f"{results[DURATION]['reason']}: checked as far as it went"
    test = {"spec": run.spec.to_json()}
    with contextlib.suppress(OSError, ValueError):
        test = json.loads((folder / TEST).read_text())
    results["release"] = release_section(test, run.transactions)
    report = write_outputs(folder, history, test, checked)
    line.clear()
    for text in summary_lines(results, report, line.is_terminal):
        line.say(text)
    for text in summary_lines(results, report):
        LOG.info("%s", text)
    if run.interrupted():
        line.say("interrupted: healed, stopped, history kept and checked")
        return RunOutcome(folder, results["valid"], EXIT_INTERRUPTED)
    if incomplete(results) and results["valid"] is not False:
        return RunOutcome(folder, results["valid"], EXIT_UNKNOWN)
    return RunOutcome(folder, results["valid"], exit_code(results["valid"]))


def _recount(folder: Path, on_disk: dict[str, Any], lost_acks: Any) -> dict[str, Any] | None:
    """Writes recount.json; returns its summary for results.json (None if it failed)."""
    try:
        counted = write_recount(folder, on_disk, lost_acks)
    except Exception:  # evidence beside the verdict, never a reason to lose the run
        LOG.exception("recounting the lost sends failed")
        return None
    return {k: v for k, v in counted.items() if k not in ("partitions", "source")}
