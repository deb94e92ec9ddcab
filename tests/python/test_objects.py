"""Lists of objects whose attributes the loops read and assign (`for p in ps: p.x += p.v * dt`,
`ps[i].x`): read as a table (one row per object, one column per attribute name), the
attributes that changed set back on the objects, with CPython's results, exceptions and
instance dicts. Anything stagepy cannot hold that way (an attribute missing, a property, a
class with its own __setattr__, an object twice in a list the nest writes, an object passed
to a function) keeps the nest in CPython, with the reason."""
import collections
import dataclasses

import numpy as np
import pytest

import difftest


class Particle:
    def __init__(self, x, v, n=0):
        self.x = x
        self.v = v
        self.n = n


Point = collections.namedtuple("Point", "x y")


class Slotted:
    __slots__ = ("x", "v")

    def __init__(self, x, v):
        self.x = x
        self.v = v


@dataclasses.dataclass
class Body:
    x: float
    y: float
    vx: float = 0.0
    vy: float = 0.0
    m: float = 1.0


class Heavy(Particle):
    mass = 2.5  # a class attribute, read through the objects


class WithProperty:
    def __init__(self, x):
        self._x = x

    @property
    def x(self):
        return self._x * 2


class Logged:
    def __init__(self, x):
        object.__setattr__(self, "x", x)

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value + 1)


def _particles(seed, n, cls=Particle):
    r = np.random.default_rng(seed)
    return [cls(float(a), float(b) - 0.5) for a, b in r.random((n, 2)) * 10]


def _bodies(seed, n):
    r = np.random.default_rng(seed)
    return [Body(float(a), float(b), m=float(m)) for a, b, m in r.random((n, 3))]


G = {"Particle": Particle, "Slotted": Slotted, "Body": Body, "Heavy": Heavy}

NATIVE = [
    ("time steps over particles, bouncing at a wall", """
    def f(ps, dt, steps):
        for t in range(steps):
            for p in ps:
                p.x += p.v * dt
                if p.x > 10.0 or p.x < 0.0:
                    p.v = -p.v
        return ps
    """, lambda: (_particles(1, 700), 0.01, 30)),
    ("items by index, a sum of their attributes", """
    def f(ps):
        e = 0.0
        for i in range(len(ps)):
            e += 0.5 * ps[i].v * ps[i].v + ps[i].x
        return e
    """, lambda: (_particles(2, 300),)),
    ("slots", """
    def f(ps, dt):
        for p in ps:
            p.x = p.x + dt * p.v
        return ps
    """, lambda: (_particles(3, 200, Slotted), 0.5)),
    ("pairwise gravity over dataclasses (writes vx, vy; reads x, y, m)", """
    import math
    def f(bs, dt):
        for a in bs:
            for b in bs:
                dx = b.x - a.x
                dy = b.y - a.y
                d2 = dx * dx + dy * dy + 0.01
                inv = b.m / (d2 * math.sqrt(d2))
                a.vx += dx * inv * dt
                a.vy += dy * inv * dt
        for b in bs:
            b.x += b.vx * dt
            b.y += b.vy * dt
        return bs
    """, lambda: (_bodies(4, 120), 0.01)),
    ("an int attribute counted, an int attribute made a float", """
    def f(ps):
        for k in range(3):
            for p in ps:
                if p.x > 5.0:
                    p.n += 1
                else:
                    p.n = p.n / 2
        return ps
    """, lambda: (_particles(5, 100),)),
    ("a class attribute read through the objects", """
    def f(ps):
        s = 0.0
        for p in ps:
            s += p.mass * p.v
            p.x = p.mass
        return s, ps
    """, lambda: ([Heavy(1.0 * i, 0.5 * i) for i in range(50)],)),
    ("zip and enumerate of two lists of objects", """
    def f(ps, qs):
        for a, b in zip(ps, qs):
            a.x = b.v * 2.0
        for i, q in enumerate(qs):
            q.n = i * 3
        return ps, qs
    """, lambda: (_particles(6, 40), _particles(7, 50))),
    ("the loop variable is the last object afterwards", """
    def f(ps):
        p = None
        for p in ps:
            p.v = p.x
        return p is ps[-1], ps
    """, lambda: (_particles(8, 20),)),
    ("a list of objects in an attribute of self", """
    class Sim:
        def __init__(self, ps):
            self.ps = ps
            self.dt = 0.25
        def step(self):
            for p in self.ps:
                p.x += self.dt * p.v
            return self.ps
    def f(ps):
        return Sim(ps).step()
    """, lambda: (_particles(9, 60),)),
    ("a tuple of objects", """
    def f(ps, dt):
        for k in range(4):
            for p in ps:
                p.x += p.v * dt
        return ps
    """, lambda: (tuple(_particles(23, 50)), 0.5)),
    ("named tuples read", """
    def f(pts):
        s = 0.0
        for p in pts:
            s += p.x * p.y - p.x
        return s
    """, lambda: ([Point(float(i), 0.5 * i) for i in range(100)],)),
    ("the best object by an attribute, kept as an index", """
    def f(ps):
        best = 0
        for i in range(1, len(ps)):
            if ps[i].x > ps[best].x:
                best = i
        ps[best].v = 0.0
        return best, ps
    """, lambda: (_particles(10, 80),)),
]


