"""Methods called on objects (`for p in ps: p.update(dt)`, `e += p.energy()`,
`self.step()`): where the method's name finds one plain Python function of the objects'
class, the call is inlined as that function with the object first, and the attributes it
assigns are changed at the end of the call (after every check it makes), with CPython's
results, exceptions and objects. Anything else (a method that differs between objects, an
instance attribute in its place, a staticmethod, a method that assigns attributes inside
a larger expression, or reads an attribute through another object it may be after
assigning it) keeps the nest in CPython, with the reason."""
import math

import numpy as np
import pytest

import difftest

# The classes are the programs' own (a helper is inlined only from the nest's module): each
# program makes its objects from `data`, runs its loops, and returns their attributes.
PARTICLE = """
class P:
    def __init__(self, x, v, n=0):
        self.x = x
        self.v = v
        self.n = n

    def update(self, dt):
        self.x += self.v * dt
        if self.x > 10.0 or self.x < 0.0:
            self.v = -self.v
            self.n += 1

    def energy(self):
        return 0.5 * self.v * self.v

    def scaled(self, k):
        self.x = self.x / k
        self.v = self.v / (k - 3.0)

    def grow(self):
        self.n = self.n * 7 + 1

def state(ps):
    return [(p.x, p.v, p.n) for p in ps]
"""


def _data(seed, n):
    r = np.random.default_rng(seed)
    return [(float(a), float(b) - 0.5) for a, b in r.random((n, 2)) * 10]


