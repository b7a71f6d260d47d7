"""Checkers: a history in, a verdict out, with no cluster. One registry of checkers
(registry.py) over four families, each a package with a face of its own: linearizable/
(per key, against a model), queue/ (Jepsen's Kafka anomalies), txn/ (Elle's dependency
cycles), groups/ (consumer and share groups); beside them the generic checks (lost
acknowledged writes, stats, latency, fault windows, recovery times, availability), Jepsen's
three-valued result and the forked processes checks may spread over.

This is the face: code outside checkers/ imports these names, or a family's face.
"""

from checkers.availability import availability_section, availability_sentence
from checkers.faults import windows as fault_windows
from checkers.fork_pool import can_fork, forked_map
from checkers.guess import QUEUE_FS, default_model
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
    LINEARIZABLE_MODELS,
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
from checkers.result import UNKNOWN, Result, Validity, check_safe, error_line, merge_valid

__all__ = [
    "CHECKERS",
    "LINEARIZABLE_MODELS",
    "QUEUE_FS",
    "RECOVERY_TIMES",
    "RUN_CHECKERS",
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
    "check_safe",
    "checker_for",
    "compose",
    "default_model",
    "error_line",
    "explain",
    "fault_windows",
    "forked_map",
    "leader_samples",
    "load_user_model",
    "merge_valid",
    "op_spans",
    "queue_partitions",
    "recovery_times",
    "run_checker",
    "section_of",
]
