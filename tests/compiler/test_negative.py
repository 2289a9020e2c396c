"""Bad input gets a TTCompileError naming the problem, the user's source line and a fix."""

import importlib.util
import inspect

import pytest

import tilelang_tt
from tilelang_tt import TTCompileError
from tests.compiler import bad_kernels


def line_of(marker: str) -> int:
    lines, start = inspect.getsourcelines(bad_kernels)
    for number, text in enumerate(lines, start=1):
        if f"# LINE: {marker}" in text:
            return number
    raise AssertionError(marker)


def compile_error(kernel) -> TTCompileError:
    with pytest.raises(TTCompileError) as info:
        tilelang_tt.compile(kernel)
    return info.value


def test_unsupported_tile_op_names_op_and_line():
    err = compile_error(bad_kernels.unsupported_tile_op())
    assert "T.cumsum" in err.message
    assert err.pass_name == "LowerTTTileIntrinsics"
    assert err.location is not None and err.location[0].endswith("bad_kernels.py")
    assert err.location[1] == line_of("unsupported_tile_op")
    text = str(err)
    assert f"bad_kernels.py:{line_of('unsupported_tile_op')}" in text and "^" in text and "help:" in text


def test_shape_not_multiple_of_32():
    err = compile_error(bad_kernels.unaligned_shape())
    assert "not multiples of 32" in err.message and "`A`" in err.message
    assert err.location[1] == line_of("unaligned_shape")  # the parameter is declared on the def line
    assert "pad" in err.hint


def test_unsupported_elementwise_expression():
    err = compile_error(bad_kernels.unsupported_expression())
    assert "unsupported element-wise expression" in err.message
    assert err.location[1] == line_of("unsupported_expression")


def test_non_elementwise_access():
    err = compile_error(bad_kernels.transposed_access())
    assert "`A_s[j, i]` is not an element-wise access" in err.message
    assert err.location[1] == line_of("transposed_access")


def test_more_cbs_than_hardware(tmp_path):
    path = tmp_path / "many_cbs.py"
    path.write_text(bad_kernels.too_many_cbs_source(40))
    spec = importlib.util.spec_from_file_location("many_cbs", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    err = compile_error(module.main)
    assert "circular buffers" in err.message and "32" in err.message
    assert err.pass_name == "VerifyTTIR"


def test_bad_option_says_how_to_fix():
    from tests.kernels import eltwise

    with pytest.raises(ValueError, match=r"grid=\(9, 9\) is larger than the wormhole_b0 worker grid"):
        tilelang_tt.compile(eltwise("add", 64, 64, 32, 32), grid=(9, 9))
    with pytest.raises(ValueError, match="unknown compile option"):
        tilelang_tt.compile(eltwise("add", 64, 64, 32, 32), gird=(2, 2))
