"""Element-wise activations, outside TileLang's examples/.

Modelled on tile-ai/TileOPs ``src/tileops/kernels/elementwise/_base.py`` — its three strategies for a
unary op (``_make_unary_direct``: one element per thread; ``_make_unary_explicit``: ``T.Parallel(threads,
npt)`` over flat indices; ``_make_unary_regcopy``: a fragment of ``threads * npt`` elements copied in
and out) and the fused gated forms (``_make_fused_gated_direct`` / ``_explicit``: ``x[:, :N]`` is the
gate, ``x[:, N:]`` the value, read as ``x[by, N + col]``) — with the op functions of
``elementwise/activations.py`` (exact GELU, Mish, HardSwish, SiLU-and-mul in its exp2 form,
GELU(tanh)-and-mul) and ``_make_leaky_relu_kernel`` (the slope a Python constant); and on KernelBench
TileLang solutions in nathanjpaek/kb-pilot (level 1 problem 88, MinGPT's tanh GELU, one element per
thread with an ``if idx < numel`` guard; ``DSPy/examples/relu/tilelang.py``, a fragment filled and
drained through a flat index split into row and column). Written anew in those idioms; bfloat16 for
float16; 4096 elements (64 rows of 256 gated pairs); 32 to 128 threads (TileOPs: 128 to 256)."""

import functools

import tilelang
import tilelang.language as T
import torch

from tests.examples.harness import Example, randn

N_FLAT, GATED_M, GATED_N = 4096, 64, 256


def gelu(x):
    inv_sqrt_2 = T.cast(0.7071067811865476, "float32")
    return T.cast(0.5, "float32") * x * (T.cast(1.0, "float32") + T.erf(T.cast(x, "float32") * inv_sqrt_2))


def mish(x):
    return x * T.tanh(T.log(T.cast(1.0, "float32") + T.exp(x)))


def hardswish(x):
    three, six, zero = T.cast(3.0, "float32"), T.cast(6.0, "float32"), T.cast(0.0, "float32")
    return x * T.min(T.max(x + three, zero), six) / six


def silu_and_mul(gate, value):
    g = T.Cast("float32", gate)
    return g / (T.cast(1.0, "float32") + T.exp2(-g * T.cast(1.4426950408889634, "float32"))) * value


def gelu_tanh_and_mul(gate, value):
    g = T.Cast("float32", gate)
    inner = T.cast(0.7978845608028654, "float32") * (g + T.cast(0.044715, "float32") * g * g * g)
    return T.cast(0.5, "float32") * g * (T.cast(1.0, "float32") + T.tanh(inner)) * value


@functools.lru_cache(maxsize=16)
def unary_direct_builder(N, dtype, op_func):
    @tilelang.jit(out_idx=[1])
    def kernel(threads_arg):
        @T.prim_func
        def main(x: T.Tensor((N,), dtype), y: T.Tensor((N,), dtype)):
            with T.Kernel(T.ceildiv(N, threads_arg), threads=threads_arg) as bx:
                for i in T.Parallel(threads_arg):
                    idx = bx * threads_arg + i
                    y[idx] = op_func(x[idx])

        return main

    return kernel


@functools.lru_cache(maxsize=16)
def unary_explicit_builder(N, dtype, op_func):
    @tilelang.jit(out_idx=[1])
    def kernel(threads_arg, npt_arg):
        @T.prim_func
        def main(x: T.Tensor((N,), dtype), y: T.Tensor((N,), dtype)):
            with T.Kernel(T.ceildiv(N, threads_arg * npt_arg), threads=threads_arg) as bx:
                for i, j in T.Parallel(threads_arg, npt_arg):
                    idx = (bx * threads_arg + i) * npt_arg + j
                    y[idx] = op_func(x[idx])

        return main

    return kernel


