"""TileLang's profiler for the ``tenstorrent`` target: the timing model's predicted latency.

``kernel.get_profiler()`` on a :class:`~tilelang_tt.backend.TenstorrentKernel` returns a
:class:`TenstorrentProfiler`, TileLang's ``Profiler`` (``tilelang/profiler/__init__.py``) with the
parts that assume a GPU replaced:

* inputs: TileLang's tensor supplies (``TensorSupplyType``: ``Auto``, ``Integer``, ``Uniform``,
  ``Normal``, ``Randn``, ``Zero``, ``One``) from its ``get_tensor_supply``, moved to the host
  where the emulator reads them (the supply allocates on the current CUDA device when there is one);
* ``do_bench`` runs the program once on the emulator, timing only (the matrix multiplications'
  arithmetic skipped: nobody sees the outputs), and returns the timing model's predicted kernel
  time on the target's architecture in milliseconds (TileLang's unit). The prediction is
  deterministic, so TileLang's repetition and aggregation arguments change nothing.
  ``do_bench(func=reference)`` times a reference that is itself a Tenstorrent kernel on the same
  model; a Python callable (a torch reference) has no predicted time: an error, and TileLang's
  autotuner reports its ``ref_latency`` as ``None``. A run that multiplies matrices and reads more
  than 1.5x its inputs' bytes from DRAM logs a note saying so and what reads less
  (:func:`tilelang_tt.traffic.gemm_read_note`);
* ``assert_allclose`` and ``manual_assert_close`` compare as TileLang's do, without its
  ``torch.cuda.synchronize()`` calls (they raise on a torch built without CUDA; the emulator's
  outputs are complete when the call returns).

``run_once``, ``assert_consistent``, ``_get_inputs`` / ``_get_params`` (what TileLang's
autotuner asks) and dynamic-shape inputs (``dynamic_symbolic_constraints``) are TileLang's own.
The autotuner's adaptation is :mod:`tilelang_tt.tuning`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import tilelang  # noqa: F401  (tilelang must be imported before tvm)
import torch
from tilelang.profiler import Profiler
from tilelang.utils.tensor import is_float8_dtype, torch_assert_close

from tilelang_tt.module import TenstorrentModule, predicted_seconds
from tilelang_tt.traffic import gemm_read_note

logger = logging.getLogger(__name__)

_UNTIMED_REFERENCE: ContextVar[Callable | None] = ContextVar("tilelang_tt_untimed_reference", default=None)
_DRAM_NOTES: ContextVar[bool] = ContextVar("tilelang_tt_dram_notes", default=True)


@contextmanager
def reference_untimed(reference: Callable | None) -> Iterator[None]:
    """While it lasts, ``do_bench(reference)`` returns ``None`` instead of raising: how TileLang's
    autotuner, which times its ``ref_prog`` only to report ``ref_latency``, runs on this target
    (:mod:`tilelang_tt.tuning`)."""
    token = _UNTIMED_REFERENCE.set(reference)
    try:
        yield
    finally:
        _UNTIMED_REFERENCE.reset(token)


@contextmanager
def dram_notes_off() -> Iterator[None]:
    """While it lasts, ``do_bench`` logs no DRAM read note: the autotuner's candidates (each config's reads show
    in its latency; the tuned kernel's own ``do_bench`` notes them)."""
    token = _DRAM_NOTES.set(False)
    try:
        yield
    finally:
        _DRAM_NOTES.reset(token)


