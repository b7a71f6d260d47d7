"""Linearizability per key: Wing and Gong's search with Lowe's memoisation (search.py) of
a history split by key against a model (models.py, or a user's: model_loader.py).

The face of the family: the check, its explanation (and `respelled` and `spell`, which say
a result's failures and values in its history's spelling), its steps (prepare, split_by_key,
check_key_safely, which `check --spark` runs as tasks), the models and their loader.
"""

from checkers.linearizable.checker import (
    DEFAULT_CACHE_BYTES,
    check,
    check_key_safely,
    explain,
    merge_validity,
    prepare,
    reject_unknown_ops,
    respelled,
    spell,
    split_by_key,
)
from checkers.linearizable.model_loader import ModelLoadError, is_reference, load_model
from checkers.linearizable.models import MODELS, Inconsistent, Model

__all__ = [
    "DEFAULT_CACHE_BYTES",
    "MODELS",
    "Inconsistent",
    "Model",
    "ModelLoadError",
    "check",
    "check_key_safely",
    "explain",
    "is_reference",
    "load_model",
    "merge_validity",
    "prepare",
    "reject_unknown_ops",
    "respelled",
    "spell",
    "split_by_key",
]
