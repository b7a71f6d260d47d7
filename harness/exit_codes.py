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
