"""`harness matrix`: runs `harness run` over every Kafka release x workload x store x
fault x config, a few runs at once, each run on a fresh cluster of its own; with `--db
nats`, over nats-server releases x workload x fault x sync profile (`--configs default
always`).

The plan is round by round (round r uses seed base+r), so a matrix cut short leaves
whole rounds behind; a fault that does not apply to a release's metadata mode is left
out. Each run's output goes to a log file; the screen gets one line per run.
"""

from __future__ import annotations

import argparse
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from harness import signals
from harness.cluster.config import PROFILES, profile_problem
from harness.cluster.releases import (
    MATRIX_DEFAULT,
    METADATA_MODES,
    Metadata,
    default_metadata,
    release_problem,
    version_problem,
)
from harness.commands import SUMMARIES
from harness.commands.matrix_label import label
from harness.exit_codes import (
    EXIT_BAD_INPUT,
    EXIT_CRASH,
    EXIT_INTERRUPTED,
    EXIT_INVALID,
    EXIT_OK,
    EXIT_UNKNOWN,
    EXIT_VALID,
)
from nemesis.names import (
    CLIENT_CLOCK_FAULTS,
    EXPAND_FAULTS,
    GROUP_FAULTS,
    IN_ALL,
    ISR_SHRINK,
    NEMESES,
    ONLY_ON,
)
from workloads.argtypes import positive
from workloads.names import (
    DATABASES,
    DEFAULT_NATS_VERSION,
    NATS_SYNCS,
    NATS_VERSIONS,
    STORES,
    WORKLOAD_NAMES,
)


@dataclass(frozen=True, slots=True)
class Kafka:
    """A Kafka release and the metadata mode it runs in."""

    version: str
    metadata: Metadata

    @property
    def label(self) -> str:
        """Returns e.g. 4.4.0-kraft, as analyze names the column."""
        return f"{self.version}-{self.metadata}"


@dataclass(frozen=True, slots=True)
class Nats:
    """A nats-server release (`--db nats`); its configs are sync profiles."""

    version: str

    @property
    def metadata(self) -> str:
        """Returns "nats": the faults that need ZooKeeper or KRaft are left out."""
        return "nats"

    @property
    def label(self) -> str:
        """Returns e.g. nats-2.12.1."""
        return f"nats-{self.version}"


System = Kafka | Nats


@dataclass(frozen=True, slots=True)
class Job:
    """One `harness run` of the matrix (`kafka`: the system under test, Kafka or NATS)."""

    kafka: System
    workload: str
    store: str
    nemesis: str
    config: str
    round: int
    seed: int
    time_limit: float

    def describe(self) -> str:
        """Returns a short line naming the run."""
        return (
            f"{self.kafka.label} {self.workload}/{self.store}/{self.nemesis}/{self.config} "
            f"round {self.round} seed {self.seed}"
        )

    def argv(self, results: str, cluster: str, extra: Sequence[str]) -> list[str]:
        """Returns the command line of this run on cluster, writing under results."""
        if isinstance(self.kafka, Nats):
            system = ["--db", "nats", "--nats-version", self.kafka.version]
            system += ["--nats-sync", self.config]
        else:
            system = ["--kafka-version", self.kafka.version, "--metadata", self.kafka.metadata]
            system += ["--kafka-config", self.config]
        return [
            sys.executable, "-m", "harness", "run", *system,
            "--workload", self.workload, "--store", self.store, "--nemesis", self.nemesis,
            "--time-limit", f"{self.time_limit:g}",
            "--seed", str(self.seed), "--results", results, "--cluster-name", cluster,
            *extra,
        ]  # fmt: skip


def parse_kafka(text: str) -> Kafka:
    """Takes VERSION or VERSION:METADATA. Returns the Kafka it names; raises ValueError."""
    version, _, given = text.partition(":")
    if (unknown := version_problem(version)) is not None:
        raise ValueError(unknown)
    metadata = given or default_metadata(version)
    problem = release_problem(version, metadata)
    if problem is not None:
        raise ValueError(problem)
    return Kafka(version, cast(Metadata, metadata))  # release_problem checked the mode


GROUPED_WORKLOADS = ("queue", "share")
"""The workloads whose clients can join a group (the queue one with --sub-via subscribe):
the only ones the group faults are planned for."""
GROWING_WORKLOADS = ("queue", "share")
"""The workloads whose topic add-partitions can grow (a queue's, one partition per key)."""


