"""Nests that draw from np.random's functions (np.random.rand(), random(), random_sample(),
uniform(), randint(), randn(), standard_normal(), normal(), exponential(): Metropolis steps,
Ising models, noisy walks) run natively, drawing exactly the numbers NumPy's global RandomState
draws, in the same order, and leave it where NumPy leaves it (its words, position and cached
normal: every function below seeds it and returns draws made after the nest). A statement
that goes to CPython (an error NumPy raises, an overflow) has its draws undone first. Such
loops stay sequential, with the reason."""
import numpy as np
import pytest

import difftest
from helpers import core

NATIVE = [
    ("every function, positional arguments", """
    import numpy as np
    def f(n, seed):
        np.random.seed(seed)
        x = 0.0
        c = 0
        for i in range(n):
            x += np.random.rand() + np.random.random() * 2 + np.random.random_sample() - np.random.randn()
            x += np.random.standard_normal() + np.random.normal(1.0, 2) + np.random.uniform(-1, 1)
            x += np.random.exponential(0.5) + np.random.normal() + np.random.uniform() + np.random.exponential()
            c += np.random.randint(6) + np.random.randint(-3, 3) + np.random.randint(1, 2 ** 40)
        return x, c, np.random.rand(), np.random.randn(), np.random.randn()
    """, lambda: (2001, 5)),
    ("keyword arguments and NumPy scalars", """
    import numpy as np
    def f(n, seed, lo):
        np.random.seed(seed)
        s = 0.0
        for i in range(n):
            s += np.random.normal(loc=i, scale=0.5) + np.random.uniform(high=2.0) + np.random.exponential(scale=3)
            s += np.random.randint(low=lo, high=lo + 7) + np.random.randint(0, high=np.int64(9))
        return s, np.random.rand(), np.random.randn()
    """, lambda: (1500, 7, np.int32(-4))),
    ("an Ising model's Metropolis steps", """
    import numpy as np
    def f(L, steps, beta, seed):
        np.random.seed(seed)
        s = np.ones((L, L), dtype=np.int64)
        for t in range(steps):
            i = np.random.randint(L)
            j = np.random.randint(L)
            nb = s[(i + 1) % L, j] + s[(i - 1) % L, j] + s[i, (j + 1) % L] + s[i, (j - 1) % L]
            dE = 2 * s[i, j] * nb
            if dE <= 0 or np.random.rand() < np.exp(-beta * dE):
                s[i, j] = -s[i, j]
        return s, np.random.rand()
    """, lambda: (12, 20000, 0.44, 11)),
    ("names imported from numpy.random, and the random module beside it", """
    import random
    import numpy as np
    from numpy.random import rand, randn, randint
    def f(n, seed):
        np.random.seed(seed)
        random.seed(seed)
        a = [0.0] * n
        for i in range(n):
            a[i] = rand() * random.random() + randn() + randint(3) * random.gauss(0, 1)
        return a, rand(), random.random(), random.gauss()
    """, lambda: (3000, 13)),
]


@pytest.mark.parametrize("src, make", [c[1:] for c in NATIVE], ids=[c[0] for c in NATIVE])
def test_draws_match_numpy(src, make):
    recs = difftest.run(src, "f", make)
    assert all(r["native_calls"] == r["calls"] and r["bailouts"] == 0 for r in recs if r["calls"]), recs


def test_the_cached_normal_left_before_the_nest_is_taken():
    recs = difftest.run("""
    import numpy as np
    def f(n, seed):
        np.random.seed(seed)
        first = np.random.randn()
        s = 0.0
        for i in range(n):
            s += np.random.standard_normal()
        return first, s, np.random.randn(), np.random.randn(), np.random.get_state()[3:]
    """, "f", lambda: (7, 17))
    assert all(r["native_calls"] == r["calls"] for r in recs if r["calls"]), recs


@pytest.mark.parametrize("call, error", [
    ("np.random.randint(k, 3)", "ValueError"),           # low >= high
    ("np.random.normal(0.0, k - 3.0)", "ValueError"),    # a negative scale
    ("np.random.normal(0.0, -0.0 * k)", "ValueError"),   # -0.0 is negative to NumPy
    ("np.random.exponential(3.0 - k)", "ValueError"),
    ("np.random.uniform(-1e308 * k, 1e308 * k)", "OverflowError"),  # a range that is not finite
])
def test_numpy_errors_come_after_the_earlier_draws(call, error):
    difftest.run(f"""
    import numpy as np
    def f(ks, seed):
        np.random.seed(seed)
        s = 0.0
        try:
            for k in ks:
                s += np.random.rand() + {call}
        except {error} as e:
            return "{error}", str(e), s, np.random.rand(), np.random.randn()
        return s, np.random.rand()
    """, "f", lambda: ([0, 1, 2, 1, 3, 0, 4, 2], 19), expect="bail")


@pytest.mark.parametrize("period", [1, 2, 3, 5])
def test_forced_handovers_never_draw_twice(period):
    core._set_debug_bail(period)
    try:
        difftest.run("""
        import numpy as np
        def f(n, seed):
            np.random.seed(seed)
            s = 0.0
            out = []
            for i in range(n):
                x = np.random.randn()
                if x > 0:
                    s += np.random.normal(1.0, 0.5) + np.random.randint(10)
                out.append(x + np.random.rand())
            return s, out, np.random.rand(), np.random.randn()
        """, "f", lambda: (400, 23), expect=None)
    finally:
        core._set_debug_bail(0)


@pytest.mark.parametrize("call", ["np.random.rand(2)[0]", "np.random.randint(5, size=None)",
                                  "np.random.random(None)", "np.random.randn(1)[0]"])
def test_calls_with_sizes_stay_in_cpython(call):
    difftest.run(f"""
    import numpy as np
    def f(n, seed):
        np.random.seed(seed)
        s = 0.0
        for i in range(n):
            s += {call}
        return s, np.random.rand()
    """, "f", lambda: (20, 29), expect="interpreted")


def test_a_loop_that_draws_stays_sequential_with_the_reason():
    recs = difftest.run("""
    import numpy as np
    def f(A, seed):
        np.random.seed(seed)
        for i in range(A.shape[0]):
            A[i] = np.random.rand()
        return A, np.random.rand()
    """, "f", lambda: (np.zeros(100000), 31))
    loop = difftest.loops(recs)["i"]
    assert not loop["parallel"] and "draws random numbers" in loop["why"], loop


def test_set_state_between_calls_and_a_module_level_loop():
    difftest.run_module("""
    import numpy as np
    np.random.seed(37)
    saved = np.random.get_state()
    total = 0.0
    for i in range(3000):
        total += np.random.normal(0.0, 0.1) * np.random.rand()
    np.random.set_state(saved)
    again = 0.0
    for i in range(3000):
        again += np.random.normal(0.0, 0.1) * np.random.rand()
    after = np.random.rand(), np.random.randn()
    """, lambda: {})


def test_a_random_state_of_its_own_stays_in_cpython():
    difftest.run("""
    import numpy as np
    def f(n, seed):
        rs = np.random.RandomState(seed)
        s = 0.0
        for i in range(n):
            s += rs.rand()
        return s
    """, "f", lambda: (100, 3), expect="interpreted")


def test_the_generator_was_found():
    from stagepy import _types
    assert _types.register_numpy_random() is None
