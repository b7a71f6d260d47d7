"""Porcupine (github.com/anishathalye/porcupine, the version bench/porcupine/go.mod pins)
beside `harness check`: both check the same files, one after the other, for several
rounds in one run; prints each side's median and ours/Porcupine's per corpus, and our
start-up over Python's own.

Run: .venv/bin/python bench/bench_porcupine.py [--rounds 3] [--guard | --update-guard]
(`make bench-guard` runs it with --guard). It builds bench/porcupine/ with Go into
build/porcupine/ and reads Porcupine's test corpus from the Go module cache.

The corpora: Porcupine's Jepsen etcd logs (test_data/jepsen, the 102 that are not empty),
checked with its etcd model and our cas-register model; its kv logs (test_data/kv, up to
2,024 ops over 10 keys), its kv model and our kv-append; each of the two again with only
the files Porcupine judges valid (`-valid`: both sides search every key through, as
Porcupine stops at the first invalid key and ours does not, and ours draws nothing); a
3,000-op register history from bench/hard_register.py that Porcupine cannot decide within
the time limit; and start-up: `harness check --help` and `harness check` of a 10-op
history, each less `python -c pass`. Each side runs as a whole process on one core
(`--jobs 1`; GOMAXPROCS=1), ours through the command line only. Ours writes each invalid
key's counterexample into one viewer (HTML, as `harness check` does without --png) in a temporary
folder; Porcupine draws nothing. A file on which the two give opposite verdicts is printed
and fails the run (exit 1).

The figures are of CPU seconds (user and system), which a loaded machine barely moves,
where it may double a wall time; medians of both are printed. A ratio is the median over
rounds of each round's ours/Porcupine's. Porcupine runs the hard history once, to show
that it times out; the hard figure is ours over Porcupine's time on the etcd logs in the
same round. --guard compares the figures with bench/guard.json (bench/porcupine_guard.py)
and exits 1 if any worsened by more than its tolerance.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hard_register import Shape, write_register_log
from porcupine_guard import Committed, load_guard, regressions, save_guard

ROOT = Path(__file__).resolve().parent.parent
DRIVER_SOURCE = ROOT / "bench" / "porcupine"
DRIVER = ROOT / "build" / "porcupine" / "porcupine-driver"
PORCUPINE = "github.com/anishathalye/porcupine"
HARD_SEED = 2  # a history ours decides in seconds (hard_register.py's defaults)
TINY = Shape(ops=10, concurrency=2, timeouts=0.0)
STARTUP_RUNS = 3  # of each start-up command per round: they take a fraction of a second
VERDICTS = {True: "valid", False: "invalid", "unknown": "unknown"}


@dataclass(frozen=True, slots=True)
class Corpus:
    """Files both sides check: the driver's model for them, ours, the time limit, and the
    corpus whose Porcupine time our time is divided by when it is not this one's (then
    Porcupine checks this one once, to show it cannot decide it)."""

    name: str
    files: tuple[str, ...]
    theirs: str
    ours: str
    time_limit: float | None = None
    against: str | None = None


@dataclass(frozen=True, slots=True)
class Timing:
    """A process's wall seconds, and its CPU seconds (user and system, its own and those of
    the processes it waited for)."""

    wall: float
    cpu: float


@dataclass(slots=True)
class Runs:
    """One side's runs of one corpus: a Timing per round, the last verdict per file."""

    timings: list[Timing] = field(default_factory=list)
    verdicts: dict[str, str] = field(default_factory=dict)


def go(*args: str) -> str:
    """Runs `go ARGS` in bench/porcupine/. Returns its output; exits naming the command
    when go is missing or fails."""
    try:
        done = subprocess.run(["go", *args], cwd=DRIVER_SOURCE, capture_output=True, text=True)
    except FileNotFoundError:
        sys.exit("bench_porcupine: no `go` on PATH (`make bench-guard` installs Go)")
    if done.returncode != 0:
        sys.exit(f"bench_porcupine: go {' '.join(args)} failed:\n{done.stderr.strip()}")
    return done.stdout


def porcupine_test_data() -> tuple[str, Path]:
    """Builds the driver, which downloads Porcupine as go.mod pins it. Returns Porcupine's
    version and its test_data folder in the Go module cache."""
    go("build", "-buildvcs=false", "-o", str(DRIVER), ".")
    module = json.loads(go("list", "-m", "-json", PORCUPINE))
    return module["Version"], Path(module["Dir"]) / "test_data"


