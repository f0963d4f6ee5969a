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
    """Import ``module`` or raise ``MissingExtraError`` with the install command."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is None or not module.startswith(exc.name.split(".")[0]):
            raise
        raise MissingExtraError(
            f"the {adapter} adapter needs {package}, which is not installed: "
            f'pip install "tracebridge[{extra}]"'
        ) from exc
