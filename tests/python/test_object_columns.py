"""Objects whose attributes hold different kinds of numbers: a bool flag beside int counters
and float positions (`a.infected`, `a.days`, `a.x`), an int index beside a float
(`A[p.id] += p.x`). The table of their attributes holds each value with its kind, and a
column whose values are all of one kind reads as that kind (`p.id` an int that may index,
`a.infected` a bool); a store of another kind into such a column makes the nest read the
table again as a whole, each value a union of the kinds. Lists mixing bools with ints or
floats are held the same way. Results, exceptions and the attributes' exact types are
CPython's."""
import numpy as np
import pytest

import difftest


class Agent:
    def __init__(self, x, y, infected, days=0):
        self.x = x
        self.y = y
        self.infected = infected
        self.recovered = False
        self.days = days


class Item:
    def __init__(self, id, x, flag=False):
        self.id = id
        self.x = x
        self.flag = flag


class Task:
    def __init__(self, prio, work):
        self.prio = prio
        self.work = work
        self.holding = False
        self.waiting = prio % 3 == 0
        self.runs = 0


def _agents(seed, n, sick=3):
    r = np.random.default_rng(seed)
    return [Agent(float(a), float(b), i < sick) for i, (a, b) in enumerate(r.random((n, 2)))]


def _items(seed, n, k=7):
    # (x in quarters: sums are exact in any order, threads' partial sums included.)
    r = np.random.default_rng(seed)
    return [Item(int(i % k), float(np.floor(x * 4) / 4), bool(x > 0.5)) for i, x in enumerate(r.random(n))]


G = {"Agent": Agent, "Item": Item, "Task": Task}

NATIVE = [
    ("an epidemic: bool flags, an int counter and float positions", """
    def step(agents, r2):
        for a in agents:
            if a.infected:
                a.days += 1
                if a.days > 4:
                    a.infected = False
                    a.recovered = True
        for a in agents:
            if not a.infected and not a.recovered:
                for b in agents:
                    if b.infected:
                        dx = a.x - b.x
                        dy = a.y - b.y
                        if dx * dx + dy * dy < r2:
                            a.infected = True
                            break
    def f(agents):
        for t in range(12):
            step(agents, 0.01)
        return agents
    """, lambda: (_agents(1, 150),)),
    ("an int attribute indexes an array", """
    def f(items, A):
        for k in range(3):
            for p in items:
                A[p.id] += p.x
        return A
    """, lambda: (_items(2, 300), np.zeros(7))),
    ("an int attribute indexes a list, a bool attribute chooses", """
    def f(items, L):
        for p in items:
            if p.flag:
                L[p.id] += 1
            else:
                L[-1 - p.id] -= 2
        return L
    """, lambda: (_items(3, 200), [0] * 7)),
    ("bools counted as ints, negated, compared", """
    def f(items):
        n = 0
        s = 0.0
        for p in items:
            n += p.flag
            s += p.x * p.flag - (not p.flag)
            p.flag = not p.flag
            if p.flag == (p.x > 0.25):
                n += 10
        return n, s, items
    """, lambda: (_items(4, 120),)),
    ("a scheduler: flags set and cleared, the first ready task taken", """
    def f(tasks, steps):
        done = 0
        for k in range(steps):
            pick = -1
            for i in range(len(tasks)):
                t = tasks[i]
                if not t.holding and not t.waiting:
                    pick = i
                    break
            if pick < 0:
                for t in tasks:
                    t.waiting = False
                    t.holding = False
                continue
            t = tasks[pick]
            t.work -= 1.5
            t.runs += 1
            if t.work <= 0.0:
                t.holding = True
                done += t.prio
            else:
                t.waiting = t.runs % 2 == 1
        return done, tasks
    """, lambda: ([Task(p, 2.0 + p % 5) for p in range(40)], 400)),
    ("a column of ints and floats beside a bool column", """
    def f(items):
        for p in items:
            if p.flag:
                p.x = p.x + p.id
        return items
    """, lambda: ([Item(i, i if i % 2 else 0.5 * i, i % 3 == 0) for i in range(60)],)),
    ("an int column given a float, a bool column given an int (read again whole)", """
    def f(items):
        for p in items:
            if p.x > 0.5:
                p.id = p.id / 2
            else:
                p.flag = 7
        return items
    """, lambda: (_items(5, 80),)),
    ("columns of each kind read by a loop that may run in parallel", """
    def f(items, out):
        for i in range(len(items)):
            p = items[i]
            out[i] = p.x * p.id + p.flag - (p.id > 3)
        return out
    """, lambda: (_items(9, 3000), np.zeros(3000))),
    ("columns of each kind written by a loop that may run in parallel", """
    def f(items):
        for i in range(len(items)):
            p = items[i]
            p.x = p.x * 2 + p.id
            p.flag = p.x > 3
            p.id = p.id + 1
        return items
    """, lambda: (_items(10, 3000),)),
    ("no bools at entry: an int column given bools, a float column given ints", """
    def f(items):
        for p in items:
            if p.flag:
                p.id = p.x > 0.75
            else:
                p.x = p.id * 2
        return items
    """, lambda: ([Item(p.id, p.x, int(p.flag)) for p in _items(11, 90)],)),
    ("a list of bools and ints", """
    def f(L):
        s = 0
        for k in range(3):
            for i in range(len(L)):
                if L[i]:
                    s += L[i]
                L[i] = L[i] + 1 if i % 3 else L[i]
        return s, L
    """, lambda: ([True, 0, 2, False, 5, True] * 20,)),
    ("a list of floats and bools, its bools kept", """
    def f(L):
        s = 0.0
        for i in range(len(L)):
            s += L[i] * 2
            if i % 4 == 0:
                L[i] = L[i] > 0.5
        return s, L
    """, lambda: ([0.25, True, 0.75, False] * 25,)),
    ("one object's bool and int attributes assigned", """
    class Counter:
        def __init__(self):
            self.n = 0
            self.total = 0.0
            self.over = False
        def add(self, x):
            self.total += x
            self.n += 1
            if self.total > 10.0:
                self.over = True
    def f(xs):
        c = Counter()
        for x in xs:
            c.add(x)
        return vars(c)
    """, lambda: ([0.1 * i for i in range(50)],)),
]


