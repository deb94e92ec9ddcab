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