@functools.lru_cache(maxsize=16)
def unary_regcopy_builder(N, dtype, op_func):
    @tilelang.jit(out_idx=[1])
    def kernel(threads_arg, npt_arg):
        block_size = threads_arg * npt_arg

        @T.prim_func
        def main(x: T.Tensor((N,), dtype), y: T.Tensor((N,), dtype)):
            with T.Kernel(T.ceildiv(N, block_size), threads=threads_arg) as bx:
                x_reg = T.alloc_fragment((block_size,), dtype)
                y_reg = T.alloc_fragment((block_size,), dtype)
                T.copy(x[bx * block_size:(bx + 1) * block_size], x_reg)
                for i, j in T.Parallel(threads_arg, npt_arg):
                    y_reg[i * npt_arg + j] = op_func(x_reg[i * npt_arg + j])
                T.copy(y_reg, y[bx * block_size:(bx + 1) * block_size])

        return main

    return kernel


@functools.lru_cache(maxsize=8)
def leaky_relu_builder(N, dtype, negative_slope):
    @tilelang.jit(out_idx=[1])
    def kernel(threads_arg, npt_arg):
        block_size = threads_arg * npt_arg

        @T.prim_func
        def main(x: T.Tensor((N,), dtype), y: T.Tensor((N,), dtype)):
            with T.Kernel(T.ceildiv(N, block_size), threads=threads_arg) as bx:
                x_reg = T.alloc_fragment((block_size,), dtype)
                y_reg = T.alloc_fragment((block_size,), dtype)
                T.copy(x[bx * block_size:(bx + 1) * block_size], x_reg)
                for i, j in T.Parallel(threads_arg, npt_arg):
                    val = x_reg[i * npt_arg + j]
                    zero = T.cast(0, val.dtype)
                    slope = T.cast(negative_slope, val.dtype)
                    y_reg[i * npt_arg + j] = T.if_then_else(val > zero, val, slope * val)
                T.copy(y_reg, y[bx * block_size:(bx + 1) * block_size])

        return main

    return kernel


@functools.lru_cache(maxsize=8)
def fused_gated_direct_builder(M, N, dtype, op_func):
    @tilelang.jit(out_idx=[1])
    def kernel(threads_arg):
        @T.prim_func
        def main(x: T.Tensor((M, 2 * N), dtype), y: T.Tensor((M, N), dtype)):
            with T.Kernel(T.ceildiv(N, threads_arg), M, threads=threads_arg) as (bx, by):
                for i in T.Parallel(threads_arg):
                    col = bx * threads_arg + i
                    y[by, col] = op_func(x[by, col], x[by, N + col])

        return main

    return kernel


@functools.lru_cache(maxsize=8)
def fused_gated_explicit_builder(M, N, dtype, op_func):
    @tilelang.jit(out_idx=[1])
    def kernel(threads_arg, npt_arg):
        block_n = threads_arg * npt_arg

        @T.prim_func
        def main(x: T.Tensor((M, 2 * N), dtype), y: T.Tensor((M, N), dtype)):
            with T.Kernel(T.ceildiv(N, block_n), M, threads=threads_arg) as (bx, by):
                for i, j in T.Parallel(threads_arg, npt_arg):
                    col = (bx * threads_arg + i) * npt_arg + j
                    y[by, col] = op_func(x[by, col], x[by, N + col])

        return main

    return kernel


@tilelang.jit(out_idx=-1)
def gelu_tanh_kernelbench(numel: int, block_size: int = 256, in_dtype: str = "bfloat16", accum_dtype: str = "float"):
    """KernelBench 88 (MinGPT's new GELU): one element per thread, guarded, computed in float32."""
    C0, C1, C2 = 0.5, 0.7978845608028654, 0.044715

    @T.prim_func
    def gelu_kernel(X: T.Tensor((numel,), in_dtype), Y: T.Tensor((numel,), in_dtype)):
        with T.Kernel(T.ceildiv(numel, block_size), threads=block_size) as bx:
            for tx in T.Parallel(block_size):
                idx: T.int32 = bx * block_size + tx
                if idx < numel:
                    x_f32 = T.Cast(accum_dtype, X[idx])
                    inner = x_f32 + C2 * (x_f32 * x_f32 * x_f32)
                    Y[idx] = T.Cast(in_dtype, C0 * x_f32 * (1.0 + T.tanh(C1 * inner)))

    return gelu_kernel


