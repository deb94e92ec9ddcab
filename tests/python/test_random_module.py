"""Nests that draw from the `random` module (random.random(), uniform(), randint(), randrange(),
choice(), gauss(), normalvariate(), expovariate(): Monte Carlo loops, random walks, simulations) run natively, drawing exactly the numbers CPython
draws from the same generator, in the same order, and leave its state where CPython leaves it:
also when a statement goes to CPython after its draws (an error, an overflow), which then
draws them again. Every function below seeds the generator and returns what it drew after the
loops, so the state is compared too. Such loops stay sequential, with the reason."""
import random

import numpy as np
import pytest

import difftest
import stagepy
from helpers import core

NATIVE = [
    ("Monte Carlo pi", """
    import random
    def f(n, seed):
        random.seed(seed)
        hits = 0
        for i in range(n):
            x = random.random()
            y = random.random()
            if x * x + y * y < 1.0:
                hits += 1
        return 4.0 * hits / n, random.random()
    """, lambda: (20000, 5)),
    ("a random walk with uniform() of ints and floats", """
    import random
    def f(n, seed):
        random.seed(seed)
        x = 0.0
        y = 0
        for i in range(n):
            x += random.uniform(-1, 1)
            y = y + random.uniform(0.5, 2)
        return x, y, random.random()
    """, lambda: (3000, 11)),
    ("randint and randrange of one and two arguments", """
    import random
    def f(n, seed):
        random.seed(seed)
        s = 0
        t = 0
        for i in range(n):
            k = random.randint(1, 6) + random.randint(1, 6)
            s += k * k
            t += random.randrange(10) - random.randrange(-5, 1 + i % 7)
        return s, t, random.random()
    """, lambda: (4000, 3)),
    ("dice into a histogram through a variable", """
    import random
    def f(n, seed):
        random.seed(seed)
        c = [0] * 13
        for i in range(n):
            k = random.randint(1, 6) + random.randint(1, 6)
            c[k] += 1
        return c, random.random()
    """, lambda: (5000, 7)),
    ("ints near 2**62 and ranges of every bit length", """
    import random
    def f(seed):
        random.seed(seed)
        out = []
        for b in range(1, 63):
            out.append(random.randrange(2 ** b + 1) + random.randint(-2 ** b, 3))
        return out, random.random()
    """, lambda: (13,)),
    ("a random draw in a condition and a while loop", """
    import random
    def f(n, p, seed):
        random.seed(seed)
        steps = 0
        kept = 0
        for i in range(n):
            while random.random() < p:
                steps += 1
            if random.random() < 0.25:
                kept += 1
        return steps, kept, random.random()
    """, lambda: (2000, 0.6, 17)),
    ("a helper that draws", """
    import random
    def roll(sides):
        return random.randint(1, sides)
    def f(n, seed):
        random.seed(seed)
        s = 0
        for i in range(n):
            s += roll(6) * 10 + roll(20)
        return s, random.random()
    """, lambda: (3000, 23)),
    ("draws into a NumPy array", """
    import random
    def f(A, seed):
        random.seed(seed)
        for i in range(A.shape[0]):
            for j in range(A.shape[1]):
                A[i, j] = A[i, j] * random.random() + random.uniform(-1.0, 1.0)
        return A, random.random()
    """, lambda: (np.arange(600.0).reshape(20, 30), 29)),
    ("gauss() of mu and sigma, of ints, and with random.py's defaults", """
    import random
    def f(n, seed):
        random.seed(seed)
        x = 0.0
        path = [0.0] * n
        s = 0.0
        for i in range(n):
            x += random.gauss(0.5, 2)
            path[i] = x
            s += random.gauss() * random.gauss(3)  # (odd draws per iteration: the twin at every other)
        return path, s, random.random(), random.gauss()
    """, lambda: (2001, 13)),
    ("normalvariate() and expovariate()", """
    import random
    def f(n, seed):
        random.seed(seed)
        s = 0.0
        t = 0
        for i in range(n):
            s += random.normalvariate(1.0, 0.25) - random.normalvariate()
            w = random.expovariate(1.5) + random.expovariate(3)
            if w > 1.0:
                t += 1
        return s, t, random.random()
    """, lambda: (3000, 19)),
]