def timed(command: list[str], env: dict[str, str] | None = None) -> tuple[Timing, str]:
    """Runs command from the checkout. Returns its Timing and its stdout; exits unless it
    exited 0, 1 or 2 (a verdict)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    if done.returncode not in (0, 1, 2):
        sys.exit(
            f"bench_porcupine: {' '.join(command[:6])} ... exited {done.returncode}:\n"
            f"{done.stderr.strip()[-2000:]}"
        )
    return Timing(wall, cpu), done.stdout


def run_porcupine(corpus: Corpus) -> tuple[Timing, dict[str, str]]:
    """Checks corpus with the driver on one core. Returns its Timing and verdicts."""
    command = [str(DRIVER), "-model", corpus.theirs]
    if corpus.time_limit is not None:
        command += ["-timeout", f"{corpus.time_limit}s"]
    timing, out = timed([*command, *corpus.files], {**os.environ, "GOMAXPROCS": "1"})
    return timing, {f["path"]: f["verdict"] for f in json.loads(out)["files"]}


def run_ours(corpus: Corpus, drawings: Path) -> tuple[Timing, dict[str, str]]:
    """Checks corpus with `harness check` in one process. Returns its Timing and verdicts."""
    command = [sys.executable, "-m", "harness", "check", "--jobs", "1", "--json"]
    command += ["--out", str(drawings), "--model", corpus.ours]
    if corpus.time_limit is not None:
        command += ["--time-limit", str(corpus.time_limit)]
    timing, out = timed([*command, *corpus.files])
    outcomes = [json.loads(line) for line in out.splitlines() if line.strip()]
    return timing, {o["path"]: VERDICTS.get(o["valid"], str(o["valid"])) for o in outcomes}


def disagreements(ours: dict[str, str], theirs: dict[str, str]) -> list[str]:
    """Takes each side's verdict per file. Returns a line for each file one side judged
    valid and the other invalid, or only one side judged (unknown agrees with anything:
    it only means a side ran out of time or memory)."""
    lines = []
    for path in sorted(ours.keys() | theirs.keys()):
        pair = {ours.get(path, "not checked"), theirs.get(path, "not checked")}
        if pair == {"valid", "invalid"} or "not checked" in pair:
            lines.append(
                f"{path}: Porcupine {theirs.get(path, 'not checked')}, "
                f"harness check {ours.get(path, 'not checked')}"
            )
    return lines


def startup_commands(tiny: Path) -> dict[str, list[str]]:
    """Returns the start-up commands by name: the interpreter alone first."""
    harness = [sys.executable, "-m", "harness", "check"]
    return {
        "python -c pass": [sys.executable, "-c", "pass"],
        "startup-help": [*harness, "--help"],
        "startup-check": [*harness, "--jobs", "1", str(tiny)],
    }


def corpora(test_data: Path, hard: Path, time_limit: float) -> list[Corpus]:
    """Returns the corpora: Porcupine's etcd logs and kv logs, each followed by the files
    of it Porcupine judges valid (which both sides search through, and ours draws nothing
    for), and the hard history."""
    # etcd_095.log is empty, and Porcupine's tests skip it.
    logs = [p for p in sorted((test_data / "jepsen").glob("etcd_*.log")) if p.stat().st_size]
    kv = sorted((test_data / "kv").glob("*.txt"))
    out = []
    for name, files, theirs, ours in (
        ("etcd", logs, "etcd", "cas-register"),
        ("kv", kv, "kv", "kv-append"),
    ):
        corpus = Corpus(name, tuple(str(p) for p in files), theirs, ours)
        _, verdicts = run_porcupine(corpus)
        valid = tuple(p for p in corpus.files if verdicts[p] == "valid")
        out += [corpus, Corpus(f"{name}-valid", valid, theirs, ours)]
    return [*out, Corpus("hard", (str(hard),), "etcd", "cas-register", time_limit, "etcd")]


def measure(
    rounds: int, all_corpora: list[Corpus], tiny: Path, drawings: Path
) -> tuple[dict[str, tuple[Runs, Runs]], dict[str, list[Timing]]]:
    """Runs every corpus on both sides, then the start-up commands, rounds times. Returns
    (Porcupine's runs, ours) per corpus and the start-up Timings per command. Porcupine's
    side of a corpus measured against another runs in the first round only."""
    runs = {c.name: (Runs(), Runs()) for c in all_corpora}
    startup: dict[str, list[Timing]] = {name: [] for name in startup_commands(tiny)}
    for round_no in range(1, rounds + 1):
        for corpus in all_corpora:
            theirs, ours = runs[corpus.name]
            said = "not run again"
            if round_no == 1 or corpus.against is None:
                timing, theirs.verdicts = run_porcupine(corpus)
                theirs.timings.append(timing)
                said = f"{timing.cpu:.2f} s CPU, {timing.wall:.2f} s wall"
            timing, ours.verdicts = run_ours(corpus, drawings)
            ours.timings.append(timing)
            print(
                f"round {round_no} {corpus.name}: Porcupine {said}; harness check "
                f"{timing.cpu:.2f} s CPU, {timing.wall:.2f} s wall",
                file=sys.stderr,
            )
        for _ in range(STARTUP_RUNS):
            for name, command in startup_commands(tiny).items():
                startup[name].append(timed(command)[0])
    return runs, startup


def figures(
    all_corpora: list[Corpus], runs: dict[str, tuple[Runs, Runs]], startup: dict[str, list[Timing]]
) -> dict[str, float]:
    """Returns the guarded figures, all of CPU seconds: per corpus the median of each
    round's ours over Porcupine's (on the corpus it is measured against), and each start-up
    command's median less the interpreter's."""
    out = {}
    for corpus in all_corpora:
        ours = runs[corpus.name][1].timings
        theirs = runs[corpus.against or corpus.name][0].timings
        out[corpus.name] = statistics.median(
            o.cpu / t.cpu for o, t in zip(ours, theirs, strict=True)
        )
    python = _median(startup["python -c pass"])
    for name, timings in startup.items():
        if name.startswith("startup-"):
            out[name] = _median(timings).cpu - python.cpu
    return out


def _median(timings: list[Timing]) -> Timing:
    return Timing(
        statistics.median(t.wall for t in timings), statistics.median(t.cpu for t in timings)
    )


def _seconds(runs: Runs, time_limit: float | None) -> str:
    if "unknown" in runs.verdicts.values() and time_limit is not None:
        return f"timeout ({time_limit:g} s)"
    median = _median(runs.timings)
    return f"{median.cpu:.2f} s ({median.wall:.2f} s)"


def table(
    all_corpora: list[Corpus],
    runs: dict[str, tuple[Runs, Runs]],
    startup: dict[str, list[Timing]],
    measured: dict[str, float],
) -> list[str]:
    """Returns the results as Markdown: a row per corpus, then the start-up rows."""
    lines = [
        "| corpus | files | verdicts (valid/invalid/unknown), Porcupine; ours | "
        "Porcupine, CPU (wall) | harness check, CPU (wall) | ours/Porcupine's CPU |",
        "|---|---|---|---|---|---|",
    ]
    for corpus in all_corpora:
        theirs, ours = runs[corpus.name]
        against = f" of Porcupine's {corpus.against}" if corpus.against else ""
        counts = "; ".join(
            "/".join(
                str(list(r.verdicts.values()).count(v)) for v in ("valid", "invalid", "unknown")
            )
            for r in (theirs, ours)
        )
        lines.append(
            f"| {corpus.name} | {len(corpus.files)} | {counts} | "
            f"{_seconds(theirs, corpus.time_limit)} | {_seconds(ours, corpus.time_limit)}"
            f" | {measured[corpus.name]:.3g}x{against} |"
        )
    lines += [
        "",
        "| start-up | CPU | wall | CPU over `python -c pass` |",
        "|---|---|---|---|",
    ]
    for name, timings in startup.items():
        median = _median(timings)
        over = f"{measured[name]:.3f} s" if name in measured else ""
        lines.append(f"| {name} | {median.cpu:.3f} s | {median.wall:.3f} s | {over} |")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--time-limit",
        type=float,
        default=120.0,
        metavar="S",
        help="seconds each side may take on the hard history (default 120)",
    )
    choice = parser.add_mutually_exclusive_group()
    choice.add_argument(
        "--guard",
        action="store_true",
        help="exit 1 when a figure is worse than bench/guard.json allows",
    )
    choice.add_argument(
        "--update-guard", action="store_true", help="write this run's figures into bench/guard.json"
    )
    args = parser.parse_args()
    version, test_data = porcupine_test_data()
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bench-porcupine-") as temp:
        hard, tiny = Path(temp) / "hard-register.log", Path(temp) / "tiny-register.log"
        write_register_log(hard, Shape(), HARD_SEED)
        write_register_log(tiny, TINY, HARD_SEED)
        all_corpora = corpora(test_data, hard, args.time_limit)
        runs, startup = measure(args.rounds, all_corpora, tiny, Path(temp) / "drawings")
    measured = figures(all_corpora, runs, startup)
    machine = (
        f"{os.cpu_count()} cores, load average {load[0]:.1f} before and "
        f"{os.getloadavg()[0]:.1f} after, --rounds {args.rounds}"
    )
    print(f"Porcupine {version} beside harness check, one core each; {machine}")
    print("\n".join(table(all_corpora, runs, startup, measured)))
    failed = False
    for corpus in all_corpora:
        theirs, ours = runs[corpus.name]
        for line in disagreements(ours.verdicts, theirs.verdicts):
            print(f"VERDICTS DIFFER ({corpus.name}): {line}", file=sys.stderr)
            failed = True
    if args.update_guard:
        note = f"{datetime.now(UTC):%Y-%m-%d}, {machine}"
        save_guard(Committed(measured, load_guard().tolerance, note))
    if args.guard:
        committed = load_guard()
        problems = regressions(committed, measured)
        for line in problems:
            print(f"GUARD: {line}", file=sys.stderr)
        print(
            f"guard: {'FAILED' if problems else 'passed'} against bench/guard.json "
            f"({committed.measured}; tolerance {committed.tolerance:.0%})"
        )
        failed = failed or bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
