"""to_json writes what it always wrote: NaN and infinities as null, keys as str() has
them, tuples as lists, subclasses as their bases, and the rest through the default. Its
walk over a result tells exact classes first (for speed); this holds it to the plain walk
it replaced, on any nesting of such values."""

from __future__ import annotations

import json
import math
from collections import OrderedDict
from enum import IntEnum
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.results import _jsonable, to_json
from history.edn_values import Spelled  # a str subclass a result holds


class _Level(IntEnum):
    LOW = 1


def _plain_finite(value: Any) -> Any:
    # The walk as it was before it told exact classes first.
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _plain_finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain_finite(v) for v in value]
    return value


_LEAF = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),  # NaN and infinities among them
    st.text(max_size=3),
    st.builds(Spelled, st.text(max_size=3)),
    st.just(_Level.LOW),
    st.frozensets(st.integers(), max_size=2),  # through the default
)
_KEY = st.one_of(st.text(max_size=2), st.integers(), st.booleans(), st.none(), st.floats())
_BODY = st.recursive(
    _LEAF,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(_KEY, inner, max_size=3),
        st.dictionaries(st.text(max_size=2), inner, max_size=3).map(OrderedDict),
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(_BODY)
def test_to_json_writes_what_the_plain_walk_wrote(body: Any) -> None:
    assert to_json(body) == json.dumps(_plain_finite(body), default=_jsonable)
    assert to_json(body, indent=2) == json.dumps(_plain_finite(body), indent=2, default=_jsonable)