@pytest.mark.parametrize("src, make", [c[1:] for c in NATIVE], ids=[c[0] for c in NATIVE])
def test_draws_match_cpython(src, make):
    recs = difftest.run(src, "f", make)
    assert all(r["native_calls"] == r["calls"] and r["bailouts"] == 0 for r in recs if r["calls"]), recs


def test_the_loop_that_draws_stays_sequential_with_the_reason():
    recs = difftest.run("""
    import random
    def f(A, seed):
        random.seed(seed)
        for i in range(A.shape[0]):
            A[i] = random.random()
        return A, random.random()
    """, "f", lambda: (np.zeros(100000), 3))
    loop = difftest.loops(recs)["i"]
    assert not loop["parallel"] and "draws random numbers" in loop["why"], loop


@pytest.mark.parametrize("zs", [[1.0, 2.0, 0.0, 4.0], [0.0], [2.0, 0.0]])
def test_a_statement_that_fails_after_its_draws_draws_them_once(zs):
    # The statement draws 800 words (more than one refill of the generator's 624) and then
    # divides by zero: CPython runs it again and raises; the state is as CPython leaves it.
    difftest.run("""
    import random
    def f(zs, seed):
        random.seed(seed)
        t = 0.0
        try:
            for z in zs:
                t += sum(random.random() for _ in range(400)) / z
        except ZeroDivisionError as e:
            return "ZeroDivisionError", t, random.random()
        return t, random.random()
    """, "f", lambda: (list(zs), 31), expect=None)


def test_an_empty_range_raises_after_the_earlier_draws():
    difftest.run("""
    import random
    def f(ns, seed):
        random.seed(seed)
        s = 0
        try:
            for n in ns:
                s += random.randrange(n)
        except ValueError as e:
            return "ValueError", str(e), s, random.random()
        return s, random.random()
    """, "f", lambda: ([5, 9, 1, 3, 0, 7], 37), expect="bail")


def test_an_int_overflow_after_a_draw_goes_to_cpython_once():
    difftest.run("""
    import random
    def f(n, seed):
        random.seed(seed)
        s = 1
        for i in range(n):
            s = s * (random.randint(2, 9)) + random.randrange(3)
        return s, random.random()
    """, "f", lambda: (60, 41), expect="bail")


@pytest.mark.parametrize("period", [1, 2, 3, 5, 7])
def test_forced_handovers_never_draw_twice(period):
    # Native code hands the nest to CPython at every `period`-th statement it starts.
    core._set_debug_bail(period)
    try:
        difftest.run("""
        import random
        def f(n, seed):
            random.seed(seed)
            s = 0.0
            c = 0
            for i in range(n):
                x = random.random()
                if x < 0.5:
                    c += random.randint(1, 3)
                s += random.uniform(-x, x) + random.random()
            return s, c, random.random()
        """, "f", lambda: (700, 43), expect=None)
        # A loop whose first iteration is compiled apart (`a` becomes an np.float64 there):
        # the same one-statement body twice, one after the other, each statement its own.
        difftest.run("""
        import random
        def f(A, seed):
            random.seed(seed)
            out = []
            for i in range(len(A)):
                a = 0.0
                for j in range(len(A)):
                    a *= A[j] * random.random() - 0.5
                out.append(a)
            return out, random.random()
        """, "f", lambda: (np.arange(1.0, 9.0), 83), expect=None)
    finally:
        core._set_debug_bail(0)


# A draw in the argument of an inlined helper with a loop: the helper's statements sit in a
# block of their own inside the calling statement's, and a hand-over after them (an overflow
# of what is left of the statement) still undoes the draw, which CPython then makes again.
LOOPING_HELPER_DRAWS = """
import random
def first_above(X, t, n):
    for q in range(n):
        if X[q] > t:
            return q
    return n * 2

def f(M, n, k, seed):
    random.seed(seed)
    s = 0
    for i in range(n):
        s = first_above(M[i], random.random(), 2) * k + s
    return s, random.random()
"""


@pytest.mark.parametrize("k", [3, 2**61])
def test_a_draw_in_a_looping_helpers_argument_before_a_handover(k):
    difftest.run(LOOPING_HELPER_DRAWS, "f", lambda: (np.random.default_rng(5).random((40, 2)), 40, k, 17),
                 expect="native" if k == 3 else "bail")


