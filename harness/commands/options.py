"""Options records on the command line: every field an options record declares with
workloads.options.option becomes one argument (its flags, help with its default, type),
and the parsed arguments become the record again.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any, TypeVar

from workloads.options import FLAG, Flag

R = TypeVar("R")


def add_options(parser: Any, record: type[Any], title: str | None = None) -> None:
    """Takes a parser (or subparser), an options record's class and, when given, the
    title of the argument group its options go in. Adds one argument per declared field,
    its default the field's."""
    group = parser.add_argument_group(title) if title else parser
    for f in dataclasses.fields(record):
        flag = f.metadata.get(FLAG)
        if not isinstance(flag, Flag):
            continue
        default = flag.to_cli(f.default) if flag.to_cli else f.default
        kwargs = dict(flag.kwargs)
        if f.default is False and not kwargs:
            kwargs["action"] = "store_true"
        shown = flag.shown_default or _spelled(default)
        said = "" if f.default is False else f" (default {shown})"
        flags = flag.flags or ("--" + f.name.replace("_", "-"),)
        group.add_argument(*flags, dest=f.name, default=default, help=flag.help + said, **kwargs)
        for alias, (value, help_) in flag.aliases.items():
            group.add_argument(alias, dest=f.name, action="store_const", const=value, help=help_)


def _spelled(value: Any) -> str:
    return "none" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


def options_of(args: argparse.Namespace, record: type[R], **rest: Any) -> R:
    """Takes parsed arguments, an options record's class and its fields that are not
    options (or are given otherwise). Returns the record of what was asked."""
    values: dict[str, Any] = {}
    for f in dataclasses.fields(record):  # type: ignore[arg-type]
        flag = f.metadata.get(FLAG)
        if isinstance(flag, Flag) and f.name not in rest:
            parsed = getattr(args, f.name)
            values[f.name] = flag.to_field(parsed) if flag.to_field else parsed
    return record(**values, **rest)
