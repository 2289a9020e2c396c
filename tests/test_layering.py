"""The package's layers, read from the imports of every module (``ast``: module-level and local
imports alike, without importing anything): ``tilelang_tt.ir`` is below passes, ops and codegen
and imports none of them; ops and codegen import no pass; no pass imports another (what several
passes share lives in ``ir``; ``passes/pipeline.py``, which runs them, is no pass)."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "tilelang_tt"
PIPELINE = "tilelang_tt.passes.pipeline"
# layer -> the packages its modules must not import
FORBIDDEN = {
    "tilelang_tt.ir": ("tilelang_tt.passes", "tilelang_tt.ops", "tilelang_tt.codegen"),
    "tilelang_tt.ops": ("tilelang_tt.passes",),
    "tilelang_tt.codegen": ("tilelang_tt.passes",),
}


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)


def imported(source: str) -> set[str]:
    """Every module ``source`` imports: ``import a.b`` gives a.b, ``from a.b import c`` a.b and
    a.b.c (c may be a module)."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def violations(module: str, imports: set[str]) -> list[str]:
    """What ``module``, importing ``imports``, imports against the layering."""
    out = [f"{module} imports {name}" for layer, banned in FORBIDDEN.items() if within(module, layer)
           for name in sorted(imports) for package in banned if within(name, package)]
    if within(module, "tilelang_tt.passes") and module != PIPELINE:
        out += [f"{module} imports the pass {name}" for name in sorted(imports)
                if within(name, "tilelang_tt.passes") and name != module]
    return out


MODULES = sorted(PACKAGE.rglob("*.py"))


def test_every_layer_has_modules():
    names = [module_name(path) for path in MODULES]
    for layer in (*FORBIDDEN, "tilelang_tt.passes"):
        assert sum(within(name, layer) for name in names) > 1, layer


@pytest.mark.parametrize("path", MODULES, ids=lambda path: module_name(path))
def test_module_respects_the_layers(path):
    assert violations(module_name(path), imported(path.read_text())) == []


@pytest.mark.parametrize("module,source", [
    ("tilelang_tt.ir.slices", "from tilelang_tt.passes.split_device_kernel import split"),
    ("tilelang_tt.ir.common", "def f():\n    from tilelang_tt.ops import base\n"),
    ("tilelang_tt.ops.gemm", "import tilelang_tt.passes.verify_tt_ir"),
    ("tilelang_tt.codegen.plan", "from tilelang_tt.passes import verify_tt_ir"),
    ("tilelang_tt.passes.verify_tt_ir", "from tilelang_tt.passes.build_tile_dfg_tt import PASS"),
])
def test_a_crossing_import_is_a_violation(module, source):
    assert violations(module, imported(source))


def test_the_pipeline_may_import_the_passes():
    assert violations(PIPELINE, imported("from tilelang_tt.passes.verify_tt_ir import VerifyTTIR")) == []
