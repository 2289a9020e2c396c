"""A Llama-style decoder layer: seven TileLang kernels in one IRModule, built with ``tvm.build``.

    python examples/llama_layer.py [--seq 128 --hidden 512 --heads 8 --mlp 1408] [--out out/llama]
    python examples/llama_layer.py --mesh 2 4 --mlp 1536     # tensor parallel on a T3000's 2 x 4 chips

The layer (batch 1, bfloat16 tensors, float32 accumulation) as a user writes it on a GPU:

    h   = x + o_proj(attention(rope(qkv_proj(rms_norm(x, w_attn)))))
    out = h + down_proj(silu(gate_proj(n)) * up_proj(n)),  n = rms_norm(h, w_mlp)

Each stage is a ``@T.prim_func`` written as TileLang's examples write kernels (examples/gemm,
examples/norm/rms_norm.py, examples/flash_attention/example_mha_fwd_bshd.py): a factory of the sizes
returning the kernel, a ``T.Kernel`` grid of output blocks, shared blocks filled with ``T.copy``,
fragments, ``T.gemm``, ``T.reduce_sum`` / ``T.reduce_max`` and ``T.Parallel`` element loops. The
tensors are row-major ``[seq, features]``. The fused QKV projection's columns are grouped by head,
``[q_0 k_0 v_0 | q_1 k_1 v_1 | ...]`` (Megatron-LM's fused layout), so each head's query, key and
value are ``3 * head_dim`` consecutive columns; attention reads them, and writes head ``h`` of its
output at columns ``h * head_dim`` to ``(h + 1) * head_dim``, with column slices (the bshd form of
the flash attention example with batch 1).

The example builds the module for Wormhole and Blackhole, runs the layer stage by stage on the
emulator against a float32 torch layer (each stage fed the emulator's output of the stage before, so
its error is its own), reports the end-to-end error and the timing model's predicted time of each
kernel, then exports the Wormhole module to one ``.tenstorrent`` file, loads it back and runs the
layer again from it. With ``--mesh R C`` it runs the layer tensor parallel on an ``R x C`` mesh of
Wormhole chips instead (:data:`MESH_OPTIONS`, :func:`run_mesh`): each stage's error, its predicted time
on one chip and per chip of the mesh with its combine's and its busiest link's, the same bits on a
second run, and whether every tensor a kernel leaves on a chip is where the next kernel reads it.
"""

import argparse
import math
import time
from dataclasses import dataclass
from pathlib import Path

import tilelang.language as T  # tilelang before tvm: TileLang carries its own TVM
import torch
import tvm

from tilelang_tt.module import predicted_seconds  # importing tilelang_tt registers target="tenstorrent"

LOG2E = 1.44269504
EPS = 1e-6
ARCHS = ("wormhole_b0", "blackhole")


@dataclass(frozen=True)
class LayerSizes:
    seq: int = 128
    hidden: int = 512
    heads: int = 8
    mlp: int = 1408
    rope_base: float = 10000.0

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads


# -- the kernels --------------------------------------------------------------------------------------
def rms_norm(M, N, blk_m=32, dtype="bfloat16", accum_dtype="float32"):
    """Y = X / sqrt(mean(X^2) + eps) * W, one program per ``blk_m`` whole rows (examples/norm/rms_norm.py)."""

    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), W: T.Tensor((N,), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, blk_m), threads=128) as bx:
            x_s = T.alloc_shared((blk_m, N), dtype)
            w_s = T.alloc_shared((N,), dtype)
            y_s = T.alloc_shared((blk_m, N), dtype)
            x_f = T.alloc_fragment((blk_m, N), accum_dtype)
            sq = T.alloc_fragment((blk_m, N), accum_dtype)
            inv_rms = T.alloc_fragment((blk_m,), accum_dtype)
            T.copy(X[bx * blk_m : (bx + 1) * blk_m, :], x_s)
            T.copy(W, w_s)
            T.copy(x_s, x_f)
            for i, j in T.Parallel(blk_m, N):
                sq[i, j] = x_f[i, j] * x_f[i, j]
            T.reduce_sum(sq, inv_rms, dim=1)
            for i in T.Parallel(blk_m):
                inv_rms[i] = T.rsqrt(inv_rms[i] / N + EPS)
            for i, j in T.Parallel(blk_m, N):
                y_s[i, j] = x_f[i, j] * inv_rms[i] * w_s[j]
            T.copy(y_s, Y[bx * blk_m : (bx + 1) * blk_m, :])

    return main


