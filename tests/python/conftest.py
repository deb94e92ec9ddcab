import pytest

import stagepy
from stagepy import _resolve
from helpers import REPO, code_of, compile_module, core, define, run_python  # noqa: F401


@pytest.fixture
def replacing():
    """A table {original code: replacement}; while the test runs, the hook takes its
    decisions from it (every new code object goes to it, not just prefiltered ones)."""
    table = {}
    stagepy.enable()
    core.set_resolver(lambda code: table.get(code), prefilter=False)
    try:
        yield table
    finally:
        stagepy.disable()
        core.set_resolver(_resolve.resolve)




@pytest.fixture
def two_threads_on_the_cpu():
    """Two threads, loops on the CPU only (also where a GPU, or its emulation, is on)."""
    import os
    stagepy.set_threads(2)
    stagepy.set_target("cpu")
    yield
    stagepy.set_threads(0)
    stagepy.set_target(os.environ.get("STAGEPY_TARGET", "auto"))
