"""Policy values: the strings users give (dtype, B layout, decomposition, fix-up, multicast mode,
load kind, target) parsed once, at the boundary, into the project's enums.

Every policy enum derives from :class:`PolicyEnum` and names itself with a ``label``. Then
``Enum(value)`` and ``Enum.parse(value)`` take a member, its value in any case, or an alias, and
raise a :class:`~tilec.errors.PolicyError` that lists the valid values for anything else, so a
bad string never surfaces as Python's bare ``ValueError``::

    >>> from tilec.ir.types import MulticastMode
    >>> MulticastMode.parse("Sliced")
    <MulticastMode.SLICED: 'sliced'>
    >>> MulticastMode("broadcast")
    Traceback (most recent call last):
    ...
    tilec.errors.PolicyError: multicast mode must be one of leader, sliced but got 'broadcast'

A value a function takes beyond the enum (``"auto"`` for the decomposition) is an ``extra``:

    >>> from tilec.ir.types import Decomposition
    >>> Decomposition.parse("AUTO", extra=("auto",))
    'auto'
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any, TypeVar

from tilec.errors import PolicyError

E = TypeVar("E", bound="PolicyEnum")


class PolicyEnum(enum.Enum):
    """Base of the policy enums: ``class MulticastMode(PolicyEnum, label="multicast mode")``.

    ``aliases`` maps more spellings to values (``{"half": "fp16"}``); ``hints`` explains values
    in the error message (``{"nk": "given as N x K"}``).
    """

    def __init_subclass__(cls, *, label: str = "", aliases: Mapping[str, str] | None = None,
                          hints: Mapping[str, str] | None = None, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        cls._label = label or cls.__name__  # type: ignore[attr-defined]
        cls._aliases = dict(aliases or {})  # type: ignore[attr-defined]
        cls._hints = dict(hints or {})  # type: ignore[attr-defined]

    @classmethod
    def _missing_(cls, value: object) -> Any:
        if isinstance(value, str):
            key = value.strip().lower()
            key = cls._aliases.get(key, key)  # type: ignore[attr-defined]
            for member in cls:
                if member.value == key:
                    return member
        raise policy_error(cls, value)

    @classmethod
    def parse(cls: type[E], value: object, *, extra: tuple[str, ...] = ()) -> E | str:
        """The member ``value`` names (or the canonical ``extra`` string it is)."""
        if isinstance(value, str) and value.strip().lower() in extra:
            return value.strip().lower()
        try:
            return cls(value)
        except PolicyError:
            if not extra:
                raise
            raise policy_error(cls, value, extra) from None

    @classmethod
    def values(cls) -> list[str]:
        """The valid spellings, in declaration order (what a CLI's ``choices`` lists)."""
        return [str(m.value) for m in cls]


def policy_error(cls: type[PolicyEnum], value: object, extra: tuple[str, ...] = ()) -> PolicyError:
    """``<label> must be one of <values> but got <value>`` for ``cls``."""
    hints: dict[str, str] = cls._hints  # type: ignore[attr-defined]
    valid = [*extra, *cls.values()]
    shown = ", ".join(f"{v} ({hints[v]})" if v in hints else v for v in valid)
    return PolicyError(f"{cls._label} must be one of {shown} but got {value!r}")  # type: ignore[attr-defined]