def config_fits(system: System, config: str) -> bool:
    """Returns whether a system runs a config: a Kafka profile its release can run (eligible
    leader replicas need 4.0), or on NATS a sync profile."""
    if isinstance(system, Nats):
        return config in NATS_SYNCS
    return (
        config in PROFILES
        and profile_problem(PROFILES[config], system.version, system.metadata) is None
    )


def plan(
    kafkas: Sequence[System],
    workloads: Sequence[str],
    stores: Sequence[str],
    nemeses: Sequence[str],
    configs: Sequence[str],
    rounds: range,
    seed_base: int,
    time_limit: Callable[[str], float],
) -> list[Job]:
    """Takes the matrix's axes, the rounds (1-based) and each fault's time limit. Returns
    its runs round by round, the releases of one cell next to each other; faults that do
    not apply to a release's metadata mode, configs the release cannot run (eligible
    leader replicas before 4.0), group faults for workloads that join no group, and
    add-partitions for workloads without a queue's topic, and the client clock faults
    (the matrix runs no Java client) are left out (and what `harness run` refuses, by
    runnable)."""
    return [
        Job(kafka, w, s, n, c, r, seed_base + r, time_limit(n))
        for r in rounds
        for n in nemeses
        for w in workloads
        for s in stores
        for c in configs
        for kafka in kafkas
        if ONLY_ON.get(n, kafka.metadata) == kafka.metadata
        and (n not in GROUP_FAULTS or w in GROUPED_WORKLOADS)
        and (n not in EXPAND_FAULTS or w in GROWING_WORKLOADS)
        and n not in CLIENT_CLOCK_FAULTS
        and config_fits(kafka, c)
    ]


class _Refused(Exception):
    """`harness run`'s parser refused a command line."""


class _RunParser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise _Refused(message)


def run_parser() -> argparse.ArgumentParser:
    """Returns a parser of `harness run` command lines that raises instead of exiting."""
    from harness.commands import run as run_command

    parser = _RunParser(prog="harness")
    run_command.add_parser(parser.add_subparsers())
    return parser


def run_refusal(parser: argparse.ArgumentParser, job: Job, extra: Sequence[str]) -> str | None:
    """Takes run_parser(), a job and the options every run gets. Returns why `harness run`
    would refuse the job's command line at once (an option its release cannot run, say),
    or None."""
    from harness.commands.run import spec_from_args

    try:
        args = parser.parse_args(job.argv("results", "harness", extra)[3:])
        spec_from_args(args, job.seed)
    except (_Refused, ValueError) as err:
        return str(err)
    return None


def runnable(jobs: Sequence[Job], extra: Sequence[str]) -> tuple[list[Job], list[str]]:
    """Takes the planned jobs and the options every run gets. Returns the jobs `harness run`
    accepts, and one line per reason it refuses the others, naming their releases."""
    parser = run_parser()
    seen: dict[tuple[System, str, str, str, str], str | None] = {}
    kept: list[Job] = []
    refused: dict[str, list[str]] = {}
    for job in jobs:
        cell = (job.kafka, job.workload, job.store, job.nemesis, job.config)
        if cell not in seen:  # the rounds of a cell differ only in their seeds
            seen[cell] = run_refusal(parser, job, extra)
        why = seen[cell]
        if why is None:
            kept.append(job)
        elif job.kafka.label not in refused.setdefault(why, []):
            refused[why].append(job.kafka.label)
    lines = [f"left out on {', '.join(labels)}: {why}" for why, labels in refused.items()]
    return kept, lines


def worst(codes: Sequence[int]) -> int:
    """Takes the runs' exit codes. Returns the matrix's, as Jepsen's test-all: 1 if any
    run was invalid, else 2 if any unknown, else 255 if any did not finish with a
    verdict, else 0."""
    if EXIT_INVALID in codes:
        return EXIT_INVALID
    if EXIT_UNKNOWN in codes:
        return EXIT_UNKNOWN
    if any(c != EXIT_VALID for c in codes):
        return EXIT_CRASH
    return EXIT_VALID


@dataclass(frozen=True)
class _Progress:
    total: int
    started: float

    def line(self, job: Job, code: int, took: float, log: Path, done: int) -> str:
        verdict = label(code, log)
        left = (time.monotonic() - self.started) / done * (self.total - done)
        return (
            f"[{done}/{self.total}] {job.describe()}: {verdict} in {took:.0f} s"
            f" (about {left / 60:.0f} min left at this pace)"
        )


