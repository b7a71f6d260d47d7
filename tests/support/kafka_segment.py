"""The head of a real segment file, as a 4.4.0 broker wrote it during a run of the
queue workload: for the tests of what a changed byte of a segment does to its batches
(nemesis/log_batches.py, nemesis/corrupt.py)."""

from __future__ import annotations

SEGMENT = bytes.fromhex(
    # The first four batches of partition 0 of a 4.4.0 run's topic, as broker n1 wrote
    # them (one record each, 70 bytes a batch): offsets 0 to 3.
    "00000000000000000000003a0000000002721d48e1000000000000000001a221344696000001a22134"
    "4696ffffffffffffffffffffffffffff0000000110000000010431310000000000000000010000003a"
    "00000000024008d03c000000000000000001a2213447bd000001a2213447bdffffffffffffffffffff"
    "ffffffff0000000110000000010431360000000000000000020000003a0000000002c288f54b000000"
    "000000000001a221344899000001a221344899ffffffffffffffffffffffffffff0000000110000000"
    "010432350000000000000000030000003a000000000253e71256000000000000000001a22134498600"
    "0001a221344986ffffffffffffffffffffffffffff00000001100000000104333300"
)
BATCH = 70
