"""tilelang_tt.contract loads without tilelang, tvm, torch or numpy: where ttnn runs (Python 3.12,
no tilelang), tilelang_tt/host/ttnn_program.py is loaded by path and loads the contract package the
same way, under its own name. Checked in a subprocess that cannot import those packages, and in
.venv312 when it exists."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = ROOT / "tilelang_tt" / "contract"
TTNN_PROGRAM = ROOT / "tilelang_tt" / "host" / "ttnn_program.py"
PY312 = ROOT / ".venv312" / "bin" / "python"

SCRIPT = """
import importlib.util, json, sys

BLOCKED = {"tilelang", "tvm", "tvm_ffi", "torch", "numpy", "jsonschema", "ttnn"}


class Blocked:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"{name} may not be imported here")


sys.meta_path.insert(0, Blocked())
spec = importlib.util.spec_from_file_location("ttnn_program", sys.argv[1])
ttnn_program = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ttnn_program)

from tilelang_tt.contract.arch import ARCHS
from tilelang_tt.contract.formats import FORMATS, float_to_bfloat16_bits
from tilelang_tt.contract.l1 import l1_use
from tilelang_tt.contract.plan import Plan

plan, sources = ttnn_program.load_program(sys.argv[2])
print(json.dumps({
    "plan": isinstance(plan, Plan) and plan.kernel_name, "sources": sorted(sources),
    "arch": ARCHS[plan.arch.name].l1_bytes, "bf16": float_to_bfloat16_bits(1.0), "l1": l1_use("wormhole_b0", {}, []).fits,
    "modules": sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED | {"tilelang_tt"}),
}))
"""

PYTHONS = [sys.executable, pytest.param(PY312, marks=pytest.mark.skipif(not PY312.exists(), reason="no .venv312"))]


@pytest.mark.parametrize("python", PYTHONS, ids=["this python", "venv312"])
def test_the_contract_loads_where_tilelang_cannot(python, tmp_path):
    done = subprocess.run([str(python), "-c", SCRIPT, str(TTNN_PROGRAM), str(ROOT / "tests" / "golden" / "gemm")],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "plan": "main", "sources": ["compute.cpp", "reader.cpp", "writer.cpp"], "arch": 1464 * 1024 - 0x19D80,
        "bf16": 0x3F80, "l1": True,
        "modules": ["tilelang_tt.contract", "tilelang_tt.contract.arch", "tilelang_tt.contract.buffers",
                    "tilelang_tt.contract.dims", "tilelang_tt.contract.formats", "tilelang_tt.contract.formula",
                    "tilelang_tt.contract.kernels", "tilelang_tt.contract.l1", "tilelang_tt.contract.mesh",
                    "tilelang_tt.contract.plan", "tilelang_tt.contract.reading", "tilelang_tt.contract.vocabulary"],
    }


@pytest.mark.parametrize("path", sorted(CONTRACT.glob("*.py")), ids=lambda p: p.name)
def test_the_contract_imports_the_standard_library_and_itself_only(path):
    tree = ast.parse(path.read_text())
    modules = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    modules += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    outside = [m for m in modules if m.split(".")[0] not in sys.stdlib_module_names | {"__future__"}
               and not m.startswith("tilelang_tt.contract")]
    assert outside == []
