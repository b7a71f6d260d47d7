"""The exit codes of every harness command, Jepsen's: 1 means a checker found the history
invalid and nothing else does. Plain constants, cheap to import before any heavy module."""

EXIT_OK = 0
EXIT_VALID = EXIT_OK
EXIT_INVALID = 1
EXIT_UNKNOWN = 2
EXIT_UNHEALTHY = 3  # `cluster status`: the cluster answers, but not every node is healthy
EXIT_INTERRUPTED = 130
EXIT_READER_GONE = 141  # 128 + SIGPIPE, what a shell reports when a pipe's reader left
EXIT_BAD_INPUT = 254  # bad arguments, a malformed history, a refused request
EXIT_CRASH = 255  # the command itself broke

WORST_FIRST = (EXIT_INVALID, EXIT_CRASH, EXIT_BAD_INPUT, EXIT_UNKNOWN, EXIT_VALID)
"""How `harness check` of many histories picks its exit code among theirs: the first of
these any of them gives. 1 first, unlike Jepsen's test-all (255, 2, 1, 0), since 1 is the
one code that says a checker found a history invalid, and one history's crash, bad input
or unknown verdict must never hide another's INVALID from a script: each is listed on
its own line, and the summary counts them. Then our crash (a bug to report), bad input
(a file to fix), unknown (checked, but nothing could be said), valid."""