@dataclass
class TenstorrentProfiler(Profiler):
    """TileLang's ``Profiler`` of a ``TenstorrentKernel`` (its ``adapter``): see the module text."""

    def __post_init__(self) -> None:
        super().__post_init__()
        device_supply = self.supply
        self.supply = lambda param: device_supply(param).cpu()

    def do_bench(
        self,
        func: Callable | None = None,
        warmup: int = 25,
        rep: int = 100,
        n_warmup: int = 0,
        n_repeat: int = 0,
        input_tensors: list[torch.Tensor] | None = None,
        backend: str = "event",
        quantiles: list[float] | None = None,
        return_mode: str = "mean",
        dynamic_symbolic_constraints: dict[str, int] | None = None,
        device=None,
        early_stop_baseline: float | None = None,
    ) -> float | list[float] | None:
        """Run the kernel once, timing only, on ``input_tensors`` (default: supplied inputs, of the sizes
        ``dynamic_symbolic_constraints`` gives a kernel with dynamic shapes) and return the timing
        model's predicted kernel time in milliseconds; a value per quantile when several
        ``quantiles`` are asked (all equal). The prediction does not vary between runs, so
        ``warmup``, ``rep``, ``n_warmup``, ``n_repeat``, ``backend``, ``return_mode``, ``device``
        and ``early_stop_baseline`` are accepted for TileLang's signature and ignored.

        ``func`` may be another Tenstorrent kernel (a reference, given the same inputs), timed
        on the same model. A Python callable (a torch reference) has no predicted Tenstorrent
        time, and timing it on the host would give a number of another kind; that is a
        ``ValueError`` (``None`` for the reference of :func:`reference_untimed`). A run that
        multiplies matrices and reads more than 1.5x its inputs' bytes from DRAM logs a note
        (:func:`~tilelang_tt.traffic.gemm_read_note`) unless :func:`dram_notes_off`."""
        kernel = self.func if func is None else func
        if not isinstance(kernel, TenstorrentModule):
            if func is _UNTIMED_REFERENCE.get():
                return None
            name = getattr(func, "__qualname__", type(func).__name__)
            raise ValueError(
                f"do_bench(func={name}) on target tenstorrent: the timing model predicts the time of "
                "Tenstorrent kernels' programs only; a Python callable (a torch reference) has no predicted "
                "Tenstorrent time. Call do_bench() without func for the kernel's predicted latency, and time a "
                "host reference with tilelang.profiler.do_bench(fn, backend='wall', device='cpu') "
                "(host wall-clock time, not comparable with the prediction)")
        if input_tensors is None:
            input_tensors = self._get_inputs(dynamic_symbolic_constraints=dynamic_symbolic_constraints)
        artifacts = kernel.artifacts
        artifacts.run(*input_tensors, timing_only=True)  # no outputs to look at: skip the math
        note = gemm_read_note(artifacts.plan, artifacts.last_counters) if _DRAM_NOTES.get() else None
        if note is not None:
            logger.warning(note)
        latency_ms = predicted_seconds(artifacts) * 1e3
        if quantiles is not None and len(quantiles) > 1:
            return [latency_ms] * len(quantiles)
        return latency_ms

    def assert_allclose(
        self,
        reference_program: Callable,
        input_tensors: list[torch.Tensor] | None = None,
        atol: float = 1e-2,
        rtol: float = 1e-2,
        max_mismatched_ratio=0.01,
    ) -> None:
        """TileLang's check: the kernel's outputs against ``reference_program``'s on the same
        inputs, at most ``max_mismatched_ratio`` of the elements outside ``atol``/``rtol``
        (an ``AssertionError`` naming the first mismatch otherwise). A ``None`` reference output
        is not compared."""
        lib_outs, ref_outs = self._outputs(reference_program, input_tensors)
        for lhs, rhs in zip(lib_outs, ref_outs):
            if lhs is not None and rhs is not None:
                torch_assert_close(
                    lhs.to(torch.float32) if is_float8_dtype(lhs.dtype) else lhs,
                    rhs.to(torch.float32) if is_float8_dtype(rhs.dtype) else rhs,
                    rtol=rtol,
                    atol=atol,
                    max_mismatched_ratio=max_mismatched_ratio,
                    base_name="tilelang",
                    ref_name="ref",
                )

    def manual_assert_close(
        self,
        reference_program: Callable,
        input_tensors: list[torch.Tensor] | None = None,
        manual_check_prog: Callable | None = None,
    ) -> None:
        """TileLang's check with the user's comparison: ``manual_check_prog(kernel outputs,
        reference outputs)``, two lists."""
        manual_check_prog(*self._outputs(reference_program, input_tensors))

    def _outputs(self, reference_program: Callable, input_tensors) -> tuple[list, list]:
        """The kernel's outputs and the reference's on the same inputs, as two lists of equal length."""
        ins = self._get_inputs() if input_tensors is None else input_tensors
        ref_outs = _as_list(reference_program(*ins))
        lib_outs = _as_list(self.func(*ins))
        if len(lib_outs) != len(ref_outs):
            raise AssertionError(f"the kernel returns {len(lib_outs)} outputs, the reference {len(ref_outs)}")
        return lib_outs, ref_outs


def _as_list(outputs) -> list:
    if outputs is None:
        return []
    if isinstance(outputs, torch.Tensor):
        return [outputs]
    return list(outputs)
