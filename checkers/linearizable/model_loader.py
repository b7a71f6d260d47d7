"""Models written outside the project, for `harness check --model FILE.py:NAME` or
`--model package.module:NAME`.

A reference names a module (a Python file, or an importable module) and the name in it of a
`checkers.Model` (the API is in model_core.py's docstring). Loading runs the
module, once, in the process that checks; nothing is imported while arguments are parsed.
Whatever goes wrong while loading is a ModelLoadError with one line saying what: an
exception, and as much a `sys.exit()` or any BaseException; only a KeyboardInterrupt from
a real interrupt signal stays one. The model's fields are checked here because the search
trusts them: fs and reads are frozensets of operation names, the functions are callable,
the initial state is hashable. The model returned is `isolated`: its search runs in child
processes (checker.py); model_core.contained guards what of it runs in
this one.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
from dataclasses import fields
from pathlib import Path
from types import ModuleType

from checkers.linearizable.model_core import (
    Model,
    describe_error,
    interrupts_noted,
    is_real_interrupt,
)
from checkers.result import error_line

__all__ = ["ModelLoadError", "is_reference", "load_model"]


class ModelLoadError(ValueError):
    """A model reference that cannot be loaded; the message is one line for users."""


def is_reference(text: str) -> bool:
    """Takes a --model argument. Returns whether it has the shape MODULE:NAME (the module a
    file or dotted name, both parts non-empty); says nothing of whether it loads."""
    module, colon, name = text.rpartition(":")
    return bool(colon and module and name.isidentifier())


def load_model(reference: str) -> Model:
    """Takes FILE.py:NAME or package.module:NAME. Runs the module and returns its model
    NAME, isolated. Raises ModelLoadError when the module is missing or fails to import (or
    exits), has no NAME, or NAME is not a well-formed Model."""
    if not is_reference(reference):
        raise ModelLoadError(f"{reference!r} is not FILE.py:NAME or package.module:NAME")
    where, _, name = reference.rpartition(":")
    with interrupts_noted() as noted:
        try:
            module = _load_file(where) if _is_file(where) else _import(where)
        except ModelLoadError:
            raise
        except BaseException as err:  # the user's code, whatever it raises or exits with
            if is_real_interrupt(err, noted):
                raise
            raise _import_failed(where, err) from None
        try:
            return _isolated(_model_in(module, where, name))
        except ModelLoadError:
            raise
        except BaseException as err:  # its attributes, its state's __hash__: the user's code
            if is_real_interrupt(err, noted):
                raise
            raise ModelLoadError(f"loading {name} failed: {describe_error(err)}") from None


def malformed_model(model: Model) -> str | None:
    """Takes a Model. Returns why the search cannot use it (starting with the field's name),
    or None."""
    if not isinstance(model.name, str) or not model.name:
        return f"name must be a non-empty string, not {model.name!r}"
    for attr in ("fs", "reads"):
        ops = getattr(model, attr)
        if not isinstance(ops, frozenset) or not all(isinstance(f, str) for f in ops):
            return f"{attr} must be a frozenset of operation names, not {ops!r}"
    if not model.fs:
        return "fs must name at least one operation"
    if not model.reads <= model.fs:
        return f"reads must be operations of fs; {sorted(model.reads - model.fs)} are not"
    for field in fields(Model):
        hook = getattr(model, field.name)
        may_be_none = field.default is None  # mentions and rename_written
        is_hook = field.name == "step" or callable(field.default) or may_be_none
        if is_hook and not callable(hook) and not (may_be_none and hook is None):
            return f"{field.name} must be a function, not {hook!r}"
    try:
        hash(model.init)
    except TypeError:
        return f"init must be hashable (a tuple, not a list, say), not {model.init!r}"
    return None


def _model_in(module: ModuleType, where: str, name: str) -> Model:
    """Returns the well-formed Model called name in module (loaded from where); raises
    ModelLoadError."""
    if not hasattr(module, name):
        raise ModelLoadError(f"{where} has no {name} ({_models_in(module)})")
    model = getattr(module, name)
    if not isinstance(model, Model):
        raise ModelLoadError(
            f"{name} is not a checkers.linearizable.models.Model (its type: {type(model).__name__})"
        )
    problem = malformed_model(model)
    if problem is not None:
        raise ModelLoadError(f"{name}.{problem}")
    return model


def _isolated(model: Model) -> Model:
    """Returns a plain Model with the user's fields, isolated: built field by field, so that
    a subclass of Model can neither keep its own behaviour nor claim not to be isolated."""
    values = {f.name: getattr(model, f.name) for f in fields(Model) if f.name != "isolated"}
    return Model(**values, isolated=True)


def _is_file(where: str) -> bool:
    return where.endswith(".py") or "/" in where or "\\" in where


def _load_file(where: str) -> ModuleType:
    """Runs a Python file as a module registered under a name of its own, so that its
    functions pickle by reference for worker processes."""
    path = Path(where)
    if not path.is_file():
        raise ModelLoadError(f"{where}: no such file")
    import hashlib  # OpenSSL: only for a model loaded from a file

    digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:8]
    stem = re.sub(r"\W", "_", path.stem)
    name = f"_harness_model_{stem}_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ModelLoadError(f"{where}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickle look modules up there
    try:
        spec.loader.exec_module(module)
    except BaseException:  # the caller says what went wrong; no half-run module stays
        del sys.modules[name]
        raise
    return module


def _import(where: str) -> ModuleType:
    if not all(part.isidentifier() for part in where.split(".")):
        raise ModelLoadError(f"{where!r} is neither a .py file nor a dotted module name")
    try:
        return importlib.import_module(where)
    except ModuleNotFoundError as err:
        if err.name is not None and (where == err.name or where.startswith(f"{err.name}.")):
            raise ModelLoadError(f"no module named {err.name} (is it on PYTHONPATH?)") from None
        raise


def _import_failed(where: str, err: BaseException) -> ModelLoadError:
    return ModelLoadError(f"importing {where} failed: {error_line(err)}")


def _models_in(module: ModuleType) -> str:
    names = sorted(k for k, v in vars(module).items() if isinstance(v, Model))
    return f"its models: {', '.join(names)}" if names else "it defines no Model"