@pytest.mark.parametrize("period", [1, 2, 3, 5, 7])
def test_forced_handovers_in_a_looping_helpers_statement_never_draw_twice(period):
    core._set_debug_bail(period)
    try:
        difftest.run(LOOPING_HELPER_DRAWS, "f", lambda: (np.random.default_rng(5).random((40, 2)), 40, 3, 17),
                     expect=None)
    finally:
        core._set_debug_bail(0)


def test_draws_in_a_while_loop_of_a_helper_before_a_handover():
    # The while loop's statements continue the calling statement (no statement around them
    # has its resume point): its draws are undone with the rest when `t / (n - 3)` fails.
    difftest.run("""
    import random
    def h(n):
        t = random.random()
        k = 0
        while True:
            if k * k >= n * n:
                break
            t += random.random()
            k += 1
        return t / (n - 3)
    def g(ns):
        s = 0.0
        for n in ns:
            y = h(n)
            s += y
        return s
    def f(ns):
        random.seed(4)
        try:
            g(ns)
        except ZeroDivisionError:
            pass
        return random.random()
    """, "f", lambda: ([1, 2, 4, 3, 5],), expect="bail")


@pytest.mark.parametrize("targets", ["a, b", "A[i], A[j]", "A[i], A[i]", "a, A[i]"])
def test_an_unpacking_assignment_draws_in_cpythons_order(targets):
    # `a, b = f(), g()` computes f() first but stores b first (CPython compiles it so):
    # the draws come in CPython's order, and the stores land in its order (the same
    # element twice keeps the first value, stored last).
    difftest.run(f"""
    import random
    def f(n):
        random.seed(3)
        A = [0.0] * 4
        out = []
        a = b = 0.0
        for i in range(n):
            j = (i * 3) % 4
            i = i % 4
            {targets} = random.random(), random.randint(1, 9) + max(i, j)
            out.append(a + b + A[i])
        return out, A, random.random()
    """, "f", lambda: (9,))


def test_the_index_of_an_augmented_assignment_draws_once():
    # `c[randint(1, 6)] += 1` computes the index once; the lifted statement reads it at two
    # places, which make one draw.
    recs = difftest.run("""
    import random
    def f(n, seed):
        random.seed(seed)
        c = [0] * 13
        h = [0.0] * 10
        for i in range(n):
            c[random.randint(1, 6) + random.randint(1, 6)] += 1
            h[random.randrange(10)] += random.random()
        return c, h, random.random()
    """, "f", lambda: (3000, 47))
    assert all(r["native_calls"] == r["calls"] and r["bailouts"] == 0 for r in recs if r["calls"]), recs


def test_a_chained_comparison_around_a_draw_stays_in_cpython():
    # `a < random.random() < b`: the second comparison's copy of the draw is under the first.
    recs = difftest.run("""
    import random
    def f(n, seed):
        random.seed(seed)
        c = 0
        for i in range(n):
            if 0.2 < random.random() < 0.7:
                c += 1
        return c, random.random()
    """, "f", lambda: (500, 53), expect="interpreted")
    difftest.assert_reason(recs, "chained comparison")


def test_a_return_inside_the_loop_after_draws():
    difftest.run("""
    import random
    def f(n, p, seed):
        random.seed(seed)
        s = 0.0
        for i in range(n):
            x = random.random()
            s += x
            if x < p:
                return i, s, random.random()
        return -1, s, random.random()
    """, "f", lambda: (5000, 0.001, 59))


def test_draws_beside_operations_on_whole_rows():
    # The draw is one number per statement, not one per element.
    difftest.run("""
    import random
    import numpy as np
    def f(A, B, seed):
        random.seed(seed)
        for i in range(A.shape[0]):
            A[i, :] = B[i, :] * random.random() + random.uniform(-1, 1)
        return A, random.random()
    """, "f", lambda: (np.zeros((30, 40)), np.arange(1200.0).reshape(30, 40), 61), expect=None)


