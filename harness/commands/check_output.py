"""What `harness check` prints: one history's line (or JSON object) with the checker's
explanation, the summary over many histories, and the exit code they make together.

Every line is one line: a control character or line separator in a path (a file may be
named `a\nb.jsonl`) or a message prints as its escape, `\n`, never as a line break or a
terminal's command; JSON escapes its own.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any, Final, TextIO

from checkers import explain
from harness.commands.check_file import guess_hint
from harness.exit_codes import EXIT_BAD_INPUT, EXIT_CRASH, EXIT_UNKNOWN, WORST_FIRST
from harness.report.explain import explain as report_sentences
from harness.results import RESULTS, TEST, to_json
from harness.verdicts import (
    DURATION,
    UNKNOWN_WORD,
    VERDICT_WORDS,
    run_verdict,
    verdict_exit_code,
)
from history import STDIN_NAME

Outcome = dict[str, Any]
_BREAKING: Final = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def summary_fields(outcome: Outcome) -> Outcome:
    """Returns what the summary and the exit code need of an Outcome (a history's full
    result can be large, and there may be many)."""
    kept = ("path", "valid", DURATION, "malformed", "crash")
    return {k: outcome[k] for k in kept if k in outcome}


def report(outcome: Outcome, as_json: bool, lone: bool) -> None:
    """Prints one history's Outcome: a JSON line, or its line (with the checker's
    explanation when it is the lone history or not valid) and its problems on stderr."""
    for warning in outcome.get("warnings", []):
        say(f"harness check: {warning}", sys.stderr)
    if as_json:
        _emit(to_json(outcome), sys.stdout)  # JSON escapes every line break itself
    if "malformed" in outcome:
        say(outcome["malformed"], sys.stderr)
    elif "crash" in outcome:
        where = f"traceback in {outcome['log']}" if outcome["log"] else "no log could be written"
        say(
            f"harness check: internal error on {outcome['path']}: {outcome['crash']} ({where})",
            sys.stderr,
        )
    elif not as_json:
        for line in render(outcome, detailed=lone or run_verdict(outcome) != VERDICT_WORDS[True]):
            say(line, sys.stdout)


def say(line: str, stream: TextIO) -> None:
    """Prints a line of text as one line: control characters and line separators are
    printed as their escapes (`\n`, `\x1b`, `\u2028`)."""
    _emit(_BREAKING.sub(lambda m: m.group().encode("unicode_escape").decode(), line), stream)


def _emit(line: str, stream: TextIO) -> None:
    """Prints a line. A character the stream cannot encode (a lone surrogate from a file
    name or a JSON string) is printed as its escape, never a crash."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    print(line.encode(encoding, "backslashreplace").decode(encoding), file=stream)


def render(outcome: Outcome, detailed: bool) -> list[str]:
    """Takes a checked history's Outcome. Returns its line (verdict, path, model, format,
    ops, keys, seconds) and, when detailed, the checker's explanation below it, ending
    with the report's sentences."""
    over = "partition" if "partitions" in outcome else "key"
    keys = outcome.get("partitions", outcome.get("keys", 0))
    word = run_verdict(outcome)
    failed_guess = outcome.get("guessed") is True and word == UNKNOWN_WORD
    lines = [
        f"{word:<7} {outcome['path']}: {outcome['model']} model"
        f"{' (guessed)' if failed_guess else ''}, {outcome['format']}, {outcome['ops']} ops "
        f"over {keys} {over}{'s' if keys != 1 else ''}, {outcome['seconds']:.2f} s"
    ]
    if failed_guess:
        lines.append(f"  {guess_hint(outcome['model'])}")
    if "error" in outcome:
        return [*lines, f"  the checker failed: {outcome['error']}"]
    if detailed:
        lines.extend("  " + line for line in explain(outcome))
        if isinstance(outcome.get("groups"), dict):
            from checkers.groups import group_lines  # loaded for a consumer group's history

            lines.extend("  " + line for line in group_lines(outcome["groups"]))
        if isinstance(outcome.get("expansion"), dict):
            from checkers.groups import expansion_lines  # loaded for a grown topic's history

            lines.extend("  " + line for line in expansion_lines(outcome["expansion"]))
        lines.extend("  " + said for said in sentences(outcome))
    lines.extend(f"  timeline: {path}" for path in outcome.get("counterexamples", []))
    return lines


def sentences(outcome: Outcome) -> list[str]:
    """Takes a checked history's Outcome. Returns the report's sentences on it (what
    failed, where and why, or what was checked), with the faults and the configuration of
    the run folder it lies in, when its test.json and results.json are there."""
    sections = {"queue": "queue", "set": "lost-acks", "share": "share"}
    section = sections.get(str(outcome.get("model")), "linearizable")
    results: dict[str, Any] = {
        "valid": outcome["valid"],
        "stats": {"count": outcome.get("ops", 0)},
        section: outcome,
    }
    if isinstance(outcome.get("lost_acks"), dict):
        results["lost-acks"] = outcome["lost_acks"]
    if isinstance(outcome.get(DURATION), dict):
        results[DURATION] = outcome[DURATION]
    spec: dict[str, Any] = {}
    if outcome["path"] != STDIN_NAME:  # a history read from stdin has no run folder
        folder = Path(outcome["path"]).parent
        spec = _json_object(folder / TEST).get("spec") or {}
        if isinstance(nemesis := _json_object(folder / RESULTS).get("nemesis"), dict):
            results["nemesis"] = nemesis
    # explain(outcome) above has listed the transactions and every anomaly case.
    return report_sentences(results, spec if isinstance(spec, dict) else {}, cases_listed=True)


def _json_object(path: Path) -> dict[str, Any]:
    # The run's files are evidence beside the check: one unreadable is left out.
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    return body if isinstance(body, dict) else {}


def summary(outcomes: list[Outcome], seconds: float) -> str:
    """Takes every history's Outcome. Returns the summary line: how many of each verdict
    (incomplete and crashed only when there are some)."""
    counts = dict.fromkeys(("valid", "invalid", "unknown", "incomplete", "malformed"), 0)
    counts["crashed"] = 0
    for outcome in outcomes:
        if "malformed" in outcome:
            counts["malformed"] += 1
        elif "crash" in outcome:
            counts["crashed"] += 1
        else:
            counts[run_verdict(outcome).lower()] += 1
    rare = ("incomplete", "crashed")
    shown = ", ".join(f"{n} {word}" for word, n in counts.items() if n or word not in rare)
    return f"{len(outcomes)} histories in {seconds:.2f} s: {shown}"


def outcome_exit_code(outcome: Outcome) -> int:
    """Takes one history's Outcome. Returns its exit code: 255 when checking it broke, 254
    when it was malformed, else Jepsen's code for its verdict (0 valid, 1 invalid, 2
    unknown or INCOMPLETE)."""
    if "crash" in outcome:
        return EXIT_CRASH
    if "malformed" in outcome:
        return EXIT_BAD_INPUT
    return verdict_exit_code(run_verdict(outcome))


def exit_code(outcomes: list[Outcome]) -> int:
    """Takes every history's Outcome. Returns the worst of their exit codes in the order of
    harness.exit_codes.WORST_FIRST: 1 if any is invalid, then 255, 254, 2, 0 (2 when
    there is none: nothing was checked)."""
    codes = {outcome_exit_code(o) for o in outcomes}
    return next((code for code in WORST_FIRST if code in codes), EXIT_UNKNOWN)
