import pytest


@pytest.fixture(scope="module")
def kernel_dir(tmp_path_factory):
    """Where the cases' kernel modules are written (TVMScript reads a kernel's source file)."""
    return tmp_path_factory.mktemp("fuzz")
