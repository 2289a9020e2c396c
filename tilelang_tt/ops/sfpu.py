"""The tile math engines' op tables: SFPU ops (on DST tiles) and FPU binary ops (from two CBs).

One entry per op says everything about it: its kind (unary, binary, with a scalar, fill), its name
in the TT intrinsics (``tt.sfpu.*`` take (kind, name)), the TIR it implements (a call such as
``tirx.exp`` that LowerTTTileIntrinsics accepts in ``T.Parallel`` values, or a node type), and the
tt-metal header, C++ function and init that codegen prints. Adding a unary SFPU op of a TIR call
is one entry here (and its function in the emulator's headers, ``tilelang_tt/emulator/include``).
Also here: the recognition of the exact GELU ``0.5 * x * (1 + erf(x / sqrt(2)))``, in any
association of its products, as the one op ``gelu``.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, replace

import tilelang  # noqa: F401
from tvm import ir, tirx

from tilelang_tt.contract.dims import float32_bits
from tilelang_tt.ops.base import constant, strip_casts

COMPUTE = "api/compute/"


class SfpuKind(str, enum.Enum):
    UNARY = "unary"  # function(dst)
    BINARY = "binary"  # function(dst0, dst1, dst_out)
    SCALAR = "scalar"  # function(dst, float bits): the tile op a constant or a float scalar parameter
    FILL = "fill"  # function(dst, value)


@dataclass(frozen=True)
class SfpuOp:
    kind: SfpuKind
    name: str
    function: str  # the C++ function
    header: str
    tir: object = None  # what it computes in TIR: a call's op name ("tirx.exp") or a node type (tirx.Add)
    init: str = ""  # its init function, when not ``function`` + "_init"
    template: str = ""  # template arguments of both (the header's default is the fast approximation)
    param_bits: int | None = None  # a scalar op's fixed 32-bit parameter; None: the constant operand's fp32 bits
    init_template: str | None = None  # template arguments of the init, when not the function's
    # the init's template arguments with a scale it folds into the op ("{:#x}": its fp32 bits), for an op whose
    # init takes one (the approximate exp: exp_tile_init<true, scale>)
    scaled_init: str = ""

    @property
    def init_function(self) -> str:
        return self.init or f"{self.function}_init"

    @property
    def init_call_template(self) -> str:
        return self.template if self.init_template is None else self.init_template

    def init_call(self, scale_bits: int | None = None) -> str:
        """The init's call, with the scale of fp32 bits ``scale_bits`` folded in where given."""
        if scale_bits is None:
            return f"{self.init_function}{self.init_call_template}()"
        assert self.scaled_init, f"{self.name}: its init takes no scale"
        return f"{self.init_function}{self.scaled_init.format(scale_bits)}()"


def _unary(name: str, header: str, tir: str | None = None, template: str = "", init: str = "") -> SfpuOp:
    return SfpuOp(SfpuKind.UNARY, name, f"{name}_tile", COMPUTE + header, tir, init, template)


def _scalar(name: str, tir=None) -> SfpuOp:
    return SfpuOp(SfpuKind.SCALAR, name, f"{name}_unary_tile", COMPUTE + "eltwise_unary/binop_with_scalar.h", tir,
                  init="binop_with_scalar_tile_init")


def _call_with_param(name: str, function: str, header: str, tir: str, param_bits: int | None = None,
                     init: str = "") -> SfpuOp:
    """function(dst, param) of a TIR call: its parameter fixed, or (None) the call's constant second operand."""
    return SfpuOp(SfpuKind.SCALAR, name, function, COMPUTE + header, tir, init, param_bits=param_bits)


def _compare(name: str, tir) -> SfpuOp:
    """x <op> c for a constant c: 1.0 where it holds, else 0.0 (unary_<op>_tile(dst, bits of c))."""
    return SfpuOp(SfpuKind.SCALAR, name, f"unary_{name}_tile", COMPUTE + "eltwise_unary/comp.h", tir)


def _binary(name: str, function: str, header: str, tir) -> SfpuOp:
    return SfpuOp(SfpuKind.BINARY, name, function, COMPUTE + header, tir)