@pytest.mark.parametrize("what,src,make_args", NATIVE, ids=[n for n, _, _ in NATIVE])
def test_objects_in_lists_run_natively(what, src, make_args):
    recs = difftest.run(src, "f", make_args, globals_=G)
    assert all(r["bailouts"] == 0 for r in recs), recs


def test_time_steps_over_particles_run_on_threads():
    recs = difftest.run("""
    def f(ps, dt):
        for t in range(5):
            for p in ps:
                p.x += p.v * dt
        return ps
    """, "f", lambda: (_particles(11, 5000), 0.01), globals_=G)
    assert difftest.ran_parallel(recs, "p"), difftest.loops(recs)


BAIL = [
    ("an IndexError part way, earlier attributes set", """
    def f(ps):
        for i in range(len(ps)):
            ps[i].x = ps[i + 1].v
        return ps
    """, lambda: (_particles(12, 30),)),
    ("a ZeroDivisionError part way through a tuple of objects", """
    def f(ps):
        for p in ps:
            p.v = 1.0 / (p.n - 3)
        return ps
    """, lambda: (tuple(Particle(1.0, 1.0, n=k % 5) for k in range(10)),)),
    ("a ZeroDivisionError part way", """
    def f(ps):
        for p in ps:
            p.v = 1.0 / (p.n - 3)
            p.n += 1
        return ps
    """, lambda: ([Particle(1.0, 1.0, n=k % 5) for k in range(10)],)),
    ("an int attribute outgrowing 64 bits", """
    def f(ps):
        for k in range(40):
            for p in ps:
                p.n = p.n * 7 + 1
        return ps
    """, lambda: ([Particle(0.0, 0.0, n=k) for k in range(20)],)),
]


@pytest.mark.parametrize("what,src,make_args", BAIL, ids=[n for n, _, _ in BAIL])
def test_objects_errors_and_overflows_as_in_cpython(what, src, make_args):
    difftest.run(src, "f", make_args, expect="bail", globals_=G)


def _shared():
    ps = _particles(13, 10)
    ps[4] = ps[2]
    return (ps,)


def _two_lists_one_object():
    ps = _particles(14, 10)
    qs = _particles(15, 10)
    qs[3] = ps[5]
    return ps, qs


def _best_in_list():
    ps = _particles(16, 10)
    return ps, ps[3]