def matmul(M, N, K, block_M=64, block_N=64, block_K=64, dtype="bfloat16", accum_dtype="float32"):
    """C = A @ B (examples/gemm/example_gemm.py): the fused QKV projection."""

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), dtype)
            B_s = T.alloc_shared((block_K, block_N), dtype)
            C_f = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_f)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_s)
                T.copy(B[k * block_K, bx * block_N], B_s)
                T.gemm(A_s, B_s, C_f)
            T.copy(C_f, C[by * block_M, bx * block_N])

    return main


def matmul_residual(M, N, K, block_M=64, block_N=64, block_K=64, dtype="bfloat16", accum_dtype="float32"):
    """C = R + A @ B: a projection whose epilogue adds the residual stream (output and down projections)."""

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), R: T.Tensor((M, N), dtype),
             C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), dtype)
            B_s = T.alloc_shared((block_K, block_N), dtype)
            R_s = T.alloc_shared((block_M, block_N), dtype)
            C_f = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_f)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_s)
                T.copy(B[k * block_K, bx * block_N], B_s)
                T.gemm(A_s, B_s, C_f)
            T.copy(R[by * block_M, bx * block_N], R_s)
            for i, j in T.Parallel(block_M, block_N):
                C_f[i, j] += R_s[i, j]
            T.copy(C_f, C[by * block_M, bx * block_N])

    return main


def matmul_row_parallel(M, N, K, panels, block_M=64, block_N=64, block_K=64, dtype="bfloat16",
                        accum_dtype="float32"):
    """C += A @ B summed over ``panels`` panels of K (grid dimension ``bp``), each block adding its
    panel's product into C with ``T.atomic_add``: the output and down projections on a mesh, row-parallel
    (each chip holds its panel of A's columns and of B's rows, the residual C's initial value, and the
    chips' partial sums are all-reduced over the fabric)."""
    width = K // panels

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), panels, threads=128) as (bx, by, bp):
            A_s = T.alloc_shared((block_M, block_K), dtype)
            B_s = T.alloc_shared((block_K, block_N), dtype)
            C_f = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_f)
            for k in T.Pipelined(T.ceildiv(width, block_K), num_stages=2):
                T.copy(A[by * block_M, bp * width + k * block_K], A_s)
                T.copy(B[bp * width + k * block_K, bx * block_N], B_s)
                T.gemm(A_s, B_s, C_f)
            T.atomic_add(C[by * block_M, bx * block_N], C_f)

    return main


def rotary(seq, hidden, heads, block_M=32, dtype="bfloat16", accum_dtype="float32"):
    """Rotary embedding of the query and key of each head of the fused QKV tensor, Llama's "rotate
    half" form (a head's column j < half pairs with column j + half), written per head as ``QK =
    [q_0 k_0 | q_1 k_1 | ...]``, ``[seq, 2 * hidden]``: program ``(bx, by, bz)`` rotates the query
    (``bx`` 0) or the key (``bx`` 1) of head ``by`` over rows ``bz * block_M``. A half head of 32
    columns is one tile column, read by its own copy."""
    dim = hidden // heads
    half = dim // 2

    @T.prim_func
    def main(QKV: T.Tensor((seq, 3 * hidden), dtype), Cos: T.Tensor((seq, half), dtype),
             Sin: T.Tensor((seq, half), dtype), QK: T.Tensor((seq, 2 * hidden), dtype)):
        with T.Kernel(2, heads, T.ceildiv(seq, block_M), threads=128) as (bx, by, bz):
            c_s = T.alloc_shared((block_M, half), dtype)
            s_s = T.alloc_shared((block_M, half), dtype)
            x1 = T.alloc_shared((block_M, half), dtype)
            x2 = T.alloc_shared((block_M, half), dtype)
            y1 = T.alloc_fragment((block_M, half), accum_dtype)
            y2 = T.alloc_fragment((block_M, half), accum_dtype)
            T.copy(Cos[bz * block_M, 0], c_s)
            T.copy(Sin[bz * block_M, 0], s_s)
            T.copy(QKV[bz * block_M, by * 3 * dim + bx * dim], x1)
            T.copy(QKV[bz * block_M, by * 3 * dim + bx * dim + half], x2)
            for i, j in T.Parallel(block_M, half):
                y1[i, j] = x1[i, j] * c_s[i, j] - x2[i, j] * s_s[i, j]
                y2[i, j] = x2[i, j] * c_s[i, j] + x1[i, j] * s_s[i, j]
            T.copy(y1, QK[bz * block_M, by * 2 * dim + bx * dim])
            T.copy(y2, QK[bz * block_M, by * 2 * dim + bx * dim + half])

    return main


