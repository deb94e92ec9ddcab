"""Calls that change what they loop over (`world.step()` moving every particle, a helper
that smooths a row in place, `y = push(h, i)` storing before it returns): the call is
inlined as a statement of its own whose stores are logged while it runs; where native code
hands that statement to CPython (an error, an int leaving 64 bits, a signal, the fuzzer's
forced hand-overs), the stores are undone first, and CPython runs the call again from its
start on what it held before: the same values, exceptions and objects as CPython's own run.
The loops of such a call run in order on one thread, with the reason."""
import signal
import time

import numpy as np
import pytest

import difftest
import stagepy
from helpers import compile_module, core

SIM = """
class Body:
    def __init__(self, x, v, n=0):
        self.x = x
        self.v = v
        self.n = n
    def kick(self, k):
        self.v *= k
    def move(self, dt):
        self.x += self.v * dt
        if self.x > 10.0 or self.x < 0.0:
            self.v = -self.v
            self.n += 1

class Sim:
    def __init__(self, data):
        self.bodies = [Body(a, b) for a, b in data]
        self.t = 0.0
        self.steps = 0
    def damp(self, k):
        for b in self.bodies:
            b.kick(k)
    def step(self, dt):
        for b in self.bodies:
            b.move(dt)
        self.t += dt
        self.steps += 1

def state(s):
    return s.t, s.steps, [(b.x, b.v, b.n) for b in s.bodies]
"""


def _data(seed, n):
    rng = np.random.default_rng(seed)
    return [(float(a), float(b)) for a, b in zip(rng.uniform(0, 10, n), rng.uniform(-3, 3, n))]


