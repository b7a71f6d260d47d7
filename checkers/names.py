"""The names the command line offers for checking, in a module that imports nothing, so
that `harness check --help` lists them without loading a checker (a second of imports
under load).

registry.py holds the checker of each model name, and checkers.queue says what each
SUB_VIA means; tests/unit/test_check_startup.py checks that they agree with these.
"""

from __future__ import annotations

LINEARIZABLE_MODELS: tuple[str, ...] = ("cas-register", "register", "map", "kv-append")
"""The models checked by the per-key linearizability search (`check --spark` too)."""

MODEL_NAMES: tuple[str, ...] = (*LINEARIZABLE_MODELS, "set", "queue", "share")
"""Every built-in model, in the registry's order."""

SUB_VIA: tuple[str, ...] = ("assign", "subscribe")
"""How a queue history's consumers read: checkers.queue.SUB_VIA, spelled here too."""
