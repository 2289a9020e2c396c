"""Sizes known only at run time: integer formulas over a kernel's dynamic dimensions.

A kernel declared with ``T.dynamic("m")`` (or symbolic ``M, N, K``) compiles to one program for
every size. What depends on those sizes (tile counts, page counts, the block grid, each core's share
of the blocks) is recorded in ``tt.plan.json`` as a formula over the dimension names, and computed
from the actual tensors by whoever runs the program: ``main.cpp`` (C++ from :meth:`Formula.cxx`),
the emulator driver and ``ttnn_program`` (:meth:`tilelang_tt.contract.plan.Plan.bind`).

A formula is an int or a :class:`Formula`: names, integer constants, ``+ - * // %``, ``min`` and
``max`` of non-negative integers. Arithmetic mixing ints and formulas folds constants, so the
plan's arithmetic (``tile_grid``, ``num_pages``, byte sizes) is written once for both. Comparisons
of formulas are refused (a formula's sign is the size's business): :func:`ceildiv` replaces
``-(-a // b)``, which would pass through negative values that unsigned C++ does not have.

    >>> m = Formula.name("m")
    >>> str(ceildiv(m, 32) * 2048)
    '(m + 31) // 32 * 2048'
    >>> Formula.parse("(m + 31) // 32 * 2048").evaluate({"m": 40})
    4096
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping

_BINARY = {"+": (ast.Add, 1), "-": (ast.Sub, 1), "*": (ast.Mult, 2), "//": (ast.FloorDiv, 2), "%": (ast.Mod, 2)}
_FUNCTIONS = ("min", "max")
_CXX = {"+": "+", "-": "-", "*": "*", "//": "/", "%": "%"}


class FormulaError(ValueError):
    """A text that is not a formula, or a formula that cannot be computed (an unknown name)."""


def _apply(op: str, a: int, b: int) -> int:
    return {"+": a + b, "-": a - b, "*": a * b, "//": a // b if b else 0, "%": a % b if b else 0,
            "min": min(a, b), "max": max(a, b)}[op]


class Formula:
    """A non-constant integer expression: ``name`` (a dimension) or ``op(left, right)``."""

    __slots__ = ("op", "args")

    def __init__(self, op: str, args: tuple):
        self.op, self.args = op, args

    @staticmethod
    def name(name: str) -> Formula:
        if not name.isidentifier():
            raise FormulaError(f"{name!r} is not a dimension name (an identifier)")
        return Formula("name", (name,))

    @staticmethod
    def make(op: str, a: int | Formula, b: int | Formula) -> int | Formula:
        """``a op b`` with constants folded and the identities x + 0, x * 1, x // 1 removed."""
        if isinstance(a, int) and isinstance(b, int):
            if op in ("//", "%") and b == 0:
                raise FormulaError(f"division by zero in {a} {op} {b}")
            return _apply(op, a, b)
        if (op == "+" and b == 0) or (op == "-" and b == 0) or (op in ("*", "//") and b == 1):
            return a
        if (op == "+" and a == 0) or (op == "*" and a == 1):
            return b
        if op == "*" and 0 in (a, b):
            return 0
        if op == "%" and b == 1:
            return 0
        if op in _FUNCTIONS and 0 in (a, b):  # sizes are non-negative: min(0, x) = 0, max(0, x) = x
            return 0 if op == "min" else (b if a == 0 else a)
        if op in ("+", "-") and isinstance(b, int) and isinstance(a, Formula) and a.op == "+" \
                and isinstance(a.args[1], int):  # (x + c1) +- c2 = x + (c1 +- c2)
            return Formula.make("+", a.args[0], _apply(op, a.args[1], b))
        return Formula(op, (a, b))

    # arithmetic with ints and formulas
    def __add__(self, other): return Formula.make("+", self, _operand(other))
    def __radd__(self, other): return Formula.make("+", _operand(other), self)
    def __sub__(self, other): return Formula.make("-", self, _operand(other))
    def __rsub__(self, other): return Formula.make("-", _operand(other), self)
    def __mul__(self, other): return Formula.make("*", self, _operand(other))
    def __rmul__(self, other): return Formula.make("*", _operand(other), self)
    def __floordiv__(self, other): return Formula.make("//", self, _operand(other))
    def __rfloordiv__(self, other): return Formula.make("//", _operand(other), self)
    def __mod__(self, other): return Formula.make("%", self, _operand(other))
    def __rmod__(self, other): return Formula.make("%", _operand(other), self)

    def __neg__(self):
        raise TypeError(f"-({self}): formulas are non-negative sizes; use ceildiv() for -(-a // b)")

    def __lt__(self, other):
        raise TypeError(f"{self} < {other}: a formula's value is only known at run time")

    __le__ = __gt__ = __ge__ = __lt__

    def __bool__(self):
        raise TypeError(f"bool({self}): a formula's value is only known at run time")

    def __eq__(self, other) -> bool:
        return isinstance(other, Formula) and (self.op, self.args) == (other.op, other.args)

    def __hash__(self) -> int:
        return hash((self.op, self.args))

    # reading and writing
    @property
    def names(self) -> frozenset[str]:
        if self.op == "name":
            return frozenset(self.args)
        return frozenset().union(*(a.names for a in self.args if isinstance(a, Formula)))

    def evaluate(self, values: Mapping[str, int]) -> int:
        if self.op == "name":
            if self.args[0] not in values:
                raise FormulaError(f"{self.args[0]!r} has no value (known: {sorted(values)})")
            return values[self.args[0]]
        a, b = (evaluate(x, values) for x in self.args)
        return _apply(self.op, a, b)

    def render(self, name: Callable[[str], str], cxx: bool = False) -> str:
        """Text with each dimension written by ``name``; Python syntax, or C++ (``/`` for ``//``,
        ``std::min``/``std::max``) with ``cxx``."""
        if self.op == "name":
            return name(self.args[0])
        a, b = (x.render(name, cxx) if isinstance(x, Formula) else str(x) for x in self.args)
        if self.op in _FUNCTIONS:
            return f"std::{self.op}<uint64_t>({a}, {b})" if cxx else f"{self.op}({a}, {b})"
        prec = _BINARY[self.op][1]
        left, right = self.args
        if isinstance(left, Formula) and left.op in _BINARY and _BINARY[left.op][1] < prec:
            a = f"({a})"
        if isinstance(right, Formula) and right.op in _BINARY and _BINARY[right.op][1] <= prec:
            b = f"({b})"
        return f"{a} {_CXX[self.op] if cxx else self.op} {b}"

    def cxx(self, name: Callable[[str], str]) -> str:
        return self.render(name, cxx=True)

    def __str__(self) -> str:
        return self.render(str)

    def __format__(self, spec: str) -> str:  # aligned in tables like the ints it stands for
        return format(str(self), spec)

    def __repr__(self) -> str:
        return f"Formula({str(self)!r})"

    @staticmethod
    def parse(text: str) -> int | Formula:
        """The formula ``str()`` wrote; a :class:`FormulaError` for any other text."""
        try:
            tree = ast.parse(text, mode="eval").body
        except SyntaxError:
            raise FormulaError(f"{text!r} is not a formula") from None
        return _from_ast(tree, text)


