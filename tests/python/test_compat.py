"""Programs that also use another JIT keep working under stagepy: numba compiles a
function from its bytecode, so it must be handed the user's code, not stagepy's rewrite."""
import textwrap

import pytest

from helpers import run_python

numba = pytest.importorskip("numba")

SCRIPT = textwrap.dedent("""
    import numba
    import numpy as np

    def total(a):                     # a liftable loop: stagepy rewrites this code
        s = 0.0
        for i in range(a.shape[0]):
            s += a[i] * 2.0
        return s

    @numba.njit                       # made from the rewritten module's constants
    def decorated(a):
        s = 0.0
        for i in range(a.shape[0]):
            s += a[i]
        return s

    def called_first(n):              # runs in CPython (retargeted), then wrapped
        t = 0
        for i in range(n):
            t += i * i
        return t

    a = np.arange(1000.0)             # enough work per call that the kernel beats CPython
    print(total(a), called_first(10))
    for k in range(3000):             # enough frames for the hook to step aside (sweep);
        total(a)                      # (str(): this loop stays in CPython, so `total`
        str(k)                        # is called, not inlined into it)
    late = numba.njit(called_first)
    late_total = numba.njit(total)
    print(decorated(a), late(10), late_total(a))
    for k in range(100):              # the nest still runs natively after all this
        total(a)
        str(k)
""")


def test_numba_jitted_functions_see_the_original_code(tmp_path):
    path = tmp_path / "uses_numba.py"
    path.write_text(SCRIPT)
    plain = run_python([str(path)])
    assert plain.returncode == 0, plain.stderr
    on = run_python([str(path)], env_extra={"STAGEPY": "1", "STAGEPY_REPORT": str(tmp_path / "r.json")})
    assert on.returncode == 0, on.stderr
    assert on.stdout == plain.stdout
    import json
    nests = json.loads((tmp_path / "r.json").read_text())["nests"]
    total = [n for n in nests if n["function"] == "total"]
    # (Some calls go to CPython while the cost probe times both: support/cost_probe.h.)
    assert total and total[0]["status"] in ("cpu", "gpu") and total[0]["native_calls"] > 0.85 * total[0]["calls"]
    assert total[0]["calls"] > 3000