NATIVE = [
    ("a method whose loop calls a method that assigns the items' attributes", SIM + """
def f(data, steps):
    s = Sim(data)
    for t in range(steps):
        s.damp(0.99)
    return state(s)
""", lambda: (_data(1, 10), 5)),
    ("a simulation's step: every body moved, the time advanced", SIM + """
def f(data, steps, dt):
    s = Sim(data)
    for t in range(steps):
        s.step(dt)
    return state(s)
""", lambda: (_data(2, 300), 50, 0.05)),
    ("a step whose value is read after it", SIM + """
class Sim2(Sim):
    def advance(self, dt):
        for b in self.bodies:
            b.move(dt)
        self.t += dt
        return self.t
def f(data, steps, dt):
    s = Sim2(data)
    ts = 0.0
    for t in range(steps):
        ts += 0.5
        last = s.advance(dt)
    return state(s), ts, last
""", lambda: (_data(3, 40), 20, 0.1)),
    ("a function that calls a method on each object of the list it is passed", SIM + """
def advance(bodies, dt):
    for b in bodies:
        b.move(dt)
def f(data, steps, dt):
    s = Sim(data)
    bodies = s.bodies
    for t in range(steps):
        advance(bodies, dt)
    return state(s)
""", lambda: (_data(8, 200), 30, 0.1)),
    ("the same of two lists, and a method reading the items", SIM + """
class Meter:
    def __init__(self):
        self.readings = 0
    def kinetic(self, bodies):
        e = 0.0
        for b in bodies:
            e += b.energy()
        return e
class B2(Body):
    def energy(self):
        return 0.5 * self.v * self.v
def advance(bodies, dt):
    for b in bodies:
        b.move(dt)
def f(data, steps, dt):
    ps = [B2(a, b) for a, b in data]
    qs = [B2(b, a) for a, b in data]
    m = Meter()
    e = 0.0
    for t in range(steps):
        advance(ps, dt)
        advance(qs, dt * 0.5)
        e += m.kinetic(ps) - m.kinetic(qs)
    return e, [(b.x, b.v, b.n) for b in ps + qs]
""", lambda: (_data(9, 50), 20, 0.2)),
    ("a helper that smooths an array in place, called in a time loop", """
def smooth(a, n):
    for k in range(1, n - 1):
        a[k] = (a[k - 1] + a[k] + a[k + 1]) / 3.0

def f(A, steps):
    for t in range(steps):
        smooth(A, len(A))
    return A
""", lambda: (np.linspace(0.0, 1.0, 50) ** 2, 30)),
    ("a helper that fills a row of a list of lists", """
def fill(row, m, v):
    for j in range(m):
        row[j] = v * j

def f(n, m):
    L = [[0] * m for _ in range(n)]
    for i in range(n):
        fill(L[i], m, i)
    return L
""", lambda: (20, 15)),
    ("union-find: `merges += union(...)`, the call combined with a number", """
def find(parent, x):
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x

def union(parent, size, a, b):
    ra = find(parent, a)
    rb = find(parent, b)
    if ra == rb:
        return 0
    if size[ra] < size[rb]:
        ra, rb = rb, ra
    parent[rb] = ra
    size[ra] += size[rb]
    return 1

def f(edges, n):
    parent = list(range(n))
    size = [1] * n
    merges = 0
    for a, b in edges:
        merges += union(parent, size, a, b)
    return merges, parent, size
""", lambda: ([(k * 7 % 50, k * 13 % 50) for k in range(120)], 50)),
    ("a Metropolis sweep that draws and flips, its count added up", """
import random
def sweep(s, n):
    acc = 0
    for k in range(n):
        i = random.randrange(n)
        if random.random() < 0.5:
            s[i] = -s[i]
            acc += 1
    return acc

def f(s, steps):
    random.seed(1)
    acc = 0
    for t in range(steps):
        acc += sweep(s, len(s))
    return acc, s, random.random()
""", lambda: ([1] * 30, 40)),
    ("a call that changes its list in an if's condition", """
def drain(q, k):
    moved = 0
    for j in range(len(q)):
        if q[j] > k:
            q[j] -= k
            moved += 1
    return moved

def f(q, ks):
    rounds = 0
    for k in ks:
        if drain(q, k) > 2:
            rounds += 1
    return rounds, q
""", lambda: ([5, 9, 1, 12, 7, 3], [1, 2, 3, 1, 2])),
    ("a scheduler: `self.total += t.run(s)`, the call beside an attribute it does not assign", """
class Task:
    def __init__(self, i):
        self.count = 0
        self.work = i
    def run(self, step):
        self.count += 1
        self.work = (self.work * 31 + step) % 1000003
        return self.work
class Scheduler:
    def __init__(self, n):
        self.tasks = [Task(i) for i in range(n)]
        self.total = 0
    def schedule(self, steps):
        for s in range(steps):
            for t in self.tasks:
                self.total += t.run(s)
        return self.total
def f(n, steps):
    sch = Scheduler(n)
    r = sch.schedule(steps)
    return r, sch.total, [(t.count, t.work) for t in sch.tasks]
""", lambda: (7, 60)),
    ("an element passed as a number, then stored over by the call", """
def h(a, x):
    for k in range(len(a)):
        a[k] = 5.0
    return x

def f(n):
    A = [float(i) for i in range(n)]
    s = 0.0
    for i in range(n):
        y = h(A, A[i])
        s += y
    return s, A
""", lambda: (6,)),
    ("the same through a function the call calls", """
def clear(a):
    for k in range(len(a)):
        a[k] = 0.0

def h(a, x):
    clear(a)
    return x + 1.0

def f(n):
    A = [float(i) for i in range(n)]
    s = 0.0
    for i in range(n):
        A[i] = 3.0 * i
        y = h(A, A[i])
        s += y
    return s, A
""", lambda: (6,)),
    ("two changing calls in one statement, in their order", """
def find(parent, x):
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x

def f(pairs, n):
    parent = [max(0, k - 1 - k % 3) for k in range(n)]
    hits = 0
    for a, b in pairs:
        ra, rb = find(parent, a), find(parent, b)
        if ra == rb:
            hits += 1
        parent[rb] = ra
    return hits, parent
""", lambda: ([(k * 5 % 40, k * 11 % 40) for k in range(60)], 40)),
    ("a value computed after the store that precedes it", """
def push(h, i):
    h[i] += 1
    return h[i] * 2

def f(xs, n):
    h = [0] * n
    s = 0
    for x in xs:
        y = push(h, x % n)
        s += y
    return h, s
""", lambda: (list(range(100)), 7)),
    ("a method that returns what it computes after storing into a container", """
class H:
    def __init__(self, n):
        self.h = [0] * n
    def add(self, i):
        self.h[i] += 1
        return self.h[i] * 2
def f(xs):
    h = H(5)
    t = 0
    for x in xs:
        v = h.add(x % 5)
        t += v
    return h.h, t
""", lambda: ([3, 1, 4, 1, 5, 9, 2, 6],)),
]