# "<false>": the precise form of ops whose header defaults to the fast approximation (APPROXIMATE: their
# approximate forms, which the compile option math_approx_mode selects).
SFPU_OPS: tuple[SfpuOp, ...] = (
    # unary ops of a TIR call, in the order LowerTTTileIntrinsics lists them
    _unary("exp", "eltwise_unary/exp.h", "tirx.exp"),
    _unary("exp2", "compute_kernel_api.h", "tirx.exp2"),
    _unary("log", "compute_kernel_api.h", "tirx.log"),
    _unary("sqrt", "eltwise_unary/sqrt.h", "tirx.sqrt"),
    _unary("rsqrt", "eltwise_unary/rsqrt.h", "tirx.rsqrt"),
    _unary("sigmoid", "compute_kernel_api.h", "tirx.sigmoid"),
    _unary("tanh", "compute_kernel_api.h", "tirx.tanh"),
    _unary("erf", "eltwise_unary/erf_erfc.h", "tirx.erf", "<false>"),
    _unary("abs", "compute_kernel_api.h", "tirx.fabs"),
    _unary("log1p", "eltwise_unary/log1p.h", "tirx.log1p"),
    _unary("floor", "eltwise_unary/rounding.h", "tirx.floor", init="rounding_op_tile_init"),
    _unary("ceil", "eltwise_unary/rounding.h", "tirx.ceil", init="rounding_op_tile_init"),
    _unary("trunc", "eltwise_unary/rounding.h", "tirx.trunc", init="rounding_op_tile_init"),
    _unary("sin", "eltwise_unary/trigonometry.h", "tirx.sin"),
    _unary("cos", "eltwise_unary/trigonometry.h", "tirx.cos"),
    _unary("tan", "eltwise_unary/trigonometry.h", "tirx.tan"),
    # T.isnan: 1.0 or 0.0, a mask (T.if_then_else(T.isnan(x), a, b): ops/generate.py); TileLang's T.isinf is
    # T.fabs(x) == inf and not T.isnan(x)
    _unary("isnan", "eltwise_unary/isinf_isnan.h", "tirx.isnan"),
    # unary ops of a pattern: 1 / x, max(x, 0), the exact GELU (tilelang_tt.ops.eltwise)
    _unary("recip", "eltwise_unary/recip.h"),
    _unary("relu", "eltwise_unary/relu.h"),
    _unary("gelu", "eltwise_unary/gelu.h", template="<false>"),
    SfpuOp(SfpuKind.FILL, "fill", "fill_tile", COMPUTE + "eltwise_unary/fill.h"),
    # a tile filled with the float whose bits a runtime argument holds (a float scalar parameter):
    # fill_tile_bitcast(dst, bits), eltwise_unary/fill.h
    SfpuOp(SfpuKind.SCALAR, "fill_bitcast", "fill_tile_bitcast", COMPUTE + "eltwise_unary/fill.h",
           init="fill_tile_init"),
    # a cast of a float32 value to bfloat16 inside a value computed in a 32-bit DST: rounded to nearest, ties to
    # even, kept in DST (typecast.h; the packer rounds the value a block stores by itself)
    SfpuOp(SfpuKind.UNARY, "round_bf16", "typecast_tile", COMPUTE + "eltwise_unary/typecast.h",
           template="<(uint32_t)DataFormat::Float32, (uint32_t)DataFormat::Float16_b>"),
    # an int32 value converted to a float inside a float value (a 32-bit DST): the nearest float32, ties to even
    # (typecast.h; wormhole_b0 ckernel_sfpu_typecast.h calculate_typecast_int32_to_fp32)
    SfpuOp(SfpuKind.UNARY, "int32_to_fp32", "typecast_tile", COMPUTE + "eltwise_unary/typecast.h",
           template="<(uint32_t)DataFormat::Int32, (uint32_t)DataFormat::Float32>"),
    # a tile and a constant (rsub: the constant minus the tile); not div_unary_tile, which multiplies by its
    # parameter (a division by a constant: ops/eltwise.py ScalarOperand)
    _scalar("add", tirx.Add), _scalar("sub", tirx.Sub), _scalar("mul", tirx.Mul), _scalar("rsub"),
    # comparisons with a constant, 1.0 or 0.0 (masks: T.if_then_else(x == -T.infinity(..), 0, x)), and of
    # a tile with zero (x <op> y of two values is (x - y) <op> 0)
    _compare("eq", tirx.EQ), _compare("ne", tirx.NE), _compare("gt", tirx.GT), _compare("ge", tirx.GE),
    _compare("lt", tirx.LT), _compare("le", tirx.LE),
    *(_unary(f"{name}z", "eltwise_unary/comp.h") for name in ("eq", "ne", "gt", "ge", "lt", "le")),
    # a TIR call with a parameter: log2/log10 are log_with_base_tile(x, bits of 1/ln(base)) (one op,
    # the header's documented use); T.round (nearbyint on TVM's LLVM backend) and T.nearbyint are
    # round_tile(x, 0 decimals), half to even; T.pow(x, c) is power_tile(x, bits of c)
    _call_with_param("log2", "log_with_base_tile", "compute_kernel_api.h", "tirx.log2", float32_bits(1 / math.log(2))),
    _call_with_param("log10", "log_with_base_tile", "compute_kernel_api.h", "tirx.log10", float32_bits(1 / math.log(10))),
    _call_with_param("round", "round_tile", "eltwise_unary/rounding.h", "tirx.round", 0, "rounding_op_tile_init"),
    _call_with_param("nearbyint", "round_tile", "eltwise_unary/rounding.h", "tirx.nearbyint", 0,
                     "rounding_op_tile_init"),
    _call_with_param("pow", "power_tile", "compute_kernel_api.h", "tirx.pow"),
    # two DST tiles
    _binary("add", "add_binary_tile", "eltwise_binary_sfpu.h", tirx.Add),
    _binary("sub", "sub_binary_tile", "eltwise_binary_sfpu.h", tirx.Sub),
    _binary("mul", "mul_binary_tile", "eltwise_binary_sfpu.h", tirx.Mul),
    _binary("div", "div_binary_tile", "eltwise_binary_sfpu.h", tirx.Div),
    _binary("max", "binary_max_tile", "binary_max_min.h", tirx.Max),
    _binary("min", "binary_min_tile", "binary_max_min.h", tirx.Min),
    # two DST tiles of a TIR call (a constant operand is filled into DST): T.pow(x, y) with a
    # non-constant exponent, T.fmod(x, y) (the sign of x; the API's unary fmod_tile takes its divisor
    # in its init, which the tt.sfpu.init intrinsic does not carry)
    _binary("pow", "power_binary_tile", "eltwise_binary_sfpu.h", "tirx.pow"),
    _binary("fmod", "fmod_binary_tile", "binary_fmod.h", "tirx.fmod"),
)

