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
def cpu_only():
    """Parallel loops on the CPU's threads only (also where a GPU, or its emulation, is on)."""
    import os
    stagepy.set_target("cpu")
    yield
    stagepy.set_target(os.environ.get("STAGEPY_TARGET", "auto"))


@pytest.fixture
def two_threads_on_the_cpu(cpu_only):
    """Two threads, loops on the CPU only."""
    stagepy.set_threads(2)
    yield
    stagepy.set_threads(0)


@pytest.fixture(params=[1, 2], ids=["1thread", "2threads"])
def threads(request):
    """One thread, then two."""
    stagepy.set_threads(request.param)
    yield request.param
    stagepy.set_threads(0)
