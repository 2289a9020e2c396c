"""tilelang-tt: compile TileLang kernels for Tenstorrent (TT-Metalium) and run them on an emulator.

Importing the package registers the ``tenstorrent`` target (:mod:`tilelang_tt.target`) and the
TileLang/TVM entry points for it (:mod:`tilelang_tt.backend`, and TileLang's autotuner:
:mod:`tilelang_tt.tuning`).
"""

import tilelang  # noqa: F401  (tilelang must be imported before tvm)

from tilelang_tt import backend, target, tuning  # noqa: F401  (registration on import)
from tilelang_tt.artifacts import Artifacts
from tilelang_tt.compiler import compile  # noqa: A004
from tilelang_tt.errors import TTCompileError
from tilelang_tt.layout import BufferLayout, annotate_layouts
from tilelang_tt.options import CompileOptions

__all__ = ["Artifacts", "BufferLayout", "CompileOptions", "TTCompileError", "annotate_layouts", "compile"]