# The approximate forms the compile option math_approx_mode (and TileLang's fast-math pass config,
# tilelang_tt.options.FAST_MATH_KEY) selects for the ops whose 0.81.1 API takes the choice as a template argument
# instead of the kernel's APPROX: exp_tile<true> (eltwise_unary/exp.h, approx = false by default), gelu_tile<true>
# and erf_tile<true> (their headers' default fast_and_approx), tanh_tile<true> and sigmoid_tile<VectorMode::RC, true>
# (compute_kernel_api.h, fast_and_approx = false by default). sqrt_tile, rsqrt_tile and recip_tile follow APPROX
# (ComputeConfig::math_approx_mode) as they are. Not selected: log_tile<true> (its fast form only skips normalising
# -0 and denormals, which the emulator does not model).
_APPROXIMATE_TEMPLATES = {"exp": ("<true>", None), "gelu": ("<true>", None), "tanh": ("<true>", None),
                          "sigmoid": ("<VectorMode::RC, true>", "<true>"), "erf": ("<true>", None)}
# exp2 has no approximate form of its own: exp2_tile runs calculate_exp2, which ignores APPROXIMATION_MODE
# (compute_kernel_api.h:621, ckernel_sfpu_exp2.h calculate_exp2). Its approximate form is the approximate exp with
# the init's scale ln 2: exp_init<true, scale> folds the scale into its constants at compile time
# (ckernel_sfpu_exp.h:718-738: A * scale, -88.5 / scale, each one fp32 rounding), and fp32(256 / ln 2) * fp32(ln 2)
# is 256.0 exactly, so the one SFPMAD computes 256 * max(x, -127.67851) + (B - C) rounded once: Schraudolph's
# approximation in base 2, the same constants and the same rounding as exp_tile<true> applies to x / ln 2, with no
# rounding of x * ln 2 (exp_tile<true> of a product x * ln 2 would round it first).
# Under fast math (CompileOptions.fast_math) the approximate exp of x * c takes c as that scale (ops/eltwise.py
# Exp): c * A rounded once where x * c and then A times it round twice.
LN2_BITS = 0x3F317218  # float32_bits(math.log(2.0))
_SCALED_EXP_INIT = "<true, {:#x}u>"
_EXP2_APPROX = SfpuOp(SfpuKind.UNARY, "exp2_approx", "exp_tile", COMPUTE + "eltwise_unary/exp.h", None,
                      "exp_tile_init", "<true>", init_template=_SCALED_EXP_INIT.format(LN2_BITS),
                      scaled_init=_SCALED_EXP_INIT)
