"""`float("inf")`, `float("-inf")`, `float("nan")` — and any other str float() reads — inside
the loops: the lifter reads the call as float() of the float CPython's float() gives for
that str (computed when the bytecode is read), valid only where `float` is the builtin."""
import difftest


def test_infinities_and_nans_as_sentinels():
    recs = difftest.run("""
    def f(d, W):
        n = len(d)
        best = float('inf')
        c = 0
        for i in range(n):
            if d[i] == float('inf'):
                c += 1
                continue
            if d[i] < best:
                best = d[i]
            for j in range(n):
                if W[i][j] != float("-inf") and W[i][j] > float('1e-3'):
                    d[j] = min(d[j], d[i] + W[i][j])
        return best, c, d, float('nan') != float('nan')
    """, "f", lambda: ([0.0, float('inf'), 2.5, float('inf')], [[0.5, float('-inf'), 1.0, 2.0] for _ in range(4)]))
    assert sum(r["bailouts"] for r in recs) == 0, recs


def test_any_str_float_reads():
    difftest.run("""
    def f(xs):
        c = 0
        for x in xs:
            if x < float(' -Infinity ') or x > float('1_000.5') or x != float('NaN'):
                c += 1
            if x == float('+1E2'):
                c += 10
        return c
    """, "f", lambda: ([1.0, 2000.0, -1e300, 100.0],))


def test_a_function_of_the_users_named_float_gets_the_str():
    recs = difftest.run("""
    def float(s):
        return len(s) * 1.5

    def f(n):
        t = 0.0
        for i in range(n):
            t += float('inf') + i
        return t
    """, "f", lambda: (10,), expect="interpreted")
    difftest.assert_reason(recs, "calls the Python function float")


def test_float_bound_to_another_builtin_stays_interpreted():
    recs = difftest.run("""
    def f(n, float):
        t = 0
        for i in range(n):
            t += float('inf') + i
        return t
    """, "f", lambda: (10, len), expect="interpreted")
    difftest.assert_reason(recs, "`float` holds len, not the builtin")


def test_a_str_float_cannot_read_stays_interpreted():
    # float('abc') raises ValueError: the str is no float constant, and the nest says why.
    recs = difftest.run("""
    def f(n):
        t = 0.0
        for i in range(n):
            if i > 3:
                t += float('abc')
        return t
    """, "f", lambda: (10,), expect="interpreted")
    difftest.assert_reason(recs, "str")
