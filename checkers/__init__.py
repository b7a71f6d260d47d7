"""Checkers: a history in, a verdict out, with no cluster. One registry of checkers
(registry.py) over four families, each a package with a face of its own: linearizable/
(per key, against a model), queue/ (Jepsen's Kafka anomalies), txn/ (Elle's dependency
cycles), groups/ (consumer and share groups); beside them the generic checks (lost
acknowledged writes, replicas' agreement from their disks, stats, latency, fault
windows, recovery times, availability), Jepsen's three-valued result and the forked
processes checks may spread over.

This is the face: code outside checkers/ imports these names, or a family's face. Each
name is imported from its module when first asked for (PEP 562), so that the command
line's names (names.py) cost nothing, and a check loads only the modules it uses.
"""

import importlib
from typing import TYPE_CHECKING

from checkers.names import LINEARIZABLE_MODELS, MODEL_NAMES, SUB_VIA

if TYPE_CHECKING:
    from checkers.availability import availability_section, availability_sentence
    from checkers.faults import windows as fault_windows
    from checkers.fork_pool import can_fork, forked_map
    from checkers.gone import gone_error
    from checkers.guess import QUEUE_FS, default_model
    from checkers.lost_store import explain as lost_store_lines
    from checkers.perf import Sample
    from checkers.recovery import TIMES as RECOVERY_TIMES
    from checkers.recovery import (
        Touched,
        leader_samples,
        op_spans,
        queue_partitions,
        recovery_times,
    )
    from checkers.registry import (
        CHECKERS,
        RUN_CHECKERS,
        Checked,
        Checker,
        CheckOptions,
        ModelChoice,
        Reading,
        analyse,
        check_history,
        checker_for,
        compose,
        explain,
        load_user_model,
        run_checker,
        section_of,
    )
    from checkers.replicas import check_replicas
    from checkers.result import (
        UNKNOWN,
        Result,
        Validity,
        check_safe,
        error_line,
        merge_valid,
    )
    from checkers.split_brain import check as check_split_brain
    from checkers.split_brain import explain as split_brain_lines

_HOMES: dict[str, tuple[str, str]] = {
    **{
        name: ("checkers.availability", name)
        for name in ("availability_section", "availability_sentence")
    },
    "fault_windows": ("checkers.faults", "windows"),
    "RECOVERY_TIMES": ("checkers.recovery", "TIMES"),
    **{name: ("checkers.fork_pool", name) for name in ("can_fork", "forked_map")},
    **{name: ("checkers.guess", name) for name in ("QUEUE_FS", "default_model")},
    "Sample": ("checkers.perf", "Sample"),
    "gone_error": ("checkers.gone", "gone_error"),
    "lost_store_lines": ("checkers.lost_store", "explain"),
    "check_split_brain": ("checkers.split_brain", "check"),
    "split_brain_lines": ("checkers.split_brain", "explain"),
    "check_replicas": ("checkers.replicas", "check_replicas"),
    **{
        name: ("checkers.recovery", name)
        for name in ("Touched", "leader_samples", "op_spans", "queue_partitions", "recovery_times")
    },
    **{
        name: ("checkers.registry", name)
        for name in (
            "CHECKERS",
            "RUN_CHECKERS",
            "Checked",
            "Checker",
            "CheckOptions",
            "ModelChoice",
            "Reading",
            "analyse",
            "check_history",
            "checker_for",
            "compose",
            "explain",
            "load_user_model",
            "run_checker",
            "section_of",
        )
    },
    **{
        name: ("checkers.result", name)
        for name in ("UNKNOWN", "Result", "Validity", "check_safe", "error_line", "merge_valid")
    },
}
"""Where each name of the face is defined: (module, its name there)."""


def __getattr__(name: str) -> object:
    """Imports a name of the face from its module the first time it is asked for."""
    try:
        module, attribute = _HOMES[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value  # asked once: the next time finds it without this call
    return value


__all__ = [
    "CHECKERS",
    "LINEARIZABLE_MODELS",
    "MODEL_NAMES",
    "QUEUE_FS",
    "RECOVERY_TIMES",
    "RUN_CHECKERS",
    "SUB_VIA",
    "UNKNOWN",
    "CheckOptions",
    "Checked",
    "Checker",
    "ModelChoice",
    "Reading",
    "Result",
    "Sample",
    "Touched",
    "Validity",
    "analyse",
    "availability_section",
    "availability_sentence",
    "can_fork",
    "check_history",
    "check_replicas",
    "check_safe",
    "check_split_brain",
    "checker_for",
    "compose",
    "default_model",
    "error_line",
    "explain",
    "fault_windows",
    "forked_map",
    "gone_error",
    "leader_samples",
    "load_user_model",
    "lost_store_lines",
    "merge_valid",
    "op_spans",
    "queue_partitions",
    "recovery_times",
    "run_checker",
    "section_of",
    "split_brain_lines",
]