NATIVE = [
    ("time steps of a method that bounces", PARTICLE + """
def f(data, dt, steps):
    ps = [P(a, b) for a, b in data]
    for t in range(steps):
        for p in ps:
            p.update(dt)
    return state(ps)
""", lambda: (_data(1, 400), 0.05, 20)),
    ("a method's value summed", PARTICLE + """
def f(data):
    ps = [P(a, b) for a, b in data]
    e = 0.0
    for p in ps:
        e += p.energy()
    return e
""", lambda: (_data(2, 300),)),
    ("items by index, the method beside the nest's own attribute", PARTICLE + """
def f(data, dt):
    ps = [P(a, b) for a, b in data]
    for i in range(len(ps)):
        ps[i].update(dt)
        ps[i].n += 2
    return state(ps)
""", lambda: (_data(3, 200), 0.5)),
    ("normalize over slots (pyperformance's float)", """
import math
class Point:
    __slots__ = ('x', 'y', 'z')
    def __init__(self, i):
        self.x = x = math.sin(i)
        self.y = math.cos(i) * 3
        self.z = (x * x) / 2
    def normalize(self):
        x = self.x
        y = self.y
        z = self.z
        norm = math.sqrt(x * x + y * y + z * z)
        self.x /= norm
        self.y /= norm
        self.z /= norm
def f(n):
    points = [Point(i) for i in range(n)]
    for p in points:
        p.normalize()
    return [(p.x, p.y, p.z) for p in points]
""", lambda: (1000,)),
    ("a method of the object the loops run in", """
class Sim:
    def __init__(self, dt):
        self.t = 0.0
        self.dt = dt
        self.count = 0
    def step(self):
        self.t += self.dt
        self.count += 1
    def run(self, n):
        for i in range(n):
            self.step()
        return self.t, self.count
def f(n):
    s = Sim(0.125)
    return s.run(n), s.t, s.count
""", lambda: (1000,)),
    ("a method reading another object", PARTICLE + """
class Q(P):
    def pull(self, other, k):
        self.v += k * (other.x - self.x)
def f(data, k):
    ps = [Q(a, b) for a, b in data]
    for p in ps:
        for q in ps:
            p.pull(q, k)
    return state(ps)
""", lambda: (_data(5, 60), 1e-3)),
    ("the value a method that assigns returns", PARTICLE + """
class R(P):
    def advance(self, dt):
        self.x += self.v * dt
        return self.x
def f(data, dt):
    ps = [R(a, b) for a, b in data]
    s = 0.0
    for p in ps:
        y = p.advance(dt)
        s += y
    return s, state(ps)
""", lambda: (_data(6, 100), 0.25)),
    ("a method storing into its object's list (a histogram)", """
class H:
    def __init__(self, n):
        self.h = [0] * n
        self.total = 0
    def add(self, i):
        self.total += 1
        self.h[i] += 1
def f(xs):
    h = H(7)
    for x in xs:
        h.add(x % 7)
    return h.h, h.total
""", lambda: (list(range(0, 300, 7)),)),
    ("a method read beside an attribute the nest assigns", """
class C:
    def __init__(self):
        self.v = 1.0
    def get(self):
        return self.v
def f(n):
    c = C()
    for i in range(n):
        c.v = c.get() + 1.0
    return c.v
""", lambda: (50,)),
    ("methods calling methods of their object", """
import math
class V:
    def __init__(self, x, y, vx, vy):
        self.x = x
        self.y = y
        self.vx = vx
        self.vy = vy
        self.hits = 0
    def speed(self):
        return math.sqrt(self.vx * self.vx + self.vy * self.vy)
    def move(self, dt):
        self.x += self.vx * dt
        self.y += self.vy * dt
    def bounce(self):
        if self.x < 0.0 or self.x > 1.0:
            self.vx = -self.vx
            self.hits += 1
        if self.y < 0.0 or self.y > 1.0:
            self.vy = -self.vy
            self.hits += 1
    def update(self, dt):
        self.move(dt)
        self.bounce()
    def kinetic(self):
        s = self.speed()
        return 0.5 * s * s
def f(n, steps, dt):
    ps = [V(i / n, (i * 7 % n) / n, 0.3 - i % 5 * 0.1, 0.1 * (i % 3) - 0.1) for i in range(n)]
    for k in range(steps):
        for p in ps:
            p.update(dt)
    e = 0.0
    for p in ps:
        e += p.kinetic()
    return e, [(p.x, p.y, p.vx, p.vy, p.hits) for p in ps]
""", lambda: (300, 40, 0.01)),
    ("a while loop over the time a method advances", """
class Clock:
    def __init__(self, dt):
        self.t = 0.0
        self.dt = dt
        self.ticks = 0
    def tick(self):
        self.t += self.dt
        self.ticks += 1
    def run(self, end):
        while self.t < end:
            self.tick()
        return self.ticks
def f(end):
    c = Clock(0.01)
    return c.run(end), c.t
""", lambda: (50.0,)),
    ("a plain function assigning attributes of the objects it is passed", PARTICLE + """
def push(p, q, k):
    p.v += k * (q.x - p.x)
    p.n += 1
def f(data, k):
    ps = [P(a, b) for a, b in data]
    for i in range(len(ps) - 1):
        push(ps[i], ps[i + 1], k)
    return state(ps)
""", lambda: (_data(19, 200), 0.01)),
    ("boids: a method looping over the list of objects it is passed", """
import math
class Boid:
    def __init__(self, x, y, vx, vy):
        self.x = x
        self.y = y
        self.vx = vx
        self.vy = vy
    def steer(self, flock, radius):
        cx = cy = avx = avy = 0.0
        n = 0
        for o in flock:
            dx = o.x - self.x
            dy = o.y - self.y
            if dx * dx + dy * dy < radius * radius:
                cx += o.x
                cy += o.y
                avx += o.vx
                avy += o.vy
                n += 1
        if n > 0:
            self.vx += 0.01 * (cx / n - self.x) + 0.05 * (avx / n - self.vx)
            self.vy += 0.01 * (cy / n - self.y) + 0.05 * (avy / n - self.vy)
    def move(self, dt):
        speed = math.sqrt(self.vx * self.vx + self.vy * self.vy)
        if speed > 2.0:
            self.vx = self.vx * 2.0 / speed
            self.vy = self.vy * 2.0 / speed
        self.x += self.vx * dt
        self.y += self.vy * dt
def f(data, steps):
    boids = [Boid(a * 10, b * 10, a - 5, b - 5) for a, b in data]
    for t in range(steps):
        for b in boids:
            b.steer(boids, 10.0)
        for b in boids:
            b.move(0.1)
    return [(b.x, b.y, b.vx, b.vy) for b in boids]
""", lambda: (_data(21, 150), 5)),
    ("a plain function given an object and the list it is in", PARTICLE + """
def nearest(p, ps):
    best = 1e300
    for q in ps:
        d = abs(q.x - p.x)
        if 0.0 < d < best:
            best = d
    return best
def f(data):
    ps = [P(a, b) for a, b in data]
    s = 0.0
    for p in ps:
        s = max(s, nearest(p, ps))
    return s
""", lambda: (_data(22, 200),)),
    ("a method looping over its object's list, calling the items' methods", """
import math
class Body:
    def __init__(self, m, vx, vy):
        self.m = m
        self.vx = vx
        self.vy = vy
    def kinetic(self):
        return 0.5 * self.m * (self.vx * self.vx + self.vy * self.vy)
class Sim:
    def __init__(self, n):
        self.bodies = [Body(1.0 + i % 3, math.sin(i), math.cos(i)) for i in range(n)]
    def energy(self):
        e = 0.0
        for b in self.bodies:
            e += b.kinetic()
        return e
def f(n, steps):
    s = Sim(n)
    es = 0.0
    for t in range(steps):
        es += s.energy()
    return es
""", lambda: (100, 20)),
    ("a method that loops", PARTICLE + """
class S(P):
    def push(self, ks):
        for k in ks:
            self.v += k
        return self.v
def f(data, ks):
    ps = [S(a, b) for a, b in data]
    t = 0.0
    for p in ps:
        t = p.push(ks)
    return t, state(ps)
""", lambda: (_data(7, 50), [0.5, 0.25, -1.0])),
    ("a method calling nothing on a tuple of objects", PARTICLE + """
def f(data, dt):
    ps = tuple(P(a, b) for a, b in data)
    for t in range(3):
        for p in ps:
            p.update(dt)
    return state(ps)
""", lambda: (_data(8, 50), 0.5)),
]


