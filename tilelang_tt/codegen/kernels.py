"""G: C++ for one reader/compute/writer PrimFunc, using the rule registry for every intrinsic.

The TIR is the program (MaterializeCoreLoopTT made the per-core loop over the core's blocks):
each statement is printed as it is; the CBs and semaphores its calls name are declared from
``tt.cb_desc`` and ``tt.semaphores``, the runtime arguments it uses read from ``tt.runtime_args``: each a
``uint32_t``, a float scalar parameter's a ``float`` of the argument's bits (``__builtin_bit_cast``, as tt-metal's
own kernel code reinterprets bits: ``hw/ckernels/blackhole/metal/llk_api/llk_sfpu/ckernel_sfpu_exp.h``), and
float math where an expression computes on one (a condition ``scale > 0.0f``).
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import ir, tirx

from tilelang_tt.contract.vocabulary import ArgKind
from tilelang_tt.ir.attrs import Attr, KernelRole
from tilelang_tt.ir.intrin import Intrin, Operand, call_intrin
from tilelang_tt.codegen.emitter import CppEmitter
from tilelang_tt.codegen.rules import (
    ACCESSOR_HEADER,
    CB_INTRINSICS,
    COMPUTE_CB_HEADER,
    COMPUTE_COMMON_HEADER,
    DATAFLOW_HEADER,
    TENSOR_INTRINSICS,
    CodegenError,
    float_literal,
    header_of,
    rule_for,
)
from tilelang_tt.errors import is_user_span, location_string
from tilelang_tt.ir.common import span_of
from tilelang_tt.ir.slices import bound_analyzer, is_assume

# Index arithmetic is unsigned (the kernels' loop counters and runtime args are uint32_t); these ops
# give a different result on a negative value (a window's first key block max(0, (q - w) // bn)), so
# an operand the loop ranges do not prove non-negative is read as int32_t.
SIGNED_OPS = (tirx.FloorDiv, tirx.FloorMod, tirx.Min, tirx.Max, tirx.LT, tirx.LE, tirx.GT, tirx.GE)
FLOOR_DIV = """\
// TIR's floor division and modulo of signed integers (C++ rounds toward zero).
inline int32_t floor_div(int32_t a, int32_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
inline int32_t floor_mod(int32_t a, int32_t b) { return a - floor_div(a, b) * b; }
"""


def _is_float(e) -> bool:
    return str(e.dtype).startswith(("float", "bfloat"))


def _signed(e, text: str) -> str:
    """``text`` (the C++ of index expression ``e``) as a signed integer."""
    return text if isinstance(e, tirx.IntImm) else f"static_cast<int32_t>({text})"


_BINOPS = {
    tirx.Add: "+", tirx.Sub: "-", tirx.Mul: "*", tirx.FloorDiv: "/", tirx.FloorMod: "%", tirx.Div: "/",
    tirx.Mod: "%", tirx.EQ: "==", tirx.NE: "!=", tirx.LT: "<", tirx.LE: "<=", tirx.GT: ">", tirx.GE: ">=",
    tirx.And: "&&", tirx.Or: "||",
}


class _KernelWriter:
    def __init__(self, func: tirx.PrimFunc):
        self.func = func
        self.role = Attr.KERNEL_ROLE.read(func)
        self.em = CppEmitter()
        self.names: dict = {}  # tirx.Var -> C++ name
        self.args = Attr.RUNTIME_ARGS.read(func)
        self.arg_of_var = {a.var: a for a in self.args}
        # what the index arithmetic may be: loop and launch ranges, runtime args below 2^31
        self.analyzer = bound_analyzer(func.body)
        for a in self.args:
            if not _is_float(a.var):  # a float scalar parameter is no index
                self.analyzer.bind(a.var, ir.Range.from_min_extent(0, 2**31 - 1))
        self.used_args: set = set()  # the runtime args' variables the kernel refers to
        self.headers: set[str] = set()
        self.cb_names: dict[int, str] = {}
        self.accessor_names: dict[str, str] = {}
        self.helpers: dict[str, None] = {}  # helper definitions in order of first use
        self.semaphore_names: dict[int, str] = {}

    # -- expressions ---------------------------------------------------------------------------
    def expr(self, e, top: bool = True) -> str:
        if isinstance(e, tirx.IntImm):
            if e.dtype == "bool":
                return "true" if e.value else "false"
            return str(int(e.value))
        if isinstance(e, tirx.Var):
            if e in self.arg_of_var:
                self.used_args.add(e)
            return self.names[e]
        if isinstance(e, tirx.FloatImm) or (isinstance(e, (*_BINOPS, tirx.Min, tirx.Max)) and any(
                _is_float(x) for x in (e.a, e.b))):  # float math (a float scalar parameter in a condition)
            text = self.value_expr(e)
            return text[1:-1] if top and not isinstance(e, tirx.FloatImm) else text  # its outer parentheses
        if isinstance(e, tirx.Cast):
            if str(e.value.dtype).startswith("float") and not str(e.dtype).startswith(("float", "bfloat")):
                return f"static_cast<int32_t>({self.expr(e.value)})"  # an integer element read as a float
            return self.expr(e.value, top)
        if isinstance(e, tirx.Select) or (isinstance(e, tirx.Call) and str(e.op.name) == "tirx.if_then_else"):
            cond, a, b = (e.condition, e.true_value, e.false_value) if isinstance(e, tirx.Select) else e.args
            return f"({self.expr(cond, False)} ? {self.expr(a, False)} : {self.expr(b, False)})"
        if isinstance(e, tirx.Not):
            return f"!({self.expr(e.a)})"
        signed = isinstance(e, SIGNED_OPS) and not all(
            str(x.dtype).startswith("uint") or self.analyzer.can_prove(x >= 0) for x in (e.a, e.b))
        if signed and isinstance(e, (tirx.FloorDiv, tirx.FloorMod)):  # TIR's floor division of a signed value
            self.helpers.setdefault(FLOOR_DIV, None)
            name = "floor_div" if isinstance(e, tirx.FloorDiv) else "floor_mod"
            return f"{name}({_signed(e.a, self.expr(e.a))}, {_signed(e.b, self.expr(e.b))})"
        op = _BINOPS.get(type(e))
        if op is not None:
            a, b = self.expr(e.a, False), self.expr(e.b, False)
            if signed:  # a comparison of values that may be negative: the kernel's unsigned integers as int32
                a, b = (_signed(x, text) for x, text in ((e.a, a), (e.b, b)))
            text = f"{a} {op} {b}"
            return text if top else f"({text})"
        if isinstance(e, (tirx.Min, tirx.Max)):
            a, b = self.expr(e.a, False), self.expr(e.b, False)
            x, y = (_signed(e.a, a), _signed(e.b, b)) if signed else (a, b)
            return f"({x} {'<' if isinstance(e, tirx.Min) else '>'} {y} ? {a} : {b})"
        if isinstance(e, tirx.Call) and str(e.op.name) == "tirx.reinterpret":  # a float's bits, for an SFPU param
            return f"__builtin_bit_cast(uint32_t, {self.value_expr(e.args[0])})"  # a float32 value (eltwise.parameter_bits)
        if isinstance(e, tirx.Call):
            return self.call(e)
        raise CodegenError(f"cannot emit expression {e} ({type(e).__name__})")

    def value_expr(self, e) -> str:
        """An element value of a generated block (``tt.store_tile_element``) in C++: the TIR's
        signed int32 index arithmetic (the kernel's loop counters are unsigned) and float math."""
        if isinstance(e, tirx.IntImm):
            return ("true" if e.value else "false") if e.dtype == "bool" else str(int(e.value))
        if isinstance(e, tirx.FloatImm):
            return float_literal(float(e.value))
        if isinstance(e, tirx.Var):
            return self.expr(e) if e.dtype.startswith(("float", "bfloat")) else f"static_cast<int32_t>({self.expr(e)})"
        if isinstance(e, tirx.Cast):
            dtype = str(e.dtype)
            ctype = "float" if dtype.startswith(("float", "bfloat")) else "bool" if dtype == "bool" else "int32_t"
            return f"static_cast<{ctype}>({self.value_expr(e.value)})"
        if isinstance(e, (tirx.Min, tirx.Max)):
            a, b = self.value_expr(e.a), self.value_expr(e.b)
            return f"({a} {'<' if isinstance(e, tirx.Min) else '>'} {b} ? {a} : {b})"
        if isinstance(e, tirx.Not):
            return f"!({self.value_expr(e.a)})"
        if isinstance(e, tirx.Select) or (isinstance(e, tirx.Call) and str(e.op.name) == "tirx.if_then_else"):
            cond, a, b = (e.condition, e.true_value, e.false_value) if isinstance(e, tirx.Select) else e.args
            return f"({self.value_expr(cond)} ? {self.value_expr(a)} : {self.value_expr(b)})"
        if isinstance(e, tirx.Call) and str(e.op.name) == "tl.infinity":
            return "__builtin_inff()"
        if isinstance(e, tirx.Call) and call_intrin(e) == Intrin.LOAD_ELEMENT:  # an element the reader read
            return self.call(e)
        if isinstance(e, (tirx.FloorDiv, tirx.FloorMod)) and not str(e.dtype).startswith(("float", "bfloat")):
            self.helpers.setdefault(FLOOR_DIV, None)  # TIR's floor division of signed integers
            name = "floor_div" if isinstance(e, tirx.FloorDiv) else "floor_mod"
            return f"{name}({self.value_expr(e.a)}, {self.value_expr(e.b)})"
        op = _BINOPS.get(type(e))
        if op is not None and not isinstance(e, (tirx.FloorDiv, tirx.FloorMod)):
            return f"({self.value_expr(e.a)} {op} {self.value_expr(e.b)})"
        raise CodegenError(f"cannot emit element value {e} ({type(e).__name__})")

    def call(self, c: tirx.Call) -> str:
        intrin = call_intrin(c)
        if intrin is None:
            raise CodegenError(f"cannot emit call to {c.op}")
        rule = rule_for(intrin, compute=self.role == KernelRole.COMPUTE)
        raw = list(c.args)
        self.headers.add(COMPUTE_CB_HEADER if intrin in CB_INTRINSICS and self.role == KernelRole.COMPUTE
                         else header_of(rule, raw))
        if rule.helper:
            self.helpers.setdefault(rule.helper, None)
        args = [self.arg(intrin, rule, i, a) for i, a in enumerate(raw)]
        return rule.render(args, raw)

    def arg(self, intrin: Intrin, rule, position: int, a) -> str:
        if isinstance(a, tirx.StringImm):
            return a.value
        if intrin == Intrin.STORE_TILE_ELEMENT and position == 4:
            return self.value_expr(a)
        if isinstance(a, tirx.Var) and intrin in TENSOR_INTRINSICS and position == 1:
            return self.accessor_names[a]
        if position in rule.cb_args and isinstance(a, tirx.IntImm):
            return self.cb_names[int(a.value)]
        if position in rule.semaphore_args:
            return self.semaphore_names[int(a.value)]
        if isinstance(a, tirx.FloatImm):
            return float_literal(float(a.value))
        return self.expr(a)

    # -- statements ----------------------------------------------------------------------------
    def stmt(self, s) -> None:
        if isinstance(s, tirx.SeqStmt):
            for x in s.seq:
                self.stmt(x)
            return
        span = span_of(s)  # the user's statement it was lowered from (not one of TileLang's tile-op wrappers)
        with self.em.from_origin(location_string(span) if is_user_span(span) else ""):
            self._stmt(s)

    def _stmt(self, s) -> None:
        if isinstance(s, tirx.For):
            var = self.em.unique(s.loop_var.name)
            self.names[s.loop_var] = var
            lo, ext = self.expr(s.min), self.expr(s.extent)
            start = "0" if lo == "0" else lo
            end = ext if start == "0" else f"{start} + {ext}"
            with self.em.block(f"for (uint32_t {var} = {start}; {var} < {end}; ++{var})"):
                self.stmt(s.body)
        elif isinstance(s, tirx.Bind):
            var = self.em.unique(s.var.name)
            self.names[s.var] = var
            if s.var.dtype.startswith(("float", "bfloat")):  # a scalar of the kernel (1.0 / D), in float math
                self.em.line(f"const float {var} = {self.value_expr(s.value)};")
            else:
                self.em.line(f"const uint32_t {var} = {self.expr(s.value)};")
        elif isinstance(s, tirx.Evaluate):
            if isinstance(s.value, tirx.IntImm) or is_assume(s):  # no code: a no-op, a fact for the analyzer
                return
            self.em.line(f"{self.call(s.value)};")
        elif isinstance(s, tirx.IfThenElse):
            with self.em.block(f"if ({self.expr(s.condition)})"):
                self.stmt(s.then_case)
                if s.else_case is not None:
                    self.em.chain("else")
                    self.stmt(s.else_case)
        else:
            raise CodegenError(f"cannot emit statement {type(s).__name__}")

    # -- kernel --------------------------------------------------------------------------------
    def emit(self) -> str:
        em = self.em
        body_em = CppEmitter()
        body_em._names = em._names  # one name space for the whole kernel
        self.em = body_em
        self.em._depth = 1
        for idx, arg in enumerate(self.args):
            name = self.em.unique(arg.name)
            self.names[arg.var] = name
            if _is_float(arg.var):  # a float scalar parameter: the runtime argument holds its float32 bits
                self.em.line(f"const float {name} = __builtin_bit_cast(float, get_arg_val<uint32_t>({idx}));")
            else:
                self.em.line(f"const uint32_t {name} = get_arg_val<uint32_t>({idx});")
        cbs = sorted(Attr.CB_DESC.read(self.func).values(), key=lambda cb: cb.index)
        used_cbs = self.used_ids(Operand.CB)
        if used_cbs:
            self.em.line()
        for cb in cbs:
            if cb.index in used_cbs:
                cname = self.em.unique(f"cb_{cb.name}")
                self.cb_names[cb.index] = cname
                self.em.line(f"constexpr uint32_t {cname} = {cb.index};")
        used_semaphores = self.used_ids(Operand.SEMAPHORE)
        declared = [sem for sem in Attr.SEMAPHORES.read(self.func) if sem.id in used_semaphores]
        if declared:
            self.em.line()
        for sem in declared:
            self.semaphore_names[sem.id] = self.em.unique(f"sem_{sem.name}")
            self.em.line(f"constexpr uint32_t {self.semaphore_names[sem.id]} = {sem.id};")
        accessors = sorted(Attr.TENSOR_ACCESSOR.read(self.func).values(), key=lambda acc: acc.cta_offset)
        data_vars = {buf.name: buf.data for buf in self.func.buffer_map.values()}
        if accessors:
            self.em.line()
            self.headers.add(ACCESSOR_HEADER)
        for acc in accessors:
            buffer = acc.buffer
            args_name = self.em.unique(f"{buffer}_args")
            name = self.em.unique(buffer)
            self.accessor_names[data_vars[buffer]] = name
            offsets = f"{acc.cta_offset}, {acc.crta_offset}" if acc.sharded else f"{acc.cta_offset}"
            address = next(a.var for a in self.args if a.kind == ArgKind.BUFFER_ADDRESS and a.buffer == buffer)
            self.em.line(f"constexpr auto {args_name} = TensorAccessorArgs<{offsets}>();")
            self.em.line(f"const auto {name} = TensorAccessor({args_name}, {self.expr(address)}, "
                         f"{acc.page_size});")
        self.em.line()
        self.stmt(self.func.body)
        # every kernel of a program takes the same work arguments; read only those this one refers to
        body_em.keep([arg.var in self.used_args for arg in self.args])

        if self.role in (KernelRole.READER, KernelRole.WRITER):
            self.headers.add(DATAFLOW_HEADER)
        else:
            self.headers.add(COMPUTE_COMMON_HEADER)
        em.line("// Generated by tilelang-tt from TileLang kernel "
                f"`{Attr.SOURCE_FUNC.read(self.func)}`: {self.role.value} kernel.")
        em.line("#include <cstdint>")
        for header in sorted(self.headers):
            em.line(f'#include "{header}"')
        em.line()
        for helper in self.helpers:
            for line in helper.rstrip("\n").split("\n"):
                em.line(line)
            em.line()
        em.line("void kernel_main() {")
        em.extend(body_em)
        em.line("}")
        return em.source(), em.source_map()

    def used_ids(self, kind: Operand) -> set[int]:
        """The CB or semaphore ids (``kind``) the kernel's calls name."""
        used: set[int] = set()

        def visit(node):
            if isinstance(node, tirx.Call):
                intrin = call_intrin(node)
                if intrin is None:
                    return
                for i in intrin.positions(kind):
                    if isinstance(node.args[i], tirx.IntImm):
                        used.add(int(node.args[i].value))

        tirx.stmt_functor.post_order_visit(self.func.body, visit)
        return used


def emit_kernel(func: tirx.PrimFunc) -> tuple[str, dict[int, str]]:
    """The kernel's C++ source, and its source map: line number -> the location (``file:line:column``)
    of the user's statement the line was generated from, for the lines that come from one."""
    return _KernelWriter(func).emit()



