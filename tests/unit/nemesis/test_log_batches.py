"""nemesis/log_batches.py without Docker: the CRC-32C is Kafka's, and a changed byte is
placed in its batch and field, the batch's CRC failing exactly when the byte is one the
CRC covers."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from nemesis.log_batches import batches_at, crc32c
from tests.support.kafka_segment import BATCH, SEGMENT


def test_the_crc_is_castagnolis_and_kafkas_batches_pass_it() -> None:
    assert crc32c(b"123456789") == 0xE3069283  # the standard check value of CRC-32C
    found = batches_at(SEGMENT, [b * BATCH + 30 for b in range(4)])
    assert [b["offsets"] for b in found] == [[0, 0], [1, 1], [2, 2], [3, 3]]
    assert all(b["crc_ok"] for b in found)


@given(st.integers(0, len(SEGMENT) - 1), st.integers(0, 7))
def test_a_flip_fails_its_batchs_crc_exactly_where_the_crc_covers(at: int, bit: int) -> None:
    changed = bytearray(SEGMENT)
    changed[at] ^= 1 << bit
    (found,) = batches_at(bytes(changed), [at])
    inside = at % BATCH
    if inside < 12:  # baseOffset, batchLength: a broken length hides the batch
        assert found.get("field") in ("baseOffset", "batchLength") or "unread" in found
        return
    assert found["batch_position"] == at - inside
    assert found["crc_ok"] is (inside < 17)  # partitionLeaderEpoch and magic: not covered
    covered = found["field"] == "the part the CRC covers"
    assert covered is (inside >= 21)


def test_a_cut_through_a_batch_leaves_a_tail_no_batch_is_read_from() -> None:
    cut = SEGMENT[: 2 * BATCH + 40]
    found = batches_at(cut, [BATCH + 1, len(cut) - 1])
    assert found[0]["offsets"] == [1, 1] and found[0]["crc_ok"]
    assert found[1] == {
        "position": len(cut) - 1,
        "unread": "after file position 140, where a batch claims 58 bytes",
    }
    assert batches_at(SEGMENT + bytes(64), [len(SEGMENT) + 3]) == [
        {
            "position": len(SEGMENT) + 3,
            "unread": f"in the zero tail after file position {len(SEGMENT)}",
        }
    ]
