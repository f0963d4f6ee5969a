"""Import a framework package on first use, naming the extra that installs it."""

from __future__ import annotations

import importlib
from types import ModuleType

from .errors import MissingExtraError

__all__ = ["module_of", "require"]


def module_of(kind: type) -> str:
    """The module a class says it was defined in; ``""`` when it says none (a class may set
    ``__module__`` to anything, None included), so that asking whether it is a framework's
    never raises."""
    module = kind.__module__
    return module if type(module) is str else ""


def require(module: str, *, adapter: str, extra: str, package: str) -> ModuleType:
    """Import ``module`` or raise ``MissingExtraError`` with the install command.

    ``package`` may name a package's own extra (``ray[data]``): then a module that extra
    installs (pandas, for ``ray.data``) missing is the extra missing too, whatever imports it.
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        top = exc.name.split(".")[0] if exc.name is not None else None
        if top is None or top == __package__ or not (
            module.startswith(top) or "[" in package
        ):
            raise
        missing = "" if module.startswith(top) else f" ({exc.name} is missing)"
        raise MissingExtraError(
            f"the {adapter} adapter needs {package}, which is not installed{missing}: "
            f'pip install "tracebridge[{extra}]"'
        ) from exc