Command = Callable[[Job, str], list[str]]
"""Takes a job and the name of its lane's cluster; returns the command line to run."""


class Matrix:
    """Runs jobs on `lanes` clusters at once; each child runs in a session of its own, so
    an interrupt reaches it once, forwarded by us, and it heals and cleans up."""

    def __init__(self, jobs: list[Job], lanes: int, logs: Path, command: Command) -> None:
        self.jobs: queue.Queue[Job] = queue.Queue()
        for job in jobs:
            self.jobs.put(job)
        self.logs, self.command = logs, command
        self.codes: list[int] = []
        self._stopping = threading.Event()
        self._children: set[subprocess.Popen[bytes]] = set()
        self._lock = threading.Lock()
        self._progress = _Progress(len(jobs), time.monotonic())
        prefix = f"matrix{os.getpid()}"
        self._lanes = [
            threading.Thread(target=self._lane, args=(f"{prefix}-{i}",), daemon=True)
            for i in range(1, lanes + 1)
        ]

    def run(self) -> int:
        """Runs every job, or until interrupted (then 130). Returns the exit code."""
        self.start()
        try:
            self.wait()
        except KeyboardInterrupt:
            with signals.shielded():
                self.stop()
                self.wait()
            print(
                f"interrupted: {len(self.codes)} runs finished, {self.jobs.qsize()} not started",
                file=sys.stderr,
            )
            return EXIT_INTERRUPTED
        return worst(self.codes)

    def start(self) -> None:
        """Starts the lanes."""
        self.logs.mkdir(parents=True, exist_ok=True)
        for lane in self._lanes:
            lane.start()

    def wait(self) -> None:
        """Returns when every lane has finished (in slices, so an interrupt gets through)."""
        while any(lane.is_alive() for lane in self._lanes):
            for lane in self._lanes:
                lane.join(0.2)

    def stop(self) -> None:
        """Starts no more runs, and interrupts those in progress (each heals, cleans up
        and keeps its history, as on ^C)."""
        self._stopping.set()
        print("stopping the runs in progress (each heals and cleans up)", file=sys.stderr)
        with self._lock:
            for child in self._children:
                child.send_signal(signal.SIGINT)

    def _lane(self, cluster: str) -> None:
        while not self._stopping.is_set():
            try:
                job = self.jobs.get_nowait()
            except queue.Empty:
                return
            self._one(job, cluster)

    def _one(self, job: Job, cluster: str) -> None:
        name = f"{job.round:02d}-{job.kafka.label}-{job.workload}-{job.store}-{job.nemesis}"
        log = self.logs / f"{name}-{job.config}.log"
        began = time.monotonic()
        with self._lock:
            if self._stopping.is_set():
                return
            with open(log, "wb") as out:  # the child keeps its own copy of the file
                child = subprocess.Popen(
                    self.command(job, cluster),
                    stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                    start_new_session=True,
                )  # fmt: skip
            self._children.add(child)
        code = child.wait()
        with self._lock:
            self._children.discard(child)
            self.codes.append(code)
            took = time.monotonic() - began
            print(self._progress.line(job, code, took, log, len(self.codes)), flush=True)


def _time_limits(args: argparse.Namespace) -> Callable[[str], float]:
    overrides: dict[str, float] = {}
    for item in args.time_limit_of:
        nemesis, _, seconds = item.partition("=")
        if nemesis not in NEMESES:
            raise ValueError(f"--time-limit-of {item!r}: no fault named {nemesis!r}")
        try:
            overrides[nemesis] = positive(float)(seconds)
        except (ValueError, argparse.ArgumentTypeError) as err:
            raise ValueError(f"--time-limit-of {item!r}: {err}") from err
    return lambda nemesis: overrides.get(nemesis, args.time_limit)


def _systems(args: argparse.Namespace) -> list[System]:
    """Returns the releases the matrix runs, of its --db; raises ValueError for a config
    that is not of that db."""
    configs = NATS_SYNCS if args.db == "nats" else tuple(PROFILES)
    if wrong := [c for c in args.configs if c not in configs]:
        raise ValueError(f"--configs {' '.join(wrong)}: --db {args.db} takes {', '.join(configs)}")
    if args.db == "nats":
        return [Nats(v) for v in args.nats_versions]
    return [parse_kafka(k) for k in args.kafka]


