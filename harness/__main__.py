"""`python -m harness`: the command-line entry point."""

import sys

try:
    from harness import signals

    # Before the heavy imports: a process started with SIGINT ignored (any `cmd &` from
    # a script) would otherwise drop a ^C that arrives while they load.
    signals.install()
    from harness.cli import main
except KeyboardInterrupt:  # nothing has been made yet
    print("interrupted", file=sys.stderr)
    raise SystemExit(130) from None
except Exception as err:  # a broken install: a crash (255), never "invalid" (1)
    print(f"harness: cannot load: {err!r}", file=sys.stderr)
    raise SystemExit(255) from None

raise SystemExit(main())