INTERPRETED = [
    ("an object without the attribute", """
    def f(ps):
        s = 0.0
        for p in ps:
            s += p.x
        return s
    """, lambda: (_particles(17, 5) + [Slotted.__new__(Slotted)],), "attribute `x` is not set"),
    ("a property", """
    def f(ps):
        s = 0.0
        for p in ps:
            s += p.x
        return s
    """, lambda: ([WithProperty(1.0), WithProperty(2.0)],), "property"),
    ("a class with its own __setattr__", """
    def f(ps):
        for p in ps:
            p.x = 3.0
        return ps
    """, lambda: ([Logged(1.0), Logged(2.0)],), "__setattr__"),
    ("one object twice in a list whose attributes are assigned", """
    def f(ps):
        for p in ps:
            p.x += 1.0
        return ps
    """, _shared, "holds one object twice"),
    ("an object in two lists, one assigned", """
    def f(ps, qs):
        for i in range(len(ps)):
            ps[i].x = qs[i].v + 1.0
        return ps, qs
    """, _two_lists_one_object, "share an object"),
    ("an attribute read once of an object the nest changes", """
    def f(ps, best):
        for p in ps:
            p.x = p.x + best.x
        return ps
    """, _best_in_list, "reads `best.x` once"),
    ("a class attribute assigned through an object", """
    def f(ps):
        for p in ps:
            p.mass = 1.0
        return ps
    """, lambda: ([Heavy(1.0, 2.0)],), "class's"),
    ("a named tuple's field assigned", """
    def f(pts):
        for p in pts:
            p.x = 1.0
        return pts
    """, lambda: ([Point(1.0, 2.0)],), "named tuple's field"),
    ("an attribute holding a list", """
    def f(ps):
        s = 0.0
        for p in ps:
            s += p.x[0]
        return s
    """, lambda: ([Particle([1.0], 0.0)],), "attributes include list objects"),
    ("an attribute of an attribute assigned", """
    def f(o, n):
        for i in range(n):
            o.x.v = i
        return o
    """, lambda: (Particle(Particle(0.0, 0.0), 0.0), 5), "assigns an attribute of something other than an item of a list"),
    ("a list of objects passed as a sequence of rows", """
    def f(ps):
        s = 0.0
        for p in ps:
            s += p.x
        return s
    """, lambda: ([[1.0, 2.0]],), "have no attributes"),
    ("an array where objects are expected", """
    def f(ps):
        s = 0.0
        for i in range(len(ps)):
            s += ps[i].x
        return s
    """, lambda: (np.zeros((3, 2)),), "not a list or a tuple"),
]


@pytest.mark.parametrize("what,src,make_args,reason", INTERPRETED, ids=[n for n, _, _, _ in INTERPRETED])
def test_objects_stagepy_cannot_hold_stay_interpreted(what, src, make_args, reason):
    recs = difftest.run(src, "f", make_args, expect="interpreted", globals_=G)
    difftest.assert_reason(recs, reason)


def test_an_attribute_set_to_its_value_keeps_the_instance_dict():
    # A float set to an equal float: CPython stores a new object; kernels write back only what
    # changed, and the instance dict's keys stay those CPython leaves.
    recs = difftest.run("""
    def f(ps):
        for p in ps:
            p.x = p.x * 1.0
            p.v = float(p.n)
        return [sorted(vars(p)) for p in ps], ps
    """, "f", lambda: (_particles(19, 30),), globals_=G)
    assert all(r["bailouts"] == 0 for r in recs)


class Stats:  # (a counter object: the module-code and single-object tests)
    def __init__(self):
        self.total = 0.0
        self.count = 0
        self.scale = 2.0


