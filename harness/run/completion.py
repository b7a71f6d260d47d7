"""Whether a run's workload ran its planned time: results.json's `duration` section, which
makes a run that stopped short INCOMPLETE (harness.verdicts.run_verdict)."""

from __future__ import annotations

from typing import Any

SLACK_S = 0.5
"""The runner stops at the time limit and waits for the ops in flight: a workload that ran
this much less than planned was stopped by something else."""


def duration_section(
    planned_s: float, ran_s: float | None, stopped_by: str | None
) -> dict[str, Any]:
    """Takes the workload's planned seconds, the seconds it ran (None: it never started)
    and what stopped the run before its final reads (e.g. "interrupted by SIGINT during
    the workload"; None when nothing did). Returns the duration section: planned_s, ran_s,
    complete, and when not complete the reason in words."""
    ran = 0.0 if ran_s is None else round(ran_s, 3)
    section: dict[str, Any] = {"planned_s": planned_s, "ran_s": ran, "complete": True}
    if stopped_by is None and ran + SLACK_S >= planned_s:
        return section
    what = stopped_by or "the workload stopped early"
    return section | {
        "complete": False,
        "reason": f"{what}; the workload ran {ran:.1f} s of {planned_s:g} s",
    }