def _operand(value) -> int | Formula:
    if isinstance(value, bool) or not isinstance(value, (int, Formula)):
        return NotImplemented
    return value


def _from_ast(node: ast.AST, text: str) -> int | Formula:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Name):
        return Formula.name(node.id)
    if isinstance(node, ast.BinOp):
        op = next((k for k, (cls, _) in _BINARY.items() if isinstance(node.op, cls)), None)
        if op is not None:
            return Formula.make(op, _from_ast(node.left, text), _from_ast(node.right, text))
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS
            and len(node.args) == 2 and not node.keywords):
        return Formula.make(node.func.id, *(_from_ast(a, text) for a in node.args))
    raise FormulaError(f"{text!r} is not a formula: integers, dimension names, + - * // %, min and max")


def ceildiv(a, b):
    """``a / b`` rounded up, for ints, formulas and TIR expressions alike."""
    return (a + b - 1) // b


def evaluate(value: int | Formula, values: Mapping[str, int]) -> int:
    return value.evaluate(values) if isinstance(value, Formula) else value


def minimum(a: int | Formula, b: int | Formula) -> int | Formula:
    return Formula.make("min", a, b)


def to_json(value: int | Formula) -> int | str:
    """A plan or attribute value: an int, or a formula's text."""
    return value if isinstance(value, int) else str(value)


def from_json(value: object) -> int | Formula:
    """The int or formula :func:`to_json` wrote (TVM attribute integers come back as IntImm)."""
    return Formula.parse(value) if isinstance(value, str) else int(value)
