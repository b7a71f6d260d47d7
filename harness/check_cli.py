"""`harness check PATH`: checks a recorded history (jsonl, EDN or Jepsen log) with no cluster.

Runs the linearizability search for register, cas-register and map histories, or
the lost-acknowledged-writes check for sets; exits 0 valid, 1 invalid, 2 unknown.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from checkers import linearizable, lost_acks
from checkers.models import MODELS
from checkers.result import check_safe
from checkers.timeline import render_counterexample
from harness.argtypes import positive
from harness.history import History, HistoryError, load

EXIT_VALID, EXIT_INVALID, EXIT_UNKNOWN = 0, 1, 2
EXIT_BAD_INPUT = 254
EXIT_INTERRUPTED = 130
LINEARIZABLE_MODELS = ("cas-register", "register", "map")
MODEL_NAMES = (*LINEARIZABLE_MODELS, "set")
MAP_FS = frozenset({"get", "put", "put-if-absent", "replace", "remove"})
SET_FS = frozenset({"add", "send", "read"})


def add_parser(subparsers: Any) -> None:
    """Takes argparse's subparsers; registers `check` with `func(args) -> exit code`."""
    parser = subparsers.add_parser(
        "check",
        help="check a recorded history",
        description="Check a history (history.jsonl, Jepsen history.edn or a Jepsen log, "
        "or a results folder holding one). Exits 0 valid, 1 invalid, 2 unknown, "
        "254 bad arguments or input.",
    )
    parser.add_argument("path", help="a history file or a results folder")
    parser.add_argument(
        "--model",
        choices=MODEL_NAMES,
        help="what the history is checked against (default: guessed from its operations; "
        "map for get/put/..., set for add/send, else cas-register)",
    )
    parser.add_argument(
        "--time-limit",
        type=positive(float),
        metavar="S",
        help="seconds of search per key before its verdict is unknown",
    )
    parser.add_argument("--jobs", type=positive(int), metavar="N", help="keys checked in parallel")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument(
        "--out",
        metavar="DIR",
        help="where counterexample timelines (PNG, HTML) go (default: beside the history)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Takes parsed `check` arguments; prints the verdict; returns the exit code."""
    try:
        return _check_and_report(args)
    except KeyboardInterrupt:
        print("harness check: interrupted (Ctrl-C) before a verdict", file=sys.stderr)
        return EXIT_INTERRUPTED


def _check_and_report(args: argparse.Namespace) -> int:
    try:
        history = load(args.path)
    except HistoryError as e:
        print(str(e), file=sys.stderr)
        return EXIT_BAD_INPUT
    model = args.model or default_model(history)
    result = check_history(history, model, time_limit=args.time_limit, jobs=args.jobs)
    out_dir = Path(args.out) if args.out else Path(history.path).parent
    result["counterexamples"] = draw_counterexamples(result, out_dir)
    if args.json:
        print(json.dumps(result, indent=2, default=_jsonable))
    else:
        print("\n".join(render(result, history)))
    return exit_code(result["valid"])


def draw_counterexamples(result: dict[str, Any], out_dir: Path) -> list[str]:
    """Takes a linearizability result; draws each invalid key's timeline into out_dir and
    returns the files written. A folder that cannot be written loses only the drawings."""
    written: list[str] = []
    for failure in result.get("failures", []):
        try:
            written += [str(p) for p in render_counterexample(failure, out_dir)]
        except OSError as err:
            print(
                f"harness check: could not draw a counterexample in {out_dir}: {err}",
                file=sys.stderr,
            )
            break
    return written


def default_model(history: History) -> str:
    """Takes a history; returns the model its operation names suggest."""
    nemesis = {id(e) for e in history.nemesis}
    fs = {e["f"] for e in history.events if id(e) not in nemesis}
    if fs & MAP_FS:
        return "map"
    lists_read = any(op.f == "read" and isinstance(op.value, list) for op in history.ops)
    if fs and fs <= SET_FS and (fs & {"add", "send"} or lists_read):
        return "set"
    return "cas-register"


def check_history(
    history: History, model: str, *, time_limit: float | None = None, jobs: int | None = None
) -> dict[str, Any]:
    """Takes a history and a model name; returns the checker's result with `model` added.

    A checker that raises gives `valid: "unknown"` with the error.
    """
    if model == "set":
        result = check_safe(lost_acks.check, history.events)
    else:
        result = check_safe(_check_linearizable, history, model, time_limit, jobs)
    return {"model": model, **result}


def _check_linearizable(
    history: History, model: str, time_limit: float | None, jobs: int | None
) -> dict[str, Any]:
    return linearizable.check(history.ops, MODELS[model], time_limit=time_limit, jobs=jobs)


def render(result: dict[str, Any], history: History) -> list[str]:
    """Takes a check result and its history; returns the plain-text report lines."""
    keys = result.get("keys", 0)
    lines = [
        f"{_verdict_word(result['valid'])} ({result['model']} model, {history.format} history "
        f"{history.path})",
        f"checked {result.get('ops', len(history.ops))} ops over {keys} "
        f"key{'s' if keys != 1 else ''} in {result.get('time', 0.0):.2f} s",
    ]
    if "error" in result:
        lines.append(f"  the checker failed: {result['error']}")
        return lines
    lines.extend("  " + line for line in _explain(result))
    lines.extend(f"  timeline: {path}" for path in result.get("counterexamples", []))
    return lines


def _explain(result: dict[str, Any]) -> list[str]:
    if result["model"] == "set":
        return lost_acks.explain(result)
    return linearizable.explain(result)


def _verdict_word(valid: Any) -> str:
    return {True: "VALID", False: "INVALID"}.get(valid, "UNKNOWN")


def exit_code(valid: Any) -> int:
    """Takes a validity; returns Jepsen's exit code for it (0 valid, 1 invalid, 2 unknown)."""
    if valid is True:
        return EXIT_VALID
    return EXIT_INVALID if valid is False else EXIT_UNKNOWN


def _jsonable(value: Any) -> Any:
    if isinstance(value, set | frozenset):
        return sorted(value, key=repr)
    return repr(value)