APPROXIMATE: dict[str, SfpuOp] = {
    **{op.name: replace(op, name=f"{op.name}_approx", tir=None, template=_APPROXIMATE_TEMPLATES[op.name][0],
                        init_template=_APPROXIMATE_TEMPLATES[op.name][1],
                        scaled_init=_SCALED_EXP_INIT if op.name == "exp" else "")
       for op in SFPU_OPS if op.kind == SfpuKind.UNARY and op.name in _APPROXIMATE_TEMPLATES},
    "exp2": _EXP2_APPROX,
}

# The SFPU's integer ops, on int32 tiles unpacked to a 32-bit DST (two's complement, modulo 2^32):
# tiles of two DST tiles (comparisons: 1 where it holds, else 0), a tile and a constant, a fill.
INT32 = "<DataFormat::Int32>"


def _int_binary(name: str, function: str, header: str, tir, template: str = INT32,
                init_template: str | None = None) -> SfpuOp:
    return SfpuOp(SfpuKind.BINARY, name, function, COMPUTE + header, tir, template=template,
                  init_template=init_template)


INT_OPS: tuple[SfpuOp, ...] = (
    _int_binary("add_int", "add_int_tile", "add_int_sfpu.h", tirx.Add, init_template=""),
    _int_binary("sub_int", "sub_int_tile", "sub_int_sfpu.h", tirx.Sub, init_template=""),
    _int_binary("mul_int", "mul_int_tile", "mul_int_sfpu.h", tirx.Mul),
    _int_binary("max_int", "binary_max_int32_tile", "binary_max_min.h", tirx.Max, template=""),
    _int_binary("min_int", "binary_min_int32_tile", "binary_max_min.h", tirx.Min, template=""),
    _int_binary("floordiv_int", "div_int32_floor_tile", "div_int32_floor.h", tirx.FloorDiv, template=""),
    _int_binary("floormod_int", "remainder_int32_tile", "binary_remainder.h", tirx.FloorMod, template=""),
    _int_binary("truncdiv_int", "div_int32_trunc_tile", "div_int32_floor.h", tirx.Div, template=""),
    *(_int_binary(f"{name}_int", f"{name}_int_tile", "binary_comp.h", node)
      for name, node in (("eq", tirx.EQ), ("ne", tirx.NE), ("gt", tirx.GT), ("ge", tirx.GE), ("lt", tirx.LT),
                         ("le", tirx.LE))),
    SfpuOp(SfpuKind.SCALAR, "add_int32", "add_unary_tile_int32", COMPUTE + "eltwise_unary/binop_with_scalar.h",
           tirx.Add, init="binop_with_scalar_tile_init"),
    SfpuOp(SfpuKind.SCALAR, "sub_int32", "sub_unary_tile_int32", COMPUTE + "eltwise_unary/binop_with_scalar.h",
           tirx.Sub, init="binop_with_scalar_tile_init"),
    SfpuOp(SfpuKind.SCALAR, "fill_int", "fill_tile_int", COMPUTE + "eltwise_unary/fill.h", init="fill_tile_init",
           template=INT32, init_template=""),
)
INT_BINARY: dict[type, SfpuOp] = {op.tir: op for op in INT_OPS if op.kind == SfpuKind.BINARY}
INT_SCALAR: dict[type, SfpuOp] = {op.tir: op for op in INT_OPS if op.kind == SfpuKind.SCALAR and op.tir}
_BY_NAME = {(op.kind, op.name): op for op in SFPU_OPS + INT_OPS + tuple(APPROXIMATE.values())}


def sfpu_op(kind: SfpuKind | str, name: str) -> SfpuOp:
    return _BY_NAME[(SfpuKind(kind), name)]


