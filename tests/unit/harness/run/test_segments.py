"""The segment reader: records of format v2 batches as a broker writes them, and every
batch it cannot read reported rather than skipped."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from harness.run.segments import read_segment
from tests.support.segment_bytes import CONTROL, TRANSACTIONAL, batch, marker


def test_records_keys_headers_and_null_values_are_read_by_offset() -> None:
    data = batch(0, [b"1", b"22"], keys=[b"k", None]) + batch(2, [None, "é".encode()])
    segment = read_segment(data)
    assert segment.records == {0: b"1", 1: b"22", 2: None, 3: "é".encode()}
    assert segment.problems == []


def test_control_batches_are_left_out_and_a_zero_tail_ends_the_file() -> None:
    data = batch(0, [b"1"]) + batch(1, [b"\x00\x00\x00\x00"], attributes=CONTROL) + bytes(64)
    assert read_segment(data).records == {0: b"1"}
    assert read_segment(b"").records == {}


def test_batches_keep_their_producer_epoch_and_transaction_marker() -> None:
    data = (
        batch(0, [b"1", b"2"], attributes=TRANSACTIONAL, producer=7, epoch=3)
        + marker(2, 0, 7, 3)
        + batch(3, [b"3"], attributes=TRANSACTIONAL, producer=7, epoch=4)
        + marker(4, 1, 7, 4)
        + batch(5, [b"4"])
    )
    segment = read_segment(data)
    described = [
        (b.first, b.last, b.producer, b.epoch, b.transactional, b.marker) for b in segment.batches
    ]
    assert described == [
        (0, 1, 7, 3, True, None),
        (2, 2, 7, 3, True, "ABORT"),
        (3, 3, 7, 4, True, None),
        (4, 4, 7, 4, True, "COMMIT"),
        (5, 5, -1, -1, False, None),
    ]
    assert segment.records == {0: b"1", 1: b"2", 3: b"3", 5: b"4"}
    assert segment.batches[0].records == {0: (None, b"1"), 1: (None, b"2")}
    assert segment.problems == []


def test_a_control_batch_of_another_kind_is_named_unknown() -> None:
    assert read_segment(marker(0, 5, 1, 0)).batches[0].marker == "UNKNOWN"


def test_unreadable_batches_are_named_not_skipped() -> None:
    compressed = read_segment(batch(0, [b"1"]) + batch(1, [b"2"], attributes=1))
    assert compressed.records == {0: b"1"}
    assert compressed.problems == ["batch at offset 1 is compressed (codec 1)"]
    assert "magic 1" in read_segment(batch(0, [b"1"], magic=1)).problems[0]
    whole = batch(0, [b"1"]) + batch(1, [b"2"])
    cut = read_segment(whole[:-3])
    assert cut.records == {0: b"1"} and "cut short" in cut.problems[0]


@given(
    st.lists(
        st.tuples(
            st.integers(0, 10**12), st.lists(st.none() | st.binary(max_size=300), min_size=1)
        ),
        max_size=8,
    )
)
def test_what_is_written_is_read_back(batches: list[tuple[int, list[bytes | None]]]) -> None:
    data, base = b"", 0
    expected: dict[int, bytes | None] = {}
    for gap, values in batches:
        base += gap
        data += batch(base, values)
        expected |= {base + i: v for i, v in enumerate(values)}
        base += len(values)
    segment = read_segment(data)
    assert segment.records == expected and segment.problems == []