@pytest.mark.parametrize("what,src,make_args", NATIVE, ids=[n for n, _, _ in NATIVE])
def test_methods_run_natively(what, src, make_args):
    recs = difftest.run(src, "f", make_args)
    assert all(r["bailouts"] == 0 for r in recs), recs
    mine = [r for r in recs if r["function"].split(".")[-1] in ("f", "run")]
    assert mine and all(r["native_calls"] for r in mine), [(r["line"], r["reason"]) for r in mine]


def test_a_method_over_many_objects_runs_on_threads():
    # (Floats only: `self.n += 1` may leave 64 bits, which a run on threads would have to undo.)
    recs = difftest.run(PARTICLE + """
class M(P):
    def move(self, dt):
        self.x += self.v * dt
        if self.x > 10.0 or self.x < 0.0:
            self.v = -self.v
def f(data, dt):
    ps = [M(a, b) for a, b in data]
    for t in range(4):
        for p in ps:
            p.move(dt)
    return state(ps)
""", "f", lambda: (_data(9, 5000), 0.05))
    assert difftest.ran_parallel(recs, "p"), difftest.loops(recs)


BAIL = [
    ("a ZeroDivisionError after the method assigned an attribute", PARTICLE + """
def f(data, ks):
    ps = [P(a, b) for a, b in data]
    for i in range(len(ps)):
        ps[i].scaled(ks[i])
    return state(ps)
""", lambda: (_data(10, 8), [1.0, 2.0, 4.0, 3.0, 5.0, 6.0, 7.0, 8.0])),
    ("an IndexError inside a method, earlier objects changed", PARTICLE + """
class T(P):
    def take(self, xs, i):
        self.n += 1
        self.x = xs[i]
def f(data, xs):
    ps = [T(a, b) for a, b in data]
    for i in range(len(ps)):
        ps[i].take(xs, i)
    return state(ps)
""", lambda: (_data(11, 10), [float(k) for k in range(6)])),
    # (The objects are made in `f` and their state returned after the error: `g` raises.)
    ("a division by zero in the value a method returns after assigning", """
class R:
    def __init__(self, x):
        self.x = x
    def adv(self, k):
        self.x += 1.0
        return self.x / k
def g(rs, ks):
    s = 0.0
    for i in range(len(rs)):
        y = rs[i].adv(ks[i])
        s += y
    return s
def f(ks):
    rs = [R(float(i)) for i in range(len(ks))]
    try:
        g(rs, ks)
    except ZeroDivisionError:
        pass
    return [r.x for r in rs]
""", lambda: ([1.0, 2.0, 0.0, 3.0],)),
    ("the same through a method the method calls", """
class R:
    def __init__(self, x):
        self.x = x
    def inc(self):
        self.x += 1.0
    def adv(self, k):
        self.inc()
        return self.x / k
def g(rs, ks):
    s = 0.0
    for i in range(len(rs)):
        y = rs[i].adv(ks[i])
        s += y
    return s
def f(ks):
    rs = [R(float(i)) for i in range(len(ks))]
    try:
        g(rs, ks)
    except ZeroDivisionError:
        pass
    return [r.x for r in rs]
""", lambda: ([1.0, 2.0, 0.0, 3.0],)),
    ("an IndexError in a method's store into its list, after assigning an attribute", """
class H:
    def __init__(self, n):
        self.h = [0] * n
        self.total = 0
    def add(self, i):
        self.total += 1
        self.h[i] += 1
def g(h, xs):
    for x in xs:
        h.add(x % 7)
def f(xs):
    h = H(5)
    try:
        g(h, xs)
    except IndexError:
        pass
    return h.h, h.total
""", lambda: ([3, 1, 4, 1, 5, 9, 2, 6],)),
    ("an int attribute outgrowing 64 bits in a method", PARTICLE + """
def f(data):
    ps = [P(a, b, k) for k, (a, b) in enumerate(data)]
    for k in range(40):
        for p in ps:
            p.grow()
    return state(ps)
""", lambda: (_data(12, 10),)),
]


