"""Integer index expressions evaluated at compile time over every point of a nest (numpy arrays per loop
variable), and their bitwise operations written as the index arithmetic a reader kernel evaluates: what
LegalizeGlobalAccessTT (the slice a computed index touches) and LowerBlockGathersTT (selection matrices) ask."""

from __future__ import annotations

import numpy as np
from tvm import ir, tirx


class NotConstant(Exception):
    """An index that is not a function of the nest's indices alone: the node that makes it so."""

    def __init__(self, node, what: str):
        super().__init__(what)
        self.node, self.what = node, what


_BITWISE = {"tirx.bitwise_and": np.bitwise_and, "tirx.bitwise_or": np.bitwise_or, "tirx.bitwise_xor": np.bitwise_xor,
            "tirx.shift_left": np.left_shift, "tirx.shift_right": np.right_shift}
_ARITH = {tirx.Add: np.add, tirx.Sub: np.subtract, tirx.Mul: np.multiply, tirx.FloorDiv: np.floor_divide,
          tirx.FloorMod: np.mod, tirx.Min: np.minimum, tirx.Max: np.maximum, tirx.EQ: np.equal, tirx.NE: np.not_equal,
          tirx.LT: np.less, tirx.LE: np.less_equal, tirx.GT: np.greater, tirx.GE: np.greater_equal,
          tirx.And: np.logical_and, tirx.Or: np.logical_or}


def index_values(e, env: dict) -> np.ndarray:
    """The integer (or boolean) expression ``e`` at every point of ``env`` (a numpy array per variable)."""
    if isinstance(e, tirx.IntImm):
        return np.int64(e.value)
    if isinstance(e, tirx.Var):
        for v, values in env.items():
            if v.same_as(e):
                return values
        raise NotConstant(e, f"the value `{e.name}`, which is not one of the nest's loop variables")
    if isinstance(e, tirx.BufferLoad):
        raise NotConstant(e, f"the tensor value `{e.buffer.name}[{', '.join(str(x) for x in e.indices)}]`")
    if isinstance(e, tirx.Cast) and not str(e.dtype).startswith(("float", "bfloat")):
        return index_values(e.value, env)
    if isinstance(e, tirx.Not):
        return np.logical_not(index_values(e.a, env))
    if isinstance(e, tirx.Select) or (isinstance(e, tirx.Call) and e.op.name == "tirx.if_then_else"):
        cond, a, b = (e.condition, e.true_value, e.false_value) if isinstance(e, tirx.Select) else e.args
        return np.where(index_values(cond, env), index_values(a, env), index_values(b, env))
    if isinstance(e, tirx.Call) and e.op.name in _BITWISE:
        return _BITWISE[e.op.name](*(np.asarray(index_values(a, env), dtype=np.int64) for a in e.args))
    op = _ARITH.get(type(e))
    if op is None:
        raise NotConstant(e, f"`{e}` ({type(e).__name__})")
    with np.errstate(divide="ignore", invalid="ignore"):
        return op(index_values(e.a, env), index_values(e.b, env))


def _bit(x, b: int):
    return tirx.floormod(tirx.floordiv(x, 1 << b), 2) if b else tirx.floormod(x, 2)


def as_arithmetic(e):
    """``e`` with its bitwise operations on a constant (and ``a | b``) written as index arithmetic the reader
    evaluates (the caller checks the result equal to ``e`` wherever it is used); ``e`` itself when it has none."""
    if not _has_bitwise(e):
        return e
    if isinstance(e, tirx.Call) and e.op.name in _BITWISE:
        a, b = (as_arithmetic(x) for x in e.args)
        c = b.value if isinstance(b, tirx.IntImm) else None
        name = e.op.name
        if name == "tirx.shift_left" and c is not None:
            return a * (1 << c)
        if name == "tirx.shift_right" and c is not None:
            return tirx.floordiv(a, 1 << c)
        if name == "tirx.bitwise_or" and c is None:
            return a + b  # disjoint bits ((rev << 1) | (rest & 1)): checked by the caller
        if c is not None and c >= 0 and name in ("tirx.bitwise_and", "tirx.bitwise_xor", "tirx.bitwise_or"):
            out = 0 if name == "tirx.bitwise_and" else a
            for b_ in range(c.bit_length()):
                if c >> b_ & 1:
                    bit = _bit(a, b_)
                    if name == "tirx.bitwise_and":
                        out = out + bit * (1 << b_)
                    elif name == "tirx.bitwise_xor":
                        out = out + (1 - 2 * bit) * (1 << b_)
                    else:
                        out = out + (1 - bit) * (1 << b_)
            return out if isinstance(out, tirx.PrimExpr) else tirx.IntImm(e.dtype, out)
        return e
    if isinstance(e, tirx.Call) and e.op.name == "tirx.if_then_else":
        return tirx.Call(e.dtype, e.op, [as_arithmetic(x) for x in e.args])
    if isinstance(e, tirx.Select):
        return tirx.Select(as_arithmetic(e.condition), as_arithmetic(e.true_value), as_arithmetic(e.false_value))
    if isinstance(e, tirx.Not):
        return tirx.Not(as_arithmetic(e.a))
    if type(e) in _ARITH:
        return type(e)(as_arithmetic(e.a), as_arithmetic(e.b))
    return e


def _has_bitwise(e) -> bool:
    found = []
    tirx.stmt_functor.post_order_visit(e, lambda n: found.append(n) if isinstance(n, tirx.Call) and isinstance(
        n.op, ir.Op) and n.op.name in _BITWISE else None)
    return bool(found)


def touched(index, var: tirx.Var, extent: int) -> tuple[object, int, int] | None:
    """(the part of ``index`` free of ``var``, the least and greatest value of the rest) over ``var`` in [0,
    ``extent``): ``bx * 32 + (j ^ 1)`` is ``bx * 32`` plus 0 to 31. None when the rest uses another variable."""
    terms, stack = [], [index]
    while stack:
        e = stack.pop()
        if isinstance(e, tirx.Add):
            stack += [e.a, e.b]
        else:
            terms.append(e)
    free = [t for t in terms if not _uses(t, var)]
    rest = [t for t in terms if _uses(t, var)]
    try:
        values = sum(np.broadcast_to(index_values(t, {var: np.arange(extent, dtype=np.int64)}), (extent,))
                     for t in rest)
    except NotConstant:
        return None
    base = sum(free[1:], free[0]) if free else tirx.IntImm(index.dtype, 0)
    return base, int(np.min(values)), int(np.max(values))


def _uses(e, var: tirx.Var) -> bool:
    found = []
    tirx.stmt_functor.post_order_visit(e, lambda n: found.append(n) if isinstance(n, tirx.Var) and n.same_as(var)
                                       else None)
    return bool(found)