@tilelang.jit(out_idx=-1)
def relu_dspy(batch_size, dim, block_size=128, dtype="bfloat16"):
    """kb-pilot's DSPy ReLU: a flat fragment filled from (row, column) of the 2-D input, guarded, and
    drained the same way."""

    @T.prim_func
    def main(x: T.Tensor((batch_size, dim), dtype), output: T.Tensor((batch_size, dim), dtype)):
        with T.Kernel(T.ceildiv(batch_size * dim, block_size), threads=block_size) as bx:
            x_frag = T.alloc_fragment((block_size,), dtype)
            start = bx * block_size
            for i in T.Parallel(block_size):
                g = start + i
                if g < batch_size * dim:
                    x_frag[i] = x[g // dim, g % dim]
                else:
                    x_frag[i] = T.Cast(dtype, 0)
            for i in T.Parallel(block_size):
                x_frag[i] = T.max(x_frag[i], T.Cast(dtype, 0))
            for i in T.Parallel(block_size):
                g = start + i
                if g < batch_size * dim:
                    output[g // dim, g % dim] = x_frag[i]

    return main


def _flat():
    return (randn(N_FLAT, seed=41),)


def _gated():
    return (randn(GATED_M, 2 * GATED_N, seed=42),)


def _gated_reference(activation):
    def reference(x):
        gate, value = x.float()[:, :GATED_N], x.float()[:, GATED_N:]
        return activation(gate) * value
    return reference


def _gelu_tanh(x):
    return torch.nn.functional.gelu(x.float(), approximate="tanh")


BASE = "tile-ai/TileOPs src/tileops/kernels/elementwise/_base.py: "
EXAMPLES = [
    Example("activation/silu_and_mul", BASE + "_make_fused_gated_explicit with activations.py SiluAndMulFwdKernel",
            fused_gated_explicit_builder(GATED_M, GATED_N, "bfloat16", silu_and_mul), dict(threads_arg=32, npt_arg=8),
            _gated, _gated_reference(torch.nn.functional.silu)),
    Example("activation/gelu_tanh_and_mul",
            BASE + "_make_fused_gated_direct with activations.py GeluTanhAndMulFwdKernel",
            fused_gated_direct_builder(GATED_M, GATED_N, "bfloat16", gelu_tanh_and_mul), dict(threads_arg=128),
            _gated, _gated_reference(_gelu_tanh)),
    Example("activation/gelu_regcopy", BASE + "_make_unary_regcopy with activations.py GeluFwdKernel",
            unary_regcopy_builder(N_FLAT, "bfloat16", gelu), dict(threads_arg=128, npt_arg=8), _flat,
            lambda x: torch.nn.functional.gelu(x.float())),
    Example("activation/mish_explicit", BASE + "_make_unary_explicit with activations.py MishFwdKernel",
            unary_explicit_builder(N_FLAT, "bfloat16", mish), dict(threads_arg=128, npt_arg=8), _flat,
            lambda x: torch.nn.functional.mish(x.float())),
    Example("activation/hardswish_direct", BASE + "_make_unary_direct with activations.py HardswishFwdKernel",
            unary_direct_builder(N_FLAT, "bfloat16", hardswish), dict(threads_arg=128), _flat,
            lambda x: torch.nn.functional.hardswish(x.float())),
    Example("activation/leaky_relu", "tile-ai/TileOPs src/tileops/kernels/elementwise/activations.py: "
            "_make_leaky_relu_kernel", leaky_relu_builder(N_FLAT, "bfloat16", 0.01), dict(threads_arg=128, npt_arg=8),
            _flat, lambda x: torch.nn.functional.leaky_relu(x.float(), 0.01)),
    Example("activation/gelu_tanh_kernelbench",
            "nathanjpaek/kb-pilot KernelBench/src/prompts/correct_tilelang/level1/1_88.py: _build_gelu_kernel",
            gelu_tanh_kernelbench, dict(numel=N_FLAT), _flat, _gelu_tanh),
    Example("activation/relu_fragment", "nathanjpaek/kb-pilot DSPy/examples/relu/tilelang.py: relu_kernel",
            relu_dspy, dict(batch_size=16, dim=256), lambda: (randn(16, 256, seed=43),),
            lambda x: torch.relu(x.float())),
]
