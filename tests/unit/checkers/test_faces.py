"""Each package's face (its __init__.py) is its public surface: `__all__` names exactly
the public names it holds, and each of them is there, as Hypothesis asserts of its own
strategies module. Outside code imports only these (the contracts in pyproject.toml)."""

from __future__ import annotations

import importlib
import types

import pytest

FACES = (
    "history",
    "checkers",
    "checkers.linearizable",
    "checkers.queue",
    "checkers.txn",
    "checkers.groups",
)


@pytest.mark.parametrize("name", FACES)
def test_all_is_the_public_surface(name: str) -> None:
    face = importlib.import_module(name)
    exported = set(face.__all__)
    assert len(exported) == len(face.__all__), "a name listed twice"
    assert not [n for n in exported if not hasattr(face, n)], "listed but missing"
    public = {
        n
        for n, value in vars(face).items()
        if not n.startswith("_") and not isinstance(value, types.ModuleType)
    } - {"TYPE_CHECKING"}  # a face that loads part of itself when asked (checkers.txn)
    assert public - exported == set(), "public but not listed"


def test_every_face_has_a_docstring_that_says_what_it_holds() -> None:
    for name in FACES:
        doc = importlib.import_module(name).__doc__ or ""
        assert len(doc.split()) >= 20, name