@pytest.mark.parametrize("what,src,make_args", NATIVE, ids=[n for n, _, _ in NATIVE])
def test_calls_that_change_what_they_loop_over_run_natively(what, src, make_args):
    recs = difftest.run(src, "f", make_args)
    mine = [r for r in recs if r["function"].split(".")[-1] in ("f", "schedule")]
    assert mine and all(r["native_calls"] == r["calls"] for r in mine), [(r["line"], r["reason"]) for r in mine]


def test_the_loops_of_a_logged_call_say_why_they_run_in_order():
    recs = difftest.run(SIM + """
def f(data, steps, dt):
    s = Sim(data)
    for t in range(steps):
        s.step(dt)
    return state(s)
""", "f", lambda: (_data(4, 2000), 4, 0.05))
    why = [lp["why"] for r in recs if r["function"] == "f" for lp in r["loops"]]
    assert any("changes the objects it loops over" in w for w in why), why


BAIL = [
    ("a ZeroDivisionError in the fifth body of the third step", SIM + """
class Sim3(Sim):
    def spread(self, k):
        for b in self.bodies:
            b.x = b.x / (b.v - k)
def g(s, ks):
    for k in ks:
        s.spread(k)
def f(data, ks):
    s = Sim3(data)
    data[4] = (data[4][0], 2.0)
    s.bodies[4].v = 2.0
    try:
        g(s, ks)
    except ZeroDivisionError:
        pass
    return state(s)
""", lambda: (_data(5, 10), [0.5, 1.0, 2.0, 3.0])),
    ("an int attribute leaving 64 bits part way through a step", SIM + """
class Sim4(Sim):
    def grow(self):
        for b in self.bodies:
            b.n = b.n * 1000 + 1
def f(data, steps):
    s = Sim4(data)
    for k, b in enumerate(s.bodies):
        b.n = k
    for t in range(steps):
        s.grow()
    return state(s)
""", lambda: (_data(6, 12), 9)),
    ("an IndexError part way through a helper's stores", """
def shift(a, n):
    for k in range(n):
        a[k] = a[k + 1]

def g(A, ns):
    for n in ns:
        shift(A, n)

def f(A, ns):
    try:
        g(A, ns)
    except IndexError:
        pass
    return A
""", lambda: ([float(k) for k in range(10)], [3, 5, 9, 10, 2])),
    ("a while loop inside the call, then an error", """
def h(a, n):
    a[0] += 1
    k = 0
    while True:
        if k * k >= n * n:
            break
        a[k] += 1
        k += 1
    return a[0] / (n - 3)

def g(A, ns):
    s = 0.0
    for n in ns:
        y = h(A, n)
        s += y
    return s

def f(A, ns):
    try:
        g(A, ns)
    except ZeroDivisionError:
        pass
    return A
""", lambda: (np.zeros(6), [1, 2, 4, 3, 5])),
    ("draws and stores in one call, then an error", """
import random
def jitter(a, s):
    for k in range(len(a)):
        a[k] += random.random() / s

def f(A, ss):
    random.seed(3)
    try:
        for s in ss:
            jitter(A, s)
    except ZeroDivisionError:
        pass
    return A, random.random()
""", lambda: (np.zeros(8), [1.0, 2.0, 0.0, 4.0])),
]