@pytest.mark.parametrize("what,src,make_args", BAIL, ids=[n for n, _, _ in BAIL])
def test_methods_errors_and_overflows_as_in_cpython(what, src, make_args):
    difftest.run(src, "f", make_args, expect="bail")


INTERPRETED = [
    ("a method that assigns, inside a larger expression", PARTICLE + """
class B(P):
    def bump(self):
        self.n += 1
        return self.n
def f(data):
    ps = [B(a, b) for a, b in data]
    s = 0
    for p in ps:
        s += p.bump() + p.n
    return s, state(ps)
""", lambda: (_data(13, 10),), "inside a larger expression"),
    ("an attribute read through another object after the method assigned it", PARTICLE + """
class A(P):
    def absorb(self, other):
        self.v += other.v
        other.v = 0.0
def f(data):
    ps = [A(a, b) for a, b in data]
    for p in ps:
        for q in ps:
            p.absorb(q)
    return state(ps)
""", lambda: (_data(14, 6),), "may be one"),
    ("a method that differs between the objects", PARTICLE + """
class Fast(P):
    def update(self, dt):
        self.x += 2.0 * self.v * dt
def f(data, dt):
    ps = [P(a, b) if k % 2 else Fast(a, b) for k, (a, b) in enumerate(data)]
    for p in ps:
        p.update(dt)
    return state(ps)
""", lambda: (_data(15, 6), 0.5), "a different function for different objects"),
    ("an instance attribute in the method's place", PARTICLE + """
def f(data, dt):
    ps = [P(a, b) for a, b in data]
    ps[2].update = lambda dt: None
    for p in ps:
        p.update(dt)
    return state(ps)
""", lambda: (_data(16, 5), 0.5), "an attribute of the object itself"),
    ("a method whose method assigns, inside a larger expression", PARTICLE + """
class B(P):
    def bump(self):
        self.n += 1
        return self.n
    def twice(self):
        return self.bump() * 2
def f(data):
    ps = [B(a, b) for a, b in data]
    s = 0
    for p in ps:
        s += p.twice()
    return s, state(ps)
""", lambda: (_data(20, 10),), "inside a larger expression"),
    ("the list of objects passed to a builtin", PARTICLE + """
def f(data):
    ps = [P(a, b) for a, b in data]
    s = 0.0
    for p in ps:
        s += p.x + len(sorted(ps, key=id))
    return s
""", lambda: (_data(23, 5),), "`sorted` is a builtin"),
    ("a method recursing", """
class B:
    def fact(self, k):
        return 1 if k <= 1 else k * self.fact(k - 1)
def f(n):
    b = B()
    s = 0
    for i in range(n):
        s += b.fact(i % 6)
    return s
""", lambda: (50,), "more than 4 calls deep (recursion)"),
    ("an attribute assigned with a method's name", """
class B:
    def __init__(self, x):
        self.x = x
    def bump(self):
        self.x += 1.0
def f(n):
    bs = [B(float(i)) for i in range(n)]
    for b in bs:
        b.bump()
        b.bump = 2.0
    return [b.x for b in bs]
""", lambda: (5,), "the name of a method it calls"),
    ("a staticmethod", PARTICLE + """
class St(P):
    @staticmethod
    def half(v):
        return v / 2
def f(data):
    ps = [St(a, b) for a, b in data]
    s = 0.0
    for p in ps:
        s += p.half(p.v)
    return s
""", lambda: (_data(17, 5),), "not a plain Python function"),
]


@pytest.mark.parametrize("what,src,make_args,reason", INTERPRETED, ids=[n for n, _, _, _ in INTERPRETED])
def test_methods_stagepy_cannot_inline_stay_interpreted(what, src, make_args, reason):
    recs = difftest.run(src, "f", make_args, expect=None)
    declined = [r for r in recs if reason in (r["reason"] or "")]
    assert declined, [r["reason"] for r in recs]
    assert not any(r["native_calls"] for r in declined), declined


SCALE = 3.0


class Elsewhere:
    """A class of another module than the programs' (this one)."""
    def __init__(self, x):
        self.x = x

    def bump(self):
        self.x += 1.0

    def norm(self):
        return math.sqrt(self.x * self.x + 1.0)

    def scaled(self):
        return self.x * SCALE