def _by_tir(kind: SfpuKind, of: type) -> dict:
    return {op.tir: op for op in SFPU_OPS if op.kind == kind and isinstance(op.tir, of)}


UNARY_CALLS: dict[str, SfpuOp] = _by_tir(SfpuKind.UNARY, str)  # TIR call op name -> op
SCALAR_OPS: dict[type, SfpuOp] = _by_tir(SfpuKind.SCALAR, type)  # node type -> op with a constant operand
SCALAR_CALLS: dict[str, SfpuOp] = _by_tir(SfpuKind.SCALAR, str)  # TIR call op name -> op with a parameter
SFPU_BINARY: dict[type, SfpuOp] = _by_tir(SfpuKind.BINARY, type)  # node type -> op of two DST tiles
BINARY_CALLS: dict[str, SfpuOp] = _by_tir(SfpuKind.BINARY, str)  # TIR call op name -> op of two DST tiles
BINARY_NODES = tuple(SFPU_BINARY)  # the binary nodes an element-wise value may combine
COMPARE_NODES = (tirx.EQ, tirx.NE, tirx.GT, tirx.GE, tirx.LT, tirx.LE)  # comparisons: 1.0 or 0.0
SWAPPED = {"eq": "eq", "ne": "ne", "gt": "lt", "ge": "le", "lt": "gt", "le": "ge"}  # c <op> x is x <swapped> c


def _exp(x):
    return tirx.Call(x.dtype, ir.Op.get("tirx.exp"), [x])


def _half(x):
    return x * tirx.const(0.5, x.dtype)


# Math calls with no SFPU op of their own, as the ops that compute them (the 0.81.1 API has
# exp_tile but no exp10; clamp_tile takes its bounds as raw parameters in an init our one-parameter
# ops do not carry: T.clamp is a minimum and a maximum, exact either way).
COMPOSED = {
    "tirx.exp10": lambda x: _exp(x * tirx.const(math.log(10.0), x.dtype)),
    "tl.clamp": lambda x, lo, hi: tirx.Max(tirx.Min(x, hi), lo),
    "tirx.sinh": lambda x: _half(_exp(x) - _exp(-x)),
    "tirx.cosh": lambda x: _half(_exp(x) + _exp(-x)),
    "tirx.hypot": lambda x, y: tirx.Call(x.dtype, ir.Op.get("tirx.sqrt"), [x * x + y * y]),
}


# The TileLang math calls an element-wise value may use, for error messages.
CALL_NAMES = tuple(dict.fromkeys([f"T.{op.name}" for op in SFPU_OPS if isinstance(op.tir, str)] +
                                  [f"T.{name.split('.')[-1]}" for name in COMPOSED]))


def decompose(e):
    """``e`` with each call of :data:`COMPOSED` written as the ops that compute it."""
    def post(node):
        if isinstance(node, tirx.Call) and isinstance(node.op, ir.Op) and node.op.name in COMPOSED:
            return COMPOSED[node.op.name](*node.args)
        return None

    return tirx.stmt_functor.ir_transform(tirx.Evaluate(e), None, post, ["tirx.Call"]).value


def call_name(e) -> str | None:
    """The op name of a call of a TIR op (``tirx.exp``), else None."""
    return e.op.name if isinstance(e, tirx.Call) and isinstance(e.op, ir.Op) else None


def scalar_call(e) -> tuple[SfpuOp, object, int] | None:
    """(op, x, parameter bits) when ``e`` is a call the SFPU computes as one op with a parameter:
    log2(x), round(x), pow(x, c) with a constant exponent c."""
    op = SCALAR_CALLS.get(call_name(e))
    if op is None:
        return None
    if op.param_bits is not None:
        return op, e.args[0], op.param_bits
    c = constant(e.args[1])
    return (op, e.args[0], float32_bits(c)) if c is not None else None


def binary_operands(e) -> tuple[SfpuOp, object, object] | None:
    """(op, a, b) when ``e`` is a binary node or call the SFPU computes from two DST tiles."""
    op = SFPU_BINARY.get(type(e))
    if op is not None:
        return op, e.a, e.b
    op = BINARY_CALLS.get(call_name(e))
    return (op, e.args[0], e.args[1]) if op is not None else None