@pytest.mark.parametrize("what,src,make_args", BAIL, ids=[n for n, _, _ in BAIL])
def test_errors_and_overflows_inside_a_logged_call_as_in_cpython(what, src, make_args):
    difftest.run(src, "f", make_args, expect="bail")


@pytest.mark.parametrize("period", range(1, 14))
def test_forced_handovers_inside_logged_calls_never_change_twice(period):
    # Native code hands the nest to CPython at every `period`-th statement start, inside the
    # inlined calls' loops too: each time the call's stores so far are undone.
    core._set_debug_bail(period)
    try:
        difftest.run(SIM + """
def f(data, steps, dt):
    s = Sim(data)
    for t in range(steps):
        s.step(dt)
        s.damp(0.999)
    return state(s)
""", "f", lambda: (_data(7, 9), 6, 0.5), calls=2, expect=None)
        difftest.run(SIM + """
def advance(bodies, dt):
    for b in bodies:
        b.move(dt)
def f(data, steps, dt):
    s = Sim(data)
    bodies = s.bodies
    for t in range(steps):
        advance(bodies, dt)
    return state(s)
""", "f", lambda: (_data(10, 9), 6, 0.5), calls=2, expect=None)
        difftest.run("""
import random
def smooth(a, n):
    for k in range(1, n - 1):
        a[k] = (a[k - 1] + a[k] + a[k + 1]) / 3.0 + random.random()
def f(A, steps):
    random.seed(5)
    for t in range(steps):
        smooth(A, len(A))
    return A, random.random()
""", "f", lambda: (np.linspace(0.0, 1.0, 7), 5), calls=2, expect=None)
    finally:
        core._set_debug_bail(0)


SIGNALLED = {
    "a draw after an inner loop": """
import random
def f(A, steps):
    random.seed(9)
    s = 0.0
    for t in range(steps):
        for k in range(1, len(A) - 1):
            A[k] = (A[k - 1] + A[k] + A[k + 1]) / 3.0
        s += random.random()
    return A, s, random.random()
""",
    "a logged call, then a draw": """
import random
def smooth(a, n):
    for k in range(1, n - 1):
        a[k] = (a[k - 1] + a[k] + a[k + 1]) / 3.0 + random.random()

def f(A, steps):
    random.seed(9)
    s = 0.0
    for t in range(steps):
        smooth(A, len(A))
        s += random.random()
    return A, s, random.random()
""",
}


@pytest.mark.parametrize("what", list(SIGNALLED))
def test_signals_at_loop_tops_keep_what_the_statement_before_did(what):
    # A Python signal handler: native code hands the next loop body to CPython (which runs
    # the handler) at an outer loop's top; what the statement before drew or stored stays.
    # A timer signal part way through the native run (so not through difftest, whose time
    # limit has SIGALRM to itself): CPython's run without it, stagepy's with it, first
    # without a signal (compiled, then timed), then with one at 1/8, 2/8 ... of that time.
    src = SIGNALLED[what]
    ns_py, ns_sp = {}, {}
    exec(compile_module(src), ns_py)
    want = ns_py["f"](np.linspace(0.0, 1.0, 5), 30000)
    hits = []
    old = signal.signal(signal.SIGALRM, lambda *a: hits.append(1))
    try:
        with stagepy.enable():
            exec(compile_module(src), ns_sp)
            for call in range(9):
                if call >= 2:
                    signal.setitimer(signal.ITIMER_REAL, native_s * (call - 1) / 8)
                t0 = time.perf_counter()
                got = ns_sp["f"](np.linspace(0.0, 1.0, 5), 30000)
                if call == 1:
                    native_s = time.perf_counter() - t0
                signal.setitimer(signal.ITIMER_REAL, 0, 0)
                difftest.same(got, want, f"call {call}")
            recs = [r for r in stagepy.report() if r["function"] == "f" and r["file"] == ns_sp["f"].__code__.co_filename]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0, 0)
        signal.signal(signal.SIGALRM, old)
    assert hits
    assert recs and recs[0]["native_calls"] and recs[0]["bailouts"], recs


