"""Record encoding round trips, tombstones, malformed messages and the key-to-partition hash."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kvstore.records import (
    BARRIER_KEY,
    Barrier,
    Command,
    MalformedRecord,
    Record,
    Write,
    decode,
    encode,
    partition_for,
)

keys = st.one_of(st.text(max_size=10), st.integers(-(10**6), 10**6))
values = st.one_of(st.text(max_size=10), st.integers(-(10**6), 10**6))
attempts = st.text(min_size=1, max_size=20)
records: st.SearchStrategy[Record] = st.one_of(
    st.builds(Write, keys, st.integers(1, 10**9), st.none() | values, attempts),
    st.builds(
        Command,
        keys,
        st.sampled_from(["put", "put-if-absent", "replace", "remove"]),
        st.none() | values,
        st.none() | values,
        attempts,
    ),
    st.builds(Barrier, attempts),
)


@given(records)
def test_every_record_survives_encoding(record: Record) -> None:
    key, value = encode(record)
    assert key == (BARRIER_KEY if isinstance(record, Barrier) else record.attempt.encode())
    assert decode(value) == record


def test_a_tombstone_decodes_to_nothing() -> None:
    assert decode(None) is None


@pytest.mark.parametrize(
    "raw",
    [
        b"not json",
        b"{}",
        b'{"t": "w", "k": "a"}',
        b'{"t": "z", "a": "x"}',
        b'{"t":"w","k":"a","v":0,"x":1,"a":"x"}',
        b'{"t":"w","k":[1],"v":1,"x":1,"a":"x"}',
        b'{"t":"c","k":"a","f":"cas","o":1,"n":2,"a":"x"}',
    ],
)
def test_anything_else_is_malformed(raw: bytes) -> None:
    with pytest.raises(MalformedRecord):
        decode(raw)


@given(keys, st.integers(1, 64))
def test_a_key_always_maps_to_the_same_partition_in_range(key: str | int, n: int) -> None:
    assert 0 <= partition_for(key, n) < n
    assert partition_for(key, n) == partition_for(key, n)


def test_keys_spread_over_partitions() -> None:
    assert {partition_for(f"k{i}", 4) for i in range(100)} == {0, 1, 2, 3}