def test_methods_of_a_class_from_another_module_are_inlined():
    # Its methods read no global, or globals the calling module holds too (`math`).
    recs = difftest.run("""
import math
def f(ps):
    s = 0.0
    for p in ps:
        p.bump()
        s += p.norm()
    return s, [p.x for p in ps]
""", "f", lambda: ([Elsewhere(float(k)) for k in range(50)],))
    assert all(r["native_calls"] == r["calls"] for r in recs), recs


@pytest.mark.parametrize("prelude", ["", "SCALE = 4.0\n"], ids=["missing", "another value"])
def test_a_method_reading_a_global_the_calling_module_lacks_stays_interpreted(prelude):
    recs = difftest.run(prelude + """
def f(ps):
    s = 0.0
    for p in ps:
        s += p.scaled()
    return s
""", "f", lambda: ([Elsewhere(float(k)) for k in range(5)],), expect="interpreted")
    difftest.assert_reason(recs, "reads `SCALE`, which is not the same object in the calling module")


def test_methods_in_module_code():
    difftest.run_module(PARTICLE + """
ps = [P(a, b) for a, b in data]
for t in range(10):
    for p in ps:
        p.update(0.1)
total = 0.0
for p in ps:
    total += p.energy()
out = state(ps)
del P, ps, p  # (the class is each run's own: the objects compare by their state)
""", lambda: {"data": _data(18, 100)})


KEYWORDS = [
    ("keyword arguments to a method", """
class B:
    def __init__(self, x):
        self.x = x
    def add(self, d=1.5, k=2.0):
        self.x += d * k
def f(n):
    bs = [B(float(i)) for i in range(n)]
    for b in bs:
        b.add(d=3.0)
        b.add(k=0.5)
        b.add(1.0, k=4.0)
    return [b.x for b in bs]
""", lambda: (20,), None),
    ("keyword arguments to a helper, in and out of the parameters' order", """
def scale(x, factor=2.0, shift=0.0):
    return x * factor + shift
def f(xs, a, b):
    s = 0.0
    for x in xs:
        s += scale(x, shift=1.0)
        s += scale(x, factor=0.5)
        s += scale(x, shift=a, factor=b)
    return s
""", lambda: ([1.0, 2.0, 3.5], 0.25, 3.0), None),
    ("a keyword that names no parameter", """
def scale(x, factor=2.0):
    return x * factor
def f(xs):
    s = 0.0
    for x in xs:
        s += scale(x, fac=1.0)
    return s
""", lambda: ([1.0, 2.0],), "keyword arguments stagepy cannot place"),
    ("a positional-only parameter by keyword", """
def scale(x, /, factor=2.0):
    return x * factor
def f(xs):
    s = 0.0
    for x in xs:
        s += scale(x=x)
    return s
""", lambda: ([1.0, 2.0],), "keyword arguments stagepy cannot place"),
    ("computed keyword values out of the parameters' order", """
def scale(x, factor=2.0, shift=0.0):
    return x * factor + shift
def f(xs):
    s = 0.0
    for x in xs:
        s += scale(x, shift=x + 1.0, factor=x * 2.0)
    return s
""", lambda: ([1.0, 2.0],), "keyword arguments stagepy cannot place"),
]


@pytest.mark.parametrize("what,src,make_args,reason", KEYWORDS, ids=[n for n, _, _, _ in KEYWORDS])
def test_calls_with_keyword_arguments(what, src, make_args, reason):
    # Inlined where the keywords name parameters (CPython's TypeError cases stay with it).
    recs = difftest.run(src, "f", make_args, expect="native" if reason is None else "interpreted")
    if reason:
        difftest.assert_reason(recs, reason)


def test_hand_overs_at_every_statement_start_around_methods_that_assign():
    # Every statement start is a place native code may hand over to CPython (the fuzzer's
    # forced hand-overs): after an inlined method made its changes, what is left of the calling
    # statement resumes nowhere (CPython would call the method again: a swap done twice).
    from helpers import core
    src = """
class O:
    def __init__(self, a, c):
        self.a = a
        self.c = c
    def swap(self):
        self.a, self.c = self.c, self.a
    def bump(self, x):
        self.a += x
        return self.c
def g(M, n):
    t = 0
    for i in range(n):
        M[-1].swap()
        t = M[0].bump(i)
    return t
def f(n):
    M = [O(1, 2), O(3, 4)]
    return g(M, n), [(o.a, o.c) for o in M]
"""
    try:
        for period in range(1, 13):
            core._set_debug_bail(period)
            for calls in (2, 3, 5):
                difftest.run(src, "f", lambda: (9,), calls=calls, expect=None)
    finally:
        core._set_debug_bail(0)
