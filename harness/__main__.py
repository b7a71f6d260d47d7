"""`python -m harness`: the command-line entry point."""

import os
import sys

from harness.exit_codes import EXIT_CRASH, EXIT_INTERRUPTED

# What is said when even reporting a crash failed: written as it is, with no memory to find.
_UNREPORTED = b"harness: internal error: MemoryError or a crash that could not be reported\n"

try:
    from harness import signals

    # Before the heavy imports: a process started with SIGINT ignored (any `cmd &` from
    # a script) would otherwise drop a ^C that arrives while they load.
    signals.install()
    from harness.cli import main
except KeyboardInterrupt:  # nothing has been made yet
    print("interrupted", file=sys.stderr)
    raise SystemExit(EXIT_INTERRUPTED) from None
except Exception as err:  # a broken install: a crash, never "invalid"
    print(f"harness: cannot load: {err!r}", file=sys.stderr)
    raise SystemExit(EXIT_CRASH) from None

try:
    code = main()
except Exception:  # main's own crash report failed (memory ran out again): never exit 1
    os.write(2, _UNREPORTED)
    code = EXIT_CRASH
raise SystemExit(code)