def test_a_replaced_method_is_noticed():
    # random.Random.random replaced at class level: random.uniform draws through it.
    old = random.Random.random
    try:
        random.Random.random = lambda self: 0.25
        recs = difftest.run("""
        import random
        def f(n):
            s = 0.0
            for i in range(n):
                s += random.uniform(0, 4)
            return s
        """, "f", lambda: (100,), expect="interpreted")
        difftest.assert_reason(recs, "random module's generator has methods")
    finally:
        random.Random.random = old
    # Restored: drawn natively again.
    difftest.run("""
    import random
    def f(n, seed):
        random.seed(seed)
        s = 0.0
        for i in range(n):
            s += random.uniform(0, 4)
        return s, random.random()
    """, "f", lambda: (100, 3))


def test_a_function_rebound_in_the_module_is_not_drawn_natively():
    # The lambda there now is inlined as itself (it reads no global): 0.5 each time, no draw.
    old = random.random
    try:
        random.random = lambda: 0.5
        difftest.run("""
        import random
        def f(n):
            s = 0.0
            for i in range(n):
                s += random.random()
            return s
        """, "f", lambda: (100,))
    finally:
        random.random = old


def test_from_random_import_and_a_module_level_loop():
    difftest.run_module("""
    import random
    from random import randint, random as rnd
    random.seed(99)
    hits = 0
    total = 0
    for i in range(5000):
        if rnd() ** 2 + rnd() ** 2 < 1:
            hits += 1
        total += randint(0, 10)
    after = rnd()
    """, lambda: {})


def test_an_instance_of_its_own_stays_in_cpython():
    # Only the module's functions (its hidden instance) are drawn natively.
    recs = difftest.run("""
    import random
    def f(n, seed):
        rng = random.Random(seed)
        s = 0.0
        for i in range(n):
            s += rng.random()
        return s
    """, "f", lambda: (100, 3), expect="interpreted")
    assert recs


def test_the_generator_was_found():
    # On CPython 3.11 to 3.13 the self-test passes; were it not to, nests would stay in
    # CPython, which the tests above would notice.
    from stagepy import _types
    assert _types.register_random(core) is None


def test_a_helper_that_draws_in_a_chained_comparison_stays_in_cpython():
    # The middle of `1 < roll() < 5` is read by two tests: inlined twice, it would draw twice.
    recs = difftest.run("""
    import random
    def roll():
        return random.randint(1, 6)
    def f(n, seed):
        random.seed(seed)
        c = 0
        for i in range(n):
            if 1 < roll() < 5:
                c += 1
        return c, random.random()
    """, "f", lambda: (400, 67), expect="interpreted")
    difftest.assert_reason(recs, "chained comparison")


def test_a_helper_of_numbers_in_a_chained_comparison_still_runs():
    # Read twice, a helper that draws nothing gives the same value twice.
    difftest.run("""
    import math
    def norm(x, y):
        return math.sqrt(x * x + y * y)
    def f(xs, ys):
        c = 0
        for i in range(len(xs)):
            if 0.25 < norm(xs[i], ys[i]) < 0.75:
                c += 1
        return c
    """, "f", lambda: ([k / 97 for k in range(97)], [k / 89 for k in range(97)]))


@pytest.mark.parametrize("seq", ["[3, 1, 4, 1, 5]", "'ACGT'", "np.arange(7.0)", "(2, 4, 8)", "[[0, 1], [1, 0], [0, -1], [-1, 0]]"])
def test_choice_of_a_sequence(seq):
    recs = difftest.run(f"""
    import random
    import numpy as np
    def f(n, seed):
        random.seed(seed)
        S = {seq}
        out = []
        for i in range(n):
            out.append(random.choice(S))
        return out, random.random()
    """, "f", lambda: (300, 71), expect=None)
    assert recs


def test_choice_of_an_empty_list_raises_after_the_earlier_draws():
    difftest.run("""
    import random
    def f(lists, seed):
        random.seed(seed)
        s = 0
        try:
            for L in lists:
                s += random.choice(L)
        except IndexError as e:
            return "IndexError", str(e), s, random.random()
        return s, random.random()
    """, "f", lambda: ([[1, 2], [3], [4, 5, 6], [], [7]], 73), expect="bail")


def test_a_random_walk_choosing_steps():
    recs = difftest.run("""
    import random
    def f(n, seed):
        random.seed(seed)
        steps = [-1, 1]
        x = 0
        far = 0
        for i in range(n):
            x += random.choice(steps)
            if abs(x) > far:
                far = abs(x)
        return x, far, random.random()
    """, "f", lambda: (20000, 79))
    assert all(r["native_calls"] == r["calls"] for r in recs if r["calls"]), recs