REFUSED = [
    ("a call combined with an element it changes", """
def bump(a, n):
    for k in range(n):
        a[k] += 1
    return n

def f(A, n):
    s = 0
    for i in range(n):
        s = A[0] + bump(A, n)
    return s, A
""", lambda: ([1, 2, 3], 3), "inside a larger expression"),
    ("a draw beside a call that changes its list (two calls)", """
import random
def walk(a, n):
    for k in range(n):
        a[k] += random.random()
    return n

def f(A, n):
    random.seed(2)
    s = 0.0
    for i in range(n):
        s = random.random() + walk(A, n)
    return s, A, random.random()
""", lambda: ([1.0, 2.0, 3.0], 3), "draws random numbers"),
    ("a call beside an attribute of the name it assigns", """
class C:
    def __init__(self, v):
        self.total = v
    def add(self, k):
        for j in range(k):
            self.total += j
        return k
def f(n):
    a = C(1)
    b = C(2)
    for i in range(n):
        a.total = b.total + a.add(i)
    return a.total, b.total
""", lambda: (5,), "inside a larger expression"),
    ("an append inside the call", """
def grow(out, n):
    for k in range(n):
        out.append(k)
    return n

def f(n):
    out = []
    for i in range(n):
        grow(out, i)
    return out
""", lambda: (5,), "changes the length of a list"),
]


@pytest.mark.parametrize("what,src,make_args,reason", REFUSED, ids=[n for n, _, _, _ in REFUSED])
def test_calls_stagepy_cannot_log_stay_interpreted_with_the_reason(what, src, make_args, reason):
    recs = difftest.run(src, "f", make_args, expect=None)
    mine = [r for r in recs if r["function"] == "f"]
    assert mine and not any(r["native_calls"] for r in mine), mine
    assert any(reason in r["reason"] for r in mine), [r["reason"] for r in mine]


# (A float32 array scaled past its range: NumPy warns of the overflow at each store.)
SCALE = """
def scale(a, g):
    for k in range(len(a)):
        a[k] = a[k] * g
    return a[0]

def f(A, n):
    t = 0.0
    for i in range(n):
        t += scale(A, 1e10)
    return t, A
"""

EDGES = [
    ("a raise inside the call after its stores", """
def push(a, v):
    for k in range(len(a)):
        a[k] += v
    if a[0] > 10:
        raise ValueError("full")
    return a[0]

def f(A, n):
    s = 0
    try:
        for i in range(n):
            s = push(A, i)
    except ValueError:
        pass
    return s, A
""", lambda: ([1, 2, 3], 8), None),
    ("a return after a logged call", """
def push(a, v):
    for k in range(len(a)):
        a[k] += v
    return a[0]

def f(A, n):
    for i in range(n):
        push(A, i)
        if A[0] > 6:
            return A, i
    return A, -1
""", lambda: ([1, 2, 3], 8), None),
    ("NumPy overflow warnings from the call's stores", SCALE, lambda: (np.array([1.0, 2.0, 3.0], dtype=np.float32), 6),
     "default"),
    ("the same, every warning shown", SCALE, lambda: (np.array([1.0, 2.0, 3.0], dtype=np.float32), 6), "always"),
]


@pytest.mark.parametrize("what,src,make_args,warn", EDGES, ids=[n for n, _, _, _ in EDGES])
def test_ways_out_of_a_logged_call_as_in_cpython(what, src, make_args, warn):
    difftest.run(src, "f", make_args, expect=None, warn_filter=warn or "always")