@pytest.mark.parametrize("what,src,make_args", NATIVE, ids=[n for n, _, _ in NATIVE])
def test_objects_with_columns_of_different_kinds_run_natively(what, src, make_args):
    recs = difftest.run(src, "f", make_args, globals_=G)
    assert recs and all(r["status"] != "interpreted" for r in recs), recs
    assert all(r["bailouts"] == 0 for r in recs), recs


BAIL = [
    ("an int attribute indexes past the end part way, earlier stores done", """
    def f(items, A):
        for p in items:
            A[p.id] += p.x
            p.flag = True
        return A, items
    """, lambda: (_items(6, 50, k=9), np.zeros(7))),
    ("an int column outgrows 64 bits", """
    def f(items):
        for k in range(40):
            for p in items:
                if p.flag:
                    p.id = p.id * 9 + 1
        return items
    """, lambda: (_items(7, 20),)),
]


@pytest.mark.parametrize("what,src,make_args", BAIL, ids=[n for n, _, _ in BAIL])
def test_objects_with_columns_of_different_kinds_errors_as_in_cpython(what, src, make_args):
    difftest.run(src, "f", make_args, expect="bail", globals_=G)


def test_the_kinds_stay_the_objects_own():
    # A bool attribute stays a bool, an int an int, after native stores and arithmetic.
    recs = difftest.run("""
    def f(items):
        for p in items:
            p.flag = p.x > 0.3
            p.id = p.id + p.flag
        return [(type(p.flag).__name__, type(p.id).__name__, type(p.x).__name__) for p in items]
    """, "f", lambda: (_items(8, 30),), globals_=G)
    assert all(r["bailouts"] == 0 for r in recs), recs