def test_gauss_takes_the_twin_left_before_the_nest_and_leaves_its_own():
    # An odd number of gauss() calls before the nest leaves gauss_next set: the nest's first
    # draw is that twin; the nest's last twin is CPython's next gauss().
    recs = difftest.run("""
    import random
    def f(n, seed):
        random.seed(seed)
        first = random.gauss()
        s = 0.0
        for i in range(n):
            s += random.gauss(i, 1.0)
        return first, s, random.gauss(), random.gauss(), random.random()
    """, "f", lambda: (7, 89))
    assert all(r["native_calls"] == r["calls"] for r in recs if r["calls"]), recs


def test_gauss_next_of_another_type_goes_to_cpython():
    # gauss() returns whatever gauss_next holds (here an int, then a str that fails `+`):
    # the statement goes to CPython, which gives the same result or error.
    for twin in (3, "x"):
        difftest.run("""
        import random
        def f(n, seed, twin):
            random.seed(seed)
            random._inst.gauss_next = twin
            s = 0.0
            try:
                for i in range(n):
                    s += random.random() + random.gauss(1.0, 2.0)
            except TypeError as e:
                return "TypeError", str(e), s, random.random()
            return s, random.random(), random.gauss()
        """, "f", lambda: (50, 97, twin), expect="bail")


@pytest.mark.parametrize("period", [1, 2, 3, 5])
def test_forced_handovers_keep_the_gauss_twin(period):
    core._set_debug_bail(period)
    try:
        difftest.run("""
        import random
        def f(n, seed):
            random.seed(seed)
            s = 0.0
            out = []
            for i in range(n):
                x = random.gauss(0.0, 1.0)
                if x > 0:
                    s += random.normalvariate() + random.gauss()
                out.append(x + random.expovariate(2.0))
            return s, out, random.random(), random.gauss()
        """, "f", lambda: (400, 101), expect=None)
    finally:
        core._set_debug_bail(0)


def test_expovariate_of_zero_raises_after_the_earlier_draws():
    difftest.run("""
    import random
    def f(rates, seed):
        random.seed(seed)
        s = 0.0
        try:
            for r in rates:
                s += random.gauss() + random.expovariate(r)
        except ZeroDivisionError as e:
            return "ZeroDivisionError", s, random.random(), random.gauss()
        return s, random.random()
    """, "f", lambda: ([1.0, 2, 0.5, 0, 3.0], 103), expect="bail")


def test_a_replaced_helper_of_random_py_is_noticed():
    # gauss() calls the module's `_log`: replaced, the nest stays in CPython.
    old = random._log
    try:
        random._log = lambda x: 0.0
        recs = difftest.run("""
        import random
        def f(n):
            s = 0.0
            for i in range(n):
                s += random.expovariate(1.0)
            return s
        """, "f", lambda: (100,), expect="interpreted")
        difftest.assert_reason(recs, "random module's generator has methods")
    finally:
        random._log = old


def test_keyword_arguments_of_the_random_functions():
    recs = difftest.run("""
    import random
    def f(n, seed, L):
        random.seed(seed)
        s = 0.0
        for i in range(n):
            s += random.gauss(mu=1.0, sigma=2.0) + random.gauss(sigma=0.5) + random.normalvariate(2, sigma=3)
            s += random.expovariate(lambd=2.0) + random.uniform(a=1, b=2) + random.randint(1, b=6)
            s += random.randrange(start=5) + random.choice(seq=L)
        return s, random.random(), random.gauss()
    """, "f", lambda: (500, 107, [1, 2, 3]))
    assert all(r["native_calls"] == r["calls"] for r in recs if r["calls"]), recs
    # A keyword CPython refuses (given twice, unknown): the nest stays there, which raises.
    for call in ("random.gauss(1.0, mu=2.0)", "random.uniform(1, c=2)", "random.randint(b=3)"):
        recs = difftest.run(f"""
        import random
        def f(n):
            s = 0.0
            try:
                for i in range(n):
                    s += {call}
            except TypeError as e:
                return "TypeError", str(e)
            return s
        """, "f", lambda: (5,), expect="interpreted")