SINGLE = [
    ("a parameter's attribute assigned in a loop", """
    def f(o, n):
        for i in range(n):
            o.x = i
            o.v += o.x * 0.5
        return o
    """, lambda: (Particle(0.0, 0.0), 50)),
    ("a method summing into self", """
    class Acc:
        def __init__(self):
            self.total = 0.0
            self.n = 0
            self.w = 0.5
        def add(self, xs):
            for x in xs:
                self.total += x * self.w
                self.n += 1
            return self
    def f(xs):
        a = Acc()
        a.add(xs)
        return vars(a.add(xs))
    """, lambda: (np.random.default_rng(20).random(500).tolist(),)),
    ("a global object counted into", """
    def f(A):
        for i in range(len(A)):
            if A[i] > 0.5:
                S.count += 1
                S.total = S.total + A[i] * S.scale
        return S
    """, lambda: (np.random.default_rng(21).random(400),)),
    ("a time loop on an object's clock", """
    class Clock:
        def __init__(self):
            self.t = 0.0
            self.steps = 0
        def run(self, until, dt):
            while self.t < until:
                self.t += dt
                self.steps += 1
            return self
    def f():
        return vars(Clock().run(3.0, 0.001))
    """, lambda: ()),
    ("particles and a counter on the simulation object", """
    class Sim:
        def __init__(self, ps):
            self.ps = ps
            self.bounces = 0
        def step(self, dt):
            for p in self.ps:
                p.x += p.v * dt
                if p.x > 10.0:
                    p.v = -p.v
                    self.bounces += 1
            return self
    def f(ps):
        s = Sim(ps)
        for k in range(20):
            s.step(0.1)
        return s.bounces, ps
    """, lambda: (_particles(22, 200),)),
    ("the object passed to a function too (inlined: its attribute a column there too)", """
    def g(o):
        return o.total
    def f(o, n):
        for i in range(n):
            o.total += g(o)
        return o
    """, lambda: (Stats(), 5)),
]


@pytest.mark.parametrize("what,src,make_args", SINGLE, ids=[n for n, _, _ in SINGLE])
def test_attributes_of_one_object_assigned_natively(what, src, make_args):
    def args():
        G["S"] = Stats()  # (a new global object per call, as each run starts)
        return make_args()
    recs = difftest.run(src, "f", args, globals_=G)
    assert all(r["bailouts"] == 0 for r in recs), recs


SINGLE_INTERPRETED = [
    ("a module's attribute assigned", """
    import types
    def f(n):
        m = types.ModuleType("m")
        m.x = 0
        for i in range(n):
            m.x += i
        return m.x
    """, lambda: (5,), "module"),
]


@pytest.mark.parametrize("what,src,make_args,reason", SINGLE_INTERPRETED, ids=[n for n, _, _, _ in SINGLE_INTERPRETED])
def test_attributes_of_one_object_stay_interpreted(what, src, make_args, reason):
    recs = difftest.run(src, "f", make_args, expect="interpreted", globals_=G)
    difftest.assert_reason(recs, reason)


# Dependences through attributes that threads must respect: each of these writes an attribute
# another iteration reads; CPython's results come only from running the loop in order.
CARRIED = [
    ("each reads its neighbour's attribute, written before", """
    def f(ps):
        for i in range(1, len(ps)):
            ps[i].x = ps[i - 1].x * 0.5 + ps[i].v
        return ps
    """, "i"),
    ("all pairs: writes a.v, reads b.v", """
    def f(ps):
        for a in ps:
            for b in ps:
                a.v += b.v * 1e-3
        return ps
    """, "a"),
    ("a prefix sum along the list", """
    def f(ps):
        for i in range(1, len(ps)):
            ps[i].n = ps[i - 1].n + ps[i].n
        return ps
    """, "i"),
]


@pytest.mark.parametrize("what,src,var", CARRIED, ids=[n for n, _, _ in CARRIED])
def test_loops_carrying_dependences_through_attributes_run_in_order(what, src, var):
    recs = difftest.run(src, "f", lambda: ([Particle(0.001 * k, 0.5 - 0.001 * k, k) for k in range(3000)],),
                        globals_=G)
    assert not difftest.ran_parallel(recs, var), difftest.loops(recs)


def test_attributes_written_and_read_of_distinct_objects_run_on_threads():
    # a.v from every b.x: no conflict (different attributes), the a loop on threads.
    recs = difftest.run("""
    def f(ps):
        for a in ps:
            s = 0.0
            for b in ps:
                s += b.x
            a.v = s * 1e-3 - a.x
        return ps
    """, "f", lambda: ([Particle(float(k % 17), 0.0) for k in range(1200)],), globals_=G)
    assert difftest.ran_parallel(recs, "a"), difftest.loops(recs)


