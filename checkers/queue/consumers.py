"""The queue checker's finders of consumers stepping wrong: a poll going back to or below
an offset already read (nonmonotonic-poll), or over offsets that hold messages
(poll-skip), between two ops of one consumer or within one op (Jepsen's int- kinds).

A consumer's position in a partition is the offset it last read there in an op that
completed ok, as in Jepsen's Kafka checker (jepsen.tests.kafka,
`poll-skip+nonmonotonic-cases`: an info or failed op leaves the last reads as they
were). A poll that returned records and did not complete ok is checked against that
position, and the next poll against the same one: an aborted transaction does not
rewind the consumer (KAFKA-17582), so a consumer that goes on after it has skipped what
the aborted poll read, and is caught doing so. A boundary (an assign or rebalance that
moved the partition, a seek, a subscribe, a consumer op the reader could not follow)
forgets the position; a seek to O then reads on as if O-1 had been read. The consumers'
jumps (Steps) and the seeks' gaps are gathered in checkers/queue/scan.py's one pass.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable

from checkers.queue.cases import Case, Cases

Step = tuple[int | str, int, int, int, int, int]
"""Two records one consumer read in turn from one partition with no boundary between:
(process, partition, prior_offset, prior_index, offset, index); the prior record came
from op prior_index (or is the offset just before a seek's, from the seek op)."""
Gaps = dict[int, list[tuple[int, int]]]
"""Per partition, the (first, last) offsets some consumer's seek stepped over, sorted and
apart."""


def nonmonotonic_poll_cases(jumps: Iterable[Step]) -> Cases:
    """Takes consumer jumps. Returns each to an offset at or below the one before (kafka.clj
    poll-skip+nonmonotonic-cases :nonmonotonic; int-nonmonotonic-poll within one op)."""
    return Cases([s for s in jumps if s[4] <= s[2]], _step_case)


def poll_skip_cases(jumps: Iterable[Step], offsets: dict[int, list[int]]) -> Cases:
    """Takes consumer jumps and per partition the sorted offsets anyone saw a value at.
    Returns each jump over such offsets (kafka.clj poll-skip+nonmonotonic-cases :skip)."""

    def skipped(s: Step) -> tuple[list[int], int, int]:
        _, partition, prior, _, offset, _ = s
        held = offsets.get(partition, [])
        return held, bisect.bisect_right(held, prior), bisect.bisect_left(held, offset)

    def case(s: Step) -> Case:
        held, lo, hi = skipped(s)
        return _step_case(s) | {"skipped": held[lo : min(hi, lo + 5)], "skipped_count": hi - lo}

    found = []
    for s in jumps:
        if s[4] > s[2] + 1:
            _, lo, hi = skipped(s)
            if hi > lo:
                found.append(s)
    return Cases(found, case)


def _step_case(s: Step) -> Case:
    process, partition, prior_offset, prior_index, offset, index = s
    return {
        "process": process,
        "partition": partition,
        "prior_offset": prior_offset,
        "prior_index": prior_index,
        "offset": offset,
        "index": index,
    }


def merged_gaps(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Takes offset spans (first, last) some seeks stepped over in one partition. Returns
    them sorted and joined where they overlap or touch, for in_gap's binary search."""
    out: list[tuple[int, int]] = []
    for first, last in sorted(spans):
        if out and first <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], last))
        else:
            out.append((first, last))
    return out


def _first(span: tuple[int, int]) -> int:
    return span[0]


def in_gap(gaps: Gaps, partition: int, offset: int) -> bool:
    """Takes seek_gaps' map, a partition and an offset. Returns whether a seek stepped over
    the offset."""
    spans = gaps.get(partition)
    if not spans:
        return False
    at = bisect.bisect_right(spans, offset, key=_first) - 1
    return at >= 0 and spans[at][0] <= offset <= spans[at][1]