def _command(args: argparse.Namespace) -> int:
    if args.configs is None:
        args.configs = ["default"] if args.db == "nats" else ["safe"]
    try:
        kafkas = _systems(args)
        limits = _time_limits(args)
    except ValueError as err:
        print(f"harness matrix: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    extra = args.run_args[1:] if args.run_args[:1] == ["--"] else args.run_args
    rounds = range(args.first_round, args.first_round + args.runs)
    planned = plan(
        kafkas, args.workloads, args.stores, args.nemeses, args.configs, rounds,
        args.seed_base, limits,
    )  # fmt: skip
    jobs, refused = runnable(planned, extra)
    for line in refused:
        print(f"harness matrix: {line}", file=sys.stderr)
    if planned and not jobs:
        return EXIT_BAD_INPUT
    if args.list:
        for job in jobs:
            print(job.describe())
        print(f"{len(jobs)} runs")
        return EXIT_OK
    logs = Path(args.results) / ".matrix-logs"
    print(f"matrix: {len(jobs)} runs, {args.jobs} at a time; each run's output in {logs}/")
    matrix = Matrix(jobs, args.jobs, logs, lambda job, lane: job.argv(args.results, lane, extra))
    return matrix.run()


def add_parser(sub: Any) -> None:
    """Registers `harness matrix`."""
    p = sub.add_parser(
        "matrix",
        help=SUMMARIES["matrix"],
        description=__doc__,
    )
    p.add_argument(
        "--kafka",
        nargs="+",
        default=list(MATRIX_DEFAULT),
        metavar="VERSION[:MODE]",
        help=f"releases (3.9.1 to 4.4.0; default {' '.join(MATRIX_DEFAULT)}), each with a "
        f"metadata mode ({'|'.join(METADATA_MODES)}; default: the release's own)",
    )
    p.add_argument(
        "--db",
        choices=DATABASES,
        default="kafka",
        help="the system under test (default kafka): with nats, --nats-versions are the "
        "releases and --configs the sync profiles (default, always)",
    )
    p.add_argument(
        "--nats-versions",
        nargs="+",
        choices=NATS_VERSIONS,
        default=[DEFAULT_NATS_VERSION],
        metavar="VERSION",
        help=f"nats-server releases with --db nats ({', '.join(NATS_VERSIONS)}; "
        f"default {DEFAULT_NATS_VERSION})",
    )
    p.add_argument("--workloads", nargs="+", choices=sorted(WORKLOAD_NAMES), default=["kv"])
    p.add_argument("--stores", nargs="+", choices=list(STORES), default=["linearizable"])
    p.add_argument(
        "--nemeses",
        nargs="+",
        choices=list(NEMESES),
        default=[n for n in NEMESES if n in IN_ALL and n not in GROUP_FAULTS],
        help="default: what `--nemesis all` takes, but the group faults, which need "
        "--workloads queue with `-- --sub-via subscribe`, or share (power loss, the proxy "
        "faults and the faults of several nodes at once are named one by one)",
    )
    p.add_argument(
        "--configs",
        nargs="+",
        choices=sorted({*PROFILES, *NATS_SYNCS}),
        default=None,
        help="Kafka profiles (default safe), or with --db nats sync profiles (default: default)",
    )
    p.add_argument("--runs", type=positive(int), default=1, help="rounds (default 1)")
    p.add_argument(
        "--first-round",
        type=positive(int),
        default=1,
        help="number of the first round, to add rounds to a matrix (default 1)",
    )
    p.add_argument("--seed-base", type=int, default=100, help="round r uses seed BASE+r")
    p.add_argument(
        "--time-limit",
        type=positive(float),
        default=40.0,
        help="seconds of workload per run (default 40)",
    )
    p.add_argument(
        "--time-limit-of",
        action="append",
        default=[f"{ISR_SHRINK}=60"],
        metavar="FAULT=SECONDS",
        help=f"another time limit for one fault (default {ISR_SHRINK}=60)",
    )
    p.add_argument("--jobs", type=positive(int), default=1, help="runs at once (default 1)")
    p.add_argument("--results", default="results", metavar="DIR", help="results root")
    p.add_argument("--list", action="store_true", help="print the runs and exit")
    p.add_argument(
        "run_args", nargs=argparse.REMAINDER, help="after --: more options for every `harness run`"
    )
    p.set_defaults(func=_command)