def call_operands(e) -> list | None:
    """The operands of a math call an element-wise value may use, else None."""
    if call_name(e) in UNARY_CALLS:
        return [e.args[0]]
    scalar = scalar_call(e)
    if scalar is not None:
        return [scalar[1]]
    binary = binary_operands(e)
    return [binary[1], binary[2]] if binary is not None else None


@dataclass(frozen=True)
class FpuOp:
    """A binary op the FPU computes from two CBs straight into a DST tile."""

    name: str
    function: str
    init: str


FPU_HEADER = COMPUTE + "eltwise_binary.h"
FPU_BINARY: dict[type, FpuOp] = {
    tirx.Add: FpuOp("add", "add_tiles", "add_init"),
    tirx.Sub: FpuOp("sub", "sub_tiles", "sub_init"),
    tirx.Mul: FpuOp("mul", "mul_tiles", "mul_init"),
}
FPU_BY_NAME = {op.name: op for op in FPU_BINARY.values()}
FPU_BCAST_HEADER = COMPUTE + "bcast.h"


def fpu_bcast_functions(op: str, kind: str) -> tuple[str, str]:
    """(init, tile function) of the FPU op ``op`` whose second operand is a vector tile of ``kind``
    ("col": a per-row vector, its first column spread over the columns; "row": a per-column one)
    spread over the tile: tt-metal 0.81.1 api/compute/bcast.h's ``<op>_bcast_cols_init`` and
    ``<op>_tiles_bcast_cols`` (and ``_rows``), for add, sub and mul."""
    return f"{op}_bcast_{kind}s_init", f"{op}_tiles_bcast_{kind}s"


# -- GELU recognition -----------------------------------------------------------------------------
def _factors(e) -> tuple[float, list]:
    """A product as (constant coefficient, other factors): Mul trees flattened, a division by a
    constant folded into the coefficient, casts dropped."""
    e = strip_casts(e)
    c = constant(e)
    if c is not None:
        return c, []
    if isinstance(e, tirx.Mul):
        (ca, fa), (cb, fb) = _factors(e.a), _factors(e.b)
        return ca * cb, fa + fb
    divisor = constant(e.b) if isinstance(e, tirx.Div) else None
    if divisor:
        ca, fa = _factors(e.a)
        return ca / divisor, fa
    return 1.0, [e]


def _same(a, b) -> bool:
    """Structural equality of element-wise expressions, casts ignored (DST computes at one precision)."""
    a, b = strip_casts(a), strip_casts(b)
    if type(a) is not type(b):
        return False
    if isinstance(a, tirx.BufferLoad):
        return a.buffer.same_as(b.buffer) and ir.structural_equal(list(a.indices), list(b.indices))
    if isinstance(a, (tirx.IntImm, tirx.FloatImm)):
        return float(a.value) == float(b.value)
    if isinstance(a, tirx.Call):
        return a.op.same_as(b.op) and len(a.args) == len(b.args) and all(map(_same, a.args, b.args))
    return isinstance(a, BINARY_NODES) and _same(a.a, b.a) and _same(a.b, b.b)


# A constant written in bfloat16 (8 significant bits) still names the GELU constants.
GELU_CONSTANT_TOLERANCE = 2.0 ** -8


def _near(value: float, target: float) -> bool:
    return abs(value - target) <= abs(target) * GELU_CONSTANT_TOLERANCE


def gelu_operand(e):
    """x when ``e`` is the exact GELU ``0.5 * x * (1 + erf(x / sqrt(2)))`` (products in any
    association, the division as a multiplication by 1/sqrt(2)), else None."""
    coefficient, factors = _factors(e)
    if len(factors) != 2 or not _near(coefficient, 0.5):
        return None
    for x, one_plus in (factors, factors[::-1]):
        one_plus = strip_casts(one_plus)
        if not isinstance(one_plus, tirx.Add):
            continue
        for one, erf in ((one_plus.a, one_plus.b), (one_plus.b, one_plus.a)):
            erf = strip_casts(erf)
            if constant(one) != 1.0 or not (isinstance(erf, tirx.Call) and erf.op.same_as(ir.Op.get("tirx.erf"))):
                continue
            scale, inner = _factors(erf.args[0])
            if len(inner) == 1 and _near(scale, 1.0 / math.sqrt(2.0)) and _same(inner[0], x):
                return x
    return None