def attention(seq, hidden, heads, block_M=64, block_N=64, dtype="bfloat16", accum_dtype="float32"):
    """Causal flash attention (examples/flash_attention/example_mha_fwd_bshd.py, batch 1): program
    ``(bx, by)`` computes query block ``bx`` of head ``by``: the online softmax in base 2 over the key
    blocks up to its diagonal. The head's Q and K are its two slices of ``QK``, its V the last third of
    its slice of ``QKV``."""
    dim = hidden // heads
    scale = dim**-0.5 * LOG2E

    @T.prim_func
    def main(QK: T.Tensor((seq, 2 * hidden), dtype), QKV: T.Tensor((seq, 3 * hidden), dtype),
             O: T.Tensor((seq, hidden), dtype)):
        with T.Kernel(T.ceildiv(seq, block_M), heads, threads=128) as (bx, by):
            q_s = T.alloc_shared((block_M, dim), dtype)
            k_s = T.alloc_shared((block_N, dim), dtype)
            v_s = T.alloc_shared((block_N, dim), dtype)
            o_s = T.alloc_shared((block_M, dim), dtype)
            s = T.alloc_fragment((block_M, block_N), accum_dtype)
            p = T.alloc_fragment((block_M, block_N), dtype)
            o = T.alloc_fragment((block_M, dim), accum_dtype)
            m_new = T.alloc_fragment((block_M,), accum_dtype)
            m_old = T.alloc_fragment((block_M,), accum_dtype)
            alpha = T.alloc_fragment((block_M,), accum_dtype)
            p_sum = T.alloc_fragment((block_M,), accum_dtype)
            l = T.alloc_fragment((block_M,), accum_dtype)

            T.copy(QK[bx * block_M : (bx + 1) * block_M, by * 2 * dim : by * 2 * dim + dim], q_s)
            T.fill(o, 0)
            T.fill(l, 0)
            T.fill(m_new, -T.infinity(accum_dtype))
            for kb in T.Pipelined(T.ceildiv((bx + 1) * block_M, block_N), num_stages=1):
                T.copy(QK[kb * block_N : (kb + 1) * block_N, by * 2 * dim + dim : by * 2 * dim + 2 * dim], k_s)
                for i, j in T.Parallel(block_M, block_N):
                    s[i, j] = T.if_then_else(bx * block_M + i >= kb * block_N + j, 0, -T.infinity(accum_dtype))
                T.gemm(q_s, k_s, s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
                T.copy(m_new, m_old)
                T.fill(m_new, -T.infinity(accum_dtype))
                T.reduce_max(s, m_new, dim=1, clear=False)
                for i in T.Parallel(block_M):
                    m_new[i] = T.max(m_new[i], m_old[i])
                for i in T.Parallel(block_M):
                    alpha[i] = T.exp2(m_old[i] * scale - m_new[i] * scale)
                for i, j in T.Parallel(block_M, block_N):
                    s[i, j] = T.exp2(s[i, j] * scale - m_new[i] * scale)
                T.reduce_sum(s, p_sum, dim=1)
                for i in T.Parallel(block_M):
                    l[i] = l[i] * alpha[i] + p_sum[i]
                T.copy(s, p)
                for i, d in T.Parallel(block_M, dim):
                    o[i, d] *= alpha[i]
                T.copy(QKV[kb * block_N : (kb + 1) * block_N, by * 3 * dim + 2 * dim : by * 3 * dim + 3 * dim], v_s)
                T.gemm(p, v_s, o, policy=T.GemmWarpPolicy.FullRow)
            for i, d in T.Parallel(block_M, dim):
                o[i, d] /= l[i]
            T.copy(o, o_s)
            T.copy(o_s, O[bx * block_M : (bx + 1) * block_M, by * dim : (by + 1) * dim])

    return main


def swiglu(M, N, K, block_M=64, block_N=64, block_K=64, dtype="bfloat16", accum_dtype="float32"):
    """A = silu(X @ Wg) * (X @ Wu): the gate and up projections share the reads of X, and the
    epilogue applies SiLU (x * sigmoid(x)) and the product."""

    @T.prim_func
    def main(X: T.Tensor((M, K), dtype), Wg: T.Tensor((K, N), dtype), Wu: T.Tensor((K, N), dtype),
             A: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            X_s = T.alloc_shared((block_M, block_K), dtype)
            G_s = T.alloc_shared((block_K, block_N), dtype)
            U_s = T.alloc_shared((block_K, block_N), dtype)
            g = T.alloc_fragment((block_M, block_N), accum_dtype)
            u = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(g)
            T.clear(u)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(X[by * block_M, k * block_K], X_s)
                T.copy(Wg[k * block_K, bx * block_N], G_s)
                T.copy(Wu[k * block_K, bx * block_N], U_s)
                T.gemm(X_s, G_s, g)
                T.gemm(X_s, U_s, u)
            for i, j in T.Parallel(block_M, block_N):
                g[i, j] = g[i, j] * T.sigmoid(g[i, j]) * u[i, j]
            T.copy(g, A[by * block_M, bx * block_N])

    return main


def layer_module(sz: LayerSizes, chips: int = 1) -> tvm.IRModule:
    """The seven kernels of the layer as one IRModule (the RMS norm serves both norms); for a mesh of
    ``chips`` chips the output and down projections are row-parallel, a K panel per chip."""
    S, H, F = sz.seq, sz.hidden, sz.mlp
    if chips == 1:
        o_proj, down_proj = matmul_residual(S, H, H), matmul_residual(S, H, F)
    else:
        o_proj, down_proj = matmul_row_parallel(S, H, H, chips), matmul_row_parallel(S, H, F, chips)
    return tvm.IRModule({
        "rms_norm": rms_norm(S, H),
        "qkv_proj": matmul(S, 3 * H, H),
        "rotary": rotary(S, H, sz.heads),
        "attention": attention(S, H, sz.heads),
        "o_proj": o_proj,
        "swiglu": swiglu(S, F, H),
        "down_proj": down_proj,
    })


# The layer on a mesh of chips, tensor parallel as Megatron-LM splits a transformer layer (Shoeybi et al., 2019,
# "Megatron-LM", section 3): each kernel's compile options. Column-parallel QKV and gate/up projections (a chip
# computes a panel of the output columns: its heads' q, k, v, its panel of the MLP); rotary embedding and attention
# over the chip's heads; row-parallel output and down projections (a chip multiplies its panel of K, the partial sums
# all-reduced over the fabric, so every chip holds the sum). The norms replicated: one mesh program, every chip
# normalizing its own copy of the residual stream (tt-metal's MeshWorkload over the mesh, replicated MeshBuffers).
MESH_OPTIONS = {
    "rms_norm": {"mesh_axis": "replicate"},
    "qkv_proj": {"mesh_axis": "blockIdx.x"},
    "rotary": {"mesh_axis": "blockIdx.y"},
    "attention": {"mesh_axis": "blockIdx.y"},
    "o_proj": {"mesh_reduce": "all_reduce"},
    "swiglu": {"mesh_axis": "blockIdx.x"},
    "down_proj": {"mesh_reduce": "all_reduce"},
}


def build_layer(sz: LayerSizes, arch: str, mesh: tuple[int, int] = (1, 1)):
    """The layer's module for ``arch`` on a ``mesh`` of chips: ``tvm.build`` of the whole module on one
    chip; on a mesh, each kernel built with its :data:`MESH_OPTIONS` as ``tt.*`` PassContext config keys and
    the kernels gathered into one module (``import_module``, as ``tvm.build`` gathers device code)."""
    target = f"tenstorrent/{arch}"
    mod = layer_module(sz, mesh[0] * mesh[1])
    if mesh == (1, 1):
        return tvm.build(mod, target=target)
    layer = None
    for gv, func in mod.functions.items():
        config = {"tt.mesh": mesh, **{f"tt.{k}": v for k, v in MESH_OPTIONS[gv.name_hint].items()}}
        with tvm.transform.PassContext(config=config):
            built = tvm.build(tvm.IRModule({gv.name_hint: func}), target=target)
        if layer is None:
            layer = built
        else:
            layer.import_module(built)
    return layer


# -- the float32 reference and the weights -----------------------------------------------------------
def rope_tables(sz: LayerSizes) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin of position * base^(-2j / head_dim), ``[seq, head_dim // 2]``, float32."""
    half = sz.head_dim // 2
    inv_freq = sz.rope_base ** (-torch.arange(half, dtype=torch.float64) * 2 / sz.head_dim)
    angles = torch.arange(sz.seq, dtype=torch.float64)[:, None] * inv_freq[None, :]
    return angles.cos().float(), angles.sin().float()


def make_weights(sz: LayerSizes, seed: int = 0) -> dict[str, torch.Tensor]:
    """Random weights scaled as a trained layer's keep activations of order 1, bfloat16."""
    gen = torch.Generator().manual_seed(seed)
    H, F = sz.hidden, sz.mlp

    def randn(*shape, scale=1.0):
        return (torch.randn(*shape, generator=gen) * scale).to(torch.bfloat16)

    cos, sin = rope_tables(sz)
    return {
        "w_attn": (1 + 0.1 * torch.randn(H, generator=gen)).to(torch.bfloat16),
        "w_mlp": (1 + 0.1 * torch.randn(H, generator=gen)).to(torch.bfloat16),
        "w_qkv": randn(H, 3 * H, scale=H**-0.5),
        "w_o": randn(H, H, scale=H**-0.5),
        "w_gate": randn(H, F, scale=H**-0.5),
        "w_up": randn(H, F, scale=H**-0.5),
        "w_down": randn(F, H, scale=F**-0.5),
        "cos": cos.to(torch.bfloat16),
        "sin": sin.to(torch.bfloat16),
    }


def torch_stages(sz: LayerSizes) -> dict:
    """Each stage of the layer in float32 torch, a function of the arguments its kernel takes."""
    H, D, half = sz.hidden, sz.head_dim, sz.head_dim // 2

    def rms_norm(x, weight):
        return x * torch.rsqrt((x * x).mean(dim=-1, keepdim=True) + EPS) * weight

    def rotary(qkv, cos, sin):  # per head [q k v] -> per head [q k], each rotated
        heads = qkv.reshape(sz.seq, sz.heads, 3, D)[:, :, :2]
        x1, x2 = heads[..., :half], heads[..., half:]
        c, s = cos[:, None, None, :], sin[:, None, None, :]
        return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1).reshape(sz.seq, 2 * H)

    def attention(qk, qkv):
        q, k = qk.reshape(sz.seq, sz.heads, 2, D).unbind(2)
        v = qkv.reshape(sz.seq, sz.heads, 3, D)[:, :, 2]
        q, k, v = (t.transpose(0, 1) for t in (q, k, v))
        scores = q @ k.transpose(1, 2) / math.sqrt(D)
        causal = torch.ones(sz.seq, sz.seq, dtype=torch.bool).tril()
        probs = scores.masked_fill(~causal, float("-inf")).softmax(dim=-1)
        return (probs @ v).transpose(0, 1).reshape(sz.seq, H)

    return {
        "attn_norm": rms_norm,
        "qkv_proj": lambda n, w_qkv: n @ w_qkv,
        "rotary": rotary,
        "attention": attention,
        "o_proj": lambda o, w_o, x: x + o @ w_o,
        "mlp_norm": rms_norm,
        "swiglu": lambda n, w_gate, w_up: torch.nn.functional.silu(n @ w_gate) * (n @ w_up),
        "down_proj": lambda a, w_down, h: h + a @ w_down,
    }


# -- the layer on the emulator -----------------------------------------------------------------------
# (stage, kernel, the kernel's inputs: "x" the layer's input, a stage's output or a weight): the data flow
STAGES = (
    ("attn_norm", "rms_norm", ("x", "w_attn")),
    ("qkv_proj", "qkv_proj", ("attn_norm", "w_qkv")),
    ("rotary", "rotary", ("qkv_proj", "cos", "sin")),
    ("attention", "attention", ("rotary", "qkv_proj")),
    ("o_proj", "o_proj", ("attention", "w_o", "x")),
    ("mlp_norm", "rms_norm", ("o_proj", "w_mlp")),
    ("swiglu", "swiglu", ("mlp_norm", "w_gate", "w_up")),
    ("down_proj", "down_proj", ("swiglu", "w_down", "o_proj")),
)


def output_shapes(sz: LayerSizes) -> dict[str, tuple[int, int]]:
    S, H = sz.seq, sz.hidden
    return {"attn_norm": (S, H), "qkv_proj": (S, 3 * H), "rotary": (S, 2 * H), "attention": (S, H),
            "o_proj": (S, H), "mlp_norm": (S, H), "swiglu": (S, sz.mlp), "down_proj": (S, H)}


def sums_into_output(kernel: str, chips: int) -> bool:
    """Whether ``kernel``'s blocks add into its output across ``chips`` chips (a row-parallel projection on a
    mesh): it then takes the residual, its stage's last input, as the output's initial value."""
    return chips > 1 and "mesh_reduce" in MESH_OPTIONS[kernel]


def run_layer(module, sz: LayerSizes, w: dict[str, torch.Tensor], x: torch.Tensor,
              chips: int = 1) -> dict[str, torch.Tensor]:
    """Run the layer's kernels (built for ``chips`` chips) in order with ``module[kernel](*inputs, output)``
    (TVM's call: every parameter, the output written in place); returns the weights, ``x`` and each stage's
    output."""
    values = {**w, "x": x}
    shapes = output_shapes(sz)
    for stage, kernel, inputs in STAGES:
        if sums_into_output(kernel, chips):
            *inputs, residual = inputs
            values[stage] = values[residual].clone()
        else:
            values[stage] = torch.empty(shapes[stage], dtype=torch.bfloat16)
        module[kernel](*(values[name] for name in inputs), values[stage])
    return values


def relative_error(got: torch.Tensor, want: torch.Tensor) -> float:
    """max |got - want| / max |want|."""
    return ((got.float() - want).abs().max() / want.abs().max()).item()


def check_stages(sz: LayerSizes, values: dict[str, torch.Tensor]) -> tuple[dict[str, float], float]:
    """Each stage's relative error against torch given the same (emulator) inputs, and the layer's
    end to end against torch from ``x`` and the weights alone; returns ``({stage: error}, error)``."""
    ref = torch_stages(sz)
    errors = {stage: relative_error(values[stage], ref[stage](*(values[name].float() for name in inputs)))
              for stage, _, inputs in STAGES}
    chained = {name: t.float() for name, t in values.items() if name not in ref}
    for stage, _, inputs in STAGES:
        chained[stage] = ref[stage](*(chained[name] for name in inputs))
    return errors, relative_error(values["down_proj"], chained["down_proj"])


def predicted_times(module) -> dict[str, float]:
    """The timing model's predicted time (s) of each stage's kernel."""
    # rms_norm runs twice on tensors of the same sizes: the time of its last run counts for each call
    return {stage: predicted_seconds(module.program(kernel)) for stage, kernel, _ in STAGES}


def placement(module, kernel: str, position: int) -> str:
    """Where the tensor at parameter ``position`` of ``kernel`` lies on the mesh as the kernel reads or
    leaves it: ``"whole"`` on every chip (replicated, all-reduced, or any tensor of a one-chip program) or
    ``"panel of dim d"`` (sharded: each chip its consecutive part)."""
    mesh = module.program(kernel).plan.mesh
    tensor = None if mesh is None else mesh.tensors[position]
    if tensor is None or tensor.distribution != "sharded":
        return "whole"  # a partial sum is all-reduced: whole on every chip after the kernel
    return f"panel of dim {tensor.dim}"


def handoffs(module, chips: int) -> list[tuple[str, str, str, str]]:
    """Each tensor one stage leaves for a later one: (tensor, reader, where the writer leaves it, where the
    reader reads it). On a mesh they agree when each chip's tensors stay where the next kernel needs them."""
    written = {stage: kernel for stage, kernel, _ in STAGES}  # a kernel's output: its last parameter
    out = []
    for stage, kernel, inputs in STAGES:
        summed = sums_into_output(kernel, chips)
        for position, name in enumerate(inputs):
            if name not in written:
                continue  # the layer's input x (on every chip) and the weights (each chip its panel, loaded once)
            left = placement(module, written[name], -1)
            needed = placement(module, kernel, len(inputs) - 1 if summed and position == len(inputs) - 1 else position)
            out.append((name, stage, left, needed))
    return out


def chip_times(module) -> dict[str, tuple[float, float, float]]:
    """Per stage: the predicted seconds of its kernel on the slowest chip (every chip runs at once), of
    them the combine's of a sum across the chips (its second workload), and the busy seconds of its
    busiest fabric link (both 0 without a sum across the chips)."""
    times = {}
    for stage, kernel, _ in STAGES:
        counters = module.program(kernel).last_counters
        timing, devices = counters["timing"], counters.get("devices", [])
        combine = max((sum(run["timing"]["seconds"] for run in d["launches"][1:]) for d in devices if "launches" in d),
                      default=0.0)
        busy = [link["busy"] for d in devices for link in d["timing"].get("links", [])]
        times[stage] = (timing["seconds"], combine, max(busy, default=0) / timing["clock_hz"])
    return times


def run_mesh(sz: LayerSizes, mesh: tuple[int, int], w: dict[str, torch.Tensor], x: torch.Tensor,
             arch: str = ARCHS[0]) -> dict:
    """The tensor-parallel layer on a ``mesh`` of chips against the one-chip layer on ``arch``: each stage's
    error against torch, its predicted time on one chip and per chip of the mesh (:func:`chip_times`), the
    same bits on a second run, and where each chip's tensors lie between the kernels (:func:`handoffs`)."""
    chips = mesh[0] * mesh[1]
    one_chip, layer = build_layer(sz, arch), build_layer(sz, arch, mesh)
    run_layer(one_chip, sz, w, x)
    values = run_layer(layer, sz, w, x, chips)
    errors, end_to_end = check_stages(sz, values)
    again = run_layer(layer, sz, w, x, chips)
    same_bits = all(torch.equal(values[stage].view(torch.int16), again[stage].view(torch.int16))
                    for stage, _, _ in STAGES)
    return {"errors": errors, "end_to_end": end_to_end, "same_bits": same_bits, "one_chip": predicted_times(one_chip),
            "per_chip": chip_times(layer), "handoffs": handoffs(layer, chips), "values": values, "module": layer}


def print_mesh(mesh: tuple[int, int], result: dict, arch: str = ARCHS[0]) -> None:
    """The table of :func:`run_mesh`'s result: per stage its split, error, one-chip and per-chip us (the
    combine's part of it) and its busiest link's busy us; the layer's sums."""
    chips = mesh[0] * mesh[1]
    print(f"\ntensor parallel on a {mesh[0]}x{mesh[1]} mesh of {chips} {arch} chips (predicted us)")
    print(f"{'stage':<10} {'split':<14} {'rel. error':>10} {'one chip':>9} {'per chip':>9} {'combine':>8} "
          f"{'links':>7}")
    for stage, kernel, _ in STAGES:
        split = {"blockIdx.x": "columns", "blockIdx.y": "heads", "replicate": "replicated"}.get(
            MESH_OPTIONS[kernel].get("mesh_axis"), "K, all-reduce")
        seconds, combine, links = result["per_chip"][stage]
        print(f"{stage:<10} {split:<14} {result['errors'][stage]:>10.2e} {result['one_chip'][stage] * 1e6:>9.1f} "
              f"{seconds * 1e6:>9.1f} {combine * 1e6:>8.1f} {links * 1e6:>7.1f}")
    one = sum(result["one_chip"].values())
    per_chip, combine, links = (sum(t[i] for t in result["per_chip"].values()) for i in range(3))
    print(f"{'layer':<10} {'':<14} {result['end_to_end']:>10.2e} {one * 1e6:>9.1f} {per_chip * 1e6:>9.1f} "
          f"{combine * 1e6:>8.1f} {links * 1e6:>7.1f}")
    print(f"the layer on the mesh: {per_chip / one:.2f}x the one-chip layer's time, the combines {combine / per_chip:.0%} "
          f"of it, the busiest links busy {links / per_chip:.1%} of it; the same bits on a second run: "
          f"{result['same_bits']}")
    moved = [h for h in result["handoffs"] if h[2] != h[3]]
    print("every tensor a kernel leaves on a chip is where the next kernel reads it" if not moved else
          f"tensors to move between chips: {moved}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    defaults = LayerSizes()
    parser.add_argument("--seq", type=int, default=defaults.seq)
    parser.add_argument("--hidden", type=int, default=defaults.hidden)
    parser.add_argument("--heads", type=int, default=defaults.heads)
    parser.add_argument("--mlp", type=int, default=defaults.mlp, help="the MLP's inner size")
    parser.add_argument("--out", default="out/llama_layer", help="where the exported module is written")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--mesh", type=int, nargs=2, metavar=("R", "C"),
                        help="run the layer tensor parallel on an R x C mesh of Wormhole chips against one chip")
    args = parser.parse_args(argv)
    sz = LayerSizes(seq=args.seq, hidden=args.hidden, heads=args.heads, mlp=args.mlp)
    print(f"Llama decoder layer: seq {sz.seq}, hidden {sz.hidden}, {sz.heads} heads of {sz.head_dim}, "
          f"MLP {sz.mlp}; bfloat16, float32 accumulation")

    w = make_weights(sz, args.seed)
    x = torch.randn(sz.seq, sz.hidden, generator=torch.Generator().manual_seed(args.seed + 1)).to(torch.bfloat16)
    if args.mesh:
        result = run_mesh(sz, tuple(args.mesh), w, x)
        print_mesh(tuple(args.mesh), result)
        return result
    mod = layer_module(sz)
    times, modules = {}, {}
    for arch in ARCHS:
        start = time.perf_counter()
        modules[arch] = tvm.build(mod, target=f"tenstorrent/{arch}")
        built = time.perf_counter() - start
        start = time.perf_counter()
        values = run_layer(modules[arch], sz, w, x)
        print(f"{arch}: built {len(modules[arch].kernels)} kernels in {built:.1f} s, "
              f"ran the layer on the emulator in {time.perf_counter() - start:.1f} s")
        times[arch] = predicted_times(modules[arch])
        if arch == ARCHS[0]:
            errors, end_to_end = check_stages(sz, values)

    print(f"\n{'stage':<10} {'kernel':<10} {'rel. error':>10} " + " ".join(f"{a + ' us':>14}" for a in ARCHS))
    for stage, kernel, _ in STAGES:
        print(f"{stage:<10} {kernel:<10} {errors[stage]:>10.2e} "
              + " ".join(f"{times[a][stage] * 1e6:>14.1f}" for a in ARCHS))
    print(f"{'layer':<10} {'':<10} {end_to_end:>10.2e} "
          + " ".join(f"{sum(times[a].values()) * 1e6:>14.1f}" for a in ARCHS))

    path = Path(args.out).with_suffix(".tenstorrent")
    path.parent.mkdir(parents=True, exist_ok=True)
    modules[ARCHS[0]].export_library(str(path))
    loaded = tvm.runtime.load_module(str(path))
    again = run_layer(loaded, sz, w, x)
    assert torch.equal(again["down_proj"], values["down_proj"]), "the loaded module computed another layer"
    print(f"\nexported to {path} ({path.stat().st_size // 1024} KiB); loaded back, the same layer output")
    return errors, end_to_end


if __name__ == "__main__":
    main()