def _cities(seed, n):
    r = np.random.default_rng(seed)
    return [Particle(float(a), float(b)) for a, b in r.random((n, 2)) * 100]


HELPERS = [
    ("a distance between items passed to a helper", """
    import math
    def dist(a, b):
        return math.sqrt((a.x - b.x) ** 2 + (a.v - b.v) ** 2)
    def f(cs):
        t = 0.0
        for i in range(len(cs) - 1):
            t += dist(cs[i], cs[i + 1])
        return t
    """, lambda: (_cities(30, 300),)),
    ("nearest neighbours, an attribute counted beside the helper's reads", """
    import math
    def dist(a, b):
        return math.sqrt((a.x - b.x) ** 2 + (a.v - b.v) ** 2)
    def f(cs):
        out = 0.0
        for p in cs:
            best = 1e300
            for q in cs:
                d = dist(p, q)
                if 0.0 < d < best:
                    best = d
            p.n += 1
            out = max(out, best)  # (exact on threads too, where a float sum may reassociate)
        return out, cs
    """, lambda: (_cities(31, 120),)),
    ("a helper's attribute the nest itself never names", """
    def energy(p):
        return 0.5 * p.v * p.v + p.n
    def f(ps):
        e = 0.0
        for p in ps:
            e += energy(p)
        return e
    """, lambda: (_particles(32, 200),)),
]


@pytest.mark.parametrize("what,src,make_args", HELPERS, ids=[n for n, _, _ in HELPERS])
def test_objects_passed_to_helpers_run_natively(what, src, make_args):
    recs = difftest.run(src, "f", make_args, globals_=G)
    assert all(r["bailouts"] == 0 for r in recs), recs
    assert all(r["native_calls"] for r in recs), [(r["line"], r["reason"]) for r in recs]


HELPERS_INTERPRETED = [
    ("an object passed to a builtin", """
    def f(ps):
        s = 0
        for p in ps:
            s += p.n + abs(p)
        return s
    """, lambda: (_particles(33, 5),), "not a plain Python function"),
    ("an object's len()", """
    def f(ps):
        s = 0
        for p in ps:
            s += p.n + len(p)
        return s
    """, lambda: (_particles(33, 5),), "other than for its attributes"),
    ("a helper returning the object", """
    def pick(a, b):
        return a if a.x > b.x else b
    def f(ps):
        s = 0.0
        for i in range(len(ps) - 1):
            s += pick(ps[i], ps[i + 1]).x
        return s
    """, lambda: (_particles(34, 20),), None),
    ("a helper passing the object on to a method", """
    def g(a):
        return a.__sizeof__() + a.n
    def f(ps):
        s = 0
        for p in ps:
            s += g(p)
        return s
    """, lambda: (_particles(35, 5),), None),
]


@pytest.mark.parametrize("what,src,make_args,reason", HELPERS_INTERPRETED, ids=[n for n, _, _, _ in HELPERS_INTERPRETED])
def test_objects_passed_to_what_stagepy_cannot_inline_stay_interpreted(what, src, make_args, reason):
    recs = difftest.run(src, "f", make_args, expect="interpreted", globals_=G)
    if reason:
        difftest.assert_reason(recs, reason)


def test_objects_in_module_code():
    # A script's main loop: the list, the loop variable and a counter object are the module's
    # globals (names, not fast locals).
    recs = difftest.run_module("""
    for t in range(20):
        for p in PS:
            p.x += p.v * 0.1
            if p.x > 10.0:
                p.v = -p.v
                STATS.count += 1
    last = p
    """, lambda: {"PS": _particles(40, 300), "STATS": Stats()})
    assert recs and all(r["bailouts"] == 0 for r in recs), recs
