"""The checks every writer makes of its options before it writes anything: ``drop=`` and
its True/False flags."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from .errors import short_repr

__all__ = ["check_drop", "check_flag"]


def check_drop(drop: Any, droppable: Collection[str]) -> None:
    """Refuse a ``drop=`` value that is not a list of ``droppable`` names (``ValueError``).

    A string is refused whole, not read as its characters; so is anything that is not a
    collection (``None``, a number), a mapping (``{"is_error": False}`` would be read as its
    keys: consent to the very loss it seems to refuse), and a name the writer has no loss for.
    """
    if type(drop) is tuple and not drop:  # the default, (): every writer call pays this
        return
    if isinstance(drop, (str, bytes, Mapping)) or not isinstance(drop, Collection):
        raise ValueError(f"drop= takes a list of names from {tuple(droppable)}, got "
                         f"{short_repr(drop)}")
    unknown = [name for name in drop if type(name) is not str or name not in droppable]
    if unknown:
        raise ValueError(f"drop={short_repr(unknown)} names nothing droppable; drop= takes "
                         f"a list of names from {tuple(droppable)}")


def check_flag(name: str, value: Any) -> None:
    """Refuse a flag option that is not True or False (``ValueError``): a string such as
    ``"false"`` is true, and taken as it is it would accept the loss it names."""
    if value is not True and value is not False:
        raise ValueError(f"{name} must be True or False, got {short_repr(value)}")
