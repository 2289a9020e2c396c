"""Checked reading of the JSON values of a ``tt.plan.json``: each reader returns the value as the
plan's types hold it, or raises a :class:`PlanError` saying where (``where``) and what is wrong.
The ``from_json`` readers of the plan's entries are built from these."""

from __future__ import annotations

from collections.abc import Sequence

from tilelang_tt.contract.formula import Formula, FormulaError

U32_MAX = 2**32 - 1


class PlanError(ValueError):
    """A dict that is not a valid ``tt.plan.json``; the message names the entry and what is wrong."""


def read_object(value: object, where: str, required: Sequence[str], optional: Sequence[str] = ()) -> dict:
    """An object with every ``required`` key and no key outside ``required`` and ``optional``."""
    if not isinstance(value, dict):
        raise PlanError(f"{where}: expected an object, got {value!r}")
    missing = [key for key in required if key not in value]
    unknown = sorted(set(value) - set(required) - set(optional))
    if missing or unknown:
        raise PlanError(f"{where}: " + "; ".join(
            ([f"missing {missing}"] if missing else []) + ([f"unknown keys {unknown}"] if unknown else [])))
    return value


def read_list(value: object, where: str) -> list:
    if not isinstance(value, list):
        raise PlanError(f"{where}: expected a list, got {value!r}")
    return value


def read_int(value: object, where: str, low: int = 0, high: int = U32_MAX) -> int:
    """An integer in [low, high] (by default an unsigned 32-bit one; a bool is not an integer here)."""
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        expected = "an unsigned 32-bit integer" if (low, high) == (0, U32_MAX) else f"an integer in [{low}, {high}]"
        raise PlanError(f"{where}: expected {expected}, got {value!r}")
    return value


def read_ints(value: object, where: str, length: int | None = None, low: int = 0) -> tuple[int, ...]:
    values = read_list(value, where)
    if length is not None and len(values) != length:
        raise PlanError(f"{where}: expected {length} integers, got {value!r}")
    return tuple(read_int(v, f"{where}[{i}]", low) for i, v in enumerate(values))


def read_pair(value: object, where: str, low: int = 0) -> tuple[int, int]:
    return read_ints(value, where, 2, low)


def read_str(value: object, where: str, choices: Sequence[str] | None = None) -> str:
    if not isinstance(value, str) or (choices is not None and value not in choices):
        expected = f"one of {list(choices)}" if choices is not None else "a string"
        raise PlanError(f"{where}: expected {expected}, got {value!r}")
    return value


def read_bool(value: object, where: str) -> bool:
    if not isinstance(value, bool):
        raise PlanError(f"{where}: expected true or false, got {value!r}")
    return value


def read_size(value: object, where: str, dims: Sequence[str], low: int = 0) -> int | Formula:
    """An integer, or in a plan with dynamic sizes (``dims``) the text of a formula of them."""
    if not isinstance(value, str) or not dims:
        return read_int(value, where, low)
    try:
        formula = Formula.parse(value)
    except FormulaError as err:
        raise PlanError(f"{where}: {err}") from None
    unknown = sorted(formula.names - set(dims)) if isinstance(formula, Formula) else []
    if unknown:
        raise PlanError(f"{where}: {value!r} names {unknown}, which are not dims of the plan {list(dims)}")
    return formula if isinstance(formula, Formula) else read_int(formula, where, low)


def read_sizes(value: object, where: str, dims: Sequence[str], length: int | None = None,
               low: int = 0) -> tuple[int | Formula, ...]:
    values = read_list(value, where)
    if length is not None and len(values) != length:
        raise PlanError(f"{where}: expected {length} integers, got {value!r}")
    return tuple(read_size(v, f"{where}[{i}]", dims, low) for i, v in enumerate(values))


def check_unique(names: Sequence, what: str) -> None:
    repeated = sorted({n for n in names if list(names).count(n) > 1}, key=str)
    if repeated:
        raise PlanError(f"{what} {repeated} appear more than once")
